//! Forward-pass throughput (positions/s) of burn and of the fast path at several batch
//! sizes, the encoder's in every input layout, and the training step's samples/s.
//!
//! Run: `cargo bench -p brandubh-net --bench inference`. Settings from the environment:
//! `BENCH_CHANNELS` (32), `BENCH_BLOCKS` (4), `BENCH_SECONDS` per measurement (1.0),
//! `BENCH_BATCHES` (comma-separated, `1,8,32,128,512`), `BENCH_CHUNK` (positions per
//! parallel task of the fast path, 16), `BENCH_TRAIN=0` to skip training;
//! threads come from `RAYON_NUM_THREADS`. Each measurement checks what it computed (burn and
//! the fast path agree within 1e-4).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "benchmarks may unwrap: a panic is a failed benchmark"
)]

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use brandubh_net::encoding::{self, INPUT_SIZE};
use brandubh_net::optimize::{BatchBuilder, OptimizerConfig, Trainer};
use brandubh_net::{FastNet, NetConfig, NetEvaluator};
use brandubh_rules::{Game, Symmetry};
use brandubh_search::{Evaluator, Leaf};
use burn::tensor::Device;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn env<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Seeded random mid-game positions with their legal moves.
fn games(n: usize) -> Vec<Game> {
    let mut rng = ChaCha8Rng::seed_from_u64(42);
    let mut out = Vec::new();
    while out.len() < n {
        let mut g = Game::default();
        let plies = rng.random_range(0..40);
        g.random_playout(plies, |n| rng.random_range(0..n));
        if !g.is_over() {
            out.push(g);
        }
    }
    out
}

/// CPU time (user + system) of this process so far, where `/proc` tells it.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0) // USER_HZ, 100 on Linux
}

/// Throughput of one measurement.
#[derive(Clone, Copy)]
struct Rate {
    /// Items per wall-clock second.
    wall: f64,
    /// Items per second of CPU time (all threads), if known: robust to other load on the
    /// machine, but counts rayon's idle spinning.
    cpu: Option<f64>,
}

/// Calls `f` (one batch of `batch` items) repeatedly for about `seconds`.
fn rate(batch: usize, seconds: f64, mut f: impl FnMut()) -> Rate {
    f(); // warm-up
    let budget = Duration::from_secs_f64(seconds);
    let cpu_start = cpu_seconds();
    let start = Instant::now();
    let mut iters = 0u64;
    while start.elapsed() < budget || iters < 3 {
        f();
        iters += 1;
    }
    let items = iters as f64 * batch as f64;
    let wall = items / start.elapsed().as_secs_f64();
    let cpu = match (cpu_start, cpu_seconds()) {
        (Some(a), Some(b)) if b - a >= 0.2 => Some(items / (b - a)),
        _ => None,
    };
    Rate { wall, cpu }
}

