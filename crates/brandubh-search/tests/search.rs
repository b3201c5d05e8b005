//! The MCTS: tactics found with a rollout evaluator, bookkeeping invariants, tree reuse,
//! determinism, Gumbel's improved policy, the gather/apply protocol and its errors.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests may unwrap: a panic is a failed test"
)]

mod common;

use brandubh_rules::{Game, Reason, Side};
use brandubh_search::{
    AlgorithmConfig, Evaluation, Evaluator, GumbelConfig, Leaf, NodeId, RolloutEvaluator, Search,
    SearchConfig, SearchError, Tree, UniformEvaluator,
};
use common::{BLOCK_IN_ONE, CAPTURE_IN_ONE, ESCAPE_IN_ONE, game, mv, safe_moves, winning_moves};

/// PUCT and Gumbel (considering every move), both without noise.
fn both(simulations: u32) -> [SearchConfig; 2] {
    let gumbel = SearchConfig {
        algorithm: AlgorithmConfig::Gumbel(GumbelConfig {
            considered_moves: 96,
            ..GumbelConfig::default()
        }),
        ..SearchConfig::gumbel(simulations)
    };
    [SearchConfig::puct(simulations), gumbel].map(SearchConfig::without_noise)
}

/// The plain MCTS, without the solver: for the tests of how terminal nodes, the ply cap
/// and the Gumbel policy work inside the tree (`tests/solver.rs` tests the solver).
fn plain(config: SearchConfig) -> SearchConfig {
    SearchConfig {
        solver: false,
        ..config
    }
}

fn run(game: &Game, config: &SearchConfig, seed: u64) -> brandubh_search::SearchResult {
    let mut search = Search::new(game.clone(), config.clone(), seed).unwrap();
    search
        .run(&mut RolloutEvaluator::new(seed, 200).with_playouts(4), 1)
        .unwrap()
}

#[test]
fn finds_the_king_escape_in_one() {
    let g = game(ESCAPE_IN_ONE);
    assert_eq!(winning_moves(&g), [mv("a2-a1")]);
    for config in both(50) {
        for seed in 0..5 {
            assert_eq!(run(&g, &config, seed).best_move, mv("a2-a1"), "{config:?}");
        }
    }
}

#[test]
fn black_blocks_an_escape_in_one() {
    let g = game(BLOCK_IN_ONE);
    assert!(winning_moves(&g).is_empty());
    assert_eq!(safe_moves(&g), [mv("b5-b1")]);
    assert!(g.legal_moves().len() > 30);
    for config in both(200) {
        for seed in 0..5 {
            assert_eq!(run(&g, &config, seed).best_move, mv("b5-b1"), "{config:?}");
        }
    }
}

#[test]
fn black_captures_the_king() {
    let g = game(CAPTURE_IN_ONE);
    assert_eq!(winning_moves(&g), [mv("d1-d3")]);
    for config in both(100) {
        for seed in 0..5 {
            let best = run(&g, &config, seed).best_move;
            let mut after = g.clone();
            after.play(best).unwrap();
            let outcome = after.outcome().expect("the capture ends the game");
            assert_eq!(
                (outcome.winner, outcome.reason),
                (Side::Black, Reason::KingCaptured)
            );
        }
    }
}

#[test]
fn visit_counts_sum_to_the_simulations_spent() {
    let mut g = Game::default();
    for m in ["d5-c5", "d6-e6", "e4-e5"] {
        g.play(mv(m)).unwrap();
    }
    for config in [
        SearchConfig::puct(300),
        SearchConfig::gumbel(300),
        SearchConfig::gumbel(7),
    ] {
        for batch in [1, 8] {
            let mut search = Search::new(g.clone(), config.clone(), 3).unwrap();
            let result = search
                .run(&mut RolloutEvaluator::new(3, 50), batch)
                .unwrap();
            assert_eq!(result.visits.iter().sum::<u32>(), config.simulations);
            assert_eq!(result.simulations, config.simulations);
            assert_eq!(result.moves.as_slice(), g.legal_moves().as_slice());
            let tree = search.tree();
            // The root's own evaluation is its one visit beyond the simulations.
            assert_eq!(tree.node(tree.root()).visits(), config.simulations + 1);
            assert!((result.policy.iter().sum::<f32>() - 1.0).abs() < 1e-4);
            assert!(result.value.abs() <= 1.0);
            // Every expanded node: one visit for its evaluation plus its children's.
            for id in tree.ids() {
                let node = tree.node(id);
                if node.is_expanded() {
                    let below: u32 = tree.children(id).map(|c| tree.node(c).visits()).sum();
                    assert_eq!(node.visits(), below + 1);
                }
            }
        }
    }
}

