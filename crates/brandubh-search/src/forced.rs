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
//!
//! Two things make it cheaper without changing an answer:
//! - **the last ply** ([`wins_in_one`]): a win in one move is the King's escape or capture,
//!   or a move whose destination meets a necessary condition for the other three endings
//!   (8.3, 8.4, 8.5); only moves to such squares are played;
//! - **a table of positions already decided** (win within d plies, none within d), used
//!   only when no position can occur a fifth time within the search (rule 8.4 is the one
//!   rule that makes a position's fate depend on the path to it).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::time::Instant;

use brandubh_rules::{Bitboard, FIFTH_OCCURRENCE_SPAN, Game, Move, MoveList, Position, Side};

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
    let mut search = ForcedSearch::new(game, winner, max_plies, node_budget, deadline);
    let mut game = game.clone();
    let mut searched = 0;
    for depth in 1..=max_plies {
        let won = search.wins_within(&mut game, depth);
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

/// The depth-first AND/OR search behind [`forced_win`].
struct ForcedSearch {
    winner: Side,
    /// Positions visited so far.
    nodes: u64,
    budget: u64,
    deadline: Option<Instant>,
    /// The budget or the deadline ran out: answers since are not to be trusted.
    aborted: bool,
    /// Per ply from the root: the last move that won (attack) or escaped (defence).
    killers: Vec<Option<Move>>,
    /// Positions decided so far, when answers depend on the position alone.
    table: Option<Table>,
}

/// What is known of a position: `winner` wins within `win_within` plies (`u32::MAX` when
/// not known), and not within `no_win_within` plies (0 when not known).
#[derive(Clone, Copy)]
struct Known {
    win_within: u32,
    no_win_within: u32,
}

/// The table of decided positions. Bounded: once full, new positions are not added.
type Table = HashMap<Position, Known, BuildHasherDefault<PositionHasher>>;

/// At most this many positions in the table (about 40 bytes each).
const TABLE_LIMIT: usize = 1 << 20;

/// A position's answer is stored only this many plies from the end and more (the last
/// plies are cheaper to search than to store).
const TABLE_MIN_LEFT: u32 = 3;

/// A multiply-rotate hasher for [`Position`]'s two bitboards and two small fields.
#[derive(Default)]
struct PositionHasher(u64);

impl Hasher for PositionHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.write_u64(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x517c_c1b7_2722_0a95);
    }

    fn write_isize(&mut self, n: isize) {
        self.write_u64(n as u64);
    }
}

/// Whether no position can occur for the fifth time within `plies` plies of `game`, so
/// that every answer of the search depends on the position alone (rule 8.4 is the only
/// rule that looks at the path). A position recurs at least four plies apart (see
/// [`FIFTH_OCCURRENCE_SPAN`]), so within `plies` plies it gains at most ⌈plies/4⌉
/// occurrences; it is enough that the run since the last capture cannot reach that span,
/// or that no position in it has occurred so often that those would make five (the
/// current position is among them, so a position new to the game cannot make five
/// either).
fn path_independent(game: &Game, plies: u32) -> bool {
    let gained = plies.div_ceil(4) as usize;
    let run = game.since_capture();
    if run.len() + (plies as usize) < FIFTH_OCCURRENCE_SPAN {
        return true;
    }
    run.iter()
        .all(|p| run.iter().filter(|&q| q == p).count() + gained < 5)
}

impl ForcedSearch {
    /// A search for `winner`'s forced wins from `game` at most `max_plies` deep (which
    /// decides whether the table of positions may be used).
    fn new(
        game: &Game,
        winner: Side,
        max_plies: u32,
        node_budget: u64,
        deadline: Option<Instant>,
    ) -> ForcedSearch {
        ForcedSearch {
            winner,
            nodes: 0,
            budget: node_budget,
            deadline,
            aborted: false,
            killers: vec![None; max_plies as usize + 1],
            table: path_independent(game, max_plies).then(HashMap::default),
        }
    }

    /// Whether `winner` wins by force within `left` ≥ 1 plies of `game` (either side to
    /// move); `false` also when the search was stopped ([`ForcedSearch::aborted`]).
    fn wins_within(&mut self, game: &mut Game, left: u32) -> bool {
        if game.side_to_move() == self.winner {
            self.attack(game, left, 0)
        } else {
            self.defend(game, left, 0)
        }
    }

