//! Per-move simulation budgets (playout-cap randomisation).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests may unwrap: a panic is a failed test"
)]

use brandubh_rules::Game;
use brandubh_search::{Search, SearchConfig, UniformEvaluator};

#[test]
fn set_simulations_changes_the_budget_of_the_next_search_only_before_it_starts() {
    for config in [SearchConfig::puct(32), SearchConfig::gumbel(32)] {
        let mut s = Search::new(Game::default(), config, 1).unwrap();
        assert!(s.set_simulations(5));
        let r = s.run(&mut UniformEvaluator, 1).unwrap();
        assert_eq!(r.simulations, 5);
        assert_eq!(r.visits.iter().sum::<u32>(), 5);
        // Once a search has run, its root's budget is fixed...
        assert!(!s.set_simulations(7));
        // ...and the next root takes a new one.
        s.advance(r.best_move).unwrap();
        assert!(s.set_simulations(12));
        assert!(!s.set_simulations(0));
        let r = s.run(&mut UniformEvaluator, 4).unwrap();
        assert_eq!(r.simulations, 12);
    }
}
