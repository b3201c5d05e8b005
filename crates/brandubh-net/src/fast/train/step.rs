//! One thread's part of a training step: the forward pass with batch statistics, the
//! losses and the backward pass over its share of the batch's positions, in step with the
//! other threads at every batch norm (whose statistics and gradient sums are the whole
//! batch's: each thread adds its part, waits at a barrier, then reads every part in thread
//! order, so that all threads compute the same numbers). What a thread owns (activations,
//! partial weight gradients) lives in its [`Worker`], kept from step to step.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use pulp::{Simd, WithSimd};

use super::super::grad::{self, BnBack, Tn};
use super::super::winograd::{self, Out, WinogradConv, Work};
use super::super::{Aligned, Dense, PADDED_SQUARES, Rows, dense, padded_center, tower_positions};
use super::TrainBatch;
use crate::encoding::{PLANE_SIZE, POLICY_SIZE};

/// The weights of one step, packed for the kernels (built once per step, shared by the
/// threads).
#[derive(Debug)]
pub(super) struct Prepared {
    /// Padded channels of the tower.
    pub(super) cp: usize,
    /// Padded input planes of the stem.
    pub(super) cs: usize,
    /// Input planes.
    pub(super) planes: usize,
    /// The 3×3 convolutions (stem, then the blocks'), forward.
    pub(super) convs: Vec<WinogradConv>,
    /// The transposed convolutions that carry gradients back to their inputs (the stem has
    /// none: nothing is learnt below it).
    pub(super) back: Vec<Option<WinogradConv>>,
    /// γ and β of every batch norm ([`super::layout::Layout::batch_norms`]'s order), padded.
    pub(super) bn: Vec<(Vec<f32>, Vec<f32>)>,
    /// Batch norm's ε.
    pub(super) epsilon: f64,
    pub(super) heads: Vec<HeadPrep>,
}

/// A head's weights: its 1×1 convolution `[hc][cp]`, its first linear layer packed for the
/// forward pass and transposed for the backward pass, and its second (value, moves-left)
/// as plain numbers with its bias.
#[derive(Debug)]
pub(super) struct HeadPrep {
    pub(super) hc: usize,
    pub(super) conv: Vec<f32>,
    pub(super) fc1: Dense,
    pub(super) fc1_t: Dense,
    pub(super) fc2: Option<(Vec<f32>, f32)>,
}

/// A barrier whose waiters spin a short while before they sleep: a step meets one at
/// every batch norm (two dozen a step, a millisecond apart), and waking a sleeping thread
/// costs tens of microseconds each time.
#[derive(Debug)]
struct SpinBarrier {
    threads: usize,
    arrived: AtomicUsize,
    /// Bumped (under `lock`) each time every thread has arrived.
    generation: AtomicUsize,
    lock: Mutex<()>,
    wake: Condvar,
}

impl SpinBarrier {
    /// How long a waiter spins before it sleeps.
    const SPIN: Duration = Duration::from_micros(200);

    fn new(threads: usize) -> SpinBarrier {
        SpinBarrier {
            threads,
            arrived: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
            lock: Mutex::new(()),
            wake: Condvar::new(),
        }
    }

