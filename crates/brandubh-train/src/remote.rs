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
    /// The fencing counter of the learner's lease when it wrote the pointer (0 in
    /// pointers written before leases).
    #[serde(default)]
    pub fencing: u64,
    /// The SHA-256 of each of `files`, in order: an actor checks its cached copies and
    /// its downloads against them (empty in pointers written before).
    #[serde(default)]
    pub hashes: Vec<String>,
}

/// `run.json`: the run's identity, written once (create-only) by the learner that starts
/// the run. Caches remember it, so that a store that no longer holds their run is noticed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunIdentity {
    /// 32 random hex digits.
    pub run_id: String,
    /// The run's name (`config.toml`'s `name`).
    pub name: String,
    /// When it was created, milliseconds since the Unix epoch.
    pub created_unix_ms: u64,
}

impl RunIdentity {
    /// A new identity for the run `name`.
    #[must_use]
    pub fn new(name: &str) -> RunIdentity {
        RunIdentity {
            run_id: format!("{:016x}{:016x}", random_u64(), random_u64()),
            name: name.to_owned(),
            created_unix_ms: now_unix_ms(),
        }
    }
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
    /// Records written before content hashes: the keys of chunks consumed but not
    /// trained on (now `stale`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dropped: Vec<String>,
    /// Chunks consumed but not trained on: their network was more than the learner's
    /// `max_network_age` older than the one being trained.
    #[serde(default)]
    pub stale: Vec<ConsumedChunk>,
    /// Valid chunks left in the store for later iterations because this one had its
    /// `max_games` (counted when the record was written).
    #[serde(default)]
    pub waiting: u64,
    /// The fencing counter of the lease under which it was written.
    #[serde(default)]
    pub fencing: u64,
}

impl ConsumedRecord {
    /// Every chunk the record consumed: trained on, then stale.
    pub fn consumed(&self) -> impl Iterator<Item = &ConsumedChunk> {
        self.chunks.iter().chain(&self.stale)
    }
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
    /// The SHA-256 of its bytes ([`brandubh_store::content_hash`]): a chunk with the
    /// hash of one consumed before is refused. Empty in records written before.
    #[serde(default)]
    pub sha256: String,
}

