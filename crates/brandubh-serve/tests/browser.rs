//! The Play and Run pages in a real browser: headless Chromium (Debian's `chromium`)
//! driven by `playwright-core` (browser/test.mjs) against a server on 127.0.0.1 with a tiny
//! agent and a tiny trained run. Screenshots are left in the test's scratch directory.
//!
//! Without Chromium, Node or `browser/node_modules` (`npm ci` in browser/) the test says so
//! and passes, unless the environment variable `CI` is set: then it fails. `CHROMIUM`
//! names another Chromium binary.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests may unwrap: a panic is a failed test"
)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use brandubh_serve::{Limits, Running, ServeConfig};

fn missing() -> Option<String> {
    let chromium = std::env::var_os("CHROMIUM")
        .map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from);
    if !chromium.is_file() {
        return Some(format!(
            "no Chromium at {} (apt-get install chromium)",
            chromium.display()
        ));
    }
    if Command::new("node").arg("--version").output().is_err() {
        return Some("no node on PATH".into());
    }
    let modules = browser_dir().join("node_modules/playwright-core");
    if !modules.is_dir() {
        return Some(format!(
            "no {} (run `npm ci` in {})",
            modules.display(),
            browser_dir().display()
        ));
    }
    None
}

fn browser_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("browser")
}

#[test]
fn play_and_run_pages_work_in_headless_chromium() {
    if let Some(why) = missing() {
        assert!(
            std::env::var_os("CI").is_none(),
            "browser test: {why}, and CI is set"
        );
        eprintln!("skipping the browser test: {why}");
        return;
    }
    let server = Running::start(
        ServeConfig {
            agents: vec![common::tiny_agent().to_path_buf()],
            runs: vec![common::tiny_run().to_path_buf()],
            allow_hosts: vec![],
            limits: Limits {
                min_move_ms: 1,
                default_move_ms: 20,
                ..Limits::default()
            },
        },
        "127.0.0.1:0".parse().unwrap(),
    )
    .unwrap();
    let out = common::scratch("browser");
    let status = Command::new("node")
        .arg(browser_dir().join("test.mjs"))
        .arg(server.url())
        .arg(&out)
        .current_dir(browser_dir())
        .status()
        .expect("node runs");
    eprintln!("screenshots in {}", out.display());
    assert!(
        status.success(),
        "the browser test failed (see its output and {})",
        out.display()
    );
}
