//! Batches, the loss and one optimizer step ([`Trainer::step`]). The training loop
//! (self-play, replay window, schedule, checkpoints) is the `brandubh-train` crate.
//!
//! ```
//! use brandubh_net::optimize::{BatchBuilder, Trainer, OptimizerConfig};
//! use brandubh_net::NetConfig;
//! use brandubh_rules::{Position, Symmetry};
//! use burn::tensor::Device;
//!
//! let device = Device::flex().autodiff();
//! let model = NetConfig::new().with_channels(8).with_blocks(1).init(&device);
//! let mut trainer = Trainer::new(model, OptimizerConfig::default());
//!
//! let position = Position::start();
//! let moves = position.legal_moves();
//! let policy = vec![1.0 / moves.len() as f32; moves.len()];
//! let mut batch = BatchBuilder::new();
//! batch.push_position(&position, 1, &moves, &policy, 0.0, Symmetry::Identity)?;
//! let stats = trainer.step(&batch.build(trainer.device()), 1e-3);
//! assert!(stats.policy_loss.is_finite());
//! # Ok::<(), brandubh_net::optimize::BatchError>(())
//! ```

use brandubh_rules::{Move, Position, Symmetry};
use burn::module::{Module, ModuleMapper, Param};
use burn::optim::decay::WeightDecayConfig;
use burn::optim::momentum::MomentumConfig;
use burn::optim::{AdamConfig, GradientsParams, ModuleOptimizer, SgdConfig};
use burn::tensor::activation::log_softmax;
use burn::tensor::{Bool, Device, Tensor, TensorData};
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::encoding::{self, BOARD_SIZE, NUM_PLANES, PLANE_SIZE, POLICY_SIZE};
use crate::folded::FLUSH_BELOW;
use crate::model::{MOVES_LEFT_SCALE, PolicyValueNet};

/// A sample that cannot go into a batch; `sample` is its index in the batch.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum BatchError {
    /// Encoded planes of the wrong length.
    #[error("sample {sample}: planes have {got} values, expected {expected}")]
    PlaneLength {
        /// Index of the sample.
        sample: usize,
        /// Values given.
        got: usize,
        /// Values expected (the builder's planes × 49).
        expected: usize,
    },
    /// Moves and policy target of different lengths.
    #[error("sample {sample}: {moves} moves but {probabilities} policy probabilities")]
    PolicyLength {
        /// Index of the sample.
        sample: usize,
        /// Number of moves.
        moves: usize,
        /// Number of probabilities.
        probabilities: usize,
    },
    /// No legal move at all.
    #[error("sample {sample}: no legal moves")]
    NoMoves {
        /// Index of the sample.
        sample: usize,
    },
    /// A move that is not a rook move.
    #[error("sample {sample}: move {mv} has no policy index")]
    BadMove {
        /// Index of the sample.
        sample: usize,
        /// The move.
        mv: Move,
    },
    /// A policy index outside `0..POLICY_SIZE`.
    #[error("sample {sample}: policy index {index} out of range 0..{POLICY_SIZE}")]
    IndexOutOfRange {
        /// Index of the sample.
        sample: usize,
        /// The index.
        index: usize,
    },
    /// The same policy index twice.
    #[error("sample {sample}: policy index {index} given twice")]
    DuplicateIndex {
        /// Index of the sample.
        sample: usize,
        /// The index.
        index: usize,
    },
    /// A negative or non-finite probability, or probabilities summing to zero.
    #[error("sample {sample}: policy target is not a distribution ({reason})")]
    BadPolicy {
        /// Index of the sample.
        sample: usize,
        /// What is wrong.
        reason: &'static str,
    },
    /// A value target outside [-1, 1] or not finite.
    #[error("sample {sample}: value target {value} is not in [-1, 1]")]
    BadValue {
        /// Index of the sample.
        sample: usize,
        /// The value.
        value: f32,
    },
    /// A moves-left target given with no sample to go with it: before the first sample,
    /// or twice for one.
    #[error("plies to the end given without a sample of their own (after {samples} samples)")]
    StrayMovesLeft {
        /// Samples in the builder.
        samples: usize,
    },
}