    fn wait(&self) {
        // The generation cannot move before this thread arrives.
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.threads {
            // Reset before the release: the next round's arrivals follow it.
            self.arrived.store(0, Ordering::Relaxed);
            let guard = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
            self.generation.store(generation + 1, Ordering::Release);
            drop(guard);
            self.wake.notify_all();
            return;
        }
        let start = Instant::now();
        let passed = || self.generation.load(Ordering::Acquire) != generation;
        while start.elapsed() < Self::SPIN {
            for _ in 0..64 {
                if passed() {
                    return;
                }
                std::hint::spin_loop();
            }
        }
        let mut guard = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        while !passed() {
            guard = self
                .wake
                .wait(guard)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// The barrier and the per-thread parts of every reduction of a step.
#[derive(Debug)]
pub(super) struct Shared {
    barrier: SpinBarrier,
    parts: Vec<Vec<Mutex<Vec<f64>>>>,
}

impl Shared {
    pub(super) fn new(threads: usize, reductions: usize) -> Shared {
        Shared {
            barrier: SpinBarrier::new(threads),
            parts: (0..reductions)
                .map(|_| (0..threads).map(|_| Mutex::new(Vec::new())).collect())
                .collect(),
        }
    }

    /// The sum over all threads of `local`, reduction `slot` (each slot is used once a step).
    fn all_reduce(&self, slot: usize, t: usize, local: Vec<f64>) -> Vec<f64> {
        *self.parts[slot][t]
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = local;
        self.barrier.wait();
        let mut total: Vec<f64> = Vec::new();
        for part in &self.parts[slot] {
            let part = part.lock().unwrap_or_else(PoisonError::into_inner);
            if total.is_empty() {
                total.clone_from(&part);
            } else {
                for (t, p) in total.iter_mut().zip(part.iter()) {
                    *t += p;
                }
            }
        }
        total
    }
}

/// What one batch norm reports to the optimizer (thread 0's copy): the batch's mean and
/// (biased) variance, and the gradients of γ and β.
#[derive(Clone, Debug, Default)]
pub(super) struct BnOut {
    pub(super) mean: Vec<f64>,
    pub(super) var: Vec<f64>,
    pub(super) dgamma: Vec<f64>,
    pub(super) dbeta: Vec<f64>,
}

/// A head's buffers and partial gradients in a [`Worker`].
#[derive(Debug, Default)]
pub(super) struct HeadBufs {
    /// Convolution outputs `[n][hc][49]` (burn's flatten order), then the features after
    /// batch norm and ReLU in `f`, and their gradient in `df`.
    z: Vec<f32>,
    f: Vec<f32>,
    df: Vec<f32>,
    /// First linear layer's outputs `[n][np]` and their gradient.
    h: Vec<f32>,
    dh: Vec<f32>,
    /// The head's outputs (value after tanh, moves-left) `[n]`.
    pub(super) out: Vec<f32>,
    pub(super) conv_w: Vec<f32>,
    pub(super) fc1_w: Vec<f32>,
    pub(super) fc1_b: Vec<f32>,
    pub(super) fc2_w: Vec<f32>,
    pub(super) fc2_b: f64,
}

/// A thread's buffers, kept from step to step (the bordered ones keep zero borders: only
/// board squares are ever written).
#[derive(Debug, Default)]
pub(super) struct Worker {
    shape: Vec<usize>,
    x: Aligned,
    z: Vec<Aligned>,
    y: Vec<Aligned>,
    g: Aligned,
    g2: Aligned,
    gh: Aligned,
    /// Batch norm's input gradient, a chunk of [`backward_positions`] at a time.
    dz: Aligned,
    wv: Aligned,
    wm: Aligned,
    wy: Aligned,
    wx: Aligned,
    pub(super) heads: Vec<HeadBufs>,
    /// Partial weight gradients of the 3×3 convolutions in the Winograd domain
    /// (`[36][cin][cp]`).
    pub(super) conv_acc: Vec<Vec<f32>>,
    /// Sums of the losses over this thread's positions: policy, value, moves-left.
    pub(super) losses: [f64; 3],
    /// Thread 0's batch-norm reports.
    pub(super) bn: Vec<BnOut>,
}

impl Worker {
    /// Lays the buffers out for `n` positions of `prep`'s network (kept when they fit).
    pub(super) fn prepare(&mut self, prep: &Prepared, n: usize) {
        let nconv = prep.convs.len();
        let mut shape = vec![n, prep.cp, prep.cs, nconv];
        shape.extend(prep.heads.iter().flat_map(|h| [h.hc, h.fc1.np, h.fc1.k]));
        let fits =
            self.shape.len() == shape.len() && self.shape[0] >= n && self.shape[1..] == shape[1..];
        if !fits {
            let board = |c: usize| Aligned::zeros(n * PADDED_SQUARES * c);
            self.x = board(prep.cs);
            self.z = (0..nconv).map(|_| board(prep.cp)).collect();
            self.y = (0..nconv).map(|_| board(prep.cp)).collect();
            self.g = board(prep.cp);
            self.g2 = board(prep.cp);
            self.gh = board(prep.cp);
            self.dz = Aligned::zeros(backward_positions(prep.cp) * PADDED_SQUARES * prep.cp);
            self.heads = prep.heads.iter().map(|_| HeadBufs::default()).collect();
            self.shape = shape;
        }
        let cp = prep.cp;
        self.conv_acc.resize_with(nconv, Vec::new);
        for (acc, conv) in self.conv_acc.iter_mut().zip(&prep.convs) {
            zeroed(acc, winograd::POINTS * conv.cin() * cp);
        }
        for (b, h) in self.heads.iter_mut().zip(&prep.heads) {
            let (k, np) = (h.fc1.k, h.fc1.np);
            // Written whole before they are read, but for the padding columns of `dh`,
            // which stay zero: zeroed only when they grow.
            for (buf, len) in [
                (&mut b.z, n * k),
                (&mut b.f, n * k),
                (&mut b.df, n * h.fc1_t.np),
            ] {
                if buf.len() < len {
                    zeroed(buf, len);
                }
            }
            for (buf, len) in [(&mut b.h, n * np), (&mut b.dh, n * np), (&mut b.out, n)] {
                if buf.len() < len {
                    zeroed(buf, len);
                }
            }
            zeroed(&mut b.conv_w, h.hc * cp);
            zeroed(&mut b.fc1_w, k * np);
            zeroed(&mut b.fc1_b, np);
            zeroed(&mut b.fc2_w, np);
            b.fc2_b = 0.0;
        }
        self.losses = [0.0; 3];
        self.bn.clear();
    }
}

/// Resizes `v` to `len` zeros.
fn zeroed(v: &mut Vec<f32>, len: usize) {
    v.clear();
    v.resize(len, 0.0);
}

/// The loss weights of the step.
#[derive(Clone, Copy, Debug)]
pub(super) struct LossWeights {
    pub(super) value: f32,
    pub(super) moves_left: f32,
}

/// One thread's part of the step: positions `lo..hi` of `batch`.
pub(super) struct Task<'a> {
    pub(super) prep: &'a Prepared,
    pub(super) shared: &'a Shared,
    pub(super) worker: &'a mut Worker,
    pub(super) t: usize,
    pub(super) batch: &'a TrainBatch<'a>,
    pub(super) lo: usize,
    pub(super) hi: usize,
    pub(super) weights: LossWeights,
}

impl WithSimd for Task<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let cp = self.prep.cp;
        super::super::with_tile(simd, cp, self);
    }
}

