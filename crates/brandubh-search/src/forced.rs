//! [`forced_win`]: an exact search for a forced win of one side within a number of plies.
//!
//! The question is the game-theoretic one, with no heuristic: can `winner` end the game in
//! its favour within `n` plies whatever the other side does? It is an AND/OR search:
//! `winner` needs one move that wins, the other side must have no move that escapes.
//! Rule 8 is applied by [`Game`] on every move (escape, capture, encirclement, the fifth
//! repetition, no moves), so every way to win or lose counts, with the game's history.
//! Iterative deepening returns the shortest forced win; a node budget bounds the work, and
//! what was proven before the budget ran out is reported. Move ordering is a killer move
//! per ply (the last move that won or escaped there), tried first.

use std::time::Instant;

use brandubh_rules::{Game, Move, MoveList, Side};

use crate::heuristic::decisive_move;

/// How many positions [`forced_win_until`] visits between readings of the clock (about a
/// millisecond).
pub const CLOCK_EVERY: u64 = 2048;

/// What [`forced_win`] proved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ForcedWin {
    /// Plies to the shortest forced win (counting both sides' moves from the position), if
    /// one was found.
    pub plies: Option<u32>,
    /// Every depth up to this many plies was searched completely: with `plies` `None`,
    /// there is no forced win within this many plies (0 when not even the first depth
    /// finished).
    pub searched: u32,
    /// Positions visited by all depths.
    pub nodes: u64,
}

/// Whether `winner` wins `game` by force within `max_plies` plies (counted from the
/// current position, both sides' moves), searching at most about `node_budget` positions.
/// Iterative deepening, one ply at a time, so the first win found is the shortest. A
/// finished game is a win in 0 plies or never one.
#[must_use]
pub fn forced_win(game: &Game, winner: Side, max_plies: u32, node_budget: u64) -> ForcedWin {
    forced_win_until(game, winner, max_plies, node_budget, None)
}

/// [`forced_win`] that also stops at `deadline` (read every [`CLOCK_EVERY`] positions):
/// what was proven by then is reported, like a spent budget.
#[must_use]
pub fn forced_win_until(
    game: &Game,
    winner: Side,
    max_plies: u32,
    node_budget: u64,
    deadline: Option<Instant>,
) -> ForcedWin {
    if let Some(outcome) = game.outcome() {
        return ForcedWin {
            plies: (outcome.winner == winner).then_some(0),
            searched: max_plies,
            nodes: 0,
        };
    }
    let mut search = ForcedSearch {
        winner,
        nodes: 0,
        budget: node_budget,
        deadline,
        aborted: false,
        killers: vec![None; max_plies as usize + 1],
    };
    let mut game = game.clone();
    let mut searched = 0;
    for depth in 1..=max_plies {
        let won = if game.side_to_move() == winner {
            search.attack(&mut game, depth, 0)
        } else {
            search.defend(&mut game, depth, 0)
        };
        if search.aborted {
            break;
        }
        if won {
            return ForcedWin {
                plies: Some(depth),
                searched: depth,
                nodes: search.nodes,
            };
        }
        searched = depth;
    }
    ForcedWin {
        plies: None,
        searched,
        nodes: search.nodes,
    }
}

struct ForcedSearch {
    winner: Side,
    nodes: u64,
    budget: u64,
    deadline: Option<Instant>,
    aborted: bool,
    /// Per ply from the root: the last move that won (attack) or escaped (defence).
    killers: Vec<Option<Move>>,
}

impl ForcedSearch {
    fn count(&mut self) -> bool {
        self.nodes += 1;
        if self.nodes > self.budget
            || (self.nodes.is_multiple_of(CLOCK_EVERY)
                && self.deadline.is_some_and(|d| Instant::now() >= d))
        {
            self.aborted = true;
        }
        self.aborted
    }

    /// `winner` to move, `left` ≥ 1 plies: is there a move that wins within them?
    fn attack(&mut self, game: &mut Game, left: u32, ply: usize) -> bool {
        if self.count() {
            return false;
        }
        if decisive_move(game.position()).is_some() {
            return true;
        }
        let moves = ordered(game.legal_moves(), self.killers[ply]);
        for mv in moves {
            game.play_unchecked(mv);
            let won = match game.outcome() {
                Some(outcome) => outcome.winner == self.winner,
                None => left >= 2 && self.defend(game, left - 1, ply + 1),
            };
            game.undo();
            if self.aborted {
                return false;
            }
            if won {
                self.killers[ply] = Some(mv);
                return true;
            }
        }
        false
    }

    /// The other side to move, `left` plies: does every move lose within them?
    fn defend(&mut self, game: &mut Game, left: u32, ply: usize) -> bool {
        if self.count() {
            return false;
        }
        // A win at once for the defender (the King's capture or escape) refutes the line.
        if decisive_move(game.position()).is_some() {
            return false;
        }
        let moves = ordered(game.legal_moves(), self.killers[ply]);
        for mv in moves {
            game.play_unchecked(mv);
            let lost = match game.outcome() {
                Some(outcome) => outcome.winner == self.winner,
                None => left >= 2 && self.attack(game, left - 1, ply + 1),
            };
            game.undo();
            if self.aborted {
                return false;
            }
            if !lost {
                self.killers[ply] = Some(mv);
                return false;
            }
        }
        // No legal move means the game was already over; an unfinished game has one.
        true
    }
}

/// `moves` with `first` (if among them) moved to the front.
fn ordered(mut moves: MoveList, first: Option<Move>) -> MoveList {
    if let Some(k) = first
        && let Some(i) = moves.iter().position(|&m| m == k)
    {
        moves[..=i].rotate_right(1);
    }
    moves
}
