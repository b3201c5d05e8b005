//! Elo ratings: the difference implied by one score, and a maximum-likelihood
//! Bradley–Terry fit over all games among many players.
//!
//! Scale: a rating difference `d` means an expected game score of
//! `1 / (1 + 10^(−d/400))` for the stronger side (the logistic Elo curve).
//!
//! **Draws** (games stopped by the ply cap: the rules have no draws) count as half a win
//! for each side, as in most engine rating tools. This is the Bradley–Terry likelihood
//! applied to half points, not a separate ties model (Davidson); it keeps the point
//! estimate at the score-matching rating and makes the intervals slightly conservative
//! when there are many draws.
//!
//! **Colours.** The fit has no first-move or colour term: every match plays both colours
//! once, so each pairing is balanced by construction.

use std::collections::VecDeque;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use thiserror::Error;

/// Elo points per natural-log unit of odds: `400 / ln 10`.
pub const ELO_PER_NAT: f64 = 400.0 / std::f64::consts::LN_10;
/// The normal quantile of a two-sided 95 % interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// The rating difference implied by an expected score `p` in [0, 1]: ±∞ at 1 and 0.
#[must_use]
pub fn elo_from_score(p: f64) -> f64 {
    if p <= 0.0 {
        f64::NEG_INFINITY
    } else if p >= 1.0 {
        f64::INFINITY
    } else {
        ELO_PER_NAT * (p / (1.0 - p)).ln()
    }
}

/// The expected score of a player rated `d` Elo above its opponent.
#[must_use]
pub fn score_from_elo(d: f64) -> f64 {
    1.0 / (1.0 + (-d / ELO_PER_NAT).exp())
}

/// An Elo estimate with its 95 % interval. A bound (or the estimate) that is unbounded —
/// after a score of exactly 0 or 1 — is ±∞ here and `null` in JSON.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct EloInterval {
    /// The estimate.
    #[serde(serialize_with = "finite_or_null", deserialize_with = "null_as_nan")]
    pub elo: f64,
    /// Lower end of the 95 % interval.
    #[serde(serialize_with = "finite_or_null", deserialize_with = "null_as_nan")]
    pub low: f64,
    /// Upper end of the 95 % interval.
    #[serde(serialize_with = "finite_or_null", deserialize_with = "null_as_nan")]
    pub high: f64,
}

impl EloInterval {
    /// The Elo difference implied by a mean score `score` over `n` independent trials, each
    /// scoring 0, ½ or 1, with a 95 % Wilson score interval mapped through the Elo curve.
    ///
    /// Wilson's interval treats each trial as a win or a loss (variance `p(1−p)`), an upper
    /// bound on the variance of trials that may also score ½: the interval is exact for
    /// decisive trials and conservative with draws. Unlike the normal approximation it
    /// stays informative at a score of 0 or 1 (20 wins out of 20 give a lower bound of
    /// about +290 Elo). With `n = 0` everything is unbounded.
    #[must_use]
    pub fn from_score(score: f64, n: f64) -> EloInterval {
        if n <= 0.0 || !score.is_finite() {
            return EloInterval {
                elo: f64::NAN,
                low: f64::NEG_INFINITY,
                high: f64::INFINITY,
            };
        }
        let p = score.clamp(0.0, 1.0);
        let z2 = Z95 * Z95;
        let denom = 1.0 + z2 / n;
        let centre = (p + z2 / (2.0 * n)) / denom;
        let half = Z95 / denom * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
        EloInterval {
            elo: elo_from_score(p),
            low: elo_from_score(centre - half),
            high: elo_from_score(centre + half),
        }
    }
}

fn finite_or_null<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    if v.is_finite() {
        s.serialize_f64(*v)
    } else {
        s.serialize_none()
    }
}

fn null_as_nan<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// Why a rating fit failed.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum EloError {
    /// The anchor index is not a player.
    #[error("rating anchor {anchor} is not one of the {players} players")]
    BadAnchor {
        /// The index given.
        anchor: usize,
        /// Number of players.
        players: usize,
    },
    /// A result names a player index out of range or a player against itself.
    #[error("game result {a} vs {b}: players must be distinct indices below {players}")]
    BadResult {
        /// First index.
        a: usize,
        /// Second index.
        b: usize,
        /// Number of players.
        players: usize,
    },
    /// A player is not linked to the anchor by a chain of games: its rating is undefined.
    #[error("player {player} is not linked to the anchor {anchor} by any chain of games")]
    Disconnected {
        /// The player's name.
        player: String,
        /// The anchor's name.
        anchor: String,
    },
    /// Newton's method did not converge (should not happen with the prior).
    #[error("the rating fit did not converge after {iterations} iterations")]
    NoConvergence {
        /// Iterations run.
        iterations: u32,
    },
}

