//! The fuzz targets `agent_file`, `otep` and `htp` as regression tests: every input of their
//! committed corpora (`fuzz/corpus/agent_file`, `fuzz/corpus/otep`, `fuzz/corpus/htp`) goes
//! through the same checks the fuzzer runs (`fuzz/src/agent.rs`, `fuzz/src/otep.rs`,
//! `fuzz/src/htp.rs`).

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

#[path = "../../../fuzz/src/htp.rs"]
mod htp;

#[test]
fn htp_corpus() {
    corpus::replay("htp", htp::parse);
}
