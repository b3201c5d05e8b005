//! Evaluation for Brandubh Zero: how strong is an agent?
//!
//! - [`spec`]: agent specs such as `random`, `alphabeta:3`, `mcts:1000` or
//!   `run:runs/quick@sims=64`, parsed into an [`AgentSpec`] with one-line errors;
//! - [`agent`]: [`Entrant::prepare`] loads what a spec needs once (checkpoint weights) and
//!   then makes a fresh seeded player per game ([`PlayerFactory`]);
//! - [`openings`]: a deterministic, seeded stream of balanced openings;
//! - [`game`]: one game of a match, its seeded players and its record;
//! - [`scoring`]: two-game matches scored exactly as RULES.md, "Matches";
//! - [`runner`]: [`run_matches`] plays N matches in parallel into a [`MatchReport`]
//!   (record, game counts by colour, mean length, Elo with a 95 % interval; JSON with
//!   serde);
//! - [`report`](mod@report): tables over saved match reports (`brandubh report`);
//! - [`sprt`]: sequential probability ratio tests over matches ([`run_sprt`] plays until
//!   one decides);
//! - [`elo`]: the Elo curve, Wilson intervals and a maximum-likelihood Bradley–Terry fit
//!   over many players with Fisher-information intervals;
//! - [`ladder`](mod@ladder): every checkpoint of a run and some baselines on one scale,
//!   with the games stored in the run and reused, a table and a plot;
//! - [`training`]: the matches of one training iteration (new network against the previous
//!   one and a baseline).
//!
//! Dependencies point one way: this crate uses the rules, search, network and training
//! crates; none of them uses it. The training loop reaches evaluation through a callback
//! that the binary wires up to [`training::evaluate_iteration`].
//!
//! ```
//! use brandubh_eval::{Entrant, MatchConfig, run_matches};
//!
//! let a = Entrant::from_spec("greedy")?;
//! let b = Entrant::from_spec("random")?;
//! let config = MatchConfig { matches: 2, threads: 1, seed: 7, ..MatchConfig::default() };
//! let report = run_matches(&a, &b, &config, &|_| {})?;
//! assert_eq!(report.matches, 2);
//! assert_eq!(report.games.games, 4);
//! println!("{report}");
//! # Ok::<(), brandubh_eval::EvalError>(())
//! ```
#![warn(missing_docs)]

pub mod agent;
pub mod elo;
mod error;
pub mod game;
pub mod ladder;
pub mod openings;
pub mod plot;
pub mod report;
pub mod runner;
pub mod scoring;
pub mod seeds;
pub mod spec;
pub mod sprt;
mod table;
pub mod training;

pub use agent::{
    Checkpoint, Entrant, PlayerFactory, latest_checkpoint, list_checkpoints, run_search_settings,
};
pub use elo::{EloInterval, Rating};
pub use error::EvalError;
pub use ladder::{LadderConfig, LadderReport, ladder};
pub use openings::{Opening, OpeningConfig, Openings};
pub use runner::{
    GameStats, MatchConfig, MatchRecord, MatchReport, PlayedGame, Progress, WinsBy, run_matches,
    run_sprt,
};
pub use scoring::{Contestant, MatchGame, MatchResult, score_match};
pub use seeds::fresh_seed;
pub use spec::{AgentSpec, SpecError};
pub use sprt::{Sprt, SprtConfig, SprtReport, SprtVerdict};
