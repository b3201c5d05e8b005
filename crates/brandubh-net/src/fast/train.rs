//! The training step in plain Rust: the same network, losses and optimizer as
//! [`crate::optimize::Trainer`] (burn's autodiff), on the fast path's kernels.
//!
//! - Forward with batch norm in training mode: every convolution's raw output is kept, its
//!   batch's mean and (biased) variance computed over all positions and squares (each
//!   position's squared deviations from its own mean, then the spread of those means, so
//!   that a large mean costs no precision), then normalised, ReLU'd, added to the skip connection; the running statistics move by
//!   burn's momentum (0.1).
//! - Every 3×3 convolution (the stem's too, its planes padded to 16) runs as Winograd
//!   F(4×4, 3×3) ([`super::winograd`]) three times: forward, input gradient (the same
//!   convolution with every kernel turned half a turn and the channels swapped), and weight
//!   gradient (`Gᵀ [(A dY Aᵀ) ⊙ (Bᵀ X B)] G` summed over tiles: 36 transposed matrix products
//!   over the batch's tiles).
//! - The losses as [`crate::optimize::losses`] computes them: cross-entropy of the target
//!   policy against the softmax over the legal moves, value MSE after tanh, moves-left MSE,
//!   weighted; the optimizer's weight decay is the L2 term.
//! - Adam or SGD with momentum as burn's, element by element in `f32` in burn's order of
//!   operations, fused with the flush of weights below [`FLUSH_BELOW`] to zero.
//!
//! The batch is split evenly over threads (rayon's pool size by default), each running the
//! whole step over its positions ([`step`]); they meet at each batch norm to add up its
//! sums. Gradients are checked against burn's autodiff in the tests
//! (`tests/fast_train.rs`), for every input layout, with and without the moves-left head.
//!
//! The weights live in one flat buffer in burn's layouts and visiting order
//! ([`Slot`]), so that converting to and from a burn model and its optimizer state (done by
//! [`crate::optimize::Engine`]) is a copy per tensor.

use pulp::Arch;
use rayon::prelude::*;

use super::winograd::{self, INPUT_ALIGN, WinogradConv};
use super::{ArchDebug, Dense, Lanes, SimdLevel, block_width, channel_align, round_up};
use crate::encoding::{PLANE_SIZE, POLICY_SIZE};
use crate::folded::{FLUSH_BELOW, FoldedConv, FoldedLinear};
use crate::model::NetConfig;
use crate::optimize::{OptimizerConfig, OptimizerKind, StepStats};

mod layout;
mod step;

pub use layout::Slot;
use layout::{ConvBnAt, Layout};
use step::{HeadPrep, LossWeights, Prepared, Shared, Task, Worker};

/// Batch norm's ε and momentum: burn's defaults, which [`NetConfig::init`] uses.
const BN_EPSILON: f64 = 1e-5;
const BN_MOMENTUM: f64 = 0.1;
/// Adam's constants: burn's defaults, which [`OptimizerConfig::optimizer`] uses.
const BETA_1: f32 = 0.9;
const BETA_2: f32 = 0.999;
const ADAM_EPSILON: f32 = 1e-5;

/// A training batch as plain numbers (what [`crate::optimize::BatchBuilder`] collects).
#[derive(Clone, Copy, Debug)]
pub struct TrainBatch<'a> {
    /// Input planes `[B][P][49]`.
    pub inputs: &'a [f32],
    /// Target distributions `[B][1176]`, zero outside the legal moves.
    pub policy: &'a [f32],
    /// The legal moves `[B][1176]`.
    pub legal: &'a [bool],
    /// Value targets `[B]`.
    pub values: &'a [f32],
    /// Moves-left targets `[B]`, when every sample has one.
    pub moves_left: Option<&'a [f32]>,
}

impl TrainBatch<'_> {
    /// Number of samples (one value target each).
    #[must_use]
    pub fn samples(&self) -> usize {
        self.values.len()
    }
}

/// The optimizer's state, laid out like the weights.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OptimizerState {
    /// Updates of each slot's tensor so far (0: no state yet), indexed by slot (running
    /// statistics stay 0).
    pub time: Vec<usize>,
    /// Adam's first moment, or SGD's velocity.
    pub first: Vec<f32>,
    /// Adam's second moment (unused by SGD).
    pub second: Vec<f32>,
}

/// A model being trained on the fast path (see the module documentation).
#[derive(Debug)]
pub struct FastTrainer {
    config: NetConfig,
    optimizer: OptimizerConfig,
    layout: Layout,
    weights: Vec<f32>,
    running: Vec<f32>,
    state: OptimizerState,
    steps: u64,
    level: SimdLevel,
    arch: ArchDebug,
    threads: Option<usize>,
    workers: Vec<Worker>,
    grads: Vec<f32>,
}

