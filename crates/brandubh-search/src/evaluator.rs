//! The [`Evaluator`] trait: the only way the search learns what a network (or a heuristic)
//! thinks of a position. It works on *batches* so that leaves from many trees and many games
//! go to the network in one forward pass.

use brandubh_rules::{Game, MoveList, Position};

/// A position the search wants evaluated: everything an encoder may need.
#[derive(Clone, Debug)]
pub struct Leaf {
    /// The position (placement + side to move).
    pub position: Position,
    /// How often this position has occurred in its game, this time included (rule 8.4:
    /// the fifth occurrence loses for White), 1..=4 for an unfinished game.
    pub repetitions: u32,
    /// The legal moves, in `Position::legal_moves` order; priors are returned in this order.
    pub moves: MoveList,
}

impl Leaf {
    /// The leaf for the current position of an unfinished game.
    #[must_use]
    pub fn from_game(game: &Game) -> Leaf {
        Leaf {
            position: *game.position(),
            repetitions: game.repetitions(),
            moves: game.legal_moves(),
        }
    }
}

/// What an evaluator says about one [`Leaf`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Evaluation {
    /// Expected result in [-1, 1] from the view of the side to move in the leaf.
    pub value: f32,
    /// Prior probability of each legal move, aligned with `Leaf::moves`; sums to 1.
    pub priors: Vec<f32>,
}

impl Evaluation {
    /// Equal priors over `num_moves` moves, with this value.
    #[must_use]
    pub fn uniform(num_moves: usize, value: f32) -> Evaluation {
        Evaluation {
            value,
            priors: vec![1.0 / num_moves.max(1) as f32; num_moves],
        }
    }
}

/// Evaluates batches of leaves. `&mut self` lets an evaluator keep scratch buffers and a
/// seeded random generator; share a network between threads by giving each thread its own
/// evaluator around a shared model.
pub trait Evaluator {
    /// One evaluation per leaf, in order. `leaves` is never empty and every leaf has at
    /// least one legal move.
    fn evaluate(&mut self, leaves: &[Leaf]) -> Vec<Evaluation>;
}
