//! The fuzz targets `position`, `moves` and `play` as regression tests: every input of
//! their committed corpus (`fuzz/corpus/TARGET`) goes through the same checks the fuzzer
//! runs (`fuzz/src/rules.rs`).

#[path = "../../../fuzz/src/rules.rs"]
mod rules;

use std::path::{Path, PathBuf};

/// Every file of `fuzz/corpus/TARGET`, sorted; at least one.
fn corpus(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a corpus entry").path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{}: empty corpus", dir.display());
    files
}

fn run(target: &str, check: fn(&[u8])) {
    for file in corpus(target) {
        check(&std::fs::read(&file).expect("read a corpus file"));
    }
}

#[test]
fn position_corpus() {
    run("position", rules::parse_position);
}

#[test]
fn moves_corpus() {
    run("moves", rules::parse_move);
}

#[test]
fn play_corpus() {
    run("play", rules::play);
}
