//! Checks for agent files (`NAME.agent`).
//!
//! Shared by the fuzz target `agent_file` and `crates/brandubh-agent/tests/fuzz_corpus.rs`,
//! which includes this file with `#[path]`: it may name only `brandubh_agent`,
//! its dependencies `brandubh_fs` and `brandubh_rules`, and `std`.

use std::path::Path;

use brandubh_agent::format;
use brandubh_agent::{Agent, Budget};
use brandubh_rules::Game;

/// The file name errors must start with.
const FILE: &str = "fuzz/x.agent";

/// Loads `data` twice: as a whole agent file (header, lengths and checksums), and as the
/// two blocks of a file behind a valid header (bytes 0-1: the metadata length, u16 LE;
/// then the metadata; the rest is the weights), so that the metadata parser, its checks
/// and the safetensors reader see the fuzzed bytes. Never panics; an error is one line
/// starting with the file name; an agent that loads analyses the start position.
pub fn load(data: &[u8]) {
    check(data);
    if let [a, b, rest @ ..] = data {
        let n = usize::from(u16::from_le_bytes([*a, *b])).min(rest.len());
        let (meta, weights) = rest.split_at(n);
        check(&format::encode(meta, weights));
    }
}

fn check(bytes: &[u8]) {
    match Agent::from_bytes(bytes, Path::new(FILE)) {
        Ok(agent) => {
            let analysis = agent
                .analyze(&Game::default(), Budget::Simulations(2), 0)
                .unwrap_or_else(|e| panic!("a loaded agent cannot analyse: {e}"));
            assert_eq!(analysis.moves.len(), 24);
            let again = Agent::from_bytes(&agent.to_bytes(), Path::new(FILE))
                .unwrap_or_else(|e| panic!("a loaded agent does not load again: {e}"));
            assert_eq!(again.meta(), agent.meta());
        }
        Err(e) => {
            let message = e.to_string();
            assert!(message.starts_with(FILE), "{message:?}");
            assert_eq!(brandubh_fs::error_line_fault(&message), None, "{message:?}");
        }
    }
}