/// Checks that no leaf handed out is a finished game, and counts them.
struct CheckingEvaluator {
    inner: RolloutEvaluator,
    leaves: usize,
}

impl Evaluator for CheckingEvaluator {
    fn evaluate(&mut self, leaves: &[Leaf]) -> Vec<Evaluation> {
        for leaf in leaves {
            assert!(!leaf.moves.is_empty());
            assert!(
                !Game::new(leaf.position).is_over(),
                "terminal leaf {}",
                leaf.position
            );
            assert!((1..=4).contains(&leaf.repetitions));
        }
        self.leaves += leaves.len();
        self.inner.evaluate(leaves)
    }
}

fn terminal_nodes(tree: &Tree) -> Vec<NodeId> {
    tree.ids()
        .filter(|&id| tree.node(id).is_terminal())
        .collect()
}

#[test]
fn terminal_nodes_are_never_expanded() {
    for (position, winner) in [(ESCAPE_IN_ONE, 1.0), (CAPTURE_IN_ONE, 1.0)] {
        for config in both(300).map(plain) {
            let mut eval = CheckingEvaluator {
                inner: RolloutEvaluator::new(5, 100),
                leaves: 0,
            };
            let mut search = Search::new(game(position), config, 5).unwrap();
            search.run(&mut eval, 4).unwrap();
            let tree = search.tree();
            let terminals = terminal_nodes(tree);
            assert!(!terminals.is_empty());
            for &id in &terminals {
                let node = tree.node(id);
                assert_eq!(node.num_children(), 0);
                assert!(!node.is_expanded());
            }
            // The winning child is terminal, revisited, and never sent to the evaluator:
            // the evaluator saw one leaf per expanded node.
            let win = tree
                .children(tree.root())
                .find(|&c| tree.node(c).is_terminal() && tree.node(c).visits() > 1)
                .expect("the win is revisited");
            assert_eq!(
                tree.node(win).value(),
                -winner,
                "lost for the side to move there"
            );
            let expanded = tree.ids().filter(|&id| tree.node(id).is_expanded()).count();
            assert_eq!(eval.leaves, expanded);
        }
    }
}

#[test]
fn the_ply_cap_ends_lines_with_value_zero() {
    let g = Game::default();
    let config = SearchConfig {
        ply_cap: Some(1),
        ..plain(SearchConfig::puct(50))
    };
    let mut eval = CheckingEvaluator {
        inner: RolloutEvaluator::new(1, 10),
        leaves: 0,
    };
    let mut search = Search::new(g, config, 1).unwrap();
    let result = search.run(&mut eval, 1).unwrap();
    assert_eq!(eval.leaves, 1, "only the root is evaluated");
    let tree = search.tree();
    assert_eq!(
        tree.len(),
        25,
        "the root and its 24 children, none expanded"
    );
    let visited = tree
        .children(tree.root())
        .filter(|&c| tree.node(c).visits() > 0);
    assert!(visited.clone().count() > 1);
    assert!(visited.clone().all(|c| tree.node(c).is_terminal()));
    assert!(visited.clone().all(|c| tree.node(c).value() == 0.0));
    assert_eq!(result.visits.iter().sum::<u32>(), 50);
    assert_eq!(result.value, 0.0);
}

