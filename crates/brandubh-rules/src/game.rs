//! [`Game`]: a position plus its history, with the end-of-game checks of rule 8.

use std::fmt;

use crate::error::IllegalMoveError;
use crate::error::IllegalMoveReason;
use crate::king::KingRule;
use crate::position::{MoveEffect, MoveList, Position};
use crate::types::{Move, Side};

/// Why a game ended (rule 8, in the order the checks are made).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Reason {
    /// 8.1: the King reached a corner.
    KingEscaped,
    /// 8.2: the King was captured.
    KingCaptured,
    /// 8.3: after a Black move, no white piece can reach the edge.
    Encirclement,
    /// 8.4: a position occurred for the fifth time.
    Repetition,
    /// 8.5: the player to move has no legal move.
    NoMoves,
}

impl Reason {
    /// The snake-case name used in JSON output: `king_escaped`, `king_captured`, …
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Reason::KingEscaped => "king_escaped",
            Reason::KingCaptured => "king_captured",
            Reason::Encirclement => "encirclement",
            Reason::Repetition => "repetition",
            Reason::NoMoves => "no_moves",
        }
    }

    /// The rule that produces this outcome, e.g. `"8.1"`.
    #[must_use]
    pub const fn rule(self) -> &'static str {
        match self {
            Reason::KingEscaped => "8.1",
            Reason::KingCaptured => "8.2",
            Reason::Encirclement => "8.3",
            Reason::Repetition => "8.4",
            Reason::NoMoves => "8.5",
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Reason::KingEscaped => "the King escaped to a corner",
            Reason::KingCaptured => "the King was captured",
            Reason::Encirclement => "White is encircled",
            Reason::Repetition => "a position occurred for the fifth time",
            Reason::NoMoves => "the player to move has no legal move",
        })
    }
}

/// The end of a game: who won and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Outcome {
    /// The winner (there are no draws in the rules, rule 9).
    pub winner: Side,
    /// Why.
    pub reason: Reason,
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let w = match self.winner {
            Side::White => "White",
            Side::Black => "Black",
        };
        write!(f, "{w} wins: {} (rule {})", self.reason, self.reason.rule())
    }
}

/// A game: the positions since its start, the moves played and the outcome once decided.
///
/// The first position counts as the first occurrence for repetition (rule 8.4). A game
/// created from a position that is already decided (King on a corner; White to move and
/// encircled, i.e. encircled after Black's last move; or no legal move for the side to
/// move) starts with that outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Game {
    positions: Vec<Position>,
    /// Per position, the index of the first position since the last capture (the start
    /// of its run of positions with the same pieces on the board): only those can repeat
    /// it (rule 8.4).
    run_starts: Vec<u32>,
    moves: Vec<Move>,
    outcome: Option<Outcome>,
    /// How the King is captured in the moves played from now on (rule 7 by default).
    king_rule: KingRule,
}

impl Default for Game {
    fn default() -> Self {
        Game::new(Position::start())
    }
}

impl Game {
    /// A game starting from `start`.
    #[must_use]
    pub fn new(start: Position) -> Game {
        let outcome = if start.king_on_corner() {
            Some(Outcome {
                winner: Side::White,
                reason: Reason::KingEscaped,
            })
        } else if start.side_to_move() == Side::White && start.white_encircled() {
            Some(Outcome {
                winner: Side::Black,
                reason: Reason::Encirclement,
            })
        } else if !start.has_legal_move() {
            Some(Outcome {
                winner: start.side_to_move().opponent(),
                reason: Reason::NoMoves,
            })
        } else {
            None
        };
        let mut positions = Vec::with_capacity(128);
        positions.push(start);
        let mut run_starts = Vec::with_capacity(128);
        run_starts.push(0);
        Game {
            positions,
            run_starts,
            moves: Vec::with_capacity(128),
            outcome,
            king_rule: KingRule::RULEBOOK,
        }
    }

    /// A game starting from `start` in which the King is captured by `king_rule` instead of
    /// rule 7 (see [`KingRule`]).
    #[must_use]
    pub fn with_king_rule(start: Position, king_rule: KingRule) -> Game {
        let mut game = Game::new(start);
        game.king_rule = king_rule;
        game
    }

    /// How the King is captured in this game's moves from now on.
    #[must_use]
    pub fn king_rule(&self) -> KingRule {
        self.king_rule
    }

    /// Captures the King by `king_rule` in the moves played from now on; the moves already
    /// played and the outcome so far stay as they were judged.
    pub fn set_king_rule(&mut self, king_rule: KingRule) {
        self.king_rule = king_rule;
    }

