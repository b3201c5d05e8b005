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
    corpus::replay("otep", otep::parse);
}
