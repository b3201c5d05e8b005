//! `brandubh train --role learner`: the training loop of [`crate::run`] on a local cache,
//! with the games of each iteration taken from the actors' chunks in the store instead of
//! self-play, and everything an iteration writes published to the store, the `latest`
//! pointer last.
//!
//! Before anything else the learner takes the run's lease ([`crate::lease`]): a second
//! learner refuses, and a learner that lost its lease stops before its next write. It then
//! checks the run's identity (`run.json`, written once when the run starts) against the one
//! its cache was filled from: a store that no longer holds that run is an error, never a
//! silent new run.
//!
//! Iteration N: list `chunks/`, oldest first; quarantine (move to `quarantine/` with a
//! reason, one line each) every object that is not a chunk key actors write, is larger than
//! a chunk may be (from its listed size, before any read), or whose content hash was
//! consumed before (a copy); check every other new chunk (framing, checksum, replay of every
//! move through the rules, run name, network tag) and quarantine a bad one; take at most
//! `max_games` games, oldest first, leaving the rest waiting, and consume without training
//! those whose network is more than `max_network_age` older. Once the new games reach
//! `games_per_iteration`, write `learner/iter-N.json` (create-only: the chunks N trains on,
//! with their hashes) and put them into the cache as `chunks/chunk-N-SSSSSS.brz` → train
//! → checkpoint → evaluation → metrics → state → upload of checkpoint, metrics, plot and
//! state → `latest` (compare-and-swap; never to an older iteration). A restarted learner
//! restores the cache from the store and redoes iteration N with exactly the chunks of its
//! record, so no chunk is lost or counted twice. The cache keeps only the chunks the
//! replay window can reach (`training.window_max_positions`) and the checkpoints of the
//! state and of the pointer: its size is bounded by the configuration, not the run's age.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use brandubh_run::config::RunConfig;
use brandubh_run::replay::{self, Chunk};
use brandubh_run::{RunDir, RunLayout, RunState};
use brandubh_store::{Store, StoreError, content_hash};
use serde::{Deserialize, Serialize};

use crate::lease::{self, KeepEnd, Lease};
use crate::remote::{
    self, ConsumedChunk, ConsumedRecord, MAX_CHUNK_BYTES, MAX_JSON_BYTES, Pointer, RunIdentity,
};
use crate::run::{self, Backlog, Evaluate, GameSource, Observer, RunError, RunOptions};

/// How a learner runs.
#[derive(Clone, Debug)]
pub struct LearnerOptions {
    /// The training loop's options; `dir` is the learner's local cache of the run.
    pub run: RunOptions,
    /// How often to look for new chunks while an iteration waits for games.
    pub poll: Duration,
    /// Games played by a network more than this many iterations older than the one being
    /// trained are consumed but not trained on (`None`: all are trained on).
    pub max_network_age: Option<u32>,
    /// The most games an iteration takes (`None`: twice `games_per_iteration`); the rest
    /// wait for later iterations.
    pub max_games: Option<u64>,
    /// How long the lease holds without renewal: a killed learner's successor waits at
    /// most this long.
    pub lease_ttl: Duration,
    /// A request to stop from outside (`None`: none is watched).
    pub terminate: Option<Terminate>,
}

/// A request to stop, as the binary's signal handlers make it: once `signal` is not zero
/// the learner gives its lease up at once (after the write in flight) and calls `then`
/// with the signal's number (the binary exits there). The iteration under way is lost,
/// as with a kill, and redone by the next learner, which need not wait for the lease.
#[derive(Clone, Debug)]
pub struct Terminate {
    /// The number of the signal that arrived, or 0.
    pub signal: Arc<AtomicUsize>,
    /// Called on the lease's thread once the lease is given up.
    pub then: fn(usize),
}

/// Why an object was quarantined: `quarantine/reasons/TAG.json`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuarantineNote {
    /// The object's key before it was moved.
    pub key: String,
    /// Its size in bytes, as listed.
    pub size: u64,
    /// Why, on one line.
    pub reason: String,
    /// The iteration that was gathering games.
    pub iteration: u32,
    /// When, milliseconds since the Unix epoch.
    pub unix_ms: u64,
}

