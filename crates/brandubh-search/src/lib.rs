//! Batched Monte Carlo tree search for Brandubh.
#![warn(missing_docs)]

mod evaluator;

pub use evaluator::{Evaluation, Evaluator, Leaf};
