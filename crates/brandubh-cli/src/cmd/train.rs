//! `brandubh train --config FILE [--run DIR]`: the main job.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use brandubh_net::StepStats;
use brandubh_run::config::RunConfig;
use brandubh_run::metrics::IterationMetrics;
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
    /// The run configuration (TOML), e.g. configs/quick.toml.
    #[arg(long, value_name = "FILE")]
    config: PathBuf,
    /// The run directory (default: runs/NAME, NAME from the configuration).
    #[arg(long, value_name = "DIR")]
    run: Option<PathBuf>,
    /// Continue an existing run even though its configuration changed.
    #[arg(long)]
    force_config: bool,
    /// Stop after this many iterations of this invocation (the run can be continued).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    iterations: Option<u32>,
    /// No progress bars; log lines only.
    #[arg(long)]
    quiet: bool,
    /// Where self-play evaluates positions: `fast` (the CPU fast path, several times
    /// faster than burn on a CPU) or `device` (burn's forward pass on the training device).
    /// Default: `device` in a GPU build (`--features cuda`), `fast` otherwise.
    #[arg(long, value_name = "WHERE")]
    selfplay_inference: Option<Inference>,
}

/// Where self-play evaluates positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Inference {
    /// The CPU fast path.
    Fast,
    /// burn's forward pass on the training device.
    Device,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let config = RunConfig::from_file(&args.config)?;
    let dir = args
        .run
        .unwrap_or_else(|| PathBuf::from("runs").join(&config.name));
    let inference = args.selfplay_inference.unwrap_or(if backend::GPU {
        Inference::Device
    } else {
        Inference::Fast
    });
    tracing::info!(
        "training {} in {} on {} ({} iterations, {} games each, {} worker threads, self-play on {})",
        args.config.display(),
        dir.display(),
        backend::NAME,
        config.iterations,
        config.selfplay.games_per_iteration,
        config.selfplay.worker_threads(),
        match inference {
            Inference::Fast => "the CPU fast path",
            Inference::Device => "the training device",
        },
    );
    let options = RunOptions {
        dir: dir.clone(),
        force_config: args.force_config,
        max_new_iterations: args.iterations,
        device: backend::device(),
        selfplay_on_device: inference == Inference::Device,
    };
    let mut observer = Bars::new(args.quiet, config.iterations);
    let state = run::train(
        &config,
        &options,
        &mut observer,
        &mut crate::cmd::MatchEvaluation,
    )
    .with_context(|| format!("run {}", dir.display()))?;
    observer.finish();
    tracing::info!(
        "run {} at iteration {}/{}: {} games, {} positions, {:.0} s of training time",
        dir.display(),
        state.iteration,
        config.iterations,
        state.total_games,
        state.total_positions,
        state.elapsed_s
    );
    Ok(ExitCode::SUCCESS)
}

/// Progress bars (or, with --quiet, nothing but log lines) for the training loop.
struct Bars {
    quiet: bool,
    iterations: u32,
    bar: Option<ProgressBar>,
}

impl Bars {
    fn new(quiet: bool, iterations: u32) -> Bars {
        Bars {
            quiet,
            iterations,
            bar: None,
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

    fn finish(&mut self) {
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
            format!("iter {iteration}/{} self-play", self.iterations),
        );
    }

    fn game_finished(&mut self, done: u64, stats: &SelfPlayStats) {
        if let Some(bar) = &self.bar {
            bar.set_position(done);
            let secs = stats.wall.as_secs_f64().max(1e-9);
            bar.set_message(format!(
                "{:.0} pos/s, {:.0} evals/s, batch {:.0}",
                stats.positions as f64 / secs,
                stats.evaluations_per_second(),
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
                "loss {:.3} (policy {:.3}, value {:.3})",
                stats.total_loss, stats.policy_loss, stats.value_loss
            ));
        }
    }

    fn iteration_finished(&mut self, m: &IterationMetrics) {
        self.finish();
        let vs = |s: &Option<brandubh_run::metrics::MatchSummary>| match s {
            Some(s) => format!(", vs {} {}-{}-{}", s.opponent, s.wins, s.draws, s.losses),
            None => String::new(),
        };
        tracing::info!(
            "iteration {}: {} games ({:.0} plies avg, white {:.0}% black {:.0}% unfinished {:.0}%), {} positions, {:.0} evals/s, loss {:.3} (policy {:.3}, value {:.3}), {:.0}+{:.0} s{}{}",
            m.iteration,
            m.selfplay_games,
            m.mean_game_length,
            100.0 * m.white_win_rate,
            100.0 * m.black_win_rate,
            100.0 * m.unfinished_rate,
            m.positions,
            m.evaluations_per_s,
            m.total_loss,
            m.policy_loss,
            m.value_loss,
            m.selfplay_s,
            m.training_s,
            vs(&m.vs_previous),
            vs(&m.vs_baseline),
        );
    }
}
