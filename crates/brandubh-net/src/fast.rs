//! An inference-only forward pass in plain Rust: the same weights as a
//! [`PolicyValueNet`], batch norm folded into the convolutions, SIMD kernels chosen at run
//! time (AVX-512, AVX2+FMA or scalar, through `pulp`), and the batch split across rayon's
//! pool. Training stays in burn; export with [`FastNet::from_model`] after each update.
//!
//! Layout: activations are kept channels-last on a zero-bordered 9×9 board
//! (`[position][9·9][C]`), so a 3×3 convolution is, for every tile of output squares,
//! nine small matrix products over shifted rows, with no im2col copy and no bounds tests
//! for the edge. Channels are padded to a multiple of 32 with zero weights.
//!
//! ```
//! use brandubh_net::{encoding, fast::FastNet, NetConfig};
//! use brandubh_rules::Position;
//! use burn::tensor::Device;
//!
//! let device = Device::flex();
//! let model = NetConfig::new().with_channels(8).with_blocks(1).init(&device);
//! let fast = FastNet::from_model(&model);
//! let planes = encoding::encode(&Position::start(), 1);
//! let out = fast.forward(&planes);
//! assert_eq!(out.policy_logits.len(), encoding::POLICY_SIZE);
//! assert_eq!(out.values.len(), 1);
//! ```

use std::cell::RefCell;

use burn::module::{Module, Param};
use burn::nn::Linear;
use burn::tensor::Tensor;
use pulp::{Arch, Simd, WithSimd};
use rayon::prelude::*;

use crate::encoding::{INPUT_SIZE, NUM_PLANES, PLANE_SIZE, POLICY_SIZE};
use crate::model::{ConvBn, NetConfig, PolicyValueNet, tensor_to_vec};

/// Side of the zero-bordered board.
const PADDED: usize = 9;
/// Squares of the zero-bordered board.
const PADDED_SQUARES: usize = PADDED * PADDED;
/// Channel counts are padded to a multiple of this (the widest column block of a kernel).
const CHANNEL_ALIGN: usize = 32;
/// Positions per unit of parallel work.
const DEFAULT_CHUNK: usize = 16;

fn round_up(n: usize, to: usize) -> usize {
    n.div_ceil(to) * to
}

/// A 3×3 convolution with batch norm folded in: `w[tap][cin][cout_padded]`.
#[derive(Clone, Debug)]
struct Conv3 {
    cin: usize,
    w: Vec<f32>,
    b: Vec<f32>,
}

/// A 1×1 convolution to a few channels, folded: `w[cout][cin_padded]`.
#[derive(Clone, Debug)]
struct Conv1 {
    cout: usize,
    w: Vec<f32>,
    b: Vec<f32>,
}

/// A linear layer `w[in][out_padded]`.
#[derive(Clone, Debug)]
struct Dense {
    k: usize,
    n: usize,
    np: usize,
    w: Vec<f32>,
    b: Vec<f32>,
}

/// Outputs of a [`FastNet`] forward pass.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FastOutput {
    /// Policy logits, `n × 1176`, row-major (not masked).
    pub policy_logits: Vec<f32>,
    /// Values in (-1, 1), one per position, from the side to move's view.
    pub values: Vec<f32>,
}

/// The inference network: see the module documentation.
#[derive(Clone, Debug)]
pub struct FastNet {
    config: NetConfig,
    arch: ArchDebug,
    cp: usize,
    chunk: usize,
    stem: Conv3,
    blocks: Vec<(Conv3, Conv3)>,
    policy_conv: Conv1,
    policy_fc: Dense,
    value_conv: Conv1,
    value_fc1: Dense,
    value_fc2: Vec<f32>,
    value_fc2_bias: f32,
}

/// `pulp::Arch` without `Debug`.
#[derive(Clone, Copy)]
struct ArchDebug(Arch);

