//! The moves-left head: an auxiliary target trained on the plies to the game's end, which
//! no inference path reads.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests may unwrap: a panic is a failed test"
)]

mod common;

use brandubh_net::checkpoint::{self, SaveOptions};
use brandubh_net::encoding::INPUT_SIZE;
use brandubh_net::optimize::{self, BatchBuilder, BatchError, OptimizerConfig, Trainer};
use brandubh_net::{FastNet, MOVES_LEFT_SCALE, NetConfig};
use brandubh_search::Leaf;
use burn::module::Module;
use burn::tensor::Device;
use common::{assert_matches_burn, push_leaf, random_inputs, random_leaves};

fn with_head() -> NetConfig {
    NetConfig::new()
        .with_channels(8)
        .with_blocks(1)
        .with_moves_left_hidden(Some(16))
}

/// Plies to the end of each leaf's made-up game: spread over 1..=60.
fn plies(i: usize) -> u32 {
    (i * 17 % 60 + 1) as u32
}

/// A batch of `leaves` with uniform policies, value 0 and moves-left targets [`plies`].
fn batch_with_plies(leaves: &[Leaf]) -> BatchBuilder {
    let mut b = BatchBuilder::new();
    for (i, leaf) in leaves.iter().enumerate() {
        let uniform = vec![1.0; leaf.moves.len()];
        push_leaf(&mut b, leaf, &uniform, 0.0);
        b.push_plies_to_end(plies(i)).unwrap();
    }
    b
}

#[test]
fn the_loss_adds_the_weighted_mse_of_plies_over_the_scale() {
    let device = Device::flex();
    let model = with_head().init(&device);
    let leaves = random_leaves(6, 5);
    let batch = batch_with_plies(&leaves).build(&device);
    let out = model.forward(batch.inputs.clone());
    let predicted: Vec<f32> = out
        .moves_left
        .expect("a model with the head predicts")
        .into_data()
        .try_to_vec::<f32>()
        .unwrap();
    let want = predicted
        .iter()
        .enumerate()
        .map(|(i, p)| (p - plies(i) as f32 / MOVES_LEFT_SCALE).powi(2))
        .sum::<f32>()
        / leaves.len() as f32;
    let l = optimize::losses(&model, &batch, 0.5, 2.0);
    let moves_left = l.moves_left.expect("head and targets").into_scalar::<f32>();
    assert!((moves_left - want).abs() < 1e-5, "{moves_left} vs {want}");
    let (policy, value) = (l.policy.into_scalar::<f32>(), l.value.into_scalar::<f32>());
    let total = l.total.into_scalar::<f32>();
    assert!((total - (policy + 0.5 * value + 2.0 * moves_left)).abs() < 1e-5);
}

#[test]
fn without_the_head_or_without_targets_there_is_no_moves_left_term() {
    let device = Device::flex();
    let leaves = random_leaves(4, 6);
    let plain = NetConfig::new()
        .with_channels(8)
        .with_blocks(1)
        .init(&device);
    let with_targets = batch_with_plies(&leaves).build(&device);
    let l = optimize::losses(&plain, &with_targets, 1.0, 1.0);
    assert!(l.moves_left.is_none());

    let mut no_targets = BatchBuilder::new();
    for leaf in &leaves {
        push_leaf(&mut no_targets, leaf, &vec![1.0; leaf.moves.len()], 0.0);
    }
    let no_targets = no_targets.build(&device);
    assert!(no_targets.moves_left_targets.is_none());
    let headed = with_head().init(&device);
    let l = optimize::losses(&headed, &no_targets, 1.0, 1.0);
    assert!(l.moves_left.is_none());
    let total = l.total.into_scalar::<f32>();
    let sum = l.policy.into_scalar::<f32>() + l.value.into_scalar::<f32>();
    assert!((total - sum).abs() < 1e-5);
}

