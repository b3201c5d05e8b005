//! The Rust side of `scripts/bench-pytorch.sh`: the training step of a run configuration's
//! network, timed on request, so that the script interleaves it with PyTorch's.
//!
//! ```text
//! train_bench info CONFIG
//! train_bench serve CONFIG
//! ```
//!
//! `info` prints the network's shape, the batch size, the optimizer and the loss weights as
//! one JSON line (what the PyTorch side builds). `serve` builds both engines' trainers on
//! seeded random weights and a batch of positions from seeded random play (as `brandubh
//! bench` does), then answers lines `ENGINE THREADS SIMD SECONDS` on standard input
//! (`fast|burn`, a thread count, `avx512|avx2|scalar`) with one line: that engine's
//! samples per second running steps on a pool of `THREADS` threads for about `SECONDS`, per
//! wall-clock second and per CPU-second of the pool thread that ran them (all of the fast
//! step's work only with one thread; `NaN` where unknown).

use std::io::{BufRead, Write};
use std::time::Instant;

use anyhow::{Context, bail};
use brandubh_net::Device;
use brandubh_net::engine::{Engine, EngineKind};
use brandubh_net::fast::SimdLevel;
use brandubh_net::optimize::{BatchBuilder, Trainer};
use brandubh_run::config::RunConfig;
use brandubh_train::run;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match (args.first().map(String::as_str), args.get(1)) {
        (Some("info"), Some(config)) if args.len() == 2 => info(&RunConfig::from_file(config)?),
        (Some("serve"), Some(config)) if args.len() == 2 => serve(&RunConfig::from_file(config)?),
        _ => bail!("usage: train_bench info CONFIG | train_bench serve CONFIG"),
    }
}

fn info(config: &RunConfig) -> anyhow::Result<()> {
    let net = run::net_config(config);
    let opt = run::net_train_config(config);
    let t = &config.training;
    let line = serde_json::json!({
        "name": config.name,
        "channels": net.channels,
        "blocks": net.blocks,
        "planes": net.planes(),
        "policy_channels": net.policy_channels,
        "value_channels": net.value_channels,
        "value_hidden": net.value_hidden,
        "moves_left_hidden": net.moves_left_hidden,
        "batch_size": t.batch_size,
        "optimizer": format!("{:?}", t.optimizer).to_lowercase(),
        "momentum": t.momentum,
        "learning_rate": t.learning_rate_at(1),
        "weight_decay": opt.weight_decay,
        "value_weight": opt.value_weight,
        "moves_left_weight": opt.moves_left_weight,
    });
    println!("{line}");
    Ok(())
}

/// A batch of `n` positions from seeded random play with uniform policy targets, random
/// results and (for a moves-left head) random plies to the end.
fn batch(config: &RunConfig, n: usize) -> anyhow::Result<BatchBuilder> {
    let planes = run::net_config(config).planes();
    let moves_left = config.training.moves_left_loss_weight.is_some();
    Ok(BatchBuilder::synthetic(
        planes,
        n,
        config.seed ^ 0x7a1,
        moves_left,
    )?)
}

/// CPU time of the calling thread (from `/proc/thread-self/schedstat`), where Linux tells
/// it: with one thread (the fast step runs on the caller), samples per CPU-second are robust
/// to other load on the machine.
fn thread_cpu_seconds() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns / 1e9)
}

fn engine(config: &RunConfig, kind: EngineKind, level: SimdLevel) -> anyhow::Result<Engine> {
    let device = Device::flex().autodiff();
    device.seed(config.seed);
    let trainer = Trainer::new(
        run::net_config(config).init(&device),
        run::net_train_config(config),
    );
    Engine::new(trainer, kind)
        .map_err(anyhow::Error::msg)?
        .with_simd_level(level)
        .with_context(|| format!("this CPU has no {} kernels", level.name()))
}

fn serve(config: &RunConfig) -> anyhow::Result<()> {
    let b = batch(config, config.training.batch_size as usize)?;
    let lr = config.training.learning_rate_at(1);
    let mut engines: Vec<((EngineKind, SimdLevel), Engine)> = Vec::new();
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout();
    for line in stdin.lock().lines() {
        let line = line?;
        let words: Vec<&str> = line.split_whitespace().collect();
        let [kind, threads, simd, seconds] = words[..] else {
            bail!("expected ENGINE THREADS SIMD SECONDS, got {line:?}");
        };
        let kind = match kind {
            "fast" => EngineKind::Fast,
            "burn" => EngineKind::Burn,
            _ => bail!("engine {kind:?}: fast or burn"),
        };
        let level = SimdLevel::from_name(simd).with_context(|| format!("simd {simd:?}"))?;
        let (threads, seconds): (usize, f64) = (threads.parse()?, seconds.parse()?);
        if threads == 0 || !(seconds > 0.0 && seconds <= 600.0) {
            bail!("out of range: {line:?}");
        }
        let key = (
            kind,
            if kind == EngineKind::Burn {
                SimdLevel::Scalar
            } else {
                level
            },
        );
        if !engines.iter().any(|(k, _)| *k == key) {
            let mut e = engine(config, kind, level)?;
            e.step(&b, lr); // warm-up
            engines.push((key, e));
        }
        let Some((_, e)) = engines.iter_mut().find(|(k, _)| *k == key) else {
            bail!("no engine");
        };
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()?;
        let (wall, cpu) = pool.install(|| {
            e.step(&b, lr);
            let (t0, c0) = (Instant::now(), thread_cpu_seconds());
            let mut steps = 0u32;
            while t0.elapsed().as_secs_f64() < seconds || steps < 2 {
                e.step(&b, lr);
                steps += 1;
            }
            let samples = f64::from(steps) * b.len() as f64;
            let cpu = match (c0, thread_cpu_seconds()) {
                (Some(a), Some(b)) if b > a => samples / (b - a),
                _ => f64::NAN,
            };
            (samples / t0.elapsed().as_secs_f64(), cpu)
        });
        writeln!(stdout, "{wall} {cpu}")?;
        stdout.flush()?;
    }
    Ok(())
}
