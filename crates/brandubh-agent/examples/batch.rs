//! Leaves per network call at equal time per move: self-play games of one agent file, each
//! move searched side by side by a thinker sending one leaf per call and one sending N
//! (spread by virtual loss); the game follows the first.
//!
//! ```sh
//! cargo run --release -p brandubh-agent --example batch -- models/brandubh-v1.agent 50 10 8
//! ```
//! Arguments: agent file, milliseconds per move, games, leaves per call (default 50, 10, 8).

use std::time::Duration;

use brandubh_agent::{Agent, Budget};
use brandubh_rules::Game;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args
        .first()
        .map_or("models/brandubh-v1.agent", String::as_str);
    let ms: u64 = args.get(1).map_or(Ok(50), |s| s.parse())?;
    let games: u64 = args.get(2).map_or(Ok(10), |s| s.parse())?;
    let batch: usize = args.get(3).map_or(Ok(8), |s| s.parse())?;
    let agent = Agent::load(path)?;
    let budget = Budget::Time(Duration::from_millis(ms));
    let (mut ones, mut batched, mut same) = (Vec::new(), Vec::new(), 0usize);
    for g in 0..games {
        let mut one = agent.thinker(g)?;
        let mut many = agent.thinker(g)?;
        many.set_batch(batch);
        let mut game = Game::default();
        while !game.is_over() && game.ply() < 300 {
            let (a, b) = if game.ply() % 2 == 0 {
                let a = one.think(&game, budget)?;
                (a, many.think(&game, budget)?)
            } else {
                let b = many.think(&game, budget)?;
                (one.think(&game, budget)?, b)
            };
            ones.push(a.simulations);
            batched.push(b.simulations);
            same += usize::from(a.best_move == b.best_move);
            game.play(a.best_move)?;
        }
    }
    let median = |v: &mut Vec<u32>| {
        v.sort_unstable();
        v.get(v.len() / 2).copied().unwrap_or(0)
    };
    let moves = ones.len();
    println!("{path}, {ms} ms per move, {games} games, {moves} moves");
    println!(
        "median new simulations per move: {} with 1 leaf per call, {} with {batch}; same move {:.0} %",
        median(&mut ones),
        median(&mut batched),
        100.0 * same as f64 / moves.max(1) as f64
    );
    Ok(())
}
