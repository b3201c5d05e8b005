//! The MCTS-Solver: wins in one proven without a simulation (rules 7 and 8.1), wins and
//! losses proven deeper in the tree and carried to the root, the move choice that follows
//! from them, and the plain search when the solver is off.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests may unwrap: a panic is a failed test"
)]

mod common;

use brandubh_rules::Side;
use brandubh_search::{
    Evaluation, Evaluator, Leaf, Proven, RolloutEvaluator, Search, SearchConfig, SearchResult,
    UniformEvaluator,
};
use common::{CAPTURE_IN_ONE, ESCAPE_IN_ONE, game, mv, winning_moves, wins_within};

/// White to move. The King on d2 wins in three plies: d2-d1 (or d2-a2, d2-g2...) leaves
/// two ways to a corner, and Black can shut only one; no Black piece can reach a square
/// from which it captures the King on time.
///
/// ```text
/// 7 . A A A . . .
/// 6 . . . . . . .
/// 5 . . . . . . .
/// 4 . . . + . . .
/// 3 . . . . . . .
/// 2 . . . K . . .
/// 1 + . . . . . +
///   a b c d e f g
/// ```
const WIN_IN_THREE: &str = "1AAA3/7/7/7/7/3K3/7 w";

/// The same after d2-d1: Black to move loses whatever it does.
const LOST_IN_TWO: &str = "1AAA3/7/7/7/7/7/3K3 b";

/// Counts the positions it is asked for.
struct Counting<E>(E, usize);

impl<E: Evaluator> Evaluator for Counting<E> {
    fn evaluate(&mut self, leaves: &[Leaf]) -> Vec<Evaluation> {
        self.1 += leaves.len();
        self.0.evaluate(leaves)
    }
}

fn configs(simulations: u32, solver: bool) -> [SearchConfig; 2] {
    [
        SearchConfig::puct(simulations),
        SearchConfig::gumbel(simulations),
    ]
    .map(|c| SearchConfig {
        solver,
        ..c.without_noise()
    })
}

fn search(position: &str, config: SearchConfig, seed: u64) -> (Search, SearchResult, usize) {
    let mut search = Search::new(game(position), config, seed).unwrap();
    let mut eval = Counting(RolloutEvaluator::new(seed, 100), 0);
    let result = search.run(&mut eval, 1).unwrap();
    (search, result, eval.1)
}

fn root_proof(search: &Search) -> Option<Proven> {
    search.tree().node(search.tree().root()).proven()
}

#[test]
fn a_win_in_one_is_proven_at_the_root_without_a_simulation() {
    // Rule 8.1 (the King onto a corner) for White, rule 7 (the King captured) for Black.
    for (position, win) in [(ESCAPE_IN_ONE, "a2-a1"), (CAPTURE_IN_ONE, "d1-d3")] {
        assert_eq!(winning_moves(&game(position)), [mv(win)]);
        for config in configs(400, true) {
            let (s, result, evaluated) = search(position, config, 3);
            assert_eq!(result.best_move, mv(win), "{position}");
            assert_eq!(root_proof(&s), Some(Proven { value: 1, plies: 1 }));
            assert_eq!(result.simulations, 0);
            assert_eq!(evaluated, 1, "only the root is evaluated");
            // The policy target is all on the win.
            let index = result.moves.iter().position(|&m| m == mv(win)).unwrap();
            assert_eq!(result.policy[index], 1.0);
            assert_eq!(result.policy.iter().sum::<f32>(), 1.0);
        }
    }
}

#[test]
fn a_forced_win_deeper_in_the_tree_is_proven_and_played() {
    let g = game(WIN_IN_THREE);
    assert!(winning_moves(&g).is_empty());
    for config in configs(2_000, true) {
        for seed in 0..3 {
            let (s, result, _) = search(WIN_IN_THREE, config.clone(), seed);
            assert_eq!(
                root_proof(&s),
                Some(Proven { value: 1, plies: 3 }),
                "{config:?}"
            );
            assert!(result.simulations < 2_000, "the search stops once proven");
            // The move played really wins in three: after it, every Black reply leaves
            // White a win in one (checked by the rules, not by the search).
            let mut after = g.clone();
            after.play(result.best_move).unwrap();
            assert!(!after.is_over());
            for reply in after.legal_moves() {
                let mut line = after.clone();
                line.play(reply).unwrap();
                assert!(
                    !winning_moves(&line).is_empty(),
                    "{} then {reply} does not win",
                    result.best_move
                );
            }
        }
    }
}

