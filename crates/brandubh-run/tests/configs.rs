//! Every shipped file in `configs/` parses and validates.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests may unwrap: a panic is a failed test"
)]

use std::path::{Path, PathBuf};

use brandubh_run::config::RunConfig;

fn configs_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../configs")
}

/// Every `*.toml` under `dir`, in its subdirectories too (`configs/ablations/`), sorted.
fn toml_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).expect("readable directory") {
        let path = entry.expect("readable entry").path();
        if path.is_dir() {
            files.extend(toml_files(&path));
        } else if path.extension().is_some_and(|e| e == "toml") {
            files.push(path);
        }
    }
    files.sort();
    files
}

#[test]
fn every_shipped_config_parses_and_validates() {
    let mut names = Vec::new();
    let files = toml_files(&configs_dir());
    for path in &files {
        let config = RunConfig::from_file(path).unwrap_or_else(|e| panic!("{e}"));
        // What is written back reads back the same.
        let text = config.to_toml_string().unwrap();
        assert_eq!(RunConfig::from_toml_str(&text, "again").unwrap(), config);
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        // NAME-stageN.toml continues the run of NAME.toml, so it keeps that name.
        let run = stem
            .split_once("-stage")
            .map_or(stem.as_str(), |(run, _)| run);
        assert_eq!(
            config.name,
            run,
            "{}: name should match the file",
            path.display()
        );
        names.push(stem);
    }
    for required in ["default", "gpu", "quick", "tiny", "ablation-discount"] {
        assert!(
            names.iter().any(|n| n == required),
            "{required}.toml missing under configs/"
        );
    }
    // The configs a user runs stay at the top; experiments go under configs/ablations/.
    let top = files
        .iter()
        .filter(|p| p.parent() == Some(configs_dir().as_path()))
        .count();
    assert!(
        top <= 10,
        "{top} configs at the top of configs/ (at most 10)"
    );
}

#[test]
fn tiny_config_is_tiny() {
    let c = RunConfig::from_file(configs_dir().join("tiny.toml")).unwrap();
    assert!(c.model.channels <= 8 && c.model.blocks <= 1);
    assert!(c.search.simulations <= 4);
    assert!(c.selfplay.games_per_iteration <= 8);
    assert!(c.selfplay.ply_cap <= 40);
    assert!(c.training.steps_per_iteration <= 5);
}

/// `default-stage2.toml` extends `default.toml` to continue its run: only the keys the stage
/// changes differ (an edit to it that sets another key is caught here).
#[test]
fn default_stage2_differs_from_default_only_where_it_says() {
    let stage1 = RunConfig::from_file(configs_dir().join("default.toml")).unwrap();
    let mut stage2 = RunConfig::from_file(configs_dir().join("default-stage2.toml")).unwrap();
    assert!(stage2.iterations > stage1.iterations);
    stage2.iterations = stage1.iterations;
    assert_eq!(stage2, stage1);
}

/// A run's copy of its configuration carries a checksum: it reads back whole, and a copy
/// that was cut short or had a byte changed (its comment line included) is refused with an
/// error naming the file; a copy without the checksum line (older runs) still reads.
#[test]
fn a_runs_copy_of_its_configuration_is_checked() {
    let config = RunConfig::from_file(configs_dir().join("tiny.toml")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    let text = config.to_run_copy().unwrap();
    assert!(text.starts_with("# brandubh run configuration, fnv1a64 "));
    std::fs::write(&path, &text).unwrap();
    assert_eq!(RunConfig::from_run_copy(&path).unwrap(), config);

    let damaged = |bytes: Vec<u8>| {
        std::fs::write(&path, bytes).unwrap();
        let e = RunConfig::from_run_copy(&path).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("{}: damaged: ", path.display())),
            "{e}"
        );
        assert!(!e.contains('\n'), "{e}");
    };
    // Cut at a line boundary, so that the TOML left is valid on its own.
    let cut = text[..text.len() / 2].rfind('\n').unwrap() + 1;
    damaged(text.as_bytes()[..cut].to_vec());
    for at in [10, text.len() - 3] {
        let mut bytes = text.clone().into_bytes();
        bytes[at] ^= 0x01;
        damaged(bytes);
    }
    // Edited by hand: a value changed.
    damaged(text.replace("seed = ", "seed = 1").into_bytes());

    std::fs::write(&path, config.to_toml_string().unwrap()).unwrap();
    assert_eq!(RunConfig::from_run_copy(&path).unwrap(), config);
}
