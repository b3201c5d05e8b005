//! `brandubh train --role actor`: self-play only. Reads the run's configuration and the
//! newest network (the `latest` pointer) from the store, plays games with the run's
//! self-play settings, uploads them as immutable chunks `chunks/ACTOR/SSSSSSSS.brz`
//! (each tagged with the iteration of the network that played it), and repeats, looking
//! for a newer network after every `games_per_iteration` games. A kill loses only the games
//! still being played: a chunk is put whole or not at all.

use std::sync::Arc;
use std::time::{Duration, Instant};

use brandubh_run::config::RunConfig;
use brandubh_run::replay::{self, Chunk};
use brandubh_run::{RunDir, RunLayout};
use brandubh_store::Store;

use crate::remote::{self, ActorStatus, Pointer};
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
    let stored = remote::wait_for(
        "the run's config.toml (start the learner)",
        options.poll,
        || remote::stored_config(store),
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
    let mut actor = Actor::start(store, &stored, options)?;
    while options.max_chunks.is_none_or(|m| actor.uploaded_now() < m) {
        let pointer = remote::wait_for("the learner's first network", options.poll, || {
            remote::get_json::<Pointer>(store, RunLayout::LATEST)
        })?;
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
    /// The next chunk's sequence number.
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
    /// Continues the chunk numbering (and counts) of an earlier actor with the same id.
    fn start(
        store: &'a Store,
        config: &'a RunConfig,
        options: &'a ActorOptions,
    ) -> Result<Actor<'a>, RunError> {
        let id = &options.actor_id;
        let cache = RunDir::new(&options.run.dir);
        cache.create()?;
        let mut seq = 0;
        for prefix in [
            format!("{}/{id}", RunLayout::CHUNKS),
            RunLayout::rejected(&format!("{}/{id}", RunLayout::CHUNKS)),
        ] {
            for entry in store.list(&prefix)? {
                let key = entry.key.strip_prefix("rejected/").unwrap_or(&entry.key);
                if let Some((_, s)) = RunLayout::parse_actor_chunk(key) {
                    seq = seq.max(s + 1);
                }
            }
        }
        let status: ActorStatus = remote::get_json(store, &RunLayout::actor_status(id))?
            .unwrap_or_else(|| ActorStatus {
                actor: id.clone(),
                ..ActorStatus::default()
            });
        Ok(Actor {
            store,
            config,
            options,
            cache,
            seq,
            seed: brandubh_fs::mix64(config.seed ^ brandubh_fs::fnv1a64(id.as_bytes())),
            network: None,
            first_status: status.clone(),
            status,
            started: Instant::now(),
            forks: Arc::new(ForkPool::default()),
        })
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
        // Each segment's games are seeded from the chunk number it starts at: a restarted
        // actor replays only games that it never uploaded.
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
        let (store, id) = (self.store, self.options.actor_id.clone());
        let (seq, status, started) = (&mut self.seq, &mut self.status, self.started);
        let forking = self.config.selfplay.fork_fraction > 0.0;
        let mut next_forks = ForkPool::black_losses(self.config.selfplay.fork_black_losses);
        run::play_games(
            self.config,
            &self.options.run,
            &batch,
            observer,
            |chunk: Chunk| {
                let key = RunLayout::actor_chunk(&id, *seq);
                let bytes =
                    replay::encode_chunk(&chunk).map_err(|error| replay::ReplayError::Encode {
                        file: key.clone().into(),
                        error,
                    })?;
                store.put(&key, &bytes)?;
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
                Ok(())
            },
        )?;
        if forking {
            self.forks = Arc::new(next_forks);
        }
        Ok(())
    }
}
