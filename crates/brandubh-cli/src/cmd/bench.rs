//! `brandubh bench`: self-play throughput next to the raw forward rate of the same network.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use brandubh_net::engine::{Engine, EngineKind};
use brandubh_net::fast::{ConvAlgorithm, SimdLevel};
use brandubh_net::optimize::{BatchBuilder, Trainer};
use brandubh_net::{FastNet, NetEvaluator};
use brandubh_rules::{Game, Side, Symmetry};
use brandubh_run::config::{RunConfig, TrainingEngine};
use brandubh_search::{Evaluator, Leaf};
use brandubh_train::run;
use brandubh_train::selfplay::{self, SelfPlaySettings, SelfPlayStats};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::{backend, out};

/// Measure self-play speed against the network's raw batched forward rate.
///
/// Builds the configuration's network (fresh seeded weights), measures its forward rate
/// at several batch sizes and at the self-play batch size with the self-play thread count,
/// then plays self-play games and reports network evaluations per second inside self-play
/// and their ratio to the raw rate (target: at least 90 %), once with the forward passes
/// run as `train` runs them (on each worker's own thread when there is a worker per core,
/// split over rayon's pool otherwise) and once the other way; last,
/// the training step of both engines (the fast one on the same kernels as the forward
/// pass), measured in turn. The first line names the CPU and the kernels. With
/// `selfplay.eval_cache` set, self-play is played twice with the same seeds, without the
/// evaluation cache and with it, and both are reported side by side.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run configuration (TOML) whose network and self-play settings are measured.
    #[arg(long, value_name = "FILE", default_value = "configs/quick.toml")]
    config: PathBuf,
    /// Self-play games to play (default: 4 × threads × concurrent games, so that batches
    /// stay full for most of the session).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=100_000))]
    games: Option<u64>,
    /// Seconds per forward-rate measurement.
    #[arg(long, value_name = "S", default_value_t = 2.0)]
    seconds: f64,
    /// The fast path's kernels (default: the best this CPU has), e.g. `avx2` on a CPU with
    /// AVX-512 to measure what a machine without it gets.
    #[arg(long, value_name = "LEVEL", value_parser = ["avx512", "avx2", "scalar"])]
    simd: Option<String>,
    /// How the residual tower's 3×3 convolutions run.
    #[arg(long, value_name = "ALGORITHM", value_parser = ["winograd", "direct"], default_value = "winograd")]
    conv: String,
    /// `gpu` or `gpu:N` (a `--features gpu` build): instead of the above, the GPU beside
    /// the CPU: evaluations/s at batch 256-4096, training samples/s at batch 256 and 1024,
    /// self-play evaluations/s, and where each phase should run (docs/guide/gpu.md).
    #[arg(long, value_name = "DEVICE", default_value = "cpu", value_parser = crate::backend::parse_device)]
    device: crate::backend::DeviceChoice,
    /// Measure this exported agent's network (its trained weights and shape) instead of
    /// fresh weights of the configuration's shape: positions recur, and the cache hits, as
    /// they do for a trained network.
    #[arg(long, value_name = "FILE")]
    agent: Option<PathBuf>,
    /// Print only the CPU's name (model, family and model numbers, logical CPUs), as
    /// benchmarks name it and match reports record it, and exit.
    #[arg(long)]
    cpu: bool,
}

/// Leaves of `n` mid-game positions from seeded random play.
pub(crate) fn sample_leaves(n: usize, seed: u64) -> Vec<Leaf> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let mut g = Game::default();
        let plies = rng.random_range(0..40);
        g.random_playout(plies, |n| rng.random_range(0..n));
        if !g.is_over() {
            out.push(Leaf::from_game(&g));
        }
    }
    out
}

/// Positions per second of `threads` threads each evaluating `batch` leaves in a loop.
fn evaluator_rate(net: &Arc<FastNet>, batch: usize, threads: usize, seconds: f64) -> f64 {
    let leaves = sample_leaves(batch, 1);
    let deadline = Duration::from_secs_f64(seconds);
    let t0 = Instant::now();
    let total: usize = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let leaves = &leaves;
                let net = Arc::clone(net);
                s.spawn(move || {
                    let mut ev = NetEvaluator::new(net);
                    let mut n = 0;
                    let start = Instant::now();
                    while start.elapsed() < deadline {
                        n += ev.evaluate(leaves).len();
                    }
                    n
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or(0)).sum()
    });
    total as f64 / t0.elapsed().as_secs_f64()
}

