//! `brandubh train --config FILE [--run LOCATION] [--role all|learner|actor]`: the main job.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use brandubh_net::StepStats;
use brandubh_run::RunState;
use brandubh_run::config::RunConfig;
use brandubh_run::metrics::IterationMetrics;
use brandubh_store::Location;
use brandubh_train::run::{self, Observer, RunOptions};
use brandubh_train::selfplay::SelfPlayStats;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::backend;

/// Train an agent from scratch by self-play, or continue a run.
///
/// Each iteration plays self-play games with the latest network, writes them as replay
/// chunks, trains on the most recent positions, saves a checkpoint and appends a line to
/// RUN/metrics.jsonl (plots in RUN/learning_curves.png). Running the same command again
/// continues from the last complete iteration; a run can be killed at any moment.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run configuration (TOML), e.g. configs/quick.toml. An actor reads the run's
    /// own from LOCATION; a learner continuing a store run may leave it out.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Where the run lives: a directory (default: runs/NAME, NAME from the
    /// configuration), or a store URL for a learner and its actors: s3://BUCKET/PREFIX,
    /// gs://BUCKET/PREFIX, az://CONTAINER/PREFIX, file:///DIR (credentials and endpoint
    /// from the store's environment variables, e.g. AWS_ENDPOINT_URL).
    #[arg(long, value_name = "LOCATION")]
    run: Option<String>,
    /// `all`: self-play and training in this process, in a directory. `learner`: training,
    /// checkpoints, evaluation and metrics on the actors' games. `actor`: self-play only,
    /// with the newest network, games uploaded in chunks. Any number of actors may come
    /// and go.
    #[arg(long, value_name = "ROLE", default_value = "all")]
    role: Role,
    /// Learner and actor: the local cache of networks and chunks (default: a directory
    /// under the system's temporary directory named after LOCATION).
    #[arg(long, value_name = "DIR")]
    cache: Option<PathBuf>,
    /// Actor: its id, unique among the run's actors (default: host name and a random
    /// suffix). Its chunks are LOCATION/chunks/ID/.
    #[arg(long, value_name = "ID")]
    actor_id: Option<String>,
    /// Actor: stop after uploading this many chunks (default: when the run is finished).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    chunks: Option<u64>,
    /// Learner: do not train on games of networks more than N iterations older than the
    /// one being trained; they are consumed and counted (metrics' stale_games, status).
    #[arg(long, value_name = "N", default_value_t = 4)]
    max_network_age: u32,
    /// Learner: the most games an iteration takes, oldest first; the rest wait for later
    /// iterations (default: twice selfplay.games_per_iteration).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max_games: Option<u64>,
    /// Learner: how long its lease on the run holds without renewal, in seconds (renewed
    /// every third of it). A second learner is refused while it holds; a killed learner's
    /// successor waits at most this long.
    #[arg(long, value_name = "S", default_value_t = 60, value_parser = clap::value_parser!(u64).range(3..=3600))]
    lease_s: u64,
    /// Learner and actor: how often to look for new games or networks, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 2000, value_parser = clap::value_parser!(u64).range(10..=600_000))]
    poll_ms: u64,
    /// Continue an existing run even though its configuration changed.
    #[arg(long)]
    force_config: bool,
    /// Stop after this many iterations of this invocation (the run can be continued).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    iterations: Option<u32>,
    /// No progress bars; log lines only.
    #[arg(long)]
    quiet: bool,
    /// Where burn runs: `cpu`, or `gpu` (the GPU wgpu prefers) / `gpu:N` (the N-th
    /// discrete GPU) in a binary built with `--features gpu`. On a GPU the training step is
    /// burn's whatever training.engine says (the fast engine runs on the CPU only).
    #[arg(long, value_name = "DEVICE", default_value = "cpu", value_parser = backend::parse_device)]
    device: backend::DeviceChoice,
    /// Where self-play evaluates positions: `fast` (the CPU fast path), `device` (burn's
    /// forward pass on --device, batched across games) or `auto`: the fast path until a
    /// GPU measures faster (`brandubh bench --device gpu`; docs/guide/gpu.md).
    #[arg(long, value_name = "WHERE", default_value = "auto")]
    selfplay_inference: Inference,
}

