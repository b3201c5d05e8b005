//! The policy-value residual network in burn.
//!
//! ```text
//! input            [B, P, 7, 7]   (P = 9, 12, 16 or 19: NetConfig::planes)
//! stem             3×3 conv → C, batch norm, ReLU             [B, C, 7, 7]
//! N × block        3×3 conv, BN, ReLU, 3×3 conv, BN, + skip, ReLU [B, C, 7, 7]
//! policy head      1×1 conv → Pc, BN, ReLU, flatten [B, Pc·49], linear → [B, 1176]
//! value head       1×1 conv → Vc, BN, ReLU, flatten [B, Vc·49], linear → H, ReLU,
//!                  linear → 1, tanh                             [B, 1]
//! moves-left head  (optional) 1×1 conv → Vc, BN, ReLU, flatten, linear → M, ReLU,
//!                  linear → 1                                   [B, 1]
//! ```
//!
//! The moves-left head (lc0's name) is an auxiliary training target: it learns the plies to
//! the game's end divided by [`MOVES_LEFT_SCALE`], sharing the tower with the other heads.
//! No inference path reads it: [`crate::FoldedNet`], [`crate::FastNet`] and the ONNX export
//! leave it out: it changes play only through what the shared tower learns from it.
//!
//! Code is generic over the device: the same model runs on `Device::flex()` (the default
//! CPU backend), on `Device::flex().autodiff()` for training, or on a GPU through wgpu where
//! the binary enables this crate's `gpu` feature ([`crate::device`]). This is the training model and
//! the reference the inference paths are tested against; inference on the CPU runs
//! [`crate::FastNet`], built from [`crate::FoldedNet`].

use burn::config::Config;
use burn::module::Module;
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::{BatchNorm, BatchNormConfig, Linear, LinearConfig, PaddingConfig2d};
use burn::tensor::activation::{relu, tanh};
use burn::tensor::{Device, Tensor, TensorData};

use crate::encoding::{
    self, BOARD_SIZE, NUM_PLANES, NUM_PLANES_WITH_ESCAPES, NUM_PLANES_WITH_KING,
    NUM_PLANES_WITH_THREATS, PLANE_SIZE, POLICY_SIZE,
};

/// Shape of the network. Checkpoints store it; a checkpoint only loads into a model of
/// the same config.
#[derive(Config, Debug, PartialEq, Eq)]
pub struct NetConfig {
    /// Channels of the stem and of every residual block (C).
    #[config(default = 32)]
    pub channels: usize,
    /// Number of residual blocks (N).
    #[config(default = 4)]
    pub blocks: usize,
    /// Channels of the policy head's 1×1 convolution.
    #[config(default = 2)]
    pub policy_channels: usize,
    /// Channels of the value head's 1×1 convolution.
    #[config(default = 2)]
    pub value_channels: usize,
    /// Width of the value head's hidden layer.
    #[config(default = 64)]
    pub value_hidden: usize,
    /// Width of the moves-left head's hidden layer; `None`: no moves-left head (every
    /// checkpoint and agent file written before the head existed says nothing, which reads
    /// as `None`).
    pub moves_left_hidden: Option<usize>,
    /// Input planes: `None` or 9, the basic layout; 12, with the King planes; 16, with the
    /// King and threat planes (`crate::encoding`). Every checkpoint and agent file written before the King planes
    /// existed says nothing, which reads as `None`.
    pub input_planes: Option<usize>,
}

/// The moves-left head learns `plies to the end / MOVES_LEFT_SCALE`: games last about 25
/// plies, so targets are mostly below 1.
pub const MOVES_LEFT_SCALE: f32 = 50.0;

impl Default for NetConfig {
    fn default() -> Self {
        NetConfig::new()
    }
}

impl NetConfig {
    /// Most channels (C) a loaded model may claim: the limits guard against absurd
    /// allocations from a corrupt or hostile file that names a model size.
    pub const MAX_CHANNELS: usize = 1024;
    /// Most residual blocks (N) a loaded model may claim.
    pub const MAX_BLOCKS: usize = 256;
    /// Most policy channels, value channels or value hidden units a loaded model may claim.
    pub const MAX_HEAD: usize = 4096;

