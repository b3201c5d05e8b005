//! A learner and actors on one store (in memory or a local directory), in one process:
//! the layout they write, exactly-once consumption, restarts, untrusted and hostile
//! objects, the learner's lease, bounded iterations and a wiped store.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests may unwrap: a panic is a failed test"
)]

use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

use brandubh_net::{Device, checkpoint};
use brandubh_rules::Position;
use brandubh_run::config::RunConfig;
use brandubh_run::metrics;
use brandubh_run::replay::{self, ChunkInfo};
use brandubh_run::{RunDir, RunLayout};
use brandubh_store::{Store, content_hash};
use brandubh_train::actor::{self, ActorOptions};
use brandubh_train::learner::{self, LearnerOptions, quarantine_tag};
use brandubh_train::lease::Lease;
use brandubh_train::remote::{ConsumedRecord, MAX_CHUNK_BYTES, Pointer};
use brandubh_train::run::{NoEvaluation, Quiet, RunError};
use brandubh_train::status;

mod common;

use common::{options, tiny};

fn learner_options(dir: &Path, max_new: Option<u32>) -> LearnerOptions {
    LearnerOptions {
        run: options(dir, max_new),
        poll: Duration::from_millis(20),
        max_network_age: None,
        max_games: None,
        lease_ttl: Duration::from_secs(30),
        terminate: None,
    }
}

fn actor_options(dir: &Path, id: &str, chunks: Option<u64>) -> ActorOptions {
    ActorOptions {
        run: options(dir, None),
        actor_id: id.to_owned(),
        max_chunks: chunks,
        poll: Duration::from_millis(20),
    }
}

fn records(store: &Store) -> Vec<ConsumedRecord> {
    store
        .list(RunLayout::LEARNER)
        .unwrap()
        .iter()
        .filter(|e| RunLayout::parse_consumed(&e.key).is_some())
        .map(|e| serde_json::from_slice(&store.get(&e.key).unwrap().unwrap()).unwrap())
        .collect()
}

fn consumed_keys(store: &Store) -> Vec<String> {
    records(store)
        .iter()
        .flat_map(|r| r.chunks.iter().map(|c| c.key.clone()))
        .collect()
}

fn actor_keys(store: &Store) -> Vec<String> {
    store
        .list(RunLayout::CHUNKS)
        .unwrap()
        .into_iter()
        .map(|e| e.key)
        .filter(|k| RunLayout::parse_actor_chunk(k).is_some())
        .collect()
}

/// Two actors on threads and the learner until the run's two iterations are complete.
fn run_with_two_actors(store: &Store, tmp: &Path, config: &RunConfig) {
    std::thread::scope(|scope| {
        for id in ["a", "b"] {
            let dir = tmp.join(format!("actor-{id}"));
            scope.spawn(move || {
                actor::act(store, None, &actor_options(&dir, id, None), &mut Quiet).unwrap()
            });
        }
        let state = learner::learn(
            store,
            Some(config),
            &learner_options(&tmp.join("learner"), None),
            &mut Quiet,
            &mut NoEvaluation,
        )
        .unwrap();
        assert_eq!(state.iteration, config.iterations);
    });
}

