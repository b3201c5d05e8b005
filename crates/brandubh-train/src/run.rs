//! `brandubh train` as a library: the iteration loop, its files, and resume.
//!
//! A run directory holds:
//!
//! ```text
//! runs/NAME/
//!   config.toml                  the configuration the run was started with
//!   state.json                   the last complete iteration (written last, atomically)
//!   checkpoints/iter-NNNNNN.*    network after iteration N (iter-000000: initial weights)
//!   chunks/chunk-NNNNNN-SSSSSS.brz   self-play games of iteration N, written as they finish
//!   metrics.jsonl                one line per complete iteration
//!   learning_curves.png          redrawn after every iteration
//! ```
//!
//! Iteration N: self-play with checkpoint N−1 (games already in chunks of iteration N
//! count, so a restart only replays the games that were in flight) → training on the
//! replay window, starting from checkpoint N−1 → checkpoint N → evaluation (optional) →
//! metrics line and plot → `state.json`. Every file is written to a temporary name and
//! renamed, so a kill at any moment leaves either the old file or the new one.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use brandubh_net::checkpoint::{self, CheckpointError, SaveOptions};
use brandubh_net::train::{BatchBuilder, OptimizerKind, StepStats, TrainConfig as NetTrainConfig};
use brandubh_net::{Device, FastNet, NetConfig, NetEvaluator};
use brandubh_rules::{Move, Side, Symmetry};
use brandubh_search::{Algorithm, Fpu, GumbelConfig, PuctConfig, SearchConfig, SearchError};
use brandubh_run::config::{ConfigError, Optimizer, SearchAlgorithm, TrainConfig};
use brandubh_run::fsutil::{self, FsError};
use brandubh_run::metrics::{self, IterationMetrics, MatchSummary, MetricsError};
use brandubh_run::plot::{self, PlotError};
use brandubh_run::replay::{
    self, Chunk, ChunkInfo, GameRecord, GameResult, ReplayError, ReplayWindow,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::selfplay::{self, SelfPlaySettings, SelfPlayStats};

/// Name of the copy of the configuration inside a run directory.
pub const CONFIG_FILE: &str = "config.toml";
/// Name of the state file inside a run directory.
pub const STATE_FILE: &str = "state.json";
/// Directory of the checkpoints inside a run directory.
pub const CHECKPOINTS_DIR: &str = "checkpoints";

/// Everything that can stop a run; each message names the file or setting involved.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The configuration is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The run directory holds a run with another configuration.
    #[error(
        "{dir}: the run was started with another configuration (changed: {keys}); use --force-config to continue with the new one"
    )]
    ConfigChanged {
        /// The run directory.
        dir: PathBuf,
        /// Changed keys, comma-separated.
        keys: String,
    },
    /// A file could not be written.
    #[error(transparent)]
    Fs(#[from] FsError),
    /// A file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The state file is damaged.
    #[error("{path}: damaged state file: {reason}")]
    State {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A checkpoint could not be saved or loaded.
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    /// Replay data could not be written or read.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// The metrics log could not be written or read.
    #[error(transparent)]
    Metrics(#[from] MetricsError),
    /// The plot could not be drawn.
    #[error(transparent)]
    Plot(#[from] PlotError),
    /// The search refused something (a bug, or a bad setting that validation missed).
    #[error("self-play search: {0}")]
    Search(#[from] SearchError),
    /// A training batch could not be built.
    #[error("training batch: {0}")]
    Batch(String),
    /// The evaluation hook failed.
    #[error("evaluation: {0}")]
    Evaluation(String),
}

/// What `state.json` records: the last complete iteration and running totals.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    /// The last iteration whose checkpoint, metrics and plot are written (0: none yet).
    pub iteration: u32,
    /// Self-play games of complete iterations.
    pub total_games: u64,
    /// Recorded positions of complete iterations.
    pub total_positions: u64,
    /// Optimizer steps so far.
    pub total_steps: u64,
    /// Wall time of complete iterations, in seconds (time across restarts).
    pub elapsed_s: f64,
    /// The checkpoint self-play uses next (differs from the last one when gating keeps an
    /// older network), relative to the run directory.
    pub selfplay_checkpoint: String,
}

/// The files of a run directory.
#[derive(Clone, Debug)]
pub struct RunDir {
    root: PathBuf,
}

impl RunDir {
    /// The run directory at `root` (not created).
    #[must_use]
    pub fn new(root: impl Into<PathBuf>) -> RunDir {
        RunDir { root: root.into() }
    }

    /// The directory itself.
    #[must_use]
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The chunk directory.
    #[must_use]
    pub fn chunks(&self) -> PathBuf {
        self.root.join(replay::CHUNKS_DIR)
    }

    /// The checkpoint directory.
    #[must_use]
    pub fn checkpoints(&self) -> PathBuf {
        self.root.join(CHECKPOINTS_DIR)
    }

    /// The checkpoint (stem) of `iteration`.
    #[must_use]
    pub fn checkpoint(&self, iteration: u32) -> PathBuf {
        self.checkpoints().join(checkpoint_name(iteration))
    }

    /// `metrics.jsonl`.
    #[must_use]
    pub fn metrics(&self) -> PathBuf {
        self.root.join(metrics::METRICS_FILE)
    }

    /// `state.json`.
    #[must_use]
    pub fn state(&self) -> PathBuf {
        self.root.join(STATE_FILE)
    }

    /// `config.toml`.
    #[must_use]
    pub fn config(&self) -> PathBuf {
        self.root.join(CONFIG_FILE)
    }

    /// Reads `state.json`; `None` if the run has no complete iteration yet.
    pub fn read_state(&self) -> Result<Option<RunState>, RunError> {
        let path = self.state();
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(RunError::Io { path, source }),
        };
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| RunError::State {
                path,
                reason: e.to_string(),
            })
    }

    fn write_state(&self, state: &RunState) -> Result<(), RunError> {
        let json = serde_json::to_vec_pretty(state).map_err(|e| RunError::State {
            path: self.state(),
            reason: e.to_string(),
        })?;
        fsutil::write_atomic(&self.state(), &json)?;
        Ok(())
    }

    /// The checkpoints present, by iteration (complete ones: metadata written).
    pub fn list_checkpoints(&self) -> Result<Vec<(u32, PathBuf)>, RunError> {
        let dir = self.checkpoints();
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => return Err(RunError::Io { path: dir, source }),
        };
        let mut out = Vec::new();
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            let Some(stem) = name.strip_suffix(".json") else {
                continue;
            };
            if let Some(n) = stem
                .strip_prefix("iter-")
                .and_then(|d| d.parse::<u32>().ok())
            {
                out.push((n, dir.join(stem)));
            }
        }
        out.sort();
        Ok(out)
    }
}