/// Collects samples on the CPU; [`BatchBuilder::build`] turns them into a [`Batch`].
/// Policy targets are sparse (legal moves only) and normalised to sum to 1.
#[derive(Clone, Debug)]
pub struct BatchBuilder {
    /// Input planes per position: the network's `NetConfig::planes`.
    planes: usize,
    inputs: Vec<f32>,
    policy: Vec<f32>,
    legal: Vec<bool>,
    values: Vec<f32>,
    /// Moves-left targets (plies / [`MOVES_LEFT_SCALE`]) of the first samples.
    moves_left: Vec<f32>,
    scratch: Vec<f32>,
}

impl Default for BatchBuilder {
    fn default() -> Self {
        BatchBuilder::with_planes(NUM_PLANES)
    }
}

impl BatchBuilder {
    /// An empty builder for networks with the basic input planes.
    #[must_use]
    pub fn new() -> BatchBuilder {
        BatchBuilder::default()
    }

    /// An empty builder for networks that take `planes` input planes
    /// (`NetConfig::planes`: one of `encoding::LAYOUTS`).
    ///
    /// # Panics
    /// If `planes` is not a layout (a programming error).
    #[must_use]
    pub fn with_planes(planes: usize) -> BatchBuilder {
        assert!(
            encoding::is_layout(planes),
            "a network takes 9, 12, 16 or 19 input planes, not {planes}"
        );
        BatchBuilder {
            planes,
            inputs: Vec::new(),
            policy: Vec::new(),
            legal: Vec::new(),
            values: Vec::new(),
            moves_left: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// Input planes per position.
    #[must_use]
    pub fn planes(&self) -> usize {
        self.planes
    }

    /// Number of samples so far.
    #[must_use]
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether no sample was added.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Removes every sample, keeping the allocations.
    pub fn clear(&mut self) {
        self.inputs.clear();
        self.policy.clear();
        self.legal.clear();
        self.values.clear();
        self.moves_left.clear();
    }

    /// Gives the sample pushed last its moves-left target: `plies` to the game's end (the
    /// network learns `plies / MOVES_LEFT_SCALE`). A batch has moves-left targets only when
    /// every sample got one; a model with a moves-left head trains that head on such
    /// batches only.
    pub fn push_plies_to_end(&mut self, plies: u32) -> Result<(), BatchError> {
        if self.moves_left.len() + 1 != self.len() {
            return Err(BatchError::StrayMovesLeft {
                samples: self.len(),
            });
        }
        #[allow(
            clippy::cast_precision_loss,
            reason = "plies of a game are far below 2^24"
        )]
        self.moves_left.push(plies as f32 / MOVES_LEFT_SCALE);
        Ok(())
    }

    /// Adds a position that has occurred `repetitions` times, with its legal `moves`, the
    /// target probabilities `policy` aligned with `moves` (e.g. visit counts; normalised
    /// here), and the value target from the side to move's view. The sample is stored as its
    /// image under `symmetry` (data augmentation; `Symmetry::Identity` for none).
    pub fn push_position(
        &mut self,
        position: &Position,
        repetitions: u32,
        moves: &[Move],
        policy: &[f32],
        value: f32,
        symmetry: Symmetry,
    ) -> Result<(), BatchError> {
        let sample = self.len();
        if moves.len() != policy.len() {
            return Err(BatchError::PolicyLength {
                sample,
                moves: moves.len(),
                probabilities: policy.len(),
            });
        }
        let mut sparse = Vec::with_capacity(moves.len());
        for (&mv, &p) in moves.iter().zip(policy) {
            let index = encoding::policy_index(symmetry.mv(mv))
                .ok_or(BatchError::BadMove { sample, mv })?;
            sparse.push((index, p));
        }
        self.scratch.resize(self.planes * PLANE_SIZE, 0.0);
        encoding::encode_into(&symmetry.position(position), repetitions, &mut self.scratch);
        let planes = std::mem::take(&mut self.scratch);
        let result = self.push_encoded(&planes, &sparse, value);
        self.scratch = planes;
        result
    }

