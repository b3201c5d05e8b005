//! The CLI contract of issue 2, driven through the built binary.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests may unwrap: a panic is a failed test"
)]

mod common;

use common::{brandubh, stderr, stdout_lines};

#[test]
fn perft_prints_the_count_on_the_last_line() {
    for (depth, count) in [("0", "1"), ("1", "24"), ("2", "944"), ("3", "23984")] {
        let o = brandubh(&["perft", depth]);
        assert!(o.status.success());
        assert_eq!(stdout_lines(&o).last().unwrap(), count);
    }
}

#[test]
fn perft_divide_lists_each_root_move() {
    let o = brandubh(&["perft", "2", "--divide"]);
    assert!(o.status.success());
    let lines = stdout_lines(&o);
    assert_eq!(lines.len(), 25);
    assert_eq!(lines.last().unwrap(), "944");
    let sum: u64 = lines[..24]
        .iter()
        .map(|l| {
            let (mv, n) = l.split_once(' ').unwrap();
            assert_eq!(mv.len(), 5, "{l}");
            n.parse::<u64>().unwrap()
        })
        .sum();
    assert_eq!(sum, 944);
}

#[test]
fn perft_from_a_given_position() {
    let o = brandubh(&["perft", "1", "--position", "3K3/7/7/7/7/7/3A3 w"]);
    assert!(o.status.success());
    // King on d7: 3 left and 3 right (corners included), 5 down (through the Castle to d2).
    assert_eq!(stdout_lines(&o).last().unwrap(), "11");
}

#[test]
fn replay_prints_one_json_line_per_ply() {
    let o = brandubh(&["replay", "c4-c5"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let lines = stdout_lines(&o);
    assert_eq!(lines.len(), 2);
    assert!(lines[0].starts_with(
        r#"{"ply":0,"move":null,"position":"3A3/3A3/3D3/AADKDAA/3D3/3A3/3A3 w","legal":["c4-c1","c4-c2","#
    ));
    assert!(lines[1].starts_with(
        r#"{"ply":1,"move":"c4-c5","position":"3A3/3A3/2DD3/AA1KDAA/3D3/3A3/3A3 b","legal":["a4-a2","a4-a3","#
    ));
    assert!(lines[1].ends_with(r#""outcome":null}"#));
    let v: serde_json::Value = serde_json::from_str(&lines[1]).unwrap();
    let legal: Vec<&str> = v["legal"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    let mut sorted = legal.clone();
    sorted.sort();
    assert_eq!(legal, sorted);
    assert_eq!(legal.len(), 41);
}

#[test]
fn replay_reports_the_outcome_and_empty_legal_list() {
    let o = brandubh(&["replay", "--position", "3K3/7/7/7/7/7/3A3 w", "d7a7"]);
    assert!(o.status.success());
    let last: serde_json::Value = serde_json::from_str(stdout_lines(&o).last().unwrap()).unwrap();
    assert_eq!(last["outcome"]["winner"], "white");
    assert_eq!(last["outcome"]["reason"], "king_escaped");
    assert_eq!(last["move"], "d7-a7");
    assert_eq!(last["legal"].as_array().unwrap().len(), 0);
}

#[test]
fn replay_errors_name_the_input_and_ply_after_the_earlier_lines() {
    // The arguments after `replay`, and what the error says.
    let position = ["--position", "3K3/7/7/7/7/7/3A3 w"];
    let cases: [(Vec<&str>, &str); 4] = [
        (vec!["c4-c5", "d7-x9"], "ply 2: malformed move \"d7-x9\""),
        (vec!["c4-c5", "d7-d5"], "ply 2: illegal move d7-d5"),
        (
            vec!["c4-c5", "c5-c6"],
            "ply 2: illegal move c5-c6: the piece on c5 is not yours",
        ),
        (
            [&position[..], &["d7-a7", "d1-d2"]].concat(),
            "ply 2: illegal move d1-d2: the game is over",
        ),
    ];
    for (after, msg) in cases {
        let args = [&["replay"][..], &after].concat();
        let o = brandubh(&args);
        assert!(!o.status.success(), "{args:?}");
        assert_eq!(stdout_lines(&o).len(), 2, "{args:?}: plies 0 and 1 printed");
        let err = stderr(&o);
        assert!(err.contains(msg), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
        assert!(!err.contains("panicked"));
    }
}

#[test]
fn invalid_positions_and_arguments_fail_cleanly() {
    for args in [
        &["replay", "--position", "3A3/3A3 w"][..],
        &[
            "perft",
            "2",
            "--position",
            "3A3/3A3/3D3/AAD1DAA/3D3/3A3/3A3 w",
        ],
        &["perft", "x"],
        &["perft", "99"],
        &["perft"],
        &["frobnicate"],
    ] {
        let o = brandubh(args);
        assert!(!o.status.success(), "{args:?}");
        let err = stderr(&o);
        assert!(
            !err.is_empty() && !err.contains("panicked"),
            "{args:?}: {err}"
        );
        assert!(o.stdout.is_empty(), "{args:?}");
    }
    let o = brandubh(&["replay", "--position", "3A3/3A3 w"]);
    assert!(stderr(&o).contains("--position: invalid position \"3A3/3A3 w\""));
}
