//! [`AgentError`]: everything that can go wrong with an agent file, each a one-line, lower
//! case message that starts with the file concerned.
//!
//! Messages include their cause's text instead of exposing it as a `source()`, so that a
//! binary printing the whole chain on one line (`{err:#}`) does not repeat it.

use std::path::PathBuf;

use thiserror::Error;

/// What went wrong while writing, reading or using an agent file.
#[derive(Debug, Error)]
pub enum AgentError {
    /// Reading or writing the file failed.
    #[error("{}: {cause}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        cause: std::io::Error,
    },
    /// The file does not start with the agent magic bytes.
    #[error("{}: not a brandubh agent file (the first 8 bytes are not {magic:?})", path.display())]
    NotAnAgent {
        /// The file.
        path: PathBuf,
        /// The magic bytes expected, as text.
        magic: &'static str,
    },
    /// The file was written in another version of the format.
    #[error("{}: agent file format version {found}, this build reads version {expected}", path.display())]
    Version {
        /// The file.
        path: PathBuf,
        /// The version in the file.
        found: u32,
        /// The version this build reads ([`crate::FORMAT_VERSION`]).
        expected: u32,
    },
    /// The file is shorter (or longer) than its header says.
    #[error("{}: truncated or damaged agent file: {len} bytes, the header says {expected}", path.display())]
    Length {
        /// The file.
        path: PathBuf,
        /// Its size.
        len: u64,
        /// The size its header announces (or the header's own size when it is cut short).
        expected: u64,
    },
    /// A checksum does not match: some bytes changed since the file was written.
    #[error("{}: damaged agent file: {what}", path.display())]
    Damaged {
        /// The file.
        path: PathBuf,
        /// Which check failed.
        what: String,
    },
    /// The metadata is not what this build can use (malformed, or another rule set,
    /// encoding or implausible model).
    #[error("{}: invalid agent metadata: {reason}", path.display())]
    Metadata {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The agent was trained with another board/move encoding than this build's.
    #[error("{}: encoding version {found}, this build uses {expected}", path.display())]
    Encoding {
        /// The file.
        path: PathBuf,
        /// The version in the file.
        found: u32,
        /// This build's version (`brandubh_net::encoding::ENCODING_VERSION`).
        expected: u32,
    },
    /// The weights do not fit the model the metadata describes.
    #[error("{}: weights do not fit the model: {reason}", path.display())]
    Weights {
        /// The file.
        path: PathBuf,
        /// burn's report.
        reason: String,
    },
    /// The checkpoint to export could not be read.
    #[error("{0}")]
    Checkpoint(brandubh_net::CheckpointError),
    /// The checkpoints to average into one agent do not agree, or there are none.
    #[error("cannot average the checkpoints: {0}")]
    Average(String),
    /// Search settings out of range (from the file, or asked for).
    #[error("{}: {cause}", path.display())]
    Settings {
        /// The agent file.
        path: PathBuf,
        /// The setting and its range.
        cause: brandubh_search::SettingError,
    },
    /// The search failed (the game is over, or a bug).
    #[error("{}: search: {cause}", path.display())]
    Search {
        /// The agent file.
        path: PathBuf,
        /// The search's report.
        cause: brandubh_search::SearchError,
    },
}

impl From<brandubh_net::CheckpointError> for AgentError {
    fn from(e: brandubh_net::CheckpointError) -> Self {
        AgentError::Checkpoint(e)
    }
}