#[test]
fn tree_reuse_keeps_the_visits_of_the_played_subtree() {
    for config in [SearchConfig::puct(400), SearchConfig::gumbel(64)] {
        let mut search = Search::new(Game::default(), config.clone(), 11).unwrap();
        let mut eval = RolloutEvaluator::new(11, 60);
        let first = search.run(&mut eval, 1).unwrap();
        let tree = search.tree();
        let child = tree
            .children(tree.root())
            .find(|&c| tree.node(c).mv() == Some(first.best_move))
            .unwrap();
        let kept_visits = tree.node(child).visits();
        let kept: Vec<_> = tree
            .children(child)
            .map(|c| (tree.node(c).mv(), tree.node(c).visits()))
            .collect();
        let kept_sum: u32 = kept.iter().map(|k| k.1).sum();
        assert!(kept_sum > 0, "{config:?}");

        search.advance(first.best_move).unwrap();
        let tree = search.tree();
        let root = tree.node(tree.root());
        assert_eq!(root.visits(), kept_visits);
        assert_eq!(root.mv(), None);
        let now: Vec<_> = tree
            .children(tree.root())
            .map(|c| (tree.node(c).mv(), tree.node(c).visits()))
            .collect();
        assert_eq!(now, kept);
        assert_eq!(search.simulations(), 0);
        assert!(!search.is_done());

        let second = search.run(&mut eval, 1).unwrap();
        assert_eq!(second.simulations, config.simulations);
        assert_eq!(
            second.visits.iter().sum::<u32>(),
            kept_sum + config.simulations
        );
        // The opponent's reply is kept as well.
        search.advance(second.best_move).unwrap();
        assert!(search.tree().node(search.tree().root()).visits() > 0);
    }
}

#[test]
fn same_seed_same_result() {
    let mut g = Game::default();
    g.play(mv("d5-c5")).unwrap();
    // Self-play settings: Dirichlet noise, temperature 1, Gumbel noise.
    for config in [SearchConfig::puct(200), SearchConfig::gumbel(32)] {
        let a = run(&g, &config, 42);
        let b = run(&g, &config, 42);
        assert_eq!(a, b);
        let c = run(&g, &config, 43);
        assert_ne!(a.policy, c.policy);
    }
}

/// Perfect knowledge for the toy case: every unfinished position is lost for White.
struct WhiteAlwaysLoses;

impl Evaluator for WhiteAlwaysLoses {
    fn evaluate(&mut self, leaves: &[Leaf]) -> Vec<Evaluation> {
        leaves
            .iter()
            .map(|leaf| {
                let value = match leaf.position.side_to_move() {
                    Side::White => -1.0,
                    Side::Black => 1.0,
                };
                Evaluation::uniform(leaf.moves.len(), value)
            })
            .collect()
    }
}

#[test]
fn gumbel_improved_policy_finds_the_one_winning_move() {
    // One winning move (the escape) among 14; the 13 others lose.
    let g = game(ESCAPE_IN_ONE);
    assert_eq!(g.legal_moves().len(), 14);
    let win = g
        .legal_moves()
        .iter()
        .position(|&m| m == mv("a2-a1"))
        .unwrap();
    for seed in 0..5 {
        let config = plain(SearchConfig::gumbel(16));
        let mut search = Search::new(g.clone(), config, seed).unwrap();
        let result = search.run(&mut WhiteAlwaysLoses, 1).unwrap();
        assert_eq!(result.best_move, mv("a2-a1"));
        assert!(result.policy[win] > 0.99, "{:?}", result.policy);
        // The prior was uniform: the search, not the network, found it.
        assert!(result.visits.iter().all(|&n| n >= 1));
    }
}

#[test]
fn gather_and_apply_batch_leaves_across_games() {
    let mut g2 = Game::default();
    g2.play(mv("d5-c5")).unwrap();
    let games = [
        Game::default(),
        g2,
        game(BLOCK_IN_ONE),
        game(CAPTURE_IN_ONE),
    ];
    let mut searches: Vec<Search> = games
        .iter()
        .enumerate()
        .map(|(i, g)| {
            let config = if i % 2 == 0 {
                SearchConfig::puct(64)
            } else {
                SearchConfig::gumbel(16)
            };
            Search::new(g.clone(), plain(config), i as u64).unwrap()
        })
        .collect();
    let mut eval = RolloutEvaluator::new(9, 50);
    let mut leaves = Vec::new();
    let mut calls = 0;
    while !searches.iter().all(Search::is_done) {
        leaves.clear();
        let counts: Vec<usize> = searches
            .iter_mut()
            .map(|s| s.gather(4, &mut leaves))
            .collect();
        for (s, &n) in searches.iter().zip(&counts) {
            assert_eq!(s.in_flight(), n);
        }
        assert!(!leaves.is_empty());
        let evaluations = eval.evaluate(&leaves);
        calls += 1;
        let mut rest = evaluations.as_slice();
        for (s, n) in searches.iter_mut().zip(counts) {
            let (mine, others) = rest.split_at(n);
            s.apply(mine).unwrap();
            rest = others;
        }
    }
    // Batching across the games took far fewer evaluator calls than leaves.
    assert!(calls < 40, "{calls} calls");
    for s in &mut searches {
        let result = s.result().unwrap();
        assert_eq!(result.visits.iter().sum::<u32>(), s.config().simulations);
    }
}