    /// Adds a search leaf (its position, repetition count and legal moves) with its
    /// targets, as [`BatchBuilder::push_position`] does.
    pub fn push_leaf(
        &mut self,
        leaf: &brandubh_search::Leaf,
        policy: &[f32],
        value: f32,
        symmetry: Symmetry,
    ) -> Result<(), BatchError> {
        let moves = &leaf.moves;
        self.push_position(
            &leaf.position,
            leaf.repetitions,
            moves,
            policy,
            value,
            symmetry,
        )
    }

    /// `n` samples for timing a training step (`train_bench`): positions from seeded
    /// random play (0 to 39 plies, finished games skipped), each with a uniform policy
    /// over its legal moves, a random value target and, with `moves_left`, a random
    /// plies-to-end target, for a network of `planes` input planes.
    pub fn synthetic(
        planes: usize,
        n: usize,
        seed: u64,
        moves_left: bool,
    ) -> Result<BatchBuilder, BatchError> {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut b = BatchBuilder::with_planes(planes);
        while b.len() < n {
            let mut g = brandubh_rules::Game::default();
            let plies = rng.random_range(0..40);
            g.random_playout(plies, |k| rng.random_range(0..k));
            if g.is_over() {
                continue;
            }
            let leaf = brandubh_search::Leaf::from_game(&g);
            let policy = vec![1.0 / leaf.moves.len() as f32; leaf.moves.len()];
            b.push_leaf(
                &leaf,
                &policy,
                rng.random_range(-1.0f32..=1.0),
                Symmetry::Identity,
            )?;
            if moves_left {
                b.push_plies_to_end(rng.random_range(0..60))?;
            }
        }
        Ok(b)
    }

    /// Adds an encoded sample: `planes` ([`BatchBuilder::planes`] × 49 values), `(policy index,
    /// probability)` for every legal move (the others are masked out of the loss), and the
    /// value target from the side to move's view.
    pub fn push_encoded(
        &mut self,
        planes: &[f32],
        policy: &[(usize, f32)],
        value: f32,
    ) -> Result<(), BatchError> {
        let sample = self.len();
        if planes.len() != self.planes * PLANE_SIZE {
            return Err(BatchError::PlaneLength {
                sample,
                got: planes.len(),
                expected: self.planes * PLANE_SIZE,
            });
        }
        if policy.is_empty() {
            return Err(BatchError::NoMoves { sample });
        }
        if !(value.is_finite() && (-1.0..=1.0).contains(&value)) {
            return Err(BatchError::BadValue { sample, value });
        }
        let mut sum = 0.0f64;
        let mut row_legal = [false; POLICY_SIZE];
        for &(index, p) in policy {
            if index >= POLICY_SIZE {
                return Err(BatchError::IndexOutOfRange { sample, index });
            }
            if row_legal[index] {
                return Err(BatchError::DuplicateIndex { sample, index });
            }
            row_legal[index] = true;
            if !p.is_finite() || p < 0.0 {
                return Err(BatchError::BadPolicy {
                    sample,
                    reason: "negative or non-finite probability",
                });
            }
            sum += f64::from(p);
        }
        if sum <= 0.0 {
            return Err(BatchError::BadPolicy {
                sample,
                reason: "probabilities sum to zero",
            });
        }
        self.inputs.extend_from_slice(planes);
        let start = self.policy.len();
        self.policy.resize(start + POLICY_SIZE, 0.0);
        for &(index, p) in policy {
            self.policy[start + index] = (f64::from(p) / sum) as f32;
        }
        self.legal.extend_from_slice(&row_legal);
        self.values.push(value);
        Ok(())
    }