/// The tag of the quarantined object `key` ([`RunLayout::quarantined`]).
#[must_use]
pub fn quarantine_tag(key: &str) -> String {
    content_hash(key.as_bytes())[..32].to_owned()
}

/// Runs the learner of the store run `store` until the configuration's iterations are
/// complete (or `options.run.max_new_iterations`). `config` (`--config`) starts a new run
/// or must agree with the run's; without it the run's own is used.
pub fn learn(
    store: &Store,
    config: Option<&RunConfig>,
    options: &LearnerOptions,
    observer: &mut dyn Observer,
    evaluator: &mut dyn Evaluate,
) -> Result<RunState, RunError> {
    let config = match (config, remote::stored_config(store)?) {
        (Some(given), _) => given.clone(),
        (None, Some(stored)) => stored,
        (None, None) => {
            return Err(RunError::Remote(format!(
                "{}: the run has no config.toml yet: give --config to start it",
                store.location()
            )));
        }
    };
    // A store that lost the cache's run is refused before the lease is taken: nothing is
    // written to it.
    identity_problem(store, &RunDir::new(&options.run.dir))?;
    let lease = Lease::acquire(store, &lease::new_owner(), options.lease_ttl)?;
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let terminate = options.terminate.as_ref();
            let end = lease.keep(&stop, terminate.map(|t| &*t.signal), &options.run.dir);
            if let (KeepEnd::Terminated(signal), Some(t)) = (end, terminate) {
                (t.then)(signal);
            }
        });
        let result = Learner::restore(store, &config, options, &lease).and_then(|mut learner| {
            run::train_with(
                &config,
                &options.run,
                observer,
                evaluator,
                Some(&mut learner),
            )
        });
        stop.store(true, Ordering::SeqCst);
        if let Err(e) = lease.release() {
            tracing::warn!("could not give the lease up: {e}");
        }
        result
    })
}

/// The learner's knowledge of the store.
struct Learner<'a> {
    store: &'a Store,
    config: &'a RunConfig,
    options: &'a LearnerOptions,
    lease: &'a Lease<'a>,
    /// Every chunk key in a record.
    consumed: HashSet<String>,
    /// The content hash of every chunk in a record: its key and iteration.
    hashes: HashMap<String, (String, u32)>,
    records: BTreeMap<u32, ConsumedRecord>,
}

/// Why a chunk is not trained on.
enum Verdict {
    /// It fails its checks: quarantined.
    Bad(String),
    /// Its network is too old: consumed, not trained on.
    Stale(Chunk),
}

/// The chunks an iteration has taken so far (staged in the cache, not in memory).
#[derive(Default)]
struct Batch {
    /// Taken for training: record and staged file.
    picked: Vec<(ConsumedChunk, PathBuf)>,
    /// Consumed without training.
    stale: Vec<ConsumedChunk>,
    /// Games in `picked`.
    games: u64,
    /// Keys looked at (taken, stale), and content hashes taken, with their keys.
    seen: HashSet<String>,
    taken: HashMap<String, String>,
}