/// Points scored between two players: `a` scored `a_points` out of `games` against `b`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairScore {
    /// Index of the first player.
    pub a: usize,
    /// Index of the second player.
    pub b: usize,
    /// Points of `a`: 1 per win, ½ per draw.
    pub a_points: f64,
    /// Games played.
    pub games: f64,
}

/// Collects game results among `n` players into [`PairScore`]s.
#[derive(Clone, Debug, Default)]
pub struct Results {
    scores: Vec<PairScore>,
}

impl Results {
    /// No results yet.
    #[must_use]
    pub fn new() -> Results {
        Results::default()
    }

    /// One game in which `a` scored `a_points` (1, ½ or 0) against `b`.
    pub fn add_game(&mut self, a: usize, b: usize, a_points: f64) {
        self.add(a, b, a_points, 1.0);
    }

    /// `games` games in which `a` scored `a_points` in all against `b`.
    pub fn add(&mut self, a: usize, b: usize, a_points: f64, games: f64) {
        let (a, b, a_points) = if a <= b {
            (a, b, a_points)
        } else {
            (b, a, games - a_points)
        };
        match self.scores.iter_mut().find(|s| s.a == a && s.b == b) {
            Some(s) => {
                s.a_points += a_points;
                s.games += games;
            }
            None => self.scores.push(PairScore {
                a,
                b,
                a_points,
                games,
            }),
        }
    }

    /// The pairs, each once (`a < b`).
    #[must_use]
    pub fn pairs(&self) -> &[PairScore] {
        &self.scores
    }
}

/// Settings of [`fit`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FitConfig {
    /// Virtual drawn games added to every pair that played: a weak prior that keeps the
    /// ratings finite when a player won (or lost) every game. Default 1.
    pub prior_draws: f64,
    /// Newton iterations at most. Default 100.
    pub max_iterations: u32,
}

impl Default for FitConfig {
    fn default() -> Self {
        FitConfig {
            prior_draws: 1.0,
            max_iterations: 100,
        }
    }
}

/// A player's fitted rating.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rating {
    /// Elo, relative to the anchor (rated 0).
    pub elo: f64,
    /// Standard error of `elo` (0 for the anchor).
    pub stderr: f64,
    /// Lower end of the 95 % interval, `elo − 1.96·stderr`.
    pub low: f64,
    /// Upper end of the 95 % interval.
    pub high: f64,
}

/// Maximum-likelihood Bradley–Terry ratings of `names.len()` players from `results`,
/// anchored so that player `anchor` is rated 0.
///
/// Each game is a Bernoulli trial won by `a` with probability `σ(θ_a − θ_b)`, draws scoring
/// ½ (see the module documentation), plus [`FitConfig::prior_draws`] virtual draws per
/// pair that met. Newton's method on the concave log-likelihood, with step halving. The
/// 95 % intervals are `±1.96` standard errors from the inverse of the observed Fisher
/// information (the negative Hessian at the optimum, the anchor held fixed): each rating's
/// uncertainty *relative to the anchor*.
pub fn fit(
    names: &[String],
    results: &Results,
    anchor: usize,
    config: FitConfig,
) -> Result<Vec<Rating>, EloError> {
    let n = names.len();
    if anchor >= n {
        return Err(EloError::BadAnchor { anchor, players: n });
    }
    let pairs = with_prior(results, n, config.prior_draws)?;
    check_connected(names, &pairs, anchor)?;
    let params = FreeParams::new(n, anchor);
    let no_convergence = EloError::NoConvergence {
        iterations: config.max_iterations,
    };
    let theta = maximise(&pairs, &params, config.max_iterations).ok_or(no_convergence.clone())?;
    let (_, info) = gradient_and_information(&theta, &pairs, &params.slot, params.len());
    let covariance = invert(&info).ok_or(no_convergence)?;
    Ok(params.ratings(&theta, &covariance))
}

