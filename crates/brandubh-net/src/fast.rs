//! An inference-only forward pass in plain Rust: the same weights as a
//! [`PolicyValueNet`], batch norm folded into the convolutions, SIMD kernels chosen at run
//! time (AVX-512, AVX2+FMA or scalar, through `pulp`), and the batch split across rayon's
//! pool. Training stays in burn; export with [`FastNet::from_model`] after each update, or
//! load a checkpoint or safetensors image directly ([`FastNet::load`],
//! [`FastNet::from_safetensors`]).
//!
//! Layout: activations are kept channels-last on a zero-bordered 10×10 board
//! (`[position][10·10][C]`: the 7×7 board at rows and columns 1–7), so that no kernel tests
//! for the edge. The residual tower's 3×3 convolutions run as Winograd F(4×4, 3×3)
//! ([`winograd`]: 2×2 tiles of 4×4 squares, 36 matrix products per convolution, a third of
//! the direct convolution's multiply-adds); the stem (9 input planes), and every
//! convolution with [`ConvAlgorithm::Direct`], runs directly: for every tile of output
//! squares, three small matrix products (one per kernel row: its three taps read three
//! neighbouring squares, one contiguous run of inputs), with no im2col copy. Channels are
//! padded to a multiple of 32 with zero weights.
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
use std::sync::Arc;

use pulp::{Arch, Simd, WithSimd};
use rayon::prelude::*;

use crate::checkpoint::{self, CheckpointError, CheckpointMeta};
use crate::encoding::{PLANE_SIZE, POLICY_SIZE};
use crate::folded::{FoldedConv, FoldedLinear, FoldedNet};
use crate::model::{NetConfig, PolicyValueNet};

mod grad;
pub mod train;
mod winograd;

use winograd::WinogradConv;

/// Side of the zero-bordered board: one zero row and column before the board, two after
/// (a Winograd tile's 6×6 window reaches one square past the 8×8 its tiles cover).
const PADDED: usize = 10;
/// Squares of the zero-bordered board.
const PADDED_SQUARES: usize = PADDED * PADDED;
/// Channel counts are padded to a multiple of this for kernels with column blocks of
/// `block` channels: the block divides it, and so does the Winograd input alignment (32 or
/// 48 for the AVX-512 kernels, see [`tile_shape`]; 16 for AVX2's and the scalar ones).
const fn channel_align(block: usize) -> usize {
    if block > winograd::INPUT_ALIGN {
        block
    } else {
        winograd::INPUT_ALIGN
    }
}
/// Most positions per unit of parallel work.
const DEFAULT_CHUNK: usize = 16;
/// Buffers start on a cache line (in `f32`s: 64 bytes).
const LINE: usize = 16;

const fn round_up(n: usize, to: usize) -> usize {
    n.div_ceil(to) * to
}

/// How a [`FastNet`] runs the 3×3 convolutions of its residual tower.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ConvAlgorithm {
    /// Winograd F(4×4, 3×3): about a third of the multiply-adds (the default).
    #[default]
    Winograd,
    /// The direct convolution, one multiply-add per tap.
    Direct,
}

impl ConvAlgorithm {
    /// `winograd` or `direct`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            ConvAlgorithm::Winograd => "winograd",
            ConvAlgorithm::Direct => "direct",
        }
    }

    /// The algorithm [`ConvAlgorithm::name`] names.
    #[must_use]
    pub fn from_name(name: &str) -> Option<ConvAlgorithm> {
        [ConvAlgorithm::Winograd, ConvAlgorithm::Direct]
            .into_iter()
            .find(|a| a.name() == name)
    }
}

/// The instruction set a [`FastNet`]'s kernels use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SimdLevel {
    /// Portable scalar code (4 rows × 4 columns per tile).
    Scalar,
    /// x86-64 AVX2 with FMA (5 rows × 16 channels per tile).
    Avx2,
    /// x86-64 AVX-512 (8 rows × 32 channels per tile).
    Avx512,
    /// The best this CPU has on another architecture (e.g. NEON on aarch64).
    Native,
}

impl SimdLevel {
    /// A short name: `scalar`, `avx2+fma`, `avx512` or `native`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            SimdLevel::Scalar => "scalar",
            SimdLevel::Avx2 => "avx2+fma",
            SimdLevel::Avx512 => "avx512",
            SimdLevel::Native => "native",
        }
    }

    /// The level [`SimdLevel::name`] names (`avx2` also stands for `avx2+fma`).
    #[must_use]
    pub fn from_name(name: &str) -> Option<SimdLevel> {
        let name = if name == "avx2" { "avx2+fma" } else { name };
        [
            SimdLevel::Scalar,
            SimdLevel::Avx2,
            SimdLevel::Avx512,
            SimdLevel::Native,
        ]
        .into_iter()
        .find(|l| l.name() == name)
    }

    /// The `pulp` dispatcher for this level, if this CPU has it.
    fn arch(self) -> Option<Arch> {
        match self {
            SimdLevel::Scalar => Some(Arch::Scalar),
            #[cfg(target_arch = "x86_64")]
            SimdLevel::Avx2 => pulp::x86::V3::try_new().map(Arch::V3),
            #[cfg(target_arch = "x86_64")]
            SimdLevel::Avx512 => pulp::x86::V4::try_new().map(Arch::V4),
            #[cfg(target_arch = "x86_64")]
            SimdLevel::Native => None,
            #[cfg(not(target_arch = "x86_64"))]
            SimdLevel::Avx2 | SimdLevel::Avx512 => None,
            #[cfg(not(target_arch = "x86_64"))]
            SimdLevel::Native => Some(Arch::new()),
        }
    }

    /// The best level this CPU has.
    fn detect() -> SimdLevel {
        [SimdLevel::Avx512, SimdLevel::Avx2, SimdLevel::Native]
            .into_iter()
            .find(|l| l.arch().is_some())
            .unwrap_or(SimdLevel::Scalar)
    }
}

