//! Hardening (issue 9): bad invocations of every subcommand and damaged files give a
//! one-line error and a non-zero exit, never a panic.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn brandubh(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_brandubh"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("the brandubh binary runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The `error: …` lines of stderr.
fn error_lines(o: &Output) -> Vec<String> {
    stderr(o)
        .lines()
        .filter(|l| l.starts_with("error"))
        .map(str::to_owned)
        .collect()
}

/// A fresh directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let dir =
            std::env::temp_dir().join(format!("brandubh-hardening-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create a temporary directory");
        TempDir(dir)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn s(p: &Path) -> &str {
    p.to_str().expect("temporary paths are UTF-8")
}

/// Library errors that print their source and also return it as `source()` used to show
/// it twice (`cannot read: No such file …: No such file …`).
#[test]
fn an_error_shows_its_cause_once() {
    let tmp = TempDir::new("cause");
    let missing = tmp.path("missing.toml");
    let bad = tmp.path("bad.toml");
    std::fs::write(&bad, "name = \"a b\"\n").unwrap();
    for (config, cause) in [
        (&missing, "No such file or directory"),
        (&bad, "must be 1-64 characters"),
    ] {
        let o = brandubh(&["train", "--config", s(config), "--run", s(&tmp.path("run"))]);
        assert!(!o.status.success());
        let errors = error_lines(&o);
        assert_eq!(errors.len(), 1, "{}", stderr(&o));
        assert!(errors[0].starts_with(&format!("error: {}: ", config.display())));
        assert_eq!(errors[0].matches(cause).count(), 1, "{}", errors[0]);
    }
}
