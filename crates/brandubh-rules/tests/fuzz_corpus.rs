//! The fuzz targets `position`, `moves` and `play` as regression tests: every input of
//! their committed corpus (`fuzz/corpus/TARGET`) goes through the same checks the fuzzer
//! runs (`fuzz/src/rules.rs`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests may unwrap: a panic is a failed test"
)]

#[path = "../../../fuzz/src/corpus.rs"]
mod corpus;
#[path = "../../../fuzz/src/rules.rs"]
mod rules;

#[test]
fn position_corpus() {
    corpus::replay("position", rules::parse_position);
}

#[test]
fn moves_corpus() {
    corpus::replay("moves", rules::parse_move);
}

#[test]
fn play_corpus() {
    corpus::replay("play", rules::play);
}