/// The pairs that played, each with [`FitConfig::prior_draws`] virtual draws added; an
/// error for a result naming a player out of range or a player against itself.
fn with_prior(results: &Results, n: usize, prior_draws: f64) -> Result<Vec<PairScore>, EloError> {
    let mut pairs: Vec<PairScore> = Vec::new();
    for s in results.pairs() {
        if s.a >= n || s.b >= n || s.a == s.b {
            return Err(EloError::BadResult {
                a: s.a,
                b: s.b,
                players: n,
            });
        }
        if s.games > 0.0 {
            pairs.push(PairScore {
                a_points: s.a_points + 0.5 * prior_draws,
                games: s.games + prior_draws,
                ..*s
            });
        }
    }
    Ok(pairs)
}

/// The fit's free parameters: every player but the anchor, in order.
struct FreeParams {
    anchor: usize,
    /// The players, by parameter index.
    free: Vec<usize>,
    /// Each player's parameter index (`usize::MAX` for the anchor).
    slot: Vec<usize>,
}

impl FreeParams {
    fn new(n: usize, anchor: usize) -> FreeParams {
        let free: Vec<usize> = (0..n).filter(|&i| i != anchor).collect();
        let mut slot = vec![usize::MAX; n];
        for (k, &i) in free.iter().enumerate() {
            slot[i] = k;
        }
        FreeParams { anchor, free, slot }
    }

    fn len(&self) -> usize {
        self.free.len()
    }

    /// The ratings at the optimum `theta`, with standard errors from `covariance` (the
    /// inverse information, over the free parameters).
    fn ratings(&self, theta: &[f64], covariance: &[f64]) -> Vec<Rating> {
        let m = self.len();
        (0..theta.len())
            .map(|i| {
                let elo = theta[i] * ELO_PER_NAT;
                let stderr = if i == self.anchor {
                    0.0
                } else {
                    let k = self.slot[i];
                    covariance[k * m + k].max(0.0).sqrt() * ELO_PER_NAT
                };
                Rating {
                    elo,
                    stderr,
                    low: elo - Z95 * stderr,
                    high: elo + Z95 * stderr,
                }
            })
            .collect()
    }
}

/// The maximum-likelihood strengths (natural-log odds, the anchor at 0): Newton's method
/// with step halving; `None` when it does not converge within `max_iterations`.
fn maximise(pairs: &[PairScore], params: &FreeParams, max_iterations: u32) -> Option<Vec<f64>> {
    let m = params.len();
    let mut theta = vec![0.0f64; params.slot.len()];
    let mut ll = log_likelihood(&theta, pairs);
    let mut converged = m == 0;
    for _ in 0..max_iterations {
        if converged {
            break;
        }
        let (grad, info) = gradient_and_information(&theta, pairs, &params.slot, m);
        let step = solve(&info, &grad)?;
        let (next, next_ll, change) = halve_until_better(&theta, &step, ll, pairs, params);
        theta = next;
        ll = next_ll;
        converged = change < 1e-9;
    }
    converged.then_some(theta)
}

/// One damped Newton step: `step` halved until the likelihood does not fall (or the step
/// is tiny). Returns the new strengths, their log-likelihood and the largest change.
fn halve_until_better(
    theta: &[f64],
    step: &[f64],
    ll: f64,
    pairs: &[PairScore],
    params: &FreeParams,
) -> (Vec<f64>, f64, f64) {
    let mut scale = 1.0;
    loop {
        let mut next = theta.to_vec();
        for (k, &i) in params.free.iter().enumerate() {
            next[i] += scale * step[k];
        }
        let next_ll = log_likelihood(&next, pairs);
        if next_ll >= ll - 1e-12 || scale < 1e-6 {
            let change = step.iter().fold(0.0f64, |a, s| a.max((scale * s).abs()));
            return (next, next_ll, change);
        }
        scale *= 0.5;
    }
}

/// Every player must be reachable from the anchor through pairs that played.
fn check_connected(names: &[String], pairs: &[PairScore], anchor: usize) -> Result<(), EloError> {
    let n = names.len();
    let mut reached = vec![false; n];
    reached[anchor] = true;
    let mut queue = VecDeque::from([anchor]);
    while let Some(i) = queue.pop_front() {
        for s in pairs {
            let j = if s.a == i {
                s.b
            } else if s.b == i {
                s.a
            } else {
                continue;
            };
            if !reached[j] {
                reached[j] = true;
                queue.push_back(j);
            }
        }
    }
    match reached.iter().position(|&r| !r) {
        Some(i) => Err(EloError::Disconnected {
            player: names[i].clone(),
            anchor: names[anchor].clone(),
        }),
        None => Ok(()),
    }
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// `ln σ(x)`, stable for large |x|.
fn log_sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        -(-x).exp().ln_1p()
    } else {
        x - x.exp().ln_1p()
    }
}

