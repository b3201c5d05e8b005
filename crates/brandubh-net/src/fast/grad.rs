//! The kernels of the training step ([`super::train`]) besides the convolutions: the
//! transposed matrix product that every weight gradient is (`Aᵀ · W`, summed over the batch),
//! and batch norm's passes over the bordered activations (statistics, normalisation, and
//! its backward pass), all on `pulp` vectors of channels.

use pulp::Simd;

use super::{PADDED, PADDED_SQUARES};
use crate::encoding::PLANE_SIZE;

/// Squares of the board along each side.
const BOARD: usize = 7;

/// The operands of [`tn`]: `out[i][j] += Σ_k a[k·a_stride + i] · w[k·w_stride + j]` for
/// `i < m`, `j < cols` (a multiple of the column block), `k < k`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Tn<'a> {
    pub(super) a: &'a [f32],
    pub(super) a_stride: usize,
    pub(super) w: &'a [f32],
    pub(super) w_stride: usize,
    pub(super) k: usize,
    pub(super) m: usize,
    pub(super) cols: usize,
}

/// `out += aᵀ · w` (see [`Tn`]); `out` is `[m][cols]`. Column block by column block, tiles of
/// `MR` rows of `out` (the last in tiles of 4, 2 and 1), each summed over all of `k` in
/// registers: every step of `k` loads one row of the block's `w` and broadcasts `MR` values
/// of `a`.
#[inline(always)]
pub(super) fn tn<S: Simd, const MR: usize, const NV: usize>(simd: S, t: Tn<'_>, out: &mut [f32]) {
    let block = NV * S::F32_LANES;
    debug_assert_eq!(t.cols % block, 0);
    for cb in (0..t.cols).step_by(block) {
        let mut i = 0;
        while i + MR <= t.m {
            tn_tile::<S, MR, NV>(simd, t, out, i, cb);
            i += MR;
        }
        if MR > 4 && i + 4 <= t.m {
            tn_tile::<S, 4, NV>(simd, t, out, i, cb);
            i += 4;
        }
        if MR > 2 && i + 2 <= t.m {
            tn_tile::<S, 2, NV>(simd, t, out, i, cb);
            i += 2;
        }
        while i < t.m {
            tn_tile::<S, 1, NV>(simd, t, out, i, cb);
            i += 1;
        }
    }
}

/// [`tn`] with a row tile that the registers of the kernels whose [`super::tile_shape`]
/// has `MR` rows hold: 8 on AVX-512, else 4 (AVX2's 6 × 2 measured no better than 4 × 2 on
/// the Xeon model 207, within this virtual machine's noise).
#[inline(always)]
pub(super) fn tn_for<S: Simd, const MR: usize, const NV: usize>(
    simd: S,
    t: Tn<'_>,
    out: &mut [f32],
) {
    if MR == 8 {
        tn::<S, 8, NV>(simd, t, out);
    } else {
        tn::<S, 4, NV>(simd, t, out);
    }
}

/// Rows `i0..i0 + R`, columns `cb..cb + block` of [`tn`].
#[inline(always)]
fn tn_tile<S: Simd, const R: usize, const NV: usize>(
    simd: S,
    t: Tn<'_>,
    out: &mut [f32],
    i0: usize,
    cb: usize,
) {
    let block = NV * S::F32_LANES;
    let zero = simd.splat_f32s(0.0);
    let mut acc = [[zero; NV]; R];
    for (r, row) in acc.iter_mut().enumerate() {
        row.copy_from_slice(S::as_simd_f32s(&out[(i0 + r) * t.cols + cb..][..block]).0);
    }
    for kk in 0..t.k {
        let a: &[f32; R] = t.a[kk * t.a_stride + i0..][..R]
            .try_into()
            .unwrap_or_else(|_| unreachable!("a slice of R values"));
        let w = S::as_simd_f32s(&t.w[kk * t.w_stride + cb..][..block]).0;
        for r in 0..R {
            let x = simd.splat_f32s(a[r]);
            for v in 0..NV {
                acc[r][v] = simd.mul_add_f32s(x, w[v], acc[r][v]);
            }
        }
    }
    for (r, row) in acc.iter().enumerate() {
        S::as_mut_simd_f32s(&mut out[(i0 + r) * t.cols + cb..][..block])
            .0
            .copy_from_slice(row);
    }
}