impl<'a> Learner<'a> {
    /// Brings the cache in line with the store: the run's identity checked, config, state
    /// and metrics as the store has them (none if it has none), the checkpoints the next
    /// iteration starts from, and the recorded chunks the replay window can reach; other
    /// local chunks are removed.
    fn restore(
        store: &'a Store,
        config: &'a RunConfig,
        options: &'a LearnerOptions,
        lease: &'a Lease<'a>,
    ) -> Result<Learner<'a>, RunError> {
        let cache = RunDir::new(&options.run.dir);
        cache.create()?;
        let mut learner = Learner {
            store,
            config,
            options,
            lease,
            consumed: HashSet::new(),
            hashes: HashMap::new(),
            records: BTreeMap::new(),
        };
        learner.check_identity(&cache)?;
        for key in [RunLayout::CONFIG, RunLayout::STATE, RunLayout::METRICS] {
            let local = cache.root().join(key);
            match store.get(key)? {
                Some(bytes) => brandubh_fs::write_atomic(&local, &bytes)?,
                None => remove_if_present(&local)?,
            }
        }
        if let Some(state) = cache.read_state()? {
            learner.restore_checkpoints(&cache, &state)?;
        }
        for entry in store.list(RunLayout::LEARNER)? {
            if RunLayout::parse_consumed(&entry.key).is_some() {
                let record: ConsumedRecord = remote::get_json(store, &entry.key)?
                    .ok_or_else(|| RunError::Remote(format!("{}: vanished", entry.key)))?;
                learner.remember(&record);
                learner.records.insert(record.iteration, record);
            }
        }
        let keep = window_chunks(&learner.records, config);
        for record in learner.records.values() {
            learner.make_local(&cache, record, &keep)?;
        }
        prune(&cache, &keep)?;
        Ok(learner)
    }

    /// The store's run identity against the cache's ([`identity_problem`] first): the same
    /// run, or a new run created here.
    fn check_identity(&self, cache: &RunDir) -> Result<RunIdentity, RunError> {
        identity_problem(self.store, cache)?;
        match remote::stored_identity(self.store)? {
            Some(s) => {
                if remote::cached_identity(cache)?.as_ref() != Some(&s) {
                    // A cache of unknown origin: nothing in it is trusted.
                    clear_cache(cache)?;
                    remote::remember_identity(cache, &s)?;
                }
                Ok(s)
            }
            None => {
                let _write = self.lease.ensure()?;
                let created = RunIdentity::new(&self.config.name);
                let bytes = remote::json_bytes(self.store, RunLayout::RUN, &created)?;
                let identity = if self.store.put_new(RunLayout::RUN, &bytes)? {
                    tracing::info!("run {} ({}) created", created.run_id, created.name);
                    created
                } else {
                    remote::stored_identity(self.store)?.ok_or_else(|| {
                        RunError::Remote(format!(
                            "{}: vanished",
                            self.store.location().name_of(RunLayout::RUN)
                        ))
                    })?
                };
                clear_cache(cache)?;
                remote::remember_identity(cache, &identity)?;
                Ok(identity)
            }
        }
    }

    /// Downloads the checkpoints `state` continues from, unless the cache has them at the
    /// store's size.
    fn restore_checkpoints(&self, cache: &RunDir, state: &RunState) -> Result<(), RunError> {
        let network = remote::selfplay_network(state)?;
        let stems = [
            format!("{}.", RunLayout::checkpoint(state.iteration)),
            format!("{}.", RunLayout::checkpoint(network)),
        ];
        let keys: Vec<String> = self
            .store
            .list(RunLayout::CHECKPOINTS)?
            .into_iter()
            .filter(|e| stems.iter().any(|s| e.key.starts_with(s)))
            .filter(|e| {
                std::fs::metadata(cache.root().join(&e.key)).map_or(true, |m| m.len() != e.size)
            })
            .map(|e| e.key)
            .collect();
        remote::download(self.store, cache, &keys)
    }

    /// Adds a record's chunks to what was consumed.
    fn remember(&mut self, record: &ConsumedRecord) {
        for c in record.consumed() {
            self.consumed.insert(c.key.clone());
            if !c.sha256.is_empty() {
                self.hashes
                    .entry(c.sha256.clone())
                    .or_insert_with(|| (c.key.clone(), record.iteration));
            }
        }
        self.consumed.extend(record.dropped.iter().cloned());
    }

    /// Copies the chunks of `record` that `keep` names and the cache lacks (or holds with
    /// another hash).
    fn make_local(
        &self,
        cache: &RunDir,
        record: &ConsumedRecord,
        keep: &HashSet<(u32, u32)>,
    ) -> Result<(), RunError> {
        for c in &record.chunks {
            if !keep.contains(&(record.iteration, c.seq)) {
                continue;
            }
            let local = cache.chunk(record.iteration, c.seq);
            let fresh = std::fs::read(&local)
                .is_ok_and(|b| c.sha256.is_empty() || content_hash(&b) == c.sha256);
            if fresh {
                continue;
            }
            let bytes = self
                .store
                .get_bounded(&c.key, MAX_CHUNK_BYTES)?
                .ok_or_else(|| {
                    RunError::Remote(format!(
                        "{} names {}, which is missing",
                        self.store
                            .location()
                            .name_of(&RunLayout::consumed(record.iteration)),
                        c.key
                    ))
                })?;
            brandubh_fs::write_atomic(&local, &bytes)?;
        }
        Ok(())
    }

    /// The checks of an untrusted chunk for iteration `n`.
    fn check(&self, key: &str, bytes: &[u8], n: u32) -> Result<Chunk, Verdict> {
        let chunk =
            replay::decode_chunk(bytes, Path::new(key)).map_err(|e| Verdict::Bad(e.to_string()))?;
        let tagged = chunk.info.iteration;
        if chunk.info.run_id != self.config.name {
            return Err(Verdict::Bad(format!(
                "a chunk of run {:?}, not of {:?}",
                chunk.info.run_id, self.config.name
            )));
        }
        if tagged == 0 || tagged > n {
            return Err(Verdict::Bad(format!(
                "tagged with network {}, but the newest is {}",
                i64::from(tagged) - 1,
                n - 1
            )));
        }
        if chunk.games.is_empty() {
            return Err(Verdict::Bad("no games".into()));
        }
        match self.options.max_network_age {
            Some(age) if tagged.saturating_add(age) < n => Err(Verdict::Stale(chunk)),
            _ => Ok(chunk),
        }
    }

    /// Moves `key` to the quarantine with a note saying why (the note first: a kill between
    /// the two leaves the object in place, to be quarantined again).
    fn quarantine(&self, key: &str, size: u64, reason: &str, n: u32) -> Result<(), RunError> {
        let _write = self.lease.ensure()?;
        let tag = quarantine_tag(key);
        let aside = RunLayout::quarantined(&tag);
        tracing::warn!("quarantined {key}: {reason} (moved to {aside})");
        let note = QuarantineNote {
            key: key.to_owned(),
            size,
            reason: reason.to_owned(),
            iteration: n,
            unix_ms: remote::now_unix_ms(),
        };
        remote::put_json(self.store, &RunLayout::quarantine_reason(&tag), &note)?;
        self.store.rename(key, &aside)?;
        Ok(())
    }

    /// The most games an iteration takes.
    fn max_games(&self) -> u64 {
        let per = u64::from(self.config.selfplay.games_per_iteration);
        self.options.max_games.unwrap_or(2 * per).max(per)
    }

    /// One look at the store's chunks, oldest first, adding to `batch`: returns the
    /// valid-looking chunks left waiting because the batch is full.
    fn scan(&self, dir: &RunDir, n: u32, batch: &mut Batch) -> Result<u64, RunError> {
        let mut entries = self.store.list(RunLayout::CHUNKS)?;
        entries.sort_by(|a, b| (a.modified, &a.key).cmp(&(b.modified, &b.key)));
        let mut waiting = 0;
        for entry in entries {
            let key = entry.key.as_str();
            if self.consumed.contains(key) || batch.seen.contains(key) {
                continue;
            }
            if RunLayout::parse_actor_chunk(key).is_none() {
                let why = "not a chunk key this version writes (chunks/ACTOR/SESSION-SSSSSSSS.brz)";
                self.quarantine(key, entry.size, why, n)?;
                continue;
            }
            if entry.size > MAX_CHUNK_BYTES {
                let why = format!(
                    "{} bytes, more than the {MAX_CHUNK_BYTES} a chunk may have (its listed size; not read)",
                    entry.size
                );
                self.quarantine(key, entry.size, &why, n)?;
                continue;
            }
            if batch.games >= self.max_games() {
                waiting += 1;
                continue;
            }
            let bytes = match self.store.get_bounded(key, MAX_CHUNK_BYTES) {
                Ok(Some(bytes)) => bytes,
                Ok(None) => continue,
                Err(StoreError::TooLarge { size, .. }) => {
                    let why = format!(
                        "more than the {MAX_CHUNK_BYTES} bytes a chunk may have (read stopped at {size})"
                    );
                    self.quarantine(key, entry.size, &why, n)?;
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            if !self.take(dir, n, key, &bytes, entry.size, batch)? {
                waiting += 1;
            }
        }
        Ok(waiting)
    }

    /// Checks one downloaded chunk and adds it to `batch` (or the stale ones, or the
    /// quarantine); `false` if it would take the batch past its most games.
    fn take(
        &self,
        dir: &RunDir,
        n: u32,
        key: &str,
        bytes: &[u8],
        size: u64,
        batch: &mut Batch,
    ) -> Result<bool, RunError> {
        let hash = content_hash(bytes);
        let copy_of = match (self.hashes.get(&hash), batch.taken.get(&hash)) {
            (Some((first, it)), _) => Some(format!("consumed in iteration {it}: {first}")),
            (None, Some(first)) => Some(format!("taken by this iteration: {first}")),
            (None, None) => None,
        };
        if let Some(first) = copy_of {
            let why = format!("a copy of a chunk {first}");
            self.quarantine(key, size, &why, n)?;
            return Ok(true);
        }
        match self.check(key, bytes, n) {
            Err(Verdict::Bad(reason)) => self.quarantine(key, size, &reason, n)?,
            Err(Verdict::Stale(chunk)) => {
                tracing::info!("not training on {key}: its network is too old");
                batch.stale.push(ConsumedChunk::of(key, 0, &chunk, &hash));
            }
            Ok(chunk) => {
                let games = chunk.games.len() as u64;
                if batch.games > 0 && batch.games + games > self.max_games() {
                    return Ok(false);
                }
                let seq = u32::try_from(batch.picked.len()).unwrap_or(u32::MAX);
                let staged = dir.root().join("staging").join(format!("{seq:06}.brz"));
                brandubh_fs::write_atomic(&staged, bytes)?;
                batch
                    .picked
                    .push((ConsumedChunk::of(key, seq, &chunk, &hash), staged));
                batch.games += games;
            }
        }
        batch.seen.insert(key.to_owned());
        batch.taken.insert(hash, key.to_owned());
        Ok(true)
    }

    /// Writes iteration `n`'s record (create-only) and moves its staged chunks into place.
    fn commit(
        &mut self,
        dir: &RunDir,
        n: u32,
        batch: Batch,
        waiting: u64,
    ) -> Result<Backlog, RunError> {
        let record = ConsumedRecord {
            iteration: n,
            chunks: batch.picked.iter().map(|(c, _)| c.clone()).collect(),
            dropped: Vec::new(),
            stale: batch.stale,
            waiting,
            fencing: self.lease.fencing(),
        };
        let key = RunLayout::consumed(n);
        let bytes = remote::json_bytes(self.store, &key, &record)?;
        let _write = self.lease.ensure()?;
        if !self.store.put_new(&key, &bytes)? {
            return Err(RunError::Remote(format!(
                "{}: already written by another learner; this one stops",
                self.store.location().name_of(&key)
            )));
        }
        for (c, staged) in &batch.picked {
            rename(staged, &dir.chunk(n, c.seq))?;
        }
        self.remember(&record);
        let backlog = backlog_of(&record);
        self.records.insert(n, record);
        Ok(backlog)
    }

    /// Publishes `pointer` as `latest`: compare-and-swap, refused if the store's names a
    /// newer iteration or a newer lease (the pointer never goes backwards).
    fn publish(&self, pointer: &Pointer) -> Result<(), RunError> {
        let name = self.store.location().name_of(RunLayout::LATEST);
        let bytes = remote::json_bytes(self.store, RunLayout::LATEST, pointer)?;
        let _write = self.lease.ensure()?;
        let written = match self
            .store
            .get_versioned(RunLayout::LATEST, MAX_JSON_BYTES)?
        {
            None => self.store.put_new(RunLayout::LATEST, &bytes)?,
            Some(current) => {
                if let Ok(p) = serde_json::from_slice::<Pointer>(&current.bytes) {
                    if p.fencing > pointer.fencing {
                        return Err(RunError::Remote(format!(
                            "{name} was written under lease fencing {}, newer than this learner's {}: another learner took over; this one stops",
                            p.fencing, pointer.fencing
                        )));
                    }
                    if p.iteration > pointer.iteration {
                        return Err(RunError::Remote(format!(
                            "{name} names iteration {}, newer than this learner's {}: it never goes backwards; this learner stops",
                            p.iteration, pointer.iteration
                        )));
                    }
                }
                self.store
                    .put_if(RunLayout::LATEST, &bytes, &current.version)?
                    .is_some()
            }
        };
        if written {
            Ok(())
        } else {
            Err(RunError::Remote(format!(
                "{name} changed while this learner wrote it: another learner is writing the run; this one stops"
            )))
        }
    }
}

impl GameSource for Learner<'_> {
    fn gather(
        &mut self,
        dir: &RunDir,
        n: u32,
        observer: &mut dyn Observer,
    ) -> Result<Backlog, RunError> {
        if let Some(record) = self.records.get(&n) {
            let all = record.chunks.iter().map(|c| (n, c.seq)).collect();
            self.make_local(dir, record, &all)?;
            return Ok(backlog_of(record));
        }
        for entry in replay::list_chunks(&dir.chunks())? {
            if entry.iteration >= n {
                remove_if_present(&entry.path)?;
            }
        }
        let staging = dir.root().join("staging");
        if staging.exists() {
            std::fs::remove_dir_all(&staging).map_err(|cause| io_error(&staging, cause))?;
        }
        let need = u64::from(self.config.selfplay.games_per_iteration);
        let mut batch = Batch::default();
        loop {
            let waiting = self.scan(dir, n, &mut batch)?;
            if batch.games >= need {
                return self.commit(dir, n, batch, waiting);
            }
            observer.waiting_for_games(n, batch.games, need, &by_actor(&batch.picked));
            std::thread::sleep(self.options.poll);
        }
    }

    /// Uploads the checkpoint of `state.iteration`, the configuration, metrics, plot and
    /// state, then the pointer; prunes the cache to what the replay window can reach.
    fn recorded(&mut self, dir: &RunDir, state: &RunState) -> Result<(), RunError> {
        for path in checkpoint_files(dir, state.iteration)? {
            if let Some(name) = path.file_name().and_then(|n| n.to_str()) {
                let key = format!("{}/{name}", RunLayout::CHECKPOINTS);
                let _write = self.lease.ensure()?;
                self.store.put(&key, &read(&path)?)?;
            }
        }
        for key in [
            RunLayout::CONFIG,
            RunLayout::METRICS,
            RunLayout::LEARNING_CURVES,
            RunLayout::STATE,
        ] {
            let path = dir.root().join(key);
            if path.exists() {
                let _write = self.lease.ensure()?;
                self.store.put(key, &read(&path)?)?;
            }
        }
        let network = remote::selfplay_network(state)?;
        let files = remote::network_files(network);
        let hashes = files
            .iter()
            .map(|k| read(&dir.root().join(k)).map(|b| content_hash(&b)))
            .collect::<Result<Vec<_>, _>>()?;
        let pointer = Pointer {
            iteration: state.iteration,
            network,
            files,
            finished: state.iteration >= self.config.iterations,
            fencing: self.lease.fencing(),
            hashes,
        };
        self.publish(&pointer)?;
        prune_checkpoints(dir, &[state.iteration, network])?;
        prune(dir, &window_chunks(&self.records, self.config))
    }
}