impl super::super::WithTile for Task<'_> {
    type Output = ();

    #[inline(always)]
    fn run<S: Simd, const MR: usize, const NV: usize>(self, simd: S) {
        run::<S, MR, NV>(simd, self);
    }
}

/// The state a thread carries through the step besides its buffers.
struct Ctx<'a, S> {
    simd: S,
    prep: &'a Prepared,
    shared: &'a Shared,
    t: usize,
    n: usize,
    /// Samples per channel of a batch norm: the batch's positions × 49.
    count: f64,
    /// The next reduction slot.
    slot: usize,
}

impl<S> Ctx<'_, S> {
    fn reduce(&mut self, local: Vec<f64>) -> Vec<f64> {
        let slot = self.slot;
        self.slot += 1;
        self.shared.all_reduce(slot, self.t, local)
    }
}

#[inline(always)]
fn run<S: Simd, const MR: usize, const NV: usize>(simd: S, task: Task<'_>) {
    let (prep, worker, batch, lo, hi) = (task.prep, task.worker, task.batch, task.lo, task.hi);
    let mut ctx = Ctx {
        simd,
        prep,
        shared: task.shared,
        t: task.t,
        n: hi - lo,
        count: (batch.samples() * PLANE_SIZE) as f64,
        slot: 0,
    };
    load_inputs(
        worker,
        prep,
        &batch.inputs[lo * prep.planes * PLANE_SIZE..hi * prep.planes * PLANE_SIZE],
    );
    tower_forward::<S, MR, NV>(&mut ctx, worker);
    heads_forward::<S, MR, NV>(&mut ctx, worker);
    losses(&ctx, worker, batch, lo, task.weights);
    heads_backward::<S, MR, NV>(&mut ctx, worker, batch.moves_left.is_some());
    tower_backward::<S, MR, NV>(&mut ctx, worker);
}

/// Planes `[n][P][49]` into the board squares of the bordered `[n][PADDED²][cs]`.
fn load_inputs(worker: &mut Worker, prep: &Prepared, inputs: &[f32]) {
    let (np, cs) = (prep.planes, prep.cs);
    let x = worker.x.get_mut();
    for (pos, planes) in inputs.chunks_exact(np * PLANE_SIZE).enumerate() {
        let dst = &mut x[pos * PADDED_SQUARES * cs..];
        for (plane, values) in planes.chunks_exact(PLANE_SIZE).enumerate() {
            for (sq, &v) in values.iter().enumerate() {
                dst[padded_center(sq) * cs + plane] = v;
            }
        }
    }
}

/// The batch norm of `layer` from the whole batch's sums `[3][c]` (see [`grad::moments`]):
/// its mean and variance, and the scale and shift that apply it (`[c]`, zero past `real`
/// channels).
fn bn_forward_coefs(
    ctx_count: f64,
    sums: &[f64],
    gamma: &[f32],
    beta: &[f32],
    eps: f64,
) -> (BnOut, Vec<f32>, Vec<f32>) {
    let c = gamma.len();
    let mut out = BnOut::default();
    let (mut scale, mut shift) = (vec![0.0f32; c], vec![0.0f32; c]);
    for (ch, (mean, var)) in grad::moments(ctx_count, sums).enumerate() {
        let s = f64::from(gamma[ch]) / (var + eps).sqrt();
        scale[ch] = s as f32;
        shift[ch] = (f64::from(beta[ch]) - mean * s) as f32;
        out.mean.push(mean);
        out.var.push(var);
    }
    (out, scale, shift)
}

