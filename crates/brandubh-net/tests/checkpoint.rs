//! Checkpoint round trips and every way loading one can fail.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests may unwrap: a panic is a failed test"
)]

mod common;

use std::fs;

use brandubh_net::checkpoint::{self, CheckpointError, SaveOptions};
use brandubh_net::encoding::{self, INPUT_SIZE};
use brandubh_net::optimize::{OptimizerConfig, OptimizerKind, Trainer};
use brandubh_net::{NetConfig, PolicyValueNet};
use burn::module::Module;
use burn::tensor::Device;
use common::{max_diff, random_batch, random_leaves, trained_model};

fn small() -> NetConfig {
    NetConfig::new().with_channels(8).with_blocks(1)
}

fn inputs() -> Vec<f32> {
    let mut out = Vec::new();
    for leaf in random_leaves(12, 33) {
        out.extend(encoding::encode(&leaf.position, leaf.repetitions));
    }
    assert_eq!(out.len(), 12 * INPUT_SIZE);
    out
}

fn outputs(model: &PolicyValueNet) -> (Vec<f32>, Vec<f32>) {
    model.valid().infer(&inputs(), &Device::flex())
}

#[test]
fn autodiff_trained_model_loads_on_plain_flex_with_equal_outputs() {
    let dir = tempfile::tempdir().expect("create a temp dir");
    let config = NetConfig::new().with_channels(16).with_blocks(2);
    let trained = trained_model(&config, 4); // on flex().autodiff()
    let mut options = SaveOptions::at_step(4);
    options.extra.insert("lr".into(), serde_json::json!(0.01));
    let meta = checkpoint::save(dir.path().join("ckpt-4"), &trained, &options).expect("save");
    assert_eq!(meta.step, 4);
    assert!(dir.path().join("ckpt-4.safetensors").exists());
    assert!(dir.path().join("ckpt-4.json").exists());
    // No temporary files left behind.
    assert_eq!(fs::read_dir(dir.path()).expect("read dir").count(), 2);

    let plain = Device::flex();
    let (loaded, meta2) =
        checkpoint::load(dir.path().join("ckpt-4.json"), &plain, Some(&config)).expect("load");
    assert_eq!(meta, meta2);
    assert_eq!(meta2.extra["lr"], serde_json::json!(0.01));
    assert_eq!(loaded.config(), config);
    let (a, b) = (outputs(&trained), outputs(&loaded));
    assert!(max_diff(&a.0, &b.0) < 1e-5);
    assert!(max_diff(&a.1, &b.1) < 1e-5);
    // Loading onto an autodiff device works too (to resume training).
    let (resumed, _) =
        checkpoint::load(dir.path().join("ckpt-4"), &plain.autodiff(), None).expect("load");
    assert!(max_diff(&outputs(&resumed).0, &a.0) < 1e-5);
    // ... and its parameters still train.
    let mut trainer = Trainer::new(resumed, OptimizerConfig::default());
    let batch = random_batch(8, 2).build(trainer.device());
    trainer.step(&batch, 1e-2);
    assert!(
        max_diff(&outputs(trainer.model()).0, &a.0) > 1e-4,
        "weights did not move"
    );
    // Saving again over the same name replaces it.
    checkpoint::save(dir.path().join("ckpt-4"), &loaded, &SaveOptions::at_step(5)).expect("resave");
    assert_eq!(
        checkpoint::read_meta(dir.path().join("ckpt-4"))
            .expect("meta")
            .step,
        5
    );
}

#[test]
fn config_mismatch_names_the_file_and_the_fields() {
    let dir = tempfile::tempdir().expect("create a temp dir");
    let model = small().init(&Device::flex());
    checkpoint::save(dir.path().join("c"), &model, &SaveOptions::at_step(0)).expect("save");
    let expected = small().with_channels(32).with_value_hidden(16);
    let err = checkpoint::load(dir.path().join("c"), &Device::flex(), Some(&expected)).unwrap_err();
    assert!(
        matches!(err, CheckpointError::ConfigMismatch { .. }),
        "{err}"
    );
    let msg = err.to_string();
    assert!(msg.contains("c.json"), "{msg}");
    assert!(msg.contains("channels: found 8, expected 32"), "{msg}");
    assert!(msg.contains("value_hidden: found 64, expected 16"), "{msg}");
}

