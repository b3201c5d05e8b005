//! Gumbel AlphaZero (Danihelka et al. 2022, "Policy improvement by planning with Gumbel"):
//! Gumbel-top-k sampling of the root moves, sequential halving of the simulation budget
//! over them, completed Q-values, and the improved policy used as training target.
//!
//! Below the root the selection is deterministic: the child maximising
//! `π'(a) − N(a) / (1 + Σ N)`, with `π'` the improved policy of that node.

use rand::Rng;
use rand_distr::{Distribution, Gumbel};

use crate::config::GumbelConfig;
use crate::tree::{ROOT, Tree};

/// The smallest prior taken into a logarithm.
const MIN_PRIOR: f32 = 1e-30;
/// Q-value ranges below this are treated as flat.
const MIN_RANGE: f32 = 1e-6;

/// Completed Q-values of a node's children, rescaled to [0, 1] and ready for `σ`.
///
/// A visited child's completed Q is its mean value; an unvisited child's is `v_mix`, the
/// network's value of the node mixed with the prior-weighted mean of the visited children:
/// `v_mix = (v̂ + Σ N / Σ_visited π · Σ_visited π·q) / (1 + Σ N)`.
struct CompletedQ {
    v_mix: f32,
    low: f32,
    inv_range: f32,
    /// `σ = (c_visit + max N) · c_scale`.
    sigma: f32,
    /// The largest rescaled completed Q (1, or 0 when all are equal).
    top: f32,
}

impl CompletedQ {
    fn new(tree: &Tree, node: u32, cfg: &GumbelConfig) -> CompletedQ {
        let (mut sum_n, mut max_n, mut visited_prior, mut weighted_q) = (0.0, 0.0f32, 0.0, 0.0);
        let (mut low, mut high, mut unvisited) = (f32::INFINITY, f32::NEG_INFINITY, false);
        for child in tree.child_range(node) {
            let (n, q) = tree.child_stats(child);
            if n > 0.0 {
                let prior = tree.get(child).prior;
                sum_n += n;
                max_n = max_n.max(n);
                visited_prior += prior;
                weighted_q += prior * q;
                low = low.min(q);
                high = high.max(q);
            } else {
                unvisited = true;
            }
        }
        let v_hat = tree.get(node).raw_value;
        let v_mix = if visited_prior > 0.0 {
            (v_hat + sum_n / visited_prior * weighted_q) / (1.0 + sum_n)
        } else {
            v_hat
        };
        if unvisited {
            low = low.min(v_mix);
            high = high.max(v_mix);
        }
        let range = high - low;
        let (inv_range, top) = if range > MIN_RANGE {
            (1.0 / range, 1.0)
        } else {
            (0.0, 0.0)
        };
        CompletedQ {
            v_mix,
            low,
            inv_range,
            sigma: (cfg.c_visit + max_n) * cfg.c_scale,
            top,
        }
    }

    /// `σ(q̂)` of a child with these (effective) visits and mean value.
    fn sigma_q(&self, n: f32, q: f32) -> f32 {
        let q = if n > 0.0 { q } else { self.v_mix };
        self.sigma * (q - self.low) * self.inv_range
    }

    /// `prior · exp(σ(q̂) − σ(top))`: the unnormalised improved policy of a child.
    fn weight(&self, prior: f32, n: f32, q: f32) -> f32 {
        prior * (self.sigma_q(n, q) - self.sigma * self.top).exp()
    }
}

/// The improved policy `softmax(log π + σ(q̂))` over the children of `node`.
pub(crate) fn improved_policy(tree: &Tree, node: u32, cfg: &GumbelConfig) -> Vec<f32> {
    let cq = CompletedQ::new(tree, node, cfg);
    let mut policy: Vec<f32> = tree
        .child_range(node)
        .map(|c| {
            let (n, q) = tree.child_stats(c);
            cq.weight(tree.get(c).prior, n, q)
        })
        .collect();
    let sum: f32 = policy.iter().sum();
    let uniform = 1.0 / policy.len() as f32;
    policy
        .iter_mut()
        .for_each(|p| *p = if sum > 0.0 { *p / sum } else { uniform });
    policy
}

/// The deterministic selection below the root: the child maximising
/// `π'(a) − N(a) / (1 + Σ N)`. Ties go to the first child.
pub(crate) fn select_interior(tree: &Tree, node: u32, cfg: &GumbelConfig) -> u32 {
    let cq = CompletedQ::new(tree, node, cfg);
    let range = tree.child_range(node);
    let (mut sum_w, mut sum_n) = (0.0, 0.0);
    for c in range.clone() {
        let (n, q) = tree.child_stats(c);
        sum_w += cq.weight(tree.get(c).prior, n, q);
        sum_n += n;
    }
    let inv_w = if sum_w > 0.0 { 1.0 / sum_w } else { 0.0 };
    let (mut best, mut best_score) = (range.start, f32::NEG_INFINITY);
    for c in range {
        let (n, q) = tree.child_stats(c);
        let score = cq.weight(tree.get(c).prior, n, q) * inv_w - n / (1.0 + sum_n);
        if score > best_score {
            best_score = score;
            best = c;
        }
    }
    best
}