impl ConsumedChunk {
    /// The record of `chunk`, stored at `key` with content hash `sha256`, as the
    /// iteration's chunk `seq`.
    #[must_use]
    pub fn of(
        key: &str,
        seq: u32,
        chunk: &brandubh_run::replay::Chunk,
        sha256: &str,
    ) -> ConsumedChunk {
        ConsumedChunk {
            key: key.to_owned(),
            seq,
            games: chunk.games.len() as u64,
            positions: chunk.position_count() as u64,
            tagged: chunk.info.iteration,
            sha256: sha256.to_owned(),
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

/// The largest JSON object of the run read from the store (records, pointer, lease,
/// statuses): 16 MiB, a record of a quarter of a million chunks.
pub const MAX_JSON_BYTES: u64 = 16 << 20;

/// The largest actor chunk object a learner reads: a chunk of 64 games of 1,000 plies
/// with every legal move in each policy target is under 12 MiB; anything larger is
/// quarantined from its listed size, before a byte of it is read.
pub const MAX_CHUNK_BYTES: u64 = 16 << 20;

/// A JSON object of the store, `None` if absent; a damaged one is an error naming it.
pub fn get_json<T: serde::de::DeserializeOwned>(
    store: &Store,
    key: &str,
) -> Result<Option<T>, RunError> {
    let Some(bytes) = store.get_bounded(key, MAX_JSON_BYTES)? else {
        return Ok(None);
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| RunError::Remote(format!("{}: damaged: {e}", store.location().name_of(key))))
}

/// `value` as the JSON bytes of the object `key`.
pub(crate) fn json_bytes<T: Serialize>(
    store: &Store,
    key: &str,
    value: &T,
) -> Result<Vec<u8>, RunError> {
    serde_json::to_vec_pretty(value)
        .map_err(|e| RunError::Remote(format!("{}: {e}", store.location().name_of(key))))
}

/// Writes `value` as JSON at `key`.
pub(crate) fn put_json<T: Serialize>(store: &Store, key: &str, value: &T) -> Result<(), RunError> {
    store.put(key, &json_bytes(store, key, value)?)?;
    Ok(())
}

/// The run's identity in the store, if it has one.
pub fn stored_identity(store: &Store) -> Result<Option<RunIdentity>, RunError> {
    get_json(store, RunLayout::RUN)
}

/// The run identity a cache was filled from (`DIR/run.json`), if it has one.
pub(crate) fn cached_identity(dir: &RunDir) -> Result<Option<RunIdentity>, RunError> {
    let path = dir.root().join(RunLayout::RUN);
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| RunError::Remote(format!("{}: damaged: {e}", path.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(cause) => Err(RunError::RunDir(brandubh_run::RunDirError::Io {
            path,
            cause,
        })),
    }
}

/// Remembers in the cache `dir` the run it is filled from.
pub(crate) fn remember_identity(dir: &RunDir, identity: &RunIdentity) -> Result<(), RunError> {
    let bytes = serde_json::to_vec_pretty(identity)
        .map_err(|e| RunError::Remote(format!("{}: {e}", dir.root().display())))?;
    brandubh_fs::write_atomic(&dir.root().join(RunLayout::RUN), &bytes)?;
    Ok(())
}

/// 64 random bits: the operating system's hash keys (`RandomState`), the time and the
/// process id, mixed.
#[must_use]
pub fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(now_unix_ms());
    h.write_u32(std::process::id());
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    h.write_u32(nanos);
    brandubh_fs::mix64(h.finish())
}

/// This machine's host name (letters, digits and `-` kept, at most 40), or `""`.
#[must_use]
pub fn host_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_default();
    host.trim()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .take(40)
        .collect()
}

/// Writes the time into `DIR/heartbeat`: a liveness probe checks that it is recent.
pub(crate) fn heartbeat(dir: &std::path::Path) {
    let path = dir.join("heartbeat");
    let written = std::fs::create_dir_all(dir)
        .map_err(|e| e.to_string())
        .and_then(|()| {
            brandubh_fs::write_atomic(&path, now_unix_ms().to_string().as_bytes())
                .map_err(|e| e.to_string())
        });
    if let Err(e) = written {
        tracing::warn!("cannot write the heartbeat {}: {e}", path.display());
    }
}

/// A UTC time of day for messages: `2026-12-01T10:00:00Z`.
#[must_use]
pub fn utc(unix_ms: u64) -> String {
    let secs = i64::try_from(unix_ms / 1000).unwrap_or(i64::MAX);
    time::OffsetDateTime::from_unix_timestamp(secs)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_else(|| format!("{unix_ms} ms after the Unix epoch"))
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
        None if !pointer.hashes.is_empty() && pointer.hashes.len() != pointer.files.len() => {
            Err(format!(
                "names {} files but {} hashes",
                pointer.files.len(),
                pointer.hashes.len()
            ))
        }
        None => Ok(&pointer.files),
    }
}

/// Copies `keys` from the store into the cache `dir` (same relative names), each file
/// whole; a missing object is an error naming it.
pub(crate) fn download(store: &Store, dir: &RunDir, keys: &[String]) -> Result<(), RunError> {
    for key in keys {
        download_checked(store, dir, key, None)?;
    }
    Ok(())
}

/// Copies `key` into the cache `dir`, checked against `sha256` when given.
fn download_checked(
    store: &Store,
    dir: &RunDir,
    key: &str,
    sha256: Option<&str>,
) -> Result<(), RunError> {
    let name = store.location().name_of(key);
    let bytes = store
        .get(key)?
        .ok_or_else(|| RunError::Remote(format!("{name}: missing")))?;
    if let Some(expected) = sha256
        && brandubh_store::content_hash(&bytes) != expected
    {
        return Err(RunError::Remote(format!(
            "{name}: its SHA-256 is not the one the pointer names"
        )));
    }
    brandubh_fs::write_atomic(&dir.root().join(key), &bytes)?;
    Ok(())
}

/// Whether the cached copy of `key` in `dir` has the SHA-256 `expected`.
fn cached_matches(dir: &RunDir, key: &str, expected: &str) -> bool {
    std::fs::read(dir.root().join(key))
        .is_ok_and(|bytes| brandubh_store::content_hash(&bytes) == expected)
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
    // With the pointer's hashes, a cached copy is used only if it has the hash (a cache of
    // another run, or a damaged file, is downloaded again); without them, if it exists.
    let hashes: Vec<Option<&str>> = (0..files.len())
        .map(|i| pointer.hashes.get(i).map(String::as_str))
        .collect();
    let fetch = || -> Result<(), RunError> {
        for (key, hash) in files.iter().zip(&hashes) {
            let fresh = match hash {
                Some(h) => cached_matches(dir, key, h),
                None => dir.root().join(key).exists(),
            };
            if !fresh {
                download_checked(store, dir, key, *hash)?;
            }
        }
        Ok(())
    };
    fetch().map_err(|e| {
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
#[must_use]
pub fn now_unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}
