//! `brandubh ladder RUN [--baselines random,greedy,...] [--matches N] ...`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use brandubh_eval::ladder::{LadderConfig, ladder};
use brandubh_eval::spec::parse_list;
use brandubh_search::Algorithm;

use crate::out;

/// Rate every checkpoint of a run and some baselines on one Elo scale (random = 0).
///
/// Plays two-game matches between the baselines, between every checkpoint and every
/// baseline, and between each checkpoint and the checkpoints just before it; fits
/// Bradley-Terry ratings with 95% intervals over all games; prints a table and writes
/// RUN/elo.png and RUN/ladder/ratings.json. Games are stored in RUN/ladder/games.jsonl and
/// reused: a later call plays only what is missing.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run directory (its checkpoints are in RUN/checkpoints/).
    run: PathBuf,
    /// Baseline agent specs, comma-separated; random is always included.
    #[arg(long, default_value = "random,greedy", value_name = "SPECS")]
    baselines: String,
    /// Matches per pairing (1-10000).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    matches: u32,
    /// How many earlier checkpoints each checkpoint meets (0-100).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(0..=100))]
    neighbours: u32,
    /// Simulations per move of the checkpoints (1-1000000).
    #[arg(long, default_value_t = brandubh_eval::spec::DEFAULT_NET_SIMULATIONS,
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    sims: u32,
    /// Search algorithm of the checkpoints, gumbel or puct (default: the run's; the other
    /// search constants are always the run's).
    #[arg(long, value_name = "gumbel|puct")]
    algo: Option<Algorithm>,
    /// Worker threads; 0 uses every core.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u16).range(0..=1024))]
    threads: u16,
    /// Seed of the pairings' openings and players (keep it to reuse stored games).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// A game still running after this many plies stops unfinished (1-10000).
    #[arg(long, default_value_t = brandubh_eval::runner::DEFAULT_PLY_CAP,
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    ply_cap: u32,
    /// Do not draw RUN/elo.png.
    #[arg(long)]
    no_plot: bool,
    /// Print the report as one JSON object instead of the table.
    #[arg(long)]
    json: bool,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let baselines = parse_list(&args.baselines).context("--baselines")?;
    let config = LadderConfig {
        baselines,
        matches: args.matches,
        neighbours: args.neighbours,
        simulations: args.sims,
        algorithm: args.algo,
        threads: usize::from(args.threads),
        seed: args.seed,
        ply_cap: args.ply_cap,
        plot: !args.no_plot,
    };
    let bar = out::matches_bar(0)?;
    let report = ladder(&args.run, &config, &|p| {
        bar.set_length(u64::from(p.total));
        bar.set_position(u64::from(p.done));
        bar.set_message(p.pairing.clone());
    });
    bar.finish_and_clear();
    out::print(args.json, &report?, |w, report| {
        write!(w, "{}", report.table())?;
        writeln!(
            w,
            "{} matches played, {} reused from {}",
            report.matches_played,
            report.matches_reused,
            report.games_file.display()
        )?;
        if let Some(plot) = &report.plot_file {
            writeln!(w, "plot: {}", plot.display())?;
        }
        Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}
