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

use super::{Aligned, CHANNEL_ALIGN, Dense, PADDED, PADDED_SQUARES, Rows, dense};
use crate::folded::{FoldedConv, FoldedLinear};

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
    /// From `[cout][cin][3][3]`; `cin_padded` and `cp` are multiples of [`CHANNEL_ALIGN`].
    pub(super) fn new(
        layer: &FoldedConv,
        cin_padded: usize,
        cp: usize,
        block: usize,
    ) -> WinogradConv {
        debug_assert_eq!(layer.kernel, 3);
        debug_assert_eq!(cin_padded % CHANNEL_ALIGN, 0);
        let (cout, cin) = (layer.cout, layer.cin);
        // u[p][ci][co], as a linear layer's `[inputs][outputs]` weights.
        let mut u = vec![vec![0.0f32; cin_padded * cp]; POINTS];
        for co in 0..cout {
            for ci in 0..cin {
                let g = &layer.weight[(co * cin + ci) * 9..][..9];
                // G g (6×3), then (G g) Gᵀ (6×6).
                let mut gg = [[0.0f64; 3]; WINDOW];
                for (a, row) in gg.iter_mut().enumerate() {
                    for (j, v) in row.iter_mut().enumerate() {
                        *v = (0..3).map(|k| G[a][k] * f64::from(g[k * 3 + j])).sum();
                    }
                }
                for a in 0..WINDOW {
                    for b in 0..WINDOW {
                        let v: f64 = (0..3).map(|k| gg[a][k] * G[b][k]).sum();
                        u[a * WINDOW + b][ci * cp + co] = v as f32;
                    }
                }
            }
        }
        let points = u
            .into_iter()
            .map(|weight| {
                let linear = FoldedLinear {
                    inputs: cin_padded,
                    outputs: cp,
                    weight,
                    bias: vec![0.0; cp],
                };
                Dense::new(&linear, block)
            })
            .collect();
        let mut bias = vec![0.0; cp];
        bias[..cout].copy_from_slice(&layer.bias);
        WinogradConv {
            cin: cin_padded,
            cp,
            points,
            bias: Aligned::from_slice(&bias),
        }
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
    let rows = TILES * n;
    let (cin, cp, v, m) = (conv.cin, conv.cp, work.v, work.m);
    // The transforms with the channel vectors per square as a constant where it is a
    // common one: their index arithmetic folds into the addressing (a third less time).
    match cin / S::F32_LANES {
        2 => input_transform::<S, 2>(simd, src, cin, n, v),
        4 => input_transform::<S, 4>(simd, src, cin, n, v),
        8 => input_transform::<S, 8>(simd, src, cin, n, v),
        _ => input_transform::<S, 0>(simd, src, cin, n, v),
    }
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
    let bias = S::as_simd_f32s(conv.bias.get()).0;
    let out = (bias, dst, residual);
    match cp / S::F32_LANES {
        2 => output_transform::<S, 2>(simd, m, cp, n, out),
        4 => output_transform::<S, 4>(simd, m, cp, n, out),
        8 => output_transform::<S, 8>(simd, m, cp, n, out),
        _ => output_transform::<S, 0>(simd, m, cp, n, out),
    }
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

/// `dst = relu(Aᵀ m A + bias [+ dst])` on the board squares of every tile, `out` being
/// `(bias, dst, residual)`; `CV` is the number of vectors of `cp` channels, or 0 to compute
/// it.
#[inline(always)]
fn output_transform<S: Simd, const CV: usize>(
    simd: S,
    m: &[f32],
    cp: usize,
    n: usize,
    (bias, dst, residual): (&[S::f32s], &mut [f32], bool),
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
                        let x = simd.add_f32s(y, bias[c]);
                        let x = if residual { simd.add_f32s(x, *o) } else { x };
                        *o = simd.max_f32s(x, zero);
                    }
                }
            }
        }
    }
}
