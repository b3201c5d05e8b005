//! `brandubh export <RUN_DIR | CHECKPOINT | AGENT> --out models/NAME.agent [--sims N] [--algo A] [--prove P]
//! [--verify P] [--name NAME] [--average N]`: a trained network (or the mean of a run's last
//! N) as one self-contained agent file, or an agent file again with other search settings;
//! `brandubh export <AGENT | RUN_DIR | CHECKPOINT> --format onnx --out NAME.onnx`: its
//! network as a standard ONNX model.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use brandubh_agent::{ExportOptions, export_average};
use brandubh_net::{checkpoint, onnx};
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
///
/// From an agent file (*.agent) the same network and training record are written again,
/// with the search settings changed by --sims, --algo, --prove and --verify.
///
/// With --average N the agent's weights are the element-wise mean of N checkpoints of the
/// run: the last N, or the N that end at the checkpoint given (stochastic weight averaging;
/// batch-norm statistics are averaged too).
///
/// With --format onnx the network alone (batch norm folded) is written as an ONNX model
/// (opset 17; input "planes" [batch, P, 7, 7] with P the network's input planes, 9, 12, 16
/// or 19; outputs "policy_logits" [batch, 1176] and "value" [batch, 1]); the source may then
/// also be an agent file.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A run directory (its latest checkpoint), a checkpoint (its stem,
    /// runs/x/checkpoints/iter-000012, or either of its files) or an agent file (*.agent).
    #[arg(value_name = "RUN_DIR|CHECKPOINT|AGENT")]
    source: PathBuf,
    /// The file to write, e.g. models/brandubh-v1.agent, or NAME.onnx with --format onnx
    /// (its directory is created).
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// What to write: an agent file, or the network as an ONNX model.
    #[arg(long, value_enum, default_value_t = ExportFormat::Agent)]
    format: ExportFormat,
    /// Simulations per move the agent plays with, 1-1000000 (default: the run's).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    sims: Option<u32>,
    /// Search algorithm the agent plays with: gumbel or puct (default: the run's).
    #[arg(long, value_name = "gumbel|puct")]
    algo: Option<Algorithm>,
    #[command(flatten)]
    exact: super::ExactChecks,
    /// The agent's name (default: the file name without .agent).
    #[arg(long)]
    name: Option<String>,
    /// Average the weights of this many checkpoints of the run, the source's and those
    /// before it, 1-1000 (agent files only).
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    average: u32,
}

/// What `export` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// A brandubh agent file (network, search settings, training record).
    Agent,
    /// The network as an ONNX model (opset 17), for onnxruntime and other runtimes.
    Onnx,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.format == ExportFormat::Onnx {
        if args.average > 1 {
            bail!("--average: only an agent file can be exported from several checkpoints");
        }
        return run_onnx(&args);
    }
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
    if is_agent_file(&args.source) {
        return reexport(&args, name);
    }
    let (checkpoint, run_config) = resolve(&args.source)?;
    let checkpoints = averaged(&args.source, &checkpoint, args.average)?;
    let mut search = match &run_config {
        Some(path) => {
            // Its errors start with the file's name.
            RunConfig::from_run_copy(path)?.search
        }
        None => {
            eprintln!(
                "note: no run configuration beside {}; search settings default to gumbel, 64 simulations",
                checkpoint.display()
            );
            SearchSettings::default()
        }
    };
    apply_search_flags(&args, &mut search);
    // The agent file's directory is created by the write itself (brandubh_fs::write_atomic).
    let agent = export_average(&checkpoints, &args.out, &ExportOptions { name, search })?;
    let size = std::fs::metadata(&args.out)
        .with_context(|| format!("{}", args.out.display()))?
        .len();
    let meta = agent.meta();
    let mut lines = vec![format!(
        "  from    {} (step {}, written {})",
        checkpoint.display(),
        meta.training.steps,
        meta.training.trained_date
    )];
    if let [first, .., _] = &checkpoints[..] {
        lines.push(format!(
            "  weights the mean of {} checkpoints, from {}",
            checkpoints.len(),
            first.display()
        ));
    }
    print_written(&args.out, size, &meta.summary(), &lines)
}

/// What export prints for an agent file it wrote: the file and size, the agent's summary,
/// `origin` (lines saying where it came from) and how to play it.
fn print_written(
    path: &Path,
    size: u64,
    summary: &str,
    origin: &[String],
) -> anyhow::Result<ExitCode> {
    let mut w = out::stdout();
    writeln!(w, "wrote {} ({size} bytes)", path.display())?;
    writeln!(w, "  agent   {summary}")?;
    for line in origin {
        writeln!(w, "{line}")?;
    }
    writeln!(
        w,
        "  play it with: brandubh play --agent {}",
        path.display()
    )?;
    out::flush(&mut w)?;
    Ok(ExitCode::SUCCESS)
}