impl FastTrainer {
    /// A trainer of a `config` network with these weights and running statistics (in the
    /// order and layouts of [`FastTrainer::slots`]), optimizer state and step count, on the
    /// best kernels this CPU has. The error says which length does not fit.
    pub fn new(
        config: &NetConfig,
        optimizer: OptimizerConfig,
        weights: Vec<f32>,
        running: Vec<f32>,
        state: OptimizerState,
        steps: u64,
    ) -> Result<FastTrainer, String> {
        config.check_limits()?;
        let layout = Layout::new(config);
        let slots = layout.slots.len();
        let fits = weights.len() == layout.weights
            && running.len() == layout.running
            && state.time.len() == slots
            && state.first.len() == layout.weights
            && (state.second.len() == layout.weights
                || matches!(optimizer.optimizer, OptimizerKind::Sgd { .. }));
        if !fits {
            return Err(format!(
                "the fast trainer's buffers do not fit the model: {} weights, {} running statistics and {} slots expected",
                layout.weights, layout.running, slots
            ));
        }
        let level = SimdLevel::detect();
        Ok(FastTrainer {
            config: config.clone(),
            optimizer,
            grads: vec![0.0; layout.weights],
            layout,
            weights,
            running,
            state,
            steps,
            level,
            arch: ArchDebug(level.arch().unwrap_or(Arch::Scalar)),
            threads: None,
            workers: Vec::new(),
        })
    }

    /// The network's tensors: names, shapes, and where each lies in [`FastTrainer::weights`]
    /// or [`FastTrainer::running`].
    #[must_use]
    pub fn slots(&self) -> &[Slot] {
        &self.layout.slots
    }

    /// Every tensor of `config`'s network, as [`FastTrainer::slots`] lists them.
    #[must_use]
    pub fn slots_of(config: &NetConfig) -> Vec<Slot> {
        Layout::new(config).slots
    }

    /// The trainable weights.
    #[must_use]
    pub fn weights(&self) -> &[f32] {
        &self.weights
    }

    /// The batch norms' running statistics.
    #[must_use]
    pub fn running(&self) -> &[f32] {
        &self.running
    }

    /// The optimizer's state.
    #[must_use]
    pub fn optimizer_state(&self) -> &OptimizerState {
        &self.state
    }

    /// The gradient of the last step's loss (weight decay not included), laid out like the
    /// weights.
    #[must_use]
    pub fn gradients(&self) -> &[f32] {
        &self.grads
    }

    /// The network's config.
    #[must_use]
    pub fn config(&self) -> &NetConfig {
        &self.config
    }

    /// The optimizer's settings.
    #[must_use]
    pub fn optimizer(&self) -> &OptimizerConfig {
        &self.optimizer
    }

    /// Optimizer steps behind the weights.
    #[must_use]
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// The instruction set the kernels use.
    #[must_use]
    pub fn simd_level(&self) -> SimdLevel {
        self.level
    }

    /// The same trainer on the kernels of `level`; `None` if this CPU does not have it.
    #[must_use]
    pub fn with_simd_level(mut self, level: SimdLevel) -> Option<FastTrainer> {
        self.arch = ArchDebug(level.arch()?);
        self.level = level;
        Some(self)
    }

    /// Runs each step on `threads` threads (default: the size of rayon's current pool).
    #[must_use]
    pub fn with_threads(mut self, threads: usize) -> FastTrainer {
        self.threads = Some(threads.max(1));
        self
    }