#[test]
fn with_a_discount_a_proven_root_is_worth_its_result_discounted_over_its_plies() {
    // An evaluator that knows nothing (values 0), so that the discounted proofs are the
    // only values that differ: a rollout's undiscounted ±1 would make a proven loss in
    // three (worth −0.9³) look better to Black than an unproven rollout loss.
    for config in configs(3_000, true) {
        let config = SearchConfig {
            discount: 0.9,
            ..config
        };
        let mut s = Search::new(game(WIN_IN_THREE), config.clone(), 1).unwrap();
        let result = s.run(&mut UniformEvaluator, 1).unwrap();
        assert_eq!(
            root_proof(&s),
            Some(Proven { value: 1, plies: 3 }),
            "{config:?}"
        );
        let root = s.tree().node(s.tree().root());
        assert!((root.value() - 0.729).abs() < 1e-5, "{}", root.value());
        assert!((result.value - 0.729).abs() < 1e-5);
    }
}

#[test]
fn a_lost_root_is_proven_once_every_move_is_refuted() {
    let g = game(LOST_IN_TWO);
    assert_eq!(g.side_to_move(), Side::Black);
    let moves = g.legal_moves().len() as u32;
    for config in configs(1_000, true) {
        let (s, result, _) = search(LOST_IN_TWO, config, 1);
        assert_eq!(
            root_proof(&s),
            Some(Proven {
                value: -1,
                plies: 2
            })
        );
        // Each move needs one simulation to find White's answer, and none needs more.
        assert_eq!(result.simulations, moves);
        assert!(g.legal_moves().contains(&result.best_move));
        let tree = s.tree();
        assert!(tree.children(tree.root()).all(|c| {
            tree.node(c).proven() == Some(Proven { value: 1, plies: 1 })
                && tree.node(c).visits() == 1
        }));
        assert_eq!(result.value, -1.0, "the root's mean is the proven value");
    }
}

#[test]
fn after_the_proven_move_the_next_search_wins_at_once() {
    let config = SearchConfig::puct(2_000).without_noise();
    let mut s = Search::new(game(WIN_IN_THREE), config, 5).unwrap();
    let first = s.run(&mut UniformEvaluator, 1).unwrap();
    // Black's reply: the node was proven won in one for White without being expanded, so
    // the next search starts a fresh root and proves it again on its first evaluation.
    s.advance(first.best_move).unwrap();
    let reply = s.game().legal_moves()[0];
    s.advance(reply).unwrap();
    let second = s.run(&mut UniformEvaluator, 1).unwrap();
    assert_eq!(root_proof(&s), Some(Proven { value: 1, plies: 1 }));
    assert_eq!(second.simulations, 0);
    let mut g = s.game().clone();
    g.play(second.best_move).unwrap();
    assert_eq!(g.outcome().map(|o| o.winner), Some(Side::White));
}

#[test]
fn without_the_solver_nothing_is_proven_and_the_whole_budget_is_spent() {
    for position in [ESCAPE_IN_ONE, CAPTURE_IN_ONE, WIN_IN_THREE, LOST_IN_TWO] {
        for config in configs(300, false) {
            let (s, result, _) = search(position, config, 2);
            assert_eq!(result.simulations, 300);
            let tree = s.tree();
            assert!(tree.ids().all(|id| tree.node(id).proven().is_none()));
        }
    }
}

#[test]
fn a_uniform_evaluator_is_enough_to_find_the_forced_win() {
    // The network knows nothing here: the proof alone picks a winning first move, and
    // stops the search before its budget.
    for seed in 0..4 {
        let [puct, _] = configs(3_000, true);
        let mut s = Search::new(game(WIN_IN_THREE), puct, seed).unwrap();
        let result = s.run(&mut UniformEvaluator, 1).unwrap();
        assert!(result.simulations < 3_000);
        let mut after = game(WIN_IN_THREE);
        after.play(result.best_move).unwrap();
        let defended = after.legal_moves().into_iter().any(|reply| {
            let mut line = after.clone();
            line.play(reply).unwrap();
            winning_moves(&line).is_empty()
        });
        assert!(
            !defended,
            "seed {seed}: {} can be defended",
            result.best_move
        );
    }
}

#[test]
fn batched_searches_with_the_solver_match_one_leaf_at_a_time() {
    // Several leaves in flight while a proof arrives must not change what is proven.
    for config in configs(2_000, true) {
        let (alone, one, _) = search(WIN_IN_THREE, config.clone(), 9);
        let mut batched = Search::new(game(WIN_IN_THREE), config, 9).unwrap();
        let mut eval = RolloutEvaluator::new(9, 100);
        let many = batched.run(&mut eval, 8).unwrap();
        assert_eq!(root_proof(&alone), root_proof(&batched));
        let mut after = game(WIN_IN_THREE);
        after.play(many.best_move).unwrap();
        assert!(after.legal_moves().into_iter().all(|reply| {
            let mut line = after.clone();
            line.play(reply).unwrap();
            !winning_moves(&line).is_empty()
        }));
        assert!(one.simulations > 0 && many.simulations > 0);
    }
}

