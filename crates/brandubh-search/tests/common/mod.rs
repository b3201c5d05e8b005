//! Test positions (RULES.md notation) and helpers shared by the integration tests.
#![allow(dead_code)]

use brandubh_rules::{Game, Move, Position, Side};

/// White to move; the King on a2 escapes to a1, his only win (14 legal moves).
///
/// ```text
/// 7 . . . A . . .
/// 6 . . . . . . .
/// 5 . . A D . . .
/// 4 A . . + D A A
/// 3 . . . . . . .
/// 2 K . . A . . .
/// 1 + . . A . . +
///   a b c d e f g
/// ```
pub const ESCAPE_IN_ONE: &str = "3A3/7/2AD3/A3DAA/7/K2A3/3A3 w";

/// Black to move; the King on c1 threatens c1-a1 (the way to g1 is shut by e1). Only
/// b5-b1 stops it; Black has no capture of the King.
///
/// ```text
/// 7 . . . A . . .
/// 6 . . . . . . .
/// 5 . A . D . . .
/// 4 A . . + D A .
/// 3 . . . . . . .
/// 2 . . . A . . .
/// 1 + . K . A . +
///   a b c d e f g
/// ```
pub const BLOCK_IN_ONE: &str = "3A3/7/1A1D3/A3DA1/7/3A3/2K1A2 b";

/// Black to move; d1-d3 captures the King on e3 against the attacker on f3 (rule 7).
///
/// ```text
/// 7 . . . A . . .
/// 6 . . . . . . .
/// 5 . . . D . . .
/// 4 A A . + . A A
/// 3 . . . . K A .
/// 2 . . . . . . .
/// 1 + . . A . . +
///   a b c d e f g
/// ```
pub const CAPTURE_IN_ONE: &str = "3A3/7/3D3/AA3AA/4KA1/7/3A3 b";

/// A new game from a position string.
pub fn game(position: &str) -> Game {
    Game::new(
        position
            .parse::<Position>()
            .expect("test positions are valid"),
    )
}

/// A move from its notation.
pub fn mv(s: &str) -> Move {
    s.parse().expect("test moves are well formed")
}

/// The moves after which the side to move has won.
pub fn winning_moves(game: &Game) -> Vec<Move> {
    let side = game.side_to_move();
    let mut g = game.clone();
    game.legal_moves()
        .into_iter()
        .filter(|&m| {
            g.play_unchecked(m);
            let won = g.outcome().is_some_and(|o| o.winner == side);
            g.undo();
            won
        })
        .collect()
}

/// The moves after which the opponent has no immediate win.
pub fn safe_moves(game: &Game) -> Vec<Move> {
    let mut g = game.clone();
    game.legal_moves()
        .into_iter()
        .filter(|&m| {
            g.play_unchecked(m);
            let safe = g.is_over() || winning_moves(&g).is_empty();
            g.undo();
            safe
        })
        .collect()
}

/// Plain minimax over every move, no shortcuts (the reference for the exact searches):
/// does `winner` win within `left` plies of `game`, whatever the other side plays?
pub fn wins_within(game: &mut Game, winner: Side, left: u32) -> bool {
    if let Some(o) = game.outcome() {
        return o.winner == winner;
    }
    if left == 0 {
        return false;
    }
    let mine = game.side_to_move() == winner;
    for m in game.legal_moves() {
        game.play_unchecked(m);
        let won = wins_within(game, winner, left - 1);
        game.undo();
        if won == mine {
            return mine;
        }
    }
    !mine
}