fn show(r: Rate) -> String {
    match r.cpu {
        Some(cpu) => format!("{:>8.0} ({:>6.0})", r.wall, cpu),
        None => format!("{:>8.0} (     -)", r.wall),
    }
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs this as a smoke test.
    let smoke = !std::env::args().any(|a| a == "--bench");
    let config = NetConfig::new()
        .with_channels(env("BENCH_CHANNELS", 32))
        .with_blocks(env("BENCH_BLOCKS", 4));
    let seconds = if smoke {
        0.01
    } else {
        env("BENCH_SECONDS", 1.0)
    };
    let batches: Vec<usize> = if smoke {
        vec![1, 8]
    } else {
        std::env::var("BENCH_BATCHES")
            .unwrap_or_else(|_| "1,8,32,128,512".into())
            .split(',')
            .filter_map(|s| s.trim().parse().ok())
            .collect()
    };
    let device = Device::flex();
    let model = config.init(&device);
    let fast = FastNet::from_model(&model).with_chunk_size(env("BENCH_CHUNK", 16));
    let max_batch = batches.iter().copied().max().unwrap_or(1);
    let games = games(max_batch);
    let mut all_inputs = Vec::with_capacity(max_batch * INPUT_SIZE);
    for g in &games {
        all_inputs.extend(encoding::encode(g.position(), g.repetitions()));
    }
    println!(
        "model C={} N={} ({:.1} MFLOP/position), rayon threads {}",
        config.channels,
        config.blocks,
        config.flops_per_position() as f64 / 1e6,
        rayon::current_num_threads()
    );
    println!("positions/s, wall clock (per CPU-second in parentheses)");
    println!(
        "{:>6} {:>17} {:>17} {:>10}",
        "batch", "burn", "fast", "fast/burn"
    );
    for &b in &batches {
        let inputs = &all_inputs[..b * INPUT_SIZE];
        let (logits, values) = model.infer(inputs, &device);
        let out = fast.forward(inputs);
        let diff = logits
            .iter()
            .chain(&values)
            .zip(out.policy_logits.iter().chain(&out.values))
            .map(|(x, y)| (x - y).abs())
            .fold(0.0f32, f32::max);
        assert!(diff < 1e-4, "fast path differs from burn by {diff}");
        let burn_rate = rate(b, seconds, || {
            black_box(model.infer(black_box(inputs), &device));
        });
        let fast_rate = rate(b, seconds, || {
            black_box(fast.forward(black_box(inputs)));
        });
        println!(
            "{b:>6} {} {} {:>9.1}x",
            show(burn_rate),
            show(fast_rate),
            fast_rate.wall / burn_rate.wall
        );
    }

    bench_encoding(&games, seconds);
    bench_evaluator(&fast, &games, &batches, seconds);

    if env("BENCH_TRAIN", 1) != 0 {
        bench_training(config, &games, smoke, seconds);
    }
}

/// Encoding alone, in every layout, on one thread: what the King and threat planes cost a
/// position before any network sees it.
fn bench_encoding(games: &[Game], seconds: f64) {
    println!("encoding, positions/s on one thread (per CPU-second in parentheses)");
    for planes in encoding::LAYOUTS {
        let mut out = vec![0.0; planes * encoding::PLANE_SIZE];
        let r = rate(games.len(), seconds, || {
            for g in games {
                encoding::encode_into(black_box(g.position()), g.repetitions(), &mut out);
                black_box(&out);
            }
        });
        println!("{planes:>6} planes {}", show(r));
    }
}

/// The evaluator end to end: encoding, forward pass, softmax over legal moves.
fn bench_evaluator(fast: &FastNet, games: &[Game], batches: &[usize], seconds: f64) {
    let eval_batch = batches
        .iter()
        .copied()
        .filter(|&b| b <= 128)
        .max()
        .unwrap_or(1);
    let leaves: Vec<Leaf> = games[..eval_batch].iter().map(Leaf::from_game).collect();
    let mut evaluator = NetEvaluator::new(Arc::new(fast.clone())).with_random_symmetry(1);
    let eval_rate = rate(eval_batch, seconds, || {
        let out = evaluator.evaluate(black_box(&leaves));
        assert_eq!(out.len(), leaves.len());
    });
    println!(
        "NetEvaluator (fast path, random symmetry), batch {eval_batch}: {} leaves/s",
        show(eval_rate)
    );
}

/// burn's training step (Adam) on random targets for the positions of `games`.
fn bench_training(config: NetConfig, games: &[Game], smoke: bool, seconds: f64) {
    let batch_size = if smoke { 8 } else { 256 };
    let train_device = Device::flex().autodiff();
    let mut trainer = Trainer::new(config.init(&train_device), OptimizerConfig::default());
    let mut builder = BatchBuilder::new();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    for g in games.iter().cycle().take(batch_size) {
        let moves = g.legal_moves();
        let policy: Vec<f32> = moves.iter().map(|_| rng.random::<f32>()).collect();
        builder
            .push_position(
                g.position(),
                g.repetitions(),
                &moves,
                &policy,
                rng.random_range(-1.0..=1.0),
                Symmetry::ALL[rng.random_range(0..8)],
            )
            .expect("valid sample");
    }
    let batch = builder.build(trainer.device());
    let mut last = f32::NAN;
    let train_rate = rate(batch_size, seconds.max(3.0 * seconds), || {
        last = trainer.step(&batch, 1e-3).total_loss;
    });
    assert!(last.is_finite(), "training loss {last}");
    println!(
        "training step (Adam, batch {batch_size}): {} samples/s",
        show(train_rate)
    );
}