/// `f32`s whose first element starts on a cache line (so that no vector load straddles
/// two), found by offsetting into a slightly larger `Vec` (no `unsafe`).
#[derive(Debug, Default)]
struct Aligned {
    buf: Vec<f32>,
    start: usize,
    len: usize,
}

impl Aligned {
    fn zeros(len: usize) -> Aligned {
        let buf = vec![0.0f32; len + LINE];
        let start = buf.as_ptr().align_offset(4 * LINE).min(LINE);
        Aligned { buf, start, len }
    }

    fn from_slice(data: &[f32]) -> Aligned {
        let mut a = Aligned::zeros(data.len());
        a.get_mut().copy_from_slice(data);
        a
    }

    fn get(&self) -> &[f32] {
        &self.buf[self.start..self.start + self.len]
    }

    fn get_mut(&mut self) -> &mut [f32] {
        &mut self.buf[self.start..self.start + self.len]
    }

    /// The first `len` values, grown (zeroed) first if shorter.
    fn at_least(&mut self, len: usize) -> &mut [f32] {
        if self.len < len {
            *self = Aligned::zeros(len);
        }
        &mut self.get_mut()[..len]
    }
}

impl Clone for Aligned {
    fn clone(&self) -> Aligned {
        Aligned::from_slice(self.get())
    }
}

/// A 3×3 convolution, batch norm folded in, packed for a column block of `B` channels:
/// `w[cout / B][tap][cin][B]`, so that one block's weights are one contiguous run.
#[derive(Clone, Debug)]
struct Conv3 {
    cin: usize,
    w: Aligned,
    b: Aligned,
}

/// A 1×1 convolution to a few channels, folded: `w[cout][cin_padded]`.
#[derive(Clone, Debug)]
struct Conv1 {
    cout: usize,
    w: Aligned,
    b: Vec<f32>,
}

/// A linear layer packed for a column block of `B` outputs: `w[out / B][in][B]`.
#[derive(Clone, Debug)]
struct Dense {
    k: usize,
    n: usize,
    np: usize,
    w: Aligned,
    b: Aligned,
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
    folded: Arc<FoldedNet>,
    level: SimdLevel,
    algorithm: ConvAlgorithm,
    arch: ArchDebug,
    chunk: usize,
    parallel: bool,
    layers: Layers,
}

/// The layers packed for one column-block width.
#[derive(Clone, Debug)]
struct Layers {
    cp: usize,
    /// Input planes (9, or 12 with the King planes).
    planes: usize,
    stem: Conv3,
    blocks: Vec<(TowerConv, TowerConv)>,
    policy_conv: Conv1,
    policy_fc: Dense,
    value_conv: Conv1,
    value_fc1: Dense,
    value_fc2: Vec<f32>,
    value_fc2_bias: f32,
}

/// A 3×3 convolution of the residual tower, packed for its algorithm.
#[derive(Clone, Debug)]
enum TowerConv {
    Direct(Conv3),
    Winograd(WinogradConv),
}

impl TowerConv {
    fn new(layer: &FoldedConv, cp: usize, block: usize, algorithm: ConvAlgorithm) -> TowerConv {
        match algorithm {
            ConvAlgorithm::Direct => TowerConv::Direct(Conv3::new(layer, cp, cp, block)),
            ConvAlgorithm::Winograd => TowerConv::Winograd(WinogradConv::new(layer, cp, cp, block)),
        }
    }
}

/// `pulp::Arch` without `Debug`.
#[derive(Clone, Copy)]
struct ArchDebug(Arch);

impl std::fmt::Debug for ArchDebug {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("pulp::Arch")
    }
}

impl Conv3 {
    /// From `[cout][cin][3][3]` to `[cout_padded / block][tap][cin_padded][block]`.
    fn new(layer: &FoldedConv, cin_padded: usize, cp: usize, block: usize) -> Conv3 {
        let (cout, cin) = (layer.cout, layer.cin);
        debug_assert_eq!(layer.kernel, 3);
        let mut packed = vec![0.0; 9 * cin_padded * cp];
        for co in 0..cout {
            let (cb, j) = (co / block, co % block);
            for ci in 0..cin {
                for tap in 0..9 {
                    packed[((cb * 9 + tap) * cin_padded + ci) * block + j] =
                        layer.weight[(co * cin + ci) * 9 + tap];
                }
            }
        }
        let mut bias = vec![0.0; cp];
        bias[..cout].copy_from_slice(&layer.bias);
        Conv3 {
            cin: cin_padded,
            w: Aligned::from_slice(&packed),
            b: Aligned::from_slice(&bias),
        }
    }
}

impl Conv1 {
    fn new(layer: &FoldedConv, cp: usize) -> Conv1 {
        let (cout, cin) = (layer.cout, layer.cin);
        debug_assert_eq!(layer.kernel, 1);
        let mut packed = vec![0.0; cout * cp];
        for co in 0..cout {
            packed[co * cp..co * cp + cin].copy_from_slice(&layer.weight[co * cin..(co + 1) * cin]);
        }
        Conv1 {
            cout,
            w: Aligned::from_slice(&packed),
            b: layer.bias.clone(),
        }
    }
}