/// Batch norm's backward coefficients `[3][c]` (`k`, `c1`, `c0`, see [`BnBack`]) from the
/// whole batch's sums `[2][c]` (`Σ g`, `Σ g·(z − mean)`), recording dγ and dβ in `out`.
fn bn_backward_coefs(
    count: f64,
    sums: &[f64],
    gamma: &[f32],
    eps: f64,
    out: &mut BnOut,
) -> Vec<f32> {
    let c = gamma.len();
    let mut coef = vec![0.0f32; 3 * c];
    out.dgamma.clear();
    out.dbeta.clear();
    for ch in 0..c {
        let inv_std = 1.0 / (out.var[ch] + eps).sqrt();
        let dbeta = sums[ch];
        let dgamma = sums[c + ch] * inv_std;
        let k = f64::from(gamma[ch]) * inv_std;
        let (mb, mg) = (dbeta / count, dgamma / count);
        let c1 = -k * mg * inv_std;
        coef[ch] = k as f32;
        coef[c + ch] = c1 as f32;
        coef[2 * c + ch] = (-k * mb - c1 * out.mean[ch]) as f32;
        out.dgamma.push(dgamma);
        out.dbeta.push(dbeta);
    }
    coef
}

/// The forward pass of the stem and the tower, keeping every convolution's raw output
/// (`z`) and every activation (`y`). A layer's batch norm and ReLU wait for the whole
/// batch's statistics; they are then applied a chunk of positions at a time inside the next
/// convolution's loop, just before that convolution reads the chunk (the top layer's at
/// the end).
#[inline(always)]
fn tower_forward<S: Simd, const MR: usize, const NV: usize>(ctx: &mut Ctx<'_, S>, w: &mut Worker) {
    let (simd, prep, n, cp) = (ctx.simd, ctx.prep, ctx.n, ctx.prep.cp);
    let nconv = prep.convs.len();
    let step = tower_positions(cp);
    // The scale and shift of the layer below, to apply chunk by chunk.
    let mut below: Option<(Vec<f32>, Vec<f32>)> = None;
    for l in 0..nconv {
        let conv = &prep.convs[l];
        let mut sums = vec![0.0f64; 3 * cp];
        let cin = conv.cin();
        for first in (0..n).step_by(step) {
            let m = step.min(n - first);
            let part = |c: usize| first * PADDED_SQUARES * c..(first + m) * PADDED_SQUARES * c;
            if let Some((scale, shift)) = &below {
                activate(simd, w, l - 1, part(cp), scale, shift, cp);
            }
            let src = if l == 0 { w.x.get() } else { w.y[l - 1].get() };
            let z = w.z[l].get_mut();
            let work = Work {
                v: w.wv.at_least(conv.input_len(m)),
                m: w.wm.at_least(conv.output_len(m)),
            };
            winograd::conv_out::<S, MR, NV>(
                simd,
                conv,
                &src[part(cin)],
                &mut z[part(cp)],
                m,
                work,
                Out::Store,
            );
            grad::stats(simd, &z[part(cp)], cp, m, &mut sums);
        }
        let sums = ctx.reduce(sums);
        let (gamma, beta) = &prep.bn[l];
        let (out, scale, shift) = bn_forward_coefs(ctx.count, &sums, gamma, beta, prep.epsilon);
        w.bn.push(out);
        below = Some((scale, shift));
    }
    if let Some((scale, shift)) = &below {
        activate(
            simd,
            w,
            nconv - 1,
            0..n * PADDED_SQUARES * cp,
            scale,
            shift,
            cp,
        );
    }
}

/// `y[l] = relu(bn(z[l]) [+ y[l − 2]])` over `range` (whole positions) of the tower's
/// buffers: the second convolution of a block adds the block's input (two layers back).
#[inline(always)]
fn activate<S: Simd>(
    simd: S,
    w: &mut Worker,
    l: usize,
    range: std::ops::Range<usize>,
    scale: &[f32],
    shift: &[f32],
    cp: usize,
) {
    let m = range.len() / (PADDED_SQUARES * cp);
    let residual = (l >= 2 && l.is_multiple_of(2)).then(|| l - 2);
    let (before, rest) = w.y.split_at_mut(l);
    let res = residual.map(|r| &before[r].get()[range.clone()]);
    grad::bn_relu(
        simd,
        &w.z[l].get()[range.clone()],
        res,
        &mut rest[0].get_mut()[range],
        scale,
        shift,
        cp,
        m,
    );
}