    /// One optimizer step on `batch` with learning rate `lr`; returns the losses before the
    /// step. After the step every weight of magnitude below [`FLUSH_BELOW`] is zero.
    ///
    /// # Panics
    /// If the batch is empty or its arrays do not agree with each other and the network.
    pub fn step(&mut self, batch: &TrainBatch<'_>, lr: f64) -> StepStats {
        let b = batch.samples();
        let planes = self.config.planes();
        assert!(b > 0, "an empty batch");
        assert_eq!(batch.inputs.len(), b * planes * PLANE_SIZE, "input planes");
        assert_eq!(batch.policy.len(), b * POLICY_SIZE, "policy targets");
        assert_eq!(batch.legal.len(), b * POLICY_SIZE, "legal moves");
        assert!(
            batch.moves_left.is_none_or(|m| m.len() == b),
            "moves-left targets"
        );
        let prep = self.prepare();
        let threads = self
            .threads
            .unwrap_or_else(rayon::current_num_threads)
            .clamp(1, b);
        if self.workers.len() < threads {
            self.workers.resize_with(threads, Worker::default);
        }
        let shared = Shared::new(threads, 2 * self.layout.batch_norms().len());
        let weights = LossWeights {
            value: self.optimizer.value_weight,
            moves_left: self.optimizer.moves_left_weight,
        };
        let arch = self.arch.0;
        std::thread::scope(|scope| {
            let (prep, shared) = (&prep, &shared);
            let mut first = None;
            for (t, worker) in self.workers.iter_mut().take(threads).enumerate() {
                let (lo, hi) = (t * b / threads, (t + 1) * b / threads);
                let task = move || {
                    worker.prepare(prep, hi - lo);
                    arch.dispatch(Task {
                        prep,
                        shared,
                        worker,
                        t,
                        batch,
                        lo,
                        hi,
                        weights,
                    });
                };
                if t == 0 {
                    first = Some(task);
                } else {
                    scope.spawn(task);
                }
            }
            if let Some(mut task) = first {
                task();
            }
        });
        let moves_left = batch.moves_left.is_some() && self.config.moves_left_hidden.is_some();
        self.collect_gradients(&prep, threads, moves_left);
        self.update_running(&prep);
        self.update_weights(lr, moves_left);
        self.steps += 1;
        self.stats(b, threads, moves_left)
    }

    /// The losses of the step just run, from the workers' sums.
    fn stats(&self, b: usize, threads: usize, moves_left: bool) -> StepStats {
        let mut sums = [0.0f64; 3];
        for w in &self.workers[..threads] {
            for (s, l) in sums.iter_mut().zip(w.losses) {
                *s += l;
            }
        }
        let mean = |s: f64| (s / b as f64) as f32;
        let (policy, value) = (mean(sums[0]), mean(sums[1]));
        let moves_left_loss = moves_left.then(|| mean(sums[2]));
        let mut total = policy + value * self.optimizer.value_weight;
        if let Some(m) = moves_left_loss {
            total += m * self.optimizer.moves_left_weight;
        }
        StepStats {
            samples: b,
            policy_loss: policy,
            value_loss: value,
            moves_left_loss,
            total_loss: total,
        }
    }

    /// The weights of this step packed for the kernels.
    fn prepare(&self) -> Prepared {
        let block = block_width(self.arch.0.dispatch(Lanes), self.config.channels);
        let cp = round_up(self.config.channels, channel_align(block));
        let planes = self.config.planes();
        let cs = round_up(planes, INPUT_ALIGN);
        let convs: Vec<ConvBnAt> = self.layout.convs();
        let w = &self.weights;
        let tensor = |at: usize, len: usize| w[at..at + len].to_vec();
        let conv = |c: &ConvBnAt| FoldedConv {
            cout: c.cout,
            cin: c.cin,
            kernel: 3,
            weight: tensor(c.w, c.cout * c.cin * 9),
            bias: vec![0.0; c.cout],
        };
        // The heads' linear layers (the policy's is the largest layer) are packed while the
        // convolutions are.
        let (forward, heads) = rayon::join(
            || -> Vec<WinogradConv> {
                convs
                    .par_iter()
                    .enumerate()
                    .map(|(l, c)| {
                        WinogradConv::new(&conv(c), if l == 0 { cs } else { cp }, cp, block)
                    })
                    .collect()
            },
            || -> Vec<HeadPrep> {
                self.layout
                    .heads
                    .iter()
                    .map(|h| self.head(h, cp, block))
                    .collect()
            },
        );
        let back = convs
            .par_iter()
            .enumerate()
            .map(|(l, c)| {
                (l > 0).then(|| {
                    let t = FoldedConv {
                        cout: c.cin,
                        cin: c.cout,
                        kernel: 3,
                        weight: winograd::transposed(
                            &w[c.w..c.w + c.cout * c.cin * 9],
                            c.cout,
                            c.cin,
                        ),
                        bias: vec![0.0; c.cin],
                    };
                    WinogradConv::new(&t, cp, cp, block)
                })
            })
            .collect();
        let padded = |at: usize, len: usize, to: usize| {
            let mut v = tensor(at, len);
            v.resize(to, 0.0);
            v
        };
        let bn = self
            .layout
            .batch_norms()
            .iter()
            .enumerate()
            .map(|(l, c)| {
                let to = if l < convs.len() { cp } else { c.cout };
                (padded(c.gamma, c.cout, to), padded(c.beta, c.cout, to))
            })
            .collect();
        Prepared {
            cp,
            cs,
            planes,
            convs: forward,
            back,
            bn,
            epsilon: BN_EPSILON,
            heads,
        }
    }