    /// Checks that every size is positive and within [`NetConfig::MAX_CHANNELS`],
    /// [`NetConfig::MAX_BLOCKS`] and [`NetConfig::MAX_HEAD`]; the error says which sizes
    /// are implausible, on one line.
    pub fn check_limits(&self) -> Result<(), String> {
        if self.is_valid()
            && self.channels <= Self::MAX_CHANNELS
            && self.blocks <= Self::MAX_BLOCKS
            && self.policy_channels <= Self::MAX_HEAD
            && self.value_channels <= Self::MAX_HEAD
            && self.value_hidden <= Self::MAX_HEAD
            && self.moves_left_hidden.unwrap_or(1) <= Self::MAX_HEAD
        {
            return Ok(());
        }
        let moves_left = self
            .moves_left_hidden
            .map_or(String::new(), |m| format!("/{m}"));
        if !encoding::is_layout(self.planes()) {
            return Err(format!(
                "implausible model: {} input planes ({NUM_PLANES}, {NUM_PLANES_WITH_KING}, {NUM_PLANES_WITH_THREATS} or {NUM_PLANES_WITH_ESCAPES})",
                self.planes()
            ));
        }
        Err(format!(
            "implausible model: channels {}, blocks {}, heads {}/{}/{}{moves_left} (each at least 1; at most {}, {}, {})",
            self.channels,
            self.blocks,
            self.policy_channels,
            self.value_channels,
            self.value_hidden,
            Self::MAX_CHANNELS,
            Self::MAX_BLOCKS,
            Self::MAX_HEAD
        ))
    }

    /// Input planes a position is encoded into for this network (`crate::encoding`).
    #[must_use]
    pub fn planes(&self) -> usize {
        self.input_planes.unwrap_or(NUM_PLANES)
    }

    /// `f32` values of one encoded position for this network: `planes() * 49`.
    #[must_use]
    pub fn input_size(&self) -> usize {
        self.planes() * PLANE_SIZE
    }

    /// This config with an input layout of `planes` planes (one of [`encoding::LAYOUTS`];
    /// [`encoding::layout`] names them by their flags), written the one way a model reads
    /// back (see [`PolicyValueNet::config`]): the basic layout as `None`, any other as
    /// `Some(planes)`. A number that is no layout makes the config implausible
    /// ([`NetConfig::check_limits`] names it).
    #[must_use]
    pub fn with_planes(mut self, planes: usize) -> NetConfig {
        self.input_planes = (planes != NUM_PLANES).then_some(planes);
        self
    }

    /// A model with freshly initialised weights on `device`.
    ///
    /// # Panics
    /// If a size is zero.
    #[must_use]
    pub fn init(&self, device: &Device) -> PolicyValueNet {
        assert!(self.is_valid(), "network sizes must be positive: {self:?}");
        let c = self.channels;
        PolicyValueNet {
            stem: ConvBn::new(self.planes(), c, 3, device),
            blocks: (0..self.blocks)
                .map(|_| ResBlock {
                    conv1: ConvBn::new(c, c, 3, device),
                    conv2: ConvBn::new(c, c, 3, device),
                })
                .collect(),
            policy_conv: ConvBn::new(c, self.policy_channels, 1, device),
            policy_fc: LinearConfig::new(self.policy_channels * PLANE_SIZE, POLICY_SIZE)
                .init(device),
            value_conv: ConvBn::new(c, self.value_channels, 1, device),
            value_fc1: LinearConfig::new(self.value_channels * PLANE_SIZE, self.value_hidden)
                .init(device),
            value_fc2: LinearConfig::new(self.value_hidden, 1).init(device),
            moves_left: self.moves_left_hidden.map(|m| MovesLeftHead {
                conv: ConvBn::new(c, self.value_channels, 1, device),
                fc1: LinearConfig::new(self.value_channels * PLANE_SIZE, m).init(device),
                fc2: LinearConfig::new(m, 1).init(device),
            }),
        }
    }

