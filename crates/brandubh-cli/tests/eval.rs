//! The CLI contract of issue 6 (`brandubh match`, `brandubh ladder`), through the binary.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests may unwrap: a panic is a failed test"
)]

mod common;

use brandubh_net::checkpoint::{self, SaveOptions};
use brandubh_net::{Device, NetConfig};
use common::{brandubh, stderr, stdout};

/// Four matches of random against greedy, seed 3, as JSON.
const SEEDED_MATCH: [&str; 8] = [
    "match",
    "random",
    "greedy",
    "--matches",
    "4",
    "--json",
    "--seed",
    "3",
];

#[test]
fn match_json_has_the_documented_shape() {
    let o = brandubh(&SEEDED_MATCH);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("seed 3"), "{}", stderr(&o));
    let out = stdout(&o);
    assert_eq!(out.lines().count(), 1, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["a"], "random");
    assert_eq!(v["b"], "greedy");
    assert_eq!(v["seed"], 3);
    assert_eq!(v["matches"], 4);
    assert_eq!(v["ply_cap"], 200);
    let r = &v["record"];
    let total = ["wins", "draws", "losses"]
        .iter()
        .map(|k| r[k].as_u64().unwrap())
        .sum::<u64>();
    assert_eq!(total, 4);
    let g = &v["games"];
    assert_eq!(g["games"], 8);
    let games = [
        "a_wins_as_white",
        "a_wins_as_black",
        "b_wins_as_white",
        "b_wins_as_black",
        "unfinished",
    ]
    .iter()
    .map(|k| g[k].as_u64().unwrap())
    .sum::<u64>();
    assert_eq!(games, 8);
    assert!(v["mean_game_plies"].as_f64().unwrap() > 0.0);
    assert!(v["match_score"].as_f64().is_some() && v["game_score"].as_f64().is_some());
    for k in ["elo", "low", "high"] {
        assert!(v["elo"].get(k).is_some(), "elo.{k}");
    }
    let matches = v["match_records"].as_array().unwrap();
    assert_eq!(matches.len(), 4);
    for m in matches {
        assert!(m["opening"].as_str().unwrap().contains('-'));
        assert_eq!(m["games"].as_array().unwrap().len(), 2);
        assert!(["a_wins", "b_wins", "draw"].contains(&m["result"].as_str().unwrap()));
    }
    // The same seed gives the same matches.
    let again = brandubh(&SEEDED_MATCH);
    let w: serde_json::Value = serde_json::from_str(&stdout(&again)).unwrap();
    assert_eq!(w["match_records"], v["match_records"]);
}