/// What this process does in the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Role {
    /// Self-play and training in one process (a directory run).
    All,
    /// Self-play only, uploading games to the run's store.
    Actor,
    /// Training on the actors' games, publishing networks.
    Learner,
}

/// Where self-play evaluates positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Inference {
    /// The CPU fast path, until `brandubh bench --device gpu` measures a GPU faster.
    Auto,
    /// The CPU fast path.
    Fast,
    /// burn's forward pass on the training device.
    Device,
}

impl Args {
    /// The role this process plays, and the configuration `--config` names, read. The
    /// binary's `main` runs the role: [`run_all`] here, a learner or an actor in
    /// `cmd::remote`, which uses these arguments (so this module does not use it).
    pub(crate) fn role_and_config(&self) -> anyhow::Result<(Role, Option<RunConfig>)> {
        let config = match &self.config {
            Some(path) => Some(RunConfig::from_file(path)?),
            None => None,
        };
        Ok((self.role, config))
    }

    /// The run's location: `--run`, or runs/NAME.
    pub(crate) fn location(&self, config: Option<&RunConfig>) -> anyhow::Result<Location> {
        match (&self.run, config) {
            (Some(text), _) => Ok(Location::parse(text)?),
            (None, Some(config)) => Ok(Location::Local(PathBuf::from("runs").join(&config.name))),
            (None, None) => anyhow::bail!("give --run LOCATION or --config FILE"),
        }
    }

    /// Opens `--device`.
    pub(crate) fn open_device(&self) -> anyhow::Result<backend::Opened> {
        backend::open(self.device)
    }

    /// The training loop's options, in `dir`, on `device`.
    pub(crate) fn options(&self, dir: PathBuf, device: &backend::Opened) -> RunOptions {
        RunOptions {
            dir,
            force_config: self.force_config,
            max_new_iterations: self.iterations,
            device: device.device.clone(),
            selfplay_on_device: self.selfplay_on_device(),
        }
    }

    /// `--selfplay-inference`: `auto` is the CPU fast path on every device, since no GPU
    /// has measured faster yet (`brandubh bench --device gpu` measures a machine).
    fn selfplay_on_device(&self) -> bool {
        match self.selfplay_inference {
            Inference::Auto | Inference::Fast => false,
            Inference::Device => true,
        }
    }

    /// Where each phase runs, for the first log line: the device, the training step, and
    /// self-play's evaluations.
    pub(crate) fn placement(&self, config: &RunConfig, device: &backend::Opened) -> String {
        let engine = run::engine_kind(config, &device.device);
        let step = if device.is_gpu() {
            format!("training step {} on the GPU", engine.name())
        } else {
            format!("training step {}", engine.name())
        };
        let selfplay = match (self.selfplay_inference, self.selfplay_on_device()) {
            (_, true) => "self-play on the device",
            (Inference::Auto, false) => "self-play on the CPU fast path (auto)",
            (_, false) => "self-play on the CPU fast path",
        };
        format!("{}, {step}, {selfplay}", device.name)
    }

    pub(crate) fn run_text(&self) -> Option<&str> {
        self.run.as_deref()
    }

    pub(crate) fn cache(&self) -> Option<&PathBuf> {
        self.cache.as_ref()
    }

    pub(crate) fn actor_id(&self) -> Option<&str> {
        self.actor_id.as_deref()
    }

    pub(crate) fn chunks(&self) -> Option<u64> {
        self.chunks
    }

    pub(crate) fn max_network_age(&self) -> Option<u32> {
        Some(self.max_network_age)
    }

    pub(crate) fn max_games(&self) -> Option<u64> {
        self.max_games
    }

    pub(crate) fn lease_ttl(&self) -> Duration {
        Duration::from_secs(self.lease_s)
    }

    pub(crate) fn poll(&self) -> Duration {
        Duration::from_millis(self.poll_ms)
    }

