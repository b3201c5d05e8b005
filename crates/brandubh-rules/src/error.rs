//! Typed errors. Every message is lower case, has no trailing period and names the input.

use std::fmt;

use crate::types::{Move, Side, Square};

/// A string that is not a move in `<from>-<to>` or `<from><to>` notation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseMoveError {
    input: String,
}

impl ParseMoveError {
    pub(crate) fn new(input: &str) -> Self {
        // Keep error messages one line and bounded, whatever the input.
        let input: String = input.chars().take(40).collect();
        ParseMoveError { input }
    }

    /// The offending input (at most 40 characters of it).
    #[must_use]
    pub fn input(&self) -> &str {
        &self.input
    }
}

impl fmt::Display for ParseMoveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "malformed move {:?}: expected <from>-<to> with squares a1..g7, e.g. d5-f5",
            self.input
        )
    }
}

impl std::error::Error for ParseMoveError {}

/// Why a position string was rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PositionErrorKind {
    /// Not exactly two space-separated fields (placement and side).
    MissingSide,
    /// The side field is not `w` or `b`.
    BadSide(String),
    /// Not exactly seven ranks.
    RankCount(usize),
    /// A rank (7 = top) that does not cover exactly seven squares.
    RankWidth {
        /// Rank number, 1..=7.
        rank: u8,
    },
    /// A character that is not `A`, `D`, `K` or a digit 1–7.
    BadChar(char),
    /// Not exactly one King.
    KingCount(u32),
    /// More than eight attackers.
    TooManyAttackers(u32),
    /// More than four defenders.
    TooManyDefenders(u32),
    /// An attacker or defender on the Castle or a corner (rule 3).
    RestrictedSquare(Square),
    /// Two pieces on one square (only possible through `Position::from_parts`).
    Overlap(Square),
    /// A bit set beyond the 49 squares (only possible through `Position::from_parts`).
    OffBoard,
}

/// A string that is not a valid position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsePositionError {
    input: String,
    kind: PositionErrorKind,
}

impl ParsePositionError {
    pub(crate) fn new(input: &str, kind: PositionErrorKind) -> Self {
        let input: String = input.chars().take(80).collect();
        ParsePositionError { input, kind }
    }

    /// What is wrong.
    #[must_use]
    pub fn kind(&self) -> &PositionErrorKind {
        &self.kind
    }
}

impl fmt::Display for ParsePositionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid position {:?}: ", self.input)?;
        match &self.kind {
            PositionErrorKind::MissingSide => {
                f.write_str("expected the placement, a space and the side to move (w or b)")
            }
            PositionErrorKind::BadSide(s) => {
                write!(f, "side to move must be w or b, not {s:?}")
            }
            PositionErrorKind::RankCount(n) => {
                write!(f, "expected 7 ranks separated by /, found {n}")
            }
            PositionErrorKind::RankWidth { rank } => {
                write!(f, "rank {rank} does not describe exactly 7 squares")
            }
            PositionErrorKind::BadChar(c) => {
                write!(
                    f,
                    "unknown character {c:?} (expected A, D, K or a digit 1-7)"
                )
            }
            PositionErrorKind::KingCount(n) => write!(f, "expected exactly one King, found {n}"),
            PositionErrorKind::TooManyAttackers(n) => {
                write!(f, "at most 8 attackers are allowed, found {n}")
            }
            PositionErrorKind::TooManyDefenders(n) => {
                write!(f, "at most 4 defenders are allowed, found {n}")
            }
            PositionErrorKind::RestrictedSquare(sq) => {
                write!(f, "only the King may stand on the restricted square {sq}")
            }
            PositionErrorKind::Overlap(sq) => write!(f, "two pieces stand on {sq}"),
            PositionErrorKind::OffBoard => f.write_str("a piece lies outside the 7x7 board"),
        }
    }
}

impl std::error::Error for ParsePositionError {}

/// Why a well-formed move cannot be played in a position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IllegalMoveReason {
    /// The game is already over.
    GameOver,
    /// No piece stands on the from-square.
    NoPiece,
    /// The piece on the from-square belongs to the opponent.
    NotYourPiece(Side),
    /// From and to are the same square.
    NullMove,
    /// From and to share neither rank nor file (rule 2).
    NotStraight,
    /// A piece stands on the path or on the destination (rule 2).
    Blocked(Square),
    /// An attacker or defender would stop on or pass through a restricted square (rule 3).
    Restricted(Square),
}

/// A move that is not legal in a position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IllegalMoveError {
    /// The move.
    pub mv: Move,
    /// Why it is illegal.
    pub reason: IllegalMoveReason,
}

impl fmt::Display for IllegalMoveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "illegal move {}: ", self.mv)?;
        match self.reason {
            IllegalMoveReason::GameOver => f.write_str("the game is over"),
            IllegalMoveReason::NoPiece => write!(f, "there is no piece on {}", self.mv.from),
            IllegalMoveReason::NotYourPiece(side) => {
                write!(
                    f,
                    "the piece on {} is not yours ({side} to move)",
                    self.mv.from
                )
            }
            IllegalMoveReason::NullMove => f.write_str("a piece must move at least one square"),
            IllegalMoveReason::NotStraight => {
                f.write_str("pieces move along a rank or file only (rule 2)")
            }
            IllegalMoveReason::Blocked(sq) => {
                write!(f, "the path is blocked by the piece on {sq} (rule 2)")
            }
            IllegalMoveReason::Restricted(sq) => write!(
                f,
                "only the King may enter or pass through the restricted square {sq} (rule 3)"
            ),
        }
    }
}

impl std::error::Error for IllegalMoveError {}
