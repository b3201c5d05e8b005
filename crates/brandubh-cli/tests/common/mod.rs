//! Helpers shared by the CLI's integration tests: running the built binary, reading what it
//! printed, scratch directories and a tiny seeded agent file.
#![allow(dead_code, reason = "each test binary uses a part of these helpers")]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use brandubh_agent::{Agent, AgentMeta, SourceInfo, TrainingInfo};
use brandubh_net::{Device, NetConfig};
use brandubh_search::SearchSettings;

/// The built `brandubh` binary, without colours.
pub fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_brandubh"));
    c.env("NO_COLOR", "1");
    c
}

/// Runs the binary with `args` and waits for it.
pub fn brandubh(args: &[&str]) -> Output {
    bin().args(args).output().expect("the brandubh binary runs")
}

/// Runs the binary with `args` from the repository root (where the configurations are
/// named from) and waits for it.
pub fn brandubh_at_root(args: &[&str]) -> Output {
    bin()
        .args(args)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .output()
        .expect("the brandubh binary runs")
}

/// `brandubh train --config configs/tiny.toml --run RUN --quiet MORE…`, run from the
/// repository root (where the configurations are named from).
pub fn train_tiny(run: &str, more: &[&str]) -> Output {
    let train = [
        "train",
        "--config",
        "configs/tiny.toml",
        "--run",
        run,
        "--quiet",
    ];
    bin()
        .args(train.iter().chain(more))
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .output()
        .expect("the brandubh binary runs")
}

/// Runs `command` with `input` on its stdin (then closed) and waits for it.
pub fn run_with_input(command: &mut Command, input: &str) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the brandubh binary runs");
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let _ = stdin.write_all(input.as_bytes());
    drop(stdin);
    child.wait_with_output().expect("the brandubh binary ends")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stdout_lines(o: &Output) -> Vec<String> {
    stdout(o).lines().map(str::to_owned).collect()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The `error: …` lines of stderr.
pub fn error_lines(o: &Output) -> Vec<String> {
    stderr(o)
        .lines()
        .filter(|l| l.starts_with("error"))
        .map(str::to_owned)
        .collect()
}

/// A fresh directory in Cargo's scratch directory for integration tests, removed on drop.
pub fn temp_dir() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("create a temporary directory")
}

/// `configs/tiny.toml`'s absolute path.
pub fn tiny_toml() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/tiny.toml")
}

/// Writes `dir/name`: a config that extends `configs/tiny.toml` with `more` (TOML lines),
/// and returns its path.
pub fn tiny_extended(dir: &Path, name: &str, more: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    let extends = format!("extends = {:?}\n", tiny_toml().display().to_string());
    std::fs::write(&path, extends + more).expect("write a config to a scratch directory");
    path
}

/// A path as a command-line argument.
pub fn s(p: &Path) -> &str {
    p.to_str().expect("temporary paths are UTF-8")
}

/// Saves an agent file at `path`: a C8xN1 network with weights seeded by `seed`, searching
/// with `search`.
pub fn save_tiny_agent(path: &Path, seed: u64, search: SearchSettings) {
    let device = Device::flex();
    device.seed(seed);
    let model = NetConfig::new()
        .with_channels(8)
        .with_blocks(1)
        .init(&device);
    let meta = AgentMeta::new(
        "tiny",
        search,
        TrainingInfo::default(),
        SourceInfo::default(),
    );
    Agent::from_model(&model, meta, path)
        .expect("a tiny agent")
        .save(path)
        .expect("save the tiny agent");
}
