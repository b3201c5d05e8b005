//! Checks for OpenTafl input: OTEP command lines and OTN rules strings, position records
//! and move records (`brandubh_agent::otep`, `brandubh_agent::otn`).
//!
//! Shared by the fuzz target `otep` and `crates/brandubh-agent/tests/fuzz_corpus.rs`,
//! which includes this file with `#[path]`: it may name only `brandubh_agent`,
//! its dependencies `brandubh_fs` and `brandubh_rules`, and `std`.

use brandubh_agent::{otep, otn};
use brandubh_rules::Side;

/// Feeds `data` (as text, lossily) to every parser: as a command line, a rules string, a
/// position record for either side and a move record; and each line of it as a command.
/// Never panics; errors are one line; what parses round-trips (positions through
/// `write_position`, moves through `write_move`).
pub fn parse(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    check_command(&text);
    for line in text.lines() {
        check_command(line);
    }
    match otn::check_rules(&text) {
        Ok(deviations) => {
            // Accepted rules are the standard start, 7x7.
            assert!(text.contains("dim:7"), "{text:?}");
            for d in deviations {
                assert!(!d.to_string().contains('\n'));
            }
        }
        Err(e) => one_line(&e.to_string()),
    }
    for side in [Side::White, Side::Black] {
        match otn::parse_position(&text, side) {
            Ok(pos) => {
                assert_eq!(pos.side_to_move(), side);
                let record = otn::write_position(&pos);
                assert_eq!(otn::parse_position(&record, side), Ok(pos), "{text:?}");
            }
            Err(e) => one_line(&e.to_string()),
        }
    }
    match otn::parse_move(&text) {
        Ok(mv) => assert_eq!(otn::parse_move(&otn::write_move(mv)), Ok(mv)),
        Err(e) => one_line(&e.to_string()),
    }
}

fn check_command(line: &str) {
    match otep::parse_command(line) {
        Ok(otep::Command::Analyze { count, seconds }) => {
            assert!(count >= 1 && seconds <= otep::MAX_ANALYSIS_SECONDS);
        }
        Ok(otep::Command::Rules(r)) => assert!(!r.is_empty()),
        Ok(_) => {}
        Err(e) => one_line(&e.to_string()),
    }
}

fn one_line(message: &str) {
    assert_eq!(brandubh_fs::error_line_fault(message), None, "{message:?}");
}