#[test]
fn a_learner_and_two_actors_finish_a_run_consuming_each_chunk_once() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::open("memory://").unwrap();
    let config = tiny();
    run_with_two_actors(&store, tmp.path(), &config);
    // The store holds the run: config, state, every checkpoint, metrics, the pointer.
    let state: brandubh_run::RunState =
        serde_json::from_slice(&store.get(RunLayout::STATE).unwrap().unwrap()).unwrap();
    assert_eq!(state.iteration, 2);
    let pointer: Pointer =
        serde_json::from_slice(&store.get(RunLayout::LATEST).unwrap().unwrap()).unwrap();
    assert!(pointer.finished && pointer.network == 2, "{pointer:?}");
    let check = tmp.path().join("check");
    let dir = RunDir::new(&check);
    for i in 0..=2 {
        for key in checkpoint_files(i) {
            let bytes = store.get(&key).unwrap().expect(&key);
            brandubh_fs::write_atomic(&check.join(&key), &bytes).unwrap();
        }
        checkpoint::load(dir.checkpoint(i), &Device::flex(), None).unwrap();
    }
    let metrics = String::from_utf8(store.get(RunLayout::METRICS).unwrap().unwrap()).unwrap();
    assert_eq!(metrics.lines().count(), 2);
    // Every consumed chunk is an actor's, consumed once; each iteration had its games.
    let consumed = consumed_keys(&store);
    let unique: HashSet<&String> = consumed.iter().collect();
    assert_eq!(unique.len(), consumed.len(), "{consumed:?}");
    let uploaded: HashSet<String> = actor_keys(&store).into_iter().collect();
    assert!(unique.iter().all(|k| uploaded.contains(*k)));
    for r in records(&store) {
        let games: u64 = r.chunks.iter().map(|c| c.games).sum();
        assert!(
            games >= u64::from(config.selfplay.games_per_iteration),
            "{r:?}"
        );
    }
    assert_eq!(
        state.total_games,
        records(&store)
            .iter()
            .flat_map(|r| &r.chunks)
            .map(|c| c.games)
            .sum::<u64>()
    );
    // `status` reads it all back.
    let s = status::status(&store).unwrap();
    assert_eq!(s.checkpoints, [0, 1, 2]);
    assert_eq!(s.actors.len(), 2);
    let chunks: u64 = s.actors.iter().map(|a| a.chunks).sum();
    assert_eq!(chunks as usize, uploaded.len());
    assert_eq!(s.pending_chunks, uploaded.len() - consumed.len());
}

#[test]
fn the_learner_counts_the_actors_sparring_games_apart() {
    // Actors' chunks say which games sparred (chunk format version 3), so the learner's
    // metrics keep them out of the self-play rates as a local run does.
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::open("memory://").unwrap();
    let mut config = tiny();
    config.selfplay.sparring_fraction = 1.0;
    config.selfplay.sparring_depth = 1;
    run_with_two_actors(&store, tmp.path(), &config);
    let bytes = store.get(RunLayout::METRICS).unwrap().unwrap();
    let text = String::from_utf8(bytes).unwrap();
    let lines = metrics::parse_metrics(&text, Path::new(RunLayout::METRICS)).unwrap();
    assert_eq!(lines.len(), 2);
    for m in &lines {
        assert!(m.selfplay_games > 0);
        assert_eq!(m.sparring_games, m.selfplay_games, "{m:?}");
        // No game of the network against itself: no self-play rates to report.
        assert_eq!((m.white_win_rate, m.black_win_rate), (0.0, 0.0), "{m:?}");
    }
}

fn checkpoint_files(iteration: u32) -> Vec<String> {
    let stem = RunLayout::checkpoint(iteration);
    vec![format!("{stem}.json"), format!("{stem}.safetensors")]
}