    /// The samples so far as plain numbers, for the fast training step
    /// ([`crate::fast::train::FastTrainer::step`]).
    #[must_use]
    pub fn view(&self) -> crate::fast::train::TrainBatch<'_> {
        let n = self.len();
        crate::fast::train::TrainBatch {
            inputs: &self.inputs,
            policy: &self.policy,
            legal: &self.legal,
            values: &self.values,
            moves_left: (n > 0 && self.moves_left.len() == n).then_some(&self.moves_left[..]),
        }
    }

    /// The tensors of the samples so far, on `device` (the model's device).
    #[must_use]
    pub fn build(&self, device: &Device) -> Batch {
        let n = self.len();
        Batch {
            inputs: Tensor::from_data(
                TensorData::new(
                    self.inputs.clone(),
                    [n, self.planes, BOARD_SIZE, BOARD_SIZE],
                ),
                device,
            ),
            policy_targets: Tensor::from_data(
                TensorData::new(self.policy.clone(), [n, POLICY_SIZE]),
                device,
            ),
            legal_mask: Tensor::from_data(
                TensorData::new(self.legal.clone(), [n, POLICY_SIZE]),
                device,
            ),
            value_targets: Tensor::from_data(TensorData::new(self.values.clone(), [n, 1]), device),
            moves_left_targets: (n > 0 && self.moves_left.len() == n).then(|| {
                Tensor::from_data(TensorData::new(self.moves_left.clone(), [n, 1]), device)
            }),
        }
    }
}

/// A training batch as tensors (dense targets). Build it with [`BatchBuilder`] or from
/// tensors of these shapes directly.
#[derive(Clone, Debug)]
pub struct Batch {
    /// Input planes `[B, P, 7, 7]` (P = 9, or 12 with the King planes).
    pub inputs: Tensor<4>,
    /// Target distribution over moves `[B, 1176]`, zero outside the legal moves, rows
    /// summing to 1.
    pub policy_targets: Tensor<2>,
    /// `true` on the legal moves `[B, 1176]`.
    pub legal_mask: Tensor<2, Bool>,
    /// Value targets `[B, 1]` in [-1, 1], from the side to move's view.
    pub value_targets: Tensor<2>,
    /// Moves-left targets `[B, 1]`: plies to the game's end / [`MOVES_LEFT_SCALE`], when
    /// every sample has one ([`BatchBuilder::push_plies_to_end`]).
    pub moves_left_targets: Option<Tensor<2>>,
}

impl Batch {
    /// Number of samples.
    #[must_use]
    pub fn len(&self) -> usize {
        self.inputs.dims()[0]
    }

    /// Whether the batch is empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The loss terms of a batch, as tensors (so `total` can be differentiated).
#[derive(Debug)]
pub struct Losses {
    /// `policy + value_weight * value (+ moves_left_weight * moves_left)`, `[1]`.
    pub total: Tensor<1>,
    /// Mean cross-entropy of the target policy against the softmax over legal moves, `[1]`.
    pub policy: Tensor<1>,
    /// Mean squared error of the value, `[1]`.
    pub value: Tensor<1>,
    /// Mean squared error of the moves-left head, `[1]`, when the model has the head and
    /// the batch its targets.
    pub moves_left: Option<Tensor<1>>,
}

/// Logit given to illegal moves before the softmax: finite so that a zero target times
/// its log-probability is zero, not NaN.
const MASKED_LOGIT: f32 = -1.0e9;

/// Policy cross-entropy over the legal moves plus `value_weight` × value MSE, plus
/// `moves_left_weight` × the moves-left head's MSE when the model has that head and the batch
/// its targets. L2 regularisation is the optimizer's weight decay, not a term here.
#[must_use]
pub fn losses(
    model: &PolicyValueNet,
    batch: &Batch,
    value_weight: f32,
    moves_left_weight: f32,
) -> Losses {
    let out = model.forward(batch.inputs.clone());
    let illegal = batch.legal_mask.clone().bool_not();
    let logits = out.policy_logits.mask_fill(illegal, MASKED_LOGIT); // [B, 1176]
    let log_p = log_softmax(logits, 1); // [B, 1176]
    let policy = (batch.policy_targets.clone() * log_p)
        .sum_dim(1) // [B, 1]
        .neg()
        .mean(); // [1]
    let diff = out.value - batch.value_targets.clone(); // [B, 1]
    let value = (diff.clone() * diff).mean(); // [1]
    let mut total = policy.clone() + value.clone().mul_scalar(value_weight);
    let moves_left =
        out.moves_left
            .zip(batch.moves_left_targets.clone())
            .map(|(predicted, target)| {
                let diff = predicted - target; // [B, 1]
                (diff.clone() * diff).mean() // [1]
            });
    if let Some(m) = &moves_left {
        total = total + m.clone().mul_scalar(moves_left_weight);
    }
    Losses {
        total,
        policy,
        value,
        moves_left,
    }
}

/// Which optimizer a [`Trainer`] uses.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum OptimizerKind {
    /// Adam (β₁ 0.9, β₂ 0.999).
    Adam,
    /// SGD with (heavy-ball) momentum.
    Sgd {
        /// Momentum coefficient, e.g. 0.9.
        momentum: f64,
    },
}