impl std::fmt::Debug for ArchDebug {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("pulp::Arch")
    }
}

/// Folded weights `[cout][cin][kh][kw]` and bias of a conv + batch norm.
fn fold(layer: &ConvBn) -> (Vec<f32>, Vec<f32>, [usize; 4]) {
    let dims = layer.conv.weight.dims();
    let w = tensor_to_vec(layer.conv.weight.val());
    let conv_bias = layer.conv.bias.as_ref().map(|b| tensor_to_vec(b.val()));
    let gamma = tensor_to_vec(layer.bn.gamma.val());
    let beta = tensor_to_vec(layer.bn.beta.val());
    let mean = tensor_to_vec(layer.bn.running_mean.value());
    let var = tensor_to_vec(layer.bn.running_var.value());
    let eps = layer.bn.epsilon;
    let cout = dims[0];
    let per_out = w.len() / cout;
    let mut wf = vec![0.0f32; w.len()];
    let mut bf = vec![0.0f32; cout];
    for co in 0..cout {
        let scale = f64::from(gamma[co]) / (f64::from(var[co]) + eps).sqrt();
        let cb = conv_bias.as_ref().map_or(0.0, |b| f64::from(b[co]));
        bf[co] = (f64::from(beta[co]) + (cb - f64::from(mean[co])) * scale) as f32;
        for i in 0..per_out {
            wf[co * per_out + i] = (f64::from(w[co * per_out + i]) * scale) as f32;
        }
    }
    (wf, bf, dims)
}

impl Conv3 {
    /// From burn's `[cout][cin][3][3]` to `[tap][cin_padded][cout_padded]`.
    fn new(layer: &ConvBn, cin_padded: usize, cp: usize) -> Conv3 {
        let (w, b, [cout, cin, kh, kw]) = fold(layer);
        debug_assert_eq!((kh, kw), (3, 3));
        let mut packed = vec![0.0; 9 * cin_padded * cp];
        for co in 0..cout {
            for ci in 0..cin {
                for tap in 0..9 {
                    packed[(tap * cin_padded + ci) * cp + co] = w[(co * cin + ci) * 9 + tap];
                }
            }
        }
        let mut bias = vec![0.0; cp];
        bias[..cout].copy_from_slice(&b);
        Conv3 {
            cin: cin_padded,
            w: packed,
            b: bias,
        }
    }
}

impl Conv1 {
    fn new(layer: &ConvBn, cp: usize) -> Conv1 {
        let (w, b, [cout, cin, _, _]) = fold(layer);
        let mut packed = vec![0.0; cout * cp];
        for co in 0..cout {
            packed[co * cp..co * cp + cin].copy_from_slice(&w[co * cin..(co + 1) * cin]);
        }
        Conv1 { cout, w: packed, b }
    }
}

impl Dense {
    fn new(layer: &Linear) -> Dense {
        let [k, n] = layer.weight.dims();
        let w = tensor_to_vec(layer.weight.val());
        let np = round_up(n, CHANNEL_ALIGN);
        let mut packed = vec![0.0; k * np];
        for i in 0..k {
            packed[i * np..i * np + n].copy_from_slice(&w[i * n..(i + 1) * n]);
        }
        let mut b = vec![0.0; np];
        if let Some(bias) = &layer.bias {
            b[..n].copy_from_slice(&tensor_to_vec(bias.val()));
        }
        Dense {
            k,
            n,
            np,
            w: packed,
            b,
        }
    }
}

