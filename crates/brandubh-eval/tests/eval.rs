//! Matches, agents and the ladder through the public API.

use std::path::PathBuf;
use std::sync::Mutex;

use brandubh_eval::ladder::{
    GAMES_FILE, LADDER_DIR, LadderConfig, PLOT_FILE, RATINGS_FILE, ladder,
};
use brandubh_eval::{
    Agent, AgentSpec, EvalError, MatchConfig, MatchResult, PlayerFactory, latest_checkpoint,
    list_checkpoints, run_matches,
};
use brandubh_net::checkpoint::{self, SaveOptions};
use brandubh_net::{Device, NetConfig};

/// A fresh directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("brandubh-eval-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A run directory with tiny untrained checkpoints at these steps.
fn fake_run(tag: &str, steps: &[u64]) -> TempDir {
    let dir = TempDir::new(tag);
    let ckpts = dir.0.join("checkpoints");
    std::fs::create_dir_all(&ckpts).unwrap();
    let config = NetConfig::new().with_channels(8).with_blocks(1);
    for (i, &step) in steps.iter().enumerate() {
        let model = config.init(&Device::flex());
        let _ = i;
        checkpoint::save(
            ckpts.join(format!("iter-{:06}", i + 1)),
            &model,
            &SaveOptions::at_step(step),
        )
        .unwrap();
    }
    dir
}

fn config(matches: u32, seed: u64) -> MatchConfig {
    MatchConfig {
        matches,
        threads: 2,
        seed,
        ..MatchConfig::default()
    }
}

#[test]
fn alphabeta_2_beats_random_in_at_least_95_percent_of_20_matches() {
    let a = Agent::from_spec("alphabeta:2").unwrap();
    let b = Agent::from_spec("random").unwrap();
    let report = run_matches(&a, &b, &config(20, 1), &|_| {}).unwrap();
    assert_eq!(report.matches, 20);
    assert!(
        report.record.wins >= 19,
        "alphabeta:2 won only {} of 20 matches: {report}",
        report.record.wins
    );
    assert!(report.elo.low > 0.0, "{report}");
}

#[test]
fn results_do_not_depend_on_the_thread_count_and_progress_is_reported() {
    let a = Agent::from_spec("greedy").unwrap();
    let b = Agent::from_spec("random").unwrap();
    let seen = Mutex::new(Vec::new());
    let one = run_matches(
        &a,
        &b,
        &MatchConfig {
            threads: 1,
            ..config(6, 5)
        },
        &|p| {
            seen.lock().unwrap().push(p.done);
        },
    )
    .unwrap();
    let two = run_matches(&a, &b, &config(6, 5), &|_| {}).unwrap();
    assert_eq!(one.match_records, two.match_records);
    let mut seen = seen.into_inner().unwrap();
    seen.sort_unstable();
    assert_eq!(seen, vec![1, 2, 3, 4, 5, 6]);
    // Another seed, other openings.
    let other = run_matches(&a, &b, &config(6, 6), &|_| {}).unwrap();
    assert_ne!(one.match_records, other.match_records);
}

#[test]
fn report_counts_add_up_and_serialize() {
    let a = Agent::from_spec("greedy").unwrap();
    let b = Agent::from_spec("mcts:30@rollout=40").unwrap();
    let report = run_matches(
        &a,
        &b,
        &MatchConfig {
            ply_cap: 60,
            ..config(4, 9)
        },
        &|_| {},
    )
    .unwrap();
    let g = &report.games;
    assert_eq!(g.games, 8);
    assert_eq!(
        g.a_wins_as_white
            + g.a_wins_as_black
            + g.b_wins_as_white
            + g.b_wins_as_black
            + g.unfinished,
        8
    );
    assert_eq!(report.record.total(), 4);
    for m in &report.match_records {
        assert_eq!(m.games[0].white, brandubh_eval::Contestant::A);
        assert_eq!(m.games[1].white, brandubh_eval::Contestant::B);
        assert!(m.games.iter().all(|g| g.plies <= 60));
        assert_eq!(
            m.result,
            brandubh_eval::score_match(&m.games[0], &m.games[1])
        );
        let opening = brandubh_eval::Opening::parse(&m.opening).unwrap();
        assert!((2..=4).contains(&opening.moves().len()));
    }
    let json: serde_json::Value = serde_json::to_value(&report).unwrap();
    for key in [
        "a",
        "b",
        "seed",
        "ply_cap",
        "matches",
        "record",
        "match_score",
        "games",
        "game_score",
        "mean_game_plies",
        "elo",
        "seconds",
        "match_records",
    ] {
        assert!(json.get(key).is_some(), "missing {key}: {json}");
    }
    assert_eq!(json["b"], "mcts:30@rollout=40");
    let summary = report.summary("greedy");
    assert_eq!(summary.matches, 4);
    assert_eq!(summary.wins, report.record.wins);
    let _ = MatchResult::Draw;
}