fn log_likelihood(theta: &[f64], pairs: &[PairScore]) -> f64 {
    pairs
        .iter()
        .map(|s| {
            let d = theta[s.a] - theta[s.b];
            s.a_points * log_sigmoid(d) + (s.games - s.a_points) * log_sigmoid(-d)
        })
        .sum()
}

/// The gradient of the log-likelihood and the observed information (negative Hessian,
/// `m × m` row-major) over the free parameters.
fn gradient_and_information(
    theta: &[f64],
    pairs: &[PairScore],
    slot: &[usize],
    m: usize,
) -> (Vec<f64>, Vec<f64>) {
    let mut grad = vec![0.0; m];
    let mut info = vec![0.0; m * m];
    for s in pairs {
        let p = sigmoid(theta[s.a] - theta[s.b]);
        let g = s.a_points - s.games * p;
        let w = s.games * p * (1.0 - p);
        let (ka, kb) = (slot[s.a], slot[s.b]);
        if ka != usize::MAX {
            grad[ka] += g;
            info[ka * m + ka] += w;
        }
        if kb != usize::MAX {
            grad[kb] -= g;
            info[kb * m + kb] += w;
        }
        if ka != usize::MAX && kb != usize::MAX {
            info[ka * m + kb] -= w;
            info[kb * m + ka] -= w;
        }
    }
    (grad, info)
}

/// Solves `a · x = b` (`a` is `m × m`, symmetric positive definite here) by Gaussian
/// elimination with partial pivoting; `None` if singular.
fn solve(a: &[f64], b: &[f64]) -> Option<Vec<f64>> {
    let m = b.len();
    let mut a = a.to_vec();
    let mut x = b.to_vec();
    for col in 0..m {
        let pivot =
            (col..m).max_by(|&i, &j| a[i * m + col].abs().total_cmp(&a[j * m + col].abs()))?;
        if a[pivot * m + col].abs() < 1e-300 {
            return None;
        }
        if pivot != col {
            for k in 0..m {
                a.swap(col * m + k, pivot * m + k);
            }
            x.swap(col, pivot);
        }
        let d = a[col * m + col];
        for row in col + 1..m {
            let f = a[row * m + col] / d;
            if f != 0.0 {
                for k in col..m {
                    a[row * m + k] -= f * a[col * m + k];
                }
                x[row] -= f * x[col];
            }
        }
    }
    for col in (0..m).rev() {
        let mut v = x[col];
        for k in col + 1..m {
            v -= a[col * m + k] * x[k];
        }
        x[col] = v / a[col * m + col];
    }
    Some(x)
}