/// Why the cache `cache` cannot be used with the run in `store`: it was filled from
/// another run, or from a run the store no longer holds (wiped or replaced). Reads only.
fn identity_problem(store: &Store, cache: &RunDir) -> Result<(), RunError> {
    let location = store.location();
    let stored = remote::stored_identity(store)?;
    let cached = remote::cached_identity(cache)?;
    let cached_iteration = cache.read_state()?.map_or(0, |s| s.iteration);
    let dir = cache.root().display();
    match (stored, cached) {
        (Some(s), Some(c)) if s != c => Err(RunError::Remote(format!(
            "{location} holds run {} ({}), but the cache {dir} was filled from run {} ({}): give another --cache, or empty this one",
            s.run_id, s.name, c.run_id, c.name
        ))),
        (None, Some(c)) => Err(RunError::Remote(format!(
            "{location} holds no run (no run.json), but the cache {dir} was filled from its run {} ({}, iteration {cached_iteration}): the store was wiped or replaced; restore it, or start a new run with an empty --cache",
            c.run_id, c.name
        ))),
        (None, None) if cached_iteration > 0 && store.get(RunLayout::STATE)?.is_none() => {
            Err(RunError::Remote(format!(
                "{location} holds no run, but the cache {dir} holds iteration {cached_iteration} of one: the store was wiped or replaced; restore it, or start a new run with an empty --cache"
            )))
        }
        _ => Ok(()),
    }
}