    /// Whether every size is positive and the input planes are a layout the encoder writes
    /// (what [`NetConfig::init`] requires).
    #[must_use]
    pub fn is_valid(&self) -> bool {
        self.channels > 0
            && self.policy_channels > 0
            && self.value_channels > 0
            && self.value_hidden > 0
            && self.moves_left_hidden != Some(0)
            && encoding::is_layout(self.planes())
    }

    /// Multiply-adds × 2 of one position's forward pass (convolutions and linear layers).
    /// The moves-left head is left out: no inference path computes it.
    #[must_use]
    pub fn flops_per_position(&self) -> u64 {
        let (c, sq) = (self.channels as u64, PLANE_SIZE as u64);
        let conv = |cin: u64, cout: u64, k: u64| 2 * sq * cin * cout * k * k;
        let mut f = conv(self.planes() as u64, c, 3) + self.blocks as u64 * 2 * conv(c, c, 3);
        let (pc, vc, h) = (
            self.policy_channels as u64,
            self.value_channels as u64,
            self.value_hidden as u64,
        );
        f += conv(c, pc, 1) + 2 * pc * sq * POLICY_SIZE as u64;
        f += conv(c, vc, 1) + 2 * vc * sq * h + 2 * h;
        f
    }
}

/// A convolution without bias followed by batch norm (the norm's shift is the bias).
#[derive(Module, Debug)]
pub struct ConvBn {
    /// Weight `[out, in, k, k]`, zero padding keeps 7×7.
    pub conv: Conv2d,
    /// Per-output-channel batch norm.
    pub bn: BatchNorm,
}

impl ConvBn {
    fn new(cin: usize, cout: usize, kernel: usize, device: &Device) -> ConvBn {
        let pad = kernel / 2;
        ConvBn {
            conv: Conv2dConfig::new([cin, cout], [kernel, kernel])
                .with_padding(PaddingConfig2d::Explicit(pad, pad, pad, pad))
                .with_bias(false)
                .init(device),
            bn: BatchNormConfig::new(cout).init(device),
        }
    }

    /// `[B, in, 7, 7]` → `[B, out, 7, 7]` (no activation).
    pub fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        self.bn.forward(self.conv.forward(x))
    }
}

/// Two 3×3 conv + BN layers with a skip connection.
#[derive(Module, Debug)]
pub struct ResBlock {
    /// First convolution (followed by ReLU).
    pub conv1: ConvBn,
    /// Second convolution (its output is added to the block's input, then ReLU).
    pub conv2: ConvBn,
}

impl ResBlock {
    /// `[B, C, 7, 7]` → `[B, C, 7, 7]`.
    pub fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        let y = relu(self.conv1.forward(x.clone()));
        relu(self.conv2.forward(y) + x)
    }
}

/// The policy-value network. Build it with [`NetConfig::init`]; `model.valid()` gives the
/// inference copy of a model being trained on an autodiff device.
#[derive(Module, Debug)]
pub struct PolicyValueNet {
    /// 3×3 conv `planes → C` + BN (9 planes, or 12 with the King planes).
    pub stem: ConvBn,
    /// The residual tower.
    pub blocks: Vec<ResBlock>,
    /// 1×1 conv `C → Pc` + BN.
    pub policy_conv: ConvBn,
    /// `[Pc·49] → [1176]`.
    pub policy_fc: Linear,
    /// 1×1 conv `C → Vc` + BN.
    pub value_conv: ConvBn,
    /// `[Vc·49] → [H]`.
    pub value_fc1: Linear,
    /// `[H] → [1]`.
    pub value_fc2: Linear,
    /// The auxiliary moves-left head, when the config has one.
    pub moves_left: Option<MovesLeftHead>,
}

/// The moves-left head: plies to the game's end / [`MOVES_LEFT_SCALE`], from the tower.
#[derive(Module, Debug)]
pub struct MovesLeftHead {
    /// 1×1 conv `C → Vc` + BN (its own, not the value head's).
    pub conv: ConvBn,
    /// `[Vc·49] → [M]`.
    pub fc1: Linear,
    /// `[M] → [1]`, no activation.
    pub fc2: Linear,
}

