//! The cost of [`brandubh_search::forced_win`] on positions of real play: the question the
//! check of the move asks (does the side to move win by force within P plies?), on every
//! position of seeded `alphabeta:2` games from 2-ply random openings.
//!
//!     cargo run --release -p brandubh-search --example forced_bench -- [GAMES] [PLIES] [NODES]
//!
//! With `GAMES=FILE` the positions are those of the games in FILE instead (one game per
//! line, its moves separated by spaces, as in `brandubh match --json`'s `moves`).
//! Defaults: 20 games, 9 plies, 1,000,000 positions per search (the check's budget). Prints
//! one summary line: positions, wins proven, searches that ran out of budget, positions
//! visited, seconds in all, mean and worst milliseconds per search, and a checksum of the
//! answers (plies of each win, depth searched when none), so two builds can be compared
//! for the same answers as well as for speed.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "an example may unwrap: a panic is a failed run"
)]

use std::time::Instant;

use brandubh_rules::Game;
use brandubh_search::{AlphaBetaPlayer, Player, forced_win};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn arg<T: std::str::FromStr>(i: usize, default: T) -> T {
    std::env::args()
        .nth(i + 1)
        .map_or(default, |s| s.parse().ok().expect("a number"))
}

/// The positions of the games in `path`, one per line as moves in RULES.md notation
/// separated by spaces (the `moves` of `brandubh match --json`).
fn positions_from(path: &str) -> Vec<Game> {
    let text = std::fs::read_to_string(path).expect("a readable file of games");
    let mut out = Vec::new();
    for line in text.lines() {
        let mut game = Game::default();
        for mv in line.split_whitespace() {
            out.push(game.clone());
            game.play(mv.parse().expect("a move"))
                .expect("a legal move");
        }
    }
    out.retain(|g| !g.is_over());
    out
}

/// The positions of `games` seeded `alphabeta:2` games (at most 80 plies each).
fn positions(games: u64) -> Vec<Game> {
    let mut out = Vec::new();
    let mut player = AlphaBetaPlayer::with_depth(2).unwrap();
    for seed in 0..games {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut game = Game::default();
        game.random_playout(2, |n| rng.random_range(0..n));
        while !game.is_over() && game.ply() < 80 {
            out.push(game.clone());
            let mv = player.choose(&game).unwrap();
            game.play(mv).unwrap();
        }
    }
    out
}

fn main() {
    let games = arg(0, 20u64);
    let plies = arg(1, 9u32);
    let nodes = arg(2, 1_000_000u64);
    let positions = match std::env::var("GAMES") {
        Ok(path) => positions_from(&path),
        Err(_) => positions(games),
    };
    let (mut won, mut spent, mut visited, mut checksum) = (0, 0, 0u64, 0u64);
    let mut worst = 0f64;
    let start = Instant::now();
    for game in &positions {
        let t = Instant::now();
        let r = forced_win(game, game.side_to_move(), plies, nodes);
        worst = worst.max(t.elapsed().as_secs_f64());
        visited += r.nodes;
        won += usize::from(r.plies.is_some());
        spent += usize::from(r.plies.is_none() && r.searched < plies);
        let answer = r.plies.map_or(100 + r.searched, |p| p);
        checksum = checksum.wrapping_mul(31).wrapping_add(u64::from(answer));
    }
    let seconds = start.elapsed().as_secs_f64();
    println!(
        "positions {} won {won} out_of_budget {spent} nodes {visited} seconds {seconds:.2} \
         mean_ms {:.2} worst_ms {:.1} checksum {checksum:016x}",
        positions.len(),
        1000.0 * seconds / positions.len() as f64,
        1000.0 * worst,
    );
}
