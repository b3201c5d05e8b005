//! Seeded openings: a deterministic stream of balanced start lines for matches.
//!
//! Deterministic agents (alpha-beta, noise-free searches) would replay the same two games
//! in every match, so each match starts from its own opening: a few random plies from the
//! start position, the same for both games of the match. [`Openings::new`] draws them from
//! a generator seeded with the match seed; opening `i` depends only on the seed and `i`, so
//! the first `n` openings of a seed never change (the ladder relies on this to add matches
//! to a pairing later).
//!
//! A drawn line is kept only if it is *balanced* by a quick check:
//! - the game is not over and nothing was captured;
//! - neither side has a move that wins at once (the King's escape, his capture) — checked
//!   for the side to move and, as a threat, for the other side;
//! - a depth-[`OpeningConfig::check_depth`] alpha-beta search finds no forced result, and
//!   its score differs from the same search of the start position by at most
//!   [`OpeningConfig::max_imbalance`] heuristic units (100 = a defender), both from White's
//!   view;
//! - it is not a mirror image of an opening already drawn (the 8 symmetries of the board),
//!   as long as fresh ones can be found.

use std::collections::HashSet;
use std::fmt;

use brandubh_rules::{Game, Move, Position, Side, Symmetry};
use brandubh_search::{AlphaBetaPlayer, WIN, heuristic};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::EvalError;

/// How openings are drawn and checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpeningConfig {
    /// Fewest random plies, ≥ 1. Default 2.
    pub min_plies: u32,
    /// Most random plies, `min_plies..=16`. Default 4.
    pub max_plies: u32,
    /// Depth of the alpha-beta check, 1–4. Default 2.
    pub check_depth: u32,
    /// Largest allowed change of the check's score (White's view) from the start
    /// position's, in [`heuristic::score`] units (100 = a defender). Default 100.
    pub max_imbalance: i32,
}

impl Default for OpeningConfig {
    fn default() -> Self {
        OpeningConfig {
            min_plies: 2,
            max_plies: 4,
            check_depth: 2,
            max_imbalance: 100,
        }
    }
}

impl OpeningConfig {
    /// Checks every field; the error names the first bad one.
    pub fn validate(&self) -> Result<(), EvalError> {
        if self.min_plies < 1 {
            return Err(EvalError::setting(
                "opening min_plies",
                self.min_plies,
                "at least 1",
            ));
        }
        if self.max_plies < self.min_plies || self.max_plies > 16 {
            return Err(EvalError::setting(
                "opening max_plies",
                self.max_plies,
                "min_plies to 16",
            ));
        }
        if !(1..=4).contains(&self.check_depth) {
            return Err(EvalError::setting(
                "opening check_depth",
                self.check_depth,
                "1 to 4",
            ));
        }
        if self.max_imbalance < 0 {
            return Err(EvalError::setting(
                "opening max_imbalance",
                self.max_imbalance,
                "at least 0",
            ));
        }
        Ok(())
    }
}

/// A start line: the moves played from the start position before the agents take over.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Opening {
    moves: Vec<Move>,
}

impl Opening {
    /// An opening of these moves (not checked; [`Opening::game`] plays them).
    #[must_use]
    pub fn new(moves: Vec<Move>) -> Opening {
        Opening { moves }
    }

    /// The moves, from the start position.
    #[must_use]
    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    /// A game from the start position with the opening's moves played, history included
    /// (so repetitions and plies count from the real start). Illegal moves are an error.
    pub fn game(&self) -> Result<Game, brandubh_rules::IllegalMoveError> {
        let mut game = Game::default();
        for &mv in &self.moves {
            game.play(mv)?;
        }
        Ok(game)
    }

    /// Parses moves separated by spaces, as written by `Display` (`"d5-c5 c7-c6"`).
    pub fn parse(text: &str) -> Result<Opening, brandubh_rules::ParseMoveError> {
        text.split_whitespace()
            .map(str::parse)
            .collect::<Result<Vec<Move>, _>>()
            .map(Opening::new)
    }
}

impl fmt::Display for Opening {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, mv) in self.moves.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{mv}")?;
        }
        Ok(())
    }
}

/// How many fresh draws are tried before a mirror image of an earlier opening is accepted.
const FRESH_TRIES: u32 = 200;
/// How many draws may fail the balance check in a row before the stream gives up.
const MAX_TRIES: u32 = 100_000;

/// The endless, deterministic stream of balanced openings of one seed (see the module
/// documentation). Ends only if the config is so strict that no opening passes.
#[derive(Debug)]
pub struct Openings {
    rng: ChaCha8Rng,
    config: OpeningConfig,
    seen: HashSet<Position>,
    start_score: i32,
}

