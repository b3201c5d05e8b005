//! Winograd's F(4×4, 3×3) for the 3×3 convolutions of the residual tower: the 7×7 board is
//! covered by 2×2 tiles of 4×4 output squares (8×8, one row and one column more than the
//! board), each computed from a 6×6 window of inputs as
//!
//! ```text
//! Y = Aᵀ [ (G g Gᵀ) ⊙ (Bᵀ d B) ] A
//! ```
//!
//! (Lavin and Gray, "Fast Algorithms for Convolutional Neural Networks", 2015; interpolation
//! points 0, ±1, ±2, ∞). Summed over input channels, the element-wise product becomes one
//! matrix product per Winograd point: 36 products of `[4·n tiles, cin] × [cin, cout]`. A
//! position costs 4 · 36 = 144 multiply-adds per input and output channel pair, against
//! 49 · 9 = 441 for the direct convolution: about a third, plus the two transforms, which
//! grow with the channels and not with their square.
//!
//! The transformed weights (`G g Gᵀ`) are computed once, in `f64`; the outputs agree with
//! the direct convolution to float rounding (tested against burn like every kernel).

use pulp::Simd;

use super::{Aligned, Dense, PADDED, PADDED_SQUARES, Rows, dense};
use crate::folded::FoldedConv;

/// Winograd points of a tile: its transformed 6×6 window.
pub(super) const POINTS: usize = 36;
/// Tiles per position: 2×2 tiles of 4×4 output squares.
pub(super) const TILES: usize = 4;
/// Output squares of a tile along each side.
const OUT: usize = 4;
/// Input squares of a tile's window along each side.
const WINDOW: usize = 6;
/// Squares of the board along each side.
const BOARD: usize = 7;
/// Input channels of a Winograd convolution are padded to a multiple of this (every vector
/// width the kernels use divides it; the output channels are padded further, to
/// `super::channel_align`).
pub(super) const INPUT_ALIGN: usize = 16;

/// `G`: a 3-tap kernel row to its 6 Winograd points.
const G: [[f64; 3]; WINDOW] = [
    [1.0 / 4.0, 0.0, 0.0],
    [-1.0 / 6.0, -1.0 / 6.0, -1.0 / 6.0],
    [-1.0 / 6.0, 1.0 / 6.0, -1.0 / 6.0],
    [1.0 / 24.0, 1.0 / 12.0, 1.0 / 6.0],
    [1.0 / 24.0, -1.0 / 12.0, 1.0 / 6.0],
    [0.0, 0.0, 1.0],
];

/// A 3×3 convolution (batch norm folded) as 36 matrix products, one per Winograd point:
/// point `p`'s weights are `(G g Gᵀ)[p / 6][p % 6]` of every (input, output) channel pair,
/// packed as a [`Dense`] layer `[cin] → [cp]` without bias (the bias is added after the
/// output transform).
#[derive(Clone, Debug)]
pub(super) struct WinogradConv {
    cin: usize,
    cp: usize,
    points: Vec<Dense>,
    bias: Aligned,
}