/// Settings of a [`Trainer`]; the learning rate is given to each step.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct OptimizerConfig {
    /// The optimizer.
    pub optimizer: OptimizerKind,
    /// L2 penalty added to every gradient (`grad += weight_decay * param`).
    pub weight_decay: f32,
    /// Weight of the value MSE against the policy cross-entropy.
    pub value_weight: f32,
    /// Weight of the moves-left head's MSE (a model without that head ignores it).
    /// Checkpoints written before the head existed say nothing, which reads as 0.
    #[serde(default)]
    pub moves_left_weight: f32,
}

impl Default for OptimizerConfig {
    /// Adam, weight decay 1e-4, value weight 1, moves-left weight 0.
    fn default() -> Self {
        OptimizerConfig {
            optimizer: OptimizerKind::Adam,
            weight_decay: 1e-4,
            value_weight: 1.0,
            moves_left_weight: 0.0,
        }
    }
}

impl OptimizerConfig {
    /// A fresh optimizer with these settings.
    #[must_use]
    pub fn optimizer(&self) -> ModuleOptimizer {
        let decay = (self.weight_decay > 0.0).then(|| WeightDecayConfig::new(self.weight_decay));
        match self.optimizer {
            OptimizerKind::Adam => AdamConfig::new().with_weight_decay(decay).init(),
            OptimizerKind::Sgd { momentum } => SgdConfig::new()
                .with_weight_decay(decay)
                .with_momentum(Some(
                    MomentumConfig::new()
                        .with_momentum(momentum)
                        .with_dampening(0.0),
                ))
                .init(),
        }
    }
}

/// The losses of a step, read back as numbers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepStats {
    /// Samples in the batch.
    pub samples: usize,
    /// Policy cross-entropy.
    pub policy_loss: f32,
    /// Value MSE.
    pub value_loss: f32,
    /// The moves-left head's MSE, when there was one ([`Losses::moves_left`]).
    pub moves_left_loss: Option<f32>,
    /// `policy_loss + value_weight * value_loss (+ moves_left_weight * moves_left_loss)`.
    pub total_loss: f32,
}

/// A model being trained and its optimizer state.
#[derive(Debug)]
pub struct Trainer {
    model: PolicyValueNet,
    device: Device,
    optimizer: OptimizerState,
    config: OptimizerConfig,
    steps: u64,
}

/// `ModuleOptimizer` has no `Debug`.
struct OptimizerState(ModuleOptimizer);

impl std::fmt::Debug for OptimizerState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ModuleOptimizer")
    }
}

impl Trainer {
    /// Trains `model`, which must live on an autodiff device (e.g.
    /// `Device::flex().autodiff()`), with a fresh optimizer.
    #[must_use]
    pub fn new(model: PolicyValueNet, config: OptimizerConfig) -> Trainer {
        Trainer {
            optimizer: OptimizerState(config.optimizer()),
            device: model.stem.conv.weight.val().device(),
            model,
            config,
            steps: 0,
        }
    }

    /// The device the model (and so each batch) lives on.
    #[must_use]
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// One optimizer step on `batch` with learning rate `lr`; returns the losses before
    /// the step. After the step every weight of magnitude below [`FLUSH_BELOW`] is set to
    /// zero ([`FlushTiny`]).
    pub fn step(&mut self, batch: &Batch, lr: f64) -> StepStats {
        let l = losses(
            &self.model,
            batch,
            self.config.value_weight,
            self.config.moves_left_weight,
        );
        let stats = read_stats(batch.len(), &l);
        let grads = GradientsParams::from_grads(l.total.backward(), &self.model);
        let model = self.optimizer.0.step(lr, self.model.clone(), grads);
        self.model = model.map(&mut FlushTiny);
        self.steps += 1;
        stats
    }

