//! [`NetEvaluator`]: the search crate's [`Evaluator`] backed by the network.

use std::sync::Arc;

use brandubh_rules::{Move, Symmetry};
use brandubh_search::{Evaluation, Evaluator, Leaf};
use burn::module::Module;
use burn::tensor::Device;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::encoding::{self, POLICY_SIZE};
use crate::fast::FastNet;
use crate::model::PolicyValueNet;

/// Which forward pass an evaluator runs.
#[derive(Clone, Debug)]
enum Engine {
    /// The plain-Rust inference path (the fast one).
    Fast(Arc<FastNet>),
    /// burn's forward pass on some device (e.g. a GPU in a binary built with one).
    Burn(Box<BurnEngine>),
}

/// burn's model and the device it runs on.
#[derive(Clone, Debug)]
struct BurnEngine {
    model: PolicyValueNet,
    device: Device,
}

/// Which symmetry each leaf is evaluated under.
#[derive(Clone, Debug)]
enum SymmetryMode {
    Fixed(Symmetry),
    Random(Box<ChaCha8Rng>),
}

/// Evaluates batches of leaves with one forward pass: encodes each leaf (optionally under a
/// random symmetry), runs the network, and returns the softmax of the logits over the
/// leaf's legal moves only and the value from the side to move's view.
///
/// Each search thread owns its evaluator; the weights ([`FastNet`]) are shared through an
/// `Arc`.
///
/// ```
/// use std::sync::Arc;
/// use brandubh_net::{FastNet, NetConfig, NetEvaluator};
/// use brandubh_rules::Game;
/// use brandubh_search::{Evaluator, Leaf};
/// use burn::tensor::Device;
///
/// let model = NetConfig::new().with_channels(8).with_blocks(1).init(&Device::flex());
/// let mut eval = NetEvaluator::new(Arc::new(FastNet::from_model(&model)))
///     .with_random_symmetry(7);
/// let leaf = Leaf::from_game(&Game::default());
/// let out = eval.evaluate(&[leaf]);
/// assert_eq!(out[0].priors.len(), 24);
/// assert!((out[0].priors.iter().sum::<f32>() - 1.0).abs() < 1e-5);
/// ```
#[derive(Clone, Debug)]
pub struct NetEvaluator {
    engine: Engine,
    symmetry: SymmetryMode,
    /// Values of one encoded position for the network (`NetConfig::input_size`).
    input_size: usize,
    inputs: Vec<f32>,
    symmetries: Vec<Symmetry>,
    logits: Vec<f32>,
    values: Vec<f32>,
}

impl NetEvaluator {
    /// An evaluator on the fast inference path.
    #[must_use]
    pub fn new(net: Arc<FastNet>) -> NetEvaluator {
        NetEvaluator::with_engine(Engine::Fast(net))
    }

    /// An evaluator running burn's forward pass of `model` on `device`: inference mode
    /// (batch norm with its running statistics), moved to `device` without autodiff. On the
    /// CPU [`NetEvaluator::new`] is several times faster; this one is for a GPU device in a
    /// binary built with one.
    #[must_use]
    pub fn burn(model: &PolicyValueNet, device: &Device) -> NetEvaluator {
        let device = device.clone().without_autodiff();
        let model = model.valid().to_device(&device);
        NetEvaluator::with_engine(Engine::Burn(Box::new(BurnEngine { model, device })))
    }

    fn with_engine(engine: Engine) -> NetEvaluator {
        let input_size = match &engine {
            Engine::Fast(net) => net.input_size(),
            Engine::Burn(burn) => burn.model.config().input_size(),
        };
        NetEvaluator {
            engine,
            input_size,
            symmetry: SymmetryMode::Fixed(Symmetry::Identity),
            inputs: Vec::new(),
            symmetries: Vec::new(),
            logits: Vec::new(),
            values: Vec::new(),
        }
    }

    /// Evaluates each leaf under one of the 8 symmetries drawn at random from a generator
    /// seeded with `seed` (the priors are mapped back to the leaf's own moves).
    #[must_use]
    pub fn with_random_symmetry(mut self, seed: u64) -> NetEvaluator {
        self.symmetry = SymmetryMode::Random(Box::new(ChaCha8Rng::seed_from_u64(seed)));
        self
    }

    /// Evaluates every leaf under `sym` (`Symmetry::Identity` is the default).
    #[must_use]
    pub fn with_symmetry(mut self, sym: Symmetry) -> NetEvaluator {
        self.symmetry = SymmetryMode::Fixed(sym);
        self
    }
}

impl Evaluator for NetEvaluator {
    fn evaluate(&mut self, leaves: &[Leaf]) -> Vec<Evaluation> {
        let n = leaves.len();
        self.inputs.resize(n * self.input_size, 0.0);
        self.symmetries.clear();
        for (leaf, dst) in leaves
            .iter()
            .zip(self.inputs.chunks_exact_mut(self.input_size))
        {
            let sym = match &mut self.symmetry {
                SymmetryMode::Random(rng) => {
                    Symmetry::ALL[rng.random_range(0..Symmetry::ALL.len())]
                }
                SymmetryMode::Fixed(sym) => *sym,
            };
            self.symmetries.push(sym);
            encoding::encode_into(&sym.position(&leaf.position), leaf.repetitions, dst);
        }
        match &self.engine {
            Engine::Fast(net) => {
                self.logits.resize(n * POLICY_SIZE, 0.0);
                self.values.resize(n, 0.0);
                net.forward_into(&self.inputs, &mut self.logits, &mut self.values);
            }
            Engine::Burn(burn) => {
                (self.logits, self.values) = burn.model.infer(&self.inputs, &burn.device);
            }
        }
        leaves
            .iter()
            .enumerate()
            .map(|(i, leaf)| Evaluation {
                value: self.values[i],
                priors: legal_softmax(
                    &self.logits[i * POLICY_SIZE..(i + 1) * POLICY_SIZE],
                    &leaf.moves,
                    self.symmetries[i],
                ),
            })
            .collect()
    }
}

/// Softmax of `logits` (of the position seen under `sym`) over `moves` only, in `moves`
/// order.
#[must_use]
pub fn legal_softmax(logits: &[f32], moves: &[Move], sym: Symmetry) -> Vec<f32> {
    let mut priors: Vec<f32> = moves
        .iter()
        .map(|&mv| {
            encoding::policy_index(sym.mv(mv))
                .and_then(|i| logits.get(i).copied())
                .unwrap_or(f32::NEG_INFINITY)
        })
        .collect();
    let max = priors.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    if !max.is_finite() {
        // No usable logit: fall back to uniform rather than NaN.
        let u = 1.0 / moves.len().max(1) as f32;
        priors.fill(u);
        return priors;
    }
    let mut sum = 0.0;
    for p in &mut priors {
        *p = (*p - max).exp();
        sum += *p;
    }
    for p in &mut priors {
        *p /= sum;
    }
    priors
}
