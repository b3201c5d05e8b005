//! `brandubh bench --device gpu`: the GPU beside the CPU in one run, on the configuration's
//! network: evaluations per second at large batches, the training step's samples per
//! second at batch 256 and 1024, self-play's evaluations per second, and where each phase
//! should run on this machine.

use std::io::Write;
use std::sync::Arc;
use std::time::Instant;

use brandubh_net::device::GPU_TOLERANCE;
use brandubh_net::engine::{Engine, EngineKind};
use brandubh_net::optimize::BatchBuilder;
use brandubh_net::{Device, FastNet, NetEvaluator, PolicyValueNet, encoding};
use brandubh_run::config::RunConfig;
use brandubh_search::{Evaluator, Leaf};
use brandubh_train::run;
use brandubh_train::selfplay;

use crate::backend::Opened;
use crate::cmd::bench::{new_engine, sample_leaves, training_batch, training_rate};
use crate::out;
use brandubh_fs::cpu_description;

/// Batch sizes of the evaluation-rate comparison.
const EVAL_BATCHES: [usize; 3] = [256, 1024, 4096];
/// Batch sizes of the training-step comparison.
const TRAIN_BATCHES: [usize; 2] = [256, 1024];

/// Positions per second of `ev` on `leaves` for about `seconds` (at least 2 calls, after
/// one warm-up call).
fn eval_rate(ev: &mut NetEvaluator, leaves: &[Leaf], seconds: f64) -> f64 {
    ev.evaluate(leaves);
    let t0 = Instant::now();
    let mut n = 0usize;
    while t0.elapsed().as_secs_f64() < seconds || n < 2 * leaves.len() {
        n += ev.evaluate(leaves).len();
    }
    n as f64 / t0.elapsed().as_secs_f64()
}

/// A training engine of `kind` on `device` for `config`'s network and optimizer, and a
/// batch of `batch` positions.
fn trainer(
    config: &RunConfig,
    device: &Device,
    kind: EngineKind,
    batch: usize,
) -> anyhow::Result<(Engine, BatchBuilder)> {
    Ok((
        new_engine(config, device, kind)?,
        training_batch(config, batch)?,
    ))
}

/// Samples per second of `engine` on `batch` for about `seconds` (at least 3 steps, after
/// one warm-up step); an error if the loss is not finite.
fn train_rate(
    engine: &mut Engine,
    batch: &BatchBuilder,
    size: usize,
    seconds: f64,
) -> anyhow::Result<f64> {
    engine.step(batch, 1e-3);
    Ok(training_rate(engine, batch, 1e-3, seconds)? * size as f64)
}

/// Self-play's evaluations per second with evaluators from `make`, over `games` games.
fn selfplay_rate(
    config: &RunConfig,
    games: u64,
    make: impl Fn(usize) -> NetEvaluator + Sync,
) -> anyhow::Result<f64> {
    let settings = selfplay::SelfPlaySettings::new(config)?;
    let stats = selfplay::play::<_, _, _, anyhow::Error>(
        &settings,
        config.seed,
        0,
        games,
        make,
        |_, _| Ok(()),
    )?;
    Ok(stats.evaluations_per_second())
}

/// The GPU's outputs against the fast path's on 256 positions, within
/// [`GPU_TOLERANCE`]: an error if further apart.
fn check_outputs(
    w: &mut impl Write,
    config: &RunConfig,
    model: &PolicyValueNet,
    device: &Device,
    fast: &FastNet,
) -> anyhow::Result<()> {
    let planes = run::net_config(config).planes();
    let inputs: Vec<f32> = sample_leaves(256, 3)
        .iter()
        .flat_map(|l| encoding::encode_planes(&l.position, l.repetitions, planes))
        .collect();
    let (logits, values) = model.infer(&inputs, device);
    let cpu = fast.forward(&inputs);
    let diff = |a: &[f32], b: &[f32]| {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0f32, f32::max)
    };
    let (dl, dv) = (
        diff(&logits, &cpu.policy_logits),
        diff(&values, &cpu.values),
    );
    writeln!(
        w,
        "GPU against the CPU on 256 positions: largest difference {dl:.1e} in logits, {dv:.1e} in values (tolerance {GPU_TOLERANCE:.0e})"
    )?;
    anyhow::ensure!(
        dl < GPU_TOLERANCE && dv < GPU_TOLERANCE,
        "the GPU's outputs differ from the CPU's by more than {GPU_TOLERANCE:e}"
    );
    Ok(())
}

