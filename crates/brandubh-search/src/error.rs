//! [`SearchError`]: everything a search or a player can refuse.

use std::fmt;

use brandubh_rules::IllegalMoveError;

use crate::config::SettingError;

/// Why a search (or a player) could not do what was asked.
#[derive(Clone, Debug, PartialEq)]
pub enum SearchError {
    /// A setting is out of range.
    Config(SettingError),
    /// The game is over: there is no move to choose.
    GameOver,
    /// `apply` got another number of evaluations than leaves were gathered.
    EvaluationCount {
        /// Leaves waiting for an evaluation.
        expected: usize,
        /// Evaluations given.
        got: usize,
    },
    /// An evaluation's priors do not match its leaf's legal moves.
    PriorCount {
        /// Index of the evaluation in the batch.
        index: usize,
        /// Legal moves of the leaf.
        expected: usize,
        /// Priors given.
        got: usize,
    },
    /// An evaluation holds a value or prior that is not finite, or a negative prior.
    InvalidEvaluation {
        /// Index of the evaluation in the batch.
        index: usize,
    },
    /// The tree cannot move on while leaves wait for evaluations.
    LeavesInFlight {
        /// Leaves waiting.
        count: usize,
    },
    /// The move given to `advance` is not legal.
    IllegalMove(IllegalMoveError),
    /// The root has not been evaluated yet, so there is no result.
    RootNotEvaluated,
}

impl fmt::Display for SearchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SearchError::Config(e) => e.fmt(f),
            SearchError::GameOver => f.write_str("the game is over: there is no move to search"),
            SearchError::EvaluationCount { expected, got } => write!(
                f,
                "expected {expected} evaluations (one per gathered leaf), got {got}"
            ),
            SearchError::PriorCount {
                index,
                expected,
                got,
            } => write!(
                f,
                "evaluation {index} has {got} priors for a leaf with {expected} legal moves"
            ),
            SearchError::InvalidEvaluation { index } => write!(
                f,
                "evaluation {index} holds a value or prior that is not finite, or a negative prior"
            ),
            SearchError::LeavesInFlight { count } => write!(
                f,
                "cannot move the tree on while {count} leaves wait for evaluations"
            ),
            SearchError::IllegalMove(e) => e.fmt(f),
            SearchError::RootNotEvaluated => {
                f.write_str("the root has not been evaluated yet: no search result")
            }
        }
    }
}

/// The message shows every cause, so `source()` returns none (they would print twice).
impl std::error::Error for SearchError {}

impl From<SettingError> for SearchError {
    fn from(e: SettingError) -> Self {
        SearchError::Config(e)
    }
}

impl From<IllegalMoveError> for SearchError {
    fn from(e: IllegalMoveError) -> Self {
        SearchError::IllegalMove(e)
    }
}
