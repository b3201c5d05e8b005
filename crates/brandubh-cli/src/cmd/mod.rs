//! One module per subcommand: `Args` (clap) and `run(args) -> anyhow::Result<ExitCode>`.

pub mod ladder;
pub mod match_;
pub mod perft;
pub mod replay;

use anyhow::Context;
use brandubh_rules::Position;

/// Parses a `--position` argument, naming the option in the error.
pub fn parse_position(text: Option<&str>) -> anyhow::Result<Position> {
    match text {
        None => Ok(Position::start()),
        Some(t) => t.parse().context("--position"),
    }
}