/// What a record left out.
fn backlog_of(record: &ConsumedRecord) -> Backlog {
    Backlog {
        stale_games: record.stale.iter().map(|c| c.games).sum(),
        waiting_chunks: record.waiting,
    }
}

/// The recorded chunks the replay window can still reach, newest first until they hold
/// `training.window_max_positions` positions: the window's largest size, so a window
/// loaded from them is the one a cache of every chunk gives.
fn window_chunks(
    records: &BTreeMap<u32, ConsumedRecord>,
    config: &RunConfig,
) -> HashSet<(u32, u32)> {
    let max = config.training.window_max_positions;
    let mut keep = HashSet::new();
    let mut total = 0u64;
    for record in records.values().rev() {
        for c in record.chunks.iter().rev() {
            if total >= max {
                return keep;
            }
            keep.insert((record.iteration, c.seq));
            total += c.positions;
        }
    }
    keep
}

/// Removes the cache's chunk files that `keep` does not name.
fn prune(cache: &RunDir, keep: &HashSet<(u32, u32)>) -> Result<(), RunError> {
    for entry in replay::list_chunks(&cache.chunks())? {
        if !keep.contains(&(entry.iteration, entry.seq)) {
            remove_if_present(&entry.path)?;
        }
    }
    Ok(())
}