/// Positions per second of the bare forward pass (no encoding or softmax), one caller, on
/// inputs as wide as the network's layout.
fn forward_rate(net: &FastNet, batch: usize, seconds: f64) -> f64 {
    let inputs = vec![0.5f32; batch * net.input_size()];
    let t0 = Instant::now();
    let mut n = 0;
    while t0.elapsed().as_secs_f64() < seconds {
        std::hint::black_box(net.forward(&inputs));
        n += batch;
    }
    n as f64 / t0.elapsed().as_secs_f64()
}

/// Rounds of the training-rate measurement: each engine once per round, in alternating
/// order, so that both see the same load on a shared machine.
const TRAINING_ROUNDS: usize = 3;

/// A training step on the configuration's network, optimizer and batch size, on one batch
/// of positions from seeded random play (uniform policy targets over the legal moves,
/// random results, moves-left targets when the network has that head), on `kind`'s engine
/// (the fast one on the kernels of `level`).
fn training_engine(
    config: &RunConfig,
    kind: EngineKind,
    level: SimdLevel,
) -> anyhow::Result<(Engine, BatchBuilder)> {
    let engine = new_engine(config, &brandubh_net::device::cpu(), kind)?
        .with_simd_level(level)
        .with_context(|| format!("this CPU has no {} kernels", level.name()))?;
    Ok((
        engine,
        training_batch(config, config.training.batch_size as usize)?,
    ))
}

/// A training engine of `kind` on `device` for the configuration's network and optimizer,
/// its weights seeded from the configuration.
pub(crate) fn new_engine(
    config: &RunConfig,
    device: &brandubh_net::Device,
    kind: EngineKind,
) -> anyhow::Result<Engine> {
    let device = device.clone().autodiff();
    device.seed(config.seed);
    let trainer = Trainer::new(
        run::net_config(config).init(&device),
        run::net_train_config(config),
    );
    Engine::new(trainer, kind).map_err(anyhow::Error::msg)
}

/// A batch of `size` positions from seeded random play for `config`'s network: uniform
/// policy targets over the legal moves, random results, moves-left targets when the
/// network has that head.
pub(crate) fn training_batch(config: &RunConfig, size: usize) -> anyhow::Result<BatchBuilder> {
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed ^ 0x7a1);
    let mut builder = BatchBuilder::with_planes(run::net_config(config).planes());
    for leaf in sample_leaves(size, 2) {
        let policy = vec![1.0 / leaf.moves.len() as f32; leaf.moves.len()];
        let result = rng.random_range(-1.0f32..=1.0);
        builder.push_position(
            &leaf.position,
            leaf.repetitions,
            &leaf.moves,
            &policy,
            result,
            Symmetry::Identity,
        )?;
        if config.training.moves_left_loss_weight.is_some() {
            builder.push_plies_to_end(rng.random_range(0..60))?;
        }
    }
    Ok(builder)
}

/// Optimizer steps per second of `engine` on `batch` for about `seconds` (at least 3 steps).
pub(crate) fn training_rate(
    engine: &mut Engine,
    batch: &BatchBuilder,
    lr: f64,
    seconds: f64,
) -> anyhow::Result<f64> {
    let t0 = Instant::now();
    let mut steps = 0u32;
    while t0.elapsed().as_secs_f64() < seconds || steps < 3 {
        let stats = engine.step(batch, lr);
        anyhow::ensure!(
            stats.total_loss.is_finite(),
            "training loss {}",
            stats.total_loss
        );
        steps += 1;
    }
    Ok(f64::from(steps) / t0.elapsed().as_secs_f64())
}

/// The median and range of `values`, formatted with `digits` decimals.
fn spread(values: &[f64], digits: usize) -> String {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let (lo, hi) = (v[0], v[v.len() - 1]);
    format!("{:.digits$} ({lo:.digits$}-{hi:.digits$})", v[v.len() / 2])
}