    /// A head's weights packed for the kernels.
    fn head(&self, h: &layout::HeadAt, cp: usize, block: usize) -> HeadPrep {
        let w = &self.weights;
        let (hc, c) = (h.conv.cout, h.conv.cin);
        let mut conv = vec![0.0f32; hc * cp];
        for o in 0..hc {
            conv[o * cp..o * cp + c].copy_from_slice(&w[h.conv.w + o * c..h.conv.w + (o + 1) * c]);
        }
        let f = h.fc1;
        let weight = w[f.w..f.w + f.inputs * f.outputs].to_vec();
        let mut transposed = vec![0.0f32; weight.len()];
        for i in 0..f.inputs {
            for j in 0..f.outputs {
                transposed[j * f.inputs + i] = weight[i * f.outputs + j];
            }
        }
        let fc1 = Dense::new(
            &FoldedLinear {
                inputs: f.inputs,
                outputs: f.outputs,
                weight,
                bias: w[f.b..f.b + f.outputs].to_vec(),
            },
            block,
        );
        let fc1_t = Dense::new(
            &FoldedLinear {
                inputs: f.outputs,
                outputs: f.inputs,
                weight: transposed,
                bias: vec![0.0; f.inputs],
            },
            block,
        );
        HeadPrep {
            hc,
            conv,
            fc1,
            fc1_t,
            fc2: h.fc2.map(|l| (w[l.w..l.w + l.inputs].to_vec(), w[l.b])),
        }
    }

    /// The gradient of every weight from the workers' parts (in thread order).
    fn collect_gradients(&mut self, prep: &Prepared, threads: usize, moves_left: bool) {
        self.grads.fill(0.0);
        let workers = &self.workers[..threads];
        let cp = prep.cp;
        let grads = &mut self.grads;
        let convs = self.layout.convs();
        // The convolutions' gradients back from the Winograd domain, in parallel (the rest of
        // this function is copies).
        let kernels: Vec<Vec<f32>> = convs
            .par_iter()
            .enumerate()
            .map(|(l, c)| {
                let mut acc = workers[0].conv_acc[l].clone();
                for w in &workers[1..] {
                    add(&mut acc, &w.conv_acc[l]);
                }
                winograd::kernel_grad(&acc, prep.convs[l].cin(), cp, c.cout, c.cin)
            })
            .collect();
        for (c, g) in convs.iter().zip(&kernels) {
            grads[c.w..c.w + g.len()].copy_from_slice(g);
        }
        for (l, c) in self.layout.batch_norms().iter().enumerate() {
            let bn = &workers[0].bn[l];
            if bn.dgamma.is_empty() {
                continue;
            }
            for ch in 0..c.cout {
                grads[c.gamma + ch] = bn.dgamma[ch] as f32;
                grads[c.beta + ch] = bn.dbeta[ch] as f32;
            }
        }
        for (i, h) in self.layout.heads.iter().enumerate() {
            if i == 2 && !moves_left {
                continue;
            }
            let sum = |get: &dyn Fn(&Worker) -> &Vec<f32>| {
                let mut acc = get(&workers[0]).clone();
                for w in &workers[1..] {
                    add(&mut acc, get(w));
                }
                acc
            };
            let conv_w = sum(&|w| &w.heads[i].conv_w);
            let (hc, c) = (h.conv.cout, h.conv.cin);
            for o in 0..hc {
                grads[h.conv.w + o * c..h.conv.w + (o + 1) * c]
                    .copy_from_slice(&conv_w[o * cp..o * cp + c]);
            }
            let f = h.fc1;
            let np = prep.heads[i].fc1.np;
            let fc1_w = sum(&|w| &w.heads[i].fc1_w);
            for r in 0..f.inputs {
                grads[f.w + r * f.outputs..f.w + (r + 1) * f.outputs]
                    .copy_from_slice(&fc1_w[r * np..r * np + f.outputs]);
            }
            let fc1_b = sum(&|w| &w.heads[i].fc1_b);
            grads[f.b..f.b + f.outputs].copy_from_slice(&fc1_b[..f.outputs]);
            if let Some(l2) = h.fc2 {
                let fc2_w = sum(&|w| &w.heads[i].fc2_w);
                grads[l2.w..l2.w + l2.inputs].copy_from_slice(&fc2_w[..l2.inputs]);
                grads[l2.b] = workers.iter().map(|w| w.heads[i].fc2_b).sum::<f64>() as f32;
            }
        }
    }

