//! PUCT (AlphaZero): selection, Dirichlet noise at the root, move choice by visit counts.

use rand::Rng;
use rand_distr::{Distribution, Gamma};

use crate::config::{Fpu, PuctConfig};
use crate::tree::Tree;

/// The child of `node` with the highest `Q + c_puct · P · √N / (1 + n)`; unvisited children
/// get the first-play-urgency value as `Q`. Ties go to the first child. Children the solver
/// proved lost for the player choosing are passed over (an unproven one is always left, or
/// `node` itself would be proven and never selected from).
pub(crate) fn select(tree: &Tree, node: u32, cfg: &PuctConfig) -> u32 {
    let parent = tree.get(node);
    let parent_visits = parent.visits as f32 + f32::from(parent.virtual_loss);
    let explore = cfg.c_puct * parent_visits.sqrt();
    let fpu = match cfg.fpu {
        Fpu::Absolute(v) => v,
        Fpu::Reduction(r) => parent.value() - r,
    };
    let mut best = parent.first_child;
    let mut best_score = f32::NEG_INFINITY;
    for child in tree.child_range(node) {
        if tree.is_proven_loss(child) {
            continue;
        }
        let (n, q) = tree.child_stats(child);
        let q = if n > 0.0 { q } else { fpu };
        let score = q + explore * tree.get(child).prior / (1.0 + n);
        if score > best_score {
            best_score = score;
            best = child;
        }
    }
    best
}

/// Mixes Dirichlet(`alpha`) noise into the priors of `node`'s children:
/// `P ← (1 − fraction) · P + fraction · η`. Nothing happens with fewer than two children.
pub(crate) fn add_dirichlet_noise(
    tree: &mut Tree,
    node: u32,
    alpha: f32,
    fraction: f32,
    rng: &mut impl Rng,
) {
    let range = tree.child_range(node);
    if fraction <= 0.0 || range.len() < 2 {
        return;
    }
    // A Dirichlet sample is a vector of Gamma(alpha, 1) samples divided by their sum.
    let Ok(gamma) = Gamma::new(alpha, 1.0) else {
        return;
    };
    let noise: Vec<f32> = range.clone().map(|_| gamma.sample(rng)).collect();
    let sum: f32 = noise.iter().sum();
    if !(sum > 0.0 && sum.is_finite()) {
        return;
    }
    for (child, eta) in range.zip(noise) {
        let n = tree.get_mut(child);
        n.prior = (1.0 - fraction) * n.prior + fraction * eta / sum;
    }
}

/// The index of the move to play: drawn with probability ∝ `visits^(1 / temperature)`, or
/// the most visited (ties: higher prior, then first) when the temperature is 0 or nothing
/// was visited.
pub(crate) fn choose(
    visits: &[u32],
    priors: &[f32],
    temperature: f32,
    rng: &mut impl Rng,
) -> usize {
    let most_visited = || {
        (0..visits.len())
            .reduce(|best, i| {
                if (visits[i], priors[i]) > (visits[best], priors[best]) {
                    i
                } else {
                    best
                }
            })
            .unwrap_or(0)
    };
    let max = visits.iter().copied().max().unwrap_or(0);
    if temperature <= 0.0 || max == 0 {
        return most_visited();
    }
    // Weights relative to the most visited move keep `n^(1/T)` finite for small T.
    let inv_t = 1.0 / f64::from(temperature);
    let weights: Vec<f64> = visits
        .iter()
        .map(|&n| (f64::from(n) / f64::from(max)).powf(inv_t))
        .collect();
    let total: f64 = weights.iter().sum();
    let mut r = rng.random::<f64>() * total;
    for (i, w) in weights.iter().enumerate() {
        if r < *w {
            return i;
        }
        r -= w;
    }
    most_visited()
}