/// `iter-NNNNNN`.
#[must_use]
pub fn checkpoint_name(iteration: u32) -> String {
    format!("iter-{iteration:06}")
}

/// Requests from the loop to whoever drives it (progress bars, logs, evaluation). Every
/// method has a do-nothing default.
pub trait Observer {
    /// An iteration starts; `games` remain to be played (fewer after a restart).
    fn selfplay_started(&mut self, _iteration: u32, _games: u64, _already: u64) {}
    /// A self-play game finished.
    fn game_finished(&mut self, _done: u64, _stats: &SelfPlayStats) {}
    /// Training of an iteration starts.
    fn training_started(&mut self, _iteration: u32, _steps: u32, _window: usize) {}
    /// One optimizer step was taken.
    fn training_step(&mut self, _step: u32, _stats: &StepStats) {}
    /// After checkpoint `iteration` is saved: play evaluation matches of it against
    /// `previous` and a baseline. Return `None` to skip evaluation.
    fn evaluate(
        &mut self,
        _request: &EvaluationRequest<'_>,
    ) -> Result<Option<EvaluationReport>, String> {
        Ok(None)
    }
    /// An iteration is complete (its metrics line written).
    fn iteration_finished(&mut self, _metrics: &IterationMetrics) {}
}

/// A do-nothing [`Observer`].
#[derive(Debug, Default)]
pub struct Quiet;
impl Observer for Quiet {}

