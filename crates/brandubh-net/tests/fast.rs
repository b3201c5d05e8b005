//! The plain-Rust inference path (built from the folded weights) gives burn's outputs.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests may unwrap: a panic is a failed test"
)]

mod common;

use brandubh_net::encoding::POLICY_SIZE;
use brandubh_net::{FastNet, NetConfig};
use burn::module::Module;
use burn::tensor::Device;
use common::{assert_matches_burn, random_inputs, trained_model, unaligned_config};

fn check(config: &NetConfig, batch_sizes: &[usize]) {
    let trained = trained_model(config, 3);
    let device = Device::flex();
    let model = trained.valid().to_device(&device);
    let fast = FastNet::from_model(&model);
    assert_eq!(fast.config(), config);
    for &n in batch_sizes {
        let inputs = random_inputs(n, n as u64);
        let (logits, values) = model.infer(&inputs, &device);
        let out = fast.forward(&inputs);
        assert_eq!(out.policy_logits.len(), n * POLICY_SIZE);
        let what = format!("{config:?} batch {n}");
        assert_matches_burn(&what, &logits, &values, &out.policy_logits, &out.values);
    }
}

#[test]
fn fast_path_matches_burn_default_config() {
    check(&NetConfig::new(), &[1, 7, 40]);
}

#[test]
fn fast_path_matches_burn_with_unaligned_channels() {
    let config = unaligned_config();
    check(&config, &[1, 17]);
}

#[test]
fn chunk_size_does_not_change_results() {
    let model = trained_model(&NetConfig::new().with_channels(8).with_blocks(1), 2).valid();
    let inputs = random_inputs(23, 5);
    let a = FastNet::from_model(&model)
        .with_chunk_size(1)
        .forward(&inputs);
    let b = FastNet::from_model(&model)
        .with_chunk_size(64)
        .forward(&inputs);
    assert_eq!(a, b);
}