    /// The running statistics after this step's batch, as burn's batch norm moves them.
    fn update_running(&mut self, prep: &Prepared) {
        let _ = prep;
        let keep = (1.0 - BN_MOMENTUM) as f32;
        let take = BN_MOMENTUM as f32;
        for (l, c) in self.layout.batch_norms().iter().enumerate() {
            let bn = &self.workers[0].bn[l];
            for ch in 0..c.cout {
                let m = &mut self.running[c.mean + ch];
                *m = *m * keep + (bn.mean[ch] as f32) * take;
                let v = &mut self.running[c.var + ch];
                *v = *v * keep + (bn.var[ch] as f32) * take;
            }
        }
    }

    /// The optimizer's update of every weight that got a gradient, then the flush of tiny
    /// weights to zero.
    fn update_weights(&mut self, lr: f64, moves_left: bool) {
        let skip = if moves_left {
            0..0
        } else {
            self.layout.moves_left_slots()
        };
        let lr = lr as f32;
        let decay = self.optimizer.weight_decay;
        for (s, slot) in self.layout.slots.iter().enumerate() {
            if !slot.trainable || skip.contains(&s) {
                continue;
            }
            let r = slot.range();
            self.state.time[s] += 1;
            let time = self.state.time[s];
            let w = &mut self.weights[r.clone()];
            let g = &self.grads[r.clone()];
            match self.optimizer.optimizer {
                OptimizerKind::Adam => adam(
                    w,
                    g,
                    &mut self.state.first[r.clone()],
                    &mut self.state.second[r],
                    time,
                    lr,
                    decay,
                ),
                OptimizerKind::Sgd { momentum } => sgd(
                    w,
                    g,
                    &mut self.state.first[r],
                    time == 1,
                    momentum as f32,
                    lr,
                    decay,
                ),
            }
        }
    }
}

/// `acc += x`.
fn add(acc: &mut [f32], x: &[f32]) {
    for (a, x) in acc.iter_mut().zip(x) {
        *a += x;
    }
}

/// Sets a weight below [`FLUSH_BELOW`] in magnitude to zero.
#[inline(always)]
fn flushed(w: f32) -> f32 {
    if w.abs() < FLUSH_BELOW { 0.0 } else { w }
}

/// burn's Adam (with its L2 weight decay) on one tensor at update `time` (from 1), in
/// burn's order of `f32` operations.
fn adam(
    w: &mut [f32],
    g: &[f32],
    m1: &mut [f32],
    m2: &mut [f32],
    time: usize,
    lr: f32,
    decay: f32,
) {
    let t = i32::try_from(time).unwrap_or(i32::MAX);
    let bias_correction2_sqrt = (1.0 - BETA_2.powi(t)).sqrt();
    let combined = bias_correction2_sqrt / (1.0 - BETA_1.powi(t));
    let epsilon = ADAM_EPSILON * bias_correction2_sqrt;
    let (f1, f2) = (1.0 - BETA_1, 1.0 - BETA_2);
    for (((w, &g), m1), m2) in w.iter_mut().zip(g).zip(m1).zip(m2) {
        let g = if decay > 0.0 { *w * decay + g } else { g };
        *m1 = *m1 * BETA_1 + g * f1;
        *m2 = *m2 * BETA_2 + g * g * f2;
        let step = *m1 * combined / (m2.sqrt() + epsilon) * lr;
        *w = flushed(*w - step);
    }
}

/// burn's SGD with momentum (dampening 0) and L2 weight decay on one tensor.
fn sgd(
    w: &mut [f32],
    g: &[f32],
    velocity: &mut [f32],
    first: bool,
    momentum: f32,
    lr: f32,
    decay: f32,
) {
    for ((w, &g), v) in w.iter_mut().zip(g).zip(velocity) {
        let g = if decay > 0.0 { *w * decay + g } else { g };
        *v = if first { g } else { g * 1.0 + *v * momentum };
        *w = flushed(*w - *v * lr);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The layout lists burn's tensors in burn's visiting order with burn's shapes (checked
    /// against a burn model by `tests/fast_train.rs`); here: sizes add up.
    #[test]
    fn the_layout_adds_up() {
        let config = NetConfig::new().with_moves_left_hidden(Some(16));
        let layout = Layout::new(&config);
        let weights: usize = layout
            .slots
            .iter()
            .filter(|s| s.trainable)
            .map(Slot::len)
            .sum();
        let running: usize = layout
            .slots
            .iter()
            .filter(|s| !s.trainable)
            .map(Slot::len)
            .sum();
        assert_eq!(weights, layout.weights);
        assert_eq!(running, layout.running);
        assert_eq!(layout.heads.len(), 3);
        assert_eq!(layout.batch_norms().len(), 1 + 2 * 4 + 3);
    }
}
