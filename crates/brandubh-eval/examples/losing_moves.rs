//! Where lost games were lost: for each game read from stdin (one per line: the loser's
//! side, `white` or `black`, then how many of the moves were the match's opening, then the
//! moves in notation, all separated by spaces), walks back
//! from the end through the loser's moves and finds the earliest one after which the winner
//! had a forced win ([`brandubh_search::forced_win`]), in a run reaching the end. At that
//! move it reports how deep the forced win was, and whether the loser had another move
//! with no forced loss within that depth: one an exact root proof of that depth would have
//! found.
//!
//!     cargo run --release --example losing_moves -- [MAX_PLIES] [NODES] < games.txt
//!
//! Defaults: 11 plies, 20 million positions per proof. One tab-separated line per game:
//! line number, loser, game length, ply of the losing move (1-based, of the whole game),
//! plies from that move to the end, depth of the forced win after it, how many of the
//! loser's other moves there had no forced loss within that depth (searched completely), of
//! how many, and how many could not be decided within the budget. "-" where the walk did not
//! find a forced win even after the loser's last move (the game ended otherwise);
//! "opening" in the alternatives' columns where the loss was forced by the opening's moves
//! (the walk reached them: nobody chose those).

mod common;
use common::arg;

use std::io::BufRead;
use std::process::ExitCode;

use brandubh_rules::{Game, Move, Position, Side};
use brandubh_search::forced_win;

fn parse_game(line: &str) -> Result<(Side, usize, Vec<Move>), String> {
    let mut words = line.split_whitespace();
    let loser = match words.next() {
        Some("white") => Side::White,
        Some("black") => Side::Black,
        other => return Err(format!("loser {other:?}: expected white or black")),
    };
    let opening = match words.next().map(str::parse::<usize>) {
        Some(Ok(n)) => n,
        _ => return Err("opening plies: expected a number after the loser".to_owned()),
    };
    let moves = words
        .map(|w| w.parse::<Move>().map_err(|e| format!("move {w:?}: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((loser, opening, moves))
}

/// The game after the first `n` of `moves` (already checked legal).
fn after(moves: &[Move], n: usize) -> Game {
    let mut game = Game::new(Position::start());
    for &mv in &moves[..n] {
        game.play_unchecked(mv);
    }
    game
}

/// The output row of one lost game (the columns after the line number).
fn lost_game(loser: Side, opening: usize, moves: &[Move], max_plies: u32, nodes: u64) -> String {
    let winner = loser.opponent();
    // The loser's moves, latest first: after each, is the winner's win forced?
    let mut losing: Option<(usize, u32)> = None;
    for ply in (0..moves.len()).rev() {
        // `ply` indexes the move; the position before it has `ply` moves played.
        let mut game = after(moves, ply);
        if game.side_to_move() != loser {
            continue;
        }
        game.play_unchecked(moves[ply]);
        match forced_win(&game, winner, max_plies, nodes).plies {
            Some(d) => {
                losing = Some((ply, d));
                if ply < opening {
                    break;
                }
            }
            None => break,
        }
    }
    let head = format!("{}\t{}", loser.name(), moves.len());
    let Some((ply, depth)) = losing else {
        return format!("{head}\t-\t-\t-\t-\t-\t-");
    };
    let head = format!("{head}\t{}\t{}\t{depth}", ply + 1, moves.len() - ply);
    if ply < opening {
        return format!("{head}\topening\topening\topening");
    }
    let before = after(moves, ply);
    let (mut safe, mut of, mut undecided) = (0, 0, 0);
    for mv in before.legal_moves() {
        if mv == moves[ply] {
            continue;
        }
        of += 1;
        let mut game = before.clone();
        game.play_unchecked(mv);
        let proof = forced_win(&game, winner, depth, nodes);
        if proof.plies.is_none() {
            if proof.searched >= depth {
                safe += 1;
            } else {
                undecided += 1;
            }
        }
    }
    format!("{head}\t{safe}\t{of}\t{undecided}")
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let parsed = (|| -> Result<_, String> {
        Ok((
            arg(&args, 0, "max plies", 11u32)?,
            arg(&args, 1, "nodes", 20_000_000u64)?,
        ))
    })();
    let (max_plies, nodes) = match parsed {
        Ok(p) => p,
        Err(e) => {
            eprintln!("losing_moves: {e}");
            return ExitCode::from(2);
        }
    };
    println!("line\tloser\tplies\tlosing_ply\tto_end\tforced_in\tsafe_alternatives\tof\tundecided");
    for (n, line) in std::io::stdin().lock().lines().enumerate() {
        let line = match line {
            Ok(l) => l,
            Err(e) => {
                eprintln!("losing_moves: stdin: {e}");
                return ExitCode::FAILURE;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        let (loser, opening, moves) = match parse_game(&line) {
            Ok(g) => g,
            Err(e) => {
                eprintln!("losing_moves: line {}: {e}", n + 1);
                return ExitCode::FAILURE;
            }
        };
        let mut game = Game::new(Position::start());
        for &mv in &moves {
            if let Err(e) = game.play(mv) {
                eprintln!("losing_moves: line {}: {mv}: {e}", n + 1);
                return ExitCode::FAILURE;
            }
        }
        println!(
            "{}\t{}",
            n + 1,
            lost_game(loser, opening, &moves, max_plies, nodes)
        );
    }
    ExitCode::SUCCESS
}
