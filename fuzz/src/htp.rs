//! Checks for hnefatafl-copenhagen input: Hnefatafl Text Protocol command lines
//! (`brandubh_agent::htp`).
//!
//! Shared by the fuzz target `htp` and `crates/brandubh-agent/tests/fuzz_corpus.rs`,
//! which includes this file with `#[path]`: it may name only `brandubh_agent`,
//! its dependencies `brandubh_fs` and `brandubh_rules`, and `std`.

use brandubh_agent::htp;

/// Feeds `data` (as text, lossily) to the command parser, whole and line by line. Never
/// panics; errors are one line; a parsed move round-trips through `write_play`.
pub fn parse(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    check_command(&text);
    for line in text.lines() {
        check_command(line);
    }
}

fn check_command(line: &str) {
    match htp::parse_command(line) {
        Ok(Some(htp::Command::Play(side, mv))) => {
            assert_eq!(
                htp::parse_command(&htp::write_play(side, mv)),
                Ok(Some(htp::Command::Play(side, mv)))
            );
        }
        Ok(Some(htp::Command::TimeSettings(Some(f)))) => assert!(f.minutes <= htp::MAX_MINUTES),
        Ok(_) => {}
        Err(e) => assert_eq!(brandubh_fs::error_line_fault(&e.to_string()), None, "{e}"),
    }
}
