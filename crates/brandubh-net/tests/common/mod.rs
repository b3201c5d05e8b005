//! Helpers shared by the integration tests.
#![allow(dead_code)]

use brandubh_net::encoding::{self, INPUT_SIZE};
use brandubh_net::optimize::{BatchBuilder, OptimizerConfig, Trainer};
use brandubh_net::{NetConfig, PolicyValueNet};
use brandubh_rules::{Game, Position, Symmetry};
use brandubh_search::Leaf;
use burn::tensor::Device;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Unfinished games reached by seeded random play, as leaves.
pub fn random_leaves(n: usize, seed: u64) -> Vec<Leaf> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    while out.len() < n {
        let mut g = Game::default();
        let plies = rng.random_range(0..50);
        g.random_playout(plies, |n| rng.random_range(0..n));
        if !g.is_over() {
            let mut leaf = Leaf::from_game(&g);
            leaf.repetitions = rng.random_range(1..=4);
            out.push(leaf);
        }
    }
    out
}

/// The encoded network inputs of `n` random leaves (see [`random_leaves`]).
pub fn random_inputs(n: usize, seed: u64) -> Vec<f32> {
    let mut out = Vec::with_capacity(n * INPUT_SIZE);
    for leaf in random_leaves(n, seed) {
        out.extend(encoding::encode(&leaf.position, leaf.repetitions));
    }
    out
}

/// Adds `leaf` with its targets to `builder`, unmirrored.
pub fn push_leaf(builder: &mut BatchBuilder, leaf: &Leaf, policy: &[f32], value: f32) {
    builder
        .push_leaf(leaf, policy, value, Symmetry::Identity)
        .expect("valid sample");
}

/// A batch of random leaves with random policy and value targets.
pub fn random_batch(n: usize, seed: u64) -> BatchBuilder {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
    let mut b = BatchBuilder::new();
    for leaf in random_leaves(n, seed) {
        let policy: Vec<f32> = leaf.moves.iter().map(|_| rng.random::<f32>()).collect();
        let value = rng.random_range(-1.0..=1.0);
        let sym = Symmetry::ALL[rng.random_range(0..8)];
        b.push_leaf(&leaf, &policy, value, sym)
            .expect("valid sample");
    }
    b
}

/// A small model trained a few steps on an autodiff device, so that batch-norm running
/// statistics and weights are far from their initial values.
pub fn trained_model(config: &NetConfig, steps: usize) -> PolicyValueNet {
    let device = Device::flex().autodiff();
    let mut trainer = Trainer::new(config.init(&device), OptimizerConfig::default());
    let batch = random_batch(32, 11).build(trainer.device());
    for _ in 0..steps {
        trainer.step(&batch, 1e-2);
    }
    trainer.into_model()
}

/// A shape the fast path must pad: 12 channels (to 32), 2 blocks, 3 policy channels, 1
/// value channel, an odd hidden width.
pub fn unaligned_config() -> NetConfig {
    NetConfig::new()
        .with_channels(12)
        .with_blocks(2)
        .with_policy_channels(3)
        .with_value_channels(1)
        .with_value_hidden(37)
}

/// The start position.
pub fn start() -> Position {
    Position::start()
}

/// Asserts that another inference path's `policy` and `value` outputs match burn's
/// `logits` and `values` to 1e-4, and that burn's logits are not trivially equal (e.g. all
/// zero).
pub fn assert_matches_burn(
    what: &str,
    logits: &[f32],
    values: &[f32],
    policy: &[f32],
    value: &[f32],
) {
    let dp = max_diff(logits, policy);
    let dv = max_diff(values, value);
    assert!(dp < 1e-4, "{what}: policy differs from burn by {dp}");
    assert!(dv < 1e-4, "{what}: value differs from burn by {dv}");
    let spread = logits.iter().fold(0.0f32, |m, &x| m.max(x.abs()));
    assert!(spread > 1e-2, "{what}: degenerate logits");
}

/// Largest absolute difference.
pub fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}