impl Dense {
    fn new(layer: &FoldedLinear, block: usize) -> Dense {
        let n = layer.outputs;
        let mut dense = Dense::zeros(layer.inputs, n, block);
        for (i, row) in layer.weight.chunks_exact(n).enumerate() {
            dense.set_row(i, row, block);
        }
        dense.b.get_mut()[..n].copy_from_slice(&layer.bias);
        dense
    }

    /// A layer `[k] → [n]` of zero weights and bias, packed for column blocks of `block`.
    fn zeros(k: usize, n: usize, block: usize) -> Dense {
        let np = round_up(n, channel_align(block));
        Dense {
            k,
            n,
            np,
            w: Aligned::zeros(k * np),
            b: Aligned::zeros(np),
        }
    }

    /// Input `i`'s weights to the first `row.len()` outputs: the packed weights are column
    /// block by column block, each `[k][block]` (no division per weight: the training step
    /// packs its layers every step).
    fn set_row(&mut self, i: usize, row: &[f32], block: usize) {
        let k = self.k;
        let w = self.w.get_mut();
        for (jb, part) in row.chunks(block).enumerate() {
            w[(jb * k + i) * block..][..part.len()].copy_from_slice(part);
        }
    }
}

impl Layers {
    fn new(net: &FoldedNet, block: usize, algorithm: ConvAlgorithm) -> Layers {
        let cp = round_up(net.config.channels, channel_align(block));
        Layers {
            cp,
            planes: net.config.planes(),
            stem: Conv3::new(&net.stem, net.config.planes(), cp, block),
            blocks: net
                .blocks
                .iter()
                .map(|b| {
                    (
                        TowerConv::new(&b.conv1, cp, block, algorithm),
                        TowerConv::new(&b.conv2, cp, block, algorithm),
                    )
                })
                .collect(),
            policy_conv: Conv1::new(&net.policy_conv, cp),
            policy_fc: Dense::new(&net.policy_fc, block),
            value_conv: Conv1::new(&net.value_conv, cp),
            value_fc1: Dense::new(&net.value_fc1, block),
            value_fc2: net.value_fc2.weight.clone(),
            value_fc2_bias: net.value_fc2.bias[0],
        }
    }
}

/// Rows (output squares or positions) and column vectors of the register tile that the
/// kernels use with `lanes`-wide vectors for a tower of `channels` (or its padded count).
/// AVX2 has 16 vector registers: 5 × 2 accumulators leave room for the weights and a
/// broadcast (6 × 2 spilled one). AVX-512 has 32: 8 × 2, or 8 × 3 where three vectors fit
/// the channels better than two (48 channels stay 48 rather than 64).
const fn tile_shape(lanes: usize, channels: usize) -> (usize, usize) {
    match lanes {
        16 if round_up(channels, 48) < round_up(channels, 32) => (8, 3),
        16 => (8, 2),
        8 => (5, 2),
        _ => (4, 4),
    }
}

/// Work that runs with a register tile as constants (see [`with_tile`]).
trait WithTile {
    type Output;
    /// The work, on `MR` × `NV` tiles.
    fn run<S: Simd, const MR: usize, const NV: usize>(self, simd: S) -> Self::Output;
}

/// Runs `op` with [`tile_shape`]`(S::F32_LANES, channels)` as constants. The branches on
/// the vector width are constants, so each instruction set compiles only the tiles it can
/// pick (every tile for every one had made this crate's build several times longer).
#[inline(always)]
fn with_tile<S: Simd, T: WithTile>(simd: S, channels: usize, op: T) -> T::Output {
    // Every shape `tile_shape` gives: AVX-512's two, AVX2's, and the other widths'.
    const WIDE: (usize, usize) = tile_shape(16, 48);
    const AVX512: (usize, usize) = tile_shape(16, 32);
    const AVX2: (usize, usize) = tile_shape(8, 32);
    const OTHER: (usize, usize) = tile_shape(1, 32);
    if const { S::F32_LANES == 16 } {
        if tile_shape(16, channels) == WIDE {
            op.run::<S, { WIDE.0 }, { WIDE.1 }>(simd)
        } else {
            op.run::<S, { AVX512.0 }, { AVX512.1 }>(simd)
        }
    } else if const { S::F32_LANES == 8 } {
        op.run::<S, { AVX2.0 }, { AVX2.1 }>(simd)
    } else {
        op.run::<S, { OTHER.0 }, { OTHER.1 }>(simd)
    }
}

/// Channels of a column block with `lanes`-wide vectors for a tower of `channels`.
const fn block_width(lanes: usize, channels: usize) -> usize {
    tile_shape(lanes, channels).1 * lanes
}

/// The vector width of `arch`.
struct Lanes;

impl WithSimd for Lanes {
    type Output = usize;

    #[inline(always)]
    fn with_simd<S: Simd>(self, _: S) -> usize {
        S::F32_LANES
    }
}

impl FastNet {
    /// Exports `model` (on any device, trained or not; batch norm in inference mode, i.e.
    /// with its running statistics).
    #[must_use]
    pub fn from_model(model: &PolicyValueNet) -> FastNet {
        FastNet::from_folded(&model.fold_batch_norm())
    }

    /// The fast network of folded weights, with the best kernels this CPU has.
    #[must_use]
    pub fn from_folded(net: &FoldedNet) -> FastNet {
        let level = SimdLevel::detect();
        FastNet::build(Arc::new(net.clone()), level, ConvAlgorithm::default())
    }

    fn build(folded: Arc<FoldedNet>, level: SimdLevel, algorithm: ConvAlgorithm) -> FastNet {
        let arch = level.arch().unwrap_or(Arch::Scalar);
        let block = block_width(arch.dispatch(Lanes), folded.config.channels);
        let layers = Layers::new(&folded, block, algorithm);
        FastNet {
            config: folded.config.clone(),
            chunk: DEFAULT_CHUNK,
            parallel: true,
            layers,
            folded,
            level,
            algorithm,
            arch: ArchDebug(arch),
        }
    }

