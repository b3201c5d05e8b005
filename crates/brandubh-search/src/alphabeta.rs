//! [`AlphaBetaPlayer`]: negamax with alpha-beta pruning and iterative deepening, to a depth
//! or a time limit, over the hand-made [`heuristic::score`].

use std::time::{Duration, Instant};

use brandubh_rules::{Game, Move};

use crate::config::{SettingError, check};
use crate::error::SearchError;
use crate::heuristic;
use crate::players::Player;

/// Score of a win at the root; a win `n` plies ahead scores `WIN - n`.
pub const WIN: i32 = 1 << 20;
const INFINITY: i32 = 1 << 30;
/// How many nodes pass between two looks at the clock.
const CLOCK_INTERVAL: u64 = 1024;

/// How deep and how long [`AlphaBetaPlayer`] searches.
#[derive(Clone, Debug, PartialEq)]
pub struct AlphaBetaConfig {
    /// Deepest iteration, in plies, ≥ 1. Default 4.
    pub max_depth: u32,
    /// Stop deepening when this time is spent (the first iteration always completes); the
    /// deepest completed iteration decides. Default: none.
    pub time_limit: Option<Duration>,
    /// Game ply at which a line counts as unfinished (score 0). Default: none.
    pub ply_cap: Option<u32>,
}

impl Default for AlphaBetaConfig {
    fn default() -> Self {
        AlphaBetaConfig {
            max_depth: 4,
            time_limit: None,
            ply_cap: None,
        }
    }
}

impl AlphaBetaConfig {
    /// Checks every field; the error names the first bad one.
    pub fn validate(&self) -> Result<(), SettingError> {
        check("max_depth", self.max_depth, "1 to 64", |v| {
            (1.0..=64.0).contains(&v)
        })?;
        if let Some(cap) = self.ply_cap {
            check("ply_cap", cap, "at least 1", |v| v >= 1.0)?;
        }
        Ok(())
    }
}

/// What an alpha-beta search found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AlphaBetaResult {
    /// The best move of the deepest completed iteration.
    pub best_move: Move,
    /// Its score for the side to move: [`heuristic::score`] units, or `±(WIN − plies)` for
    /// a forced result.
    pub score: i32,
    /// Depth of that iteration.
    pub depth: u32,
    /// Nodes visited by all iterations.
    pub nodes: u64,
}

/// Negamax alpha-beta with iterative deepening; deterministic. Terminal positions score
/// `±(WIN − ply)` so nearer wins are preferred; a move that wins at once
/// ([`heuristic::decisive_move`]) is recognised without playing it.
#[derive(Clone, Debug)]
pub struct AlphaBetaPlayer {
    config: AlphaBetaConfig,
    nodes: u64,
    deadline: Option<Instant>,
    aborted: bool,
}

impl AlphaBetaPlayer {
    /// A player with these settings.
    pub fn new(config: AlphaBetaConfig) -> Result<AlphaBetaPlayer, SettingError> {
        config.validate()?;
        Ok(AlphaBetaPlayer {
            config,
            nodes: 0,
            deadline: None,
            aborted: false,
        })
    }

    /// A player searching `max_depth` plies, without a time limit.
    pub fn with_depth(max_depth: u32) -> Result<AlphaBetaPlayer, SettingError> {
        AlphaBetaPlayer::new(AlphaBetaConfig {
            max_depth,
            ..AlphaBetaConfig::default()
        })
    }

    /// Searches the current position of `game`.
    pub fn search(&mut self, game: &Game) -> Result<AlphaBetaResult, SearchError> {
        let mut game = game.clone();
        let mut moves = game.legal_moves();
        let Some(&first) = moves.first() else {
            return Err(SearchError::GameOver);
        };
        self.nodes = 0;
        self.aborted = false;
        let start = Instant::now();
        let mut result = AlphaBetaResult {
            best_move: first,
            score: -INFINITY,
            depth: 0,
            nodes: 0,
        };
        for depth in 1..=self.config.max_depth {
            // The first iteration always completes, so there is always a searched move.
            self.deadline = self
                .config
                .time_limit
                .filter(|_| depth > 1)
                .map(|t| start + t);
            let mut alpha = -INFINITY;
            let mut best = 0;
            for (i, &mv) in moves.iter().enumerate() {
                game.play_unchecked(mv);
                let score = -self.negamax(&mut game, depth - 1, -INFINITY, -alpha, 1);
                game.undo();
                if self.aborted {
                    break;
                }
                if score > alpha {
                    alpha = score;
                    best = i;
                }
            }
            if self.aborted {
                break;
            }
            // The best move is tried first in the next iteration.
            moves[..=best].rotate_right(1);
            result = AlphaBetaResult {
                best_move: moves[0],
                score: alpha,
                depth,
                nodes: self.nodes,
            };
            if alpha.abs() >= WIN - self.config.max_depth as i32 {
                break;
            }
        }
        result.nodes = self.nodes;
        Ok(result)
    }

    /// The score of `game`'s position for its side to move, `ply` plies below the root.
    fn negamax(&mut self, game: &mut Game, depth: u32, mut alpha: i32, beta: i32, ply: i32) -> i32 {
        self.nodes += 1;
        if self.nodes.is_multiple_of(CLOCK_INTERVAL)
            && self.deadline.is_some_and(|d| Instant::now() >= d)
        {
            self.aborted = true;
        }
        if self.aborted {
            return 0;
        }
        if let Some(outcome) = game.outcome() {
            return if outcome.winner == game.side_to_move() {
                WIN - ply
            } else {
                ply - WIN
            };
        }
        if self
            .config
            .ply_cap
            .is_some_and(|cap| game.ply() >= cap as usize)
        {
            return 0;
        }
        if depth == 0 {
            return heuristic::score(game.position(), game.side_to_move());
        }
        if heuristic::decisive_move(game.position()).is_some() {
            return WIN - ply - 1;
        }
        let mut best = -INFINITY;
        for mv in game.legal_moves() {
            game.play_unchecked(mv);
            let score = -self.negamax(game, depth - 1, -beta, -alpha, ply + 1);
            game.undo();
            if self.aborted {
                return 0;
            }
            best = best.max(score);
            alpha = alpha.max(score);
            if alpha >= beta {
                break;
            }
        }
        best
    }
}

impl Player for AlphaBetaPlayer {
    fn name(&self) -> String {
        format!("alphabeta(depth {})", self.config.max_depth)
    }

    fn choose(&mut self, game: &Game) -> Result<Move, SearchError> {
        self.search(game).map(|r| r.best_move)
    }
}
