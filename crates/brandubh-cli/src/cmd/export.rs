//! `brandubh export <RUN_DIR | CHECKPOINT> --out models/NAME.agent [--sims N] [--algo A]
//! [--name NAME]`: a trained network as one self-contained agent file.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use brandubh_agent::{ExportOptions, SearchAlgo, SearchSettings, export_checkpoint};
use brandubh_run::config::{SearchAlgorithm, TrainConfig};

use crate::out;

/// The run configuration inside a run directory (as `brandubh train` writes it).
const RUN_CONFIG: &str = "config.toml";

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
    /// Search algorithm the agent plays with (default: the run's).
    #[arg(long, value_enum)]
    algo: Option<AlgoArg>,
    /// The agent's name (default: the file name without .agent).
    #[arg(long)]
    name: Option<String>,
}

/// A search algorithm on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum AlgoArg {
    /// Gumbel AlphaZero.
    Gumbel,
    /// AlphaZero's PUCT.
    Puct,
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
            settings_of(&TrainConfig::from_file(path)?)
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
        search.algorithm = match algo {
            AlgoArg::Gumbel => SearchAlgo::Gumbel,
            AlgoArg::Puct => SearchAlgo::Puct,
        };
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
    if source.is_dir() {
        let latest = brandubh_eval::latest_checkpoint(source)?;
        let config = source.join(RUN_CONFIG);
        return Ok((latest.stem, config.is_file().then_some(config)));
    }
    // Fail on a missing checkpoint before anything else is said about it.
    brandubh_net::checkpoint::read_meta(source)?;
    // A checkpoint of a run lies in RUN/checkpoints/.
    let (weights, _) = brandubh_net::checkpoint::paths(source);
    let config = weights
        .parent()
        .filter(|d| d.file_name().is_some_and(|n| n == "checkpoints"))
        .and_then(Path::parent)
        .map(|run| run.join(RUN_CONFIG))
        .filter(|c| c.is_file());
    Ok((source.to_path_buf(), config))
}

/// The search a run trained with.
fn settings_of(config: &TrainConfig) -> SearchSettings {
    let s = &config.search;
    SearchSettings {
        algorithm: match s.algorithm {
            SearchAlgorithm::Gumbel => SearchAlgo::Gumbel,
            SearchAlgorithm::Puct => SearchAlgo::Puct,
        },
        simulations: s.simulations,
        c_puct: s.c_puct as f32,
        fpu_reduction: s.fpu_reduction as f32,
        gumbel_candidates: s.gumbel_candidates,
        gumbel_c_visit: s.gumbel_c_visit as f32,
        gumbel_c_scale: s.gumbel_c_scale as f32,
    }
}
