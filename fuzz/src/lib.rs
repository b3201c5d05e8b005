//! The checks behind the fuzz targets in `fuzz_targets/`, one module per kind of input.
//!
//! Each module is self-contained (it names only the crates it tests and `std`), so that
//! the tested crates' regression tests (`crates/*/tests/fuzz_corpus.rs`) include the same
//! file with `#[path]` and feed it every input of the committed corpus in `corpus/`.
//! A failed check panics, which libFuzzer reports as a crash.

pub mod agent;
pub mod htp;
pub mod otep;
pub mod checkpoint;
pub mod config;
pub mod replay;
pub mod rules;
pub mod spec;