    /// Counts one position; `true` once the budget or the deadline has run out.
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
        if left == 1 {
            return wins_in_one(game);
        }
        if decisive_move(game.position()).is_some() {
            return true;
        }
        if let Some(known) = self.known(game.position(), left) {
            return known;
        }
        let moves = ordered(game.legal_moves(), self.killers[ply]);
        for mv in moves {
            game.play_unchecked(mv);
            let won = match game.outcome() {
                Some(outcome) => outcome.winner == self.winner,
                None => self.defend(game, left - 1, ply + 1),
            };
            game.undo();
            if self.aborted {
                return false;
            }
            if won {
                self.killers[ply] = Some(mv);
                self.learn(game.position(), left, true);
                return true;
            }
        }
        self.learn(game.position(), left, false);
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
        if let Some(known) = self.known(game.position(), left) {
            return known;
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
                self.learn(game.position(), left, false);
                return false;
            }
        }
        // No legal move means the game was already over; an unfinished game has one.
        self.learn(game.position(), left, true);
        true
    }

    /// Whether the table knows if `winner` wins `position` within `left` plies.
    fn known(&self, position: &Position, left: u32) -> Option<bool> {
        if left < TABLE_MIN_LEFT {
            return None;
        }
        let known = self.table.as_ref()?.get(position)?;
        if known.win_within <= left {
            Some(true)
        } else if known.no_win_within >= left {
            Some(false)
        } else {
            None
        }
    }

    /// Records that `winner` wins `position` within `left` plies (`won`) or not.
    fn learn(&mut self, position: &Position, left: u32, won: bool) {
        let Some(table) = self.table.as_mut() else {
            return;
        };
        if left < TABLE_MIN_LEFT || (table.len() >= TABLE_LIMIT && !table.contains_key(position)) {
            return;
        }
        let known = table.entry(*position).or_insert(Known {
            win_within: u32::MAX,
            no_win_within: 0,
        });
        if won {
            known.win_within = known.win_within.min(left);
        } else {
            known.no_win_within = known.no_win_within.max(left);
        }
    }
}

/// Whether the side to move in `game` has a move that wins at once (rule 8), playing only
/// the moves that can. Besides the King's escape or capture ([`decisive_move`]), a move
/// wins at once only by leaving the opponent no move (8.5) or, for Black, by encirclement
/// (8.3) or a fifth occurrence (8.4); each has a necessary condition on the square the
/// move goes to ([`stalemating_squares`], [`encircling_squares`], and a run of
/// [`FIFTH_OCCURRENCE_SPAN`] positions since the last capture).
fn wins_in_one(game: &mut Game) -> bool {
    let position = *game.position();
    if decisive_move(&position).is_some() {
        return true;
    }
    let mover = position.side_to_move();
    let squares = if mover == Side::White {
        stalemating_squares(&position)
    } else if game.since_capture().len() + 1 >= FIFTH_OCCURRENCE_SPAN {
        Bitboard::FULL
    } else {
        stalemating_squares(&position) | encircling_squares(&position)
    };
    if squares.is_empty() {
        return false;
    }
    for mv in game.legal_moves() {
        if !squares.contains(mv.to) {
            continue;
        }
        game.play_unchecked(mv);
        let won = game.outcome().is_some_and(|o| o.winner == mover);
        game.undo();
        if won {
            return true;
        }
    }
    false
}

/// The squares a move must go to in order to leave the opponent of the side to move
/// without a legal move (rule 8.5). A piece can move when a neighbouring square is empty
/// and open to it (the King may enter the Castle and the corners). A move fills one square
/// and removes only pieces next to it, so every opponent piece that can move now must be
/// next to the destination.
fn stalemating_squares(position: &Position) -> Bitboard {
    let opponent = position.side_to_move().opponent();
    let empty = !position.occupied();
    let mut mobile = position.pieces(opponent) & (empty & !Bitboard::RESTRICTED).neighbours();
    let king = position.king();
    if opponent == Side::White && empty.neighbours().contains(king) {
        mobile = mobile.with(king);
    }
    mobile.fold(Bitboard::FULL, |squares, sq| squares & sq.bb().neighbours())
}

/// The squares a Black move must go to in order to encircle White (rule 8.3): those whose
/// filling, with every white piece next to them taken away (a capture removes no other),
/// leaves no white piece a way to the edge. The square the attacker leaves only opens
/// ways, so it is left out of the test.
fn encircling_squares(position: &Position) -> Bitboard {
    let white = position.white();
    let open = !(position.occupied() | Bitboard::RESTRICTED);
    open.filter(|&t| {
        let sources = white & !t.bb().neighbours();
        !sources.reaches_edge(!position.attackers().with(t))
    })
    .fold(Bitboard::EMPTY, Bitboard::with)
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

    /// The start position after `cycles` shuffles of c4-c3, d6-c6 and back (4 plies each).
    fn shuffled(cycles: usize) -> Game {
        let mut g = Game::default();
        for mv in ["c4-c3", "d6-c6", "c3-c4", "c6-d6"].repeat(cycles) {
            g.play(mv.parse().expect("a move")).expect("legal");
        }
        g
    }

    #[test]
    fn the_table_is_used_only_when_no_fifth_occurrence_fits_in_the_search() {
        // Rule 8.4. Fewer than 17 positions since the last capture at the end of the
        // search cannot hold five occurrences.
        assert!(path_independent(&Game::default(), 15));
        assert!(path_independent(&shuffled(2), 7));
        // Beyond that, occurrences count: within 8 plies a position gains at most 2 more,
        // within 12 at most 3. The start position has occurred 3 times after 2 shuffles,
        // 4 times after 3.
        assert!(!path_independent(&shuffled(2), 8));
        assert!(!path_independent(&shuffled(3), 4));
        assert!(path_independent(&shuffled(3), 3));
        // From the start, 16 plies could bring the start position back four times.
        assert!(!path_independent(&Game::default(), 16));
    }
}
