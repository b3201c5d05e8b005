//! `brandubh status --run LOCATION [--audit]`: a run's state read from its directory or
//! store, without writing anything; with `--audit`, the run's books checked.

use std::collections::{BTreeMap, HashMap, HashSet};

use brandubh_run::{RunLayout, RunState};
use brandubh_store::Store;

use crate::learner::{QuarantineNote, quarantine_tag};
use crate::lease::LeaseRecord;
use crate::remote::{self, ActorStatus, ConsumedRecord, Pointer, RunIdentity};
use crate::run::RunError;

/// What `brandubh status` shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunStatus {
    /// The run's name and planned iterations (from `config.toml`), if it has one.
    pub config: Option<(String, u32)>,
    /// The run's identity (`run.json`) of a store run.
    pub identity: Option<RunIdentity>,
    /// `state.json`, if an iteration (or the start) is recorded.
    pub state: Option<RunState>,
    /// The iterations of the checkpoints present.
    pub checkpoints: Vec<u32>,
    /// The `latest` pointer of a store run.
    pub latest: Option<Pointer>,
    /// The learner's lease of a store run.
    pub lease: Option<LeaseRecord>,
    /// The chunks of a directory run (`--role all`).
    pub local_chunks: usize,
    /// Per actor of a store run, by id.
    pub actors: Vec<ActorRow>,
    /// Actor chunks no iteration has consumed yet.
    pub pending_chunks: usize,
    /// Objects under `chunks/` that are not actor chunks, waiting for the learner's
    /// quarantine.
    pub foreign_objects: usize,
    /// Objects in quarantine.
    pub quarantined: usize,
    /// Games consumed but not trained on (too old), over the run.
    pub stale_games: u64,
    /// Chunks the last recorded iteration left waiting (it had its most games).
    pub waiting_chunks: u64,
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

/// The learner's records of a store run, read.
struct Records(Vec<ConsumedRecord>);

impl Records {
    fn read(store: &Store) -> Result<Records, RunError> {
        let mut records = Vec::new();
        for entry in store.list(RunLayout::LEARNER)? {
            if RunLayout::parse_consumed(&entry.key).is_none() {
                continue;
            }
            if let Some(record) = remote::get_json::<ConsumedRecord>(store, &entry.key)? {
                records.push(record);
            }
        }
        Ok(Records(records))
    }

    /// Every consumed key: (key, games, iteration, trained).
    fn consumed(&self) -> impl Iterator<Item = (&str, u64, u32, bool)> {
        self.0.iter().flat_map(|r| {
            let trained = r
                .chunks
                .iter()
                .map(move |c| (c.key.as_str(), c.games, r.iteration, true));
            let stale = r
                .stale
                .iter()
                .map(move |c| (c.key.as_str(), c.games, r.iteration, false));
            let dropped = r
                .dropped
                .iter()
                .map(move |k| (k.as_str(), 0, r.iteration, false));
            trained.chain(stale).chain(dropped)
        })
    }
}

