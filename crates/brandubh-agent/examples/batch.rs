//! Leaves per network call at equal time per move: self-play games of one agent file, each
//! move searched side by side by a thinker sending one leaf per call and one sending N
//! (spread by virtual loss); the game follows the first.
//!
//! ```sh
//! cargo run --release -p brandubh-agent --example batch -- models/brandubh-v1.agent 50 10 8
//! ```
//! Arguments: agent file, milliseconds per move, games, leaves per call (default 50, 10, 8).

mod common;

use common::{Setup, median};

fn main() -> common::Result<()> {
    let setup = Setup::from_args()?;
    let batch: usize = setup.rest.first().map_or(Ok(8), |s| s.parse())?;
    let (mut ones, mut batched, mut same) = (Vec::new(), Vec::new(), 0usize);
    setup.side_by_side(
        |many| many.set_batch(batch),
        |a, b| {
            ones.push(a.simulations);
            batched.push(b.simulations);
            same += usize::from(a.best_move == b.best_move);
        },
        |_, _| {},
    )?;
    let moves = ones.len();
    println!("{}", setup.headline(moves));
    println!(
        "median new simulations per move: {} with 1 leaf per call, {} with {batch}; same move {:.0} %",
        median(&mut ones),
        median(&mut batched),
        100.0 * same as f64 / moves.max(1) as f64
    );
    Ok(())
}
