//! The fuzz targets `chunk` and `config` as regression tests: every input of their
//! committed corpus (`fuzz/corpus/chunk`, `fuzz/corpus/config`) goes through the same
//! checks the fuzzer runs (`fuzz/src/replay.rs`, `fuzz/src/config.rs`), plus the inputs
//! of crashes found and fixed, by name.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests may unwrap: a panic is a failed test"
)]

#[path = "../../../fuzz/src/config.rs"]
mod config;
#[path = "../../../fuzz/src/corpus.rs"]
mod corpus;
#[path = "../../../fuzz/src/replay.rs"]
mod replay;

#[test]
fn chunk_corpus() {
    corpus::replay("chunk", replay::decode);
}

#[test]
fn config_corpus() {
    corpus::replay("config", config::parse);
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
