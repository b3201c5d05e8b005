//! `brandubh train --role learner`: the training loop of [`crate::run`] on a local cache,
//! with the games of each iteration taken from the actors' chunks in the store instead of
//! self-play, and everything an iteration writes published to the store, the `latest`
//! pointer last.
//!
//! Iteration N: list `chunks/`; check every chunk not consumed yet (framing, checksum,
//! replay of every move through the rules, run name, network tag); move a bad one to
//! `rejected/` with a warning naming it; once the new games reach `games_per_iteration`,
//! write `learner/iter-N.json` (the chunks N trains on) and copy them into the cache as
//! `chunks/chunk-N-SSSSSS.brz` → train (at most `training.steps_for(new positions)` steps:
//! `max_sample_reuse` caps the steps per new position) → checkpoint → evaluation → metrics
//! → state → upload of checkpoint, metrics, plot and state → `latest`. A restarted learner
//! restores the cache from the store and redoes iteration N with exactly the chunks of its
//! record, so no chunk is lost or counted twice.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::time::Duration;

use brandubh_run::config::RunConfig;
use brandubh_run::replay::{self, Chunk};
use brandubh_run::{RunDir, RunLayout, RunState};
use brandubh_store::Store;

use crate::remote::{self, ConsumedChunk, ConsumedRecord, Pointer};
use crate::run::{self, Evaluate, GameSource, Observer, RunError, RunOptions};

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
    let mut learner = Learner::restore(store, &config, options)?;
    run::train_with(
        &config,
        &options.run,
        observer,
        evaluator,
        Some(&mut learner),
    )
}

/// The learner's knowledge of the store.
struct Learner<'a> {
    store: &'a Store,
    config: &'a RunConfig,
    options: &'a LearnerOptions,
    /// Every chunk key in a record.
    consumed: HashSet<String>,
    records: BTreeMap<u32, ConsumedRecord>,
}

/// Why a chunk is not trained on.
enum Verdict {
    /// It fails its checks: moved aside.
    Bad(String),
    /// Its network is too old: consumed, not trained on.
    Stale,
}

impl<'a> Learner<'a> {
    /// Brings the cache in line with the store: config, state and metrics as the store has
    /// them (none if it has none), the checkpoints the next iteration starts from, and the
    /// chunks of every record; local chunks no record names are removed.
    fn restore(
        store: &'a Store,
        config: &'a RunConfig,
        options: &'a LearnerOptions,
    ) -> Result<Learner<'a>, RunError> {
        let cache = RunDir::new(&options.run.dir);
        cache.create()?;
        for key in [RunLayout::CONFIG, RunLayout::STATE, RunLayout::METRICS] {
            let local = cache.root().join(key);
            match store.get(key)? {
                Some(bytes) => brandubh_fs::write_atomic(&local, &bytes)?,
                None => remove_if_present(&local)?,
            }
        }
        let mut learner = Learner {
            store,
            config,
            options,
            consumed: HashSet::new(),
            records: BTreeMap::new(),
        };
        if let Some(state) = cache.read_state()? {
            let mut keys = learner.checkpoint_keys(state.iteration)?;
            keys.extend(remote::network_files(remote::selfplay_network(&state)?));
            keys.retain(|k| !cache.root().join(k).exists());
            remote::download(store, &cache, &keys)?;
        }
        for entry in store.list(RunLayout::LEARNER)? {
            if RunLayout::parse_consumed(&entry.key).is_some() {
                let record: ConsumedRecord = remote::get_json(store, &entry.key)?
                    .ok_or_else(|| RunError::Remote(format!("{}: vanished", entry.key)))?;
                learner
                    .consumed
                    .extend(record.chunks.iter().map(|c| c.key.clone()));
                learner.consumed.extend(record.dropped.iter().cloned());
                learner.records.insert(record.iteration, record);
            }
        }
        for record in learner.records.values() {
            learner.make_local(&cache, record)?;
        }
        let recorded: HashSet<(u32, u32)> = learner
            .records
            .values()
            .flat_map(|r| r.chunks.iter().map(|c| (r.iteration, c.seq)))
            .collect();
        for entry in replay::list_chunks(&cache.chunks())? {
            if !recorded.contains(&(entry.iteration, entry.seq)) {
                remove_if_present(&entry.path)?;
            }
        }
        Ok(learner)
    }

    /// The store's files of checkpoint `iteration` (weights, metadata, optimizer state).
    fn checkpoint_keys(&self, iteration: u32) -> Result<Vec<String>, RunError> {
        let stem = format!("{}.", RunLayout::checkpoint(iteration));
        Ok(self
            .store
            .list(RunLayout::CHECKPOINTS)?
            .into_iter()
            .map(|e| e.key)
            .filter(|k| k.starts_with(&stem))
            .collect())
    }

    /// Copies the chunks of `record` missing from the cache.
    fn make_local(&self, cache: &RunDir, record: &ConsumedRecord) -> Result<(), RunError> {
        for c in &record.chunks {
            let local = cache.chunk(record.iteration, c.seq);
            if local.exists() {
                continue;
            }
            let bytes = self.store.get(&c.key)?.ok_or_else(|| {
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
                "{key}: a chunk of run {:?}, not of {:?}",
                chunk.info.run_id, self.config.name
            )));
        }
        if tagged == 0 || tagged > n {
            return Err(Verdict::Bad(format!(
                "{key}: tagged with network {}, but the newest is {}",
                i64::from(tagged) - 1,
                n - 1
            )));
        }
        if chunk.games.is_empty() {
            return Err(Verdict::Bad(format!("{key}: no games")));
        }
        match self.options.max_network_age {
            Some(age) if tagged.saturating_add(age) < n => Err(Verdict::Stale),
            _ => Ok(chunk),
        }
    }

    /// The new chunks in the store, checked: good ones into `picked`, stale ones into
    /// `dropped`, bad ones moved to `rejected/`.
    fn scan(
        &self,
        n: u32,
        picked: &mut Vec<(String, Vec<u8>, Chunk)>,
        dropped: &mut Vec<String>,
    ) -> Result<(), RunError> {
        let seen: HashSet<&str> = picked
            .iter()
            .map(|p| p.0.as_str())
            .chain(dropped.iter().map(String::as_str))
            .collect();
        let mut found = Vec::new();
        let mut stale = Vec::new();
        for entry in self.store.list(RunLayout::CHUNKS)? {
            let key = entry.key;
            if RunLayout::parse_actor_chunk(&key).is_none()
                || self.consumed.contains(&key)
                || seen.contains(key.as_str())
            {
                continue;
            }
            let Some(bytes) = self.store.get(&key)? else {
                continue;
            };
            match self.check(&key, &bytes, n) {
                Ok(chunk) => found.push((key, bytes, chunk)),
                Err(Verdict::Stale) => {
                    tracing::info!("not training on {key}: its network is too old");
                    stale.push(key);
                }
                Err(Verdict::Bad(reason)) => {
                    let aside = RunLayout::rejected(&key);
                    tracing::warn!("rejecting chunk {reason} (moved to {aside})");
                    self.store.rename(&key, &aside)?;
                }
            }
        }
        picked.extend(found);
        dropped.extend(stale);
        Ok(())
    }
}

