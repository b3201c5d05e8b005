//! Evaluators that need no network: baselines, tests and benches.

use brandubh_rules::{Game, Side};
use rand::SeedableRng;
use rand::seq::IndexedRandom;
use rand_chacha::ChaCha8Rng;

use crate::evaluator::{Evaluation, Evaluator, Leaf};
use crate::heuristic;

/// Uniform priors and value 0: the search then costs only the tree and the rules, which is
/// what the benchmarks measure.
#[derive(Clone, Copy, Debug, Default)]
pub struct UniformEvaluator;

impl Evaluator for UniformEvaluator {
    fn evaluate(&mut self, leaves: &[Leaf]) -> Vec<Evaluation> {
        leaves
            .iter()
            .map(|leaf| Evaluation::uniform(leaf.moves.len(), 0.0))
            .collect()
    }
}

/// Uniform priors and the mean result of random playouts as the value: +1 for a playout the
/// side to move in the leaf wins, −1 for one it loses, 0 for one that reaches `max_plies`
/// unfinished. One playout per leaf unless [`RolloutEvaluator::with_playouts`] says more.
///
/// The playout takes a move that wins at once when there is one
/// ([`heuristic::decisive_move`]: the King's escape, his capture) and otherwise a uniformly
/// random legal move. It starts a fresh game from the leaf's position, so repetitions
/// before the leaf are not counted.
#[derive(Clone, Debug)]
pub struct RolloutEvaluator {
    rng: ChaCha8Rng,
    max_plies: u32,
    playouts: u32,
}

impl RolloutEvaluator {
    /// Playouts of at most `max_plies` moves, drawn from a generator seeded with `seed`.
    #[must_use]
    pub fn new(seed: u64, max_plies: u32) -> RolloutEvaluator {
        RolloutEvaluator {
            rng: ChaCha8Rng::seed_from_u64(seed),
            max_plies,
            playouts: 1,
        }
    }

    /// The same evaluator averaging `playouts` playouts per leaf (at least 1).
    #[must_use]
    pub fn with_playouts(mut self, playouts: u32) -> RolloutEvaluator {
        self.playouts = playouts.max(1);
        self
    }

    /// The value of one playout from `leaf`, for the side to move there.
    pub fn playout(&mut self, leaf: &Leaf) -> f32 {
        let side = leaf.position.side_to_move();
        let mut game = Game::new(leaf.position);
        while !game.is_over() && game.ply() < self.max_plies as usize {
            let mv = heuristic::decisive_move(game.position())
                .or_else(|| game.legal_moves().as_slice().choose(&mut self.rng).copied());
            let Some(mv) = mv else { break };
            game.play_unchecked(mv);
        }
        outcome_value(&game, side)
    }
}

impl Evaluator for RolloutEvaluator {
    fn evaluate(&mut self, leaves: &[Leaf]) -> Vec<Evaluation> {
        leaves
            .iter()
            .map(|leaf| {
                let total: f32 = (0..self.playouts).map(|_| self.playout(leaf)).sum();
                Evaluation::uniform(leaf.moves.len(), total / self.playouts as f32)
            })
            .collect()
    }
}

/// +1 / −1 if the game is won / lost by `side`, 0 if it is not over.
pub(crate) fn outcome_value(game: &Game, side: Side) -> f32 {
    match game.outcome() {
        Some(o) if o.winner == side => 1.0,
        Some(_) => -1.0,
        None => 0.0,
    }
}

/// Priors and value from the hand-made [`heuristic::score`], one ply deep.
///
/// The value is `tanh(score / value_scale)` for the side to move. The priors are a softmax
/// over the moves of `score(after the move) / prior_temperature` for the mover, a move that
/// wins at once (escape or King capture) scoring [`GreedyEvaluator::WIN`].
#[derive(Clone, Copy, Debug)]
pub struct GreedyEvaluator {
    /// Score that maps to a value of `tanh(1) ≈ 0.76`. Default 300.
    pub value_scale: f32,
    /// Score difference that multiplies a prior by `e`. Default 50.
    pub prior_temperature: f32,
}

impl Default for GreedyEvaluator {
    fn default() -> Self {
        GreedyEvaluator {
            value_scale: 300.0,
            prior_temperature: 50.0,
        }
    }
}

impl GreedyEvaluator {
    /// The score of a move that wins at once.
    pub const WIN: i32 = 10_000;

    fn evaluate_one(&self, leaf: &Leaf) -> Evaluation {
        let p = &leaf.position;
        let side = p.side_to_move();
        let scores: Vec<f32> = leaf
            .moves
            .iter()
            .map(|&mv| {
                let effect = p.play_unchecked(mv);
                let s = if effect.king_captured || effect.position.king_on_corner() {
                    Self::WIN
                } else {
                    heuristic::score(&effect.position, side)
                };
                s as f32 / self.prior_temperature
            })
            .collect();
        let max = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let mut priors: Vec<f32> = scores.iter().map(|s| (s - max).exp()).collect();
        let sum: f32 = priors.iter().sum();
        priors.iter_mut().for_each(|x| *x /= sum);
        Evaluation {
            value: (heuristic::score(p, side) as f32 / self.value_scale).tanh(),
            priors,
        }
    }
}

impl Evaluator for GreedyEvaluator {
    fn evaluate(&mut self, leaves: &[Leaf]) -> Vec<Evaluation> {
        leaves.iter().map(|leaf| self.evaluate_one(leaf)).collect()
    }
}