    /// Loads checkpoint `path` (a stem or either of its files) straight onto the fast path,
    /// checked as [`checkpoint::load`] checks it. With `expected`, a checkpoint of another
    /// config is an error.
    pub fn load(
        path: impl AsRef<std::path::Path>,
        expected: Option<&NetConfig>,
    ) -> Result<(FastNet, CheckpointMeta), CheckpointError> {
        let (folded, meta) = checkpoint::load_folded(path, expected)?;
        Ok((FastNet::from_folded(&folded), meta))
    }

    /// The fast network of a model of `config` from a safetensors file image (a
    /// checkpoint's weights file, or the weights block of an agent file); the error says on
    /// one line what does not fit.
    pub fn from_safetensors(config: &NetConfig, bytes: Vec<u8>) -> Result<FastNet, String> {
        Ok(FastNet::from_folded(&checkpoint::folded_from_bytes(
            config, bytes,
        )?))
    }

    /// The config of the exported model.
    #[must_use]
    pub fn config(&self) -> &NetConfig {
        &self.config
    }

    /// The folded weights this network was built from.
    #[must_use]
    pub fn folded(&self) -> &FoldedNet {
        &self.folded
    }

    /// The instruction set the kernels use.
    #[must_use]
    pub fn simd_level(&self) -> SimdLevel {
        self.level
    }

    /// The same network on the kernels of `level` (e.g. to compare them, or AVX2 on a CPU
    /// that has AVX-512); `None` if this CPU does not have it.
    #[must_use]
    pub fn with_simd_level(&self, level: SimdLevel) -> Option<FastNet> {
        level.arch()?;
        Some(self.rebuilt(level, self.algorithm))
    }

    /// This network's settings with other kernels or another algorithm.
    fn rebuilt(&self, level: SimdLevel, algorithm: ConvAlgorithm) -> FastNet {
        FastNet {
            chunk: self.chunk,
            parallel: self.parallel,
            ..FastNet::build(Arc::clone(&self.folded), level, algorithm)
        }
    }

    /// How the residual tower's 3×3 convolutions run.
    #[must_use]
    pub fn conv_algorithm(&self) -> ConvAlgorithm {
        self.algorithm
    }

    /// The same network with the tower's convolutions run by `algorithm` (e.g. to compare
    /// them).
    #[must_use]
    pub fn with_conv_algorithm(&self, algorithm: ConvAlgorithm) -> FastNet {
        self.rebuilt(self.level, algorithm)
    }

    /// With `false`, [`FastNet::forward_into`] runs every chunk of a batch on the calling
    /// thread, for callers that already keep one thread per core busy (e.g. self-play
    /// workers); the outputs are the same.
    #[must_use]
    pub fn with_parallel(mut self, parallel: bool) -> FastNet {
        self.parallel = parallel;
        self
    }

    /// Most positions per unit of parallel work (default 16).
    #[must_use]
    pub fn chunk_size(&self) -> usize {
        self.chunk
    }

    /// Sets the most positions per unit of parallel work (at least 1).
    #[must_use]
    pub fn with_chunk_size(mut self, chunk: usize) -> FastNet {
        self.chunk = chunk.max(1);
        self
    }

    /// Values of one encoded position for this network ([`NetConfig::input_size`]).
    #[must_use]
    pub fn input_size(&self) -> usize {
        self.layers.planes * PLANE_SIZE
    }

