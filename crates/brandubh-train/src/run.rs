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

use brandubh_fs::FsError;
use brandubh_net::checkpoint::{self, CheckpointError, SaveOptions};
use brandubh_net::engine::{Engine, EngineKind};
use brandubh_net::optimize::{BatchBuilder, OptimizerConfig, OptimizerKind, StepStats, Trainer};
use brandubh_net::{Device, FastNet, NetConfig, NetEvaluator, encoding};
use brandubh_rules::{Move, Side, Symmetry};
use brandubh_run::config::{ConfigError, Optimizer, RunConfig, SelfPlayConfig, TrainingEngine};
use brandubh_run::metrics::{self, IterationMetrics, MatchSummary, MetricsError, SprtVerdict};
use brandubh_run::plot::{self, PlotError};
use brandubh_run::replay::{self, Chunk, ChunkInfo, GameRecord, ReplayError, ReplayWindow};
use brandubh_run::{RunDir, RunDirError, RunState};
use brandubh_search::SearchError;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::selfplay::{self, ForkPool, SelfPlaySettings, SelfPlayStats};

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
    /// A file of the run directory could not be read or written.
    #[error(transparent)]
    RunDir(#[from] RunDirError),
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
    Search(SearchError),
    /// The model or its optimizer state did not convert to or from the training engine.
    #[error("training engine: {0}")]
    Engine(String),
    /// A training batch could not be built.
    #[error("training batch: {0}")]
    Batch(String),
    /// The evaluation hook failed.
    #[error(transparent)]
    Evaluation(#[from] EvaluationError),
    /// The run's store failed (after retries) or holds something unusable.
    #[error(transparent)]
    Store(#[from] brandubh_store::StoreError),
    /// A store run's object is missing or damaged; the message names it.
    #[error("{0}")]
    Remote(String),
    /// Another learner holds the run's lease; the message names it and the expiry.
    #[error("{0}")]
    LeaseHeld(String),
}

impl From<SearchError> for RunError {
    fn from(e: SearchError) -> Self {
        RunError::Search(e)
    }
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
    /// An iteration is complete (its metrics line written).
    fn iteration_finished(&mut self, _metrics: &IterationMetrics) {}
    /// Store runs: an actor plays with the network of `iteration` from now on.
    fn network_loaded(&mut self, _iteration: u32) {}
    /// Store runs: the learner's iteration waits for games (`have` of `need` so far; the
    /// games of each actor among them).
    fn waiting_for_games(
        &mut self,
        _iteration: u32,
        _have: u64,
        _need: u64,
        _by_actor: &[(String, u64)],
    ) {
    }
}

/// Where an iteration's games come from when it does not play them itself: the learner
/// of a store run takes them from actors. [`train_with`] calls it in place of self-play.
pub trait GameSource {
    /// Puts the games iteration `n` trains on into chunk files of iteration `n` in `dir`
    /// (`RunDir::chunk(n, seq)`), and returns once there are enough of them, with what it
    /// left out.
    fn gather(
        &mut self,
        dir: &RunDir,
        n: u32,
        observer: &mut dyn Observer,
    ) -> Result<Backlog, RunError>;
    /// The run's state is recorded in `dir` (after preparing the run, and after each
    /// iteration's `state.json`): publish what others need.
    fn recorded(&mut self, dir: &RunDir, state: &RunState) -> Result<(), RunError>;
}

/// What a [`GameSource`] left out of an iteration; counted in its metrics line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Backlog {
    /// Games consumed but not trained on: their network was too old.
    pub stale_games: u64,
    /// Chunks left for later iterations: this one had its most games.
    pub waiting_chunks: u64,
}

/// A do-nothing [`Observer`].
#[derive(Debug, Default)]
pub struct Quiet;
impl Observer for Quiet {}

/// Plays the evaluation matches of an iteration after its checkpoint is saved: the new
/// network against the one self-play used and against a baseline. The training crate does
/// not know how matches are played; the binary wires `brandubh-eval` in.
pub trait Evaluate {
    /// Evaluates `request.candidate`; `Ok(None)` skips evaluation.
    fn evaluate(
        &mut self,
        request: &EvaluationRequest<'_>,
    ) -> Result<Option<EvaluationReport>, EvaluationError>;
}

/// An [`Evaluate`] that skips evaluation (the loop alone, in tests).
#[derive(Debug, Default)]
pub struct NoEvaluation;
impl Evaluate for NoEvaluation {
    fn evaluate(
        &mut self,
        _request: &EvaluationRequest<'_>,
    ) -> Result<Option<EvaluationReport>, EvaluationError> {
        Ok(None)
    }
}

/// Why evaluation of an iteration failed.
#[derive(Debug, thiserror::Error)]
#[error("evaluating iteration {iteration}: {cause}")]
pub struct EvaluationError {
    /// The iteration.
    pub iteration: u32,
    /// The evaluator's error (shown in the message, so not also returned by `source()`).
    pub cause: Box<dyn std::error::Error + Send + Sync>,
}

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
    /// The run's search settings (`[search]`): evaluation games search with them, with
    /// `config.sims` simulations and without noise.
    pub search: &'a brandubh_search::SearchSettings,
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

/// The network shape of a run: with `model.king_planes`, the King input planes (with
/// `model.threat_planes` the threat planes after them); with
/// `training.moves_left_loss_weight` set, a moves-left head as wide as the value head's
/// hidden layer.
#[must_use]
pub fn net_config(config: &RunConfig) -> NetConfig {
    let net = NetConfig::new()
        .with_channels(config.model.channels as usize)
        .with_blocks(config.model.blocks as usize)
        .with_planes(encoding::layout(
            config.model.king_planes,
            config.model.threat_planes,
            false,
        ));
    let moves_left = config
        .training
        .moves_left_loss_weight
        .map(|_| net.value_hidden);
    net.with_moves_left_hidden(moves_left)
}

/// The network crate's training settings (optimizer, weight decay, value weight) of a run.
#[must_use]
pub fn net_train_config(config: &RunConfig) -> OptimizerConfig {
    let t = &config.training;
    OptimizerConfig {
        optimizer: match t.optimizer {
            Optimizer::Adam => OptimizerKind::Adam,
            Optimizer::Sgd => OptimizerKind::Sgd {
                momentum: t.momentum,
            },
        },
        weight_decay: t.weight_decay as f32,
        value_weight: t.value_loss_weight as f32,
        moves_left_weight: t.moves_left_loss_weight.unwrap_or(0.0) as f32,
    }
}

/// The training engine of `config` on `device`: the one `training.engine` names on the
/// CPU; burn's on any other device (a GPU), where the fast engine, which runs on the CPU's
/// kernels, would leave the device idle.
#[must_use]
pub fn engine_kind(config: &RunConfig, device: &Device) -> EngineKind {
    if !brandubh_net::device::is_cpu(device) {
        return EngineKind::Burn;
    }
    match config.training.engine {
        TrainingEngine::Fast => EngineKind::Fast,
        TrainingEngine::Burn => EngineKind::Burn,
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
pub fn prepare(config: &RunConfig, options: &RunOptions) -> Result<RunState, RunError> {
    let dir = RunDir::new(&options.dir);
    dir.create()?;
    let config_path = dir.config();
    if config_path.exists() {
        let stored = RunConfig::from_run_copy(&config_path)?;
        // Raising `iterations` extends a run, and either training engine continues it (they
        // compute the same step and write the same checkpoints); every other change needs
        // --force-config.
        let changed: Vec<String> = stored
            .changed_keys(config)
            .into_iter()
            .filter(|k| k != "iterations" && k != "training.engine")
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
            // On the CPU whatever the run's device: the seed gives the same weights on
            // every device, so iteration 0 is one file wherever a run starts.
            let device = brandubh_net::device::cpu();
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

fn write_config(path: &Path, config: &RunConfig) -> Result<(), RunError> {
    let text = config.to_run_copy().map_err(|error| ConfigError::Invalid {
        file: path.display().to_string(),
        error,
    })?;
    brandubh_fs::write_atomic(path, text.as_bytes())?;
    Ok(())
}

fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// Runs (or continues) the training run described by `config` in `options.dir` until
/// `config.iterations` iterations are complete. Progress goes to `observer`; after each
/// checkpoint `evaluator` plays the evaluation matches. Returns the final state.
pub fn train(
    config: &RunConfig,
    options: &RunOptions,
    observer: &mut dyn Observer,
    evaluator: &mut dyn Evaluate,
) -> Result<RunState, RunError> {
    train_with(config, options, observer, evaluator, None)
}

/// [`train`], with the games of each iteration from `source` instead of self-play when
/// one is given (the learner of a store run).
pub fn train_with(
    config: &RunConfig,
    options: &RunOptions,
    observer: &mut dyn Observer,
    evaluator: &mut dyn Evaluate,
    mut source: Option<&mut dyn GameSource>,
) -> Result<RunState, RunError> {
    config.validate().map_err(|e| ConfigError::Invalid {
        file: RunDir::new(&options.dir).config().display().to_string(),
        error: e,
    })?;
    let mut state = prepare(config, options)?;
    let dir = RunDir::new(&options.dir);
    if let Some(source) = source.as_deref_mut() {
        source.recorded(&dir, &state)?;
    }
    let mut done_now = 0;
    while state.iteration < config.iterations
        && options.max_new_iterations.is_none_or(|m| done_now < m)
    {
        let it = Iteration {
            config,
            dir: &dir,
            options,
            n: state.iteration + 1,
            started: Instant::now(),
        };
        state = it.run(state, observer, evaluator, source.as_deref_mut())?;
        done_now += 1;
    }
    Ok(state)
}

/// One iteration of a run: what every phase needs to know.
struct Iteration<'a> {
    config: &'a RunConfig,
    dir: &'a RunDir,
    options: &'a RunOptions,
    /// The iteration's number (from 1).
    n: u32,
    started: Instant,
}

/// What self-play produced, counted as games arrive (the games themselves go to chunks).
#[derive(Debug, Default)]
pub(crate) struct GameTally {
    games: u64,
    positions: u64,
    plies: u64,
    white_wins: u64,
    black_wins: u64,
    unfinished: u64,
    /// Sparring games (White was the alpha-beta searcher), counted apart from the others'
    /// wins, and those Black won.
    sparring: u64,
    sparring_black_wins: u64,
}

impl GameTally {
    /// Counts `game`, a sparring game (White was the alpha-beta searcher) apart.
    fn add(&mut self, game: &GameRecord) {
        self.games += 1;
        self.positions += game.positions.len() as u64;
        self.plies += game.moves.len() as u64;
        if game.sparring {
            self.sparring += 1;
            self.sparring_black_wins += u64::from(game.result.winner() == Some(Side::Black));
            return;
        }
        match game.result.winner() {
            Some(Side::White) => self.white_wins += 1,
            Some(Side::Black) => self.black_wins += 1,
            None => self.unfinished += 1,
        }
    }

    fn merge(&mut self, other: &GameTally) {
        self.games += other.games;
        self.positions += other.positions;
        self.plies += other.plies;
        self.white_wins += other.white_wins;
        self.black_wins += other.black_wins;
        self.unfinished += other.unfinished;
        self.sparring += other.sparring;
        self.sparring_black_wins += other.sparring_black_wins;
    }

    /// `count` as a share of the games (0 without games).
    fn rate(&self, count: u64) -> f64 {
        count as f64 / self.games.max(1) as f64
    }

    /// `count` as a share of the games of the network against itself (not sparring).
    fn selfplay_rate(&self, count: u64) -> f64 {
        count as f64 / (self.games - self.sparring).max(1) as f64
    }
}

/// The self-play phase's result.
struct SelfPlayOutcome {
    tally: GameTally,
    stats: SelfPlayStats,
    seconds: f64,
    backlog: Backlog,
}

/// The training phase's result (besides the trained network).
struct TrainingOutcome {
    steps: u32,
    learning_rate: f64,
    window: usize,
    policy_loss: f64,
    value_loss: f64,
    /// With a moves-left head.
    moves_left_loss: Option<f64>,
    total_loss: f64,
    seconds: f64,
}

impl Iteration<'_> {
    /// Self-play → training → checkpoint → evaluation and gating → metrics, plot, state.
    fn run<'s>(
        &self,
        mut state: RunState,
        observer: &mut dyn Observer,
        evaluator: &mut dyn Evaluate,
        mut source: Option<&mut (dyn GameSource + 's)>,
    ) -> Result<RunState, RunError> {
        let selfplay_ckpt = self.dir.root().join(&state.selfplay_checkpoint);
        let games = match source.as_deref_mut() {
            None => self.self_play(&selfplay_ckpt, observer)?,
            Some(source) => self.gathered(source, observer)?,
        };
        let total_positions = state.total_positions + games.tally.positions;
        let (trainer, training) = self.train(games.tally.positions, total_positions, observer)?;
        let ckpt = self.save_checkpoint(
            &state,
            &games.tally,
            total_positions,
            &trainer,
            training.steps,
        )?;
        drop(trainer);
        let report = self.evaluate(&ckpt, &selfplay_ckpt, evaluator)?;
        let accepted = self.gate(report.as_ref());
        state.selfplay_checkpoint = relative(
            self.dir.root(),
            if accepted == Some(false) {
                &selfplay_ckpt
            } else {
                &ckpt
            },
        );
        state.iteration = self.n;
        state.total_games += games.tally.games;
        state.total_positions = total_positions;
        state.total_steps += u64::from(training.steps);
        state.elapsed_s += self.started.elapsed().as_secs_f64();
        let m = self.metrics(&state, &games, &training, report, accepted);
        self.record(&state, &m)?;
        if let Some(source) = source {
            source.recorded(self.dir, &state)?;
        }
        observer.iteration_finished(&m);
        Ok(state)
    }

    /// The games of this iteration from `source`, counted from the chunk files it wrote.
    fn gathered(
        &self,
        source: &mut dyn GameSource,
        observer: &mut dyn Observer,
    ) -> Result<SelfPlayOutcome, RunError> {
        let t0 = Instant::now();
        let backlog = source.gather(self.dir, self.n, observer)?;
        let (tally, _) = existing_games(self.dir, self.n)?;
        Ok(SelfPlayOutcome {
            tally,
            stats: SelfPlayStats::default(),
            seconds: t0.elapsed().as_secs_f64(),
            backlog,
        })
    }

    fn seed(&self, purpose: u64) -> u64 {
        derive_seed(self.config.seed, self.n, purpose)
    }

    /// Self-play with the network of `selfplay_ckpt`, topping up the games already written
    /// for this iteration; finished games go to chunk files as they arrive.
    fn self_play(
        &self,
        selfplay_ckpt: &Path,
        observer: &mut dyn Observer,
    ) -> Result<SelfPlayOutcome, RunError> {
        let (config, dir, n) = (self.config, self.dir, self.n);
        let (mut tally, mut seq) = existing_games(dir, n)?;
        let target = u64::from(config.selfplay.games_per_iteration);
        let already = tally.games;
        let remaining = target.saturating_sub(already);
        observer.selfplay_started(n, remaining, already);
        let batch = GameBatch {
            checkpoint: selfplay_ckpt,
            seed: self.seed(0),
            eval_seed: self.seed(1),
            first: already,
            count: remaining,
            per_chunk: chunk_games(config),
            iteration: n,
            forks: fork_pool(config, dir, n)?,
        };
        let t0 = Instant::now();
        let (played, stats) = play_games(config, self.options, &batch, observer, |chunk| {
            replay::write_chunk(&dir.chunk(n, seq), &chunk)?;
            seq += 1;
            Ok(())
        })?;
        tally.merge(&played);
        Ok(SelfPlayOutcome {
            tally,
            stats,
            seconds: t0.elapsed().as_secs_f64(),
            backlog: Backlog::default(),
        })
    }

    /// Training on the replay window, continuing from the latest network with its optimizer
    /// state (the self-play network, unless gating kept an older one for self-play).
    fn train(
        &self,
        new_positions: u64,
        total_positions: u64,
        observer: &mut dyn Observer,
    ) -> Result<(Trainer, TrainingOutcome), RunError> {
        let (config, n) = (self.config, self.n);
        let window_size = config.training.window_size(total_positions);
        let (window, report) = ReplayWindow::load(&self.dir.chunks(), window_size)?;
        for skipped in &report.skipped {
            tracing::warn!("skipping damaged chunk: {skipped}");
        }
        let steps = if window.is_empty() {
            0
        } else {
            config.training.steps_for(new_positions)
        };
        observer.training_started(n, steps, window.len());
        let t0 = Instant::now();
        let autodiff = self.options.device.clone().without_autodiff().autodiff();
        let (trainer, _) = checkpoint::load_training(
            self.dir.checkpoint(n - 1),
            &autodiff,
            Some(&net_config(config)),
            net_train_config(config),
        )?;
        let mut trainer =
            Engine::new(trainer, engine_kind(config, &autodiff)).map_err(RunError::Engine)?;
        let learning_rate = config.training.learning_rate_at(n);
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed(2));
        let mut builder = BatchBuilder::with_planes(net_config(config).planes());
        let mut sums = [0.0f64; 3];
        let mut moves_left_sum: Option<f64> = None;
        let moves_left = config.training.moves_left_loss_weight.is_some();
        for step in 0..steps {
            builder.clear();
            // Each sample already comes under a symmetry drawn uniformly from the 8
            // (`ReplayWindow::sample`), so it is encoded as it is.
            for sample in window.sample_batch(config.training.batch_size as usize, &mut rng) {
                let (moves, probs): (Vec<Move>, Vec<f32>) = sample.policy.iter().copied().unzip();
                builder
                    .push_position(
                        &sample.position,
                        sample.repetitions,
                        &moves,
                        &probs,
                        config.value_target(&sample),
                        Symmetry::Identity,
                    )
                    .map_err(|e| RunError::Batch(e.to_string()))?;
                if moves_left {
                    builder
                        .push_plies_to_end(sample.plies_to_end)
                        .map_err(|e| RunError::Batch(e.to_string()))?;
                }
            }
            let s = trainer.step(&builder, learning_rate);
            for (sum, loss) in sums
                .iter_mut()
                .zip([s.policy_loss, s.value_loss, s.total_loss])
            {
                *sum += f64::from(loss);
            }
            if let Some(loss) = s.moves_left_loss {
                *moves_left_sum.get_or_insert(0.0) += f64::from(loss);
            }
            observer.training_step(step + 1, &s);
        }
        let mean = |sum: f64| {
            if steps == 0 {
                0.0
            } else {
                sum / f64::from(steps)
            }
        };
        let outcome = TrainingOutcome {
            steps,
            learning_rate,
            window: window.len(),
            policy_loss: mean(sums[0]),
            value_loss: mean(sums[1]),
            moves_left_loss: moves_left_sum.map(mean),
            total_loss: mean(sums[2]),
            seconds: t0.elapsed().as_secs_f64(),
        };
        Ok((trainer.into_trainer().map_err(RunError::Engine)?, outcome))
    }

    /// Checkpoint `n` with the training record in its metadata.
    fn save_checkpoint(
        &self,
        state: &RunState,
        tally: &GameTally,
        total_positions: u64,
        trainer: &Trainer,
        steps: u32,
    ) -> Result<PathBuf, RunError> {
        let ckpt = self.dir.checkpoint(self.n);
        let mut save = SaveOptions::at_step(state.total_steps + u64::from(steps));
        let elapsed = state.elapsed_s + self.started.elapsed().as_secs_f64();
        let extra = [
            ("iteration", self.n.into()),
            ("games", (state.total_games + tally.games).into()),
            ("positions", total_positions.into()),
            ("elapsed_s", elapsed.into()),
            ("config_name", self.config.name.clone().into()),
        ];
        for (key, value) in extra {
            save.extra.insert(key.into(), value);
        }
        checkpoint::save_training(&ckpt, trainer, &save)?;
        Ok(ckpt)
    }

    /// The evaluation matches of the new checkpoint, if the run plays any.
    fn evaluate(
        &self,
        ckpt: &Path,
        selfplay_ckpt: &Path,
        evaluator: &mut dyn Evaluate,
    ) -> Result<Option<EvaluationReport>, RunError> {
        if self.config.evaluation.matches == 0 {
            return Ok(None);
        }
        let request = EvaluationRequest {
            iteration: self.n,
            candidate: ckpt,
            previous: selfplay_ckpt,
            config: &self.config.evaluation,
            search: &self.config.search,
            seed: self.seed(3),
        };
        Ok(evaluator.evaluate(&request)?)
    }

    /// Gating: whether the new network replaces the self-play one (`None`: no gating). A
    /// sequential test (`[evaluation.sprt]`) keeps it only when it accepts H1; otherwise
    /// its match score must reach the threshold.
    fn gate(&self, report: Option<&EvaluationReport>) -> Option<bool> {
        let e = &self.config.evaluation;
        let vs = report
            .and_then(|r| r.vs_previous.as_ref())
            .filter(|_| e.gating)?;
        Some(match &vs.sprt {
            Some(test) => test.verdict == SprtVerdict::H1,
            None => vs.score() >= e.gating_threshold,
        })
    }

    fn metrics(
        &self,
        state: &RunState,
        games: &SelfPlayOutcome,
        training: &TrainingOutcome,
        report: Option<EvaluationReport>,
        accepted: Option<bool>,
    ) -> IterationMetrics {
        let t = &games.tally;
        let report = report.unwrap_or_default();
        IterationMetrics {
            iteration: self.n,
            elapsed_s: state.elapsed_s,
            iteration_s: self.started.elapsed().as_secs_f64(),
            selfplay_s: games.seconds,
            training_s: training.seconds,
            selfplay_games: t.games as u32,
            positions: t.positions,
            total_positions: state.total_positions,
            // No self-play in this process this iteration (a resumed iteration whose games
            // were all on disk, a learner): no rate (null in metrics.jsonl), not a false 0.
            evaluations_per_s: if games.stats.evaluations > 0 {
                games.stats.evaluations_per_second()
            } else {
                f64::NAN
            },
            cache_hit_rate: games.stats.cache_hit_rate(),
            mean_game_length: t.rate(t.plies),
            white_win_rate: t.selfplay_rate(t.white_wins),
            black_win_rate: t.selfplay_rate(t.black_wins),
            unfinished_rate: t.selfplay_rate(t.unfinished),
            sparring_games: t.sparring as u32,
            sparring_black_wins: t.sparring_black_wins as u32,
            stale_games: u32::try_from(games.backlog.stale_games).unwrap_or(u32::MAX),
            waiting_chunks: u32::try_from(games.backlog.waiting_chunks).unwrap_or(u32::MAX),
            training_steps: training.steps,
            policy_loss: training.policy_loss,
            value_loss: training.value_loss,
            moves_left_loss: training.moves_left_loss,
            total_loss: training.total_loss,
            learning_rate: training.learning_rate,
            window_size: training.window as u64,
            vs_previous: report.vs_previous,
            vs_baseline: report.vs_baseline,
            accepted,
        }
    }

    /// The metrics line and plot, then `state.json`: the iteration is complete.
    fn record(&self, state: &RunState, m: &IterationMetrics) -> Result<(), RunError> {
        metrics::append_metrics(&self.dir.metrics(), m)?;
        let records = metrics::read_metrics(&self.dir.metrics())?;
        plot::write_plot(&self.dir.learning_curves(), &records, &self.config.name)?;
        self.dir.write_state(state)?;
        Ok(())
    }
}

/// Games to play with one network: which, from which game index, how many, and how many
/// to a chunk.
pub(crate) struct GameBatch<'a> {
    /// The network's checkpoint (stem).
    pub checkpoint: &'a Path,
    /// The games' seed (game `i` is seeded with `game_seed(seed, i)`).
    pub seed: u64,
    /// The seed of the random symmetries at inference.
    pub eval_seed: u64,
    /// The index of the first game.
    pub first: u64,
    /// How many games.
    pub count: u64,
    /// Games per chunk.
    pub per_chunk: usize,
    /// The iteration the chunks are tagged with (the network's iteration + 1).
    pub iteration: u32,
    /// The games that `selfplay.fork_fraction` of these games fork from.
    pub forks: Arc<ForkPool>,
}

/// Games per chunk of a run: an eighth of an iteration, 1 to 64.
pub(crate) fn chunk_games(config: &RunConfig) -> usize {
    (u64::from(config.selfplay.games_per_iteration) / 8).clamp(1, 64) as usize
}

/// Plays `batch` with the run's self-play settings, handing every `per_chunk` finished
/// games (and the rest at the end) to `on_chunk` as a chunk, while the workers go on.
pub(crate) fn play_games(
    config: &RunConfig,
    options: &RunOptions,
    batch: &GameBatch<'_>,
    observer: &mut dyn Observer,
    mut on_chunk: impl FnMut(Chunk) -> Result<(), RunError>,
) -> Result<(GameTally, SelfPlayStats), RunError> {
    let plain = options.device.clone().without_autodiff();
    let (model, _) = checkpoint::load(batch.checkpoint, &plain, Some(&net_config(config)))?;
    let mut settings = SelfPlaySettings::new(config).map_err(SearchError::from)?;
    settings.forks = Arc::clone(&batch.forks);
    let split = split_forward(settings.threads());
    let fast = (!options.selfplay_on_device)
        .then(|| Arc::new(FastNet::from_model(&model).with_parallel(split)));
    let mut tally = GameTally::default();
    let mut pending: Vec<GameRecord> = Vec::new();
    let mut flush = |pending: &mut Vec<GameRecord>| -> Result<(), RunError> {
        if pending.is_empty() {
            return Ok(());
        }
        on_chunk(Chunk {
            info: ChunkInfo::new(&config.name, batch.iteration),
            games: std::mem::take(pending),
        })
    };
    let make_evaluator = |worker: usize| {
        let ev = match &fast {
            Some(fast) => NetEvaluator::new(Arc::clone(fast)),
            None => NetEvaluator::burn(&model, &plain),
        };
        worker_evaluator(ev, &config.selfplay, batch.eval_seed, worker)
    };
    let stats = selfplay::play::<_, _, _, RunError>(
        &settings,
        batch.seed,
        batch.first,
        batch.count,
        make_evaluator,
        |game, stats| {
            tally.add(&game);
            pending.push(game);
            observer.game_finished(stats.games, stats);
            if pending.len() >= batch.per_chunk {
                flush(&mut pending)?;
            }
            Ok(())
        },
    )?;
    flush(&mut pending)?;
    Ok((tally, stats))
}

/// Self-play worker `worker`'s evaluator around `ev`: with `symmetry_at_inference`, each
/// leaf under a random symmetry drawn from `seed` and the worker's number.
#[must_use]
pub fn worker_evaluator(
    ev: NetEvaluator,
    config: &SelfPlayConfig,
    seed: u64,
    worker: usize,
) -> NetEvaluator {
    if config.symmetry_at_inference {
        ev.with_random_symmetry(seed ^ worker as u64)
    } else {
        ev
    }
}

/// Whether self-play's forward passes are split over rayon's pool (`FastNet::with_parallel`)
/// with `threads` workers: only when there are fewer workers than cores. With a worker per
/// core, each worker's forward passes run on its own thread: split as well, they measured
/// 0.8× the self-play rate (`brandubh bench` measures both).
#[must_use]
pub fn split_forward(threads: usize) -> bool {
    threads < std::thread::available_parallelism().map_or(1, usize::from)
}

/// What the games of `iteration` fork from: the games of the iteration before, if the run
/// forks at all (`selfplay.fork_fraction`). In chunk order; a damaged chunk is skipped.
fn fork_pool(config: &RunConfig, dir: &RunDir, iteration: u32) -> Result<Arc<ForkPool>, RunError> {
    let mut pool = ForkPool::default();
    if config.selfplay.fork_fraction > 0.0 && iteration > 0 {
        read_chunks_of(dir, iteration - 1, |chunk| pool.extend(&chunk.games))?;
    }
    Ok(Arc::new(pool))
}

/// Calls `on_chunk` with every chunk of `iteration` in the run's chunk files, in order;
/// a damaged chunk is skipped with a warning. Returns the chunk files found, damaged ones
/// included.
fn read_chunks_of(
    dir: &RunDir,
    iteration: u32,
    mut on_chunk: impl FnMut(Chunk),
) -> Result<Vec<replay::ChunkEntry>, RunError> {
    let mut entries = replay::list_chunks(&dir.chunks())?;
    entries.retain(|entry| entry.iteration == iteration);
    for entry in &entries {
        match replay::read_chunk(&entry.path) {
            Ok(chunk) => on_chunk(chunk),
            Err(e) => tracing::warn!("skipping damaged chunk: {e}"),
        }
    }
    Ok(entries)
}

/// The games of `iteration` already in chunk files, counted, and the next free chunk number.
fn existing_games(dir: &RunDir, iteration: u32) -> Result<(GameTally, u32), RunError> {
    let mut tally = GameTally::default();
    let entries = read_chunks_of(dir, iteration, |chunk| {
        chunk.games.iter().for_each(|g| tally.add(g));
    })?;
    let next_seq = entries.iter().map(|e| e.seq + 1).max().unwrap_or(0);
    Ok((tally, next_seq))
}
