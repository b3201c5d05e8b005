//! Training-run plumbing for Brandubh Zero: everything of `brandubh train` that needs
//! neither the search nor the network.
//!
//! - [`config`]: the run configuration, read from TOML and validated, with one-line errors
//!   naming the file and the key;
//! - [`replay`]: the replay chunk file format (games with their search targets), chunk
//!   listing and the sliding [`replay::ReplayWindow`] sampled with random symmetries;
//! - [`metrics`]: `metrics.jsonl`, one JSON line per iteration;
//! - [`plot`]: PNG learning curves redrawn from the metrics;
//! - [`fsutil`]: [`fsutil::write_atomic`], the one place this crate writes files, so
//!   that a crash at any moment never leaves a partial file.
//!
//! A run directory looks like:
//!
//! ```text
//! runs/NAME/
//!   metrics.jsonl                      metrics::METRICS_FILE
//!   learning_curves.png                plot::PLOT_FILE
//!   chunks/                            replay::CHUNKS_DIR
//!     chunk-000001-000000.brz          replay::chunk_file_name(iteration, seq)
//! ```
//!
//! Architecture invariant: this crate knows the rules crate only; it does not depend on
//! the search or network crates, burn, clap or indicatif. The training loop that joins
//! them lives in the binary.
//!
//! ```
//! use brandubh_rules::{Game, Position};
//! use brandubh_run::config::TrainConfig;
//! use brandubh_run::replay::{self, Chunk, ChunkInfo, GameRecord, GameResult, PositionRecord};
//!
//! let config = TrainConfig::from_toml_str("name = \"doc\"\n[search]\nsimulations = 8\n", "doc.toml")?;
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
//! };
//! let chunk = Chunk { info: ChunkInfo::new(&config.name, 1), games: vec![record] };
//! let dir = std::env::temp_dir().join(format!("brandubh-run-doc-{}", std::process::id()));
//! let path = dir.join(replay::chunk_file_name(1, 0));
//! replay::write_chunk(&path, &chunk)?;
//! assert_eq!(replay::read_chunk(&path)?, chunk);
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]

pub mod config;
pub mod fsutil;
pub mod metrics;
pub mod plot;
pub mod replay;