impl WinogradConv {
    /// From `[cout][cin][3][3]`; `cin_padded` is a multiple of [`INPUT_ALIGN`], `cp` of
    /// `super::channel_align`. The training step transforms its weights every step: one input
    /// channel at a time, all output channels side by side (each sum in `f64`, in the order of
    /// its terms), written straight into the packed layout of [`Dense`].
    pub(super) fn new(
        layer: &FoldedConv,
        cin_padded: usize,
        cp: usize,
        block: usize,
    ) -> WinogradConv {
        debug_assert_eq!(layer.kernel, 3);
        debug_assert_eq!(cin_padded % INPUT_ALIGN, 0);
        debug_assert_eq!(cp % block, 0);
        let (cout, cin) = (layer.cout, layer.cin);
        // Point p's weights as a `Dense` layer `[cin_padded] → [cp]`.
        let mut points: Vec<Dense> = (0..POINTS)
            .map(|_| Dense::zeros(cin_padded, cp, block))
            .collect();
        // taps[k][j][co] = g[co][ci][k][j]; gg[a][j][co] = (G g)[a][j]; u[co] = (G g Gᵀ)[a][b].
        let mut taps = vec![0.0f64; 9 * cout];
        let mut gg = vec![0.0f64; WINDOW * 3 * cout];
        let mut u = vec![0.0f32; cout];
        for ci in 0..cin {
            for co in 0..cout {
                let g = &layer.weight[(co * cin + ci) * 9..][..9];
                for (tap, &w) in g.iter().enumerate() {
                    taps[tap * cout + co] = f64::from(w);
                }
            }
            for (a, g_row) in G.iter().enumerate() {
                for j in 0..3 {
                    let dst = &mut gg[(a * 3 + j) * cout..][..cout];
                    let (t0, t1, t2) = (
                        &taps[j * cout..][..cout],
                        &taps[(3 + j) * cout..][..cout],
                        &taps[(6 + j) * cout..][..cout],
                    );
                    for (co, d) in dst.iter_mut().enumerate() {
                        *d = g_row[0] * t0[co] + g_row[1] * t1[co] + g_row[2] * t2[co];
                    }
                }
            }
            for a in 0..WINDOW {
                let row = |j: usize| &gg[(a * 3 + j) * cout..][..cout];
                let (r0, r1, r2) = (row(0), row(1), row(2));
                for (b, g_col) in G.iter().enumerate() {
                    for (co, d) in u.iter_mut().enumerate() {
                        *d = (r0[co] * g_col[0] + r1[co] * g_col[1] + r2[co] * g_col[2]) as f32;
                    }
                    points[a * WINDOW + b].set_row(ci, &u, block);
                }
            }
        }
        let mut bias = vec![0.0; cp];
        bias[..cout].copy_from_slice(&layer.bias);
        WinogradConv {
            cin: cin_padded,
            cp,
            points,
            bias: Aligned::from_slice(&bias),
        }
    }

    /// Input channels (padded).
    pub(super) fn cin(&self) -> usize {
        self.cin
    }

    /// Floats of the transformed inputs of `n` positions.
    pub(super) fn input_len(&self, n: usize) -> usize {
        TILES * n * POINTS * self.cin
    }

    /// Floats of the products of `n` positions.
    pub(super) fn output_len(&self, n: usize) -> usize {
        TILES * n * POINTS * self.cp
    }
}

/// The buffers of one convolution, of [`WinogradConv::input_len`] and
/// [`WinogradConv::output_len`] floats: the transformed inputs (`[4·n][36][cin]`) and the
/// products (`[4·n][36][cp]`), tile by tile, so that the transforms read and write one
/// contiguous run per tile, and the matrix product of a point reads rows `36·cin` apart.
pub(super) struct Work<'a> {
    pub(super) v: &'a mut [f32],
    pub(super) m: &'a mut [f32],
}

/// What the output transform does with a tile's outputs `y` at a board square whose value
/// in the destination is `o`.
#[derive(Clone, Copy)]
pub(super) enum Out<'a, S: Simd> {
    /// `o = relu(y + bias [+ o])` (inference: batch norm folded into the bias; `true`: add
    /// the residual already in the destination).
    Relu(&'a [S::f32s], bool),
    /// `o = y`: the raw convolution (training keeps it for batch norm).
    Store,
    /// `o += y`: a gradient added to the one already there (a residual's).
    Add,
}

/// [`WinogradConv`] `conv` + bias (+ the destination's old value when `residual`), then
/// ReLU, from `src` (`[n][PADDED²][cin]`, zero-bordered) into the board squares of `dst`
/// (`[n][PADDED²][cp]`).
#[inline(always)]
pub(super) fn conv<S: Simd, const MR: usize, const NV: usize>(
    simd: S,
    conv: &WinogradConv,
    src: &[f32],
    dst: &mut [f32],
    n: usize,
    work: Work<'_>,
    residual: bool,
) {
    let bias = S::as_simd_f32s(conv.bias.get()).0;
    conv_out::<S, MR, NV>(simd, conv, src, dst, n, work, Out::Relu(bias, residual));
}