#[test]
fn a_target_needs_a_sample_of_its_own() {
    let mut b = BatchBuilder::new();
    assert_eq!(
        b.push_plies_to_end(3),
        Err(BatchError::StrayMovesLeft { samples: 0 })
    );
    let leaf = &random_leaves(1, 7)[0];
    push_leaf(&mut b, leaf, &vec![1.0; leaf.moves.len()], 0.0);
    b.push_plies_to_end(3).unwrap();
    let err = b.push_plies_to_end(4).unwrap_err();
    assert_eq!(err, BatchError::StrayMovesLeft { samples: 1 });
    assert!(err.to_string().contains("after 1 samples"), "{err}");
    // A sample without a target after one with: the batch has none at all.
    push_leaf(&mut b, leaf, &vec![1.0; leaf.moves.len()], 0.0);
    assert!(b.build(&Device::flex()).moves_left_targets.is_none());
}

#[test]
fn training_the_head_fits_the_plies_and_reports_its_loss() {
    let device = Device::flex().autodiff();
    let config = OptimizerConfig {
        moves_left_weight: 1.0,
        ..OptimizerConfig::default()
    };
    let mut trainer = Trainer::new(with_head().init(&device), config);
    let batch = batch_with_plies(&random_leaves(16, 8)).build(trainer.device());
    let first = trainer.step(&batch, 3e-3);
    let mut last = first;
    for _ in 0..60 {
        last = trainer.step(&batch, 3e-3);
    }
    let (first_ml, last_ml) = (
        first.moves_left_loss.expect("reported"),
        last.moves_left_loss.expect("reported"),
    );
    assert!(
        last_ml < 0.3 * first_ml,
        "moves-left loss {first_ml} → {last_ml}"
    );
    let eval = trainer.evaluate(&batch);
    assert!(eval.moves_left_loss.is_some_and(f32::is_finite));
}

#[test]
fn inference_paths_leave_the_head_out_and_match_burn() {
    let model = common::trained_model(&with_head(), 5).valid();
    let inputs = random_inputs(5, 9);
    let (logits, values) = model.infer(&inputs, &Device::flex());
    let out = FastNet::from_model(&model).forward(&inputs);
    assert_eq!(out.values.len(), inputs.len() / INPUT_SIZE);
    assert_matches_burn(
        "fast path",
        &logits,
        &values,
        &out.policy_logits,
        &out.values,
    );
}

#[test]
fn checkpoints_keep_the_head_and_old_configs_read_as_none() {
    let dir = std::env::temp_dir().join(format!("brandubh-moves-left-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let model = common::trained_model(&with_head(), 3).valid();
    checkpoint::save(dir.join("c"), &model, &SaveOptions::at_step(3)).unwrap();
    let (loaded, meta) = checkpoint::load(dir.join("c"), &Device::flex(), None).unwrap();
    assert_eq!(meta.config, with_head());
    assert_eq!(loaded.config(), with_head());
    let inputs = random_inputs(3, 10);
    let moves_left = |m: &brandubh_net::PolicyValueNet| -> Vec<f32> {
        m.forward(burn::tensor::Tensor::from_data(
            burn::tensor::TensorData::new(inputs.clone(), [3, 9, 7, 7]),
            &Device::flex(),
        ))
        .moves_left
        .expect("head")
        .into_data()
        .try_to_vec::<f32>()
        .unwrap()
    };
    assert_eq!(moves_left(&model), moves_left(&loaded));
    // Loading into a model without the head names the difference.
    let plain = NetConfig::new().with_channels(8).with_blocks(1);
    let err = checkpoint::load(dir.join("c"), &Device::flex(), Some(&plain)).unwrap_err();
    assert!(
        err.to_string()
            .contains("moves_left_hidden: found 16, expected none"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();

    // A config written before the head existed has no such key.
    let json =
        r#"{"channels":32,"blocks":4,"policy_channels":2,"value_channels":2,"value_hidden":64}"#;
    let old: NetConfig = serde_json::from_str(json).unwrap();
    assert_eq!(old, NetConfig::new());
    assert_eq!(old.moves_left_hidden, None);
}

#[test]
fn a_zero_width_head_is_not_a_valid_model() {
    let config = with_head().with_moves_left_hidden(Some(0));
    assert!(!config.is_valid());
    assert!(config.check_limits().is_err());
    let huge = with_head().with_moves_left_hidden(Some(NetConfig::MAX_HEAD + 1));
    let err = huge.check_limits().unwrap_err();
    assert!(
        err.contains(&format!("/{}", NetConfig::MAX_HEAD + 1)),
        "{err}"
    );
}
