//! `brandubh export <RUN_DIR | CHECKPOINT> --out models/NAME.agent [--sims N] [--algo A]
//! [--name NAME]`: a trained network as one self-contained agent file.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use brandubh_agent::{ExportOptions, export_checkpoint};
use brandubh_run::RunDir;
use brandubh_run::config::RunConfig;
use brandubh_search::{Algorithm, SearchSettings};

use crate::out;

/// Export a trained network as one agent file (weights, model shape, encoding version,
/// search settings, training record), loadable without the run directory.
///
/// From a run directory the latest checkpoint is exported; the search settings default to
/// the run's config.toml ([search] algorithm, simulations and constants). From a single
/// checkpoint they come from the config.toml of the run it lies in, if any, else Gumbel with
/// 64 simulations.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A run directory (its latest checkpoint) or a checkpoint: its stem
    /// (runs/x/checkpoints/iter-000012) or either of its files.
    #[arg(value_name = "RUN_DIR|CHECKPOINT")]
    source: PathBuf,
    /// The agent file to write, e.g. models/brandubh-v1.agent (its directory is created).
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Simulations per move the agent plays with, 1-1000000 (default: the run's).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    sims: Option<u32>,
    /// Search algorithm the agent plays with: gumbel or puct (default: the run's).
    #[arg(long, value_name = "gumbel|puct")]
    algo: Option<Algorithm>,
    /// The agent's name (default: the file name without .agent).
    #[arg(long)]
    name: Option<String>,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.out.extension().and_then(|e| e.to_str()) != Some("agent") {
        bail!(
            "--out {}: an agent file name must end in .agent",
            args.out.display()
        );
    }
    let name = match &args.name {
        Some(n) if n.trim().is_empty() || n.chars().any(char::is_control) => {
            bail!("--name {n:?}: a name must be non-empty and printable")
        }
        Some(n) => n.clone(),
        None => args
            .out
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
    };
    let (checkpoint, run_config) = resolve(&args.source)?;
    let mut search = match &run_config {
        Some(path) => {
            // Its errors start with the file's name.
            RunConfig::from_file(path)?.search
        }
        None => {
            eprintln!(
                "note: no run configuration beside {}; search settings default to gumbel, 64 simulations",
                checkpoint.display()
            );
            SearchSettings::default()
        }
    };
    if let Some(algo) = args.algo {
        search.algorithm = algo;
    }
    if let Some(n) = args.sims {
        search.simulations = n;
    }
    // The agent file's directory is created by the write itself (brandubh_fs::write_atomic).
    let agent = export_checkpoint(&checkpoint, &args.out, &ExportOptions { name, search })?;
    let size = std::fs::metadata(&args.out)
        .with_context(|| format!("{}", args.out.display()))?
        .len();
    let meta = agent.meta();
    let mut w = out::stdout();
    writeln!(w, "wrote {} ({size} bytes)", args.out.display())?;
    writeln!(w, "  agent   {}", meta.summary())?;
    writeln!(
        w,
        "  from    {} (step {}, written {})",
        checkpoint.display(),
        meta.training.steps,
        meta.training.trained_date
    )?;
    writeln!(
        w,
        "  play it with: brandubh play --agent {}",
        args.out.display()
    )?;
    out::flush(&mut w)?;
    Ok(ExitCode::SUCCESS)
}

/// The checkpoint to export and the run configuration that goes with it, if any.
fn resolve(source: &Path) -> anyhow::Result<(PathBuf, Option<PathBuf>)> {
    let config_of = |run: RunDir| Some(run.config()).filter(|c| c.is_file());
    if source.is_dir() {
        let latest = brandubh_eval::latest_checkpoint(source)?;
        return Ok((latest.stem, config_of(RunDir::new(source))));
    }
    // Fail on a missing checkpoint before anything else is said about it.
    brandubh_net::checkpoint::read_meta(source)?;
    Ok((
        source.to_path_buf(),
        RunDir::of_checkpoint(source).and_then(config_of),
    ))
}
