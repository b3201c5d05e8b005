//! Checks for agent specs (`mcts:100`, `ckpt:PATH@sims=8`, …), the command-line names of
//! agents.
//!
//! Shared by the fuzz target `agent_spec` and `crates/brandubh-eval/tests/fuzz_corpus.rs`,
//! which includes this file with `#[path]`: it may name only `brandubh_eval` and `std`.

use brandubh_eval::spec::{AgentSpec, parse_list};

/// `data` as an agent spec and as a comma-separated list: parsing never panics, an error
/// is one line, and an accepted spec's canonical form parses back to the same spec.
pub fn parse(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match text.parse::<AgentSpec>() {
        Ok(spec) => {
            let canonical = spec.to_string();
            let back = canonical
                .parse::<AgentSpec>()
                .unwrap_or_else(|e| panic!("{text:?} → {canonical:?}: {e}"));
            assert_eq!(back, spec, "{text:?} → {canonical:?}");
        }
        Err(e) => assert!(!e.to_string().contains('\n'), "{e}"),
    }
    if let Err(e) = parse_list(text) {
        assert!(!e.to_string().contains('\n'), "{e}");
    }
}