/// The first square of each of the board's rows in a bordered position, in squares.
#[inline(always)]
fn board_rows(pos: usize) -> impl Iterator<Item = usize> {
    (1..=BOARD).map(move |r| pos * PADDED_SQUARES + r * PADDED + 1)
}

/// Adds the lanes of the channel vectors `s` and `q` to `sums` (`[2][cp]`) in `f64`,
/// through `lanes` (`cp` floats).
#[inline(always)]
fn add_lanes<S: Simd>(s: &[S::f32s], q: &[S::f32s], lanes: &mut [f32], sums: &mut [f64]) {
    let cp = lanes.len();
    for (acc, part) in [(0, s), (1, q)] {
        S::as_mut_simd_f32s(lanes).0.copy_from_slice(part);
        for (t, &x) in sums[acc * cp..(acc + 1) * cp].iter_mut().zip(lanes.iter()) {
            *t += f64::from(x);
        }
    }
}

/// Adds each channel's moments over the board squares of positions `0..n` of `z`
/// (`[n][PADDED²][cp]`) to `sums` (`[3][cp]`, see [`moments`]): each position's 49 squares
/// are summed in `f32`, then their squared deviations from that position's own mean, so that
/// no sum of squares of large values is ever subtracted from another (a channel whose mean
/// is a hundred times its spread would otherwise lose its variance to rounding).
#[inline(always)]
pub(super) fn stats<S: Simd>(simd: S, z: &[f32], cp: usize, n: usize, sums: &mut [f64]) {
    let cv = cp / S::F32_LANES;
    let zero = simd.splat_f32s(0.0);
    let inv = simd.splat_f32s(1.0 / PLANE_SIZE as f32);
    let mut s = vec![zero; cv];
    let mut q = vec![zero; cv];
    let mut lanes = vec![0.0f32; cp];
    for pos in 0..n {
        s.fill(zero);
        q.fill(zero);
        for start in board_rows(pos) {
            let row = S::as_simd_f32s(&z[start * cp..(start + BOARD) * cp]).0;
            for sq in row.chunks_exact(cv) {
                for (s, &x) in s.iter_mut().zip(sq) {
                    *s = simd.add_f32s(*s, x);
                }
            }
        }
        let mean: Vec<S::f32s> = s.iter().map(|&s| simd.mul_f32s(s, inv)).collect();
        for start in board_rows(pos) {
            let row = S::as_simd_f32s(&z[start * cp..(start + BOARD) * cp]).0;
            for sq in row.chunks_exact(cv) {
                for ((q, &m), &x) in q.iter_mut().zip(&mean).zip(sq) {
                    let d = simd.sub_f32s(x, m);
                    *q = simd.mul_add_f32s(d, d, *q);
                }
            }
        }
        S::as_mut_simd_f32s(&mut lanes).0.copy_from_slice(&s);
        for (ch, &x) in lanes.iter().enumerate() {
            let x = f64::from(x);
            sums[ch] += x;
            sums[cp + ch] += x * x / PLANE_SIZE as f64;
        }
        S::as_mut_simd_f32s(&mut lanes).0.copy_from_slice(&q);
        for (t, &x) in sums[2 * cp..3 * cp].iter_mut().zip(lanes.iter()) {
            *t += f64::from(x);
        }
    }
}

/// Each channel's mean and (biased) variance over `count` values from sums `[3][c]` of
/// groups of them: `Σ s` (each group's sum), `Σ s²/k` (each group's sum squared over its
/// size `k`) and `Σ q` (each group's squared deviations from its own mean). The
/// between-group part `Σ s²/k − (Σ s)²/count` cancels in `f64`, exactly for the rounded
/// group sums; a group may be a single value (`q = 0`).
pub(super) fn moments(count: f64, sums: &[f64]) -> impl Iterator<Item = (f64, f64)> + '_ {
    let c = sums.len() / 3;
    (0..c).map(move |ch| {
        let (s, s2, q) = (sums[ch], sums[c + ch], sums[2 * c + ch]);
        let mean = s / count;
        let var = ((q + s2 - s * mean) / count).max(0.0);
        (mean, var)
    })
}