/// What the evaluation hook is asked to do.
#[derive(Debug)]
pub struct EvaluationRequest<'a> {
    /// The iteration just trained.
    pub iteration: u32,
    /// Its checkpoint (stem).
    pub candidate: &'a Path,
    /// The checkpoint self-play used this iteration (stem).
    pub previous: &'a Path,
    /// The run's `[evaluation]` settings.
    pub config: &'a brandubh_run::config::EvaluationConfig,
    /// A seed for the matches.
    pub seed: u64,
}

/// What the evaluation hook found.
#[derive(Clone, Debug, Default)]
pub struct EvaluationReport {
    /// The candidate against the previous network.
    pub vs_previous: Option<MatchSummary>,
    /// The candidate against the baseline.
    pub vs_baseline: Option<MatchSummary>,
}

/// How to run: where, and whether a changed configuration may continue an existing run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// The run directory.
    pub dir: PathBuf,
    /// Continue a run even if its configuration changed.
    pub force_config: bool,
    /// Stop after this many iterations of this invocation (for tests and short sessions);
    /// `None`: go on until `config.iterations`.
    pub max_new_iterations: Option<u32>,
    /// The device training runs on (an autodiff device is derived from it).
    pub device: Device,
    /// Self-play evaluates leaves with burn's forward pass on [`RunOptions::device`]
    /// ([`NetEvaluator::burn`]) instead of the CPU fast path ([`NetEvaluator::new`]). For
    /// a binary built with a GPU backend; on the CPU the fast path is several times faster.
    pub selfplay_on_device: bool,
}

/// The search settings of self-play, from the run configuration.
#[must_use]
pub fn search_config(config: &TrainConfig) -> SearchConfig {
    let s = &config.search;
    let algorithm = match s.algorithm {
        SearchAlgorithm::Puct => Algorithm::Puct(PuctConfig {
            c_puct: s.c_puct as f32,
            fpu: Fpu::Reduction(s.fpu_reduction as f32),
            dirichlet_alpha: s.dirichlet_alpha as f32,
            dirichlet_fraction: s.dirichlet_fraction as f32,
            // The self-play driver applies the temperature schedule itself, the same way
            // for both algorithms; the search reports its best move.
            temperature: 1.0,
            temperature_plies: 0,
            final_temperature: 0.0,
        }),
        SearchAlgorithm::Gumbel => Algorithm::Gumbel(GumbelConfig {
            considered_moves: s.gumbel_candidates,
            c_visit: s.gumbel_c_visit as f32,
            c_scale: s.gumbel_c_scale as f32,
            ..GumbelConfig::default()
        }),
    };
    SearchConfig {
        simulations: s.simulations,
        algorithm,
        ply_cap: Some(config.selfplay.ply_cap),
    }
}

/// The self-play settings of a run.
#[must_use]
pub fn selfplay_settings(config: &TrainConfig) -> SelfPlaySettings {
    let sp = &config.selfplay;
    SelfPlaySettings {
        search: search_config(config),
        cheap_simulations: sp.cheap_simulations.min(config.search.simulations),
        full_search_fraction: sp.full_search_fraction as f32,
        ply_cap: sp.ply_cap,
        opening_random_plies: sp.opening_random_plies.unwrap_or(0),
        temperature: sp.temperature as f32,
        temperature_plies: sp.temperature_plies,
        concurrent_games: sp.concurrent_games as usize,
        leaves_per_game: sp.leaves_per_game as usize,
        threads: sp.worker_threads(),
    }
}

/// The network shape of a run.
#[must_use]
pub fn net_config(config: &TrainConfig) -> NetConfig {
    NetConfig::new()
        .with_channels(config.model.channels as usize)
        .with_blocks(config.model.blocks as usize)
}

fn net_train_config(config: &TrainConfig) -> NetTrainConfig {
    let t = &config.training;
    NetTrainConfig {
        optimizer: match t.optimizer {
            Optimizer::Adam => OptimizerKind::Adam,
            Optimizer::Sgd => OptimizerKind::Sgd {
                momentum: t.momentum,
            },
        },
        weight_decay: t.weight_decay as f32,
        value_weight: t.value_loss_weight as f32,
    }
}