#[test]
fn a_restarted_learner_redoes_an_iteration_with_the_same_chunks() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("store");
    let store = Store::open(root.to_str().unwrap()).unwrap();
    let mut config = tiny();
    config.iterations = 2;
    // Iteration 1 completes; the learner stops.
    std::thread::scope(|scope| {
        let dir = tmp.path().join("actor");
        let store = &store;
        scope.spawn(move || {
            actor::act(store, None, &actor_options(&dir, "a", Some(8)), &mut Quiet).unwrap()
        });
        learner::learn(
            store,
            Some(&config),
            &learner_options(&tmp.path().join("learner"), Some(1)),
            &mut Quiet,
            &mut NoEvaluation,
        )
        .unwrap();
    });
    // The actor, restarted with its id, writes four chunks of a new session: new keys,
    // never one of the first eight. Four, so that at least four wait for iteration 2
    // however many of the first eight the learner took (all that had arrived when it
    // looked: up to its most games, twice an iteration's).
    let again = actor_options(&tmp.path().join("actor"), "a", Some(4));
    assert_eq!(
        actor::act(&store, None, &again, &mut Quiet).unwrap().chunks,
        4
    );
    let keys = actor_keys(&store);
    assert_eq!(keys.len(), 12, "{keys:?}");
    let sessions: HashSet<u64> = keys
        .iter()
        .map(|k| RunLayout::parse_actor_chunk(k).unwrap().session)
        .collect();
    assert_eq!(sessions.len(), 2, "{keys:?}");
    // A crash after iteration 2's record, before its state: the record stays, the state
    // says 1, and a fresh cache on another machine continues.
    let consumed_1 = consumed_keys(&store);
    let pending: Vec<String> = actor_keys(&store)
        .into_iter()
        .filter(|k| !consumed_1.contains(k))
        .collect();
    assert!(pending.len() >= 4, "{pending:?}");
    let record = ConsumedRecord {
        iteration: 2,
        chunks: pending[..4]
            .iter()
            .zip(0..)
            .map(|(k, seq)| {
                let bytes = store.get(k).unwrap().unwrap();
                let chunk = replay::decode_chunk(&bytes, Path::new(k)).unwrap();
                brandubh_train::remote::ConsumedChunk::of(k, seq, &chunk, &content_hash(&bytes))
            })
            .collect(),
        ..ConsumedRecord::default()
    };
    store
        .put(
            &RunLayout::consumed(2),
            &serde_json::to_vec(&record).unwrap(),
        )
        .unwrap();
    let state = learner::learn(
        &store,
        None,
        &learner_options(&tmp.path().join("other-machine"), None),
        &mut Quiet,
        &mut NoEvaluation,
    )
    .unwrap();
    assert_eq!(state.iteration, 2);
    let records = records(&store);
    assert_eq!(records.len(), 2);
    assert_eq!(
        records[1], record,
        "the redone iteration used its recorded chunks"
    );
    let games: u64 = records
        .iter()
        .flat_map(|r| &r.chunks)
        .map(|c| c.games)
        .sum();
    assert_eq!(state.total_games, games);
    // The store is a plain directory of the same layout.
    assert!(root.join("checkpoints/iter-000002.safetensors").is_file());
    assert!(root.join("latest").is_file());
}

/// A chunk body as the replay format documents it (`brandubh_run::replay`), with a
/// move the rules refuse: the writer never produces one, so the test encodes it itself.
fn chunk_with_an_illegal_move(run: &str) -> Vec<u8> {
    #[derive(serde::Serialize)]
    struct Body {
        info: ChunkInfo,
        games: Vec<Game>,
    }
    #[derive(serde::Serialize)]
    struct Game {
        attackers: u64,
        defenders: u64,
        king: u8,
        side: u8,
        moves: Vec<[u8; 2]>,
        result: Outcome,
        positions: Vec<Recorded>,
    }
    /// ply, policy (legal-move index, probability), root value, full search.
    #[derive(serde::Serialize)]
    struct Recorded(u32, Vec<(u8, f32)>, f32, bool);
    #[derive(serde::Serialize)]
    enum Outcome {
        Unfinished,
    }
    let start = Position::start();
    // d1 (square 3) to e1 (4) as the first move: d1 holds an attacker, but White moves
    // first (RULES.md rule 1) and the attackers are Black's.
    let body = Body {
        info: ChunkInfo::new(run, 1),
        games: vec![Game {
            attackers: start.attackers().0,
            defenders: start.defenders().0,
            king: start.king().index() as u8,
            side: 0,
            moves: vec![[3, 4]],
            result: Outcome::Unfinished,
            positions: vec![Recorded(0, vec![(0, 1.0)], 0.0, true)],
        }],
    };
    let body = bincode::serde::encode_to_vec(&body, bincode::config::standard()).unwrap();
    let mut bytes = replay::MAGIC.to_vec();
    bytes.extend_from_slice(&replay::OLDEST_FORMAT_VERSION.to_le_bytes());
    bytes.extend_from_slice(&replay::ENCODING_VERSION.to_le_bytes());
    bytes.extend_from_slice(&(body.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&crc32fast::hash(&body).to_le_bytes());
    bytes.extend_from_slice(&body);
    bytes
}

#[test]
fn bad_chunks_are_moved_aside_and_never_trained_on() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::open("memory://").unwrap();
    let mut config = tiny();
    config.iterations = 1;
    let damaged = RunLayout::actor_chunk("evil", 1, 0);
    let illegal = RunLayout::actor_chunk("evil", 1, 1);
    let foreign = RunLayout::actor_chunk("evil", 1, 2);
    store.put(&damaged, b"BRZCHUNK but not really").unwrap();
    store
        .put(&illegal, &chunk_with_an_illegal_move(&config.name))
        .unwrap();
    store
        .put(&foreign, &chunk_with_an_illegal_move("another-run"))
        .unwrap();
    // Not an actor chunk's name: quarantined as well.
    store.put("chunks/notes.txt", b"hello").unwrap();
    std::thread::scope(|scope| {
        let dir = tmp.path().join("actor");
        let store = &store;
        scope.spawn(move || {
            actor::act(store, None, &actor_options(&dir, "good", None), &mut Quiet).unwrap()
        });
        learner::learn(
            store,
            Some(&config),
            &learner_options(&tmp.path().join("learner"), None),
            &mut Quiet,
            &mut NoEvaluation,
        )
        .unwrap();
    });
    for key in [&damaged, &illegal, &foreign, "chunks/notes.txt"] {
        assert_eq!(store.get(key).unwrap(), None, "{key} left in place");
        let aside = RunLayout::quarantined(&quarantine_tag(key));
        assert!(
            store.get(&aside).unwrap().is_some(),
            "{key} not moved aside"
        );
    }
    let consumed = consumed_keys(&store);
    assert!(!consumed.is_empty());
    assert!(
        consumed.iter().all(|k| k.starts_with("chunks/good/")),
        "{consumed:?}"
    );
    assert_eq!(status::status(&store).unwrap().quarantined, 4);
    let audit = status::audit(&store).unwrap();
    assert!(audit.problems.is_empty(), "{:?}", audit.problems);
    let reasons: Vec<(&str, &str)> = audit
        .quarantined
        .iter()
        .map(|(n, _)| (n.key.as_str(), n.reason.as_str()))
        .collect();
    for (key, needle) in [
        (damaged.as_str(), "truncated"),
        (illegal.as_str(), "game 0"),
        (foreign.as_str(), "illegal move"),
        ("chunks/notes.txt", "not a chunk key this version writes"),
    ] {
        assert!(
            reasons.iter().any(|(k, r)| *k == key && r.contains(needle)),
            "{key}: {reasons:?}"
        );
    }
}

