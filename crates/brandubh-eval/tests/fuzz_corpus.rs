//! The fuzz target `agent_spec` as a regression test: every input of its committed corpus
//! (`fuzz/corpus/agent_spec`) goes through the same checks the fuzzer runs
//! (`fuzz/src/spec.rs`).

#[path = "../../../fuzz/src/spec.rs"]
mod spec;

use std::path::Path;

#[test]
fn agent_spec_corpus() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/agent_spec");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a corpus entry").path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{}: empty corpus", dir.display());
    for file in files {
        spec::parse(&std::fs::read(&file).expect("read a corpus file"));
    }
}