#[test]
fn virtual_loss_spreads_a_batch_of_one_tree() {
    // (With Dirichlet noise a peaked prior can outweigh one virtual loss: the gather then
    // stops early at the collision, which `visit_counts_sum_to_the_simulations_spent`
    // covers with batches of 8.)
    for config in [
        SearchConfig::puct(100).without_noise(),
        SearchConfig::gumbel(100),
    ] {
        let mut search = Search::new(Game::default(), config, 2).unwrap();
        let mut eval = RolloutEvaluator::new(2, 50);
        let mut leaves = Vec::new();
        search.gather(8, &mut leaves);
        search.apply(&eval.evaluate(&leaves)).unwrap();
        for _ in 0..5 {
            leaves.clear();
            let n = search.gather(8, &mut leaves);
            assert_eq!(n, 8);
            let tree = search.tree();
            assert_eq!(tree.node(tree.root()).in_flight(), 8);
            // Eight different leaves, none of them twice.
            let mut positions: Vec<String> =
                leaves.iter().map(|l| l.position.to_string()).collect();
            positions.sort();
            positions.dedup();
            assert_eq!(positions.len(), 8);
            search.apply(&eval.evaluate(&leaves)).unwrap();
            let tree = search.tree();
            assert!(tree.ids().all(|id| tree.node(id).in_flight() == 0));
        }
    }
}

#[test]
fn apply_rejects_bad_evaluations_and_changes_nothing() {
    let mut search = Search::new(Game::default(), SearchConfig::puct(10), 0).unwrap();
    let mut leaves = Vec::new();
    assert_eq!(search.gather(8, &mut leaves), 1, "a fresh root goes alone");
    assert_eq!(
        search.gather(8, &mut leaves),
        0,
        "nothing while the root waits"
    );
    assert_eq!(
        search.apply(&[]),
        Err(SearchError::EvaluationCount {
            expected: 1,
            got: 0
        })
    );
    assert_eq!(
        search.apply(&[Evaluation::uniform(23, 0.0)]),
        Err(SearchError::PriorCount {
            index: 0,
            expected: 24,
            got: 23
        })
    );
    assert_eq!(
        search.apply(&[Evaluation::uniform(24, f32::NAN)]),
        Err(SearchError::InvalidEvaluation { index: 0 })
    );
    assert_eq!(search.result(), Err(SearchError::RootNotEvaluated));
    assert!(matches!(
        search.advance(mv("d5-c5")),
        Err(SearchError::LeavesInFlight { count: 1 })
    ));
    search.apply(&UniformEvaluator.evaluate(&leaves)).unwrap();
    let result = search.run(&mut UniformEvaluator, 3).unwrap();
    assert_eq!(result.visits.iter().sum::<u32>(), 10);
    assert!(matches!(
        search.advance(mv("d4-d7")),
        Err(SearchError::IllegalMove(_))
    ));
}

#[test]
fn bad_settings_and_finished_games_are_refused() {
    let mut config = SearchConfig::puct(10);
    if let AlgorithmConfig::Puct(p) = &mut config.algorithm {
        p.c_puct = -1.0;
    }
    let err = config.validate().unwrap_err();
    assert_eq!(err.field, "puct.c_puct");
    assert_eq!(
        err.to_string(),
        "invalid search setting puct.c_puct = -1: expected a number > 0"
    );
    assert!(matches!(
        Search::new(Game::default(), config, 0),
        Err(SearchError::Config(e)) if e.field == "puct.c_puct"
    ));
    let zero = SearchConfig::gumbel(0).validate().unwrap_err();
    assert_eq!(zero.field, "simulations");
    let mut nan = SearchConfig::gumbel(8);
    if let AlgorithmConfig::Gumbel(g) = &mut nan.algorithm {
        g.c_scale = f32::NAN;
    }
    assert_eq!(nan.validate().unwrap_err().field, "gumbel.c_scale");

    let mut over = game(ESCAPE_IN_ONE);
    over.play(mv("a2-a1")).unwrap();
    assert!(matches!(
        Search::new(over, SearchConfig::default(), 0),
        Err(SearchError::GameOver)
    ));
}

