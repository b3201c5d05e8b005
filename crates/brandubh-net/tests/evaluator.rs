//! The network as the search's evaluator.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests may unwrap: a panic is a failed test"
)]

mod common;

use std::sync::Arc;

use brandubh_net::{FastNet, NetConfig, NetEvaluator};
use brandubh_rules::Symmetry;
use brandubh_search::{Evaluator, Leaf};
use burn::tensor::Device;
use common::{max_diff, random_leaves, trained_model};

fn setup() -> (brandubh_net::PolicyValueNet, Arc<FastNet>, Vec<Leaf>) {
    let model = trained_model(&NetConfig::new().with_channels(16).with_blocks(2), 3);
    let fast = Arc::new(FastNet::from_model(&model));
    (model, fast, random_leaves(40, 17))
}

#[test]
fn priors_are_distributions_over_legal_moves_and_values_in_range() {
    let (_, fast, leaves) = setup();
    let evals = NetEvaluator::new(fast).evaluate(&leaves);
    assert_eq!(evals.len(), leaves.len());
    for (e, leaf) in evals.iter().zip(&leaves) {
        assert_eq!(e.priors.len(), leaf.moves.len());
        assert!(e.priors.iter().all(|&p| p > 0.0 && p <= 1.0));
        assert!((e.priors.iter().sum::<f32>() - 1.0).abs() < 1e-4);
        assert!(e.value > -1.0 && e.value < 1.0);
    }
}

#[test]
fn fast_and_burn_evaluators_agree() {
    let (model, fast, leaves) = setup();
    let a = NetEvaluator::new(fast).evaluate(&leaves);
    let b = NetEvaluator::burn(&model, &Device::flex()).evaluate(&leaves);
    for (x, y) in a.iter().zip(&b) {
        assert!((x.value - y.value).abs() < 1e-4);
        assert!(max_diff(&x.priors, &y.priors) < 1e-4);
    }
}

#[test]
fn fixed_symmetry_evaluates_the_symmetric_position() {
    let (_, fast, leaves) = setup();
    let mut plain = NetEvaluator::new(fast.clone());
    for sym in Symmetry::ALL {
        let mut eval = NetEvaluator::new(fast.clone()).with_symmetry(sym);
        let got = eval.evaluate(&leaves);
        let images: Vec<Leaf> = leaves
            .iter()
            .map(|l| Leaf {
                position: sym.position(&l.position),
                repetitions: l.repetitions,
                moves: l.moves.iter().map(|&m| sym.mv(m)).collect(),
            })
            .collect();
        let want = plain.evaluate(&images);
        assert_eq!(got, want, "{sym:?}");
    }
}

#[test]
fn random_symmetry_is_seeded() {
    let (_, fast, leaves) = setup();
    let run = |seed| {
        NetEvaluator::new(fast.clone())
            .with_random_symmetry(seed)
            .evaluate(&leaves)
    };
    assert_eq!(run(5), run(5));
    let (a, b) = (run(5), run(6));
    assert_ne!(
        a, b,
        "different seeds should pick different symmetries somewhere"
    );
    // Symmetries change the network's input, not the meaning of the output: every answer
    // stays a distribution over the leaf's moves.
    for (e, leaf) in a.iter().zip(&leaves) {
        assert_eq!(e.priors.len(), leaf.moves.len());
    }
}

#[test]
fn single_leaf_batches_work() {
    let (_, fast, leaves) = setup();
    let mut eval = NetEvaluator::new(fast);
    let batch = eval.evaluate(&leaves[..5]);
    for (i, leaf) in leaves[..5].iter().enumerate() {
        let one = eval.evaluate(std::slice::from_ref(leaf));
        assert!((one[0].value - batch[i].value).abs() < 1e-6);
        assert!(max_diff(&one[0].priors, &batch[i].priors) < 1e-6);
    }
}

#[test]
fn evaluators_and_weights_can_move_between_threads() {
    fn send<T: Send>() {}
    fn send_sync<T: Send + Sync>() {}
    send::<NetEvaluator>();
    send_sync::<FastNet>();
    send_sync::<brandubh_net::PolicyValueNet>();
}
