//! `brandubh report`: tables over match reports, on a kept report (docs/research/reports/)
//! and on the report of a small match played here; bad files are one-line errors.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests may unwrap: a panic is a failed test"
)]

mod common;

use std::path::{Path, PathBuf};

use common::{brandubh, error_lines, s, stderr, stdout, temp_dir};

/// v5 against `alphabeta:1s`: 100 matches, seed 2026, 87/7/6; A won 99 games as White (all
/// by escape) and 39 as Black (all by capture), B 59 as White and 1 as Black, 2 unfinished.
fn kept() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/research/reports/v5-alphabeta-1s-xeon.json")
}

/// Runs `brandubh report ARGS…`, checks that it succeeded and returns what it printed.
fn report(args: &[&str]) -> String {
    let o = brandubh(&[&["report"][..], args].concat());
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    stdout(&o)
}

/// The cells of the table row of `text` that starts with `| first |`.
fn row(text: &str, first: &str) -> Vec<String> {
    let line = text
        .lines()
        .find(|l| l.starts_with(&format!("| {first} |")))
        .unwrap_or_else(|| panic!("no row {first}: {text}"));
    line.trim_matches('|')
        .split(" | ")
        .map(|c| c.trim().to_owned())
        .collect()
}

#[test]
fn opponents_colours_and_compare_of_a_kept_report() {
    let kept = kept();
    let text = report(&["opponents", s(&kept)]);
    assert_eq!(
        row(&text, "agent:models/brandubh-v5.agent"),
        [
            "agent:models/brandubh-v5.agent",
            "alphabeta:1s",
            "87/7/6",
            "99/100",
            "39/100",
            "39/100",
            "escape 99",
            "capture 39",
            "escape 59",
            "capture 1",
            "2",
            "1335"
        ]
    );
    let text = report(&["colours", s(&kept)]);
    let cells = row(&text, "agent:models/brandubh-v5.agent vs alphabeta:1s");
    assert_eq!(cells[1..6], ["200", "158 (79 %)", "40 (20 %)", "40", "2"]);
    assert_eq!(cells[6..], ["escape 158", "capture 40", "31.4"]);
    let text = report(&["compare", s(&kept), s(&kept)]);
    assert_eq!(row(&text, "A's matches W/D/L")[1..], ["87/7/6", "87/7/6"]);
    assert_eq!(row(&text, "CPU")[1..], ["not recorded", "not recorded"]);
    assert_eq!(row(&text, "SPRT")[1], "none");
    let text = report(&["show", s(&kept)]);
    assert!(
        text.starts_with("agent:models/brandubh-v5.agent vs alphabeta:1s: 100 matches"),
        "{text}"
    );
    assert!(text.contains("matches  A 87 W / 7 D / 6 L"), "{text}");
}

#[test]
fn openings_of_one_series_and_of_another_seed() {
    let kept = kept();
    let text = report(&["openings", s(&kept), s(&kept)]);
    assert_eq!(row(&text, s(&kept))[3], "39");
    assert!(
        text.contains("won as Black by all 2: 39 openings"),
        "{text}"
    );
    assert!(
        text.contains("won as Black by none: 61 openings: "),
        "{text}"
    );
    assert!(
        text.contains("the best of them on each opening: 39 Black games"),
        "{text}"
    );

    // A small match played here: another seed, so other openings.
    let tmp = temp_dir();
    let small = tmp.path().join("small.json");
    let o = brandubh(&[
        "match",
        "greedy",
        "random",
        "--matches",
        "2",
        "--seed",
        "7",
        "--threads",
        "1",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::write(&small, &o.stdout).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["cpu"].as_str().unwrap().contains("logical CPUs"), "{v}");
    let text = report(&["opponents", s(&small)]);
    let cells = row(&text, "greedy");
    let r = &v["record"];
    assert_eq!(cells[1], "random");
    assert_eq!(
        cells[2],
        format!("{}/{}/{}", r["wins"], r["draws"], r["losses"])
    );
    assert_eq!(cells[3], format!("{}/2", v["games"]["a_wins_as_white"]));
    let text = report(&["compare", s(&small)]);
    assert_eq!(row(&text, "CPU")[1], v["cpu"].as_str().unwrap());

    let o = brandubh(&["report", "openings", s(&kept), s(&small)]);
    assert!(!o.status.success());
    let errors = error_lines(&o);
    assert_eq!(errors.len(), 1, "{}", stderr(&o));
    assert!(
        errors[0].contains(&format!("{}: seed 7 with 2 matches, but ", small.display()))
            && errors[0].ends_with("has seed 2026 with 100: not the same openings"),
        "{}",
        errors[0]
    );
}

#[test]
fn a_file_that_is_not_a_match_report_is_a_one_line_error() {
    let tmp = temp_dir();
    let ladder = tmp.path().join("ratings.json");
    std::fs::write(&ladder, r#"{"anchor": "random", "entries": []}"#).unwrap();
    let cut = tmp.path().join("cut.json");
    let text = std::fs::read_to_string(kept()).unwrap();
    std::fs::write(&cut, &text[..text.len() / 2]).unwrap();
    let missing = tmp.path().join("missing.json");
    for (file, says) in [
        (
            &ladder,
            "not a `brandubh match --json` report: missing field",
        ),
        (
            &cut,
            "not a `brandubh match --json` report: EOF while parsing",
        ),
        (&missing, "No such file or directory"),
    ] {
        let o = brandubh(&["report", "opponents", s(&kept()), s(file)]);
        assert!(!o.status.success());
        assert!(stdout(&o).is_empty());
        let errors = error_lines(&o);
        assert_eq!(errors.len(), 1, "{}", stderr(&o));
        assert!(
            errors[0].starts_with(&format!("error: {}: ", file.display())),
            "{}",
            errors[0]
        );
        assert!(errors[0].contains(says), "{}", errors[0]);
    }
}
