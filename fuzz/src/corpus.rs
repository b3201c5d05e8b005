//! The corpus replay shared by the regression tests `crates/*/tests/fuzz_corpus.rs`, which
//! include this file with `#[path]`. Not a module of the fuzz crate: the corpus path is
//! relative to the including crate (`crates/NAME`).

use std::path::{Path, PathBuf};

/// Every file of the committed corpus `fuzz/corpus/TARGET`, sorted by name; at least one.
fn files(target: &str) -> Vec<PathBuf> {
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

/// Runs `check` (the fuzz target's checks) on every input of `fuzz/corpus/TARGET`.
pub fn replay(target: &str, check: impl Fn(&[u8])) {
    for file in files(target) {
        check(&std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display())));
    }
}