impl FastNet {
    /// Exports `model` (on any device, trained or not; batch norm in inference mode, i.e.
    /// with its running statistics).
    #[must_use]
    pub fn from_model(model: &PolicyValueNet) -> FastNet {
        // `valid()` folds pending batch-norm running-statistics updates in (a model fresh
        // from training otherwise reports them one update late).
        let model = &model.valid();
        let config = model.config();
        let cp = round_up(config.channels, CHANNEL_ALIGN);
        let fc2 = &model.value_fc2;
        FastNet {
            arch: ArchDebug(Arch::new()),
            cp,
            chunk: DEFAULT_CHUNK,
            stem: Conv3::new(&model.stem, NUM_PLANES, cp),
            blocks: model
                .blocks
                .iter()
                .map(|b| (Conv3::new(&b.conv1, cp, cp), Conv3::new(&b.conv2, cp, cp)))
                .collect(),
            policy_conv: Conv1::new(&model.policy_conv, cp),
            policy_fc: Dense::new(&model.policy_fc),
            value_conv: Conv1::new(&model.value_conv, cp),
            value_fc1: Dense::new(&model.value_fc1),
            value_fc2: tensor_to_vec(fc2.weight.val()),
            value_fc2_bias: fc2
                .bias
                .as_ref()
                .map_or(0.0, |b: &Param<Tensor<1>>| tensor_to_vec(b.val())[0]),
            config,
        }
    }

    /// The config of the exported model.
    #[must_use]
    pub fn config(&self) -> &NetConfig {
        &self.config
    }

    /// Positions per unit of parallel work (default 16).
    #[must_use]
    pub fn chunk_size(&self) -> usize {
        self.chunk
    }

    /// Sets the positions per unit of parallel work (at least 1).
    #[must_use]
    pub fn with_chunk_size(mut self, chunk: usize) -> FastNet {
        self.chunk = chunk.max(1);
        self
    }

    /// Runs `inputs.len() / INPUT_SIZE` encoded positions.
    ///
    /// # Panics
    /// If `inputs.len()` is not a multiple of [`INPUT_SIZE`].
    #[must_use]
    pub fn forward(&self, inputs: &[f32]) -> FastOutput {
        let n = inputs.len() / INPUT_SIZE;
        let mut out = FastOutput {
            policy_logits: vec![0.0; n * POLICY_SIZE],
            values: vec![0.0; n],
        };
        self.forward_into(inputs, &mut out.policy_logits, &mut out.values);
        out
    }

    /// Like [`FastNet::forward`], writing into `policy_logits` (`n × 1176`) and `values`
    /// (`n`).
    ///
    /// # Panics
    /// If the lengths do not agree.
    pub fn forward_into(&self, inputs: &[f32], policy_logits: &mut [f32], values: &mut [f32]) {
        let n = inputs.len() / INPUT_SIZE;
        assert_eq!(
            n * INPUT_SIZE,
            inputs.len(),
            "inputs must hold whole positions"
        );
        assert_eq!(policy_logits.len(), n * POLICY_SIZE, "policy output size");
        assert_eq!(values.len(), n, "value output size");
        let chunk = self.chunk;
        if n <= chunk {
            self.run_chunk(inputs, policy_logits, values);
            return;
        }
        inputs
            .par_chunks(chunk * INPUT_SIZE)
            .zip(policy_logits.par_chunks_mut(chunk * POLICY_SIZE))
            .zip(values.par_chunks_mut(chunk))
            .for_each(|((i, p), v)| self.run_chunk(i, p, v));
    }

    fn run_chunk(&self, inputs: &[f32], policy: &mut [f32], values: &mut [f32]) {
        SCRATCH.with(|s| {
            let mut s = s.borrow_mut();
            self.arch.0.dispatch(ChunkOp {
                net: self,
                inputs,
                policy,
                values,
                scratch: &mut s,
            });
        });
    }
}

/// Per-thread buffers, reused across calls.
#[derive(Default)]
struct Scratch {
    input: Vec<f32>,
    x: Vec<f32>,
    y: Vec<f32>,
    feat: Vec<f32>,
    dense_out: Vec<f32>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Resizes `v` to `len` zeros.
fn zeroed(v: &mut Vec<f32>, len: usize) {
    v.clear();
    v.resize(len, 0.0);
}

struct ChunkOp<'a> {
    net: &'a FastNet,
    inputs: &'a [f32],
    policy: &'a mut [f32],
    values: &'a mut [f32],
    scratch: &'a mut Scratch,
}