/// Removes the cache's checkpoint files of iterations other than `keep` (the store holds
/// them all; training continues from the state's, self-play plays the pointer's).
fn prune_checkpoints(cache: &RunDir, keep: &[u32]) -> Result<(), RunError> {
    let dir = cache.checkpoints();
    let io = |cause| io_error(&dir, cause);
    for entry in std::fs::read_dir(&dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        let iteration = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix(brandubh_run::layout::CHECKPOINT_PREFIX))
            .and_then(|n| n.get(..6))
            .and_then(|d| d.parse::<u32>().ok());
        if iteration.is_some_and(|i| !keep.contains(&i)) {
            remove_if_present(&path)?;
        }
    }
    Ok(())
}

/// Empties a cache of unknown origin (its chunks, checkpoints and run files).
fn clear_cache(cache: &RunDir) -> Result<(), RunError> {
    for dir in [
        cache.chunks(),
        cache.checkpoints(),
        cache.root().join("staging"),
    ] {
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(|cause| io_error(&dir, cause))?;
        }
    }
    for key in [
        RunLayout::CONFIG,
        RunLayout::STATE,
        RunLayout::METRICS,
        RunLayout::RUN,
    ] {
        remove_if_present(&cache.root().join(key))?;
    }
    cache.create()?;
    Ok(())
}