#[test]
fn encoding_version_mismatch_is_reported() {
    let dir = tempfile::tempdir().expect("create a temp dir");
    let model = small().init(&Device::flex());
    checkpoint::save(dir.path().join("e"), &model, &SaveOptions::at_step(0)).expect("save");
    let meta_path = dir.path().join("e.json");
    let text = fs::read_to_string(&meta_path).expect("read");
    let edited = text.replace(
        &format!("\"encoding_version\": {}", encoding::ENCODING_VERSION),
        "\"encoding_version\": 999",
    );
    assert_ne!(text, edited);
    fs::write(&meta_path, edited).expect("write");
    let err = checkpoint::load(dir.path().join("e"), &Device::flex(), None).unwrap_err();
    assert!(
        matches!(err, CheckpointError::EncodingMismatch { found: 999, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("e.json"));
    assert!(err.to_string().contains("encoding version 999"));
}

#[test]
fn missing_checkpoint_or_metadata_is_reported() {
    let dir = tempfile::tempdir().expect("create a temp dir");
    let err = checkpoint::load(dir.path().join("nope"), &Device::flex(), None).unwrap_err();
    assert!(matches!(err, CheckpointError::Missing { .. }), "{err}");
    assert!(err.to_string().contains("nope.json"));
    // Weights without metadata (a save interrupted between the two files) is incomplete.
    let model = small().init(&Device::flex());
    checkpoint::save(dir.path().join("half"), &model, &SaveOptions::at_step(0)).expect("save");
    fs::remove_file(dir.path().join("half.json")).expect("rm");
    let err = checkpoint::load(dir.path().join("half"), &Device::flex(), None).unwrap_err();
    assert!(matches!(err, CheckpointError::Missing { .. }), "{err}");
    // Metadata without weights.
    checkpoint::save(dir.path().join("w"), &model, &SaveOptions::at_step(0)).expect("save");
    fs::remove_file(dir.path().join("w.safetensors")).expect("rm");
    let err = checkpoint::load(dir.path().join("w"), &Device::flex(), None).unwrap_err();
    assert!(matches!(err, CheckpointError::Io { .. }), "{err}");
    assert!(err.to_string().contains("w.safetensors"));
}

#[test]
fn truncated_or_flipped_weights_are_corrupt_not_a_panic() {
    let dir = tempfile::tempdir().expect("create a temp dir");
    let model = small().init(&Device::flex());
    checkpoint::save(dir.path().join("k"), &model, &SaveOptions::at_step(0)).expect("save");
    let weights = dir.path().join("k.safetensors");
    let good = fs::read(&weights).expect("read");
    for len in [0, 7, 100, good.len() / 2, good.len() - 1] {
        fs::write(&weights, &good[..len]).expect("write");
        let err = checkpoint::load(dir.path().join("k"), &Device::flex(), None).unwrap_err();
        assert!(
            matches!(err, CheckpointError::Corrupt { .. }),
            "len {len}: {err}"
        );
        assert!(err.to_string().contains("k.safetensors"));
    }
    // Flip one byte in the header, in the middle and at the end.
    for at in [3, 20, good.len() / 2, good.len() - 1] {
        let mut bad = good.clone();
        bad[at] ^= 0x40;
        fs::write(&weights, &bad).expect("write");
        let err = checkpoint::load(dir.path().join("k"), &Device::flex(), None).unwrap_err();
        assert!(
            matches!(err, CheckpointError::Corrupt { .. }),
            "byte {at}: {err}"
        );
    }
    fs::write(&weights, &good).expect("write");
    checkpoint::load(dir.path().join("k"), &Device::flex(), None).expect("restored file loads");
}

#[test]
fn truncated_or_flipped_metadata_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().expect("create a temp dir");
    let model = small().init(&Device::flex());
    checkpoint::save(dir.path().join("m"), &model, &SaveOptions::at_step(0)).expect("save");
    let meta = dir.path().join("m.json");
    let good = fs::read(&meta).expect("read");
    for len in [0, 1, good.len() / 3, good.len() - 2] {
        fs::write(&meta, &good[..len]).expect("write");
        let err = checkpoint::load(dir.path().join("m"), &Device::flex(), None).unwrap_err();
        assert!(
            matches!(err, CheckpointError::Metadata { .. }),
            "len {len}: {err}"
        );
        assert!(err.to_string().contains("m.json"));
    }
    // Every single-byte flip gives an error or (if the JSON stays valid and consistent) a
    // model; never a panic.
    for at in 0..good.len() {
        let mut bad = good.clone();
        bad[at] ^= 0x01;
        fs::write(&meta, &bad).expect("write");
        let _ = checkpoint::load(dir.path().join("m"), &Device::flex(), None);
    }
}

#[test]
fn weights_of_another_model_are_rejected() {
    let dir = tempfile::tempdir().expect("create a temp dir");
    let a = small().init(&Device::flex());
    let b = small().with_channels(4).init(&Device::flex());
    checkpoint::save(dir.path().join("a"), &a, &SaveOptions::at_step(0)).expect("save");
    checkpoint::save(dir.path().join("b"), &b, &SaveOptions::at_step(0)).expect("save");
    // Point a's metadata at b's weights, with b's size and hash: only the shapes differ.
    let meta_b = checkpoint::read_meta(dir.path().join("b")).expect("meta");
    let mut meta_a = checkpoint::read_meta(dir.path().join("a")).expect("meta");
    meta_a.weights_file = meta_b.weights_file.clone();
    meta_a.weights_bytes = meta_b.weights_bytes;
    meta_a.weights_fnv1a64 = meta_b.weights_fnv1a64.clone();
    fs::write(
        dir.path().join("a.json"),
        serde_json::to_vec(&meta_a).expect("json"),
    )
    .expect("write");
    let err = checkpoint::load(dir.path().join("a"), &Device::flex(), None).unwrap_err();
    assert!(matches!(err, CheckpointError::Weights { .. }), "{err}");
    assert!(err.to_string().contains("b.safetensors"), "{err}");
}

#[test]
fn checkpoint_size_is_reported() {
    let dir = tempfile::tempdir().expect("create a temp dir");
    let model = NetConfig::new().init(&Device::flex());
    let meta =
        checkpoint::save(dir.path().join("s"), &model, &SaveOptions::at_step(0)).expect("save");
    // C=32, N=4: about 200k f32 parameters and running statistics.
    assert!(
        meta.weights_bytes > 500_000 && meta.weights_bytes < 2_000_000,
        "{}",
        meta.weights_bytes
    );
    println!(
        "default checkpoint: {} bytes of weights",
        meta.weights_bytes
    );
}

#[test]
fn training_checkpoint_resumes_the_optimizer_exactly() {
    let dir = tempfile::tempdir().expect("create a temp dir");
    let device = Device::flex().autodiff();
    for optimizer in [OptimizerKind::Adam, OptimizerKind::Sgd { momentum: 0.9 }] {
        let config = OptimizerConfig {
            optimizer,
            ..OptimizerConfig::default()
        };
        let mut a = Trainer::new(small().init(&device), config);
        let batch = random_batch(8, 6).build(a.device());
        for _ in 0..3 {
            a.step(&batch, 1e-2);
        }
        let stem = dir.path().join("t");
        let meta =
            checkpoint::save_training(&stem, &a, &SaveOptions::at_step(a.steps())).expect("save");
        assert!(meta.optimizer.is_some());
        assert!(checkpoint::optimizer_path(&stem).exists());

        let (mut b, meta) =
            checkpoint::load_training(&stem, &device, Some(&small()), config).expect("resume");
        assert_eq!(meta.step, 3);
        assert_eq!(b.steps(), 3);
        // A plain load gets a fresh optimizer.
        let (model, _) = checkpoint::load(&stem, &device, None).expect("load");
        let mut fresh = Trainer::new(model, config);

        a.step(&batch, 1e-2);
        b.step(&batch, 1e-2);
        fresh.step(&batch, 1e-2);
        assert_eq!(b.steps(), 4);
        let (oa, ob, of) = (
            outputs(a.model()),
            outputs(b.model()),
            outputs(fresh.model()),
        );
        assert!(
            max_diff(&oa.0, &ob.0) < 1e-6,
            "{optimizer:?}: resumed step differs"
        );
        assert!(max_diff(&oa.1, &ob.1) < 1e-6);
        assert!(
            max_diff(&oa.0, &of.0) > 1e-5,
            "{optimizer:?}: fresh optimizer should differ"
        );
    }
}

#[test]
fn corrupt_optimizer_state_is_reported() {
    let dir = tempfile::tempdir().expect("create a temp dir");
    let device = Device::flex().autodiff();
    let mut t = Trainer::new(small().init(&device), OptimizerConfig::default());
    let batch = random_batch(4, 8).build(t.device());
    t.step(&batch, 1e-2);
    let stem = dir.path().join("o");
    checkpoint::save_training(&stem, &t, &SaveOptions::at_step(1)).expect("save");
    let path = checkpoint::optimizer_path(&stem);
    let good = fs::read(&path).expect("read");
    fs::write(&path, &good[..good.len() / 2]).expect("write");
    let err =
        checkpoint::load_training(&stem, &device, None, OptimizerConfig::default()).unwrap_err();
    assert!(matches!(err, CheckpointError::Corrupt { .. }), "{err}");
    assert!(err.to_string().contains("o.optim.bpk"), "{err}");
    // The weights alone still load.
    checkpoint::load(&stem, &Device::flex(), None).expect("weights load");
    // Another optimizer kind ignores the saved state.
    let sgd = OptimizerConfig {
        optimizer: OptimizerKind::Sgd { momentum: 0.9 },
        ..OptimizerConfig::default()
    };
    checkpoint::load_training(&stem, &device, None, sgd).expect("fresh sgd");
}
