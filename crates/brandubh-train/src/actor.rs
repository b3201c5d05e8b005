//! `brandubh train --role actor`: self-play only. Reads the run's identity, configuration
//! and newest network (the `latest` pointer) from the store, plays games with the run's
//! self-play settings, uploads them as immutable chunks `chunks/ACTOR/SESSION-SSSSSSSS.brz`
//! (each tagged with the iteration of the network that played it), and repeats, looking
//! for a newer network after every `games_per_iteration` games. A kill loses only the games
//! still being played: a chunk is put whole or not at all.
//!
//! Chunk keys are unique by construction: each process draws a session id when it starts
//! (its start time and random bits) and numbers its chunks from 0; nothing in the store
//! changes the numbering, and every chunk is written with a create-only put, so no object
//! is ever overwritten (a killed actor's put still in flight lands under its own key). The
//! cache holds the networks of one run, in a directory named by the run's id; a store that
//! no longer holds that run (wiped, or replaced by another) stops the actor with one line.

use std::sync::Arc;
use std::time::{Duration, Instant};

use brandubh_run::config::RunConfig;
use brandubh_run::replay::{self, Chunk};
use brandubh_run::{RunDir, RunLayout};
use brandubh_store::Store;

use crate::remote::{self, ActorStatus, Pointer, RunIdentity};
use crate::run::{self, GameBatch, Observer, RunError, RunOptions};
use crate::selfplay::ForkPool;

/// How an actor runs.
#[derive(Clone, Debug)]
pub struct ActorOptions {
    /// The local cache (networks) in `dir`, the device and where self-play evaluates;
    /// `force_config` and `max_new_iterations` are not used.
    pub run: RunOptions,
    /// The actor's id (`brandubh_run::layout::valid_actor_id`), unique among the run's
    /// actors: its chunks are `chunks/ID/…`.
    pub actor_id: String,
    /// Stop after uploading this many chunks (`None`: until the run is finished).
    pub max_chunks: Option<u64>,
    /// How often to look for the configuration or a first network while there is none.
    pub poll: Duration,
}

/// What an actor did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ActorSummary {
    /// Chunks uploaded.
    pub chunks: u64,
    /// Games in them.
    pub games: u64,
    /// Positions in them.
    pub positions: u64,
    /// Seconds of self-play (playing and uploading).
    pub seconds: f64,
}

/// Runs an actor until the run is finished or `max_chunks` are uploaded. `config`, when
/// given (`--config`), must agree with the run's own.
pub fn act(
    store: &Store,
    config: Option<&RunConfig>,
    options: &ActorOptions,
    observer: &mut dyn Observer,
) -> Result<ActorSummary, RunError> {
    let id = &options.actor_id;
    if !brandubh_run::layout::valid_actor_id(id) {
        return Err(RunError::Remote(format!(
            "actor id {id:?}: use 1-64 letters, digits, '-' or '_'"
        )));
    }
    // Waiting for the learner counts as alive (the heartbeat a liveness probe reads).
    let beat = || remote::heartbeat(&options.run.dir);
    let stored = remote::wait_for(
        "the run's config.toml (start the learner)",
        options.poll,
        || {
            beat();
            remote::stored_config(store)
        },
    )?;
    if let Some(given) = config {
        let changed: Vec<String> = stored
            .changed_keys(given)
            .into_iter()
            .filter(|k| k != "iterations")
            .collect();
        if !changed.is_empty() {
            return Err(RunError::Remote(format!(
                "{}: --config differs from the run's config.toml (changed: {}); actors play the run's",
                store.location(),
                changed.join(", ")
            )));
        }
    }
    let identity = remote::wait_for(
        "the run's run.json (start the learner)",
        options.poll,
        || {
            beat();
            remote::stored_identity(store)
        },
    )?;
    let mut actor = Actor::start(store, &stored, options, identity)?;
    while options.max_chunks.is_none_or(|m| actor.uploaded_now() < m) {
        let pointer = remote::wait_for("the learner's first network", options.poll, || {
            beat();
            remote::get_json::<Pointer>(store, RunLayout::LATEST)
        })?;
        actor.check_identity()?;
        if pointer.finished {
            tracing::info!("the run is finished: actor {id} stops");
            break;
        }
        actor.play_segment(&pointer, observer)?;
    }
    Ok(ActorSummary {
        chunks: actor.uploaded_now(),
        games: actor.status.games - actor.first_status.games,
        positions: actor.status.positions - actor.first_status.positions,
        seconds: actor.started.elapsed().as_secs_f64(),
    })
}

/// An actor's running state.
struct Actor<'a> {
    store: &'a Store,
    config: &'a RunConfig,
    options: &'a ActorOptions,
    cache: RunDir,
    /// The run whose networks the cache holds.
    identity: RunIdentity,
    /// This process's session id, in every chunk key it writes.
    session: u64,
    /// The next chunk's sequence number within the session.
    seq: u64,
    seed: u64,
    network: Option<(u32, std::path::PathBuf)>,
    status: ActorStatus,
    first_status: ActorStatus,
    started: Instant,
    /// The games of the previous segment, which `selfplay.fork_fraction` of the next
    /// segment's games fork from (empty until a segment is played, or without forks).
    forks: Arc<ForkPool>,
}

