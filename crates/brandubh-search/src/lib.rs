//! Batched Monte Carlo tree search for Brandubh: PUCT (AlphaZero) and Gumbel AlphaZero
//! behind one [`Search`], network-free evaluators, and baseline players.
//!
//! The search never calls a network. It asks an [`Evaluator`] for a *batch* of leaves and
//! gets back, for each, a value in [-1, 1] for the side to move and priors over its legal
//! moves. A search step is split in two so that leaves of many games can share one
//! evaluator call:
//!
//! - [`Search::gather`] selects leaves (adding virtual loss so that several leaves of one
//!   tree can be in flight) and hands them out;
//! - [`Search::apply`] takes their evaluations back and backs the values up.
//!
//! A self-play driver keeps one [`Search`] per game and loops: gather a few leaves from
//! every search into one `Vec<Leaf>`, remember how many each gave, call the evaluator
//! once, hand each search its slice of the evaluations; when a search
//! [`is_done`](Search::is_done), take its [`result`](Search::result), play the move with
//! [`advance`](Search::advance) (the subtree is kept) and go on.
//!
//! ```
//! use brandubh_rules::{Game, Position};
//! use brandubh_search::{Proven, RolloutEvaluator, Search, SearchConfig};
//!
//! // Black to move; the King on c1 threatens c1-a1, and only b5-b1 stops it.
//! let position: Position = "3A3/7/1A1D3/A3DA1/7/3A3/2K1A2 b".parse()?;
//! let config = SearchConfig::puct(400).without_noise();
//! let mut search = Search::new(Game::new(position), config, 7)?;
//! let result = search.run(&mut RolloutEvaluator::new(7, 100), 1)?;
//! assert_eq!(result.best_move.to_string(), "b5-b1");
//! assert_eq!(result.visits.iter().sum::<u32>(), 400);
//!
//! // With the solver (on by default) a win in one is proven without a simulation.
//! let position: Position = "3A3/7/2AD3/A3DAA/7/K2A3/3A3 w".parse()?;
//! let mut search = Search::new(Game::new(position), SearchConfig::puct(400), 7)?;
//! let result = search.run(&mut RolloutEvaluator::new(7, 100), 1)?;
//! assert_eq!(result.best_move.to_string(), "a2-a1");
//! assert_eq!(result.simulations, 0);
//! let root = search.tree().node(search.tree().root());
//! assert_eq!(root.proven(), Some(Proven { value: 1, plies: 1 }));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`forced_win`] is an exact search for a forced win within a number of plies, with no
//! heuristic: the bound on what any player can do from a position.
//!
//! Baseline players share the [`Player`] trait: [`RandomPlayer`], [`GreedyPlayer`] (one ply
//! over [`heuristic::score`]), [`AlphaBetaPlayer`] and [`MctsPlayer`] around any evaluator.
#![warn(missing_docs)]

mod alphabeta;
mod batch;
mod cache;
mod config;
mod error;
mod evaluator;
mod evaluators;
mod forced;
mod gumbel;
pub mod heuristic;
mod players;
mod puct;
mod search;
mod settings;
mod solver;
mod tree;

pub use alphabeta::{AlphaBetaConfig, AlphaBetaPlayer, AlphaBetaResult, WIN};
pub use batch::{Batcher, Round};
pub use cache::{CacheStats, CachedEvaluator, EvalCache, MAX_CACHE_POSITIONS, canonical};
pub use config::{
    AlgorithmConfig, Fpu, GumbelConfig, MAX_ROOT_PROOF_PLIES, PuctConfig, ROOT_PROOF_NODES,
    SearchConfig, SettingError, VERIFY_NODES,
};
pub use error::SearchError;
pub use evaluator::{Evaluation, Evaluator, Leaf};
pub use evaluators::{GreedyEvaluator, RolloutEvaluator, UniformEvaluator};
pub use forced::{CLOCK_EVERY, ForcedWin, forced_win, forced_win_until};
pub use players::{GreedyPlayer, MctsPlayer, Player, RandomPlayer, SearchingPlayer};
pub use search::{MAX_TERMINALS_PER_GATHER, Search, SearchResult, search};
pub use settings::{Algorithm, MAX_SIMULATIONS, SearchSettings, UnknownAlgorithm};
pub use solver::Proven;
pub use tree::{Node, NodeId, Tree};
