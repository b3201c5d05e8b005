//! The plain-Rust inference path (built from the folded weights) gives burn's outputs.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests may unwrap: a panic is a failed test"
)]

mod common;

use brandubh_net::encoding::{self, INPUT_SIZE, POLICY_SIZE};
use brandubh_net::{FastNet, NetConfig};
use burn::module::Module;
use burn::tensor::Device;
use common::{max_diff, random_leaves, trained_model};

fn encoded(n: usize, seed: u64) -> Vec<f32> {
    let mut out = Vec::with_capacity(n * INPUT_SIZE);
    for leaf in random_leaves(n, seed) {
        out.extend(encoding::encode(&leaf.position, leaf.repetitions));
    }
    out
}

fn check(config: &NetConfig, batch_sizes: &[usize]) {
    let trained = trained_model(config, 3);
    let device = Device::flex();
    let model = trained.valid().to_device(&device);
    let fast = FastNet::from_model(&model);
    assert_eq!(fast.config(), config);
    for &n in batch_sizes {
        let inputs = encoded(n, n as u64);
        let (logits, values) = model.infer(&inputs, &device);
        let out = fast.forward(&inputs);
        assert_eq!(out.policy_logits.len(), n * POLICY_SIZE);
        let dp = max_diff(&logits, &out.policy_logits);
        let dv = max_diff(&values, &out.values);
        assert!(dp < 1e-4, "{config:?} batch {n}: policy differs by {dp}");
        assert!(dv < 1e-4, "{config:?} batch {n}: value differs by {dv}");
        // The logits are not trivially equal (e.g. all zero).
        let spread = logits.iter().fold(0.0f32, |m, &x| m.max(x.abs()));
        assert!(spread > 1e-2, "degenerate logits");
    }
}

#[test]
fn fast_path_matches_burn_default_config() {
    check(&NetConfig::new(), &[1, 7, 40]);
}

#[test]
fn fast_path_matches_burn_with_unaligned_channels() {
    // 12 channels pad to 32; 3 policy and value channels, odd hidden width.
    let config = NetConfig::new()
        .with_channels(12)
        .with_blocks(2)
        .with_policy_channels(3)
        .with_value_channels(1)
        .with_value_hidden(37);
    check(&config, &[1, 17]);
}

#[test]
fn chunk_size_does_not_change_results() {
    let model = trained_model(&NetConfig::new().with_channels(8).with_blocks(1), 2).valid();
    let inputs = encoded(23, 5);
    let a = FastNet::from_model(&model)
        .with_chunk_size(1)
        .forward(&inputs);
    let b = FastNet::from_model(&model)
        .with_chunk_size(64)
        .forward(&inputs);
    assert_eq!(a, b);
}
