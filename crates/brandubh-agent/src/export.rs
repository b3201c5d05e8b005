//! From a training checkpoint to an agent file: [`export_checkpoint`].

use std::path::Path;

use brandubh_net::checkpoint::{self, CheckpointMeta};

use crate::agent::Agent;
use crate::error::AgentError;
use brandubh_search::SearchSettings;

use crate::meta::{AgentMeta, SourceInfo, TrainingInfo, utc_date};

/// What an export records besides the checkpoint's own metadata.
#[derive(Clone, Debug, PartialEq)]
pub struct ExportOptions {
    /// The agent's name.
    pub name: String,
    /// The search it plays best with.
    pub search: SearchSettings,
}

/// Exports checkpoint `checkpoint` (a stem or either of its files, as
/// `brandubh_net::checkpoint::read_weights` takes them) as the agent file `out`, written
/// atomically. The training record comes from the checkpoint's metadata: its step and
/// date, and the extras a training run writes (`iteration`, `games`, `positions`,
/// `elapsed_s`, `config_name`). Returns the agent as loaded back from the written file.
pub fn export_checkpoint(
    checkpoint: impl AsRef<Path>,
    out: impl AsRef<Path>,
    options: &ExportOptions,
) -> Result<Agent, AgentError> {
    let checkpoint = checkpoint.as_ref();
    let (weights, ckpt) = checkpoint::read_weights(checkpoint, None)?;
    let source = SourceInfo {
        checkpoint: checkpoint.display().to_string(),
        weights_fnv1a64: ckpt.weights_fnv1a64.clone(),
        burn_version: ckpt.burn_version.clone(),
    };
    write_agent(weights, &ckpt, source, out.as_ref(), options)
}

/// Exports the element-wise mean of the weights of `checkpoints` (stochastic weight
/// averaging: [`checkpoint::average_weights`]), which must all be of one model config, as
/// the agent file `out`, written atomically. The training record is the last checkpoint's
/// (give them oldest first); the source records the last checkpoint, how many were
/// averaged and the FNV-1a 64 hash of the mean weights. One checkpoint exports as
/// [`export_checkpoint`] does.
pub fn export_average<P: AsRef<Path>>(
    checkpoints: &[P],
    out: impl AsRef<Path>,
    options: &ExportOptions,
) -> Result<Agent, AgentError> {
    let Some(last) = checkpoints.last().map(AsRef::as_ref) else {
        return Err(AgentError::Average("none given".to_owned()));
    };
    if checkpoints.len() == 1 {
        return export_checkpoint(last, out, options);
    }
    let ckpt = checkpoint::read_meta(last)?;
    let mut images = Vec::with_capacity(checkpoints.len());
    for path in checkpoints {
        images.push(checkpoint::read_weights(path.as_ref(), Some(&ckpt.config))?.0);
    }
    let count = images.len();
    let first = checkpoints[0].as_ref().display();
    let weights = checkpoint::average_weights(&ckpt.config, images)
        .map_err(|e| AgentError::Average(format!("{first} to {}: {e}", last.display())))?;
    let source = SourceInfo {
        checkpoint: format!(
            "{} (the mean of {count} checkpoints, from {first})",
            last.display()
        ),
        weights_fnv1a64: format!("{:016x}", brandubh_fs::fnv1a64(&weights)),
        burn_version: ckpt.burn_version.clone(),
    };
    write_agent(weights, &ckpt, source, out.as_ref(), options)
}

/// Writes the agent file `out` of `weights` with the training record of `ckpt`, and reads
/// it back.
fn write_agent(
    weights: Vec<u8>,
    ckpt: &CheckpointMeta,
    source: SourceInfo,
    out: &Path,
    options: &ExportOptions,
) -> Result<Agent, AgentError> {
    let meta = AgentMeta::new(
        options.name.clone(),
        options.search.clone(),
        training_info(ckpt),
        source,
    );
    let agent = Agent::from_weights(weights, ckpt.config.clone(), meta, out)?;
    agent.save(out)?;
    // What counts is what was written: read it back.
    Agent::load(out)
}

/// The training record of a checkpoint.
#[must_use]
pub fn training_info(meta: &CheckpointMeta) -> TrainingInfo {
    let u64_of = |key: &str| meta.extra.get(key).and_then(serde_json::Value::as_u64);
    TrainingInfo {
        config_name: meta
            .extra
            .get("config_name")
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned),
        iteration: u64_of("iteration").and_then(|i| u32::try_from(i).ok()),
        games: u64_of("games"),
        positions: u64_of("positions"),
        steps: meta.step,
        wall_time_s: meta
            .extra
            .get("elapsed_s")
            .and_then(serde_json::Value::as_f64),
        trained_unix_s: meta.created_unix_s,
        trained_date: utc_date(meta.created_unix_s),
    }
}
