//! Batches, the loss and the optimizer step.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests may unwrap: a panic is a failed test"
)]

mod common;

use brandubh_net::encoding::{self, INPUT_SIZE, POLICY_SIZE};
use brandubh_net::optimize::{
    self, BatchBuilder, BatchError, OptimizerConfig, OptimizerKind, Trainer,
};
use brandubh_net::{NetConfig, legal_softmax};
use brandubh_rules::{Move, Position, Symmetry};
use burn::module::Module;
use burn::tensor::Device;
use common::{push_leaf, random_batch, random_leaves};

fn small() -> NetConfig {
    NetConfig::new().with_channels(8).with_blocks(1)
}

#[test]
fn loss_is_cross_entropy_over_legal_moves_plus_value_mse() {
    let device = Device::flex();
    let model = small().init(&device);
    let leaves = random_leaves(6, 21);
    let mut builder = BatchBuilder::new();
    let mut want_policy = 0.0f64;
    let mut want_value = 0.0f64;
    let mut inputs = Vec::new();
    let mut targets = Vec::new();
    for (i, leaf) in leaves.iter().enumerate() {
        // Unnormalised targets: the builder normalises them.
        let policy: Vec<f32> = (0..leaf.moves.len()).map(|j| (i + j + 1) as f32).collect();
        let value = if i % 2 == 0 { 1.0 } else { -0.5 };
        push_leaf(&mut builder, leaf, &policy, value);
        inputs.extend(encoding::encode(&leaf.position, leaf.repetitions));
        targets.push((policy, value));
    }
    let (logits, values) = model.infer(&inputs, &device);
    for (i, leaf) in leaves.iter().enumerate() {
        let priors = legal_softmax(
            &logits[i * POLICY_SIZE..][..POLICY_SIZE],
            &leaf.moves,
            Symmetry::Identity,
        );
        let (policy, value) = &targets[i];
        let sum: f32 = policy.iter().sum();
        want_policy -= policy
            .iter()
            .zip(&priors)
            .map(|(t, p)| f64::from(t / sum) * f64::from(*p).ln())
            .sum::<f64>();
        want_value += f64::from(values[i] - value).powi(2);
    }
    want_policy /= leaves.len() as f64;
    want_value /= leaves.len() as f64;
    let l = optimize::losses(&model, &builder.build(&device), 0.5, 0.0);
    let policy = l.policy.into_scalar::<f32>();
    let value = l.value.into_scalar::<f32>();
    let total = l.total.into_scalar::<f32>();
    assert!(
        (f64::from(policy) - want_policy).abs() < 1e-4,
        "{policy} vs {want_policy}"
    );
    assert!(
        (f64::from(value) - want_value).abs() < 1e-5,
        "{value} vs {want_value}"
    );
    assert!((total - (policy + 0.5 * value)).abs() < 1e-5);
}

fn overfits(optimizer: OptimizerKind, lr: f64) {
    let device = Device::flex().autodiff();
    let config = OptimizerConfig {
        optimizer,
        ..OptimizerConfig::default()
    };
    let mut trainer = Trainer::new(small().init(&device), config);
    // One-hot policy targets and values of ±1: the minimum loss is 0.
    let mut builder = BatchBuilder::new();
    for (i, leaf) in random_leaves(16, 3).iter().enumerate() {
        let mut policy = vec![0.0; leaf.moves.len()];
        policy[i % leaf.moves.len()] = 1.0;
        let value = if i % 3 == 0 { 1.0 } else { -1.0 };
        push_leaf(&mut builder, leaf, &policy, value);
    }
    let batch = builder.build(trainer.device());
    let first = trainer.step(&batch, lr);
    let mut last = first;
    for _ in 0..40 {
        last = trainer.step(&batch, lr);
    }
    assert_eq!(trainer.steps(), 41);
    assert_eq!(last.samples, 16);
    assert!(
        last.total_loss < 0.5 * first.total_loss,
        "{optimizer:?}: loss {} → {}",
        first.total_loss,
        last.total_loss
    );
    assert!(last.value_loss < first.value_loss);
    let eval = trainer.evaluate(&batch);
    assert!(eval.total_loss.is_finite());
}

#[test]
fn adam_step_reduces_the_loss() {
    overfits(OptimizerKind::Adam, 3e-3);
}

#[test]
fn sgd_momentum_step_reduces_the_loss() {
    overfits(OptimizerKind::Sgd { momentum: 0.9 }, 2e-2);
}

#[test]
fn training_moves_weights_and_valid_model_is_plain() {
    let device = Device::flex().autodiff();
    let mut trainer = Trainer::new(small().init(&device), OptimizerConfig::default());
    let before = trainer
        .model()
        .valid()
        .infer(&encoding::encode(&Position::start(), 1), &Device::flex());
    let batch = random_batch(8, 4).build(trainer.device());
    trainer.step(&batch, 1e-2);
    let after = trainer
        .model()
        .valid()
        .infer(&encoding::encode(&Position::start(), 1), &Device::flex());
    assert_ne!(before.0, after.0);
}