impl WithSimd for ChunkOp<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) -> Self::Output {
        match S::F32_LANES {
            16 => chunk_forward::<S, 8, 2>(simd, self),
            8 => chunk_forward::<S, 6, 2>(simd, self),
            _ => chunk_forward::<S, 4, 4>(simd, self),
        }
    }
}

#[inline(always)]
fn chunk_forward<S: Simd, const MR: usize, const NV: usize>(simd: S, op: ChunkOp<'_>) {
    let ChunkOp {
        net,
        inputs,
        policy,
        values,
        scratch,
    } = op;
    let n = values.len();
    let cp = net.cp;

    // Planes [n][P][49] → zero-bordered channels-last [n][81][P].
    zeroed(&mut scratch.input, n * PADDED_SQUARES * NUM_PLANES);
    for (pos, planes) in inputs.chunks_exact(INPUT_SIZE).enumerate() {
        let dst = &mut scratch.input[pos * PADDED_SQUARES * NUM_PLANES..];
        for (plane, values) in planes.chunks_exact(PLANE_SIZE).enumerate() {
            for (sq, &v) in values.iter().enumerate() {
                dst[padded_center(sq) * NUM_PLANES + plane] = v;
            }
        }
    }
    zeroed(&mut scratch.x, n * PADDED_SQUARES * cp);
    zeroed(&mut scratch.y, n * PADDED_SQUARES * cp);

    conv3::<S, MR, NV>(
        simd,
        &net.stem,
        &scratch.input,
        &mut scratch.x,
        cp,
        n,
        false,
    );
    for (c1, c2) in &net.blocks {
        conv3::<S, MR, NV>(simd, c1, &scratch.x, &mut scratch.y, cp, n, false);
        conv3::<S, MR, NV>(simd, c2, &scratch.y, &mut scratch.x, cp, n, true);
    }

    // Policy head.
    let pc = net.policy_conv.cout;
    conv1(simd, &net.policy_conv, &scratch.x, &mut scratch.feat, cp, n);
    let fc = &net.policy_fc;
    zeroed(&mut scratch.dense_out, n * fc.np);
    dense::<S, MR, NV>(
        simd,
        fc,
        &scratch.feat,
        pc * PLANE_SIZE,
        &mut scratch.dense_out,
        n,
        false,
    );
    for (dst, src) in policy
        .chunks_exact_mut(POLICY_SIZE)
        .zip(scratch.dense_out.chunks_exact(fc.np))
    {
        dst.copy_from_slice(&src[..POLICY_SIZE]);
    }

    // Value head.
    let vc = net.value_conv.cout;
    conv1(simd, &net.value_conv, &scratch.x, &mut scratch.feat, cp, n);
    let fc1 = &net.value_fc1;
    zeroed(&mut scratch.dense_out, n * fc1.np);
    dense::<S, MR, NV>(
        simd,
        fc1,
        &scratch.feat,
        vc * PLANE_SIZE,
        &mut scratch.dense_out,
        n,
        true,
    );
    for (v, hidden) in values
        .iter_mut()
        .zip(scratch.dense_out.chunks_exact(fc1.np))
    {
        let s: f32 = hidden[..fc1.n]
            .iter()
            .zip(&net.value_fc2)
            .map(|(h, w)| h * w)
            .sum();
        *v = (s + net.value_fc2_bias).tanh();
    }
}

/// Index on the 9×9 bordered board of square `sq` of the 7×7 board.
#[inline(always)]
fn padded_center(sq: usize) -> usize {
    (sq / 7 + 1) * PADDED + sq % 7 + 1
}