#[test]
fn a_pointer_to_a_missing_network_is_a_one_line_error() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::open("memory://").unwrap();
    let config = tiny();
    store
        .put(
            RunLayout::CONFIG,
            config.to_toml_string().unwrap().as_bytes(),
        )
        .unwrap();
    let pointer = Pointer {
        iteration: 5,
        network: 5,
        files: vec![
            "checkpoints/iter-000005.json".into(),
            "checkpoints/iter-000005.safetensors".into(),
        ],
        finished: false,
        fencing: 1,
        hashes: Vec::new(),
    };
    let identity = brandubh_train::remote::RunIdentity::new("tiny");
    store
        .put(RunLayout::RUN, &serde_json::to_vec(&identity).unwrap())
        .unwrap();
    store
        .put(RunLayout::LATEST, &serde_json::to_vec(&pointer).unwrap())
        .unwrap();
    let fails = |id: &str| {
        let options = actor_options(&tmp.path().join("a"), id, Some(1));
        actor::act(&store, None, &options, &mut Quiet)
            .unwrap_err()
            .to_string()
    };
    let e = fails("a");
    assert!(
        e.starts_with(
            "memory://latest names network checkpoints/iter-000005, which cannot be fetched"
        ),
        "{e}"
    );
    assert!(!e.contains('\n'));
    // A pointer naming a file outside its network is refused before any download.
    let evil = Pointer {
        files: vec!["config.toml".into()],
        ..pointer
    };
    store
        .put(RunLayout::LATEST, &serde_json::to_vec(&evil).unwrap())
        .unwrap();
    let e = fails("a");
    assert!(
        e.contains("names config.toml, not a file of checkpoints/iter-000005."),
        "{e}"
    );
    // And a bad actor id.
    let e = fails("a/b");
    assert!(e.contains("actor id \"a/b\""), "{e}");
}