/// Reads the status of the run in `store`.
pub fn status(store: &Store) -> Result<RunStatus, RunError> {
    let mut out = RunStatus {
        config: remote::stored_config(store)?.map(|c| (c.name, c.iterations)),
        identity: remote::stored_identity(store)?,
        state: remote::get_json(store, RunLayout::STATE)?,
        latest: remote::get_json(store, RunLayout::LATEST)?,
        lease: remote::get_json(store, RunLayout::LEASE).unwrap_or(None),
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
    let records = Records::read(store)?;
    let mut rows: BTreeMap<String, ActorRow> = BTreeMap::new();
    let mut consumed = HashSet::new();
    for (key, games, _, trained) in records.consumed() {
        consumed.insert(key.to_owned());
        if !trained {
            out.stale_games += games;
        }
        if let Some(parsed) = RunLayout::parse_actor_chunk(key) {
            let row = rows.entry(parsed.actor.to_owned()).or_default();
            row.consumed_chunks += 1;
            row.consumed_games += games;
        }
    }
    out.waiting_chunks = records
        .0
        .iter()
        .max_by_key(|r| r.iteration)
        .map_or(0, |r| r.waiting);
    for entry in store.list(RunLayout::CHUNKS)? {
        match RunLayout::parse_actor_chunk(&entry.key) {
            Some(parsed) => {
                rows.entry(parsed.actor.to_owned()).or_default().chunks += 1;
                out.pending_chunks += usize::from(!consumed.contains(&entry.key));
            }
            None if brandubh_run::replay::parse_chunk_file_name(
                entry.key.rsplit('/').next().unwrap_or_default(),
            )
            .is_some() =>
            {
                out.local_chunks += 1;
            }
            None => out.foreign_objects += 1,
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
    }
    out.actors = rows.into_values().collect();
    out.quarantined = store
        .list(&format!("{}/objects", RunLayout::QUARANTINE))?
        .len();
    Ok(out)
}

/// What `brandubh status --audit` finds: every object under `chunks/` consumed exactly
/// once, pending, or quarantined with its reason, and the learner's records, state and
/// pointer in agreement.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Audit {
    /// Iterations with a record.
    pub records: usize,
    /// Chunks and games trained on.
    pub trained_chunks: u64,
    /// Games in them.
    pub trained_games: u64,
    /// Chunks consumed without training (too old), and their games.
    pub stale_chunks: u64,
    /// Games in them.
    pub stale_games: u64,
    /// Actor chunks not consumed yet.
    pub pending: Vec<String>,
    /// Objects under `chunks/` that are no actor chunk, not quarantined yet.
    pub foreign: Vec<String>,
    /// Quarantined objects: the note, and whether the object is in place.
    pub quarantined: Vec<(QuarantineNote, bool)>,
    /// Quarantined objects without a note.
    pub unexplained: Vec<String>,
    /// Per actor: (id, chunks it reported uploading, chunks of its found consumed or
    /// pending).
    pub actors: Vec<(String, u64, u64)>,
    /// Everything that does not balance, one line each (empty: the books balance).
    pub problems: Vec<String>,
}

impl Audit {
    /// Chunks an actor reported uploading that are neither consumed nor pending.
    #[must_use]
    pub fn lost_chunks(&self) -> u64 {
        self.actors
            .iter()
            .map(|(_, reported, found)| reported.saturating_sub(*found))
            .sum()
    }
}

/// Audits the books of the run in `store`, writing nothing.
pub fn audit(store: &Store) -> Result<Audit, RunError> {
    let records = Records::read(store)?;
    let mut out = Audit {
        records: records.0.len(),
        ..Audit::default()
    };
    let listed: HashMap<String, u64> = store
        .list(RunLayout::CHUNKS)?
        .into_iter()
        .map(|e| (e.key, e.size))
        .collect();
    let mut seen: HashMap<&str, u32> = HashMap::new();
    let mut hashes: HashMap<&str, &str> = HashMap::new();
    let mut found: BTreeMap<String, u64> = BTreeMap::new();
    for record in &records.0 {
        for c in record.consumed() {
            if let Some(first) = seen.insert(&c.key, record.iteration) {
                out.problems.push(format!(
                    "{} consumed twice: in iterations {first} and {}",
                    c.key, record.iteration
                ));
            }
            if !c.sha256.is_empty()
                && let Some(first) = hashes.insert(&c.sha256, &c.key)
            {
                out.problems.push(format!(
                    "{} has the content of {first}: trained twice",
                    c.key
                ));
            }
            if !listed.contains_key(&c.key) {
                out.problems.push(format!(
                    "{} consumed in iteration {} but missing from the store",
                    c.key, record.iteration
                ));
            }
        }
    }
    for (key, games, _, trained) in records.consumed() {
        if trained {
            out.trained_chunks += 1;
            out.trained_games += games;
        } else {
            out.stale_chunks += 1;
            out.stale_games += games;
        }
        if let Some(parsed) = RunLayout::parse_actor_chunk(key) {
            *found.entry(parsed.actor.to_owned()).or_default() += 1;
        }
    }
    for key in listed.keys() {
        if seen.contains_key(key.as_str()) {
            continue;
        }
        match RunLayout::parse_actor_chunk(key) {
            Some(parsed) => {
                *found.entry(parsed.actor.to_owned()).or_default() += 1;
                out.pending.push(key.clone());
            }
            None => out.foreign.push(key.clone()),
        }
    }
    out.pending.sort();
    out.foreign.sort();
    audit_quarantine(store, &mut out)?;
    audit_actors(store, &found, &mut out)?;
    audit_state(store, &records, &mut out)?;
    Ok(out)
}

/// The quarantine: every object with its note.
fn audit_quarantine(store: &Store, out: &mut Audit) -> Result<(), RunError> {
    let objects: HashSet<String> = store
        .list(&format!("{}/objects", RunLayout::QUARANTINE))?
        .into_iter()
        .map(|e| e.key)
        .collect();
    let mut explained = HashSet::new();
    for entry in store.list(&format!("{}/reasons", RunLayout::QUARANTINE))? {
        if RunLayout::parse_quarantine_reason(&entry.key).is_none() {
            continue;
        }
        let Some(note) = remote::get_json::<QuarantineNote>(store, &entry.key)? else {
            continue;
        };
        let object = RunLayout::quarantined(&quarantine_tag(&note.key));
        let present = objects.contains(&object);
        explained.insert(object);
        out.quarantined.push((note, present));
    }
    out.quarantined.sort_by_key(|(note, _)| note.unix_ms);
    out.unexplained = objects.difference(&explained).cloned().collect();
    out.unexplained.sort();
    for key in &out.unexplained {
        out.problems
            .push(format!("{key} quarantined without a reason"));
    }
    Ok(())
}

/// What each actor reported uploading against what is found of it.
fn audit_actors(
    store: &Store,
    found: &BTreeMap<String, u64>,
    out: &mut Audit,
) -> Result<(), RunError> {
    for entry in store.list(RunLayout::ACTORS)? {
        let Some(status) = remote::get_json::<ActorStatus>(store, &entry.key)? else {
            continue;
        };
        let have = found.get(&status.actor).copied().unwrap_or(0);
        if have < status.chunks {
            out.problems.push(format!(
                "actor {} reported {} chunks uploaded, {have} found: {} lost",
                status.actor,
                status.chunks,
                status.chunks - have
            ));
        }
        out.actors.push((status.actor, status.chunks, have));
    }
    Ok(())
}

/// The records against `state.json` and `latest`.
fn audit_state(store: &Store, records: &Records, out: &mut Audit) -> Result<(), RunError> {
    let state: Option<RunState> = remote::get_json(store, RunLayout::STATE)?;
    let done = state.as_ref().map_or(0, |s| s.iteration);
    let games: u64 = records
        .0
        .iter()
        .filter(|r| r.iteration <= done)
        .flat_map(|r| &r.chunks)
        .map(|c| c.games)
        .sum();
    if let Some(s) = &state
        && s.total_games != games
    {
        out.problems.push(format!(
            "state.json counts {} games in {done} iterations, the records {games}",
            s.total_games
        ));
    }
    for r in &records.0 {
        if r.iteration > done + 1 {
            out.problems.push(format!(
                "a record of iteration {}, but state.json is at {done}",
                r.iteration
            ));
        }
    }
    let latest: Option<Pointer> = remote::get_json(store, RunLayout::LATEST)?;
    if let Some(p) = latest
        && p.iteration > done
    {
        out.problems.push(format!(
            "latest names iteration {}, state.json {done}",
            p.iteration
        ));
    }
    Ok(())
}