/// Both engines' training rates, measured in turn over [`TRAINING_ROUNDS`] rounds; returns
/// the steps per second (median) of the engine the configuration trains with.
fn measure_training(
    w: &mut impl Write,
    config: &RunConfig,
    level: SimdLevel,
    seconds: f64,
) -> anyhow::Result<f64> {
    let (mut fast, batch) = training_engine(config, EngineKind::Fast, level)?;
    let (mut burn, _) = training_engine(config, EngineKind::Burn, level)?;
    let lr = config.training.learning_rate_at(1);
    // Warm-up: buffers, caches, burn's first allocations.
    fast.step(&batch, lr);
    burn.step(&batch, lr);
    let (mut f, mut b) = (Vec::new(), Vec::new());
    for round in 0..TRAINING_ROUNDS {
        out::flush(w)?;
        if round % 2 == 0 {
            f.push(training_rate(&mut fast, &batch, lr, seconds)?);
            b.push(training_rate(&mut burn, &batch, lr, seconds)?);
        } else {
            b.push(training_rate(&mut burn, &batch, lr, seconds)?);
            f.push(training_rate(&mut fast, &batch, lr, seconds)?);
        }
    }
    let batch_size = f64::from(config.training.batch_size);
    let samples = |v: &[f64]| v.iter().map(|r| r * batch_size).collect::<Vec<_>>();
    let ratios: Vec<f64> = f.iter().zip(&b).map(|(f, b)| f / b).collect();
    writeln!(
        w,
        "training step, batch {} ({TRAINING_ROUNDS} rounds, interleaved; samples/s, median (range)):",
        config.training.batch_size
    )?;
    writeln!(
        w,
        "  fast ({} kernels, {} threads): {}",
        level.name(),
        rayon::current_num_threads(),
        spread(&samples(&f), 0)
    )?;
    writeln!(w, "  burn (CPU): {}", spread(&samples(&b), 0))?;
    writeln!(w, "  fast / burn: {}x", spread(&ratios, 2))?;
    let mut chosen = match config.training.engine {
        TrainingEngine::Fast => f,
        TrainingEngine::Burn => b,
    };
    chosen.sort_by(f64::total_cmp);
    Ok(chosen[chosen.len() / 2])
}

/// Runs the command: the forward rate, self-play against the raw evaluator rate, and the
/// training rate with what it means for one iteration.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.cpu {
        let mut w = out::stdout();
        writeln!(w, "{}", brandubh_fs::cpu_description())?;
        out::flush(&mut w)?;
        return Ok(ExitCode::SUCCESS);
    }
    if !(args.seconds > 0.0 && args.seconds <= 600.0) {
        anyhow::bail!("--seconds must be in (0, 600], got {}", args.seconds);
    }
    let config = RunConfig::from_file(&args.config)?;
    if args.device != backend::DeviceChoice::Cpu {
        let gpu = backend::open(args.device)?;
        crate::cmd::bench_gpu::run(&config, &gpu, args.seconds / 2.0, args.games)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut net = match &args.agent {
        Some(path) => (**brandubh_agent::Agent::load(path)?.net()).clone(),
        None => {
            let device = brandubh_net::device::cpu();
            device.seed(config.seed);
            FastNet::from_model(&run::net_config(&config).init(&device))
        }
    };
    if let Some(name) = &args.simd {
        let level = SimdLevel::from_name(name)
            .with_context(|| format!("--simd {name}: expected avx512, avx2 or scalar"))?;
        net = net
            .with_simd_level(level)
            .with_context(|| format!("--simd {name}: this CPU does not have it"))?;
    }
    let algorithm = ConvAlgorithm::from_name(&args.conv)
        .with_context(|| format!("--conv {}: expected winograd or direct", args.conv))?;
    let settings = SelfPlaySettings::new(&config)?;
    let split = run::split_forward(settings.threads());
    let net = Arc::new(net.with_conv_algorithm(algorithm).with_parallel(split));
    // Flushed before each measurement, so that the figures appear as they are measured and
    // a closed pipe ends the command at once.
    let mut w = out::stdout();
    write_header(&mut w, &config, &settings, &net)?;
    measure_forward(&mut w, &net, args.seconds / 2.0)?;
    let games = args
        .games
        .unwrap_or(4 * settings.threads() as u64 * u64::from(config.selfplay.concurrent_games));
    let cache = settings.config.eval_cache;
    let selfplay = if cache > 0 {
        let mut uncached = settings.clone();
        uncached.config.eval_cache = 0;
        writeln!(w, "without the evaluation cache:")?;
        let before = measure_selfplay(&mut w, &net, &uncached, config.seed, games)?;
        writeln!(
            w,
            "with the evaluation cache ({cache} positions, {} a worker), the same games' seeds:",
            (cache / settings.threads() as u32).max(1)
        )?;
        let after = measure_selfplay(&mut w, &net, &settings, config.seed, games)?;
        compare_cache(&mut w, &before, &after)?;
        after
    } else {
        measure_selfplay(&mut w, &net, &settings, config.seed, games)?
    };
    compare_with_raw(&mut w, &net, &selfplay, settings.threads(), args.seconds)?;
    let other_way = Arc::new((*net).clone().with_parallel(!split));
    writeln!(
        w,
        "the same with each forward pass {} (not as train runs it):",
        if split {
            "on its worker's own thread"
        } else {
            "split over rayon's pool"
        }
    )?;
    let other = measure_selfplay(&mut w, &other_way, &settings, config.seed, games)?;
    compare_with_raw(&mut w, &other_way, &other, settings.threads(), args.seconds)?;
    estimate_iteration(&mut w, &config, &selfplay, net.simd_level(), args.seconds)?;
    out::flush(&mut w)?;
    Ok(ExitCode::SUCCESS)
}

