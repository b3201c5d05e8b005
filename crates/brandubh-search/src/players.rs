//! [`Player`]: anything that chooses a move in a game. Baselines for measuring strength:
//! [`RandomPlayer`], [`GreedyPlayer`], [`crate::AlphaBetaPlayer`], and the [`MctsPlayer`]
//! around any [`Evaluator`].

use brandubh_rules::{Game, Move};
use rand::SeedableRng;
use rand::seq::IndexedRandom;
use rand_chacha::ChaCha8Rng;

use crate::config::{AlgorithmConfig, SearchConfig, SettingError};
use crate::error::SearchError;
use crate::evaluator::Evaluator;
use crate::heuristic;
use crate::search::{Search, SearchResult};

/// Chooses moves. A match runner hands it the whole game (history included) at each turn.
pub trait Player {
    /// A short label for reports, e.g. `"alphabeta(depth 3)"`.
    fn name(&self) -> String;

    /// A legal move for the side to move in `game`; [`SearchError::GameOver`] if the game is
    /// over.
    fn choose(&mut self, game: &Game) -> Result<Move, SearchError>;

    /// A player whose move comes from a [`Search`] can hand the search out, so that a driver
    /// advances the searches of many games with one evaluator call ([`crate::Batcher`]).
    /// `None` (the default): the player only chooses by itself.
    fn searching(&mut self) -> Option<&mut dyn SearchingPlayer> {
        None
    }
}

/// A turn split in three, for drivers that batch evaluations across games: begin the turn,
/// let the driver run the search to its end (with any evaluator that gives the same values
/// as the player's own), then end the turn. The move is the one [`Player::choose`] would
/// play.
pub trait SearchingPlayer {
    /// Starts the search of the side to move in `game` (continuing the last one when `game`
    /// continues the game searched last).
    fn begin_turn(&mut self, game: &Game) -> Result<(), SearchError>;

    /// The search of the turn begun last.
    fn turn_search(&mut self) -> Option<&mut Search>;

    /// The move of the finished search of this turn.
    fn end_turn(&mut self) -> Result<Move, SearchError>;
}

impl<P: Player + ?Sized> Player for Box<P> {
    fn name(&self) -> String {
        (**self).name()
    }

    fn choose(&mut self, game: &Game) -> Result<Move, SearchError> {
        (**self).choose(game)
    }

    fn searching(&mut self) -> Option<&mut dyn SearchingPlayer> {
        (**self).searching()
    }
}

/// Plays a uniformly random legal move.
#[derive(Clone, Debug)]
pub struct RandomPlayer {
    rng: ChaCha8Rng,
}

impl RandomPlayer {
    /// A random player drawing from a generator seeded with `seed`.
    #[must_use]
    pub fn new(seed: u64) -> RandomPlayer {
        RandomPlayer {
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }
}

impl Player for RandomPlayer {
    fn name(&self) -> String {
        "random".to_owned()
    }

    fn choose(&mut self, game: &Game) -> Result<Move, SearchError> {
        game.legal_moves()
            .as_slice()
            .choose(&mut self.rng)
            .copied()
            .ok_or(SearchError::GameOver)
    }
}

/// Looks one ply ahead: plays a move that wins at once if there is one, never one that
/// loses at once (a fifth repetition) if it can help it, and otherwise the move after which
/// [`heuristic::score`] is best for it. Ties are broken at random.
#[derive(Clone, Debug)]
pub struct GreedyPlayer {
    rng: ChaCha8Rng,
}

impl GreedyPlayer {
    /// A greedy player breaking ties with a generator seeded with `seed`.
    #[must_use]
    pub fn new(seed: u64) -> GreedyPlayer {
        GreedyPlayer {
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }
}

impl Player for GreedyPlayer {
    fn name(&self) -> String {
        "greedy".to_owned()
    }

    fn choose(&mut self, game: &Game) -> Result<Move, SearchError> {
        let side = game.side_to_move();
        let mut game = game.clone();
        let mut best = Vec::new();
        let mut best_score = i32::MIN;
        for mv in game.legal_moves() {
            game.play_unchecked(mv);
            let score = match game.outcome() {
                Some(o) if o.winner == side => i32::MAX,
                Some(_) => i32::MIN + 1,
                None => heuristic::score(game.position(), side),
            };
            game.undo();
            if score > best_score {
                best_score = score;
                best.clear();
            }
            if score == best_score {
                best.push(mv);
            }
        }
        best.choose(&mut self.rng)
            .copied()
            .ok_or(SearchError::GameOver)
    }
}

/// Monte Carlo tree search with any evaluator, one leaf at a time, keeping the subtree of
/// the moves played between its turns.
#[derive(Debug)]
pub struct MctsPlayer<E> {
    evaluator: E,
    config: SearchConfig,
    seed: u64,
    searches: u64,
    search: Option<Search>,
    last: Option<SearchResult>,
}

impl<E: Evaluator> MctsPlayer<E> {
    /// A player searching with `config`; the searches of successive games are seeded from
    /// `seed`.
    pub fn new(
        evaluator: E,
        config: SearchConfig,
        seed: u64,
    ) -> Result<MctsPlayer<E>, SettingError> {
        config.validate()?;
        Ok(MctsPlayer {
            evaluator,
            config,
            seed,
            searches: 0,
            search: None,
            last: None,
        })
    }

    /// The result of the last search.
    #[must_use]
    pub fn last_result(&self) -> Option<&SearchResult> {
        self.last.as_ref()
    }

    /// The search of the last turn (its tree, its game).
    #[must_use]
    pub fn search(&self) -> Option<&Search> {
        self.search.as_ref()
    }

    /// The evaluator.
    pub fn evaluator_mut(&mut self) -> &mut E {
        &mut self.evaluator
    }

    /// The last search moved on to `game` when `game` continues the game searched last,
    /// else a new one.
    fn take_search(&mut self, game: &Game) -> Result<Search, SearchError> {
        let reused = self.search.take().and_then(|s| s.follow(game));
        match reused {
            Some(s) => Ok(s),
            None => {
                self.searches += 1;
                let seed = self.seed.wrapping_add(self.searches);
                Search::new(game.clone(), self.config.clone(), seed)
            }
        }
    }
}

impl<E: Evaluator> Player for MctsPlayer<E> {
    fn name(&self) -> String {
        let kind = match self.config.algorithm {
            AlgorithmConfig::Puct(_) => "puct",
            AlgorithmConfig::Gumbel(_) => "gumbel",
        };
        format!("mcts-{kind}({} simulations)", self.config.simulations)
    }

    fn choose(&mut self, game: &Game) -> Result<Move, SearchError> {
        let mut search = self.take_search(game)?;
        let result = search.run(&mut self.evaluator, 1)?;
        // A search that failed is dropped; a good one is kept for the next turn.
        self.search = Some(search);
        let mv = result.best_move;
        self.last = Some(result);
        Ok(mv)
    }

    fn searching(&mut self) -> Option<&mut dyn SearchingPlayer> {
        Some(self)
    }
}

impl<E: Evaluator> SearchingPlayer for MctsPlayer<E> {
    fn begin_turn(&mut self, game: &Game) -> Result<(), SearchError> {
        self.search = Some(self.take_search(game)?);
        Ok(())
    }

    fn turn_search(&mut self) -> Option<&mut Search> {
        self.search.as_mut()
    }

    fn end_turn(&mut self) -> Result<Move, SearchError> {
        let search = self.search.as_mut().ok_or(SearchError::RootNotEvaluated)?;
        let result = search.result()?;
        let mv = result.best_move;
        self.last = Some(result);
        Ok(mv)
    }
}