    /// The current position.
    #[must_use]
    #[expect(
        clippy::expect_used,
        reason = "every constructor pushes the start position and `undo` pops a position only \
                  after popping a move, so `positions.len() == moves.len() + 1 >= 1`"
    )]
    pub fn position(&self) -> &Position {
        self.positions
            .last()
            .expect("a game always holds its start position")
    }

    /// The start position.
    #[must_use]
    pub fn start(&self) -> &Position {
        &self.positions[0]
    }

    /// All positions, from the start to the current one.
    #[must_use]
    pub fn positions(&self) -> &[Position] {
        &self.positions
    }

    /// The moves played so far.
    #[must_use]
    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    /// Number of moves played (plies).
    #[must_use]
    pub fn ply(&self) -> usize {
        self.moves.len()
    }

    /// The side to move.
    #[must_use]
    pub fn side_to_move(&self) -> Side {
        self.position().side_to_move()
    }

    /// The outcome, once the game is over.
    #[must_use]
    pub fn outcome(&self) -> Option<Outcome> {
        self.outcome
    }

    /// Whether the game is over.
    #[must_use]
    pub fn is_over(&self) -> bool {
        self.outcome.is_some()
    }

    /// The legal moves; empty once the game is over.
    #[must_use]
    pub fn legal_moves(&self) -> MoveList {
        if self.outcome.is_some() {
            MoveList::new()
        } else {
            self.position().legal_moves()
        }
    }

    /// How many times the current position has occurred, this time included (rule 8.4).
    #[must_use]
    pub fn repetitions(&self) -> u32 {
        count_occurrences(self.since_capture())
    }

    /// Checks and plays `mv`.
    pub fn play(&mut self, mv: Move) -> Result<MoveEffect, IllegalMoveError> {
        if self.outcome.is_some() {
            return Err(IllegalMoveError {
                mv,
                reason: IllegalMoveReason::GameOver,
            });
        }
        self.position().check_move(mv)?;
        Ok(self.play_unchecked(mv))
    }

    /// Plays a legal move in an unfinished game (only `debug_assert`ed) and applies rule 8.
    pub fn play_unchecked(&mut self, mv: Move) -> MoveEffect {
        debug_assert!(
            self.outcome.is_none(),
            "move {mv} after the end of the game"
        );
        let mover = self.side_to_move();
        let effect = self.position().play_unchecked_with(mv, &self.king_rule);
        let run_start = if effect.captured.is_empty() {
            self.run_starts[self.run_starts.len() - 1]
        } else {
            self.positions.len() as u32
        };
        self.positions.push(effect.position);
        self.run_starts.push(run_start);
        self.moves.push(mv);
        self.outcome = decide(self.since_capture(), &effect, mover);
        effect
    }

    /// Plays up to `plies` random legal moves (fewer if the game ends first) and returns how
    /// many it played: the seeded random playout of tests, benchmarks and fuzz seeds.
    /// `pick(n)` chooses one of the `n` legal moves in generation order and is taken
    /// modulo `n`; the rules crate has no random number generator, the caller brings one:
    /// `game.random_playout(40, |n| rng.random_range(0..n))`.
    pub fn random_playout(&mut self, plies: usize, mut pick: impl FnMut(usize) -> usize) -> usize {
        for played in 0..plies {
            let moves = self.legal_moves();
            if moves.is_empty() {
                return played;
            }
            self.play_unchecked(moves[pick(moves.len()) % moves.len()]);
        }
        plies
    }

    /// Takes back the last move; `None` at the start.
    pub fn undo(&mut self) -> Option<Move> {
        let mv = self.moves.pop()?;
        self.positions.pop();
        self.run_starts.pop();
        // A game with a later position was not over before it.
        self.outcome = None;
        Some(mv)
    }

    /// The positions since the last capture (or the start), the current one last: the only
    /// ones the current position can repeat (rule 8.4). A fifth occurrence needs at least
    /// [`FIFTH_OCCURRENCE_SPAN`] of them.
    #[must_use]
    pub fn since_capture(&self) -> &[Position] {
        &self.positions[self.run_starts[self.run_starts.len() - 1] as usize..]
    }

    /// Leaf positions `depth` plies ahead; a finished game has no children. The last ply is
    /// counted in bulk, without playing its moves.
    pub fn perft(&mut self, depth: u32) -> u64 {
        if depth == 0 {
            return 1;
        }
        if self.outcome.is_some() {
            return 0;
        }
        if depth == 1 {
            return u64::from(self.position().count_legal_moves());
        }
        let moves = self.position().legal_moves();
        let mut total = 0;
        for mv in moves {
            self.play_unchecked(mv);
            total += self.perft(depth - 1);
            self.undo();
        }
        total
    }

    /// Like [`Game::perft`], split by root move (for `--divide`).
    pub fn perft_divide(&mut self, depth: u32) -> Vec<(Move, u64)> {
        if depth == 0 {
            return Vec::new();
        }
        self.legal_moves()
            .into_iter()
            .map(|mv| {
                self.play_unchecked(mv);
                let n = self.perft(depth - 1);
                self.undo();
                (mv, n)
            })
            .collect()
    }
}

/// Occurrences of the last position of `run` (the positions since the last capture, see
/// [`Game::since_capture`]), itself included. Positions with the same side to move are two plies
/// apart.
fn count_occurrences(run: &[Position]) -> u32 {
    let Some(current) = run.last() else {
        return 0;
    };
    let occurrences = run
        .iter()
        .rev()
        .step_by(2)
        .filter(|&p| p == current)
        .count();
    occurrences as u32
}

/// The fewest positions since the last capture among which one can occur for the fifth
/// time (rule 8.4). A position cannot recur two plies later (White's move and Black's
/// reply cannot both be undone by one ply each without a capture), so its occurrences are
/// at least four plies apart and five of them span 17 positions.
pub const FIFTH_OCCURRENCE_SPAN: usize = 17;

/// Rule 8, checked after every move, in order.
fn decide(run: &[Position], effect: &MoveEffect, mover: Side) -> Option<Outcome> {
    let p = &effect.position;
    let outcome = |winner, reason| Some(Outcome { winner, reason });
    if p.king_on_corner() {
        return outcome(Side::White, Reason::KingEscaped);
    }
    if effect.king_captured {
        return outcome(Side::Black, Reason::KingCaptured);
    }
    if mover == Side::Black && p.white_encircled() {
        return outcome(Side::Black, Reason::Encirclement);
    }
    if run.len() >= FIFTH_OCCURRENCE_SPAN && count_occurrences(run) >= 5 {
        return outcome(Side::Black, Reason::Repetition);
    }
    if !p.has_legal_move() {
        return outcome(mover, Reason::NoMoves);
    }
    None
}
