//! The network's weights as plain numbers with every batch norm folded into the
//! convolution before it: the one place batch norm is folded, and the source of both the
//! fast inference path ([`crate::FastNet::from_folded`]) and the ONNX export
//! ([`crate::onnx`]).
//!
//! Folding uses the running statistics, as inference does:
//! `w' = w·γ/√(σ²+ε)` and `b' = β + (b − μ)·γ/√(σ²+ε)`, computed in `f64`.
//!
//! Every folded weight and bias of magnitude below [`FLUSH_BELOW`] is stored as exactly
//! zero. Weight decay shrinks the weights that never get a gradient (the policy layer's
//! weights for moves no position allows) until they are subnormal, and x86 CPUs multiply
//! subnormal numbers through a slow microcode assist: on the Intel Xeon of the later runs,
//! self-play's network evaluations per second halved from the 45th iteration of a 48×5
//! run on, as those weights crossed 2⁻¹²⁶ (docs/research/strength.md). A weight below 10⁻³⁰ times
//! any activation the network makes is more than twenty orders of magnitude below an
//! output's rounding step, so flushing it changes no output.
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

/// Folded weights and biases smaller in magnitude than this are stored as zero (see the
/// module documentation): it keeps subnormal numbers, which x86 CPUs multiply slowly, out
/// of inference.
pub const FLUSH_BELOW: f32 = 1e-30;

/// Sets every value of magnitude below [`FLUSH_BELOW`] to exactly zero.
fn flush_tiny(values: &mut [f32]) {
    for v in values {
        if v.abs() < FLUSH_BELOW {
            *v = 0.0;
        }
    }
}

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
    /// 3×3 conv `planes → C` (`config.planes()`), then ReLU.
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
    flush_tiny(&mut weight);
    flush_tiny(&mut bias);
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
    let mut weight = tensor_to_vec(layer.weight.val());
    let mut bias = layer
        .bias
        .as_ref()
        .map_or_else(|| vec![0.0; outputs], |b| tensor_to_vec(b.val()));
    flush_tiny(&mut weight);
    flush_tiny(&mut bias);
    FoldedLinear {
        inputs,
        outputs,
        weight,
        bias,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::module::Param;
    use burn::tensor::Device;

    /// Weights decayed into the subnormal range (and anything below 10⁻³⁰) fold to exactly
    /// zero; small normal weights above the threshold and every other weight fold
    /// unchanged, and the fast path's outputs do not move.
    #[test]
    fn tiny_weights_fold_to_zero_and_change_no_output() {
        let device = Device::flex();
        let mut model = NetConfig::new()
            .with_channels(8)
            .with_blocks(1)
            .init(&device);
        let original = model.fold_batch_norm();
        // Output columns 0..100 of the policy layer decay to subnormal sizes (|w| < 2^-126),
        // columns 100..200 to 10^-31 (normal, still below the threshold), and columns
        // 200..300 to 10^-20 (kept).
        let [inputs, outputs] = model.policy_fc.weight.dims();
        let mut w = tensor_to_vec(model.policy_fc.weight.val());
        for row in 0..inputs {
            for col in 0..300 {
                let scale = match col {
                    0..100 => 1e-39,
                    100..200 => 1e-31,
                    _ => 1e-20,
                };
                w[row * outputs + col] *= scale;
            }
        }
        assert!(
            w[..100].iter().all(|x| x.is_subnormal() || *x == 0.0),
            "the test's weights must be subnormal"
        );
        model.policy_fc.weight = Param::from_tensor(burn::tensor::Tensor::from_data(
            burn::tensor::TensorData::new(w.clone(), [inputs, outputs]),
            &device,
        ));
        let folded = model.fold_batch_norm();
        for row in 0..inputs {
            for col in 0..outputs {
                let (got, raw) = (
                    folded.policy_fc.weight[row * outputs + col],
                    w[row * outputs + col],
                );
                if col < 200 {
                    assert_eq!(got, 0.0, "row {row}, column {col}: {raw:e} must fold to 0");
                } else {
                    assert_eq!(got, raw, "row {row}, column {col} must fold unchanged");
                }
            }
        }
        assert!(
            folded.policy_fc.weight.iter().all(|x| !x.is_subnormal()),
            "no subnormal weight is left"
        );
        // Every other layer folds exactly as before.
        assert_eq!(folded.stem, original.stem);
        assert_eq!(folded.blocks, original.blocks);
        assert_eq!(folded.value_fc2, original.value_fc2);
        // The outputs equal burn's, tiny weights included (burn keeps them).
        let inputs_batch = crate::encoding::encode(&brandubh_rules::Position::start(), 1);
        let (logits, values) = model.infer(&inputs_batch, &device);
        let out = crate::FastNet::from_folded(&folded).forward(&inputs_batch);
        assert_eq!(out.policy_logits.len(), logits.len());
        for (i, (a, b)) in logits.iter().zip(&out.policy_logits).enumerate() {
            assert!((a - b).abs() < 1e-4, "logit {i}: burn {a}, fast {b}");
        }
        assert!((values[0] - out.values[0]).abs() < 1e-4);
    }
}
