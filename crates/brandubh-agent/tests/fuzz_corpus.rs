//! The fuzz target `agent_file` as a regression test: every input of its committed corpus
//! (`fuzz/corpus/agent_file`) goes through the same checks the fuzzer runs
//! (`fuzz/src/agent.rs`).

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