/// Each head's 1×1 convolution, batch norm and ReLU into its features, then its linear
/// layers: the policy logits (kept in the head's `h`), the value and the moves left.
#[inline(always)]
fn heads_forward<S: Simd, const MR: usize, const NV: usize>(ctx: &mut Ctx<'_, S>, w: &mut Worker) {
    let (simd, prep, n, cp) = (ctx.simd, ctx.prep, ctx.n, ctx.prep.cp);
    let nconv = prep.convs.len();
    let tower = w.y[nconv - 1].get();
    for (i, (hp, hb)) in prep.heads.iter().zip(&mut w.heads).enumerate() {
        let hc = hp.hc;
        let mut sums = vec![0.0f64; 3 * hc];
        head_conv(simd, tower, &hp.conv, hc, cp, n, &mut hb.z, &mut sums);
        let sums = ctx.reduce(sums);
        let (gamma, beta) = &prep.bn[nconv + i];
        let (out, scale, shift) = bn_forward_coefs(ctx.count, &sums, gamma, beta, prep.epsilon);
        for (j, (f, z)) in
            hb.f.chunks_exact_mut(PLANE_SIZE)
                .zip(hb.z.chunks_exact(PLANE_SIZE))
                .take(n * hc)
                .enumerate()
        {
            let o = j % hc;
            for (f, &z) in f.iter_mut().zip(z) {
                *f = (z * scale[o] + shift[o]).max(0.0);
            }
        }
        w.bn.push(out);
        let fc1 = &hp.fc1;
        let relu = hp.fc2.is_some();
        dense::<S, MR, NV>(
            simd,
            fc1,
            &hb.f,
            &mut hb.h,
            Rows {
                n,
                a_stride: fc1.k,
                out_stride: fc1.np,
            },
            relu,
        );
        if let Some((w2, b2)) = &hp.fc2 {
            for (o, h) in hb.out[..n].iter_mut().zip(hb.h.chunks_exact(fc1.np)) {
                *o = h[..fc1.n].iter().zip(w2).map(|(h, w)| h * w).sum::<f32>() + b2;
            }
        }
    }
}

/// `z[pos][o][sq] = Σ_c x[pos][sq][c] · w[o][c]` for the board squares of the tower's output
/// `x`, adding each channel's sum and sum of squares to `sums` (`[3][hc]`, see
/// [`grad::moments`]: each value a group of one).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn head_conv<S: Simd>(
    simd: S,
    x: &[f32],
    w: &[f32],
    hc: usize,
    cp: usize,
    n: usize,
    z: &mut [f32],
    sums: &mut [f64],
) {
    let w = S::as_simd_f32s(w).0;
    let per = cp / S::F32_LANES;
    for pos in 0..n {
        for sq in 0..PLANE_SIZE {
            let start = (pos * PADDED_SQUARES + padded_center(sq)) * cp;
            let xs = S::as_simd_f32s(&x[start..start + cp]).0;
            for o in 0..hc {
                let mut acc = simd.splat_f32s(0.0);
                for (a, b) in xs.iter().zip(&w[o * per..(o + 1) * per]) {
                    acc = simd.mul_add_f32s(*a, *b, acc);
                }
                let v = simd.reduce_sum_f32s(acc);
                z[(pos * hc + o) * PLANE_SIZE + sq] = v;
                sums[o] += f64::from(v);
                sums[hc + o] += f64::from(v) * f64::from(v);
            }
        }
    }
}

