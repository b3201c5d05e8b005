//! The network side of Brandubh Zero: encodings, the policy-value ResNet (in burn), its
//! training step, checkpoints and a fast batched evaluator for the search.
//!
//! - [`encoding`]: position → input planes `[P, 7, 7]` (P = 9, 12, 16 or 19 by layout) and move ↔ policy index (1176),
//!   pure functions that commute with the 8 symmetries of the board;
//! - [`model`]: [`NetConfig`] and [`PolicyValueNet`] (`#[derive(Module)]`), generic over
//!   burn's device (`Device::flex()` by default; a GPU through wgpu with the `gpu` feature,
//!   [`device`]): the
//!   training model and the reference the inference paths are tested against;
//! - [`folded`]: [`FoldedNet`], the weights with batch norm folded, as plain numbers;
//! - [`optimize`]: batches, the loss (policy cross-entropy over legal moves + value MSE) and
//!   [`optimize::Trainer`] doing one Adam or SGD-with-momentum step;
//! - [`checkpoint`]: safetensors weights + JSON metadata, written atomically, checked on load;
//! - [`fast`]: an inference-only forward pass in plain Rust (batch norm folded, SIMD chosen
//!   at run time), several times faster than burn's on the CPU, built from a [`FoldedNet`]
//!   or loaded straight from a checkpoint ([`FastNet::load`]);
//! - [`fast::train`]: the training step in plain Rust on the fast path's kernels
//!   ([`fast::train::FastTrainer`]), and [`engine`], which runs a [`optimize::Trainer`]'s
//!   steps on it or on burn;
//! - [`onnx`]: a [`FoldedNet`] as a standard ONNX model, for other runtimes;
//! - [`NetEvaluator`]: the search crate's [`brandubh_search::Evaluator`] on top of either.
//!
//! Only this crate knows burn; the search knows only the `Evaluator` trait.
//!
//! ```
//! use std::sync::Arc;
//! use brandubh_net::{FastNet, NetConfig, NetEvaluator};
//! use brandubh_rules::Game;
//! use brandubh_search::{Evaluator, Leaf};
//! use burn::tensor::Device;
//!
//! let model = NetConfig::new().init(&Device::flex()); // C = 32, N = 4
//! let mut evaluator = NetEvaluator::new(Arc::new(FastNet::from_model(&model)));
//! let evals = evaluator.evaluate(&[Leaf::from_game(&Game::default())]);
//! assert!(evals[0].value.abs() < 1.0);
//! ```
#![warn(missing_docs)]

pub mod checkpoint;
pub mod device;
pub mod encoding;
pub mod engine;
mod evaluator;
pub mod fast;
pub mod folded;
pub mod model;
pub mod onnx;
pub mod optimize;

pub use checkpoint::{CheckpointError, CheckpointMeta, SaveOptions};
pub use evaluator::{NetEvaluator, legal_softmax};
pub use fast::FastNet;
pub use folded::FoldedNet;
pub use model::{MOVES_LEFT_SCALE, NetConfig, NetOutput, PolicyValueNet};
pub use optimize::{
    Batch, BatchBuilder, BatchError, OptimizerConfig, OptimizerKind, StepStats, Trainer,
};

/// burn's device type, re-exported so callers need not depend on burn to pick one.
pub use burn::tensor::Device;