    /// The losses on `batch` without training (inference mode: batch norm uses its running
    /// statistics).
    #[must_use]
    pub fn evaluate(&self, batch: &Batch) -> StepStats {
        let model = self.model.valid();
        let device = self.device.clone().without_autodiff();
        let batch = Batch {
            inputs: batch.inputs.clone().to_device(&device),
            policy_targets: batch.policy_targets.clone().to_device(&device),
            legal_mask: batch.legal_mask.clone().to_device(&device),
            value_targets: batch.value_targets.clone().to_device(&device),
            moves_left_targets: batch
                .moves_left_targets
                .as_ref()
                .map(|t| t.clone().to_device(&device)),
        };
        let c = &self.config;
        read_stats(
            batch.len(),
            &losses(&model, &batch, c.value_weight, c.moves_left_weight),
        )
    }

    /// The model being trained.
    #[must_use]
    pub fn model(&self) -> &PolicyValueNet {
        &self.model
    }

    /// The inference copy of the model (no autodiff, batch norm on its running statistics).
    #[must_use]
    pub fn inference_model(&self) -> PolicyValueNet {
        self.model.valid()
    }

    /// The model, ending training.
    #[must_use]
    pub fn into_model(self) -> PolicyValueNet {
        self.model
    }

    /// Optimizer steps behind the model: those of this trainer, plus the checkpoint's step
    /// when it was resumed with [`crate::checkpoint::load_training`].
    #[must_use]
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// The optimizer and its state (moments, momentum buffers).
    #[must_use]
    pub fn optimizer(&self) -> &ModuleOptimizer {
        &self.optimizer.0
    }

    /// A trainer from its parts (used to resume from a checkpoint).
    pub(crate) fn from_parts(
        model: PolicyValueNet,
        optimizer: ModuleOptimizer,
        config: OptimizerConfig,
        steps: u64,
    ) -> Trainer {
        Trainer {
            device: model.stem.conv.weight.val().device(),
            model,
            optimizer: OptimizerState(optimizer),
            config,
            steps,
        }
    }

    /// The settings.
    #[must_use]
    pub fn config(&self) -> &OptimizerConfig {
        &self.config
    }
}

/// Sets every value of magnitude below [`FLUSH_BELOW`] to exactly zero, keeping each
/// tensor's id, autodiff and require-grad state (so the optimizer's moments still match).
///
/// Weight decay shrinks the weights that never get a gradient (the policy layer's weights
/// for moves no position allows) until they are subnormal, and x86 CPUs multiply subnormal
/// numbers through a slow microcode assist; the inference path flushes them when it folds
/// the network ([`crate::folded`]), this does the same for training. Measured on an Intel
/// Xeon (docs/research/strength.md): an iteration's 82 steps from a checkpoint carrying ~55,000
/// subnormal weights took 52–53 s instead of 56 s, with the same losses.
struct FlushTiny;

impl ModuleMapper for FlushTiny {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        param.map(|tensor| {
            let autodiff = tensor.is_autodiff();
            let require_grad = tensor.is_require_grad();
            // Masked on the inner backend: a masked autodiff tensor is not a leaf, and
            // only leaves can require a gradient.
            let inner = tensor.inner();
            let tiny = inner.clone().abs().lower_elem(FLUSH_BELOW);
            let mut flushed = inner.mask_fill(tiny, 0.0);
            if autodiff {
                flushed = flushed.autodiff();
            }
            if require_grad {
                flushed = flushed.require_grad();
            }
            flushed
        })
    }
}

fn read_stats(samples: usize, l: &Losses) -> StepStats {
    let scalar = |t: &Tensor<1>| t.clone().into_scalar::<f32>();
    StepStats {
        samples,
        policy_loss: scalar(&l.policy),
        value_loss: scalar(&l.value),
        moves_left_loss: l.moves_left.as_ref().map(scalar),
        total_loss: scalar(&l.total),
    }
}