impl<'a> Actor<'a> {
    /// A new session of actor `options.actor_id` (its counts continued from its status).
    fn start(
        store: &'a Store,
        config: &'a RunConfig,
        options: &'a ActorOptions,
        identity: RunIdentity,
    ) -> Result<Actor<'a>, RunError> {
        let id = &options.actor_id;
        // One directory per run: networks of another run are never played.
        let cache = RunDir::new(options.run.dir.join(&identity.run_id));
        cache.create()?;
        remote::remember_identity(&cache, &identity)?;
        let session = (remote::now_unix_ms() << 20) | (remote::random_u64() & 0xF_FFFF);
        let status: ActorStatus = remote::get_json(store, &RunLayout::actor_status(id))?
            .unwrap_or_else(|| ActorStatus {
                actor: id.clone(),
                ..ActorStatus::default()
            });
        tracing::info!(
            "actor {id}: session {session:016x} of run {}",
            identity.run_id
        );
        Ok(Actor {
            store,
            config,
            options,
            cache,
            identity,
            session,
            seq: 0,
            // Seeded by the session too: a restarted actor does not replay its games.
            seed: brandubh_fs::mix64(
                config.seed ^ brandubh_fs::fnv1a64(id.as_bytes()) ^ session.rotate_left(17),
            ),
            network: None,
            first_status: status.clone(),
            status,
            started: Instant::now(),
            forks: Arc::new(ForkPool::default()),
        })
    }

    /// Stops the actor if the store no longer holds the run it started in.
    fn check_identity(&self) -> Result<(), RunError> {
        let now = remote::stored_identity(self.store)?;
        if now.as_ref() == Some(&self.identity) {
            return Ok(());
        }
        let holds = now.map_or("no run".to_owned(), |r| {
            format!("run {} ({})", r.run_id, r.name)
        });
        Err(RunError::Remote(format!(
            "{}: the store now holds {holds}, not run {} ({}) this actor plays: it was wiped or replaced; restart the actor to join the store's run",
            self.store.location().name_of(RunLayout::RUN),
            self.identity.run_id,
            self.identity.name
        )))
    }

    /// Chunks uploaded by this process (the status also counts earlier ones of its id).
    fn uploaded_now(&self) -> u64 {
        self.status.chunks - self.first_status.chunks
    }

    /// Plays up to `games_per_iteration` games with the pointer's network, uploading
    /// chunks as they fill.
    fn play_segment(
        &mut self,
        pointer: &Pointer,
        observer: &mut dyn Observer,
    ) -> Result<(), RunError> {
        let stem = match &self.network {
            Some((n, stem)) if *n == pointer.network => stem.clone(),
            _ => {
                let stem = remote::fetch_network(self.store, &self.cache, pointer)?;
                self.network = Some((pointer.network, stem.clone()));
                self.status.network = pointer.network;
                observer.network_loaded(pointer.network);
                stem
            }
        };
        let per_chunk = run::chunk_games(self.config);
        let mut count = u64::from(self.config.selfplay.games_per_iteration);
        if let Some(max) = self.options.max_chunks {
            let left = max.saturating_sub(self.uploaded_now());
            count = count.min(left.saturating_mul(per_chunk as u64));
        }
        // Each segment's games are seeded from the chunk number it starts at.
        let seed = crate::selfplay::game_seed(self.seed, self.seq);
        let batch = GameBatch {
            checkpoint: &stem,
            seed,
            eval_seed: seed ^ 1,
            first: 0,
            count,
            per_chunk,
            iteration: pointer.network + 1,
            forks: Arc::clone(&self.forks),
        };
        observer.selfplay_started(pointer.network + 1, count, 0);
        let (store, id, session) = (self.store, self.options.actor_id.clone(), self.session);
        let (seq, status, started) = (&mut self.seq, &mut self.status, self.started);
        let heartbeat_dir = self.options.run.dir.clone();
        let forking = self.config.selfplay.fork_fraction > 0.0;
        let mut next_forks = ForkPool::default();
        run::play_games(
            self.config,
            &self.options.run,
            &batch,
            observer,
            |chunk: Chunk| {
                let key = RunLayout::actor_chunk(&id, session, *seq);
                upload(store, &key, &chunk)?;
                *seq += 1;
                status.chunks += 1;
                status.games += chunk.games.len() as u64;
                status.positions += chunk.position_count() as u64;
                status.last_upload_unix_ms = remote::now_unix_ms();
                status.games_per_s =
                    status.games as f64 / started.elapsed().as_secs_f64().max(1e-9);
                remote::put_json(store, &RunLayout::actor_status(&id), status)?;
                tracing::info!(
                    "uploaded {key}: {} games, {} positions, network {}",
                    chunk.games.len(),
                    chunk.position_count(),
                    pointer.network
                );
                if forking {
                    next_forks.extend(&chunk.games);
                }
                remote::heartbeat(&heartbeat_dir);
                Ok(())
            },
        )?;
        if forking {
            self.forks = Arc::new(next_forks);
        }
        Ok(())
    }
}

/// Puts `chunk` at `key`, create-only: a key is never written twice.
fn upload(store: &Store, key: &str, chunk: &Chunk) -> Result<(), RunError> {
    let bytes = replay::encode_chunk(chunk).map_err(|error| replay::ReplayError::Encode {
        file: key.into(),
        error,
    })?;
    if bytes.len() as u64 > remote::MAX_CHUNK_BYTES {
        return Err(RunError::Remote(format!(
            "{key}: {} bytes, more than a learner accepts ({}): lower selfplay.games_per_iteration",
            bytes.len(),
            remote::MAX_CHUNK_BYTES
        )));
    }
    if !store.put_new(key, &bytes)? {
        return Err(RunError::Remote(format!(
            "{}: already holds another object; this actor never writes a key twice",
            store.location().name_of(key)
        )));
    }
    Ok(())
}
