//! The Rust side of `scripts/bench-onnxruntime.sh`: the fast path next to onnxruntime on
//! the very same weights and positions.
//!
//! ```text
//! onnx_bench prepare (--agent FILE | --random CxN [--seed S]) --out DIR
//! onnx_bench serve DIR
//! ```
//!
//! `prepare` writes `DIR/model.onnx` (the network, as `brandubh export --format onnx`
//! writes it), `DIR/inputs.f32` (256 encoded positions from seeded random play, `[256, 9,
//! 7, 7]`, little-endian f32), the fast path's outputs on them (`DIR/policy.f32`,
//! `[256, 1176]`, and `DIR/value.f32`, `[256]`) and `DIR/info.json` (the network's shape and
//! the SIMD level the fast path uses). `serve` loads the same network from `DIR/model.onnx`'s
//! sources again (`DIR/source.txt`) and answers lines `THREADS BATCH SECONDS` on standard
//! input with one line: the fast path's positions/s running `BATCH` positions per call on a
//! pool of `THREADS` threads for about `SECONDS`, per wall-clock second and per CPU-second
//! of the pool thread that ran the calls (`NaN` where unknown; all of the work only with one
//! thread) — so that the script can interleave it with onnxruntime, measurement by
//! measurement. In the environment (also through `scripts/bench-onnxruntime.sh`), read by
//! both commands:
//! - `ONNX_BENCH_CHUNK=N` sets the fast path's chunk size ([`FastNet::with_chunk_size`],
//!   default 16) to compare chunk sizes;
//! - `ONNX_BENCH_SIMD=avx2|avx512|scalar` runs the fast path on those kernels instead of the
//!   best this CPU has (e.g. AVX2 on a CPU with AVX-512; an error where the CPU lacks them);
//! - `ONNX_BENCH_CONV=winograd|direct` sets how the residual tower's convolutions run
//!   ([`FastNet::with_conv_algorithm`], default Winograd).

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, bail};
use brandubh_net::encoding::{self, INPUT_SIZE};
use brandubh_net::fast::{ConvAlgorithm, SimdLevel};
use brandubh_net::{Device, FastNet, FoldedNet, NetConfig, checkpoint, onnx};
use brandubh_rules::Game;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Positions written by `prepare`.
const POSITIONS: usize = 256;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("prepare") => prepare(&args[1..]),
        Some("serve") if args.len() == 2 => serve(Path::new(&args[1])),
        _ => bail!(
            "usage: onnx_bench prepare (--agent FILE | --random CxN [--seed S]) --out DIR | onnx_bench serve DIR"
        ),
    }
}

/// The network a source line names: `agent FILE` or `random C N SEED`.
fn load(source: &str) -> anyhow::Result<FoldedNet> {
    let words: Vec<&str> = source.split_whitespace().collect();
    match words[..] {
        ["agent", file] => {
            let agent = brandubh_agent::Agent::load(file)?;
            checkpoint::folded_from_bytes(&agent.meta().model, agent.weights().to_vec())
                .map_err(|e| anyhow::anyhow!("{file}: {e}"))
        }
        ["random", c, n, seed] => {
            let device = Device::flex();
            device.seed(seed.parse()?);
            let config = NetConfig::new()
                .with_channels(c.parse()?)
                .with_blocks(n.parse()?);
            config.check_limits().map_err(anyhow::Error::msg)?;
            Ok(config.init(&device).fold_batch_norm())
        }
        _ => bail!("bad network source {source:?}"),
    }
}

fn prepare(args: &[String]) -> anyhow::Result<()> {
    let mut source = None;
    let mut seed = 1u64;
    let mut out = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().with_context(|| format!("{a} needs a value"));
        match a.as_str() {
            "--agent" => source = Some(format!("agent {}", value()?)),
            "--random" => {
                let v = value()?;
                let (c, n) = v
                    .to_ascii_lowercase()
                    .trim_start_matches('c')
                    .split_once("xn")
                    .map(|(c, n)| (c.to_owned(), n.to_owned()))
                    .with_context(|| format!("--random {v}: expected CxN, e.g. C64xN6"))?;
                source = Some(format!("random {c} {n}"));
            }
            "--seed" => seed = value()?.parse()?,
            "--out" => out = Some(PathBuf::from(value()?)),
            other => bail!("unknown argument {other}"),
        }
    }
    let mut source = source.context("--agent or --random is required")?;
    if source.starts_with("random") {
        source = format!("{source} {seed}");
    }
    let out = out.context("--out is required")?;
    std::fs::create_dir_all(&out).with_context(|| out.display().to_string())?;
    let folded = load(&source)?;
    let net = configure(FastNet::from_folded(&folded))?;
    let inputs = positions(POSITIONS, seed);
    let result = net.forward(&inputs);
    let write = |name: &str, bytes: &[u8]| {
        let path = out.join(name);
        brandubh_fs::write_atomic(&path, bytes).with_context(|| path.display().to_string())
    };
    write("model.onnx", &onnx::to_onnx(&folded))?;
    write("inputs.f32", &le_bytes(&inputs))?;
    write("policy.f32", &le_bytes(&result.policy_logits))?;
    write("value.f32", &le_bytes(&result.values))?;
    write("source.txt", source.as_bytes())?;
    let c = net.config();
    let info = serde_json::json!({
        "channels": c.channels,
        "blocks": c.blocks,
        "positions": POSITIONS,
        "fast_simd": net.simd_level().name(),
        "fast_conv": net.conv_algorithm().name(),
        "source": source,
    });
    write("info.json", info.to_string().as_bytes())?;
    println!("{info}");
    Ok(())
}

