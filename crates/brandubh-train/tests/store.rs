//! A learner and actors on one store (in memory or a local directory), in one process:
//! the layout they write, exactly-once consumption, restarts, and untrusted chunks.

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
use brandubh_store::Store;
use brandubh_train::actor::{self, ActorOptions};
use brandubh_train::learner::{self, LearnerOptions};
use brandubh_train::remote::{ConsumedRecord, Pointer};
use brandubh_train::run::{NoEvaluation, Quiet};
use brandubh_train::status;

mod common;

use common::{options, tiny};

fn learner_options(dir: &Path, max_new: Option<u32>) -> LearnerOptions {
    LearnerOptions {
        run: options(dir, max_new),
        poll: Duration::from_millis(20),
        max_network_age: None,
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
    // The actor, restarted with its id, continues its numbering: chunks 8 to 11. Four, so
    // that at least four wait for iteration 2 however many of the first eight the learner
    // took (all that had arrived when it looked: with fast self-play, as many as eight).
    let again = actor_options(&tmp.path().join("actor"), "a", Some(4));
    assert_eq!(
        actor::act(&store, None, &again, &mut Quiet).unwrap().chunks,
        4
    );
    let keys = actor_keys(&store);
    assert_eq!(keys.len(), 12, "{keys:?}");
    assert_eq!(keys.last(), Some(&RunLayout::actor_chunk("a", 11)));
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
                let chunk =
                    replay::decode_chunk(&store.get(k).unwrap().unwrap(), Path::new(k)).unwrap();
                brandubh_train::remote::ConsumedChunk::of(k, seq, &chunk)
            })
            .collect(),
        dropped: Vec::new(),
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
    let damaged = RunLayout::actor_chunk("evil", 0);
    let illegal = RunLayout::actor_chunk("evil", 1);
    let foreign = RunLayout::actor_chunk("evil", 2);
    store.put(&damaged, b"BRZCHUNK but not really").unwrap();
    store
        .put(&illegal, &chunk_with_an_illegal_move(&config.name))
        .unwrap();
    store
        .put(&foreign, &chunk_with_an_illegal_move("another-run"))
        .unwrap();
    // Not an actor chunk's name: not the learner's business, left alone.
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
    for key in [&damaged, &illegal, &foreign] {
        assert_eq!(store.get(key).unwrap(), None, "{key} left in place");
        assert!(
            store.get(&RunLayout::rejected(key)).unwrap().is_some(),
            "{key} not moved aside"
        );
    }
    assert!(store.get("chunks/notes.txt").unwrap().is_some());
    let consumed = consumed_keys(&store);
    assert!(!consumed.is_empty());
    assert!(
        consumed.iter().all(|k| k.starts_with("chunks/good/")),
        "{consumed:?}"
    );
    assert_eq!(status::status(&store).unwrap().rejected_chunks, 3);
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
    };
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