/// `acc[r][v] += Σ_k rows[r][k] · w[k·stride + v]` for `k < len`.
#[inline(always)]
fn mac<S: Simd, const MR: usize, const NV: usize>(
    simd: S,
    acc: &mut [[S::f32s; NV]; MR],
    rows: &[&[f32]; MR],
    w: &[S::f32s],
    stride: usize,
    len: usize,
) {
    for r in rows {
        assert!(r.len() >= len);
    }
    for k in 0..len {
        let wrow = &w[k * stride..k * stride + NV];
        for r in 0..MR {
            let a = simd.splat_f32s(rows[r][k]);
            for v in 0..NV {
                acc[r][v] = simd.mul_add_f32s(a, wrow[v], acc[r][v]);
            }
        }
    }
}

/// 3×3 convolution + bias (+ the destination's old value when `residual`), then ReLU,
/// from `src` (`[n][81][conv.cin]`) into the interior of `dst` (`[n][81][cp]`).
#[inline(always)]
fn conv3<S: Simd, const MR: usize, const NV: usize>(
    simd: S,
    conv: &Conv3,
    src: &[f32],
    dst: &mut [f32],
    cp: usize,
    n: usize,
    residual: bool,
) {
    let lanes = S::F32_LANES;
    let block = NV * lanes;
    let cin = conv.cin;
    let w = S::as_simd_f32s(&conv.w).0;
    let bias = S::as_simd_f32s(&conv.b).0;
    let stride = cp / lanes;
    let zero = simd.splat_f32s(0.0);
    let pixels = n * PLANE_SIZE;
    let mut tile = 0;
    while tile < pixels {
        let count = MR.min(pixels - tile);
        // Top-left tap (on the bordered board) and centre of each output square.
        let mut corner = [0usize; MR];
        let mut center = [0usize; MR];
        for r in 0..MR {
            let p = tile + r.min(count - 1);
            let (pos, sq) = (p / PLANE_SIZE, p % PLANE_SIZE);
            corner[r] = pos * PADDED_SQUARES + (sq / 7) * PADDED + sq % 7;
            center[r] = pos * PADDED_SQUARES + padded_center(sq);
        }
        for cb in (0..cp).step_by(block) {
            let vb = cb / lanes;
            let mut acc = [[zero; NV]; MR];
            for row in acc.iter_mut() {
                row.copy_from_slice(&bias[vb..vb + NV]);
            }
            for tap in 0..9 {
                let off = (tap / 3) * PADDED + tap % 3;
                let rows: [&[f32]; MR] = std::array::from_fn(|r| {
                    let start = (corner[r] + off) * cin;
                    &src[start..start + cin]
                });
                mac::<S, MR, NV>(
                    simd,
                    &mut acc,
                    &rows,
                    &w[tap * cin * stride + vb..],
                    stride,
                    cin,
                );
            }
            for r in 0..count {
                let start = center[r] * cp + cb;
                let out = S::as_mut_simd_f32s(&mut dst[start..start + block]).0;
                for v in 0..NV {
                    let mut x = acc[r][v];
                    if residual {
                        x = simd.add_f32s(x, out[v]);
                    }
                    out[v] = simd.max_f32s(x, zero);
                }
            }
        }
        tile += MR;
    }
}

/// 1×1 convolution to `conv.cout` channels + bias + ReLU, from `src` (`[n][81][cp]`) into
/// `feat` laid out like burn's flatten of `[n, cout, 7, 7]`: `[n][cout·49]`.
#[inline(always)]
fn conv1<S: Simd>(simd: S, conv: &Conv1, src: &[f32], feat: &mut Vec<f32>, cp: usize, n: usize) {
    let cout = conv.cout;
    zeroed(feat, n * cout * PLANE_SIZE);
    let w = S::as_simd_f32s(&conv.w).0;
    let per = cp / S::F32_LANES;
    for pos in 0..n {
        for sq in 0..PLANE_SIZE {
            let start = (pos * PADDED_SQUARES + padded_center(sq)) * cp;
            let x = S::as_simd_f32s(&src[start..start + cp]).0;
            for co in 0..cout {
                let wr = &w[co * per..(co + 1) * per];
                let mut acc = simd.splat_f32s(0.0);
                for (a, b) in x.iter().zip(wr) {
                    acc = simd.mul_add_f32s(*a, *b, acc);
                }
                let v = simd.reduce_sum_f32s(acc) + conv.b[co];
                feat[(pos * cout + co) * PLANE_SIZE + sq] = v.max(0.0);
            }
        }
    }
}

