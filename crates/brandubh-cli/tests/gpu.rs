//! The `gpu` build (burn's wgpu backend) on whatever Vulkan, Metal or DX12 adapter the
//! machine has; in CI that is Mesa's software Vulkan (lavapipe), installed by `.ci/run`.
//! Compiled only with the feature: `cargo test --release --workspace --features
//! brandubh-cli/gpu --test gpu`.
//!
//! Without an adapter each test says so on stderr and returns; with `CI` set it fails.

#![cfg(feature = "gpu")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests may unwrap: a panic is a failed test"
)]

mod common;

use std::path::Path;
use std::sync::OnceLock;

use brandubh_net::checkpoint::{self, SaveOptions};
use brandubh_net::engine::{Engine, EngineKind};
use brandubh_net::optimize::{BatchBuilder, OptimizerConfig, Trainer};
use brandubh_net::{Device, FastNet, NetConfig, encoding};
use brandubh_rules::{Game, Symmetry};

/// The GPU, opened once per test process (wgpu initialises an adapter's runtime once), or
/// `None` with the reason printed; with `CI` set a missing adapter fails the test.
fn gpu() -> Option<&'static Device> {
    static GPU: OnceLock<Result<Device, String>> = OnceLock::new();
    let opened = GPU.get_or_init(|| {
        brandubh_net::device::gpu(None).map(|g| {
            eprintln!("GPU: {}", g.name);
            g.device
        })
    });
    match opened {
        Ok(device) => Some(device),
        Err(e) if std::env::var_os("CI").is_some() => panic!("CI is set and there is no GPU: {e}"),
        Err(e) => {
            eprintln!("SKIPPED: no wgpu adapter ({e}); install mesa-vulkan-drivers for lavapipe");
            None
        }
    }
}

use common::brandubh_at_root as brandubh;

/// Runs `brandubh train` with `args` and returns its stderr, asserting success.
fn train(args: &[&str]) -> String {
    let o = brandubh(&[&["train", "--quiet"], args].concat());
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{err}");
    err
}

/// `configs/tiny.toml` with `iterations` iterations, in `dir`.
fn tiny_with(dir: &Path, iterations: u32) -> String {
    let path = common::tiny_extended(dir, "tiny.toml", &format!("iterations = {iterations}\n"));
    path.to_str().unwrap().to_owned()
}

/// tiny.toml trained on the GPU (self-play's evaluations there too) for two iterations,
/// then continued on the CPU from the GPU's checkpoint: the first log line names the GPU
/// and burn's step, every iteration writes its metrics line and checkpoint.
#[test]
fn tiny_trains_on_the_gpu_and_continues_on_the_cpu() {
    if gpu().is_none() {
        return;
    }
    let tmp = common::temp_dir();
    let config = tiny_with(tmp.path(), 3);
    let run = tmp.path().join("run");
    let run = run.to_str().unwrap();
    let common = ["--config", config.as_str(), "--run", run];
    let err = train(
        &[
            &common[..],
            &[
                "--device",
                "gpu",
                "--selfplay-inference",
                "device",
                "--iterations",
                "2",
            ],
        ]
        .concat(),
    );
    let first = err
        .lines()
        .find(|l| l.contains("training "))
        .unwrap_or_default();
    assert!(
        first.contains("on GPU ")
            && first.contains("training step burn on the GPU")
            && first.contains("self-play on the device"),
        "{err}"
    );
    assert!(
        err.contains("iteration 1:") && err.contains("iteration 2:"),
        "{err}"
    );
    let err = train(&[&common[..], &["--device", "cpu"]].concat());
    assert!(
        err.contains("on CPU (burn flex), training step fast"),
        "{err}"
    );
    assert!(
        err.contains("iteration 3:") && !err.contains("iteration 2:"),
        "{err}"
    );
    let metrics = std::fs::read_to_string(Path::new(run).join("metrics.jsonl")).unwrap();
    assert_eq!(metrics.lines().count(), 3, "{metrics}");
    let dir = brandubh_run::RunDir::new(run);
    for i in 1..=3 {
        checkpoint::read_meta(dir.checkpoint(i))
            .unwrap_or_else(|e| panic!("checkpoint {i} of {run}: {e}"));
    }
}

/// A run started on the CPU continues on the GPU: the optimizer state and weights written
/// by the CPU's fast step load on the GPU for burn's step.
#[test]
fn a_cpu_run_continues_on_the_gpu() {
    if gpu().is_none() {
        return;
    }
    let tmp = common::temp_dir();
    let config = tiny_with(tmp.path(), 2);
    let run = tmp.path().join("run");
    let run = run.to_str().unwrap();
    let common = ["--config", config.as_str(), "--run", run];
    let err = train(&[&common[..], &["--iterations", "1"]].concat());
    assert!(err.contains("iteration 1:"), "{err}");
    let err = train(&[&common[..], &["--device", "gpu"]].concat());
    assert!(
        err.contains("training step burn on the GPU") && err.contains("iteration 2:"),
        "{err}"
    );
    assert!(!err.contains("iteration 1:"), "{err}");
}