/// Seed of one purpose of one iteration, derived from the run's seed.
fn derive_seed(seed: u64, iteration: u32, purpose: u64) -> u64 {
    selfplay::game_seed(
        seed ^ purpose.wrapping_mul(0xA076_1D64_78BD_642F),
        u64::from(iteration),
    )
}

/// Prepares the run directory: creates it with a copy of `config`, or checks that an
/// existing run has the same configuration. Returns the state to continue from.
pub fn prepare(config: &TrainConfig, options: &RunOptions) -> Result<RunState, RunError> {
    let dir = RunDir::new(&options.dir);
    for d in [dir.root().to_path_buf(), dir.chunks(), dir.checkpoints()] {
        std::fs::create_dir_all(&d).map_err(|source| RunError::Io {
            path: d.clone(),
            source,
        })?;
    }
    // Leftovers of writes interrupted by a crash.
    for d in [dir.root().to_path_buf(), dir.chunks(), dir.checkpoints()] {
        fsutil::remove_temp_files(&d)?;
    }
    let config_path = dir.config();
    if config_path.exists() {
        let stored = TrainConfig::from_file(&config_path)?;
        // Raising `iterations` extends a run; every other change needs --force-config.
        let changed: Vec<String> = stored
            .changed_keys(config)
            .into_iter()
            .filter(|k| k != "iterations")
            .collect();
        if !changed.is_empty() {
            if !options.force_config {
                return Err(RunError::ConfigChanged {
                    dir: dir.root().to_path_buf(),
                    keys: changed.join(", "),
                });
            }
            tracing::warn!(
                "{}: continuing with a changed configuration ({})",
                dir.root().display(),
                changed.join(", ")
            );
            write_config(&config_path, config)?;
        }
    } else {
        write_config(&config_path, config)?;
    }
    let mut state = dir.read_state()?.unwrap_or_default();
    if state.iteration == 0 && state.selfplay_checkpoint.is_empty() {
        // Iteration 0: the initial, seeded weights.
        let initial = dir.checkpoint(0);
        if checkpoint::read_meta(&initial).is_err() {
            let device = options.device.clone();
            device.seed(config.seed);
            let model = net_config(config).init(&device);
            checkpoint::save(&initial, &model, &SaveOptions::at_step(0))?;
        }
        state.selfplay_checkpoint = relative(dir.root(), &initial);
        dir.write_state(&state)?;
    }
    // Metrics lines of an iteration that did not complete are replaced when it is redone
    // (`metrics::append_metrics` keeps one line per iteration).
    Ok(state)
}