/// For simulation `k` of a budget of `n` over `m` considered moves: how many visits (of this
/// search) the root move chosen must already have. Sequential halving: in each of
/// `⌈log2 m⌉` phases the remaining moves get an equal share of visits, then the better half
/// stays. The same schedule as DeepMind's `mctx`.
pub(crate) fn considered_visits(m: usize, n: usize) -> Vec<u32> {
    if m <= 1 {
        return (0..n as u32).collect();
    }
    let phases = m.next_power_of_two().trailing_zeros() as usize;
    let mut sequence = Vec::with_capacity(n);
    let mut visits = vec![0u32; m];
    let mut considered = m;
    while sequence.len() < n {
        let extra = (n / (phases * considered)).max(1);
        for _ in 0..extra {
            sequence.extend_from_slice(&visits[..considered]);
            visits[..considered].iter_mut().for_each(|v| *v += 1);
        }
        considered = (considered / 2).max(2);
    }
    sequence.truncate(n);
    sequence
}

/// The root's state for one search: Gumbel noise plus logits of each move, the visits each
/// move got in this search, and the sequential-halving schedule.
#[derive(Clone, Debug, Default)]
pub(crate) struct GumbelRoot {
    /// `g(a) + log π(a)` per root child.
    base: Vec<f32>,
    /// Simulations started through each root child in this search (in flight included).
    started: Vec<u32>,
    /// `considered_visits(min(m, moves), simulations)`.
    schedule: Vec<u32>,
}

impl GumbelRoot {
    /// Draws the Gumbel noise for a freshly evaluated (or reused) root.
    pub(crate) fn prepare(
        &mut self,
        tree: &Tree,
        cfg: &GumbelConfig,
        simulations: u32,
        rng: &mut impl Rng,
    ) {
        #[expect(
            clippy::expect_used,
            reason = "constant parameters: rand_distr refuses only a non-positive or \
                      non-finite scale"
        )]
        let gumbel = Gumbel::new(0.0f32, 1.0).expect("the standard Gumbel law exists");
        self.base.clear();
        for c in tree.child_range(ROOT) {
            let noise = if cfg.gumbel_scale > 0.0 {
                cfg.gumbel_scale * gumbel.sample(rng)
            } else {
                0.0
            };
            self.base
                .push(noise + tree.get(c).prior.max(MIN_PRIOR).ln());
        }
        self.started.clear();
        self.started.resize(self.base.len(), 0);
        let m = (cfg.considered_moves as usize).min(self.base.len());
        self.schedule = considered_visits(m, simulations as usize);
    }

    /// The root child for simulation `k` (counted from 0): among the moves whose visits in
    /// this search equal the schedule's, the highest `g + log π + σ(q̂)`.
    pub(crate) fn select(&mut self, tree: &Tree, cfg: &GumbelConfig, k: u32) -> u32 {
        let target = self.schedule.get(k as usize).copied();
        let slot = self
            .best_with(tree, cfg, |started| Some(started) == target)
            .or_else(|| self.best_with(tree, cfg, |_| true))
            .unwrap_or(0);
        self.started[slot] += 1;
        tree.get(ROOT).first_child + slot as u32
    }

    /// Forgets a simulation through root child `child` that was abandoned.
    pub(crate) fn unselect(&mut self, tree: &Tree, child: u32) {
        let slot = (child - tree.get(ROOT).first_child) as usize;
        self.started[slot] = self.started[slot].saturating_sub(1);
    }

    /// The move to play (index among the root's children): among the moves visited most in
    /// this search, the highest `g + log π + σ(q̂)`.
    pub(crate) fn best(&self, tree: &Tree, cfg: &GumbelConfig) -> usize {
        let most = self.started.iter().copied().max();
        self.best_with(tree, cfg, |s| Some(s) == most).unwrap_or(0)
    }

    fn best_with(
        &self,
        tree: &Tree,
        cfg: &GumbelConfig,
        eligible: impl Fn(u32) -> bool,
    ) -> Option<usize> {
        let cq = CompletedQ::new(tree, ROOT, cfg);
        let mut best = None;
        let mut best_score = f32::NEG_INFINITY;
        for (slot, c) in tree.child_range(ROOT).enumerate() {
            if !eligible(self.started[slot]) {
                continue;
            }
            let (n, q) = tree.child_stats(c);
            let score = self.base[slot] + cq.sigma_q(n, q);
            if best.is_none() || score > best_score {
                best = Some(slot);
                best_score = score;
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_halves_the_considered_moves() {
        assert_eq!(considered_visits(4, 8), [0, 0, 0, 0, 1, 1, 2, 2]);
        assert_eq!(considered_visits(1, 3), [0, 1, 2]);
        // 16 simulations over 16 moves: one visit each.
        assert_eq!(considered_visits(16, 16), [0; 16]);
        // Every simulation index has a target, however small the budget.
        assert_eq!(considered_visits(16, 5).len(), 5);
        let s = considered_visits(8, 64);
        assert_eq!(s.len(), 64);
        // Phase 1: 8 moves × 2 visits; later phases only revisit moves already visited.
        assert_eq!(&s[..8], &[0; 8]);
        assert!(s.windows(2).all(|w| w[1] + 1 >= w[0]));
    }
}