#[test]
fn a_second_learner_is_refused_and_one_that_lost_its_lease_stops() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::open("memory://").unwrap();
    let config = tiny();
    let held = Lease::acquire(&store, "host-1-first", Duration::from_secs(60)).unwrap();
    let e = learner::learn(
        &store,
        Some(&config),
        &learner_options(&tmp.path().join("learner"), Some(1)),
        &mut Quiet,
        &mut NoEvaluation,
    )
    .unwrap_err();
    assert!(matches!(e, RunError::LeaseHeld(_)), "{e}");
    let e = e.to_string();
    assert!(
        e.starts_with(
            "memory://learner/lease.json: the run is held by learner host-1-first until 20"
        ) && e.contains("fencing 1"),
        "{e}"
    );
    assert!(!e.contains('\n'));
    // It wrote nothing: the lease is the store's only object.
    let keys: Vec<String> = store.list("").unwrap().into_iter().map(|e| e.key).collect();
    assert_eq!(keys, [RunLayout::LEASE]);
    // A lease that expired is taken over (fencing 2); its old holder then cannot renew
    // and stops before writing.
    let short = Lease::acquire(&store, "host-2-second", Duration::from_millis(1));
    assert!(short.is_err());
    held.release().unwrap();
    let second = Lease::acquire(&store, "host-2-second", Duration::from_secs(60)).unwrap();
    assert_eq!(second.fencing(), 2);
    let stale = Lease::acquire(&store, "host-3-third", Duration::from_secs(60));
    assert!(stale.is_err());
    drop(held);
    let first_again = Lease::acquire(&store, "host-2-second", Duration::from_secs(60)).unwrap();
    assert_eq!(first_again.fencing(), 3);
    let e = second.renew().unwrap_err().to_string();
    assert!(
        e.contains("this learner lost the lease (learner host-2-second took it (fencing 3))"),
        "{e}"
    );
    assert!(second.ensure().is_err());
}

#[test]
fn a_wiped_store_is_a_one_line_error_not_a_new_run() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("store");
    let store = Store::open(root.to_str().unwrap()).unwrap();
    let config = tiny();
    let cache = tmp.path().join("learner");
    std::thread::scope(|scope| {
        let dir = tmp.path().join("actor");
        let store = &store;
        scope.spawn(move || {
            actor::act(store, None, &actor_options(&dir, "a", None), &mut Quiet).unwrap()
        });
        learner::learn(
            store,
            Some(&config),
            &learner_options(&cache, Some(1)),
            &mut Quiet,
            &mut NoEvaluation,
        )
        .unwrap();
        // Let the actor stop: the run is marked finished by hand.
        let mut pointer: Pointer =
            serde_json::from_slice(&store.get(RunLayout::LATEST).unwrap().unwrap()).unwrap();
        pointer.finished = true;
        store
            .put(RunLayout::LATEST, &serde_json::to_vec(&pointer).unwrap())
            .unwrap();
    });
    std::fs::remove_dir_all(&root).unwrap();
    let store = Store::open(root.to_str().unwrap()).unwrap();
    let e = learner::learn(
        &store,
        Some(&config),
        &learner_options(&cache, Some(1)),
        &mut Quiet,
        &mut NoEvaluation,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("holds no run (no run.json), but the cache")
            && e.contains("iteration 1): the store was wiped or replaced"),
        "{e}"
    );
    assert!(!e.contains('\n'));
    assert!(
        store.get(RunLayout::STATE).unwrap().is_none(),
        "a new run was started"
    );
}