/// The network and the self-play shape being measured.
fn write_header(
    w: &mut impl Write,
    config: &RunConfig,
    settings: &SelfPlaySettings,
    net: &FastNet,
) -> anyhow::Result<()> {
    writeln!(
        w,
        "CPU: {}; fast path: {} kernels, {} tower convolutions",
        brandubh_fs::cpu_description(),
        net.simd_level().name(),
        net.conv_algorithm().name()
    )?;
    writeln!(
        w,
        "network C={} N={}, self-play: {} threads x {} games x {} leaves (batch up to {})",
        config.model.channels,
        config.model.blocks,
        settings.threads(),
        settings.config.concurrent_games,
        settings.config.leaves_per_game,
        settings.config.concurrent_games * settings.config.leaves_per_game
    )?;
    Ok(())
}

/// The bare forward rate at several batch sizes.
fn measure_forward(w: &mut impl Write, net: &FastNet, seconds: f64) -> anyhow::Result<()> {
    writeln!(w, "forward pass only, one caller (positions/s):")?;
    for b in [1, 8, 32, 64, 128, 256] {
        out::flush(w)?;
        let rate = forward_rate(net, b, seconds);
        writeln!(w, "  batch {b:>4}: {rate:>9.0}")?;
    }
    out::flush(w)?;
    Ok(())
}

/// What a self-play session measured, and how long it took.
struct SelfPlayRun {
    stats: SelfPlayStats,
    wall_s: f64,
    /// Games White won (by the rules).
    white_wins: u64,
}

/// Plays `games` self-play games and reports their rates.
fn measure_selfplay(
    w: &mut impl Write,
    net: &Arc<FastNet>,
    settings: &SelfPlaySettings,
    seed: u64,
    games: u64,
) -> anyhow::Result<SelfPlayRun> {
    let t0 = Instant::now();
    let mut white_wins = 0;
    let stats = selfplay::play::<_, _, _, anyhow::Error>(
        settings,
        seed,
        0,
        games,
        |worker| {
            run::worker_evaluator(
                NetEvaluator::new(Arc::clone(net)),
                &settings.config,
                seed,
                worker,
            )
        },
        |game, _| {
            white_wins += u64::from(game.result.winner() == Some(Side::White));
            Ok(())
        },
    )?;
    let wall = t0.elapsed().as_secs_f64();
    writeln!(
        w,
        "self-play: {} games, {} moves, {} positions recorded in {wall:.1} s: {:.0} games/hour, {:.0} positions/hour",
        stats.games,
        stats.moves,
        stats.positions,
        stats.games as f64 * 3600.0 / wall,
        stats.positions as f64 * 3600.0 / wall,
    )?;
    writeln!(
        w,
        "self-play: {:.0} network evaluations/s, mean batch {:.1}, {:.0} % of worker time inside the evaluator",
        stats.network_evaluations_per_second(),
        stats.network_mean_batch(),
        100.0 * stats.eval_time.as_secs_f64() / stats.worker_time.as_secs_f64().max(1e-9)
    )?;
    if stats.cache_hits > 0 {
        writeln!(
            w,
            "self-play: {:.0} evaluations/s counting the cache's answers; cache hit rate {:.1} %, caches {:.1} MB",
            stats.evaluations_per_second(),
            100.0 * stats.cache_hit_rate(),
            stats.cache_bytes as f64 / 1e6
        )?;
    }
    out::flush(w)?;
    Ok(SelfPlayRun {
        stats,
        wall_s: wall,
        white_wins,
    })
}