impl GameSource for Learner<'_> {
    fn gather(
        &mut self,
        dir: &RunDir,
        n: u32,
        observer: &mut dyn Observer,
    ) -> Result<(), RunError> {
        if let Some(record) = self.records.get(&n) {
            return self.make_local(dir, record);
        }
        for entry in replay::list_chunks(&dir.chunks())? {
            if entry.iteration >= n {
                remove_if_present(&entry.path)?;
            }
        }
        let need = u64::from(self.config.selfplay.games_per_iteration);
        let (mut picked, mut dropped) = (Vec::new(), Vec::new());
        loop {
            self.scan(n, &mut picked, &mut dropped)?;
            let have: u64 = picked.iter().map(|p| p.2.games.len() as u64).sum();
            if have >= need {
                break;
            }
            observer.waiting_for_games(n, have, need, &by_actor(&picked));
            std::thread::sleep(self.options.poll);
        }
        let record = ConsumedRecord {
            iteration: n,
            chunks: picked
                .iter()
                .zip(0u32..)
                .map(|((key, _, chunk), seq)| ConsumedChunk::of(key, seq, chunk))
                .collect(),
            dropped,
        };
        remote::put_json(self.store, &RunLayout::consumed(n), &record)?;
        for ((_, bytes, _), c) in picked.iter().zip(&record.chunks) {
            brandubh_fs::write_atomic(&dir.chunk(n, c.seq), bytes)?;
        }
        self.consumed
            .extend(record.chunks.iter().map(|c| c.key.clone()));
        self.consumed.extend(record.dropped.iter().cloned());
        self.records.insert(n, record);
        Ok(())
    }

    /// Uploads the checkpoint of `state.iteration`, the configuration, metrics, plot and
    /// state, then the pointer.
    fn recorded(&mut self, dir: &RunDir, state: &RunState) -> Result<(), RunError> {
        for path in checkpoint_files(dir, state.iteration)? {
            if let Some(name) = path.file_name().and_then(|n| n.to_str()) {
                let key = format!("{}/{name}", RunLayout::CHECKPOINTS);
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
                self.store.put(key, &read(&path)?)?;
            }
        }
        let network = remote::selfplay_network(state)?;
        let pointer = Pointer {
            iteration: state.iteration,
            network,
            files: remote::network_files(network),
            finished: state.iteration >= self.config.iterations,
        };
        remote::put_json(self.store, RunLayout::LATEST, &pointer)
    }
}

/// Games per actor among `picked`, by actor id.
fn by_actor(picked: &[(String, Vec<u8>, Chunk)]) -> Vec<(String, u64)> {
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    for (key, _, chunk) in picked {
        if let Some((actor, _)) = RunLayout::parse_actor_chunk(key) {
            *counts.entry(actor.to_owned()).or_default() += chunk.games.len() as u64;
        }
    }
    counts.into_iter().collect()
}

/// The local files of checkpoint `iteration` (weights, metadata, optimizer state).
fn checkpoint_files(dir: &RunDir, iteration: u32) -> Result<Vec<std::path::PathBuf>, RunError> {
    let stem = format!("{}.", brandubh_run::layout::checkpoint_name(iteration));
    let io = |cause| {
        RunError::RunDir(brandubh_run::RunDirError::Io {
            path: dir.checkpoints(),
            cause,
        })
    };
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

fn read(path: &Path) -> Result<Vec<u8>, RunError> {
    std::fs::read(path).map_err(|cause| {
        RunError::RunDir(brandubh_run::RunDirError::Io {
            path: path.to_path_buf(),
            cause,
        })
    })
}

fn remove_if_present(path: &Path) -> Result<(), RunError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(cause) => Err(RunError::RunDir(brandubh_run::RunDirError::Io {
            path: path.to_path_buf(),
            cause,
        })),
    }
}