    /// Runs `inputs.len() / input_size` encoded positions ([`FastNet::input_size`]).
    ///
    /// # Panics
    /// If `inputs.len()` is not a multiple of the input size.
    #[must_use]
    pub fn forward(&self, inputs: &[f32]) -> FastOutput {
        let n = inputs.len() / self.input_size();
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
    /// The batch is split into equal parts of at most [`FastNet::chunk_size`] positions, as
    /// many as a multiple of the threads of the current rayon pool (so that every thread
    /// gets the same work, and a batch of 16 uses two cores), run on that pool; or, with
    /// [`FastNet::with_parallel`]`(false)`, one after the other on the calling thread.
    ///
    /// # Panics
    /// If the lengths do not agree.
    pub fn forward_into(&self, inputs: &[f32], policy_logits: &mut [f32], values: &mut [f32]) {
        let size = self.input_size();
        let n = inputs.len() / size;
        assert_eq!(n * size, inputs.len(), "inputs must hold whole positions");
        assert_eq!(policy_logits.len(), n * POLICY_SIZE, "policy output size");
        assert_eq!(values.len(), n, "value output size");
        let threads = if self.parallel {
            rayon::current_num_threads().max(1)
        } else {
            1
        };
        let rounds = n.div_ceil(threads * self.chunk).max(1);
        let parts = (threads * rounds).min(n).max(1);
        let per = n.div_ceil(parts).max(1);
        if per >= n {
            self.run_chunk(inputs, policy_logits, values);
            return;
        }
        if !self.parallel {
            for ((i, p), v) in inputs
                .chunks(per * size)
                .zip(policy_logits.chunks_mut(per * POLICY_SIZE))
                .zip(values.chunks_mut(per))
            {
                self.run_chunk(i, p, v);
            }
            return;
        }
        inputs
            .par_chunks(per * size)
            .zip(policy_logits.par_chunks_mut(per * POLICY_SIZE))
            .zip(values.par_chunks_mut(per))
            .for_each(|((i, p), v)| self.run_chunk(i, p, v));
    }

    fn run_chunk(&self, inputs: &[f32], policy: &mut [f32], values: &mut [f32]) {
        SCRATCH.with(|s| {
            let mut s = s.borrow_mut();
            s.prepare(values.len(), self.layers.cp, self.layers.planes);
            self.arch.0.dispatch(ChunkOp {
                net: &self.layers,
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
    /// `(positions, padded channels, input planes)` the bordered buffers are laid out for: their
    /// borders are zero and are never written, so they are zeroed only when they grow or
    /// the channels change. A chunk of fewer positions uses the first ones (self-play's
    /// batches vary in size from call to call, and a batch's last chunk is often shorter).
    shape: (usize, usize, usize),
    input: Aligned,
    x: Aligned,
    y: Aligned,
    /// The output squares of `shape.0` positions ([`pixel_table`]), position by position:
    /// those of the first `n` positions are its first `n · 49`.
    pixels: Vec<Pixel>,
    /// Winograd's transformed inputs and products (written whole before they are read).
    wino_v: Aligned,
    wino_m: Aligned,
    feat: Vec<f32>,
    dense_out: Aligned,
}

impl Scratch {
    fn prepare(&mut self, n: usize, cp: usize, planes: usize) {
        if self.shape.1 != cp || self.shape.0 < n || self.shape.2 != planes {
            self.shape = (n, cp, planes);
            self.input = Aligned::zeros(n * PADDED_SQUARES * planes);
            self.x = Aligned::zeros(n * PADDED_SQUARES * cp);
            self.y = Aligned::zeros(n * PADDED_SQUARES * cp);
            self.pixels = pixel_table(n);
        }
    }
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
    net: &'a Layers,
    inputs: &'a [f32],
    policy: &'a mut [f32],
    values: &'a mut [f32],
    scratch: &'a mut Scratch,
}

impl WithSimd for ChunkOp<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) -> Self::Output {
        with_tile(simd, self.net.cp, self)
    }
}

impl WithTile for ChunkOp<'_> {
    type Output = ();

    #[inline(always)]
    fn run<S: Simd, const MR: usize, const NV: usize>(self, simd: S) {
        chunk_forward::<S, MR, NV>(simd, self);
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
    let (cp, np) = (net.cp, net.planes);

    // Planes [n][P][49] → the interior of the zero-bordered channels-last [n][81][P].
    let input = scratch.input.get_mut();
    for (pos, planes) in inputs.chunks_exact(np * PLANE_SIZE).enumerate() {
        let dst = &mut input[pos * PADDED_SQUARES * np..];
        for (plane, values) in planes.chunks_exact(PLANE_SIZE).enumerate() {
            for (sq, &v) in values.iter().enumerate() {
                dst[padded_center(sq) * np + plane] = v;
            }
        }
    }
    // The stem and the tower, a few positions at a time (see `tower_positions`).
    let (x, y) = (scratch.x.get_mut(), scratch.y.get_mut());
    let mut wino = (&mut scratch.wino_v, &mut scratch.wino_m);
    let step = tower_positions(cp);
    for first in (0..n).step_by(step) {
        let m = step.min(n - first);
        let px = &scratch.pixels[..m * PLANE_SIZE];
        let part = |c: usize| first * PADDED_SQUARES * c..(first + m) * PADDED_SQUARES * c;
        let (x, y) = (&mut x[part(cp)], &mut y[part(cp)]);
        let input = &scratch.input.get()[part(np)];
        conv3::<S, MR, NV>(simd, &net.stem, input, x, cp, px, false);
        for (c1, c2) in &net.blocks {
            tower_conv::<S, MR, NV>(simd, c1, x, y, cp, px, &mut wino, false);
            tower_conv::<S, MR, NV>(simd, c2, y, x, cp, px, &mut wino, true);
        }
    }
    let x: &[f32] = x;

    // Policy head.
    let pc = net.policy_conv.cout;
    conv1(simd, &net.policy_conv, x, &mut scratch.feat, cp, n);
    let fc = &net.policy_fc;
    debug_assert_eq!(fc.k, pc * PLANE_SIZE);
    let out = scratch.dense_out.at_least(n * fc.np);
    dense::<S, MR, NV>(simd, fc, &scratch.feat, out, Rows::packed(n, fc), false);
    for (dst, src) in policy
        .chunks_exact_mut(POLICY_SIZE)
        .zip(out.chunks_exact(fc.np))
    {
        dst.copy_from_slice(&src[..POLICY_SIZE]);
    }

    // Value head.
    let vc = net.value_conv.cout;
    conv1(simd, &net.value_conv, x, &mut scratch.feat, cp, n);
    let fc1 = &net.value_fc1;
    debug_assert_eq!(fc1.k, vc * PLANE_SIZE);
    let out = scratch.dense_out.at_least(n * fc1.np);
    dense::<S, MR, NV>(simd, fc1, &scratch.feat, out, Rows::packed(n, fc1), true);
    for (v, hidden) in values.iter_mut().zip(out.chunks_exact(fc1.np)) {
        let s: f32 = hidden[..fc1.n]
            .iter()
            .zip(&net.value_fc2)
            .map(|(h, w)| h * w)
            .sum();
        *v = (s + net.value_fc2_bias).tanh();
    }
}

/// Positions that go through the stem and the tower together, with `cp` padded channels: 4
/// up to 32 channels, 2 for 64, 1 from 128 on. A Winograd convolution's buffers take 1,152
/// bytes per position and channel, and they and the layer's transformed weights (590 KB
/// with 64 channels) should stay in L2. Measured on Zen 5 (1 MB of L2), one thread: with 64
/// channels, 2 positions at a time ran 1.1–1.5× as fast as 4 or 16 on AVX-512, and 1.3–1.5×
/// as fast as 4 or 8 on AVX2; with 32 channels, 4 to 16 were level, 2 slower.
fn tower_positions(cp: usize) -> usize {
    (128 / cp.max(1)).clamp(1, 4)
}

/// One convolution of the residual tower, by its algorithm (a function, not a closure: a
/// closure would not inherit the caller's SIMD target features, and every vector operation
/// in it would become a call).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn tower_conv<S: Simd, const MR: usize, const NV: usize>(
    simd: S,
    conv: &TowerConv,
    src: &[f32],
    dst: &mut [f32],
    cp: usize,
    pixels: &[Pixel],
    (wino_v, wino_m): &mut (&mut Aligned, &mut Aligned),
    residual: bool,
) {
    match conv {
        TowerConv::Direct(c) => conv3::<S, MR, NV>(simd, c, src, dst, cp, pixels, residual),
        TowerConv::Winograd(c) => {
            let n = pixels.len() / PLANE_SIZE;
            let work = winograd::Work {
                v: wino_v.at_least(c.input_len(n)),
                m: wino_m.at_least(c.output_len(n)),
            };
            winograd::conv::<S, MR, NV>(simd, c, src, dst, n, work, residual);
        }
    }
}

/// Index on the 10×10 bordered board of square `sq` of the 7×7 board.
#[inline(always)]
fn padded_center(sq: usize) -> usize {
    (sq / 7 + 1) * PADDED + sq % 7 + 1
}

/// `acc[r][v] += Σ_k rows[r][k] · w[k][v]`: the register tile's inner loop. Every
/// `rows[r]` holds at least `w.len() / NV` values; only that many are used.
#[inline(always)]
fn mac<S: Simd, const MR: usize, const NV: usize>(
    simd: S,
    acc: &mut [[S::f32s; NV]; MR],
    rows: &[&[f32]; MR],
    w: &[S::f32s],
) {
    let len = w.len() / NV;
    // Every row re-sliced to the one length, so that `k < len` proves every index (a plain
    // loop: `array::from_fn` is not always inlined, and cost 6 % of the forward pass).
    let mut rs: [&[f32]; MR] = [&[]; MR];
    for r in 0..MR {
        rs[r] = &rows[r][..len];
    }
    for (k, wk) in (0..len).zip(w.chunks_exact(NV)) {
        for r in 0..MR {
            let a = simd.splat_f32s(rs[r][k]);
            for v in 0..NV {
                acc[r][v] = simd.mul_add_f32s(a, wk[v], acc[r][v]);
            }
        }
    }
}

/// 3×3 convolution + bias (+ the destination's old value when `residual`), then ReLU,
/// from `src` (`[n][81][conv.cin]`) into the interior of `dst` (`[n][81][cp]`), for the
/// output squares `pixels` (of [`pixel_table`]).
///
/// Column block by column block, then tiles of `MR` output squares across the whole chunk
/// (a tile may span two positions). A block's weights are `9·cin·block` floats: 18 KB for
/// 32 channels with AVX2, which stays in a 32 KB L1, but 36 KB for 64. Splitting the 64's
/// kernel rows into passes whose weights fit L1 (partial sums kept in `dst`) measured
/// 0.80–0.97× of this on Zen 3 (1 row a pass) and 0.87–0.93× (2 + 1 rows), one thread:
/// reading the weights from L2 is not what limits it, so there is one pass. The three taps
/// of one kernel row read three neighbouring squares, i.e. one contiguous run of `3·cin`
/// inputs, and their weights are contiguous too: one inner loop per kernel row.
#[inline(always)]
fn conv3<S: Simd, const MR: usize, const NV: usize>(
    simd: S,
    conv: &Conv3,
    src: &[f32],
    dst: &mut [f32],
    cp: usize,
    pixels: &[Pixel],
    residual: bool,
) {
    let block = NV * S::F32_LANES;
    let cin = conv.cin;
    let run = 3 * cin;
    let w = S::as_simd_f32s(conv.w.get()).0;
    let bias = S::as_simd_f32s(conv.b.get()).0;
    let zero = simd.splat_f32s(0.0);
    for (cbi, (wb, bias)) in w
        .chunks_exact(9 * cin * NV)
        .zip(bias.chunks_exact(NV))
        .enumerate()
    {
        let cb = cbi * block;
        for tile in pixels.chunks(MR) {
            // A short last tile repeats its last square.
            let count = tile.len();
            let mut corner = [0usize; MR];
            for (r, c) in corner.iter_mut().enumerate() {
                *c = tile[r.min(count - 1)].corner as usize * cin;
            }
            let mut acc = [[zero; NV]; MR];
            for row in &mut acc {
                row.copy_from_slice(bias);
            }
            for (dy, wt) in wb.chunks_exact(run * NV).enumerate() {
                let mut rows: [&[f32]; MR] = [&[]; MR];
                for r in 0..MR {
                    rows[r] = &src[corner[r] + dy * PADDED * cin..][..run];
                }
                mac::<S, MR, NV>(simd, &mut acc, &rows, wt);
            }
            for (p, acc) in tile.iter().zip(&acc) {
                let out = S::as_mut_simd_f32s(&mut dst[p.center as usize * cp + cb..][..block]).0;
                for (o, &a) in out.iter_mut().zip(acc) {
                    let x = if residual { simd.add_f32s(a, *o) } else { a };
                    *o = simd.max_f32s(x, zero);
                }
            }
        }
    }
}

/// An output square of a chunk, as offsets in squares into the bordered buffers: the
/// top-left tap of its 3×3 window, and its centre.
#[derive(Clone, Copy, Debug, Default)]
struct Pixel {
    corner: u32,
    center: u32,
}

/// The output squares of `n` positions, position by position, row by row.
fn pixel_table(n: usize) -> Vec<Pixel> {
    (0..n * PLANE_SIZE)
        .map(|p| {
            let (pos, sq) = (p / PLANE_SIZE, p % PLANE_SIZE);
            let base = pos * PADDED_SQUARES;
            Pixel {
                corner: (base + (sq / 7) * PADDED + sq % 7) as u32,
                center: (base + padded_center(sq)) as u32,
            }
        })
        .collect()
}

/// 1×1 convolution to `conv.cout` channels + bias + ReLU, from `src` (`[n][81][cp]`) into
/// `feat` laid out like burn's flatten of `[n, cout, 7, 7]`: `[n][cout·49]`.
#[inline(always)]
fn conv1<S: Simd>(simd: S, conv: &Conv1, src: &[f32], feat: &mut Vec<f32>, cp: usize, n: usize) {
    let cout = conv.cout;
    zeroed(feat, n * cout * PLANE_SIZE);
    let w = S::as_simd_f32s(conv.w.get()).0;
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

/// Where the rows of a [`dense`] call lie: `n` rows, those of its input `a_stride` floats
/// apart (each holds the layer's `k` inputs first), those of its output `out_stride` apart.
#[derive(Clone, Copy, Debug)]
struct Rows {
    n: usize,
    a_stride: usize,
    out_stride: usize,
}

impl Rows {
    /// `n` rows packed one after the other.
    fn packed(n: usize, layer: &Dense) -> Rows {
        Rows {
            n,
            a_stride: layer.k,
            out_stride: layer.np,
        }
    }
}

/// `out[i] = a[i] · w + b` (ReLU when `relu`) for the rows of `a` (`layer.k` values each);
/// `out` rows hold `layer.np` values. Column block by column block (its weights stay in L1
/// across the rows), tiles of `MR` rows, the last rows in tiles of 4, 2 and 1.
#[inline(always)]
fn dense<S: Simd, const MR: usize, const NV: usize>(
    simd: S,
    layer: &Dense,
    a: &[f32],
    out: &mut [f32],
    rows: Rows,
    relu: bool,
) {
    let (k, n) = (layer.k, rows.n);
    let w = S::as_simd_f32s(layer.w.get()).0;
    let bias = S::as_simd_f32s(layer.b.get()).0;
    for (cbi, (wb, bias)) in w
        .chunks_exact(k * NV)
        .zip(bias.chunks_exact(NV))
        .enumerate()
    {
        let mut tile = 0;
        while tile + MR <= n {
            dense_tile::<S, MR, NV>(simd, layer, a, out, wb, bias, rows, tile, cbi, relu);
            tile += MR;
        }
        // The rest in tiles of 4, 2 and 1 rows: one row alone does a load per
        // multiply-add, and with chunks of 16 rows and 6-row tiles that was 4 rows of 16.
        if MR > 4 && tile + 4 <= n {
            dense_tile::<S, 4, NV>(simd, layer, a, out, wb, bias, rows, tile, cbi, relu);
            tile += 4;
        }
        if MR > 2 && tile + 2 <= n {
            dense_tile::<S, 2, NV>(simd, layer, a, out, wb, bias, rows, tile, cbi, relu);
            tile += 2;
        }
        while tile < n {
            dense_tile::<S, 1, NV>(simd, layer, a, out, wb, bias, rows, tile, cbi, relu);
            tile += 1;
        }
    }
}

/// Rows `tile..tile + R` of column block `cbi` of [`dense`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn dense_tile<S: Simd, const R: usize, const NV: usize>(
    simd: S,
    layer: &Dense,
    a: &[f32],
    out: &mut [f32],
    wb: &[S::f32s],
    bias: &[S::f32s],
    rows: Rows,
    tile: usize,
    cbi: usize,
    relu: bool,
) {
    let (k, block) = (layer.k, NV * S::F32_LANES);
    let zero = simd.splat_f32s(0.0);
    let mut inputs: [&[f32]; R] = [&[]; R];
    for (r, row) in inputs.iter_mut().enumerate() {
        *row = &a[(tile + r) * rows.a_stride..][..k];
    }
    let mut acc = [[zero; NV]; R];
    for row in &mut acc {
        row.copy_from_slice(bias);
    }
    mac::<S, R, NV>(simd, &mut acc, &inputs, wb);
    for (r, acc) in acc.iter().enumerate() {
        let start = (tile + r) * rows.out_stride + cbi * block;
        let o = S::as_mut_simd_f32s(&mut out[start..][..block]).0;
        for (o, &a) in o.iter_mut().zip(acc) {
            *o = if relu { simd.max_f32s(a, zero) } else { a };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::INPUT_SIZE;
    use burn::tensor::Device;

    /// Every kernel variant (scalar 4×4, AVX2 5×16, AVX-512 8×32 where the CPU has it; the
    /// tower's convolutions direct and by Winograd) agrees with burn, with the basic input
    /// planes, with the King planes and with the threat planes.
    #[test]
    fn every_instruction_set_gives_burns_outputs() {
        for planes in crate::encoding::LAYOUTS {
            agrees_with_burn(planes);
        }
    }

    fn agrees_with_burn(planes: usize) {
        // Batches of 1, 11 and 23 positions: short tiles, one-row dense tails, and chunks
        // split across threads.
        let device = Device::flex();
        let config = NetConfig::new()
            .with_channels(12)
            .with_blocks(1)
            .with_planes(planes);
        assert_eq!(config.planes(), planes);
        let size = config.input_size();
        let model = config.init(&device);
        assert_eq!(model.config(), config);
        let base = FastNet::from_model(&model);
        assert_eq!(base.input_size(), size);
        // Positions a few plies in, where the King planes are not empty.
        let mut game = brandubh_rules::Game::default();
        for ply in 0..8 {
            let moves = game.legal_moves();
            game.play_unchecked(moves[(ply * 7) % moves.len()]);
        }
        let here = *game.position();
        let mut inputs = crate::encoding::encode_planes(&here, 1, planes);
        for mv in here.legal_moves().iter().take(22) {
            let next = here.play_unchecked(*mv).position;
            inputs.extend(crate::encoding::encode_planes(&next, 2, planes));
        }
        assert_eq!(inputs.len(), 23 * size);
        let (logits, values) = model.infer(&inputs, &device);
        for (level, algorithm) in variants() {
            let Some(net) = base.with_simd_level(level) else {
                assert_eq!(level, SimdLevel::Avx512, "{level:?} must be available");
                continue;
            };
            let net = net.with_conv_algorithm(algorithm);
            assert_eq!(net.simd_level(), level);
            assert_eq!(net.conv_algorithm(), algorithm);
            let name = format!("{} {} {planes} planes", level.name(), algorithm.name());
            for (n, chunk) in [(1, 16), (11, 16), (23, 16), (23, 3)] {
                let out = net
                    .clone()
                    .with_chunk_size(chunk)
                    .forward(&inputs[..n * size]);
                let diff = max_diff(&logits[..n * POLICY_SIZE], &values[..n], &out);
                assert!(
                    diff < 1e-4,
                    "{name}, batch {n}: differs from burn by {diff}"
                );
            }
        }
    }

    /// The encoded positions after the first `n` legal moves from the start, each seen for
    /// the `repetitions`-th time.
    fn after_first_moves(n: usize, repetitions: u32) -> Vec<f32> {
        let start = brandubh_rules::Position::start();
        start
            .legal_moves()
            .iter()
            .take(n)
            .flat_map(|mv| {
                crate::encoding::encode(&start.play_unchecked(*mv).position, repetitions)
            })
            .collect()
    }

    /// The largest difference between burn's outputs and `out` (its first positions).
    fn max_diff(logits: &[f32], values: &[f32], out: &FastOutput) -> f32 {
        logits
            .iter()
            .chain(values)
            .zip(out.policy_logits.iter().chain(&out.values))
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max)
    }

    /// Every kernel variant here and both convolution algorithms, with the levels to test:
    /// scalar, AVX2 (every x86-64 CPU this project targets has it) and AVX-512 (run where
    /// the CPU has it).
    fn variants() -> Vec<(SimdLevel, ConvAlgorithm)> {
        let mut levels = vec![SimdLevel::Scalar];
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
                levels.push(SimdLevel::Avx2);
            }
            levels.push(SimdLevel::Avx512);
        }
        levels
            .into_iter()
            .flat_map(|l| [ConvAlgorithm::Winograd, ConvAlgorithm::Direct].map(|a| (l, a)))
            .collect()
    }

    /// Wider networks take the other paths of the Winograd transforms (channel vectors per
    /// square with no constant: 12 on AVX2 at 96 channels, every count on the scalar
    /// kernels; fewer positions through the tower at a time), the AVX-512 kernels' 8 × 3
    /// tile and the direct convolution's column blocks: 40 channels (padded to 48) and 96,
    /// every variant against burn.
    #[test]
    fn wider_networks_give_burns_outputs() {
        let device = Device::flex();
        let inputs = after_first_moves(5, 1);
        for channels in [40, 96] {
            device.seed(channels as u64);
            let model = NetConfig::new()
                .with_channels(channels)
                .with_blocks(1)
                .init(&device);
            let (logits, values) = model.infer(&inputs, &device);
            let base = FastNet::from_model(&model);
            for (level, algorithm) in variants() {
                let Some(net) = base.with_simd_level(level) else {
                    continue;
                };
                let out = net.with_conv_algorithm(algorithm).forward(&inputs);
                let diff = max_diff(&logits, &values, &out);
                assert!(
                    diff < 1e-4,
                    "C{channels} {level:?} {algorithm:?}: differs from burn by {diff}"
                );
            }
        }
    }

    /// A thread's buffers, grown by a larger chunk, serve a smaller one after it: the same
    /// outputs, to the bit, as the first positions of the larger chunk (every output square
    /// and every position is computed on its own), for every kernel variant here.
    #[test]
    fn a_smaller_chunk_after_a_larger_one_gives_the_same_outputs() {
        let device = Device::flex();
        let model = NetConfig::new()
            .with_channels(12)
            .with_blocks(1)
            .init(&device);
        let inputs = after_first_moves(20, 2);
        let one_thread = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let base = FastNet::from_model(&model).with_chunk_size(64);
        for (level, algorithm) in variants() {
            let Some(net) = base.with_simd_level(level) else {
                continue;
            };
            let net = net.with_conv_algorithm(algorithm);
            let (large, small) = one_thread
                .install(|| (net.forward(&inputs), net.forward(&inputs[..7 * INPUT_SIZE])));
            assert_eq!(
                small.policy_logits[..],
                large.policy_logits[..7 * POLICY_SIZE],
                "{level:?} {algorithm:?}"
            );
            assert_eq!(
                small.values[..],
                large.values[..7],
                "{level:?} {algorithm:?}"
            );
        }
    }
}
