//! The fuzz target `agent_spec` as a regression test: every input of its committed corpus
//! (`fuzz/corpus/agent_spec`) goes through the same checks the fuzzer runs
//! (`fuzz/src/spec.rs`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests may unwrap: a panic is a failed test"
)]

#[path = "../../../fuzz/src/corpus.rs"]
mod corpus;
#[path = "../../../fuzz/src/spec.rs"]
mod spec;

#[test]
fn agent_spec_corpus() {
    corpus::replay("agent_spec", spec::parse);
}