/// [`WinogradConv`] `conv` from `src` (`[n][PADDED²][cin]`, zero-bordered) into the board
/// squares of `dst` (`[n][PADDED²][cp]`), combined with what is there as `out` says.
#[inline(always)]
pub(super) fn conv_out<S: Simd, const MR: usize, const NV: usize>(
    simd: S,
    conv: &WinogradConv,
    src: &[f32],
    dst: &mut [f32],
    n: usize,
    work: Work<'_>,
    out: Out<'_, S>,
) {
    let rows = TILES * n;
    let (cin, cp, v, m) = (conv.cin, conv.cp, work.v, work.m);
    transform_inputs(simd, src, cin, n, v);
    let strides = Rows {
        n: rows,
        a_stride: POINTS * cin,
        out_stride: POINTS * cp,
    };
    for (p, layer) in conv.points.iter().enumerate() {
        let (a, out) = (&v[p * cin..], &mut m[p * cp..]);
        if MR.is_multiple_of(TILES) {
            dense::<S, MR, NV>(simd, layer, a, out, strides, false);
        } else {
            // The rows are 4 tiles a position: tiles of 4 rows use them all, where AVX2's
            // 5-row tiles would leave 3 rows of 8 to a 2- and a 1-row tile (0.6–0.7× with
            // 64 channels on Zen 5).
            dense::<S, 4, NV>(simd, layer, a, out, strides, false);
        }
    }
    match out {
        Out::Relu(bias, residual) => outputs::<S, RELU>(simd, m, cp, n, dst, (bias, residual)),
        Out::Store => outputs::<S, STORE>(simd, m, cp, n, dst, (&[], false)),
        Out::Add => outputs::<S, ADD>(simd, m, cp, n, dst, (&[], false)),
    }
}

/// Runs `$call` with `$cv` a constant: the channel vectors per square `$vectors` where it is
/// one of the common counts listed, so that the transforms' index arithmetic folds into the
/// addressing (a third less time), else 0 (the transform computes it at run time). Only the
/// counts that `$simd`'s vector width can meet are compiled for it (channels come in
/// multiples of [`INPUT_ALIGN`]): the branches on them are constants.
macro_rules! with_vectors {
    ($simd:ident, $vectors:expr, [$($k:literal),*], $cv:ident => $call:block) => {{
        let vectors = $vectors;
        $(
            if const { ($k * $simd::F32_LANES).is_multiple_of(INPUT_ALIGN) } && vectors == $k {
                const $cv: usize = $k;
                $call
                return;
            }
        )*
        const $cv: usize = 0;
        $call
    }};
}

/// [`output_transform`]'s modes, as constants so that each is a loop of its own: what
/// [`Out`] says.
const RELU: u8 = 0;
const STORE: u8 = 1;
const ADD: u8 = 2;

/// [`output_transform`] with the channel vectors per square as a constant where common.
#[inline(always)]
fn outputs<S: Simd, const MODE: u8>(
    simd: S,
    m: &[f32],
    cp: usize,
    n: usize,
    dst: &mut [f32],
    relu: (&[S::f32s], bool),
) {
    with_vectors!(S, cp / S::F32_LANES, [2, 3, 4], CV => {
        output_transform::<S, CV, MODE>(simd, m, cp, n, dst, relu);
    });
}

/// `v[tile][p][c] = (Bᵀ d B)[p]` for every tile's 6×6 window `d` of `src` (`[n][PADDED²][cin]`),
/// `cin` a multiple of the vector width: the transformed inputs of [`conv_out`], which the
/// weight gradient ([`weight_grad`]) reads too.
#[inline(always)]
pub(super) fn transform_inputs<S: Simd>(simd: S, src: &[f32], cin: usize, n: usize, v: &mut [f32]) {
    with_vectors!(S, cin / S::F32_LANES, [1, 2, 3, 4], CV => {
        input_transform::<S, CV>(simd, src, cin, n, v);
    });
}

/// `Bᵀ d` of one column (or row) of a window.
#[inline(always)]
fn bt<S: Simd>(simd: S, d: [S::f32s; WINDOW]) -> [S::f32s; WINDOW] {
    let (two, four, five) = (
        simd.splat_f32s(2.0),
        simd.splat_f32s(4.0),
        simd.splat_f32s(5.0),
    );
    // No closures here: a closure does not inherit the caller's SIMD target features.
    // d4 - 4 d2, d3 - 4 d1, d4 - d2, d3 - d1.
    let p = simd.negate_mul_add_f32s(four, d[2], d[4]);
    let q = simd.negate_mul_add_f32s(four, d[1], d[3]);
    let r = simd.sub_f32s(d[4], d[2]);
    let s = simd.sub_f32s(d[3], d[1]);
    [
        simd.negate_mul_add_f32s(five, d[2], simd.mul_add_f32s(four, d[0], d[4])),
        simd.add_f32s(p, q),
        simd.sub_f32s(p, q),
        simd.mul_add_f32s(two, s, r),
        simd.negate_mul_add_f32s(two, s, r),
        simd.negate_mul_add_f32s(five, d[3], simd.mul_add_f32s(four, d[1], d[5])),
    ]
}