/// What the network says about a batch.
#[derive(Debug)]
pub struct NetOutput {
    /// Policy logits `[B, 1176]` (not masked: mask illegal moves before a softmax).
    pub policy_logits: Tensor<2>,
    /// Values `[B, 1]` in (-1, 1), from the side to move's view.
    pub value: Tensor<2>,
    /// Predicted plies to the end / [`MOVES_LEFT_SCALE`] `[B, 1]`, when the model has a
    /// moves-left head.
    pub moves_left: Option<Tensor<2>>,
}

impl PolicyValueNet {
    /// Forward pass: planes `[B, P, 7, 7]` (P = [`NetConfig::planes`]) → logits `[B, 1176]`, values `[B, 1]` and, with
    /// a moves-left head, its predictions `[B, 1]`.
    pub fn forward(&self, input: Tensor<4>) -> NetOutput {
        let mut x = relu(self.stem.forward(input)); // [B, C, 7, 7]
        for block in &self.blocks {
            x = block.forward(x); // [B, C, 7, 7]
        }
        let p = relu(self.policy_conv.forward(x.clone())); // [B, Pc, 7, 7]
        let policy_logits = self.policy_fc.forward(p.flatten::<2>(1, 3)); // [B, 1176]
        let moves_left = self.moves_left.as_ref().map(|head| {
            let m = relu(head.conv.forward(x.clone())); // [B, Vc, 7, 7]
            let m = relu(head.fc1.forward(m.flatten::<2>(1, 3))); // [B, M]
            head.fc2.forward(m) // [B, 1]
        });
        let v = relu(self.value_conv.forward(x)); // [B, Vc, 7, 7]
        let v = relu(self.value_fc1.forward(v.flatten::<2>(1, 3))); // [B, H]
        let value = tanh(self.value_fc2.forward(v)); // [B, 1]
        NetOutput {
            policy_logits,
            value,
            moves_left,
        }
    }

    /// The config this model was built with, read back from its weight shapes.
    #[must_use]
    pub fn config(&self) -> NetConfig {
        let [c, planes, ..] = self.stem.conv.weight.dims();
        let [pc, ..] = self.policy_conv.conv.weight.dims();
        let [vc, ..] = self.value_conv.conv.weight.dims();
        let [_, h] = self.value_fc1.weight.dims();
        NetConfig {
            channels: c,
            blocks: self.blocks.len(),
            policy_channels: pc,
            value_channels: vc,
            value_hidden: h,
            moves_left_hidden: self
                .moves_left
                .as_ref()
                .map(|head| head.fc1.weight.dims()[1]),
            input_planes: None,
        }
        .with_planes(planes)
    }

    /// Runs the network on `n` encoded positions (`inputs.len() == n * input_size`, the
    /// config's [`NetConfig::input_size`]) and
    /// copies the results out: `(logits [n·1176], values [n])`. Uses the model's device.
    ///
    /// # Panics
    /// If `inputs.len()` is not a multiple of the input size.
    #[must_use]
    pub fn infer(&self, inputs: &[f32], device: &Device) -> (Vec<f32>, Vec<f32>) {
        let planes = self.stem.conv.weight.dims()[1];
        let out = self.forward(input_tensor(inputs, planes, device));
        (tensor_to_vec(out.policy_logits), tensor_to_vec(out.value))
    }
}

/// `[n, planes, 7, 7]` from `n` encoded positions.
fn input_tensor(inputs: &[f32], planes: usize, device: &Device) -> Tensor<4> {
    let n = inputs.len() / (planes * PLANE_SIZE);
    assert_eq!(
        n * planes * PLANE_SIZE,
        inputs.len(),
        "inputs must hold whole positions"
    );
    Tensor::<4>::from_data(
        TensorData::new(inputs.to_vec(), [n, planes, BOARD_SIZE, BOARD_SIZE]),
        device,
    )
}

/// The values of a float tensor, in row-major order.
pub(crate) fn tensor_to_vec<const D: usize>(t: Tensor<D>) -> Vec<f32> {
    t.into_data_as::<f32>()
        .try_into_vec::<f32>()
        .unwrap_or_else(|e| unreachable!("a float tensor converts to f32: {e:?}"))
}
