//! `brandubh status --run LOCATION`: a run's state read from its directory or store,
//! without writing anything.

use std::collections::BTreeMap;

use brandubh_run::{RunLayout, RunState};
use brandubh_store::Store;

use crate::remote::{self, ActorStatus, ConsumedRecord, Pointer};
use crate::run::RunError;

/// What `brandubh status` shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunStatus {
    /// The run's name and planned iterations (from `config.toml`), if it has one.
    pub config: Option<(String, u32)>,
    /// `state.json`, if an iteration (or the start) is recorded.
    pub state: Option<RunState>,
    /// The iterations of the checkpoints present.
    pub checkpoints: Vec<u32>,
    /// The `latest` pointer of a store run.
    pub latest: Option<Pointer>,
    /// The chunks of a directory run (`--role all`).
    pub local_chunks: usize,
    /// Per actor of a store run, by id.
    pub actors: Vec<ActorRow>,
    /// Actor chunks no iteration has consumed yet.
    pub pending_chunks: usize,
    /// Chunks moved aside by the learner.
    pub rejected_chunks: usize,
}

/// One actor of a store run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ActorRow {
    /// The actor's id.
    pub actor: String,
    /// Its chunks in the store (consumed or not).
    pub chunks: u64,
    /// Those the learner has consumed (trained on, or dropped as too old).
    pub consumed_chunks: u64,
    /// Games consumed by the learner.
    pub consumed_games: u64,
    /// What the actor last wrote about itself.
    pub status: Option<ActorStatus>,
}

/// Reads the status of the run in `store`.
pub fn status(store: &Store) -> Result<RunStatus, RunError> {
    let mut out = RunStatus {
        config: remote::stored_config(store)?.map(|c| (c.name, c.iterations)),
        state: remote::get_json(store, RunLayout::STATE)?,
        latest: remote::get_json(store, RunLayout::LATEST)?,
        ..RunStatus::default()
    };
    let prefix = format!(
        "{}/{}",
        RunLayout::CHECKPOINTS,
        brandubh_run::layout::CHECKPOINT_PREFIX
    );
    for entry in store.list(RunLayout::CHECKPOINTS)? {
        let digits = entry
            .key
            .strip_prefix(&prefix)
            .and_then(|r| r.split('.').next());
        if let Some(n) = digits.and_then(|d| d.parse::<u32>().ok()) {
            out.checkpoints.push(n);
        }
    }
    out.checkpoints.dedup();
    let mut rows: BTreeMap<String, ActorRow> = BTreeMap::new();
    for entry in store.list(RunLayout::LEARNER)? {
        if RunLayout::parse_consumed(&entry.key).is_none() {
            continue;
        }
        let record: Option<ConsumedRecord> = remote::get_json(store, &entry.key)?;
        for c in record.iter().flat_map(|r| &r.chunks) {
            if let Some((actor, _)) = RunLayout::parse_actor_chunk(&c.key) {
                let row = rows.entry(actor.to_owned()).or_default();
                row.consumed_chunks += 1;
                row.consumed_games += c.games;
            }
        }
        for key in record.iter().flat_map(|r| &r.dropped) {
            if let Some((actor, _)) = RunLayout::parse_actor_chunk(key) {
                rows.entry(actor.to_owned()).or_default().consumed_chunks += 1;
            }
        }
    }
    let chunk_keys = store.list(RunLayout::CHUNKS)?;
    for entry in &chunk_keys {
        match RunLayout::parse_actor_chunk(&entry.key) {
            Some((actor, _)) => rows.entry(actor.to_owned()).or_default().chunks += 1,
            None => out.local_chunks += 1,
        }
    }
    for entry in store.list(RunLayout::ACTORS)? {
        let Some(actor) = entry
            .key
            .strip_prefix("actors/")
            .and_then(|n| n.strip_suffix(".json"))
        else {
            continue;
        };
        rows.entry(actor.to_owned()).or_default().status = remote::get_json(store, &entry.key)?;
    }
    for (actor, row) in &mut rows {
        row.actor.clone_from(actor);
        out.pending_chunks += row.chunks.saturating_sub(row.consumed_chunks) as usize;
    }
    out.actors = rows.into_values().collect();
    out.rejected_chunks = store.list(RunLayout::REJECTED)?.len();
    Ok(out)
}