    pub(crate) fn bars(&self, iterations: u32) -> Bars {
        Bars::new(self.quiet, iterations)
    }
}

/// `--role all`: today's single-process run in a directory.
pub(crate) fn run_all(args: &Args, config: Option<RunConfig>) -> anyhow::Result<ExitCode> {
    let Some(config) = config else {
        anyhow::bail!("--role all needs --config <FILE>");
    };
    let dir = match args.location(Some(&config))? {
        Location::Local(dir) => dir,
        other => anyhow::bail!(
            "--run {other}: --role all trains in one process on a directory; on a store run one --role learner and any number of --role actor"
        ),
    };
    let config_path = args.config.clone().unwrap_or_default();
    let device = args.open_device()?;
    tracing::info!(
        "training {} in {} on {} ({} iterations, {} games each, {} worker threads)",
        config_path.display(),
        dir.display(),
        args.placement(&config, &device),
        config.iterations,
        config.selfplay.games_per_iteration,
        config.selfplay.worker_threads(),
    );
    let options = args.options(dir.clone(), &device);
    let mut observer = Bars::new(args.quiet, config.iterations);
    let state = run::train(
        &config,
        &options,
        &mut observer,
        &mut crate::cmd::MatchEvaluation,
    )
    .with_context(|| format!("run {}", dir.display()))?;
    observer.finish();
    log_finished(&dir.display().to_string(), &config, &state);
    Ok(ExitCode::SUCCESS)
}

/// The run's totals, on one line.
pub(crate) fn log_finished(location: &str, config: &RunConfig, state: &RunState) {
    tracing::info!(
        "run {} at iteration {}/{}: {} games, {} positions, {:.0} s of training time",
        location,
        state.iteration,
        config.iterations,
        state.total_games,
        state.total_positions,
        state.elapsed_s
    );
}

/// Progress bars (or, with --quiet, nothing but log lines) for the training loop.
pub(crate) struct Bars {
    quiet: bool,
    iterations: u32,
    bar: Option<ProgressBar>,
    /// The learner's last reported wait (iteration, games), so that each change is one line.
    waiting: Option<(u32, u64)>,
}

impl Bars {
    fn new(quiet: bool, iterations: u32) -> Bars {
        Bars {
            quiet,
            iterations,
            bar: None,
            waiting: None,
        }
    }

    fn start(&mut self, len: u64, template: &str, prefix: String) {
        self.finish();
        if self.quiet {
            return;
        }
        let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
        let style = ProgressStyle::with_template(template)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
        bar.set_style(style);
        bar.set_prefix(prefix);
        bar.enable_steady_tick(Duration::from_millis(250));
        self.bar = Some(bar);
    }

    pub(crate) fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

impl Observer for Bars {
    fn selfplay_started(&mut self, iteration: u32, games: u64, already: u64) {
        if already > 0 {
            tracing::info!("iteration {iteration}: {already} games already played, {games} to go");
        }
        self.start(
            games,
            "{prefix} [{bar:30}] {pos}/{len} games {msg} ({elapsed}, eta {eta})",
            if self.iterations == 0 {
                // An actor: no iteration count, the network it plays.
                format!("network {} self-play", iteration.saturating_sub(1))
            } else {
                format!("iter {iteration}/{} self-play", self.iterations)
            },
        );
    }

    fn game_finished(&mut self, done: u64, stats: &SelfPlayStats) {
        if let Some(bar) = &self.bar {
            bar.set_position(done);
            let secs = stats.wall.as_secs_f64().max(1e-9);
            bar.set_message(format!(
                "{:.0} pos/s, {:.0} evals/s{}, batch {:.0}",
                stats.positions as f64 / secs,
                stats.evaluations_per_second(),
                cache_share(stats.cache_hit_rate()),
                stats.mean_batch()
            ));
        }
    }

    fn training_started(&mut self, iteration: u32, steps: u32, window: usize) {
        self.start(
            u64::from(steps),
            "{prefix} [{bar:30}] {pos}/{len} steps {msg} ({elapsed}, eta {eta})",
            format!("iter {iteration}/{} training", self.iterations),
        );
        if let Some(bar) = &self.bar {
            bar.set_message(format!("window {window}"));
        }
    }

