//! [`EvalError`]: everything evaluation can refuse or fail at, each a one-line message that
//! names the input concerned.
//!
//! Messages include their cause's text instead of exposing it as a `source()`, so that a
//! binary printing the whole chain on one line (`{err:#}`) does not repeat it.

use std::path::PathBuf;

use thiserror::Error;

use crate::elo::EloError;
use crate::spec::SpecError;

/// What went wrong while preparing agents, playing matches or running a ladder.
#[derive(Debug, Error)]
pub enum EvalError {
    /// An agent spec does not parse.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// A checkpoint could not be read (the message names the file).
    #[error("{0}")]
    Checkpoint(String),
    /// A run directory holds no complete checkpoint.
    #[error("{}: no checkpoints (looked for *.json + *.safetensors pairs in {})", run.display(), dir.display())]
    NoCheckpoints {
        /// The run directory.
        run: PathBuf,
        /// Where checkpoints were looked for.
        dir: PathBuf,
    },
    /// Reading or writing a file or directory failed.
    #[error("{}: {cause}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The error, as text.
        cause: String,
    },
    /// The search settings an agent spec asks for are out of range.
    #[error("agent {agent}: {cause}")]
    AgentConfig {
        /// The agent, as its spec.
        agent: String,
        /// What is wrong.
        cause: String,
    },
    /// A player failed to choose a move.
    #[error("agent {agent} failed in match {index}, game {game}, ply {ply}: {cause}")]
    Player {
        /// The agent, as its spec.
        agent: String,
        /// The match (0-based).
        index: u32,
        /// The game of the match, 1 or 2.
        game: u32,
        /// The ply at which it failed.
        ply: usize,
        /// The player's error, as text.
        cause: String,
    },
    /// A match, opening or ladder setting is out of range.
    #[error("invalid setting {name} = {value}: expected {expected}")]
    Setting {
        /// The setting, e.g. `"matches"`.
        name: &'static str,
        /// The value given, as text.
        value: String,
        /// What it accepts.
        expected: &'static str,
    },
    /// A sequential test's settings (`--sprt`, `[evaluation.sprt]`) are malformed or out
    /// of range.
    #[error("SPRT {text:?}: {cause}")]
    Sprt {
        /// The settings, as given (`ELO0,ELO1[,ALPHA,BETA]`).
        text: String,
        /// What is wrong.
        cause: String,
    },
    /// The worker threads could not be started.
    #[error("cannot start {threads} worker threads: {cause}")]
    Threads {
        /// Threads asked for.
        threads: usize,
        /// The error, as text.
        cause: String,
    },
    /// A stored games file holds a line that is not a match record.
    #[error("{}: line {line}: {cause}", path.display())]
    GamesFile {
        /// The file.
        path: PathBuf,
        /// Line number, from 1.
        line: usize,
        /// What is wrong.
        cause: String,
    },
    /// The rating fit failed.
    #[error(transparent)]
    Elo(#[from] EloError),
    /// A plot could not be drawn.
    #[error("{}: cannot draw the plot: {cause}", path.display())]
    Plot {
        /// The PNG file.
        path: PathBuf,
        /// plotters' report.
        cause: String,
    },
}

impl EvalError {
    /// An [`EvalError::Io`] for `path`.
    pub(crate) fn io(path: impl Into<PathBuf>, err: impl std::fmt::Display) -> EvalError {
        EvalError::Io {
            path: path.into(),
            cause: err.to_string(),
        }
    }

    /// An [`EvalError::Setting`].
    pub(crate) fn setting(
        name: &'static str,
        value: impl std::fmt::Display,
        expected: &'static str,
    ) -> EvalError {
        EvalError::Setting {
            name,
            value: value.to_string(),
            expected,
        }
    }
}