/// The losses of this thread's positions (summed into the worker) and the gradients of the
/// mean losses over the whole batch at the heads' outputs: the policy logits' into the
/// policy head's `dh`, the value's and moves-left's before their activation into `out`.
fn losses(
    ctx: &Ctx<'_, impl Sized>,
    w: &mut Worker,
    batch: &TrainBatch<'_>,
    lo: usize,
    weights: LossWeights,
) {
    let b = batch.samples() as f64;
    let n = ctx.n;
    let policy = &mut w.heads[0];
    let np = ctx.prep.heads[0].fc1.np;
    let mut sum = [0.0f64; 3];
    for r in 0..n {
        let s = lo + r;
        let logits = &policy.h[r * np..r * np + POLICY_SIZE];
        let legal = &batch.legal[s * POLICY_SIZE..(s + 1) * POLICY_SIZE];
        let target = &batch.policy[s * POLICY_SIZE..(s + 1) * POLICY_SIZE];
        let max = logits
            .iter()
            .zip(legal)
            .filter(|(_, l)| **l)
            .map(|(x, _)| *x)
            .fold(f32::NEG_INFINITY, f32::max);
        let mut total = 0.0f64;
        let mut mass = 0.0f64;
        for ((x, l), t) in logits.iter().zip(legal).zip(target) {
            if *l {
                total += f64::from(x - max).exp();
                mass += f64::from(*t);
            }
        }
        let lse = f64::from(max) + total.ln();
        let grad = &mut policy.dh[r * np..(r + 1) * np];
        for (j, ((x, l), t)) in logits.iter().zip(legal).zip(target).enumerate() {
            if *l {
                let logp = f64::from(*x) - lse;
                sum[0] -= f64::from(*t) * logp;
                grad[j] = ((logp.exp() * mass - f64::from(*t)) / b) as f32;
            } else {
                grad[j] = 0.0;
            }
        }
    }
    let value = &mut w.heads[1];
    for r in 0..n {
        let v = value.out[r].tanh();
        let diff = f64::from(v) - f64::from(batch.values[lo + r]);
        sum[1] += diff * diff;
        let dv = f64::from(weights.value) * 2.0 * diff / b;
        value.out[r] = (dv * (1.0 - f64::from(v) * f64::from(v))) as f32;
    }
    if let (Some(targets), Some(ml)) = (batch.moves_left, w.heads.get_mut(2)) {
        for r in 0..n {
            let diff = f64::from(ml.out[r]) - f64::from(targets[lo + r]);
            sum[2] += diff * diff;
            ml.out[r] = (f64::from(weights.moves_left) * 2.0 * diff / b) as f32;
        }
    }
    w.losses = sum;
}

/// The heads' backward passes down to the gradient at the tower's output (into the
/// worker's `g`), with their weight gradients.
#[inline(always)]
fn heads_backward<S: Simd, const MR: usize, const NV: usize>(
    ctx: &mut Ctx<'_, S>,
    w: &mut Worker,
    moves_left: bool,
) {
    let (simd, prep, n, cp) = (ctx.simd, ctx.prep, ctx.n, ctx.prep.cp);
    let nconv = prep.convs.len();
    w.g.get_mut().fill(0.0);
    for (i, hp) in prep.heads.iter().enumerate() {
        if i == 2 && !moves_left {
            continue;
        }
        let hb = &mut w.heads[i];
        fc_backward::<S, MR, NV>(simd, hp, hb, n);
        // ReLU and batch norm of the head's convolution.
        let hc = hp.hc;
        let bn = &mut w.bn[nconv + i];
        let mean: Vec<f32> = bn.mean.iter().map(|&m| m as f32).collect();
        let mut sums = vec![0.0f64; 2 * hc];
        let kw = hp.fc1_t.np;
        for pos in 0..n {
            for o in 0..hc {
                let j = (pos * hc + o) * PLANE_SIZE;
                let df = &hb.df[pos * kw + o * PLANE_SIZE..][..PLANE_SIZE];
                for ((g, f), z) in df
                    .iter()
                    .zip(&hb.f[j..j + PLANE_SIZE])
                    .zip(&hb.z[j..j + PLANE_SIZE])
                {
                    if *f > 0.0 {
                        sums[o] += f64::from(*g);
                        sums[hc + o] += f64::from(*g) * f64::from(z - mean[o]);
                    }
                }
            }
        }
        let sums = ctx.reduce(sums);
        let coef = bn_backward_coefs(ctx.count, &sums, &prep.bn[nconv + i].0, prep.epsilon, bn);
        let tower = w.y[nconv - 1].get();
        head_conv_backward(simd, hp, hb, &coef, tower, w.g.get_mut(), cp, n);
    }
}

/// The linear layers of a head, backwards: their weight gradients (added to the worker's)
/// and the gradient of the head's features (`df`).
#[inline(always)]
fn fc_backward<S: Simd, const MR: usize, const NV: usize>(
    simd: S,
    hp: &HeadPrep,
    hb: &mut HeadBufs,
    n: usize,
) {
    let fc1 = &hp.fc1;
    let np = fc1.np;
    if let Some((w2, _)) = &hp.fc2 {
        // `out` holds the gradient before the last activation; `h` the hidden layer.
        for r in 0..n {
            let d = hb.out[r];
            hb.fc2_b += f64::from(d);
            let h = &hb.h[r * np..r * np + fc1.n];
            let dh = &mut hb.dh[r * np..r * np + fc1.n];
            for (j, ((dh, &h), &w)) in dh.iter_mut().zip(h).zip(w2).enumerate() {
                hb.fc2_w[j] += h * d;
                *dh = if h > 0.0 { d * w } else { 0.0 };
            }
        }
    }
    // `dh` is now the gradient of the first layer's outputs (the policy logits').
    let k = fc1.k;
    grad::tn_for::<S, MR, NV>(
        simd,
        Tn {
            a: &hb.f,
            a_stride: k,
            w: &hb.dh,
            w_stride: np,
            k: n,
            m: k,
            cols: np,
        },
        &mut hb.fc1_w,
    );
    for row in hb.dh.chunks_exact(np).take(n) {
        for (b, d) in hb.fc1_b.iter_mut().zip(row) {
            *b += d;
        }
    }
    let t = &hp.fc1_t;
    dense::<S, MR, NV>(
        simd,
        t,
        &hb.dh,
        &mut hb.df,
        Rows {
            n,
            a_stride: np,
            out_stride: t.np,
        },
        false,
    );
}

