//! The network's weights as plain numbers with every batch norm folded into the
//! convolution before it: the one place batch norm is folded, and the source of both the
//! fast inference path ([`crate::FastNet::from_folded`]) and the ONNX export
//! ([`crate::onnx`]).
//!
//! Folding uses the running statistics, as inference does:
//! `w' = w·γ/√(σ²+ε)` and `b' = β + (b − μ)·γ/√(σ²+ε)`, computed in `f64`.
//!
//! ```
//! use brandubh_net::NetConfig;
//! use burn::tensor::Device;
//!
//! let model = NetConfig::new().with_channels(8).with_blocks(1).init(&Device::flex());
//! let folded = model.fold_batch_norm();
//! assert_eq!(folded.stem.weight.len(), 8 * 9 * 3 * 3);
//! assert_eq!(folded.blocks.len(), 1);
//! ```

use burn::module::Module;
use burn::nn::Linear;

use crate::model::{ConvBn, NetConfig, PolicyValueNet, tensor_to_vec};

/// A convolution with its batch norm folded in (a convolution with bias).
#[derive(Clone, Debug, PartialEq)]
pub struct FoldedConv {
    /// Output channels.
    pub cout: usize,
    /// Input channels.
    pub cin: usize,
    /// Kernel side (3 or 1); zero padding keeps the 7×7 board.
    pub kernel: usize,
    /// `[cout][cin][kernel][kernel]`, row-major (burn's and ONNX's layout).
    pub weight: Vec<f32>,
    /// `[cout]`.
    pub bias: Vec<f32>,
}

/// A linear layer `y = x·W + b`.
#[derive(Clone, Debug, PartialEq)]
pub struct FoldedLinear {
    /// Input width.
    pub inputs: usize,
    /// Output width.
    pub outputs: usize,
    /// `[inputs][outputs]`, row-major (burn's layout).
    pub weight: Vec<f32>,
    /// `[outputs]` (zeros for a layer without bias).
    pub bias: Vec<f32>,
}

/// A residual block: `relu(conv2(relu(conv1(x))) + x)`.
#[derive(Clone, Debug, PartialEq)]
pub struct FoldedBlock {
    /// First 3×3 convolution, then ReLU.
    pub conv1: FoldedConv,
    /// Second 3×3 convolution, + skip, then ReLU.
    pub conv2: FoldedConv,
}

/// [`PolicyValueNet`] for inference with its batch norms folded, as plain numbers; same
/// shapes and outputs up to rounding (see `model.rs` for the architecture).
#[derive(Clone, Debug, PartialEq)]
pub struct FoldedNet {
    /// The shape of the network.
    pub config: NetConfig,
    /// 3×3 conv `NUM_PLANES → C`, then ReLU.
    pub stem: FoldedConv,
    /// The residual tower.
    pub blocks: Vec<FoldedBlock>,
    /// 1×1 conv `C → Pc`, then ReLU.
    pub policy_conv: FoldedConv,
    /// `[Pc·49] → [1176]`: the policy logits.
    pub policy_fc: FoldedLinear,
    /// 1×1 conv `C → Vc`, then ReLU.
    pub value_conv: FoldedConv,
    /// `[Vc·49] → [H]`, then ReLU.
    pub value_fc1: FoldedLinear,
    /// `[H] → [1]`, then tanh: the value.
    pub value_fc2: FoldedLinear,
}

impl PolicyValueNet {
    /// The inference copy with every batch norm folded into the convolution before it
    /// (see the [`crate::folded`] module). Uses the running statistics, as inference does.
    #[must_use]
    pub fn fold_batch_norm(&self) -> FoldedNet {
        // `valid()` folds pending batch-norm running-statistics updates in (a model fresh
        // from training otherwise reports them one update late).
        let model = self.valid();
        FoldedNet {
            config: model.config(),
            stem: fold(&model.stem),
            blocks: model
                .blocks
                .iter()
                .map(|b| FoldedBlock {
                    conv1: fold(&b.conv1),
                    conv2: fold(&b.conv2),
                })
                .collect(),
            policy_conv: fold(&model.policy_conv),
            policy_fc: linear(&model.policy_fc),
            value_conv: fold(&model.value_conv),
            value_fc1: linear(&model.value_fc1),
            value_fc2: linear(&model.value_fc2),
        }
    }
}

/// Conv + batch norm → conv with bias.
fn fold(layer: &ConvBn) -> FoldedConv {
    let [cout, cin, kernel, _] = layer.conv.weight.dims();
    let w = tensor_to_vec(layer.conv.weight.val());
    let conv_bias = layer.conv.bias.as_ref().map(|b| tensor_to_vec(b.val()));
    let gamma = tensor_to_vec(layer.bn.gamma.val());
    let beta = tensor_to_vec(layer.bn.beta.val());
    let mean = tensor_to_vec(layer.bn.running_mean.value());
    let var = tensor_to_vec(layer.bn.running_var.value());
    let eps = layer.bn.epsilon;
    let per_out = cin * kernel * kernel;
    let mut weight = vec![0.0f32; w.len()];
    let mut bias = vec![0.0f32; cout];
    for co in 0..cout {
        let scale = f64::from(gamma[co]) / (f64::from(var[co]) + eps).sqrt();
        let cb = conv_bias.as_ref().map_or(0.0, |b| f64::from(b[co]));
        bias[co] = (f64::from(beta[co]) + (cb - f64::from(mean[co])) * scale) as f32;
        for i in co * per_out..(co + 1) * per_out {
            weight[i] = (f64::from(w[i]) * scale) as f32;
        }
    }
    FoldedConv {
        cout,
        cin,
        kernel,
        weight,
        bias,
    }
}

fn linear(layer: &Linear) -> FoldedLinear {
    let [inputs, outputs] = layer.weight.dims();
    FoldedLinear {
        inputs,
        outputs,
        weight: tensor_to_vec(layer.weight.val()),
        bias: layer
            .bias
            .as_ref()
            .map_or_else(|| vec![0.0; outputs], |b| tensor_to_vec(b.val())),
    }
}