    fn training_step(&mut self, step: u32, stats: &StepStats) {
        if let Some(bar) = &self.bar {
            bar.set_position(u64::from(step));
            bar.set_message(format!(
                "loss {:.3} (policy {:.3}, value {:.3}{})",
                stats.total_loss,
                stats.policy_loss,
                stats.value_loss,
                moves_left(stats.moves_left_loss.map(f64::from))
            ));
        }
    }

    fn network_loaded(&mut self, iteration: u32) {
        tracing::info!("playing with network {iteration}");
    }

    fn waiting_for_games(
        &mut self,
        iteration: u32,
        have: u64,
        need: u64,
        by_actor: &[(String, u64)],
    ) {
        if self.waiting == Some((iteration, have)) {
            return;
        }
        self.waiting = Some((iteration, have));
        let actors: Vec<String> = by_actor.iter().map(|(a, g)| format!("{a} {g}")).collect();
        tracing::info!(
            "iteration {iteration} waiting for games: {have}/{need} new{}",
            if actors.is_empty() {
                String::new()
            } else {
                format!(" ({})", actors.join(", "))
            }
        );
    }

    fn iteration_finished(&mut self, m: &IterationMetrics) {
        self.finish();
        let vs = |s: &Option<brandubh_run::metrics::MatchSummary>| match s {
            Some(s) => {
                let test = s.sprt.map_or(String::new(), |t| {
                    format!(
                        " (SPRT {} after {} matches, LLR {:.2})",
                        t.verdict, s.matches, t.llr
                    )
                });
                format!(
                    ", vs {} {}-{}-{}{test}",
                    s.opponent, s.wins, s.draws, s.losses
                )
            }
            None => String::new(),
        };
        let backlog = match (m.stale_games, m.waiting_chunks) {
            (0, 0) => String::new(),
            (stale, waiting) => {
                format!("; {stale} games too old, not trained on; {waiting} chunks left waiting")
            }
        };
        let sparring = if m.sparring_games > 0 {
            format!(
                "; {} sparring, Black won {}",
                m.sparring_games, m.sparring_black_wins
            )
        } else {
            String::new()
        };
        tracing::info!(
            "iteration {}: {} games ({:.0} plies avg, white {:.0}% black {:.0}% unfinished {:.0}%{}{}), {} positions, {}, loss {:.3} (policy {:.3}, value {:.3}{}), {:.0}+{:.0} s{}{}",
            m.iteration,
            m.selfplay_games,
            m.mean_game_length,
            100.0 * m.white_win_rate,
            100.0 * m.black_win_rate,
            100.0 * m.unfinished_rate,
            sparring,
            backlog,
            m.positions,
            throughput(m),
            m.total_loss,
            m.policy_loss,
            m.value_loss,
            moves_left(m.moves_left_loss),
            m.selfplay_s,
            m.training_s,
            vs(&m.vs_previous),
            vs(&m.vs_baseline),
        );
    }
}

/// Self-play's rate as the iteration line gives it (`35208 evals/s (17% cached)`), or what
/// stands in for it when this process played none of the iteration's games.
fn throughput(m: &IterationMetrics) -> String {
    if m.evaluations_per_s.is_finite() {
        format!(
            "{:.0} evals/s{}",
            m.evaluations_per_s,
            cache_share(m.cache_hit_rate)
        )
    } else {
        "no self-play in this session".to_owned()
    }
}

/// The evaluation cache's share of the evaluations, as the iteration line appends it
/// (` (23% cached)`), or nothing without a cache.
fn cache_share(hit_rate: f64) -> String {
    if hit_rate > 0.0 {
        format!(" ({:.0}% cached)", 100.0 * hit_rate)
    } else {
        String::new()
    }
}

/// The moves-left loss as the loss lines append it (`, moves left 0.123`), or nothing for
/// a network without that head.
fn moves_left(loss: Option<f64>) -> String {
    loss.map_or(String::new(), |l| format!(", moves left {l:.3}"))
}