/// The cache's effect: the same games' seeds without and with it. (The games are not the
/// same games: a hit answers with the evaluation of a mirror image, and skips a draw of
/// the random symmetries.)
fn compare_cache(
    w: &mut impl Write,
    before: &SelfPlayRun,
    after: &SelfPlayRun,
) -> anyhow::Result<()> {
    let rate = |r: &SelfPlayRun, x: u64| x as f64 / r.wall_s.max(1e-9);
    let white = |r: &SelfPlayRun| 100.0 * r.white_wins as f64 / r.stats.games.max(1) as f64;
    writeln!(
        w,
        "evaluation cache: {:.2}x games/hour, {:.2}x moves/s, {:.2}x evaluations/s counting its answers, {:.2}x the network's own rate; White won {:.1} % of the games without it, {:.1} % with it",
        rate(after, after.stats.games) / rate(before, before.stats.games).max(1e-9),
        rate(after, after.stats.moves) / rate(before, before.stats.moves).max(1e-9),
        after.stats.evaluations_per_second() / before.stats.evaluations_per_second().max(1e-9),
        after.stats.network_evaluations_per_second()
            / before.stats.network_evaluations_per_second().max(1e-9),
        white(before),
        white(after),
    )?;
    Ok(())
}

/// The raw rate of the same evaluator at the batch size self-play achieved, with the same
/// number of threads, measured right after it in the same process, and self-play's share
/// of it.
fn compare_with_raw(
    w: &mut impl Write,
    net: &Arc<FastNet>,
    selfplay: &SelfPlayRun,
    threads: usize,
    seconds: f64,
) -> anyhow::Result<()> {
    let mean_batch = selfplay.stats.network_mean_batch().round().max(1.0) as usize;
    let raw = evaluator_rate(net, mean_batch, threads, seconds);
    writeln!(
        w,
        "raw evaluator rate (encode + forward + legal softmax), batch {mean_batch}, {threads} threads: {raw:.0} positions/s"
    )?;
    writeln!(
        w,
        "self-play reaches {:.1} % of the raw rate (target: at least 90 %)",
        100.0 * selfplay.stats.network_evaluations_per_second() / raw.max(1e-9)
    )?;
    Ok(())
}

/// Where an iteration's time goes: its games at the self-play rate just measured, its
/// optimizer steps at the training rate of the engine the configuration names.
fn estimate_iteration(
    w: &mut impl Write,
    config: &RunConfig,
    selfplay: &SelfPlayRun,
    level: SimdLevel,
    seconds: f64,
) -> anyhow::Result<()> {
    let steps_per_s = measure_training(w, config, level, seconds)?;
    let t = &config.training;
    writeln!(
        w,
        "training engine of this config: {} ({steps_per_s:.2} optimizer steps/s)",
        config.training.engine.name()
    )?;
    let games_per_s = selfplay.stats.games as f64 / selfplay.wall_s;
    let selfplay_s = config.selfplay.games_per_iteration as f64 / games_per_s.max(1e-9);
    let train_s = f64::from(t.steps_per_iteration) / steps_per_s.max(1e-9);
    writeln!(
        w,
        "one iteration ({} games, {} steps): about {selfplay_s:.0} s of self-play and {train_s:.0} s of training",
        config.selfplay.games_per_iteration, t.steps_per_iteration
    )?;
    Ok(())
}