/// Which of two rates wins, as `CPU` or `GPU` with the factor.
fn verdict(cpu: f64, gpu: f64) -> String {
    if gpu > cpu {
        format!("GPU ({:.2}x the CPU)", gpu / cpu.max(1e-9))
    } else {
        format!("CPU ({:.2}x the GPU)", cpu / gpu.max(1e-9))
    }
}

/// Runs the comparison on `gpu` with `config`, `seconds` per measurement and `games`
/// self-play games per device (default: one batch of concurrent games per worker).
pub fn run(
    config: &RunConfig,
    gpu: &Opened,
    seconds: f64,
    games: Option<u64>,
) -> anyhow::Result<()> {
    let mut w = out::stdout();
    let cpu = brandubh_net::device::cpu();
    writeln!(w, "CPU: {}", cpu_description())?;
    writeln!(w, "device: {}", gpu.name)?;
    writeln!(
        w,
        "network C={} N={}; CPU side: the fast path ({} threads), GPU side: burn",
        config.model.channels,
        config.model.blocks,
        rayon::current_num_threads()
    )?;
    out::flush(&mut w)?;

    gpu.device.seed(config.seed);
    let model = run::net_config(config).init(&gpu.device);
    let fast = Arc::new(FastNet::from_model(&model));
    check_outputs(&mut w, config, &model, &gpu.device, &fast)?;
    writeln!(
        w,
        "evaluations (encode + forward + legal softmax), positions/s:"
    )?;
    let mut best = (0.0f64, 0.0f64);
    for batch in EVAL_BATCHES {
        let leaves = sample_leaves(batch, 1);
        let c = eval_rate(&mut NetEvaluator::new(Arc::clone(&fast)), &leaves, seconds);
        let g = eval_rate(
            &mut NetEvaluator::burn(&model, &gpu.device),
            &leaves,
            seconds,
        );
        best = (best.0.max(c), best.1.max(g));
        writeln!(w, "  batch {batch:>4}: CPU {c:>9.0}  GPU {g:>9.0}")?;
        out::flush(&mut w)?;
    }

    writeln!(
        w,
        "training step (forward + backward + optimizer), samples/s:"
    )?;
    let mut train = (0.0f64, 0.0f64);
    for batch in TRAIN_BATCHES {
        let (mut c, data) = trainer(config, &cpu, EngineKind::Fast, batch)?;
        let c = train_rate(&mut c, &data, batch, seconds)?;
        let (mut g, data) = trainer(config, &gpu.device, EngineKind::Burn, batch)?;
        let g = train_rate(&mut g, &data, batch, seconds)?;
        train = (c, g);
        writeln!(
            w,
            "  batch {batch:>4}: CPU fast {c:>8.0}  GPU burn {g:>8.0}"
        )?;
        out::flush(&mut w)?;
    }

    let settings = selfplay::SelfPlaySettings::new(config)?;
    let games =
        games.unwrap_or((settings.threads() * settings.config.concurrent_games as usize) as u64);
    let c = selfplay_rate(config, games, |_| NetEvaluator::new(Arc::clone(&fast)))?;
    let g = selfplay_rate(config, games, |_| NetEvaluator::burn(&model, &gpu.device))?;
    writeln!(
        w,
        "self-play ({games} games, {} threads x {} games): CPU fast path {c:.0} evaluations/s, GPU {g:.0}",
        settings.threads(),
        settings.config.concurrent_games
    )?;
    writeln!(
        w,
        "where to run: self-play {} (--selfplay-inference {}), training {} (--device {})",
        verdict(c, g),
        if g > c { "device" } else { "fast" },
        verdict(train.0, train.1),
        if train.1 > train.0 { "gpu" } else { "cpu" },
    )?;
    writeln!(
        w,
        "best evaluation rate at batch >= 256: CPU {:.0}, GPU {:.0} positions/s",
        best.0, best.1
    )?;
    out::flush(&mut w)?;
    Ok(())
}