/// The backward pass of a head's convolution: batch norm's input gradient from `coef`, the
/// convolution's weight gradient (into the head's `conv_w`) and its input gradient added to
/// `g` at the board squares.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn head_conv_backward<S: Simd>(
    simd: S,
    hp: &HeadPrep,
    hb: &mut HeadBufs,
    coef: &[f32],
    tower: &[f32],
    g: &mut [f32],
    cp: usize,
    n: usize,
) {
    let hc = hp.hc;
    let per = cp / S::F32_LANES;
    let w = S::as_simd_f32s(&hp.conv).0;
    let dw = S::as_mut_simd_f32s(&mut hb.conv_w).0;
    let kw = hp.fc1_t.np;
    let mut dz = vec![0.0f32; hc];
    for pos in 0..n {
        for sq in 0..PLANE_SIZE {
            for (o, d) in dz.iter_mut().enumerate() {
                let j = (pos * hc + o) * PLANE_SIZE + sq;
                let gp = if hb.f[j] > 0.0 {
                    hb.df[pos * kw + o * PLANE_SIZE + sq]
                } else {
                    0.0
                };
                *d = coef[o] * gp + coef[hc + o] * hb.z[j] + coef[2 * hc + o];
            }
            let start = (pos * PADDED_SQUARES + padded_center(sq)) * cp;
            let x = S::as_simd_f32s(&tower[start..start + cp]).0;
            let gs = S::as_mut_simd_f32s(&mut g[start..start + cp]).0;
            for (o, &d) in dz.iter().enumerate() {
                let dv = simd.splat_f32s(d);
                for c in 0..per {
                    dw[o * per + c] = simd.mul_add_f32s(dv, x[c], dw[o * per + c]);
                    gs[c] = simd.mul_add_f32s(dv, w[o * per + c], gs[c]);
                }
            }
        }
    }
}

/// The backward pass of the tower and the stem: batch norms, ReLUs and skip connections,
/// each convolution's weight gradient (Winograd domain, into `conv_acc`) and input gradient.
/// A layer's batch norm waits for the whole batch's gradient sums; the sums of the layer
/// below are taken a chunk at a time as this layer's input gradient is written (the top
/// layer's, from the heads' gradient, first).
#[inline(always)]
fn tower_backward<S: Simd, const MR: usize, const NV: usize>(ctx: &mut Ctx<'_, S>, w: &mut Worker) {
    let (simd, n, cp) = (ctx.simd, ctx.n, ctx.prep.cp);
    let top = ctx.prep.convs.len() - 1;
    let mut sums = vec![0.0f64; 2 * cp];
    grad::bn_grad_sums(
        simd,
        w.g.get(),
        w.y[top].get(),
        w.z[top].get(),
        &padded_mean(&w.bn[top], cp),
        cp,
        n,
        &mut sums,
    );
    for l in (0..=top).rev() {
        let total = ctx.reduce(sums);
        let (gamma, eps) = (&ctx.prep.bn[l].0, ctx.prep.epsilon);
        let coef = bn_backward_coefs(ctx.count, &total, gamma, eps, &mut w.bn[l]);
        sums = conv_backward::<S, MR, NV>(ctx, w, l, &coef);
        if l % 2 == 1 {
            // The first convolution of a block added its input gradient to the skip
            // connection's in `g2`: the gradient of the block's input.
            std::mem::swap(&mut w.g, &mut w.g2);
        }
    }
}

/// Positions that go through a convolution's backward pass together, with `cp` padded
/// channels (the size of a worker's `dz`).
fn backward_positions(cp: usize) -> usize {
    2 * tower_positions(cp)
}

/// A batch norm's mean in `f32`, zero-padded to `cp` channels.
fn padded_mean(bn: &BnOut, cp: usize) -> Vec<f32> {
    let mean = bn.mean.iter().map(|&m| m as f32);
    mean.chain(std::iter::repeat(0.0)).take(cp).collect()
}

