//! What the roles of a store run share: the pointer to the newest network, the run's
//! configuration in the store, checkpoints moved between the store and a local cache, and
//! the learner's records of consumed chunks. Object names come from [`RunLayout`].

use std::path::{Path, PathBuf};
use std::time::Duration;

use brandubh_net::checkpoint;
use brandubh_run::config::RunConfig;
use brandubh_run::{RunDir, RunLayout, RunState};
use brandubh_store::Store;
use serde::{Deserialize, Serialize};

use crate::run::RunError;

/// `latest`: the network actors play, written after everything else of an iteration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pointer {
    /// The learner's last complete iteration.
    pub iteration: u32,
    /// The iteration of the network to play (older than `iteration` when gating kept it).
    pub network: u32,
    /// Its files (keys), all present in the store before the pointer is written.
    pub files: Vec<String>,
    /// The run has all its iterations: actors stop.
    pub finished: bool,
}

/// `learner/iter-NNNNNN.json`: the chunks an iteration trained on, written before its
/// training starts; a restarted learner redoes the iteration with exactly these.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConsumedRecord {
    /// The iteration.
    pub iteration: u32,
    /// The chunks it trained on, in the order of their local sequence numbers.
    pub chunks: Vec<ConsumedChunk>,
    /// Chunks consumed but not trained on: their network was older than the run allows.
    pub dropped: Vec<String>,
}

/// One consumed chunk.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConsumedChunk {
    /// Its key in the store.
    pub key: String,
    /// Its sequence number among the iteration's chunks (`RunLayout::chunk(iteration, seq)`).
    pub seq: u32,
    /// Its games.
    pub games: u64,
    /// Its recorded positions.
    pub positions: u64,
    /// The iteration the chunk is tagged with (its network's + 1).
    pub tagged: u32,
}

impl ConsumedChunk {
    /// The record of `chunk`, stored at `key`, as the iteration's chunk `seq`.
    #[must_use]
    pub fn of(key: &str, seq: u32, chunk: &brandubh_run::replay::Chunk) -> ConsumedChunk {
        ConsumedChunk {
            key: key.to_owned(),
            seq,
            games: chunk.games.len() as u64,
            positions: chunk.position_count() as u64,
            tagged: chunk.info.iteration,
        }
    }
}

/// `actors/ACTOR.json`: what an actor has uploaded, rewritten after each chunk.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActorStatus {
    /// The actor's id.
    pub actor: String,
    /// Chunks uploaded by this actor id.
    pub chunks: u64,
    /// Games in them.
    pub games: u64,
    /// Positions in them.
    pub positions: u64,
    /// The network it plays.
    pub network: u32,
    /// When it last uploaded, milliseconds since the Unix epoch.
    pub last_upload_unix_ms: u64,
    /// Its games per second since it started.
    pub games_per_s: f64,
}

/// A JSON object of the store, `None` if absent; a damaged one is an error naming it.
pub(crate) fn get_json<T: serde::de::DeserializeOwned>(
    store: &Store,
    key: &str,
) -> Result<Option<T>, RunError> {
    let Some(bytes) = store.get(key)? else {
        return Ok(None);
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| RunError::Remote(format!("{}: damaged: {e}", store.location().name_of(key))))
}

/// Writes `value` as JSON at `key`.
pub(crate) fn put_json<T: Serialize>(store: &Store, key: &str, value: &T) -> Result<(), RunError> {
    let bytes = serde_json::to_vec_pretty(value)
        .map_err(|e| RunError::Remote(format!("{}: {e}", store.location().name_of(key))))?;
    store.put(key, &bytes)?;
    Ok(())
}

/// The run's configuration in the store, if it has one.
pub fn stored_config(store: &Store) -> Result<Option<RunConfig>, RunError> {
    let Some(bytes) = store.get(RunLayout::CONFIG)? else {
        return Ok(None);
    };
    let name = store.location().name_of(RunLayout::CONFIG);
    let text = String::from_utf8(bytes)
        .map_err(|_| RunError::Remote(format!("{name}: not UTF-8 text")))?;
    Ok(Some(RunConfig::from_run_copy_str(&text, &name)?))
}

/// Waits until `read` finds something, polling every `poll`, saying once what it waits for.
pub(crate) fn wait_for<T>(
    what: &str,
    poll: Duration,
    mut read: impl FnMut() -> Result<Option<T>, RunError>,
) -> Result<T, RunError> {
    let mut said = false;
    loop {
        if let Some(found) = read()? {
            return Ok(found);
        }
        if !said {
            tracing::info!("waiting for {what}");
            said = true;
        }
        std::thread::sleep(poll);
    }
}

/// The keys of the files of checkpoint `iteration` for inference (weights and metadata).
pub(crate) fn network_files(iteration: u32) -> Vec<String> {
    let (weights, meta) = checkpoint::paths(RunLayout::checkpoint(iteration));
    [meta, weights]
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect()
}

/// The pointer's network files, checked to be the files of its network (the pointer is
/// read from shared storage: it must not name anything else).
pub(crate) fn checked_files(pointer: &Pointer) -> Result<&[String], String> {
    let stem = format!("{}.", RunLayout::checkpoint(pointer.network));
    match pointer
        .files
        .iter()
        .find(|f| !f.starts_with(&stem) || f[stem.len()..].contains('/'))
    {
        Some(bad) => Err(format!("names {bad}, not a file of {stem}*")),
        None if pointer.files.is_empty() => Err("names no files".into()),
        None => Ok(&pointer.files),
    }
}

/// Copies `keys` from the store into the cache `dir` (same relative names), each file
/// whole; a missing object is an error naming it.
pub(crate) fn download(store: &Store, dir: &RunDir, keys: &[String]) -> Result<(), RunError> {
    for key in keys {
        let bytes = store.get(key)?.ok_or_else(|| {
            RunError::Remote(format!("{}: missing", store.location().name_of(key)))
        })?;
        brandubh_fs::write_atomic(&dir.root().join(key), &bytes)?;
    }
    Ok(())
}

/// The network of `pointer` in the cache `dir`, downloaded if missing: the local stem.
pub(crate) fn fetch_network(
    store: &Store,
    dir: &RunDir,
    pointer: &Pointer,
) -> Result<PathBuf, RunError> {
    let files = checked_files(pointer).map_err(|e| {
        RunError::Remote(format!(
            "{}: {e}",
            store.location().name_of(RunLayout::LATEST)
        ))
    })?;
    let missing: Vec<String> = files
        .iter()
        .filter(|k| !dir.root().join(k).exists())
        .cloned()
        .collect();
    download(store, dir, &missing).map_err(|e| {
        RunError::Remote(format!(
            "{} names network {}, which cannot be fetched: {e}",
            store.location().name_of(RunLayout::LATEST),
            RunLayout::checkpoint(pointer.network)
        ))
    })?;
    let stem = dir.checkpoint(pointer.network);
    checkpoint::read_meta(&stem)?;
    Ok(stem)
}

/// The iteration of a state's self-play checkpoint (`checkpoints/iter-NNNNNN`).
pub(crate) fn selfplay_network(state: &RunState) -> Result<u32, RunError> {
    Path::new(&state.selfplay_checkpoint)
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_prefix(brandubh_run::layout::CHECKPOINT_PREFIX))
        .and_then(|d| d.parse().ok())
        .ok_or_else(|| {
            RunError::Remote(format!(
                "state.json: bad self-play checkpoint {:?}",
                state.selfplay_checkpoint
            ))
        })
}

/// Milliseconds since the Unix epoch.
pub(crate) fn now_unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}