/// `dst = relu(z · scale + shift [+ residual])` on the board squares of positions `0..n`
/// (all `[n][PADDED²][cp]`): batch norm with the batch's statistics folded into `scale` and
/// `shift` (`[cp]`), then the skip connection and ReLU.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) fn bn_relu<S: Simd>(
    simd: S,
    z: &[f32],
    residual: Option<&[f32]>,
    dst: &mut [f32],
    scale: &[f32],
    shift: &[f32],
    cp: usize,
    n: usize,
) {
    let cv = cp / S::F32_LANES;
    let (scale, shift) = (S::as_simd_f32s(scale).0, S::as_simd_f32s(shift).0);
    let zero = simd.splat_f32s(0.0);
    for pos in 0..n {
        for start in board_rows(pos) {
            let range = start * cp..(start + BOARD) * cp;
            let zr = S::as_simd_f32s(&z[range.clone()]).0;
            let out = S::as_mut_simd_f32s(&mut dst[range.clone()]).0;
            let squares = out.chunks_exact_mut(cv).zip(zr.chunks_exact(cv));
            if let Some(res) = residual {
                let res = S::as_simd_f32s(&res[range]).0;
                for ((o, z), r) in squares.zip(res.chunks_exact(cv)) {
                    for ((((o, &x), &r), &a), &b) in
                        o.iter_mut().zip(z).zip(r).zip(scale).zip(shift)
                    {
                        *o = simd.max_f32s(simd.add_f32s(simd.mul_add_f32s(x, a, b), r), zero);
                    }
                }
            } else {
                for (o, z) in squares {
                    for (((o, &x), &a), &b) in o.iter_mut().zip(z).zip(scale).zip(shift) {
                        *o = simd.max_f32s(simd.mul_add_f32s(x, a, b), zero);
                    }
                }
            }
        }
    }
}

/// Batch norm's backward sums over the board squares of positions `0..n`: with
/// `g = grad` where `out > 0` (ReLU's gradient), adds `Σ g` and `Σ g · (z − mean)` per channel
/// to `sums` (`[2][cp]`), in `f64` (each position in `f32` first).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) fn bn_grad_sums<S: Simd>(
    simd: S,
    grad: &[f32],
    out: &[f32],
    z: &[f32],
    mean: &[f32],
    cp: usize,
    n: usize,
    sums: &mut [f64],
) {
    let cv = cp / S::F32_LANES;
    let mean = S::as_simd_f32s(mean).0;
    let zero = simd.splat_f32s(0.0);
    let mut s = vec![zero; cv];
    let mut q = vec![zero; cv];
    let mut lanes = vec![0.0f32; cp];
    for pos in 0..n {
        s.fill(zero);
        q.fill(zero);
        for start in board_rows(pos) {
            let range = start * cp..(start + BOARD) * cp;
            let g = S::as_simd_f32s(&grad[range.clone()]).0;
            let o = S::as_simd_f32s(&out[range.clone()]).0;
            let zr = S::as_simd_f32s(&z[range]).0;
            let squares = g
                .chunks_exact(cv)
                .zip(o.chunks_exact(cv))
                .zip(zr.chunks_exact(cv));
            for ((g, o), zr) in squares {
                let lanes = s.iter_mut().zip(q.iter_mut()).zip(mean);
                for ((((s, q), &m), &g), (&o, &z)) in lanes.zip(g).zip(o.iter().zip(zr)) {
                    let gp = simd.select_f32s(simd.greater_than_f32s(o, zero), g, zero);
                    *s = simd.add_f32s(*s, gp);
                    *q = simd.mul_add_f32s(gp, simd.sub_f32s(z, m), *q);
                }
            }
        }
        add_lanes::<S>(&s, &q, &mut lanes, sums);
    }
}

/// The coefficients of batch norm's input gradient `dz = k · g + c1 · z + c0` per channel
/// (`[3][cp]`: `k`, `c1`, `c0`), from [`bn_grad_sums`] over `count` samples.
pub(super) struct BnBack<'a> {
    pub(super) coef: &'a [f32],
}