/// `out[i] = a[i] · w + b` (ReLU when `relu`) for the `n` rows of `a` (`k` values each);
/// `out` rows hold `layer.np` values.
#[inline(always)]
fn dense<S: Simd, const MR: usize, const NV: usize>(
    simd: S,
    layer: &Dense,
    a: &[f32],
    k: usize,
    out: &mut [f32],
    n: usize,
    relu: bool,
) {
    debug_assert_eq!(k, layer.k);
    let lanes = S::F32_LANES;
    let block = NV * lanes;
    let w = S::as_simd_f32s(&layer.w).0;
    let bias = S::as_simd_f32s(&layer.b).0;
    let stride = layer.np / lanes;
    let zero = simd.splat_f32s(0.0);
    let mut tile = 0;
    while tile < n {
        let count = MR.min(n - tile);
        let rows: [&[f32]; MR] = std::array::from_fn(|r| {
            let i = tile + r.min(count - 1);
            &a[i * k..(i + 1) * k]
        });
        for cb in (0..layer.np).step_by(block) {
            let vb = cb / lanes;
            let mut acc = [[zero; NV]; MR];
            for row in acc.iter_mut() {
                row.copy_from_slice(&bias[vb..vb + NV]);
            }
            mac::<S, MR, NV>(simd, &mut acc, &rows, &w[vb..], stride, k);
            for (r, acc_r) in acc.iter().enumerate().take(count) {
                let start = (tile + r) * layer.np + cb;
                let o = S::as_mut_simd_f32s(&mut out[start..start + block]).0;
                for (o, &a) in o.iter_mut().zip(acc_r) {
                    *o = if relu { simd.max_f32s(a, zero) } else { a };
                }
            }
        }
        tile += MR;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::Device;

    /// Every kernel variant (scalar 4×4, AVX2 6×16, AVX-512 8×32 where the CPU has it)
    /// agrees with burn.
    #[test]
    fn every_instruction_set_gives_burns_outputs() {
        let device = Device::flex();
        let model = NetConfig::new()
            .with_channels(12)
            .with_blocks(1)
            .init(&device);
        let base = FastNet::from_model(&model);
        let start = brandubh_rules::Position::start();
        let mut inputs = crate::encoding::encode(&start, 1);
        for mv in start.legal_moves().iter().take(10) {
            let next = start.play_unchecked(*mv).position;
            inputs.extend(crate::encoding::encode(&next, 2));
        }
        let (logits, values) = model.infer(&inputs, &device);
        #[allow(unused_mut)]
        let mut arches = vec![("scalar", Arch::Scalar)];
        #[cfg(target_arch = "x86_64")]
        {
            if let Some(v3) = pulp::x86::V3::try_new() {
                arches.push(("avx2", Arch::V3(v3)));
            }
            if let Some(v4) = pulp::x86::V4::try_new() {
                arches.push(("avx512", Arch::V4(v4)));
            }
        }
        for (name, arch) in arches {
            let mut net = base.clone();
            net.arch = ArchDebug(arch);
            let out = net.forward(&inputs);
            let diff = logits
                .iter()
                .chain(&values)
                .zip(out.policy_logits.iter().chain(&out.values))
                .map(|(a, b)| (a - b).abs())
                .fold(0.0f32, f32::max);
            assert!(diff < 1e-4, "{name}: differs from burn by {diff}");
        }
    }
}