#[test]
fn bad_match_settings_and_missing_runs_are_one_line_errors() {
    let a = Agent::from_spec("random").unwrap();
    let err = run_matches(
        &a,
        &a,
        &MatchConfig {
            matches: 0,
            ..config(1, 1)
        },
        &|_| {},
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid setting matches = 0: expected 1 to 1000000"
    );
    let err = Agent::from_spec("run:/nonexistent/brandubh-run")
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "agent run:/nonexistent/brandubh-run: /nonexistent/brandubh-run: not a directory (expected a run directory)"
    );
    let err = Agent::from_spec("ckpt:/nonexistent/iter-000001")
        .unwrap_err()
        .to_string();
    assert!(err.contains("no such checkpoint"), "{err}");
    assert!(matches!(
        Agent::from_spec("mcts:x"),
        Err(EvalError::Spec(_))
    ));
    let empty = TempDir::new("empty-run");
    let err = latest_checkpoint(&empty.0).unwrap_err().to_string();
    assert!(err.ends_with("checkpoints)"), "{err}");
    assert!(!err.contains('\n'));
}

#[test]
fn network_agents_load_the_latest_checkpoint_and_play() {
    let run = fake_run("net", &[10, 30, 20]);
    let list = list_checkpoints(&run.0).unwrap();
    let steps: Vec<u64> = list.iter().map(|c| c.meta.step).collect();
    assert_eq!(steps, vec![10, 20, 30]);
    // A stray file is ignored.
    std::fs::write(run.0.join("checkpoints/notes.json"), "{}").unwrap();
    let latest = latest_checkpoint(&run.0).unwrap();
    assert_eq!(latest.name, "iter-000002");
    let spec = format!("run:{}@sims=8", run.0.display());
    let net = Agent::from_spec(&spec).unwrap();
    assert_eq!(net.checkpoint().unwrap().meta.step, 30);
    assert_eq!(net.name(), spec);
    let ckpt =
        Agent::from_spec(&format!("ckpt:{}@sims=4@algo=puct", list[0].stem.display())).unwrap();
    let report = run_matches(
        &net,
        &ckpt,
        &MatchConfig {
            ply_cap: 40,
            ..config(2, 3)
        },
        &|_| {},
    )
    .unwrap();
    assert_eq!(report.games.games, 4);
    let _ = AgentSpec::Random;
}

#[test]
fn the_ladder_rates_checkpoints_and_reuses_stored_games() {
    let run = fake_run("ladder", &[100, 200, 300]);
    let config = LadderConfig {
        baselines: vec![AgentSpec::Greedy],
        matches: 2,
        neighbours: 1,
        simulations: 4,
        threads: 2,
        ply_cap: 40,
        ..LadderConfig::default()
    };
    let first = ladder(&run.0, &config, &|_| {}).unwrap();
    // Pairings: greedy-random; 3 checkpoints x 2 baselines; 2 neighbour pairs = 9.
    assert_eq!(first.matches_played, 18);
    assert_eq!(first.matches_reused, 0);
    assert_eq!(first.entries.len(), 5);
    let random = first.entries.iter().find(|e| e.name == "random").unwrap();
    assert_eq!(random.rating.elo, 0.0);
    assert!(
        first
            .entries
            .iter()
            .all(|e| e.rating.elo.is_finite() && e.games > 0)
    );
    let ladder_dir = run.0.join(LADDER_DIR);
    let lines = std::fs::read_to_string(ladder_dir.join(GAMES_FILE)).unwrap();
    assert_eq!(lines.lines().count(), 18);
    assert!(ladder_dir.join(RATINGS_FILE).is_file());
    assert_eq!(&std::fs::read(run.0.join(PLOT_FILE)).unwrap()[1..4], b"PNG");
    let table = first.table();
    assert!(
        table.contains("iter-000003") && table.contains("greedy"),
        "{table}"
    );

    // Nothing new to play: the same ratings.
    let again = ladder(&run.0, &config, &|_| {}).unwrap();
    assert_eq!(again.matches_played, 0);
    assert_eq!(again.matches_reused, 18);
    assert_eq!(again.entries, first.entries);

    // One more match per pairing plays only that.
    let more = ladder(
        &run.0,
        &LadderConfig {
            matches: 3,
            ..config.clone()
        },
        &|_| {},
    )
    .unwrap();
    assert_eq!(more.matches_played, 9);
    let lines = std::fs::read_to_string(ladder_dir.join(GAMES_FILE)).unwrap();
    assert_eq!(lines.lines().count(), 27);
}