#[test]
fn match_text_report_names_both_agents() {
    let o = brandubh(&[
        "match",
        "alphabeta:1",
        "random",
        "--matches",
        "2",
        "--seed",
        "5",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.starts_with("alphabeta:1 vs random: 2 matches, seed 5, ply cap 200"),
        "{out}"
    );
    for word in ["matches ", "games ", "length ", "elo "] {
        assert!(out.contains(word), "{word}: {out}");
    }
}

#[test]
fn match_with_sprt_stops_when_the_test_decides() {
    let args = [
        "match", "greedy", "random", "--sprt", "0,100", "--seed", "3",
    ];
    let o = brandubh(&[&args[..], &["--json"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let t = &v["sprt"];
    assert_eq!(t["verdict"], "h1", "{t}");
    assert_eq!(
        (t["elo0"].as_f64(), t["elo1"].as_f64()),
        (Some(0.0), Some(100.0))
    );
    assert_eq!(
        (t["alpha"].as_f64(), t["beta"].as_f64()),
        (Some(0.05), Some(0.05))
    );
    assert_eq!(t["max_matches"], 1000);
    let n = t["matches"].as_u64().unwrap();
    assert!((5..100).contains(&n), "{t}");
    assert_eq!(v["matches"].as_u64(), Some(n));
    assert_eq!(v["match_records"].as_array().unwrap().len() as u64, n);
    assert!(t["llr"].as_f64().unwrap() >= t["upper"].as_f64().unwrap());
    assert!((t["upper"].as_f64().unwrap() - 19f64.ln()).abs() < 1e-9);
    assert!(t["match_elo"]["low"].as_f64().unwrap() > 0.0, "{t}");
    // The text report says the same.
    let text = stdout(&brandubh(&args));
    assert!(
        text.contains(&format!("sprt     H1 accepted after {n} matches: LLR ")),
        "{text}"
    );
    assert!(text.contains("from the match score"), "{text}");
    // Two agents of equal strength, a maximum of 30 matches: not H1.
    let o = brandubh(&[
        "match",
        "random",
        "random",
        "--sprt",
        "0,100,0.05,0.05",
        "--matches",
        "30",
        "--seed",
        "4",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_ne!(v["sprt"]["verdict"], "h1", "{}", v["sprt"]);
    assert!(v["sprt"]["matches"].as_u64().unwrap() <= 30);
    // Without --sprt there is no "sprt" key.
    let plain = brandubh(&SEEDED_MATCH);
    let v: serde_json::Value = serde_json::from_str(&stdout(&plain)).unwrap();
    assert!(v.get("sprt").is_none());
}

#[test]
fn bad_sprt_settings_are_one_line_errors() {
    for (sprt, says) in [
        (
            "30,0",
            "error: SPRT \"30,0\": elo1: must be above elo0 (30), got 0",
        ),
        (
            "0",
            "error: SPRT \"0\": expected ELO0,ELO1 or ELO0,ELO1,ALPHA,BETA",
        ),
        (
            "0,30,1,0.05",
            "error: SPRT \"0,30,1,0.05\": alpha: must be strictly between",
        ),
        (
            "-5,abc",
            "error: SPRT \"-5,abc\": elo1: \"abc\" is not a number",
        ),
    ] {
        let o = brandubh(&["match", "random", "random", "--sprt", sprt]);
        assert!(!o.status.success(), "{sprt}");
        assert!(o.stdout.is_empty(), "{sprt}");
        let err = stderr(&o);
        let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error")).collect();
        assert_eq!(lines.len(), 1, "{sprt}: {err}");
        assert!(lines[0].starts_with(says), "{sprt}: {err}");
    }
}

#[test]
fn bad_agent_specs_are_one_line_errors() {
    for (args, start) in [
        (
            vec!["match", "randm", "greedy"],
            "error: agent spec \"randm\": unknown agent",
        ),
        (
            vec!["match", "random", "mcts:abc"],
            "error: agent spec \"mcts:abc\": simulations must be",
        ),
        (
            vec!["match", "alphabeta:99", "random"],
            "error: agent spec \"alphabeta:99\": depth must be",
        ),
        (
            vec!["match", "random", "ckpt:x@temp=1"],
            "error: agent spec \"ckpt:x@temp=1\": unknown option",
        ),
        (
            vec!["match", "run:/nonexistent/brandubh-run", "random"],
            "error: agent run:/nonexistent/brandubh-run: /nonexistent/brandubh-run: not a directory",
        ),
        (
            vec!["ladder", "/nonexistent/brandubh-run"],
            "error: /nonexistent/brandubh-run: not a directory",
        ),
        (
            vec!["ladder", "/tmp", "--baselines", "random,bogus"],
            "error: --baselines: agent spec \"bogus\": unknown agent",
        ),
    ] {
        let o = brandubh(&args);
        assert!(!o.status.success(), "{args:?}");
        assert!(o.stdout.is_empty(), "{args:?}");
        let err = stderr(&o);
        let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error")).collect();
        assert_eq!(lines.len(), 1, "{args:?}: {err}");
        assert!(lines[0].starts_with(start), "{args:?}: {err}");
    }
}

#[test]
fn ladder_prints_a_table_and_writes_its_files() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let ckpts = dir.join("checkpoints");
    std::fs::create_dir_all(&ckpts).unwrap();
    let config = NetConfig::new().with_channels(8).with_blocks(1);
    for i in 1..=2u64 {
        let model = config.init(&Device::flex());
        checkpoint::save(
            ckpts.join(format!("iter-{i:06}")),
            &model,
            &SaveOptions::at_step(i * 50),
        )
        .unwrap();
    }
    let run = dir.to_str().unwrap();
    let args = [
        "ladder",
        run,
        "--baselines",
        "greedy",
        "--matches",
        "1",
        "--sims",
        "2",
        "--ply-cap",
        "30",
    ];
    let o = brandubh(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for word in [
        "iter-000001",
        "iter-000002",
        "random",
        "greedy",
        "95% interval",
        "elo.png",
    ] {
        assert!(out.contains(word), "{word}: {out}");
    }
    assert!(out.contains("6 matches played, 0 reused"), "{out}");
    assert!(dir.join("elo.png").is_file());
    assert!(dir.join("ladder/games.jsonl").is_file());
    let again = brandubh(&args);
    assert!(
        stdout(&again).contains("0 matches played, 6 reused"),
        "{}",
        stdout(&again)
    );
}