fn serve(dir: &Path) -> anyhow::Result<()> {
    let source = std::fs::read_to_string(dir.join("source.txt"))?;
    let net = configure(FastNet::from_folded(&load(&source)?))?;
    let inputs = positions(POSITIONS, 0);
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout();
    for line in stdin.lock().lines() {
        let line = line?;
        let words: Vec<&str> = line.split_whitespace().collect();
        let [threads, batch, seconds] = words[..] else {
            bail!("expected THREADS BATCH SECONDS, got {line:?}");
        };
        let (threads, batch, seconds): (usize, usize, f64) =
            (threads.parse()?, batch.parse()?, seconds.parse()?);
        if !(1..=POSITIONS).contains(&batch) || threads == 0 || seconds.is_nan() || seconds <= 0.0 {
            bail!("out of range: {line:?}");
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()?;
        let x = &inputs[..batch * INPUT_SIZE];
        let (wall, cpu) = pool.install(|| {
            std::hint::black_box(net.forward(x)); // warm-up
            let cpu0 = thread_cpu_seconds();
            let t0 = Instant::now();
            let mut n = 0usize;
            while t0.elapsed().as_secs_f64() < seconds {
                std::hint::black_box(net.forward(std::hint::black_box(x)));
                n += batch;
            }
            let wall = n as f64 / t0.elapsed().as_secs_f64();
            let cpu = match (cpu0, thread_cpu_seconds()) {
                (Some(a), Some(b)) if b > a => n as f64 / (b - a),
                _ => f64::NAN,
            };
            (wall, cpu)
        });
        writeln!(stdout, "{wall:.1} {cpu:.1}")?;
        stdout.flush()?;
    }
    Ok(())
}

/// `net` with the chunk size, kernels and convolution algorithm the environment asks for
/// (module documentation).
fn configure(mut net: FastNet) -> anyhow::Result<FastNet> {
    if let Ok(chunk) = std::env::var("ONNX_BENCH_CHUNK") {
        let chunk: usize = chunk
            .parse()
            .with_context(|| format!("ONNX_BENCH_CHUNK must be a whole number, got {chunk:?}"))?;
        net = net.with_chunk_size(chunk);
    }
    if let Ok(name) = std::env::var("ONNX_BENCH_SIMD") {
        let level = SimdLevel::from_name(&name).with_context(|| {
            format!("ONNX_BENCH_SIMD={name:?}: expected scalar, avx2, avx512 or native")
        })?;
        net = net
            .with_simd_level(level)
            .with_context(|| format!("ONNX_BENCH_SIMD={name}: this CPU does not have it"))?;
    }
    if let Ok(name) = std::env::var("ONNX_BENCH_CONV") {
        let algorithm = ConvAlgorithm::from_name(&name)
            .with_context(|| format!("ONNX_BENCH_CONV={name:?}: expected winograd or direct"))?;
        net = net.with_conv_algorithm(algorithm);
    }
    Ok(net)
}

/// CPU time of the calling thread (from `/proc/thread-self/schedstat`, in nanoseconds),
/// where Linux tells it: with one thread, positions per CPU-second are robust to other load
/// on the machine.
fn thread_cpu_seconds() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns / 1e9)
}

/// `n` encoded positions from seeded random play (unfinished games only).
fn positions(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(n * INPUT_SIZE);
    while out.len() < n * INPUT_SIZE {
        let mut g = Game::default();
        for _ in 0..rng.random_range(0..40) {
            let moves = g.legal_moves();
            if moves.is_empty() {
                break;
            }
            g.play_unchecked(moves[rng.random_range(0..moves.len())]);
        }
        if !g.is_over() {
            out.extend(encoding::encode(g.position(), g.repetitions()));
        }
    }
    out
}

fn le_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}
