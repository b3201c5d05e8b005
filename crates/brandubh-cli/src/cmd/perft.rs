//! `brandubh perft DEPTH [--position POS] [--divide]`.

use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

use brandubh_rules::Game;

use crate::out;

/// Count the leaf positions DEPTH plies ahead (a finished game has no children).
///
/// The count is the last line of stdout; with --divide, one `MOVE COUNT` line per root move
/// comes first. Timing goes to stderr.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Plies to look ahead (0–12).
    #[arg(value_parser = clap::value_parser!(u32).range(0..=12))]
    depth: u32,
    /// Start position in RULES.md notation (default: the start of the game).
    #[arg(long, value_name = "POS")]
    position: Option<String>,
    /// Print the count below each root move first.
    #[arg(long)]
    divide: bool,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let pos = super::parse_position(args.position.as_deref())?;
    let mut game = Game::new(pos);
    let mut w = out::stdout();
    let t = Instant::now();
    let total = if args.divide && args.depth > 0 {
        let mut lines: Vec<(String, u64)> = game
            .perft_divide(args.depth)
            .into_iter()
            .map(|(mv, n)| (mv.to_string(), n))
            .collect();
        lines.sort();
        for (mv, n) in &lines {
            writeln!(w, "{mv} {n}")?;
        }
        lines.iter().map(|(_, n)| n).sum()
    } else {
        game.perft(args.depth)
    };
    let secs = t.elapsed().as_secs_f64();
    writeln!(w, "{total}")?;
    out::flush(&mut w)?;
    eprintln!(
        "perft({}) = {total} in {secs:.3} s ({:.1}M leaves/s)",
        args.depth,
        total as f64 / secs.max(1e-9) / 1e6
    );
    Ok(ExitCode::SUCCESS)
}