/// `Aᵀ m` of one column (or row) of a tile's products.
#[inline(always)]
fn at<S: Simd>(simd: S, m: [S::f32s; WINDOW]) -> [S::f32s; OUT] {
    let a = simd.add_f32s(m[1], m[2]);
    let b = simd.sub_f32s(m[1], m[2]);
    let c = simd.add_f32s(m[3], m[4]);
    let d = simd.sub_f32s(m[3], m[4]);
    [
        simd.add_f32s(simd.add_f32s(m[0], a), c),
        simd.mul_add_f32s(simd.splat_f32s(2.0), d, b),
        simd.mul_add_f32s(simd.splat_f32s(4.0), c, a),
        simd.add_f32s(simd.mul_add_f32s(simd.splat_f32s(8.0), d, b), m[5]),
    ]
}

/// `v[tile][p][c] = (Bᵀ d B)[p]` for every tile's 6×6 window `d` of `src`; `CV` is the
/// number of vectors of `cin` channels, or 0 to compute it.
#[inline(always)]
fn input_transform<S: Simd, const CV: usize>(
    simd: S,
    src: &[f32],
    cin: usize,
    n: usize,
    v: &mut [f32],
) {
    let cv = if CV == 0 { cin / S::F32_LANES } else { CV };
    let src = S::as_simd_f32s(&src[..n * PADDED_SQUARES * cin]).0;
    let v = S::as_mut_simd_f32s(v).0;
    for pos in 0..n {
        for tile in 0..TILES {
            let row = pos * TILES + tile;
            // The window's top-left square is the board's (OUT·ty − 1, OUT·tx − 1), the
            // bordered board's (OUT·ty, OUT·tx).
            let corner = pos * PADDED_SQUARES + OUT * (tile / 2) * PADDED + OUT * (tile % 2);
            for c in 0..cv {
                // Array expressions rather than zeroed arrays filled in place: LLVM turns a
                // zeroed array of vectors into a call to memset (13 % of the time).
                let start = |j: usize| (corner + j) * cv + c;
                let t = [
                    bt(simd, column(src, start(0), PADDED * cv)),
                    bt(simd, column(src, start(1), PADDED * cv)),
                    bt(simd, column(src, start(2), PADDED * cv)),
                    bt(simd, column(src, start(3), PADDED * cv)),
                    bt(simd, column(src, start(4), PADDED * cv)),
                    bt(simd, column(src, start(5), PADDED * cv)),
                ];
                for i in 0..WINDOW {
                    let r = bt(simd, [t[0][i], t[1][i], t[2][i], t[3][i], t[4][i], t[5][i]]);
                    for (j, x) in r.into_iter().enumerate() {
                        v[(row * POINTS + i * WINDOW + j) * cv + c] = x;
                    }
                }
            }
        }
    }
}

/// The column of 6 vectors `x[start + i · stride]`.
#[inline(always)]
fn column<T: Copy>(x: &[T], start: usize, stride: usize) -> [T; WINDOW] {
    [
        x[start],
        x[start + stride],
        x[start + 2 * stride],
        x[start + 3 * stride],
        x[start + 4 * stride],
        x[start + 5 * stride],
    ]
}

