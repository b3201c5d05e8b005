//! The fuzz targets `agent_file` and `otep` as regression tests: every input of their
//! committed corpora (`fuzz/corpus/agent_file`, `fuzz/corpus/otep`) goes through the same
//! checks the fuzzer runs (`fuzz/src/agent.rs`, `fuzz/src/otep.rs`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests may unwrap: a panic is a failed test"
)]

#[path = "../../../fuzz/src/agent.rs"]
mod agent;
#[path = "../../../fuzz/src/corpus.rs"]
mod corpus;

#[test]
fn agent_file_corpus() {
    corpus::replay("agent_file", agent::load);
}

#[path = "../../../fuzz/src/otep.rs"]
mod otep;

#[test]
fn otep_corpus() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/otep");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a corpus entry").path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{}: empty corpus", dir.display());
    for file in files {
        otep::parse(&std::fs::read(&file).expect("read a corpus file"));
    }
}