/// The inverse of the `m × m` matrix `a`, column by column; `None` if singular.
fn invert(a: &[f64]) -> Option<Vec<f64>> {
    let m = (a.len() as f64).sqrt() as usize;
    let mut inv = vec![0.0; m * m];
    for col in 0..m {
        let mut e = vec![0.0; m];
        e[col] = 1.0;
        let x = solve(a, &e)?;
        for row in 0..m {
            inv[row * m + col] = x[row];
        }
    }
    Some(inv)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("p{i}")).collect()
    }

    #[test]
    fn score_and_elo_are_inverse() {
        for d in [-600.0, -100.0, 0.0, 35.0, 400.0] {
            assert!((elo_from_score(score_from_elo(d)) - d).abs() < 1e-9);
        }
        assert!((score_from_elo(400.0) - 10.0 / 11.0).abs() < 1e-12);
        assert_eq!(elo_from_score(1.0), f64::INFINITY);
        assert_eq!(elo_from_score(0.0), f64::NEG_INFINITY);
    }

    #[test]
    fn wilson_interval_from_a_score() {
        let even = EloInterval::from_score(0.5, 100.0);
        assert_eq!(even.elo, 0.0);
        assert!((even.low + even.high).abs() < 1e-9);
        // ±1.96·√(¼/100) ≈ ±0.098 in score ≈ ±69 Elo.
        assert!((even.high - 69.0).abs() < 2.0, "{even:?}");
        let sweep = EloInterval::from_score(1.0, 20.0);
        assert_eq!(sweep.elo, f64::INFINITY);
        assert_eq!(sweep.high, f64::INFINITY);
        assert!((280.0..300.0).contains(&sweep.low), "{sweep:?}");
        let json = serde_json::to_string(&sweep).unwrap();
        assert!(json.starts_with(r#"{"elo":null,"low":2"#), "{json}");
        assert!(json.ends_with(r#","high":null}"#), "{json}");
        let back: EloInterval = serde_json::from_str(&json).unwrap();
        assert!(back.elo.is_nan() && back.low == sweep.low);
    }

    #[test]
    fn fit_recovers_synthetic_strengths() {
        let truth = [0.0, 120.0, 250.0, 420.0, 600.0, 900.0];
        let n = truth.len();
        let mut rng = ChaCha8Rng::seed_from_u64(2024);
        let mut results = Results::new();
        // Every pair meets 300 times; some games are drawn, keeping the expected score p.
        for a in 0..n {
            for b in a + 1..n {
                let p = score_from_elo(truth[a] - truth[b]);
                let draw = 0.3 * p.min(1.0 - p);
                for _ in 0..300 {
                    let u = rng.random::<f64>();
                    let points = if u < draw {
                        0.5
                    } else if u < draw + p - draw / 2.0 {
                        1.0
                    } else {
                        0.0
                    };
                    results.add_game(a, b, points);
                }
            }
        }
        let ratings = fit(&names(n), &results, 0, FitConfig::default()).unwrap();
        assert_eq!(ratings[0].elo, 0.0);
        assert_eq!(ratings[0].stderr, 0.0);
        for (r, &t) in ratings.iter().zip(&truth).skip(1) {
            let err = (r.elo - t).abs();
            assert!(err < 3.0 * r.stderr && err < 60.0, "{r:?} vs {t}");
            assert!(r.stderr > 5.0 && r.stderr < 60.0, "{r:?}");
            assert!(r.low < r.elo && r.elo < r.high);
        }
    }

    #[test]
    fn fit_on_a_chain_recovers_strengths_with_growing_uncertainty() {
        // Only neighbours meet, like checkpoints in a ladder.
        let truth = [0.0, 200.0, 350.0, 500.0];
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let mut results = Results::new();
        for a in 0..truth.len() - 1 {
            let p = score_from_elo(truth[a + 1] - truth[a]);
            for _ in 0..400 {
                let points = f64::from(u8::from(rng.random::<f64>() < p));
                results.add_game(a + 1, a, points);
            }
        }
        let ratings = fit(&names(4), &results, 0, FitConfig::default()).unwrap();
        for i in 1..4 {
            assert!((ratings[i].elo - truth[i]).abs() < 3.0 * ratings[i].stderr + 5.0);
            assert!(ratings[i].stderr > ratings[i - 1].stderr);
        }
    }

    #[test]
    fn a_clean_sweep_stays_finite() {
        let mut results = Results::new();
        results.add(1, 0, 20.0, 20.0);
        let ratings = fit(&names(2), &results, 0, FitConfig::default()).unwrap();
        // 20.5 of 21 points: about +630 Elo, lower end well above 0.
        assert!((600.0..700.0).contains(&ratings[1].elo), "{:?}", ratings[1]);
        assert!(ratings[1].low > 0.0);
    }

    #[test]
    fn the_anchor_can_be_any_player() {
        let mut results = Results::new();
        results.add(0, 1, 30.0, 40.0);
        results.add(1, 2, 25.0, 40.0);
        let from0 = fit(&names(3), &results, 0, FitConfig::default()).unwrap();
        let from2 = fit(&names(3), &results, 2, FitConfig::default()).unwrap();
        for i in 0..3 {
            let shifted = from0[i].elo - from0[2].elo;
            assert!((shifted - from2[i].elo).abs() < 1e-6);
        }
    }

    #[test]
    fn bad_inputs_are_reported() {
        let mut results = Results::new();
        results.add(0, 1, 1.0, 2.0);
        let err = fit(&names(3), &results, 0, FitConfig::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "player p2 is not linked to the anchor p0 by any chain of games"
        );
        let err = fit(&names(2), &results, 5, FitConfig::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "rating anchor 5 is not one of the 2 players"
        );
        results.add(3, 0, 1.0, 1.0);
        assert!(matches!(
            fit(&names(2), &results, 0, FitConfig::default()),
            Err(EloError::BadResult { .. })
        ));
    }
}