impl Openings {
    /// The stream of `seed` with the default checks.
    #[must_use]
    #[expect(
        clippy::expect_used,
        reason = "a constant: the default opening checks are valid (the tests draw openings \
                  through `Openings::new`); user-chosen checks go through `with_config`"
    )]
    pub fn new(seed: u64) -> Openings {
        Openings::with_config(seed, OpeningConfig::default())
            .expect("the default opening config is valid")
    }

    /// The stream of `seed` with these checks.
    pub fn with_config(seed: u64, config: OpeningConfig) -> Result<Openings, EvalError> {
        config.validate()?;
        let start_score = check_score(&Game::default(), config.check_depth).unwrap_or(0);
        Ok(Openings {
            rng: ChaCha8Rng::seed_from_u64(seed),
            config,
            seen: HashSet::new(),
            start_score,
        })
    }

    /// A random line from the start, or `None` if it ended the game.
    fn draw(&mut self) -> Option<(Opening, Game)> {
        let plies = self
            .rng
            .random_range(self.config.min_plies..=self.config.max_plies);
        let mut game = Game::default();
        game.random_playout(plies as usize, |n| self.rng.random_range(0..n));
        if game.is_over() {
            return None;
        }
        Some((Opening::new(game.moves().to_vec()), game))
    }

    /// Whether `game` (an opening just drawn) passes the balance check.
    fn balanced(&self, game: &Game) -> bool {
        let p = game.position();
        if game.is_over() || p.piece_count() != Position::start().piece_count() {
            return false;
        }
        let threat = p.with_side_to_move(p.side_to_move().opponent());
        if heuristic::decisive_move(p).is_some() || heuristic::decisive_move(&threat).is_some() {
            return false;
        }
        match check_score(game, self.config.check_depth) {
            Some(score) => (score - self.start_score).abs() <= self.config.max_imbalance,
            None => false,
        }
    }
}

impl Iterator for Openings {
    type Item = Opening;

    fn next(&mut self) -> Option<Opening> {
        let mut tries = 0;
        loop {
            tries += 1;
            if tries > MAX_TRIES {
                return None;
            }
            let Some((opening, game)) = self.draw() else {
                continue;
            };
            if !self.balanced(&game) {
                continue;
            }
            let canonical = canonical(game.position());
            if self.seen.insert(canonical) || tries > FRESH_TRIES {
                return Some(opening);
            }
        }
    }
}

/// The first `count` openings of `seed` with the default checks.
#[must_use]
pub fn openings(seed: u64, count: usize) -> Vec<Opening> {
    Openings::new(seed).take(count).collect()
}

/// The check search's score from White's view; `None` for a forced result.
fn check_score(game: &Game, depth: u32) -> Option<i32> {
    let mut searcher = AlphaBetaPlayer::with_depth(depth).ok()?;
    let result = searcher.search(game).ok()?;
    if result.score.abs() >= WIN / 2 {
        return None;
    }
    Some(match game.side_to_move() {
        Side::White => result.score,
        Side::Black => -result.score,
    })
}

/// One representative of the position's class under the 8 symmetries.
fn canonical(p: &Position) -> Position {
    Symmetry::ALL
        .iter()
        .map(|s| s.position(p))
        .min_by_key(|q| (q.attackers().0, q.defenders().0, q.king().index()))
        .unwrap_or(*p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_openings() {
        let a = openings(42, 30);
        let b = openings(42, 30);
        assert_eq!(a.len(), 30);
        assert_eq!(a, b);
        assert_ne!(a, openings(43, 30));
        // A longer list starts with the shorter one.
        assert_eq!(openings(42, 40)[..30], a[..]);
    }

    #[test]
    fn openings_are_legal_balanced_and_distinct() {
        let config = OpeningConfig::default();
        let list = openings(7, 50);
        let mut seen = HashSet::new();
        for o in &list {
            let n = o.moves().len() as u32;
            assert!((config.min_plies..=config.max_plies).contains(&n), "{o}");
            let game = o.game().unwrap();
            assert!(!game.is_over(), "{o}");
            assert_eq!(game.position().piece_count(), 13, "{o}");
            assert!(heuristic::decisive_move(game.position()).is_none(), "{o}");
            assert!(
                seen.insert(canonical(game.position())),
                "mirror repeat: {o}"
            );
            assert_eq!(Opening::parse(&o.to_string()).unwrap(), *o);
        }
    }

    #[test]
    fn bad_configs_are_refused_naming_the_field() {
        let bad = OpeningConfig {
            max_plies: 1,
            ..OpeningConfig::default()
        };
        let err = Openings::with_config(1, bad).unwrap_err().to_string();
        assert_eq!(
            err,
            "invalid setting opening max_plies = 1: expected min_plies to 16"
        );
    }
}