#[test]
fn stray_keys_copies_and_oversized_objects_are_quarantined_with_their_reasons() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::open("memory://").unwrap();
    let config = tiny();
    // Before the run: a stray key in an actor's prefix and an object larger than a chunk.
    let stray = "chunks/a1/99999999.brz";
    store.put(stray, b"junk").unwrap();
    let big = RunLayout::actor_chunk("a2", 7, 0);
    store
        .put(&big, &vec![0u8; MAX_CHUNK_BYTES as usize + 1])
        .unwrap();
    std::thread::scope(|scope| {
        let dir = tmp.path().join("actor");
        let store = &store;
        scope.spawn(move || {
            actor::act(store, None, &actor_options(&dir, "a1", None), &mut Quiet).unwrap()
        });
        // Every chunk found is taken, so that the copy is looked at.
        let mut options = learner_options(&tmp.path().join("learner"), Some(1));
        options.max_games = Some(1000);
        let learn = |_| {
            learner::learn(
                store,
                Some(&config),
                &options,
                &mut Quiet,
                &mut NoEvaluation,
            )
            .unwrap()
        };
        learn(1);
        // A byte copy of a consumed chunk under another actor's prefix, with a key an
        // actor could have written.
        let first = records(store)[0].chunks[0].key.clone();
        let copy = RunLayout::actor_chunk("a2", 8, 0);
        store
            .put(&copy, &store.get(&first).unwrap().unwrap())
            .unwrap();
        learn(1);
    });
    // The stray key did not change how the actor names its chunks.
    assert!(
        actor_keys(&store)
            .iter()
            .all(|k| RunLayout::parse_actor_chunk(k).unwrap().seq < 1000),
        "{:?}",
        actor_keys(&store)
    );
    let audit = status::audit(&store).unwrap();
    assert!(audit.problems.is_empty(), "{:?}", audit.problems);
    assert_eq!(audit.lost_chunks(), 0);
    let reasons: Vec<String> = audit
        .quarantined
        .iter()
        .map(|(n, present)| {
            assert!(present);
            format!("{}: {}", n.key, n.reason)
        })
        .collect();
    assert_eq!(reasons.len(), 3, "{reasons:?}");
    assert!(
        reasons[0].starts_with(&format!("{stray}: not a chunk key")),
        "{reasons:?}"
    );
    assert!(
        reasons[1].starts_with(&format!("{big}: 16777217 bytes, more than the 16777216")),
        "{reasons:?}"
    );
    assert!(
        reasons[2].contains("a copy of a chunk consumed in iteration 1: chunks/a1/"),
        "{reasons:?}"
    );
}

#[test]
fn an_iteration_takes_at_most_its_most_games_and_counts_what_waits_or_is_too_old() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::open("memory://").unwrap();
    let mut config = tiny();
    config.iterations = 2;
    let cache = tmp.path().join("learner");
    let learn = |options: &LearnerOptions| {
        learner::learn(
            &store,
            Some(&config),
            options,
            &mut Quiet,
            &mut NoEvaluation,
        )
        .unwrap()
    };
    // The learner's first pointer, then twelve one-game chunks of network 0 waiting.
    learn(&learner_options(&cache, Some(0)));
    let a = actor_options(&tmp.path().join("a"), "a", Some(12));
    actor::act(&store, None, &a, &mut Quiet).unwrap();
    let mut options = learner_options(&cache, Some(1));
    options.max_games = Some(6);
    learn(&options);
    let first = &records(&store)[0];
    assert_eq!(first.chunks.iter().map(|c| c.games).sum::<u64>(), 6);
    assert_eq!(first.waiting, 6);
    // Iteration 2 trains only on games of network 1: the six left of network 0 are
    // consumed without training and counted.
    options.max_network_age = Some(0);
    std::thread::scope(|scope| {
        let b = actor_options(&tmp.path().join("b"), "b", None);
        let store = &store;
        scope.spawn(move || actor::act(store, None, &b, &mut Quiet).unwrap());
        learn(&options);
    });
    let second = &records(&store)[1];
    assert_eq!(second.stale.len(), 6, "{second:?}");
    assert!(second.chunks.iter().all(|c| c.tagged == 2), "{second:?}");
    let text = String::from_utf8(store.get(RunLayout::METRICS).unwrap().unwrap()).unwrap();
    let lines = metrics::parse_metrics(&text, Path::new(RunLayout::METRICS)).unwrap();
    assert_eq!((lines[0].waiting_chunks, lines[0].stale_games), (6, 0));
    assert_eq!(lines[1].stale_games, 6);
    let s = status::status(&store).unwrap();
    assert_eq!(s.stale_games, 6);
    let audit = status::audit(&store).unwrap();
    assert!(audit.problems.is_empty(), "{:?}", audit.problems);
    assert_eq!((audit.stale_chunks, audit.stale_games), (6, 6));
}
