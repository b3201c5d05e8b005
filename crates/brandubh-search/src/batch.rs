//! [`Batcher`]: one step of many searches at once. It gathers leaves from every search it is
//! given, evaluates all of them in **one** evaluator call and hands each search its share
//! back. Self-play (many games of one network) and matches (many games, each side's leaves
//! going to its own network) both advance their searches with it, so that the network
//! always sees a batch instead of one position at a time.

use std::time::{Duration, Instant};

use crate::error::SearchError;
use crate::evaluator::{Evaluator, Leaf};
use crate::search::Search;

/// Reusable buffers for [`Batcher::round`].
#[derive(Debug, Default)]
pub struct Batcher {
    leaves: Vec<Leaf>,
    counts: Vec<usize>,
}

/// What one round did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Round {
    /// Leaves evaluated (0: no search had a leaf to give; nothing was evaluated).
    pub leaves: usize,
    /// Time spent inside the evaluator.
    pub eval_time: Duration,
}

impl Batcher {
    /// Empty buffers.
    #[must_use]
    pub fn new() -> Batcher {
        Batcher::default()
    }

    /// Gathers up to `leaves_per_search` leaves from each of `searches` (virtual loss
    /// spreads several over one tree), evaluates them in one call of `evaluator`, and
    /// applies each search's evaluations. A search that is done gives no leaves. With one
    /// leaf per search every search proceeds exactly as [`Search::run`] with a batch of 1.
    pub fn round<E: Evaluator + ?Sized>(
        &mut self,
        searches: &mut [&mut Search],
        leaves_per_search: usize,
        evaluator: &mut E,
    ) -> Result<Round, SearchError> {
        self.leaves.clear();
        self.counts.clear();
        for search in searches.iter_mut() {
            let n = search.gather(leaves_per_search.max(1), &mut self.leaves);
            self.counts.push(n);
        }
        if self.leaves.is_empty() {
            return Ok(Round::default());
        }
        let t = Instant::now();
        let evaluations = evaluator.evaluate(&self.leaves);
        let eval_time = t.elapsed();
        let mut offset = 0;
        for (search, &n) in searches.iter_mut().zip(&self.counts) {
            if n > 0 {
                search.apply(&evaluations[offset..offset + n])?;
                offset += n;
            }
        }
        Ok(Round {
            leaves: self.leaves.len(),
            eval_time,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{RolloutEvaluator, SearchConfig, UniformEvaluator};
    use brandubh_rules::Game;

    /// Counts the positions it is asked for, in calls.
    struct Counting(Vec<usize>);
    impl Evaluator for Counting {
        fn evaluate(&mut self, leaves: &[Leaf]) -> Vec<crate::Evaluation> {
            self.0.push(leaves.len());
            UniformEvaluator.evaluate(leaves)
        }
    }

    #[test]
    fn a_round_evaluates_every_searchs_leaf_in_one_call_and_matches_a_lone_search() {
        let config = SearchConfig::puct(24).without_noise();
        let game = Game::default();
        let mut searches: Vec<Search> = (0..3)
            .map(|seed| Search::new(game.clone(), config.clone(), seed).unwrap())
            .collect();
        let mut batcher = Batcher::new();
        let mut evaluator = Counting(Vec::new());
        loop {
            let mut refs: Vec<&mut Search> = searches.iter_mut().collect();
            if batcher.round(&mut refs, 1, &mut evaluator).unwrap().leaves == 0 {
                break;
            }
        }
        // The root evaluation plus 24 simulations, three searches per call.
        assert_eq!(evaluator.0.len(), 25);
        assert!(evaluator.0.iter().all(|&n| n == 3));
        for (seed, search) in searches.iter_mut().enumerate() {
            let alone = Search::new(game.clone(), config.clone(), seed as u64)
                .unwrap()
                .run(&mut UniformEvaluator, 1)
                .unwrap();
            assert_eq!(search.result().unwrap(), alone);
        }
        // Done searches give nothing.
        let mut refs: Vec<&mut Search> = searches.iter_mut().collect();
        let round = batcher
            .round(&mut refs, 4, &mut RolloutEvaluator::new(1, 10))
            .unwrap();
        assert_eq!(round, Round::default());
    }
}
