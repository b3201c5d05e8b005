//! Training-run plumbing for Brandubh Zero: everything of `brandubh train` that needs
//! neither the search nor the network.
//!
//! - [`config`]: the run configuration, read from TOML and validated, with one-line errors
//!   naming the file and the key;
//! - [`replay`]: the replay chunk file format (games with their search targets), chunk
//!   listing and the sliding [`replay::ReplayWindow`] sampled with random symmetries;
//! - [`metrics`]: `metrics.jsonl`, one JSON line per iteration;
//! - [`plot`]: PNG learning curves redrawn from the metrics;
//!
//! Every file is written with [`brandubh_fs::write_atomic`], so that a crash at any moment
//! never leaves a partial file.
//!
//! - [`layout`]: [`RunLayout`], the one owner of a run's layout: every file's name relative
//!   to the run's root, for a run directory and for a store run alike (config, state,
//!   checkpoints, chunks, metrics, plots, ladder; the pointer, actor chunks, the learner's
//!   records);
//! - [`run_dir`]: [`RunDir`], that layout as paths of a directory, and [`RunState`]
//!   (`state.json`).
//!
//! Architecture invariant: this crate knows the rules crate and the search crate's settings
//! only; it does not depend on the network crate, burn, clap or indicatif. The training
//! loop that joins them is `brandubh-train`.
//!
//! ```
//! use brandubh_rules::{Game, Position};
//! use brandubh_run::config::RunConfig;
//! use brandubh_run::replay::{self, Chunk, ChunkInfo, GameRecord, GameResult, PositionRecord};
//!
//! let config = RunConfig::from_toml_str("name = \"doc\"\n[search]\nsimulations = 8\n", "doc.toml")?;
//! assert_eq!(config.training.window_size(0), 10_000);
//!
//! // One recorded position: the start, with a uniform policy over its 24 legal moves.
//! let game = Game::new(Position::start());
//! let legal = game.legal_moves();
//! let record = GameRecord {
//!     start: Position::start(),
//!     moves: vec![legal[0]],
//!     result: GameResult::Unfinished,
//!     positions: vec![PositionRecord {
//!         ply: 0,
//!         policy: legal.iter().map(|&m| (m, 1.0 / legal.len() as f32)).collect(),
//!         root_value: 0.1,
//!         full_search: true,
//!     }],
//!     sparring: false,
//! };
//! let chunk = Chunk { info: ChunkInfo::new(&config.name, 1), games: vec![record] };
//! let dir = std::env::temp_dir().join(format!("brandubh-run-doc-{}", std::process::id()));
//! let path = brandubh_run::RunDir::new(&dir).chunk(1, 0);
//! replay::write_chunk(&path, &chunk)?;
//! assert_eq!(replay::read_chunk(&path)?, chunk);
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]

pub mod config;
pub mod layout;
pub mod metrics;
pub mod plot;
pub mod replay;
pub mod run_dir;

pub use layout::RunLayout;
pub use run_dir::{RunDir, RunDirError, RunState};