/// Games per actor among `picked`, by actor id.
fn by_actor(picked: &[(ConsumedChunk, PathBuf)]) -> Vec<(String, u64)> {
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    for (c, _) in picked {
        if let Some(parsed) = RunLayout::parse_actor_chunk(&c.key) {
            *counts.entry(parsed.actor.to_owned()).or_default() += c.games;
        }
    }
    counts.into_iter().collect()
}

/// The local files of checkpoint `iteration` (weights, metadata, optimizer state).
fn checkpoint_files(dir: &RunDir, iteration: u32) -> Result<Vec<PathBuf>, RunError> {
    let stem = format!("{}.", brandubh_run::layout::checkpoint_name(iteration));
    let io = |cause| io_error(&dir.checkpoints(), cause);
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir.checkpoints()).map_err(io)? {
        let path = entry.map_err(io)?.path();
        let ours = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with(&stem));
        if ours && !brandubh_fs::is_temp_file(&path) {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

fn io_error(path: &Path, cause: std::io::Error) -> RunError {
    RunError::RunDir(brandubh_run::RunDirError::Io {
        path: path.to_path_buf(),
        cause,
    })
}

fn read(path: &Path) -> Result<Vec<u8>, RunError> {
    std::fs::read(path).map_err(|cause| io_error(path, cause))
}

fn rename(from: &Path, to: &Path) -> Result<(), RunError> {
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).map_err(|cause| io_error(parent, cause))?;
    }
    std::fs::rename(from, to).map_err(|cause| io_error(to, cause))
}

fn remove_if_present(path: &Path) -> Result<(), RunError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(cause) => Err(io_error(path, cause)),
    }
}
