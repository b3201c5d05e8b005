//! The fuzz targets `chunk` and `config` as regression tests: every input of their
//! committed corpus (`fuzz/corpus/chunk`, `fuzz/corpus/config`) goes through the same
//! checks the fuzzer runs (`fuzz/src/replay.rs`, `fuzz/src/config.rs`), plus the inputs
//! of crashes found and fixed, by name.

#[path = "../../../fuzz/src/config.rs"]
mod config;
#[path = "../../../fuzz/src/replay.rs"]
mod replay;

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
fn chunk_corpus() {
    for file in corpus("chunk") {
        replay::decode(&std::fs::read(&file).expect("read a corpus file"));
    }
}

#[test]
fn config_corpus() {
    for file in corpus("config") {
        config::parse(&std::fs::read(&file).expect("read a corpus file"));
    }
}

/// toml gives `key =` at the end of a file an empty message: the error named no problem
/// (`invalid TOML at line 3, column 12: `).
#[test]
fn a_key_without_a_value_at_the_end_is_named() {
    config::parse(b"name = \"x\"\n[model]\nchannels = ");
    let err = brandubh_run::config::RunConfig::from_toml_str("seed =", "t.toml").unwrap_err();
    assert_eq!(
        err.to_string(),
        "t.toml: invalid TOML at line 1, column 7: unexpected end of file"
    );
}
