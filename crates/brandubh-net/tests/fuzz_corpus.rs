//! The fuzz targets `checkpoint_meta` and `checkpoint_weights` as regression tests: every
//! input of their committed corpus (`fuzz/corpus/TARGET`) goes through the same checks the
//! fuzzer runs (`fuzz/src/checkpoint.rs`).

#[path = "../../../fuzz/src/checkpoint.rs"]
mod checkpoint;

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

#[test]
fn checkpoint_meta_corpus() {
    for file in corpus("checkpoint_meta") {
        checkpoint::meta(&std::fs::read(&file).expect("read a corpus file"));
    }
}

#[test]
fn checkpoint_weights_corpus() {
    for file in corpus("checkpoint_weights") {
        checkpoint::weights(&std::fs::read(&file).expect("read a corpus file"));
    }
}