/// `Aᵀ m A` on the board squares of every tile, into `dst` as `MODE` says (with `RELU`,
/// `relu` is the bias and whether to add the residual in `dst`); `CV` is the number of
/// vectors of `cp` channels, or 0 to compute it.
#[inline(always)]
fn output_transform<S: Simd, const CV: usize, const MODE: u8>(
    simd: S,
    m: &[f32],
    cp: usize,
    n: usize,
    dst: &mut [f32],
    (bias, residual): (&[S::f32s], bool),
) {
    let cv = if CV == 0 { cp / S::F32_LANES } else { CV };
    let m = S::as_simd_f32s(m).0;
    let dst = S::as_mut_simd_f32s(&mut dst[..n * PADDED_SQUARES * cp]).0;
    let zero = simd.splat_f32s(0.0);
    // Point (i, j) of a tile's products is at `m[(row · 36 + i · 6 + j) · cv + c]`.
    let point = cv;
    for pos in 0..n {
        for tile in 0..TILES {
            let row = pos * TILES + tile;
            let (y0, x0) = (OUT * (tile / 2), OUT * (tile % 2));
            let (ny, nx) = (OUT.min(BOARD - y0), OUT.min(BOARD - x0));
            for c in 0..cv {
                // Aᵀ of the 6 columns: s[j][i] (see input_transform on array expressions).
                let at0 = row * POINTS * cv + c;
                let s = [
                    at(simd, column(m, at0, WINDOW * point)),
                    at(simd, column(m, at0 + point, WINDOW * point)),
                    at(simd, column(m, at0 + 2 * point, WINDOW * point)),
                    at(simd, column(m, at0 + 3 * point, WINDOW * point)),
                    at(simd, column(m, at0 + 4 * point, WINDOW * point)),
                    at(simd, column(m, at0 + 5 * point, WINDOW * point)),
                ];
                #[expect(
                    clippy::needless_range_loop,
                    reason = "`i` picks one row out of all six columns, and the output's rank"
                )]
                for i in 0..ny {
                    let r = at(simd, [s[0][i], s[1][i], s[2][i], s[3][i], s[4][i], s[5][i]]);
                    for (j, y) in r.into_iter().enumerate().take(nx) {
                        let sq = pos * PADDED_SQUARES + (y0 + i + 1) * PADDED + x0 + j + 1;
                        let o = &mut dst[sq * cv + c];
                        *o = match MODE {
                            RELU => {
                                let x = simd.add_f32s(y, bias[c]);
                                let x = if residual { simd.add_f32s(x, *o) } else { x };
                                simd.max_f32s(x, zero)
                            }
                            STORE => y,
                            _ => simd.add_f32s(y, *o),
                        };
                    }
                }
            }
        }
    }
}

/// `A d` of one column (or row) of a tile's 4×4 output gradients: the 6 points whose
/// products with the transformed inputs give the weight gradient (see [`weight_grad`]).
#[inline(always)]
fn a6<S: Simd>(simd: S, d: [S::f32s; OUT]) -> [S::f32s; WINDOW] {
    let even = simd.add_f32s(d[0], d[2]);
    let odd = simd.add_f32s(d[1], d[3]);
    let even4 = simd.mul_add_f32s(simd.splat_f32s(4.0), d[2], d[0]);
    let odd8 = simd.mul_add_f32s(
        simd.splat_f32s(8.0),
        d[3],
        simd.mul_f32s(simd.splat_f32s(2.0), d[1]),
    );
    [
        d[0],
        simd.add_f32s(even, odd),
        simd.sub_f32s(even, odd),
        simd.add_f32s(even4, odd8),
        simd.sub_f32s(even4, odd8),
        d[3],
    ]
}

/// `y[tile][p][c] = (A g Aᵀ)[p]` for every tile's 4×4 block `g` of output gradients in `src`
/// (`[n][PADDED²][cp]`, zero outside the board): the other factor of [`weight_grad`].
#[inline(always)]
pub(super) fn transform_grads<S: Simd>(simd: S, src: &[f32], cp: usize, n: usize, y: &mut [f32]) {
    with_vectors!(S, cp / S::F32_LANES, [1, 2, 3, 4], CV => {
        grads_transform::<S, CV>(simd, src, cp, n, y);
    });
}

/// [`transform_grads`] with `CV` vectors of channels per square (0: computed).
#[inline(always)]
fn grads_transform<S: Simd, const CV: usize>(
    simd: S,
    src: &[f32],
    cp: usize,
    n: usize,
    y: &mut [f32],
) {
    let cv = if CV == 0 { cp / S::F32_LANES } else { CV };
    let src = S::as_simd_f32s(&src[..n * PADDED_SQUARES * cp]).0;
    let y = S::as_mut_simd_f32s(&mut y[..TILES * n * POINTS * cp]).0;
    for pos in 0..n {
        for tile in 0..TILES {
            let row = pos * TILES + tile;
            // The tile's top-left output square is the board's (OUT·ty, OUT·tx).
            let corner =
                pos * PADDED_SQUARES + (OUT * (tile / 2) + 1) * PADDED + OUT * (tile % 2) + 1;
            for c in 0..cv {
                let at = |i: usize, j: usize| src[(corner + i * PADDED + j) * cv + c];
                let t = [
                    a6(simd, [at(0, 0), at(1, 0), at(2, 0), at(3, 0)]),
                    a6(simd, [at(0, 1), at(1, 1), at(2, 1), at(3, 1)]),
                    a6(simd, [at(0, 2), at(1, 2), at(2, 2), at(3, 2)]),
                    a6(simd, [at(0, 3), at(1, 3), at(2, 3), at(3, 3)]),
                ];
                for i in 0..WINDOW {
                    let r = a6(simd, [t[0][i], t[1][i], t[2][i], t[3][i]]);
                    for (j, x) in r.into_iter().enumerate() {
                        y[(row * POINTS + i * WINDOW + j) * cv + c] = x;
                    }
                }
            }
        }
    }
}

