//! What tree reuse buys at equal time per move: self-play games of one agent file, each
//! move searched twice side by side for the same time, by a thinker that keeps its tree
//! between moves and by one that starts afresh; the game follows the reusing thinker.
//!
//! ```sh
//! cargo run --release -p brandubh-agent --example reuse -- models/brandubh-v1.agent 50 10
//! ```
//! Arguments: agent file, milliseconds per move, games (default 50 ms, 10 games).

mod common;

use common::{Setup, median};

fn main() -> common::Result<()> {
    let setup = Setup::from_args()?;
    let (mut moves, mut new_with, mut reused, mut new_without) = (0u64, 0u64, 0u64, 0u64);
    let mut same = 0u64;
    // Root visits per move with reuse (new + kept) and without.
    let (mut roots_with, mut roots_without) = (Vec::new(), Vec::new());
    setup.side_by_side(
        |without| without.set_reuse(false),
        |a, b| {
            moves += 1;
            new_with += u64::from(a.simulations);
            reused += u64::from(a.reused);
            new_without += u64::from(b.simulations);
            same += u64::from(a.best_move == b.best_move);
            roots_with.push(a.simulations + a.reused);
            roots_without.push(b.simulations);
        },
        |g, game| eprintln!("game {}: {} plies, {:?}", g + 1, game.ply(), game.outcome()),
    )?;
    let per = |n: u64| n as f64 / moves.max(1) as f64;
    println!("{}", setup.headline(moves));
    println!(
        "with reuse:    {:.0} new simulations per move + {:.0} visits kept = {:.0} at the root",
        per(new_with),
        per(reused),
        per(new_with + reused)
    );
    println!(
        "without reuse: {:.0} new simulations per move",
        per(new_without)
    );
    println!(
        "root visits with / without: {:.2}x; same move chosen {:.0} % of the time",
        (new_with + reused) as f64 / new_without.max(1) as f64,
        100.0 * same as f64 / moves.max(1) as f64
    );
    println!(
        "median root visits per move: {} with reuse, {} without (endgames, where most \
         simulations end on terminal positions and cost no network call, raise the means)",
        median(&mut roots_with),
        median(&mut roots_without)
    );
    Ok(())
}
