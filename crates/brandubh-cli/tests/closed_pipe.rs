//! A closed stdout pipe (`brandubh … | head -1`) ends every subcommand that prints to
//! stdout quietly: exit status 0, no panic and no error on stderr. stdout is a pipe whose
//! read end is closed before the program starts, so its first write fails with `EPIPE`
//! (Rust ignores `SIGPIPE`; `println!` would panic there).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests may unwrap: a panic is a failed test"
)]

mod common;

use std::path::Path;
use std::process::Stdio;

use brandubh_net::checkpoint::{self, SaveOptions};
use brandubh_net::{Device, NetConfig};

/// Runs the binary with `args` (from the repository root, stdin empty) writing to a pipe
/// nobody reads, and checks that it ends quietly.
fn ends_quietly(args: &[&str]) {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let o = common::bin()
        .args(args)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .expect("the brandubh binary runs");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{args:?}: {:?}\n{err}", o.status);
    for bad in ["panicked", "error", "Broken pipe"] {
        assert!(!err.contains(bad), "{args:?}: {bad:?} on stderr:\n{err}");
    }
}

#[test]
fn rules_commands() {
    ends_quietly(&["perft", "3"]);
    ends_quietly(&["perft", "2", "--divide"]);
    ends_quietly(&["replay", "c4-c5"]);
}

#[test]
fn bench() {
    ends_quietly(&[
        "bench",
        "--config",
        "configs/tiny.toml",
        "--games",
        "1",
        "--seconds",
        "0.02",
    ]);
    ends_quietly(&["bench", "--cpu"]);
}

#[test]
fn report() {
    let kept = "docs/research/reports/v5-alphabeta-1s-xeon.json";
    for table in ["opponents", "colours", "openings", "compare", "show"] {
        ends_quietly(&["report", table, kept]);
    }
}

#[test]
fn match_play_and_analyze() {
    ends_quietly(&["match", "random", "greedy", "--matches", "1", "--seed", "1"]);
    ends_quietly(&["match", "random", "random", "--matches", "1", "--json"]);
    ends_quietly(&["play", "--sims", "2", "--seed", "1"]);
    ends_quietly(&["analyze", "--sims", "2", "c4-c5"]);
}

#[test]
fn ladder_and_export() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let model = NetConfig::new()
        .with_channels(8)
        .with_blocks(1)
        .init(&Device::flex());
    checkpoint::save(
        run.join("checkpoints/iter-000001"),
        &model,
        &SaveOptions::at_step(10),
    )
    .unwrap();
    let run_arg = run.to_str().unwrap();
    ends_quietly(&[
        "ladder",
        run_arg,
        "--baselines",
        "random",
        "--matches",
        "1",
        "--sims",
        "2",
        "--ply-cap",
        "20",
    ]);
    let out = tmp.path().join("tiny.agent");
    ends_quietly(&["export", run_arg, "--out", out.to_str().unwrap()]);
    assert!(out.is_file(), "export wrote its file before printing");
}