fn write_config(path: &Path, config: &TrainConfig) -> Result<(), RunError> {
    let text = config.to_toml_string().map_err(|e| RunError::State {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    fsutil::write_atomic(path, text.as_bytes())?;
    Ok(())
}

fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// Runs (or continues) the training run described by `config` in `options.dir` until
/// `config.iterations` iterations are complete. Returns the final state.
pub fn train(
    config: &TrainConfig,
    options: &RunOptions,
    observer: &mut dyn Observer,
) -> Result<RunState, RunError> {
    config.validate().map_err(|e| ConfigError::Invalid {
        file: options.dir.join(CONFIG_FILE).display().to_string(),
        error: e,
    })?;
    let mut state = prepare(config, options)?;
    let dir = RunDir::new(&options.dir);
    let mut done_now = 0;
    while state.iteration < config.iterations
        && options.max_new_iterations.is_none_or(|m| done_now < m)
    {
        state = iteration(config, &dir, state, options, observer)?;
        done_now += 1;
    }
    Ok(state)
}

/// Games of `iteration` already in chunk files, and the next free chunk number.
fn existing_games(dir: &RunDir, iteration: u32) -> Result<(Vec<GameRecord>, u32), RunError> {
    let mut games = Vec::new();
    let mut next_seq = 0;
    for entry in replay::list_chunks(&dir.chunks())? {
        if entry.iteration != iteration {
            continue;
        }
        next_seq = next_seq.max(entry.seq + 1);
        match replay::read_chunk(&entry.path) {
            Ok(chunk) => games.extend(chunk.games),
            Err(e) => tracing::warn!("skipping damaged chunk: {e}"),
        }
    }
    Ok((games, next_seq))
}

fn iteration(
    config: &TrainConfig,
    dir: &RunDir,
    mut state: RunState,
    options: &RunOptions,
    observer: &mut dyn Observer,
) -> Result<RunState, RunError> {
    let n = state.iteration + 1;
    let t0 = Instant::now();
    let plain = options.device.clone().without_autodiff();
    let selfplay_ckpt = dir.root().join(&state.selfplay_checkpoint);
    let expected = net_config(config);
    let (model, _) = checkpoint::load(&selfplay_ckpt, &plain, Some(&expected))?;

    // 1. Self-play, topping up the games already written for this iteration.
    let (mut games, mut seq) = existing_games(dir, n)?;
    let target = u64::from(config.selfplay.games_per_iteration);
    let already = games.len() as u64;
    let remaining = target.saturating_sub(already);
    observer.selfplay_started(n, remaining, already);
    let settings = selfplay_settings(config);
    let fast = (!options.selfplay_on_device).then(|| Arc::new(FastNet::from_model(&model)));
    let symmetry = config.search.symmetry_at_inference;
    let eval_seed = derive_seed(config.seed, n, 1);
    let per_chunk = (target / 8).clamp(1, 64) as usize;
    let mut pending: Vec<GameRecord> = Vec::new();
    let flush = |pending: &mut Vec<GameRecord>, seq: &mut u32| -> Result<(), RunError> {
        if pending.is_empty() {
            return Ok(());
        }
        let chunk = Chunk {
            info: ChunkInfo::new(&config.name, n),
            games: std::mem::take(pending),
        };
        replay::write_chunk(&dir.chunks().join(replay::chunk_file_name(n, *seq)), &chunk)?;
        *seq += 1;
        Ok(())
    };
    let sp_t0 = Instant::now();
    let stats = selfplay::play::<_, _, _, RunError>(
        &settings,
        derive_seed(config.seed, n, 0),
        already,
        remaining,
        |worker| {
            let ev = match &fast {
                Some(fast) => NetEvaluator::new(Arc::clone(fast)),
                None => NetEvaluator::burn(&model, &plain),
            };
            if symmetry {
                ev.with_random_symmetry(eval_seed ^ worker as u64)
            } else {
                ev
            }
        },
        |game, stats| {
            games.push(game.clone());
            pending.push(game);
            observer.game_finished(stats.games, stats);
            if pending.len() >= per_chunk {
                flush(&mut pending, &mut seq)?;
            }
            Ok(())
        },
    )?;
    flush(&mut pending, &mut seq)?;
    let selfplay_s = sp_t0.elapsed().as_secs_f64();
    drop(model);

    // 2. Training on the window, from the self-play network.
    let new_positions: u64 = games.iter().map(|g| g.positions.len() as u64).sum();
    let total_positions = state.total_positions + new_positions;
    let window_size = config.training.window_size(total_positions);
    let (window, report) = ReplayWindow::load(&dir.chunks(), window_size)?;
    for skipped in &report.skipped {
        tracing::warn!("skipping damaged chunk: {skipped}");
    }
    let steps = if window.is_empty() {
        0
    } else {
        config.training.steps_for(new_positions)
    };
    observer.training_started(n, steps, window.len());
    let train_t0 = Instant::now();
    // Training continues from the latest network (with its optimizer state), which is the
    // self-play network unless gating kept an older one for self-play.
    let autodiff = plain.clone().autodiff();
    let (mut trainer, _) = checkpoint::load_training(
        dir.checkpoint(n - 1),
        &autodiff,
        Some(&expected),
        net_train_config(config),
    )?;
    let lr = config.training.learning_rate_at(n);
    let mut rng = ChaCha8Rng::seed_from_u64(derive_seed(config.seed, n, 2));
    let mut builder = BatchBuilder::new();
    let (mut policy_sum, mut value_sum, mut total_sum) = (0.0f64, 0.0f64, 0.0f64);
    for step in 0..steps {
        builder.clear();
        for sample in window.sample_batch(config.training.batch_size as usize, &mut rng) {
            let sym = Symmetry::ALL[rng.random_range(0..8)];
            let (moves, probs): (Vec<Move>, Vec<f32>) = sample.policy.iter().copied().unzip();
            builder
                .push_position(
                    &sample.position,
                    sample.repetitions,
                    &moves,
                    &probs,
                    sample.result,
                    sym,
                )
                .map_err(|e| RunError::Batch(e.to_string()))?;
        }
        let batch = builder.build(trainer.device());
        let s = trainer.step(&batch, lr);
        policy_sum += f64::from(s.policy_loss);
        value_sum += f64::from(s.value_loss);
        total_sum += f64::from(s.total_loss);
        observer.training_step(step + 1, &s);
    }
    let training_s = train_t0.elapsed().as_secs_f64();

    // 3. Checkpoint.
    let ckpt = dir.checkpoint(n);
    let mut save = SaveOptions::at_step(state.total_steps + u64::from(steps));
    save.extra.insert("iteration".into(), n.into());
    save.extra.insert(
        "games".into(),
        (state.total_games + games.len() as u64).into(),
    );
    save.extra
        .insert("positions".into(), total_positions.into());
    save.extra.insert(
        "elapsed_s".into(),
        (state.elapsed_s + t0.elapsed().as_secs_f64()).into(),
    );
    save.extra
        .insert("config_name".into(), config.name.clone().into());
    checkpoint::save_training(&ckpt, &trainer, &save)?;
    drop(trainer);

    // 4. Evaluation (and gating).
    let request = EvaluationRequest {
        iteration: n,
        candidate: &ckpt,
        previous: &selfplay_ckpt,
        config: &config.evaluation,
        seed: derive_seed(config.seed, n, 3),
    };
    let report = if config.evaluation.matches > 0 {
        observer.evaluate(&request).map_err(RunError::Evaluation)?
    } else {
        None
    };
    let mut accepted = None;
    state.selfplay_checkpoint = relative(dir.root(), &ckpt);
    if config.evaluation.gating
        && let Some(vs) = report.as_ref().and_then(|r| r.vs_previous.as_ref())
    {
        let ok = vs.score() >= config.evaluation.gating_threshold;
        accepted = Some(ok);
        if !ok {
            state.selfplay_checkpoint = relative(dir.root(), &selfplay_ckpt);
        }
    }

    // 5. Metrics, plot, state.
    let count = games.len().max(1) as f64;
    let wins = |side: Side| {
        games
            .iter()
            .filter(|g| matches!(g.result, GameResult::Finished(o) if o.winner == side))
            .count() as f64
            / count
    };
    let unfinished = games
        .iter()
        .filter(|g| g.result == GameResult::Unfinished)
        .count() as f64
        / count;
    state.iteration = n;
    state.total_games += games.len() as u64;
    state.total_positions = total_positions;
    state.total_steps += u64::from(steps);
    state.elapsed_s += t0.elapsed().as_secs_f64();
    let mean = |sum: f64| {
        if steps == 0 {
            0.0
        } else {
            sum / f64::from(steps)
        }
    };
    let m = IterationMetrics {
        iteration: n,
        elapsed_s: state.elapsed_s,
        iteration_s: t0.elapsed().as_secs_f64(),
        selfplay_s,
        training_s,
        selfplay_games: games.len() as u32,
        positions: new_positions,
        total_positions,
        evaluations_per_s: stats.evaluations_per_second(),
        mean_game_length: games.iter().map(|g| g.moves.len() as f64).sum::<f64>() / count,
        white_win_rate: wins(Side::White),
        black_win_rate: wins(Side::Black),
        unfinished_rate: unfinished,
        training_steps: steps,
        policy_loss: mean(policy_sum),
        value_loss: mean(value_sum),
        total_loss: mean(total_sum),
        learning_rate: lr,
        window_size: window.len() as u64,
        vs_previous: report.as_ref().and_then(|r| r.vs_previous.clone()),
        vs_baseline: report.as_ref().and_then(|r| r.vs_baseline.clone()),
        accepted,
    };
    metrics::append_metrics(&dir.metrics(), &m)?;
    let records = metrics::read_metrics(&dir.metrics())?;
    plot::write_plot(&dir.root().join(plot::PLOT_FILE), &records, &config.name)?;
    dir.write_state(&state)?;
    observer.iteration_finished(&m);
    Ok(state)
}
