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

#[test]
fn set_root_proof_plies_sets_the_next_roots_proofs_only_before_its_search_starts() {
    // `1AAA3/7/7/7/7/3K3/7 w`: d2-d1 leaves the King two ways to a corner (rule 8.1), a
    // win in three that the root proofs find before any simulation, with the solver off
    // too (self-play proves one side's root moves without it).
    let game = Game::new("1AAA3/7/7/7/7/3K3/7 w".parse().unwrap());
    for solver in [true, false] {
        let config = SearchConfig {
            solver,
            ..SearchConfig::gumbel(4).without_noise()
        };
        let mut s = Search::new(game.clone(), config.clone(), 1).unwrap();
        assert!(
            !s.set_root_proof_plies(16),
            "deeper than MAX_ROOT_PROOF_PLIES"
        );
        assert!(s.set_root_proof_plies(3));
        let r = s.run(&mut UniformEvaluator, 1).unwrap();
        assert_eq!(r.simulations, 0, "proven before any simulation");
        assert_eq!(r.best_move.to_string(), "d2-d1");
        assert_eq!(r.policy.iter().filter(|&&p| p > 0.0).count(), 1);
        // Once the root's search has run, its proofs are fixed.
        assert!(!s.set_root_proof_plies(0));
        // Without them, four simulations do not see it.
        let mut s = Search::new(game.clone(), config, 1).unwrap();
        assert!(s.set_root_proof_plies(0));
        assert!(s.run(&mut UniformEvaluator, 1).unwrap().simulations > 0);
    }
}