/// Encoded inputs of `n` positions from seeded random play, for `config`.
fn inputs(config: &NetConfig, n: usize) -> Vec<f32> {
    let mut out = Vec::new();
    let mut game = Game::default();
    let mut state = 7u64;
    let mut pick = |m: usize| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1);
        (state >> 33) as usize % m
    };
    for _ in 0..n {
        if game.is_over() {
            game = Game::default();
        }
        game.random_playout(1, &mut pick);
        out.extend(encoding::encode_planes(game.position(), 1, config.planes()));
    }
    out
}

/// The largest absolute difference between two equally long slices.
fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

/// Tolerance of GPU against CPU outputs: the reasoning is at its definition.
const TOLERANCE: f32 = brandubh_net::device::GPU_TOLERANCE;

/// The same checkpoint evaluated on the GPU (burn), on the CPU (burn flex) and on the fast
/// path agrees within [`TOLERANCE`]; the checkpoint written from the GPU's model loads on
/// the CPU bit for bit.
#[test]
fn gpu_outputs_equal_the_cpus() {
    let Some(gpu) = gpu() else { return };
    let config = NetConfig::new().with_moves_left_hidden(Some(32));
    let cpu = Device::flex();
    cpu.seed(5);
    let model = config.clone().init(&cpu);
    let tmp = common::temp_dir();
    let stem = tmp.path().join("ckpt");
    checkpoint::save(&stem, &model, &SaveOptions::at_step(0)).unwrap();
    let (on_gpu, _) = checkpoint::load(&stem, gpu, Some(&config)).unwrap();
    let x = inputs(&config, 64);
    let (cpu_logits, cpu_values) = model.infer(&x, &cpu);
    let (gpu_logits, gpu_values) = on_gpu.infer(&x, gpu);
    let fast = FastNet::from_model(&model).forward(&x);
    let d_logits = max_diff(&cpu_logits, &gpu_logits);
    let d_values = max_diff(&cpu_values, &gpu_values);
    let d_fast = max_diff(&fast.policy_logits, &gpu_logits);
    eprintln!("GPU vs CPU: logits {d_logits:e}, values {d_values:e}; GPU vs fast path {d_fast:e}");
    assert!(d_logits < TOLERANCE && d_values < TOLERANCE && d_fast < TOLERANCE);
    // Saved from the GPU, loaded on the CPU: the same numbers as the GPU's weights.
    let back = tmp.path().join("back");
    checkpoint::save(&back, &on_gpu, &SaveOptions::at_step(0)).unwrap();
    let (reloaded, _) = checkpoint::load(&back, &cpu, Some(&config)).unwrap();
    let (again, _) = reloaded.infer(&x, &cpu);
    assert_eq!(
        again, cpu_logits,
        "weights changed on the round trip through the GPU"
    );
}

/// One optimizer step of burn's engine on the GPU and on the CPU, from the same weights and
/// batch: the same loss, and the same weights after it, within [`TOLERANCE`] (the
/// gradients are sums over the batch in another order).
#[test]
fn a_training_step_on_the_gpu_equals_the_cpus() {
    let Some(gpu) = gpu() else { return };
    let config = NetConfig::new().with_channels(16).with_blocks(2);
    let cpu = Device::flex();
    cpu.seed(9);
    let model = config.clone().init(&cpu.clone().autodiff());
    let tmp = common::temp_dir();
    let stem = tmp.path().join("start");
    checkpoint::save(&stem, &model, &SaveOptions::at_step(0)).unwrap();
    let mut batch = BatchBuilder::with_planes(config.planes());
    let mut game = Game::default();
    for i in 0..32 {
        if game.is_over() {
            game = Game::default();
        }
        let moves = game.position().legal_moves();
        let policy = vec![1.0 / moves.len() as f32; moves.len()];
        batch
            .push_position(
                game.position(),
                1,
                &moves,
                &policy,
                if i % 2 == 0 { 1.0 } else { -1.0 },
                Symmetry::Identity,
            )
            .unwrap();
        game.random_playout(1, |m| (i * 7 + 3) % m);
    }
    let mut losses = Vec::new();
    let mut after = Vec::new();
    for device in [cpu.clone(), gpu.clone()] {
        let (trainer, _) = checkpoint::load_training(
            &stem,
            &device.autodiff(),
            Some(&config),
            OptimizerConfig::default(),
        )
        .unwrap();
        let mut engine = Engine::new(trainer, EngineKind::Burn).unwrap();
        losses.push(engine.step(&batch, 1e-2).total_loss);
        let trainer: Trainer = engine.into_trainer().unwrap();
        let x = inputs(&config, 16);
        let on = trainer.device().clone().without_autodiff();
        after.push(trainer.inference_model().infer(&x, &on).0);
    }
    eprintln!("losses CPU {} GPU {}", losses[0], losses[1]);
    assert!((losses[0] - losses[1]).abs() < TOLERANCE, "{losses:?}");
    assert!(max_diff(&after[0], &after[1]) < TOLERANCE);
}
