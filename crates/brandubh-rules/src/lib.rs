//! The exact rules of Brandubh ("Brandubh 2.5W", as resolved in the project's RULES.md):
//! a 7×7 tafl game where White's King and four defenders face eight Black attackers.
//!
//! This crate knows nothing of search or networks. It offers:
//! - vocabulary types: [`Square`], [`Bitboard`] (49 bits of a `u64`), [`Move`], [`Side`];
//! - [`Position`]: validated placement + side to move, legal move generation and captures
//!   (rules 2–7), position notation through `FromStr`/`Display`;
//! - [`Game`]: a position with its history, the outcomes of rule 8 and five-fold repetition;
//! - [`KingCapture`]/[`KingRule`]: rule 7 and the King-capture variants other programs
//!   referee by, as data a [`Game`] is given;
//! - [`Symmetry`]: the 8 symmetries of the square;
//! - [`Game::perft`] with bulk counting at the last ply.
//!
//! ```
//! use brandubh_rules::{Game, Move, Position};
//!
//! let mut game = Game::new(Position::start());
//! assert_eq!(game.legal_moves().len(), 24);
//! let mv: Move = "d5-c5".parse()?;
//! game.play(mv)?;
//! assert_eq!(game.position().to_string(), "3A3/3A3/2D4/AADKDAA/3D3/3A3/3A3 b");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]

mod error;
mod game;
mod king;
mod position;
mod symmetry;
mod types;

pub use error::{
    IllegalMoveError, IllegalMoveReason, ParseMoveError, ParsePositionError, PositionErrorKind,
};
pub use game::{FIFTH_OCCURRENCE_SPAN, Game, Outcome, Reason};
pub use king::{KingCapture, KingRule, KingSides};
pub use position::{MAX_MOVES, MoveEffect, MoveList, Position};
pub use symmetry::Symmetry;
pub use types::{Bitboard, Direction, Move, NUM_SQUARES, Piece, SIZE, Side, Square};