#[test]
fn run_until_stops_at_the_deadline_and_always_has_a_result() {
    use std::time::{Duration, Instant};
    // The exact proofs keep the deadline too: root proofs and the check of the move 15
    // plies deep would take seconds by their node budgets alone.
    let proving = SearchConfig {
        root_proof_plies: 15,
        verify_plies: 15,
        ..SearchConfig::puct(1_000_000).without_noise()
    };
    for config in [
        SearchConfig::puct(1_000_000).without_noise(),
        SearchConfig::gumbel(1_000_000),
        proving,
    ] {
        // A deadline already passed: the root is evaluated, no simulation runs, and the
        // result is the network's choice.
        let mut search = Search::new(Game::default(), config.clone(), 1).unwrap();
        let mut eval = RolloutEvaluator::new(1, 20);
        let r = search.run_until(&mut eval, 1, Instant::now()).unwrap();
        assert_eq!(r.simulations, 0);
        assert_eq!(r.moves.len(), 24);
        // A short deadline: simulations run, and the search stops long before its budget
        // (generous bounds: the machine may be busy).
        let t0 = Instant::now();
        let r = search
            .run_until(&mut eval, 4, t0 + Duration::from_millis(30))
            .unwrap();
        assert!(r.simulations > 0);
        assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
        assert!(!search.is_done());
    }
}

#[test]
fn run_halting_stops_when_another_thread_says_so_and_the_check_of_the_move_too() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};
    // The check of the chosen move 15 plies deep would take seconds by its node budget.
    let checking = SearchConfig {
        verify_plies: 15,
        ..SearchConfig::puct(1_000_000).without_noise()
    };
    for config in [
        SearchConfig::puct(1_000_000).without_noise(),
        SearchConfig::gumbel(1_000_000),
        checking,
    ] {
        // A budget of a million simulations and an hour, halted after 50 ms.
        let halt = Arc::new(AtomicBool::new(false));
        let setter = {
            let halt = Arc::clone(&halt);
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(50));
                halt.store(true, Ordering::Relaxed);
            })
        };
        let mut search = Search::new(Game::default(), config.clone(), 1).unwrap();
        let mut eval = RolloutEvaluator::new(1, 20);
        let t0 = Instant::now();
        let r = search
            .run_halting(&mut eval, 4, Some(t0 + Duration::from_secs(3600)), &halt)
            .unwrap();
        setter.join().unwrap();
        assert!(r.simulations > 0);
        assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
        assert!(!search.is_done());
        // Not halted: the same call runs to its budget (a small one here).
        let small = SearchConfig {
            simulations: 64,
            ..config
        };
        let mut search = Search::new(Game::default(), small, 1).unwrap();
        let r = search
            .run_halting(&mut eval, 4, None, &AtomicBool::new(false))
            .unwrap();
        assert_eq!(r.simulations, 64);
    }
}

#[test]
fn advance_and_renew_keep_the_subtree_and_its_visits() {
    for config in [
        SearchConfig::puct(200).without_noise(),
        SearchConfig::gumbel(200),
    ] {
        let mut search = Search::new(Game::default(), config, 3).unwrap();
        let mut eval = RolloutEvaluator::new(3, 30);
        let r = search.run(&mut eval, 1).unwrap();
        let tree = search.tree();
        let child = tree
            .children(tree.root())
            .find(|&c| tree.node(c).mv() == Some(r.best_move))
            .unwrap();
        let (visits, value) = (tree.node(child).visits(), tree.node(child).value());
        assert!(visits > 0);
        search.advance(r.best_move).unwrap();
        let root = search.tree().node(search.tree().root());
        assert_eq!(root.visits(), visits);
        assert_eq!(root.value(), value);
        // A fresh budget at the kept root: 50 new simulations on top of the kept visits.
        assert!(search.renew(50).is_ok());
        let r2 = search.run(&mut eval, 1).unwrap();
        assert_eq!(r2.simulations, 50);
        let root = search.tree().node(search.tree().root());
        assert_eq!(root.visits(), visits + 50);
        assert!(search.renew(0).is_err());
    }
}