/// `dz = k · g + c1 · z + c0` (see [`BnBack`]) on the board squares of positions `0..n`,
/// with `g = grad` where `out > 0`; `residual`, when given, receives `g` itself (the
/// gradient that the skip connection carries past the block).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) fn bn_backward<S: Simd>(
    simd: S,
    grad: &[f32],
    out: &[f32],
    z: &[f32],
    back: BnBack<'_>,
    dz: &mut [f32],
    mut residual: Option<&mut [f32]>,
    cp: usize,
    n: usize,
) {
    let cv = cp / S::F32_LANES;
    let coef = S::as_simd_f32s(back.coef).0;
    let (k, c1, c0) = (&coef[..cv], &coef[cv..2 * cv], &coef[2 * cv..3 * cv]);
    let zero = simd.splat_f32s(0.0);
    for pos in 0..n {
        for start in board_rows(pos) {
            let range = start * cp..(start + BOARD) * cp;
            let g = S::as_simd_f32s(&grad[range.clone()]).0;
            let o = S::as_simd_f32s(&out[range.clone()]).0;
            let zr = S::as_simd_f32s(&z[range.clone()]).0;
            let d = S::as_mut_simd_f32s(&mut dz[range.clone()]).0;
            let squares = d.chunks_exact_mut(cv).zip(
                g.chunks_exact(cv)
                    .zip(o.chunks_exact(cv))
                    .zip(zr.chunks_exact(cv)),
            );
            if let Some(res) = residual.as_deref_mut() {
                let res = S::as_mut_simd_f32s(&mut res[range]).0;
                for ((d, ((g, o), z)), r) in squares.zip(res.chunks_exact_mut(cv)) {
                    let coef = k.iter().zip(c1).zip(c0);
                    let lanes = d.iter_mut().zip(r.iter_mut()).zip(g.iter().zip(o).zip(z));
                    for (((d, r), ((&g, &o), &z)), ((&k, &c1), &c0)) in lanes.zip(coef) {
                        let gp = simd.select_f32s(simd.greater_than_f32s(o, zero), g, zero);
                        *d = simd.mul_add_f32s(k, gp, simd.mul_add_f32s(c1, z, c0));
                        *r = gp;
                    }
                }
            } else {
                for (d, ((g, o), z)) in squares {
                    let coef = k.iter().zip(c1).zip(c0);
                    let lanes = d.iter_mut().zip(g.iter().zip(o).zip(z));
                    for ((d, ((&g, &o), &z)), ((&k, &c1), &c0)) in lanes.zip(coef) {
                        let gp = simd.select_f32s(simd.greater_than_f32s(o, zero), g, zero);
                        *d = simd.mul_add_f32s(k, gp, simd.mul_add_f32s(c1, z, c0));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A channel whose mean is three hundred times its spread keeps its variance: the sum of
    /// squares minus the squared sum would leave only rounding (about 5 % of it in `f32`).
    #[test]
    fn variance_survives_a_large_mean() {
        let (n, cp) = (21, 1);
        let mut z = vec![0.0f32; n * PADDED_SQUARES * cp];
        let mut values = Vec::new();
        let mut state = 0x9e37_79b9_u32;
        for pos in 0..n {
            for start in board_rows(pos) {
                for v in &mut z[start..start + BOARD] {
                    state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                    *v = 300.0 + (state >> 8) as f32 / (1u32 << 23) as f32 - 1.0;
                    values.push(f64::from(*v));
                }
            }
        }
        let mut sums = vec![0.0f64; 3 * cp];
        stats(pulp::Scalar::new(), &z, cp, n, &mut sums);
        let count = values.len() as f64;
        let mean = values.iter().sum::<f64>() / count;
        let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / count;
        let (got_mean, got_var) = moments(count, &sums).next().unwrap();
        assert!(
            (got_mean - mean).abs() < 1e-5 * mean,
            "{got_mean} vs {mean}"
        );
        assert!((got_var - var).abs() < 1e-4 * var, "{got_var} vs {var}");
    }
}