#[test]
fn batch_builder_rejects_bad_samples() {
    let mut b = BatchBuilder::new();
    let p = Position::start();
    let moves = p.legal_moves();
    let uniform = vec![1.0; moves.len()];
    let planes = encoding::encode(&p, 1);
    assert!(matches!(
        b.push_position(&p, 1, &moves, &uniform[1..], 0.0, Symmetry::Identity),
        Err(BatchError::PolicyLength { sample: 0, .. })
    ));
    assert!(matches!(
        b.push_position(&p, 1, &moves, &uniform, 1.5, Symmetry::Identity),
        Err(BatchError::BadValue { .. })
    ));
    assert!(matches!(
        b.push_position(&p, 1, &moves, &uniform, f32::NAN, Symmetry::Identity),
        Err(BatchError::BadValue { .. })
    ));
    let mut negative = uniform.clone();
    negative[0] = -1.0;
    assert!(matches!(
        b.push_position(&p, 1, &moves, &negative, 0.0, Symmetry::Identity),
        Err(BatchError::BadPolicy { .. })
    ));
    let zeros = vec![0.0; moves.len()];
    assert!(matches!(
        b.push_position(&p, 1, &moves, &zeros, 0.0, Symmetry::Identity),
        Err(BatchError::BadPolicy { .. })
    ));
    let diagonal = Move::new("a2".parse().unwrap(), "b3".parse().unwrap());
    assert!(matches!(
        b.push_position(&p, 1, &[diagonal], &[1.0], 0.0, Symmetry::Identity),
        Err(BatchError::BadMove { .. })
    ));
    assert!(matches!(
        b.push_encoded(&planes[1..], &[(0, 1.0)], 0.0),
        Err(BatchError::PlaneLength { .. })
    ));
    assert!(matches!(
        b.push_encoded(&planes, &[(POLICY_SIZE, 1.0)], 0.0),
        Err(BatchError::IndexOutOfRange { .. })
    ));
    assert!(matches!(
        b.push_encoded(&planes, &[(3, 1.0), (3, 1.0)], 0.0),
        Err(BatchError::DuplicateIndex { .. })
    ));
    assert!(matches!(
        b.push_encoded(&planes, &[], 0.0),
        Err(BatchError::NoMoves { .. })
    ));
    // Nothing was half-added.
    assert!(b.is_empty());
    b.push_position(&p, 1, &moves, &uniform, 0.0, Symmetry::Rot90)
        .expect("valid");
    assert_eq!(b.len(), 1);
    let err = b
        .push_encoded(&planes, &[(POLICY_SIZE + 1, 1.0)], 0.0)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "sample 1: policy index 1177 out of range 0..1176"
    );
    let batch = b.build(&Device::flex());
    assert_eq!(batch.len(), 1);
    assert_eq!(batch.inputs.dims(), [1, 9, 7, 7]);
    assert_eq!(batch.policy_targets.dims(), [1, POLICY_SIZE]);
    let _ = INPUT_SIZE;
}

#[test]
fn symmetric_samples_have_symmetric_tensors() {
    // A sample pushed under a symmetry equals the symmetric position pushed plainly.
    let leaf = &random_leaves(1, 9)[0];
    let policy: Vec<f32> = (0..leaf.moves.len()).map(|i| i as f32 + 1.0).collect();
    for sym in Symmetry::ALL {
        let mut a = BatchBuilder::new();
        a.push_position(&leaf.position, 2, &leaf.moves, &policy, 0.25, sym)
            .expect("valid");
        let image = sym.position(&leaf.position);
        let moves: Vec<Move> = leaf.moves.iter().map(|&m| sym.mv(m)).collect();
        let mut b = BatchBuilder::new();
        b.push_position(&image, 2, &moves, &policy, 0.25, Symmetry::Identity)
            .expect("valid");
        let (da, db) = (a.build(&Device::flex()), b.build(&Device::flex()));
        assert_eq!(da.inputs.into_data(), db.inputs.into_data());
        assert_eq!(da.policy_targets.into_data(), db.policy_targets.into_data());
        assert_eq!(da.legal_mask.into_data(), db.legal_mask.into_data());
    }
}

#[test]
fn a_step_flushes_tiny_weights_and_the_model_still_trains() {
    use brandubh_net::folded::FLUSH_BELOW;
    use burn::module::Param;
    use burn::tensor::{Tensor, TensorData};

    let device = Device::flex().autodiff();
    let mut model = small().init(&device);
    // Three tiny policy weights: a normal number below the threshold, a subnormal one,
    // and a negative one; and one just above the threshold, which must stay.
    let weight = model.policy_fc.weight.val();
    let dims = weight.dims();
    let mut values = weight.into_data().try_to_vec::<f32>().unwrap();
    let tiny = [(3, 1e-31f32), (50, 1e-40), (700, -5e-35)];
    for &(i, v) in &tiny {
        values[i] = v;
    }
    values[900] = 2.0 * FLUSH_BELOW;
    let id = model.policy_fc.weight.id;
    model.policy_fc.weight = Param::initialized(
        id,
        Tensor::from_data(TensorData::new(values.clone(), dims), &device).require_grad(),
    );

    let mut trainer = Trainer::new(model, OptimizerConfig::default());
    let batch = random_batch(8, 5).build(trainer.device());
    // Learning rate 0: the step itself changes nothing, so only the flush shows.
    trainer.step(&batch, 0.0);
    let after = trainer.model().policy_fc.weight.val();
    assert!(after.is_require_grad(), "the flushed weight still trains");
    let after = after.into_data().try_to_vec::<f32>().unwrap();
    for (i, (a, b)) in values.iter().zip(&after).enumerate() {
        if tiny.iter().any(|&(j, _)| j == i) {
            assert_eq!(b.to_bits(), 0, "weight {i}: {a:e} flushed to +0");
        } else {
            assert_eq!(a.to_bits(), b.to_bits(), "weight {i} unchanged");
        }
    }
    assert_eq!(
        trainer.model().policy_fc.weight.id,
        id,
        "the optimizer's key kept"
    );

    // The flushed model keeps training: the loss on the batch falls.
    let first = trainer.step(&batch, 3e-3);
    let mut last = first;
    for _ in 0..20 {
        last = trainer.step(&batch, 3e-3);
    }
    assert!(
        last.total_loss < first.total_loss,
        "loss {} → {}",
        first.total_loss,
        last.total_loss
    );
}