/// Whether `source` names an agent file (by its extension).
fn is_agent_file(source: &Path) -> bool {
    source.extension().and_then(|e| e.to_str()) == Some("agent")
}

/// The search flags (--algo, --sims, --prove, --verify) applied to `search`.
fn apply_search_flags(args: &Args, search: &mut SearchSettings) {
    if let Some(algo) = args.algo {
        search.algorithm = algo;
    }
    if let Some(n) = args.sims {
        search.simulations = n;
    }
    args.exact.apply(search);
}

/// `export AGENT --out NEW.agent`: the agent file's network and training record written
/// again (atomically) under `name`, with the search flags applied to its settings.
fn reexport(args: &Args, name: String) -> anyhow::Result<ExitCode> {
    if args.average > 1 {
        bail!("--average: an agent file holds one network; average a run's checkpoints instead");
    }
    let agent = brandubh_agent::Agent::load(&args.source)?;
    let mut meta = agent.meta().clone();
    meta.name = name;
    apply_search_flags(args, &mut meta.search);
    meta.search
        .validate()
        .map_err(|e| anyhow::anyhow!("{}: {e}", args.out.display()))?;
    let model = meta.model.clone();
    let agent =
        brandubh_agent::Agent::from_weights(agent.weights().to_vec(), model, meta, &args.out)?;
    let size = agent.save(&args.out)?;
    let origin = format!(
        "  from    {} (network {}, search settings changed)",
        args.source.display(),
        agent.meta().weights_crc32
    );
    print_written(&args.out, size, &agent.meta().summary(), &[origin])
}

/// `export --format onnx`: the network of an agent file, a run's latest checkpoint or a
/// checkpoint, written atomically as an ONNX model.
fn run_onnx(args: &Args) -> anyhow::Result<ExitCode> {
    if args.out.extension().and_then(|e| e.to_str()) != Some("onnx") {
        bail!(
            "--out {}: an ONNX file name must end in .onnx",
            args.out.display()
        );
    }
    if args.sims.is_some()
        || args.algo.is_some()
        || args.exact.prove.is_some()
        || args.exact.verify.is_some()
        || args.name.is_some()
    {
        bail!(
            "--sims, --algo, --prove, --verify and --name describe an agent file; an ONNX model holds only the network"
        );
    }
    let (folded, from) = if is_agent_file(&args.source) {
        let agent = brandubh_agent::Agent::load(&args.source)?;
        let folded = checkpoint::folded_from_bytes(&agent.meta().model, agent.weights().to_vec())
            .map_err(|reason| anyhow::anyhow!("{}: {reason}", args.source.display()))?;
        (folded, args.source.clone())
    } else {
        let (stem, _) = resolve(&args.source)?;
        (checkpoint::load_folded(&stem, None)?.0, stem)
    };
    let bytes = brandubh_net::onnx::to_onnx(&folded);
    brandubh_fs::write_atomic(&args.out, &bytes)?;
    let c = &folded.config;
    let mut w = out::stdout();
    writeln!(w, "wrote {} ({} bytes)", args.out.display(), bytes.len())?;
    writeln!(
        w,
        "  network C{}xN{} from {}, ONNX opset {}: input \"{}\" [batch, {}, 7, 7], outputs \"{}\" [batch, 1176] and \"{}\" [batch, 1]",
        c.channels,
        c.blocks,
        from.display(),
        onnx::OPSET,
        onnx::INPUT_NAME,
        c.planes(),
        onnx::POLICY_OUTPUT,
        onnx::VALUE_OUTPUT
    )?;
    out::flush(&mut w)?;
    Ok(ExitCode::SUCCESS)
}

/// The `count` checkpoints of the run of `source` that end at `checkpoint` (its latest, or
/// the one given), oldest first; `checkpoint` alone when `count` is 1.
fn averaged(source: &Path, checkpoint: &Path, count: u32) -> anyhow::Result<Vec<PathBuf>> {
    if count == 1 {
        return Ok(vec![checkpoint.to_path_buf()]);
    }
    let run = if source.is_dir() {
        source.to_path_buf()
    } else {
        let Some(run) = RunDir::of_checkpoint(checkpoint) else {
            bail!(
                "--average {count}: {} is not in a run's checkpoints directory",
                checkpoint.display()
            );
        };
        run.root().to_path_buf()
    };
    let all = brandubh_eval::list_checkpoints(&run)?;
    let stem = checkpoint::paths(checkpoint).0.with_extension("");
    let Some(end) = all.iter().position(|c| c.stem == stem) else {
        bail!(
            "--average {count}: {} is not among the complete checkpoints of {}",
            checkpoint.display(),
            run.display()
        );
    };
    let count = count as usize;
    if end + 1 < count {
        bail!(
            "--average {count}: {} has only {} checkpoints up to {}",
            run.display(),
            end + 1,
            all[end].name
        );
    }
    Ok(all[end + 1 - count..=end]
        .iter()
        .map(|c| c.stem.clone())
        .collect())
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
