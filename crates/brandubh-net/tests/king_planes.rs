//! Networks that take the King planes (`NetConfig::input_planes = Some(12)`) or the King and
//! threat planes (`Some(16)`): they train, save, load and evaluate like the basic ones, and
//! a file of one layout never loads as another.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests may unwrap: a panic is a failed test"
)]

mod common;

use std::sync::Arc;

use brandubh_net::checkpoint::{self, SaveOptions};
use brandubh_net::encoding::{self, NUM_PLANES, NUM_PLANES_WITH_KING, PLANE_SIZE};
use brandubh_net::optimize::{BatchBuilder, BatchError, OptimizerConfig, Trainer};
use brandubh_net::{FastNet, NetConfig, NetEvaluator};
use brandubh_rules::Game;
use brandubh_search::{Evaluator, Leaf};
use burn::tensor::Device;
use common::{push_leaf, random_leaves};

fn king() -> NetConfig {
    NetConfig::new()
        .with_channels(8)
        .with_blocks(1)
        .with_planes(NUM_PLANES_WITH_KING)
}

/// A batch of `leaves` for a network of `planes` planes, uniform policies, value 0.
fn batch(leaves: &[Leaf], planes: usize) -> BatchBuilder {
    let mut b = BatchBuilder::with_planes(planes);
    for leaf in leaves {
        push_leaf(&mut b, leaf, &vec![1.0; leaf.moves.len()], 0.0);
    }
    b
}

#[test]
fn the_config_says_how_many_planes_and_the_model_reads_them_back() {
    assert_eq!(NetConfig::new().planes(), NUM_PLANES);
    assert_eq!(NetConfig::new().input_size(), NUM_PLANES * PLANE_SIZE);
    assert_eq!(king().planes(), NUM_PLANES_WITH_KING);
    assert_eq!(king().input_planes, Some(12));
    // The basic layout is written as None, as a model of nine planes reads it back.
    assert_eq!(king().with_planes(NUM_PLANES).input_planes, None);
    assert_eq!(
        king()
            .with_planes(NUM_PLANES)
            .init(&Device::flex())
            .config(),
        king().with_planes(NUM_PLANES)
    );
    let model = king().init(&Device::flex());
    assert_eq!(model.config(), king());
    assert_eq!(model.stem.conv.weight.dims()[1], 12);
    // The stem's extra inputs are counted.
    assert!(king().flops_per_position() > king().with_planes(NUM_PLANES).flops_per_position());
}

#[test]
fn only_nine_twelve_or_sixteen_planes_are_a_plausible_model() {
    for bad in [10, 13, 15, 17] {
        let config = king().with_input_planes(Some(bad));
        let err = config.check_limits().unwrap_err();
        assert!(err.contains(&format!("{bad} input planes")), "{err}");
        assert!(!config.is_valid());
    }
    assert!(king().with_input_planes(Some(9)).check_limits().is_ok());
    assert!(king().check_limits().is_ok());
    assert!(threats().check_limits().is_ok());
    assert_eq!(threats().planes(), 16);
    // The flags of a run's config name the layouts; each group of planes comes after the one
    // before, so it implies it.
    assert_eq!(encoding::layout(false, false, false), NUM_PLANES);
    assert_eq!(encoding::layout(true, false, false), NUM_PLANES_WITH_KING);
    assert_eq!(encoding::layout(true, true, false), 16);
    assert_eq!(encoding::layout(false, true, false), 16);
    assert_eq!(encoding::layout(true, true, true), 19);
    assert_eq!(encoding::layout(false, false, true), 19);
    assert!(threats().with_planes(19).check_limits().is_ok());
    assert!(threats().with_planes(20).check_limits().is_err());
}

fn threats() -> NetConfig {
    king().with_planes(16)
}

/// A 16-plane network trains, round-trips through a checkpoint that the 12-plane layout
/// refuses by name, and reads its threat planes (blanking them changes its value).
#[test]
fn a_threat_plane_network_trains_saves_and_reads_its_planes() {
    let device = Device::flex();
    let leaves = random_leaves(8, 5);
    let built = batch(&leaves, 16).build(&device.clone().autodiff());
    assert_eq!(built.inputs.dims(), [8, 16, 7, 7]);
    let mut trainer = Trainer::new(
        threats().init(&device.clone().autodiff()),
        OptimizerConfig::default(),
    );
    let stats = trainer.step(&built, 0.01);
    assert!(stats.policy_loss.is_finite(), "{stats:?}");
    let model = trainer.inference_model();
    assert_eq!(model.stem.conv.weight.dims()[1], 16);

    let tmp = tempfile::tempdir().unwrap();
    checkpoint::save(tmp.path().join("c"), &model, &SaveOptions::at_step(1)).unwrap();
    let (loaded, _) = checkpoint::load(tmp.path().join("c"), &device, Some(&threats())).unwrap();
    assert_eq!(loaded.config(), threats());
    let err = checkpoint::load(tmp.path().join("c"), &device, Some(&king())).unwrap_err();
    assert!(
        err.to_string()
            .contains("input planes: found 16, expected 12"),
        "{err}"
    );

    // A position with captures in reach for both sides, so that planes 14 and 15 are set.
    let leaf = leaves
        .iter()
        .find(|leaf| {
            let [_, _, white, black] = encoding::threat_plane_bitboards(&leaf.position);
            !white.is_empty() || !black.is_empty()
        })
        .unwrap_or(&leaves[0]);
    let planes = encoding::encode_planes(&leaf.position, leaf.repetitions, 16);
    assert_eq!(
        planes[..12 * 49],
        encoding::encode_planes(&leaf.position, leaf.repetitions, 12)[..]
    );
    let net = FastNet::from_model(&loaded);
    let fast = NetEvaluator::new(Arc::new(FastNet::from_model(&loaded)))
        .evaluate(std::slice::from_ref(leaf));
    let direct = net.forward(&planes);
    assert!((direct.values[0] - fast[0].value).abs() < 1e-6);
    let mut blank = planes.clone();
    blank[12 * 49..].fill(0.0);
    assert_ne!(
        net.forward(&blank).values[0],
        direct.values[0],
        "the threat planes reach the output"
    );
}

