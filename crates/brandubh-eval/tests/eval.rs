//! Matches, agents and the ladder through the public API.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests may unwrap: a panic is a failed test"
)]

use std::sync::Mutex;

use brandubh_eval::ladder::{LadderConfig, ladder};
use brandubh_eval::openings::Openings;
use brandubh_eval::runner::Record;
use brandubh_eval::runner::play_match_game;
use brandubh_eval::training::iteration_entrants;
use brandubh_eval::{
    AgentSpec, Contestant, Entrant, EvalError, MatchConfig, MatchResult, PlayerFactory, Sprt,
    SprtConfig, latest_checkpoint, list_checkpoints, run_matches, run_sprt,
};
use brandubh_net::checkpoint::{self, SaveOptions};
use brandubh_net::{Device, NetConfig};
use brandubh_run::RunDir;
use brandubh_run::config::EvaluationConfig;
use brandubh_search::{Algorithm, SearchSettings};

/// A run directory with tiny untrained checkpoints at these steps.
fn fake_run(steps: &[u64]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::new(dir.path());
    let config = NetConfig::new().with_channels(8).with_blocks(1);
    for (i, &step) in steps.iter().enumerate() {
        let model = config.init(&Device::flex());
        checkpoint::save(
            run.checkpoint(i as u32 + 1),
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
    let a = Entrant::from_spec("alphabeta:2").unwrap();
    let b = Entrant::from_spec("random").unwrap();
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
    let a = Entrant::from_spec("greedy").unwrap();
    let b = Entrant::from_spec("random").unwrap();
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

/// A sequential test counts the matches in index order: it stops after the same matches,
/// with the same verdict, on one thread or several, and at the first prefix of the fixed
/// series of the same seed at which the test decides.
#[test]
fn a_sequential_test_counts_matches_in_order_whatever_the_threads() {
    let run = fake_run(&[10]);
    let list = list_checkpoints(run.path()).unwrap();
    let net = format!("ckpt:{}@sims=4", list[0].stem.display());
    for (a, b, elo1, max) in [
        ("random", "random", 100.0, 400),
        ("greedy", "random", 100.0, 400),
        (net.as_str(), "random", 200.0, 40),
    ] {
        let (a, b) = (
            Entrant::from_spec(a).unwrap(),
            Entrant::from_spec(b).unwrap(),
        );
        let sprt = Sprt::new(SprtConfig {
            elo1,
            max_matches: max,
            ..SprtConfig::default()
        })
        .unwrap();
        let counted = Mutex::new(Vec::new());
        let one = run_sprt(
            &a,
            &b,
            &MatchConfig {
                threads: 1,
                ply_cap: 60,
                ..config(1, 8)
            },
            &sprt,
            &|p| counted.lock().unwrap().push((p.done, p.llr.is_some())),
        )
        .unwrap();
        let three = run_sprt(
            &a,
            &b,
            &MatchConfig {
                threads: 3,
                ply_cap: 60,
                ..config(1, 8)
            },
            &sprt,
            &|_| {},
        )
        .unwrap();
        let t = one.sprt.unwrap();
        assert_eq!(one.match_records, three.match_records, "{one}");
        // Workers start matches at most a window ahead of the count (16 per worker).
        assert!(t.played_past_stop <= 16, "{t:?}");
        assert!(three.sprt.unwrap().played_past_stop <= 3 * 16);
        assert_eq!(t.verdict, three.sprt.unwrap().verdict);
        assert_eq!(
            (t.matches, one.matches),
            (one.match_records.len() as u32, t.matches)
        );
        // Progress counted matches in order, each count once, up to the stop.
        let counted = counted.into_inner().unwrap();
        assert!(counted.windows(2).all(|w| w[0].0 < w[1].0), "{counted:?}");
        assert!(counted.iter().all(|c| c.1), "{counted:?}");
        assert_eq!(counted.last().map(|c| c.0), Some(t.matches));
        // The fixed series of the same seed starts with the same matches; the test decides
        // at the last of them and at none before.
        let fixed = run_matches(
            &a,
            &b,
            &MatchConfig {
                ply_cap: 60,
                ..config(t.matches, 8)
            },
            &|_| {},
        )
        .unwrap();
        assert_eq!(fixed.match_records, one.match_records);
        let mut record = Record::default();
        for (i, m) in fixed.match_records.iter().enumerate() {
            record.add(m.result, Contestant::A);
            let decided = sprt.decide(&record);
            if i + 1 < fixed.match_records.len() {
                assert_eq!(decided, None, "decided after {} matches", i + 1);
            } else {
                assert_eq!(decided, Some(t.verdict));
            }
        }
        assert_eq!(one.record, record);
        assert!((t.llr - sprt.llr(&record)).abs() < 1e-12);
    }
}

/// Network agents' games are played in batches (several games per evaluator call); the
/// moves must be exactly those of playing each game alone.
#[test]
fn batched_network_matches_play_the_same_games_as_one_game_at_a_time() {
    let run = fake_run(&[10, 20]);
    let list = list_checkpoints(run.path()).unwrap();
    let a = Entrant::from_spec(&format!("ckpt:{}@sims=6", list[0].stem.display())).unwrap();
    let b =
        Entrant::from_spec(&format!("ckpt:{}@sims=5@algo=puct", list[1].stem.display())).unwrap();
    let config = MatchConfig {
        ply_cap: 30,
        threads: 1,
        ..config(5, 11)
    };
    let report = run_matches(&a, &b, &config, &|_| {}).unwrap();
    let openings: Vec<_> = Openings::with_config(config.seed, config.openings.clone())
        .unwrap()
        .take(5)
        .collect();
    for (m, record) in report.match_records.iter().enumerate() {
        for game in 0..2 {
            let alone = play_match_game(
                &a,
                &b,
                m as u32,
                game,
                &openings[m],
                config.seed,
                config.ply_cap,
            )
            .unwrap();
            assert_eq!(
                record.games[game as usize], alone.record,
                "match {m} game {game}"
            );
            assert_eq!(
                record.moves[game as usize], alone.moves,
                "match {m} game {game}"
            );
            assert!(
                alone.moves.starts_with(&openings[m].to_string()),
                "the moves start with the opening"
            );
            // The moves replay from the start to the recorded end.
            let mut replayed = brandubh_rules::Game::new(brandubh_rules::Position::start());
            for mv in alone.moves.split(' ') {
                replayed.play(mv.parse().unwrap()).unwrap();
            }
            assert_eq!(
                replayed.ply(),
                alone.record.plies as usize,
                "one move per ply"
            );
            assert_eq!(
                replayed.outcome().map(|o| o.reason),
                alone.record.reason,
                "match {m} game {game}"
            );
        }
    }
    let vs_alphabeta = run_matches(
        &a,
        &Entrant::from_spec("alphabeta:1").unwrap(),
        &config,
        &|_| {},
    );
    assert_eq!(vs_alphabeta.unwrap().games.games, 10);
}

#[test]
fn report_counts_add_up_and_serialize() {
    let a = Entrant::from_spec("greedy").unwrap();
    let b = Entrant::from_spec("mcts:30@rollout=40").unwrap();
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
    let a = Entrant::from_spec("random").unwrap();
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
    let err = Entrant::from_spec("run:/nonexistent/brandubh-run")
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "agent run:/nonexistent/brandubh-run: /nonexistent/brandubh-run: not a directory (expected a run directory)"
    );
    let err = Entrant::from_spec("ckpt:/nonexistent/iter-000001")
        .unwrap_err()
        .to_string();
    assert!(err.contains("no such checkpoint"), "{err}");
    assert!(matches!(
        Entrant::from_spec("mcts:x"),
        Err(EvalError::Spec(_))
    ));
    let empty = tempfile::tempdir().unwrap();
    let err = latest_checkpoint(empty.path()).unwrap_err().to_string();
    assert!(err.ends_with("checkpoints)"), "{err}");
    assert!(!err.contains('\n'));
}

#[test]
fn network_agents_load_the_latest_checkpoint_and_play() {
    let run = fake_run(&[10, 30, 20]);
    let list = list_checkpoints(run.path()).unwrap();
    let steps: Vec<u64> = list.iter().map(|c| c.meta.step).collect();
    assert_eq!(steps, vec![10, 20, 30]);
    // A stray file is ignored.
    std::fs::write(run.path().join("checkpoints/notes.json"), "{}").unwrap();
    let latest = latest_checkpoint(run.path()).unwrap();
    assert_eq!(latest.name, "iter-000002");
    let spec = format!("run:{}@sims=8", run.path().display());
    let net = Entrant::from_spec(&spec).unwrap();
    assert_eq!(net.checkpoint().unwrap().meta.step, 30);
    assert_eq!(net.name(), spec);
    let ckpt =
        Entrant::from_spec(&format!("ckpt:{}@sims=4@algo=puct", list[0].stem.display())).unwrap();
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

/// The bug this guards against: network agents (specs, the ladder, in-training evaluation)
/// used to search with the search crate's default Gumbel settings instead of their run's,
/// so a PUCT run, or one with `gumbel_c_scale = 0.1`, was evaluated with another search.
#[test]
fn network_agents_search_with_their_runs_settings() {
    let run = fake_run(&[10]);
    let run_dir = RunDir::new(run.path());
    let toml = "[search]\nalgorithm = \"puct\"\nc_puct = 3.0\ngumbel_c_scale = 0.1\n";
    std::fs::write(run_dir.config(), toml).unwrap();
    let expected = |sims, algorithm| SearchSettings {
        c_puct: 3.0,
        gumbel_c_scale: 0.1,
        ..SearchSettings::new(algorithm, sims)
    };
    let settings = |spec: &str| {
        Entrant::from_spec(spec)
            .unwrap()
            .search_settings()
            .cloned()
            .unwrap()
    };
    assert_eq!(
        settings(&format!("run:{}@sims=8", run.path().display())),
        expected(8, Algorithm::Puct)
    );
    let ckpt = run_dir.checkpoint(1);
    assert_eq!(
        settings(&format!("ckpt:{}", ckpt.display())),
        expected(64, Algorithm::Puct)
    );
    // @algo changes the algorithm only; the run's constants stay.
    assert_eq!(
        settings(&format!("ckpt:{}@algo=gumbel@sims=4", ckpt.display())),
        expected(4, Algorithm::Gumbel)
    );
    // In-training evaluation: both networks play the run's search with the evaluation's
    // simulations.
    let eval = EvaluationConfig {
        matches: 1,
        baseline: "random".into(),
        sims: 4,
        ..EvaluationConfig::default()
    };
    let (new, old) =
        iteration_entrants(&ckpt, &ckpt, &eval, &expected(64, Algorithm::Puct)).unwrap();
    assert_eq!(new.search_settings(), Some(&expected(4, Algorithm::Puct)));
    assert_eq!(old.search_settings(), Some(&expected(4, Algorithm::Puct)));
    // The ladder names a checkpoint by the settings it played with.
    let report = ladder(
        run.path(),
        &LadderConfig {
            baselines: vec![],
            matches: 1,
            simulations: 4,
            threads: 1,
            ply_cap: 20,
            plot: false,
            ..LadderConfig::default()
        },
        &|_| {},
    )
    .unwrap();
    let names: Vec<&str> = report.entries.iter().map(|e| e.key.as_str()).collect();
    assert!(
        names.contains(&"iter-000001@sims=4@algo=puct@c_puct=3"),
        "{names:?}"
    );
    // A damaged configuration is named, not silently replaced by defaults.
    std::fs::write(run_dir.config(), "[search]\nalgorithm = \"pucty\"\n").unwrap();
    let err = Entrant::from_spec(&format!("run:{}", run.path().display()))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("config.toml") && err.contains("search.algorithm"),
        "{err}"
    );
}

#[test]
fn the_ladder_rates_checkpoints_and_reuses_stored_games() {
    let run = fake_run(&[100, 200, 300]);
    let config = LadderConfig {
        baselines: vec![AgentSpec::Greedy],
        matches: 2,
        neighbours: 1,
        simulations: 4,
        threads: 2,
        ply_cap: 40,
        ..LadderConfig::default()
    };
    let first = ladder(run.path(), &config, &|_| {}).unwrap();
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
    let run_dir = RunDir::new(run.path());
    let lines = std::fs::read_to_string(run_dir.ladder_games()).unwrap();
    assert_eq!(lines.lines().count(), 18);
    assert!(run_dir.ladder_ratings().is_file());
    assert_eq!(&std::fs::read(run_dir.elo_plot()).unwrap()[1..4], b"PNG");
    let table = first.table();
    assert!(
        table.contains("iter-000003") && table.contains("greedy"),
        "{table}"
    );

    // Nothing new to play: the same ratings.
    let again = ladder(run.path(), &config, &|_| {}).unwrap();
    assert_eq!(again.matches_played, 0);
    assert_eq!(again.matches_reused, 18);
    assert_eq!(again.entries, first.entries);

    // One more match per pairing plays only that.
    let more = ladder(
        run.path(),
        &LadderConfig {
            matches: 3,
            ..config.clone()
        },
        &|_| {},
    )
    .unwrap();
    assert_eq!(more.matches_played, 9);
    let lines = std::fs::read_to_string(run_dir.ladder_games()).unwrap();
    assert_eq!(lines.lines().count(), 27);
}