/// `acc[p][ci][co] += Σ_tiles v[tile][p][ci] · y[tile][p][co]` over the `rows` tiles of
/// [`transform_inputs`] (`cin` channels) and [`transform_grads`] (`cp` channels): the
/// weight gradient in the Winograd domain, which [`kernel_grad`] takes back to 3×3.
///
/// Why it holds: a tile's outputs are `Y = Aᵀ [U ⊙ V] A` with `U = G g Gᵀ`, so
/// `Σ dY ⊙ Y = Σ_p (A dY Aᵀ)_p U_p V_p` and the gradient of `g` is
/// `Gᵀ [(A dY Aᵀ) ⊙ V] G`, summed over tiles.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) fn weight_grad<S: Simd, const MR: usize, const NV: usize>(
    simd: S,
    v: &[f32],
    y: &[f32],
    rows: usize,
    cin: usize,
    cp: usize,
    acc: &mut [f32],
) {
    for p in 0..POINTS {
        super::grad::tn_for::<S, MR, NV>(
            simd,
            super::grad::Tn {
                a: &v[p * cin..],
                a_stride: POINTS * cin,
                w: &y[p * cp..],
                w_stride: POINTS * cp,
                k: rows,
                m: cin,
                cols: cp,
            },
            &mut acc[p * cin * cp..(p + 1) * cin * cp],
        );
    }
}

/// The 3×3 weight gradient `[cout][cin][3][3]` of the Winograd-domain sums `acc`
/// (`[36][cin_padded][cp]`, from [`weight_grad`]): `Gᵀ acc G` per channel pair, in `f64`.
pub(super) fn kernel_grad(
    acc: &[f32],
    cin_padded: usize,
    cp: usize,
    cout: usize,
    cin: usize,
) -> Vec<f32> {
    let mut out = vec![0.0f32; cout * cin * 9];
    // Per input channel, the output channels innermost (each row of `acc` is contiguous in
    // them): T = Gᵀ M (3×6), then T G (3×3), each sum in the order of its terms.
    let mut t = vec![0.0f64; 3 * WINDOW * cout];
    let mut g = vec![0.0f64; cout];
    for ci in 0..cin {
        t.fill(0.0);
        for a in 0..WINDOW {
            for b in 0..WINDOW {
                let row = &acc[((a * WINDOW + b) * cin_padded + ci) * cp..][..cout];
                for k in 0..3 {
                    let dst = &mut t[(k * WINDOW + b) * cout..][..cout];
                    for (d, &m) in dst.iter_mut().zip(row) {
                        *d += G[a][k] * f64::from(m);
                    }
                }
            }
        }
        for k in 0..3 {
            for l in 0..3 {
                g.fill(0.0);
                for b in 0..WINDOW {
                    let src = &t[(k * WINDOW + b) * cout..][..cout];
                    for (d, &x) in g.iter_mut().zip(src) {
                        *d += x * G[b][l];
                    }
                }
                for (co, &v) in g.iter().enumerate() {
                    out[(co * cin + ci) * 9 + k * 3 + l] = v as f32;
                }
            }
        }
    }
    out
}

/// The weights `[cin][cout][3][3]` of the convolution that carries output gradients back to
/// the inputs of `weight` (`[cout][cin][3][3]`): every kernel turned half a turn, input and
/// output channels swapped (the transposed convolution, as a convolution with zero padding).
pub(super) fn transposed(weight: &[f32], cout: usize, cin: usize) -> Vec<f32> {
    let mut out = vec![0.0f32; weight.len()];
    for co in 0..cout {
        for ci in 0..cin {
            for tap in 0..9 {
                out[(ci * cout + co) * 9 + 8 - tap] = weight[(co * cin + ci) * 9 + tap];
            }
        }
    }
    out
}