#[test]
fn a_king_plane_network_trains_on_batches_of_twelve_planes() {
    let device = Device::flex().autodiff();
    let leaves = random_leaves(8, 3);
    let built = batch(&leaves, 12).build(&device);
    assert_eq!(built.inputs.dims(), [8, 12, 7, 7]);
    let mut trainer = Trainer::new(king().init(&device), OptimizerConfig::default());
    let before = trainer.inference_model().stem.conv.weight.val().into_data();
    let stats = trainer.step(&built, 0.01);
    assert!(stats.policy_loss.is_finite(), "{stats:?}");
    let after = trainer.inference_model().stem.conv.weight.val().into_data();
    assert_ne!(
        before, after,
        "the stem (and so the King planes' weights) learned"
    );
    // Planes of the other layout are refused by name, not silently reshaped.
    let mut b = BatchBuilder::with_planes(12);
    let nine = encoding::encode(&leaves[0].position, 1);
    let err = b.push_encoded(&nine, &[(0, 1.0)], 0.0).unwrap_err();
    assert_eq!(
        err,
        BatchError::PlaneLength {
            sample: 0,
            got: 9 * 49,
            expected: 12 * 49
        }
    );
}

#[test]
fn checkpoints_keep_the_planes_and_refuse_the_other_layout() {
    let tmp = tempfile::tempdir().unwrap();
    let device = Device::flex();
    let model = king().init(&device);
    checkpoint::save(tmp.path().join("c"), &model, &SaveOptions::at_step(3)).unwrap();
    let (loaded, meta) = checkpoint::load(tmp.path().join("c"), &device, Some(&king())).unwrap();
    assert_eq!(meta.config, king());
    assert_eq!(loaded.config(), king());
    let plain = king().with_planes(NUM_PLANES);
    let err = checkpoint::load(tmp.path().join("c"), &device, Some(&plain)).unwrap_err();
    assert!(
        err.to_string()
            .contains("input planes: found 12, expected 9"),
        "{err}"
    );
    // A config written before the planes existed has no such key: the basic layout.
    let json =
        r#"{"channels":32,"blocks":4,"policy_channels":2,"value_channels":2,"value_hidden":64}"#;
    let old: NetConfig = serde_json::from_str(json).unwrap();
    assert_eq!(old.input_planes, None);
    assert_eq!(old.planes(), 9);
}

/// The evaluator encodes leaves in the network's own layout: the fast path and burn's
/// forward pass give the same priors and values, and they differ from what the same
/// weights make of the basic planes (the King planes are read).
#[test]
fn the_evaluator_feeds_a_king_plane_network_its_planes() {
    let device = Device::flex();
    let model = king().init(&device);
    let mut game = Game::default();
    for i in 0..6 {
        let moves = game.legal_moves();
        game.play_unchecked(moves[i * 5 % moves.len()]);
    }
    let leaf = Leaf::from_game(&game);
    let fast = NetEvaluator::new(Arc::new(FastNet::from_model(&model)))
        .evaluate(std::slice::from_ref(&leaf));
    let burn = NetEvaluator::burn(&model, &device).evaluate(std::slice::from_ref(&leaf));
    assert!((fast[0].value - burn[0].value).abs() < 1e-4);
    for (a, b) in fast[0].priors.iter().zip(&burn[0].priors) {
        assert!((a - b).abs() < 1e-4);
    }
    let planes = encoding::encode_planes(&leaf.position, leaf.repetitions, 12);
    let direct = FastNet::from_model(&model).forward(&planes);
    assert!((direct.values[0] - fast[0].value).abs() < 1e-6);
    let mut blank = planes.clone();
    blank[9 * 49..].fill(0.0);
    let without = FastNet::from_model(&model).forward(&blank);
    assert_ne!(
        without.values[0], direct.values[0],
        "the King planes reach the output"
    );
}
