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

use brandubh_rules::{Game, Move, MoveList, Side};

use crate::heuristic::decisive_move;

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
    aborted: bool,
    /// Per ply from the root: the last move that won (attack) or escaped (defence).
    killers: Vec<Option<Move>>,
}

impl ForcedSearch {
    fn count(&mut self) -> bool {
        self.nodes += 1;
        if self.nodes > self.budget {
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

#[cfg(test)]
mod tests {
    use super::*;
    use brandubh_rules::Position;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn game(p: &str) -> Game {
        Game::new(p.parse::<Position>().expect("position"))
    }

    /// Plain minimax over every move, no shortcuts: does `winner` win within `left` plies?
    fn brute(game: &mut Game, winner: Side, left: u32) -> bool {
        if let Some(o) = game.outcome() {
            return o.winner == winner;
        }
        if left == 0 {
            return false;
        }
        let mine = game.side_to_move() == winner;
        for mv in game.legal_moves() {
            game.play_unchecked(mv);
            let won = brute(game, winner, left - 1);
            game.undo();
            if mine && won {
                return true;
            }
            if !mine && !won {
                return false;
            }
        }
        !mine
    }

    #[test]
    fn a_corner_in_one_is_a_win_in_one_ply() {
        // Rule 8.1: the King on a2 reaches a1.
        let g = game("3A3/7/2AD3/A3DAA/7/K2A3/3A3 w");
        let r = forced_win(&g, Side::White, 9, 1_000_000);
        assert_eq!(r.plies, Some(1));
        // White wins on the first ply, so Black has no forced win at any depth.
        let r = forced_win(&g, Side::Black, 4, 1_000_000);
        assert_eq!(r.plies, None);
        assert_eq!(r.searched, 4);
    }

    #[test]
    fn a_double_threat_is_a_win_in_three() {
        // d2-d1 leaves the King two ways to a corner (rule 8.1); Black can shut one.
        let g = game("1AAA3/7/7/7/7/3K3/7 w");
        let r = forced_win(&g, Side::White, 9, 1_000_000);
        assert_eq!(r.plies, Some(3));
        assert!(brute(&mut g.clone(), Side::White, 3));
        assert!(!brute(&mut g.clone(), Side::White, 1));
    }

    #[test]
    fn a_threat_black_can_shut_is_no_forced_win_and_the_wrong_reply_loses() {
        // Black to move; the King on c1 threatens c1-a1, and only b5-b1 stops it.
        let g = game("3A3/7/1A1D3/A3DA1/7/3A3/2K1A2 b");
        let r = forced_win(&g, Side::White, 2, 1_000_000);
        assert_eq!(r.plies, None);
        assert_eq!(r.searched, 2);
        // Any other reply: White wins at once.
        let mut other = g.clone();
        let mv = other
            .legal_moves()
            .iter()
            .copied()
            .find(|m| m.to_string() != "b5-b1")
            .expect("another move");
        other.play(mv).expect("legal");
        assert_eq!(forced_win(&other, Side::White, 1, 1000).plies, Some(1));
    }

    #[test]
    fn agrees_with_plain_minimax_on_random_positions() {
        let mut rng = ChaCha8Rng::seed_from_u64(15);
        let mut checked = 0;
        let mut wins = 0;
        while checked < 60 {
            let mut g = Game::default();
            let plies = rng.random_range(6..40);
            g.random_playout(plies, |n| rng.random_range(0..n));
            if g.is_over() {
                continue;
            }
            for winner in [Side::White, Side::Black] {
                for depth in 1..=3 {
                    let r = forced_win(&g, winner, depth, u64::MAX);
                    let exact = (1..=depth).find(|&d| brute(&mut g.clone(), winner, d));
                    assert_eq!(r.plies, exact, "{} {winner:?} {depth}", g.position());
                    wins += u32::from(exact.is_some());
                }
            }
            checked += 1;
        }
        // The sample holds wins to find, not only their absence.
        assert!(wins > 0);
    }

    #[test]
    fn the_budget_stops_the_search_and_says_how_far_it_got() {
        let g = Game::default();
        let r = forced_win(&g, Side::White, 15, 2_000);
        assert_eq!(r.plies, None);
        assert!(r.searched < 15);
        assert!(r.nodes <= 2_001);
    }
}
