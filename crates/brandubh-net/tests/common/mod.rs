//! Helpers shared by the integration tests.
#![allow(dead_code)]

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

/// A batch of random leaves with random policy and value targets.
pub fn random_batch(n: usize, seed: u64) -> BatchBuilder {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
    let mut b = BatchBuilder::new();
    for leaf in random_leaves(n, seed) {
        let policy: Vec<f32> = leaf.moves.iter().map(|_| rng.random::<f32>()).collect();
        let value = rng.random_range(-1.0..=1.0);
        let sym = Symmetry::ALL[rng.random_range(0..8)];
        b.push_position(
            &leaf.position,
            leaf.repetitions,
            &leaf.moves,
            &policy,
            value,
            sym,
        )
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

/// The start position.
pub fn start() -> Position {
    Position::start()
}

/// Largest absolute difference.
pub fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}