fn with_root_proofs(simulations: u32, plies: u32) -> SearchConfig {
    SearchConfig {
        root_proof_plies: plies,
        ..SearchConfig::puct(simulations).without_noise()
    }
}

#[test]
fn root_proofs_find_the_win_in_three_with_one_simulation() {
    // The win of WIN_IN_THREE (rule 8.1) is proven before any simulation.
    let mut s = Search::new(game(WIN_IN_THREE), with_root_proofs(1, 3), 0).unwrap();
    let result = s.run(&mut UniformEvaluator, 1).unwrap();
    assert_eq!(root_proof(&s), Some(Proven { value: 1, plies: 3 }));
    assert_eq!(result.simulations, 0);
    let mut after = game(WIN_IN_THREE);
    after.play(result.best_move).unwrap();
    assert!(wins_within(&mut after, Side::White, 2));
    // Without them, one simulation proves nothing.
    let mut s = Search::new(game(WIN_IN_THREE), with_root_proofs(1, 0), 0).unwrap();
    s.run(&mut UniformEvaluator, 1).unwrap();
    assert_eq!(root_proof(&s), None);
    // Black's side of it: every move of LOST_IN_TWO is proven lost, the root too.
    let mut s = Search::new(game(LOST_IN_TWO), with_root_proofs(1, 3), 0).unwrap();
    s.run(&mut UniformEvaluator, 1).unwrap();
    assert_eq!(
        root_proof(&s),
        Some(Proven {
            value: -1,
            plies: 2
        })
    );
}

#[test]
fn root_proofs_and_the_check_of_the_move_never_play_a_move_that_loses_by_force_while_another_does_not()
 {
    // Positions from seeded random playouts where some moves lose within 3 plies (by
    // plain minimax) and some do not: the search with a single simulation and root proofs
    // 3 plies deep, or the chosen move checked 3 plies deep, never plays a losing one;
    // without them it does. Where the plain choice is not lost, the check keeps it.
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(41);
    let (mut mixed, mut blunders_without) = (0, 0);
    let mut tried = 0;
    while mixed < 8 {
        tried += 1;
        assert!(
            tried < 2_000,
            "too few positions with a mix of lost and safe moves"
        );
        let mut g = brandubh_rules::Game::default();
        let plies = rng.random_range(8..50);
        g.random_playout(plies, |n| rng.random_range(0..n));
        if g.is_over() {
            continue;
        }
        let me = g.side_to_move();
        let lost: Vec<_> = g
            .legal_moves()
            .into_iter()
            .filter(|&m| {
                let mut after = g.clone();
                after.play(m).unwrap();
                wins_within(&mut after, me.opponent(), 3)
            })
            .collect();
        if lost.is_empty() || lost.len() == g.legal_moves().len() {
            continue;
        }
        mixed += 1;
        let chosen = |prove, verify| {
            let config = SearchConfig {
                verify_plies: verify,
                ..with_root_proofs(1, prove)
            };
            let mut s = Search::new(g.clone(), config, 5).unwrap();
            s.run(&mut UniformEvaluator, 1).unwrap().best_move
        };
        assert!(!lost.contains(&chosen(3, 0)), "{}", g.position());
        let plain = chosen(0, 0);
        let checked = chosen(0, 3);
        assert!(!lost.contains(&checked), "{}", g.position());
        if lost.contains(&plain) {
            blunders_without += 1;
        } else {
            assert_eq!(checked, plain, "{}", g.position());
        }
    }
    assert!(blunders_without > 0);
}

#[test]
fn root_proofs_play_the_fastest_win_not_the_first_one_found() {
    // From a match (seed 2026, opening 57): White to move has many moves that keep a forced
    // win within 5 plies (d3-d1, first in move order, wins in 5), and f4-f7 wins in 3
    // (the King next to g7, rule 8.1). Playing the first proven win again and again
    // dragged the game out to 199 plies; the fastest must be played.
    let mut g = brandubh_rules::Game::default();
    for m in "d5-b5 d1-c1 c4-c7 d6-b6 e4-e7 d2-d1 e7-e6 f4-f7 c7-e7 b6-d6 d4-f4 d1-f1".split(' ') {
        g.play(mv(m)).unwrap();
    }
    let mut after = g.clone();
    after.play(mv("d3-d1")).unwrap();
    assert!(wins_within(&mut after, Side::White, 4));
    assert!(!wins_within(&mut after, Side::White, 2));
    let mut s = Search::new(g, with_root_proofs(1, 5), 0).unwrap();
    let result = s.run(&mut UniformEvaluator, 1).unwrap();
    assert_eq!(result.best_move, mv("f4-f7"));
    assert_eq!(root_proof(&s), Some(Proven { value: 1, plies: 3 }));
}
