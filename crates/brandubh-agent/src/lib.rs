//! Trained Brandubh agents as one self-contained file (`NAME.agent`): the network's
//! weights, its shape, the encoding it was trained with, the search it plays best with and
//! a record of its training, behind a versioned, checksummed header.
//!
//! - [`export_checkpoint`]: a training checkpoint → an agent file, written atomically
//!   ([`export_average`]: the mean of several checkpoints' weights);
//! - [`Agent::load`]: an agent file → an [`Agent`] with its network on the fast inference
//!   path ([`brandubh_net::FastNet`]); nothing else is read (no run directory, no config);
//! - [`Agent::player`]: a seeded [`brandubh_search::MctsPlayer`] with the agent's search
//!   settings, for games and matches;
//! - [`Agent::analyze`]: a search of one position with every root move's visits, prior,
//!   search policy and value;
//! - [`Thinker`]: the search of a whole game, keeping the subtree of the moves played and
//!   thinking for a number of simulations or until a deadline ([`Budget`]);
//! - [`clock`]: the time manager (how long to think on an OpenTafl clock);
//! - [`otn`] and [`otep`]: OpenTafl's notation (rules strings, positions, moves) and its
//!   engine protocol's commands, as pure parsers and writers;
//! - [`htp`]: the hnefatafl-copenhagen project's Hnefatafl Text Protocol; [`session`]: what
//!   the two engine protocols share.
//!
//! # The file format (version 1)
//!
//! ```text
//! offset  size  field
//!      0     8  magic "BZ-AGENT"
//!      8     4  format version, u32 little-endian (1)
//!     12     4  M = metadata length, u32 LE (at most 1 MiB)
//!     16     8  W = weights length, u64 LE
//!     24     4  CRC-32 of bytes 32 .. 32+M+W (metadata and weights), u32 LE
//!     28     4  CRC-32 of bytes 0 .. 28 (the header above), u32 LE
//!     32     M  metadata, UTF-8 JSON: AgentMeta
//!   32+M     W  weights, a safetensors image (brandubh-net's checkpoint weights)
//! ```
//!
//! Loading refuses, each with a one-line [`AgentError`] naming the file and never a panic:
//! another magic ([`AgentError::NotAnAgent`]), another format version
//! ([`AgentError::Version`], checked before anything else), a file shorter or longer than
//! its header says ([`AgentError::Length`]), a checksum mismatch ([`AgentError::Damaged`]),
//! metadata for other rules, an implausible model or weights that disagree with it
//! ([`AgentError::Metadata`]), another encoding version ([`AgentError::Encoding`]) and
//! weights that do not fit the model ([`AgentError::Weights`]).
//!
//! A later format bumps [`FORMAT_VERSION`]; a reader of version N reads only version N files
//! (re-export from the checkpoint to upgrade).
//!
//! ```
//! use brandubh_agent::{Agent, AgentMeta, Budget, SourceInfo, TrainingInfo};
//! use brandubh_search::SearchSettings;
//! use brandubh_net::{Device, NetConfig};
//! use brandubh_rules::Game;
//!
//! let model = NetConfig::new().with_channels(8).with_blocks(1).init(&Device::flex());
//! let meta = AgentMeta::new(
//!     "tiny",
//!     SearchSettings::default(),
//!     TrainingInfo::default(),
//!     SourceInfo::default(),
//! );
//! let path = std::env::temp_dir().join(format!("brandubh-agent-doc-{}.agent", std::process::id()));
//! Agent::from_model(&model, meta, &path)?.save(&path)?;
//!
//! let agent = Agent::load(&path)?;
//! let analysis = agent.analyze(&Game::default(), Budget::Simulations(16), 7)?;
//! assert_eq!(analysis.moves.len(), 24);
//! assert_eq!(analysis.moves.iter().map(|m| m.visits).sum::<u32>(), 16);
//! # std::fs::remove_file(&path).ok();
//! # Ok::<(), brandubh_agent::AgentError>(())
//! ```
#![warn(missing_docs)]

mod agent;
pub mod clock;
mod error;
mod export;
pub mod format;
pub mod htp;
mod meta;
pub mod otep;
pub mod otn;
pub mod session;
mod thinker;

pub use agent::{Agent, Analysis, Budget, MoveStats};
pub use error::AgentError;
pub use export::{ExportOptions, export_average, export_checkpoint, training_info};
pub use format::{FORMAT_VERSION, MAGIC};
pub use meta::{AgentMeta, RULES_NAME, SourceInfo, TrainingInfo, utc_date};
pub use thinker::{MAX_BATCH, Thinker, ThinkerPlayer};
