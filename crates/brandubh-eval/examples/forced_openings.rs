//! Which of a seed's match openings are lost by force, and for whom: an exact search
//! ([`brandubh_search::forced_win`]) from the position after each opening's moves.
//!
//!     cargo run --release --example forced_openings -- [SEED] [COUNT] [MAX_PLIES] [NODES]
//!
//! Defaults: seed 2026 (the strength benchmark's), 100 openings, 13 plies, 200 million
//! positions per opening and side. One line per opening, tab-separated: index, moves, side
//! to move, then for White and for Black the plies of the shortest forced win (`-` for
//! none) and how many plies were searched completely. A forced win for White means every
//! Black player loses that opening, whatever its strength; "none within n" says nothing
//! about longer lines.

mod common;
use common::arg;

use std::process::ExitCode;
use std::time::Instant;

use brandubh_eval::Openings;
use brandubh_rules::Side;
use brandubh_search::forced_win;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let parsed = (|| -> Result<_, String> {
        Ok((
            arg(&args, 0, "seed", 2026u64)?,
            arg(&args, 1, "count", 100usize)?,
            arg(&args, 2, "max plies", 13u32)?,
            arg(&args, 3, "nodes", 200_000_000u64)?,
        ))
    })();
    let (seed, count, max_plies, nodes) = match parsed {
        Ok(p) => p,
        Err(e) => {
            eprintln!("forced_openings: {e}");
            return ExitCode::from(2);
        }
    };
    println!(
        "index\topening\tto_move\twhite_wins_in\twhite_searched\tblack_wins_in\tblack_searched\tnodes\tseconds"
    );
    for (i, opening) in Openings::new(seed).take(count).enumerate() {
        let game = match opening.game() {
            Ok(g) => g,
            Err(e) => {
                eprintln!("forced_openings: opening {i} ({opening}): {e}");
                return ExitCode::FAILURE;
            }
        };
        let start = Instant::now();
        let white = forced_win(&game, Side::White, max_plies, nodes);
        let black = forced_win(&game, Side::Black, max_plies, nodes);
        let show = |p: Option<u32>| p.map_or_else(|| "-".to_owned(), |p| p.to_string());
        println!(
            "{i}\t{opening}\t{}\t{}\t{}\t{}\t{}\t{}\t{:.1}",
            game.side_to_move().name(),
            show(white.plies),
            white.searched,
            show(black.plies),
            black.searched,
            white.nodes + black.nodes,
            start.elapsed().as_secs_f64()
        );
    }
    ExitCode::SUCCESS
}