/// Convolution `l`'s part of the backward pass, a chunk of positions at a time: its batch
/// norm's input gradient `dz` from `coef` (the gradient of its output is `g`, or `gh` for a
/// block's first convolution; the second's passes `g` to the skip connection in `g2`), its
/// weight gradient from its input and `dz`, and (but for the stem) its input gradient:
/// into `gh` for a block's second convolution, added to `g2` for the first. Returns the
/// batch-norm gradient sums of the layer below over this thread's positions (none for the
/// stem).
#[inline(always)]
fn conv_backward<S: Simd, const MR: usize, const NV: usize>(
    ctx: &Ctx<'_, S>,
    w: &mut Worker,
    l: usize,
    coef: &[f32],
) -> Vec<f64> {
    let (simd, prep, n, cp) = (ctx.simd, ctx.prep, ctx.n, ctx.prep.cp);
    let conv = &prep.convs[l];
    let cin = conv.cin();
    let step = backward_positions(cp);
    let Worker {
        x,
        z,
        y,
        g,
        g2,
        gh,
        dz,
        wv,
        wm,
        wy,
        wx,
        conv_acc,
        bn,
        ..
    } = w;
    let src = if l == 0 { x.get() } else { y[l - 1].get() };
    let acc = &mut conv_acc[l];
    // What flows where: the gradient in, the input gradient out, the skip connection's.
    let (grad_in, mut dst, mut residual, out) = if l % 2 == 1 {
        (gh.get(), Some(g2.get_mut()), None, Out::Add)
    } else if l == 0 {
        (g.get(), None, None, Out::Store)
    } else {
        (g.get(), Some(gh.get_mut()), Some(g2.get_mut()), Out::Store)
    };
    let below = (l > 0).then(|| (padded_mean(&bn[l - 1], cp), &z[l - 1], &y[l - 1]));
    let mut sums = vec![0.0f64; if l > 0 { 2 * cp } else { 0 }];
    for first in (0..n).step_by(step) {
        let m = step.min(n - first);
        let part = |c: usize| first * PADDED_SQUARES * c..(first + m) * PADDED_SQUARES * c;
        // This chunk's `dz`, at the start of its buffer.
        let dz = &mut dz.get_mut()[..m * PADDED_SQUARES * cp];
        grad::bn_backward(
            simd,
            &grad_in[part(cp)],
            &y[l].get()[part(cp)],
            &z[l].get()[part(cp)],
            BnBack { coef },
            dz,
            residual.as_deref_mut().map(|r| &mut r[part(cp)]),
            cp,
            m,
        );
        let rows = winograd::TILES * m;
        let v = wx.at_least(rows * winograd::POINTS * cin);
        winograd::transform_inputs(simd, &src[part(cin)], cin, m, v);
        let yw = wy.at_least(rows * winograd::POINTS * cp);
        winograd::transform_grads(simd, dz, cp, m, yw);
        winograd::weight_grad::<S, MR, NV>(simd, v, yw, rows, cin, cp, acc);
        if let (Some(back), Some(dst), Some((mean, zb, yb))) =
            (&prep.back[l], dst.as_deref_mut(), &below)
        {
            let work = Work {
                v: wv.at_least(back.input_len(m)),
                m: wm.at_least(back.output_len(m)),
            };
            let dst = &mut dst[part(cp)];
            winograd::conv_out::<S, MR, NV>(simd, back, dz, dst, m, work, out);
            let (zb, yb) = (&zb.get()[part(cp)], &yb.get()[part(cp)]);
            grad::bn_grad_sums(simd, dst, yb, zb, mean, cp, m, &mut sums);
        }
    }
    sums
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No thread leaves a round before every thread has arrived, whether the others come
    /// while it spins or after it has gone to sleep.
    #[test]
    fn the_barrier_holds_every_thread_until_all_arrive() {
        let (threads, rounds) = (4, 200);
        let barrier = SpinBarrier::new(threads);
        let arrived = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for t in 0..threads {
                let (barrier, arrived) = (&barrier, &arrived);
                scope.spawn(move || {
                    for round in 0..rounds {
                        if (round + t) % 7 == 0 {
                            // Longer than the spin: the others sleep.
                            std::thread::sleep(SpinBarrier::SPIN * 2);
                        }
                        arrived.fetch_add(1, Ordering::SeqCst);
                        barrier.wait();
                        // Nobody starts the next round before everyone has looked.
                        assert_eq!(arrived.load(Ordering::SeqCst), threads * (round + 1));
                        barrier.wait();
                    }
                });
            }
        });
        assert_eq!(arrived.load(Ordering::SeqCst), threads * rounds);
    }
}
