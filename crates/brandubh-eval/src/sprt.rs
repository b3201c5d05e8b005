//! Sequential probability ratio tests (SPRT) over two-game matches: play until the
//! evidence says which of two Elo differences is the truth, instead of a fixed count.
//!
//! **The model.** Each two-game match is one trial, scored by its RULES.md ("Matches")
//! result: 1 for a won match, ½ for a drawn one, 0 for a lost one. Trials are independent:
//! every match has its own opening and seeds. The two games *of* a match are not
//! independent (same opening, same players); counting the match as the trial absorbs that,
//! which is why Stockfish's fishtest scores a game *pair* as one pentanomial trial. Here the
//! pair already has an official result, with the rule-8 tiebreak (the shorter win wins a
//! split), so the trial is trinomial on the match result rather than pentanomial on the
//! pair's game points: in Brandubh most pairs between close agents are splits (each side
//! wins as White), which the pentanomial would put in its middle cell and learn nothing
//! from, while rule 8 decides them.
//!
//! **The test** is the generalized SPRT of fishtest (`LLR_logistic`): H0 says A's expected
//! match score is `L(elo0)`, H1 that it is `L(elo1)`, with `L(d) = 1 / (1 + 10^(−d/400))`
//! the logistic Elo curve ([`score_from_elo`]); neither fixes how often matches are drawn.
//! The log-likelihood ratio compares the most likely trinomial distribution with each
//! expected score ([`generalized_llr`]). Wald's bounds `ln(β / (1 − α))` and
//! `ln((1 − β) / α)` ([`bounds`]) stop the test: at the upper one H1 is accepted, at the
//! lower one H0, and at [`SprtConfig::max_matches`] it ends inconclusive.
//!
//! **Logistic, not normalized, Elo.** Fishtest states its bounds in normalized Elo (the
//! score's distance from ½ in units of its standard deviation), so that a test takes about
//! as long whatever the draw rate. Rule-8 matches are rarely drawn (only two equally long
//! wins or two capped games draw), and without draws normalized Elo near 0 *is* logistic
//! Elo; logistic Elo is what every other report of this project shows.
//!
//! The matches are played in parallel (`crate::runner::run_sprt`), but their results are
//! fed to the test in match-index order only, so that the stopping decision never depends
//! on which matches happened to finish first; see `docs/guide/sprt.md`.

use std::fmt;

use serde::{Deserialize, Serialize};

pub use brandubh_run::config::SprtConfig;
pub use brandubh_run::metrics::{SprtSummary, SprtVerdict};

use crate::elo::{EloInterval, score_from_elo};
use crate::error::EvalError;
use crate::runner::{Record, signed};

/// A cell of the observed distribution with no count is given this many (fishtest's
/// regularization), so that the likelihood can be maximised for any expected score: after
/// 20 won matches and nothing else, "A scores ½" is unlikely but not impossible.
const EMPTY_CELL: f64 = 1e-3;

/// Wald's bounds on the log-likelihood ratio: `(ln(β / (1 − α)), ln((1 − β) / α))`.
#[must_use]
pub fn bounds(alpha: f64, beta: f64) -> (f64, f64) {
    ((beta / (1.0 - alpha)).ln(), ((1.0 - beta) / alpha).ln())
}

/// The generalized log-likelihood ratio of "the expected score is `s1`" over "it is `s0`"
/// for trials that scored `outcomes`: `(score, count)` pairs, scores distinct, in [0, 1].
///
/// Each hypothesis gets the distribution over the observed scores that is most likely for
/// the data among those with its expected score (Lagrange: `q_i = p_i / (1 + x (a_i − s))`
/// with `x` the root of `Σ p_i (a_i − s) / (1 + x (a_i − s)) = 0`, found by Newton's method
/// kept inside the interval where every `q_i` is positive, on which the function falls). The ratio is
/// `N Σ p_i ln(q1_i / q0_i)`. Empty cells count [`EMPTY_CELL`] (see there). `s0` and `s1`
/// must lie strictly between the lowest and highest score; NaN otherwise.
#[must_use]
pub fn generalized_llr(outcomes: &[(f64, f64)], s0: f64, s1: f64) -> f64 {
    let counts: Vec<f64> = outcomes.iter().map(|o| o.1.max(EMPTY_CELL)).collect();
    let n: f64 = counts.iter().sum();
    let pdf: Vec<(f64, f64)> = outcomes
        .iter()
        .zip(&counts)
        .map(|(o, c)| (o.0, c / n))
        .collect();
    let (Some(q0), Some(q1)) = (most_likely(&pdf, s0), most_likely(&pdf, s1)) else {
        return f64::NAN;
    };
    n * pdf
        .iter()
        .zip(q0.iter().zip(&q1))
        .map(|((_, p), (a, b))| p * (b / a).ln())
        .sum::<f64>()
}

/// The distribution over `pdf`'s scores with expected score `s` that makes `pdf` most
/// likely; `None` when `s` is not strictly between its lowest and highest score.
fn most_likely(pdf: &[(f64, f64)], s: f64) -> Option<Vec<f64>> {
    let low = pdf
        .iter()
        .map(|&(a, _)| a - s)
        .fold(f64::INFINITY, f64::min);
    let high = pdf
        .iter()
        .map(|&(a, _)| a - s)
        .fold(f64::NEG_INFINITY, f64::max);
    if !(low < 0.0 && high > 0.0) {
        return None;
    }
    // g(x) = Σ p (a − s) / (1 + x (a − s)) falls from +∞ to −∞ on (−1/high, −1/low):
    // Newton's method from 0, kept inside a bracket that bisection narrows when a Newton
    // step would leave it.
    let g = |x: f64| -> (f64, f64) {
        pdf.iter().fold((0.0, 0.0), |(v, slope), &(a, p)| {
            let t = (a - s) / (1.0 + x * (a - s));
            (v + p * t, slope - p * t * t)
        })
    };
    let (mut lo, mut hi) = (-1.0 / high, -1.0 / low);
    let mut x = 0.0;
    for _ in 0..200 {
        let (v, slope) = g(x);
        if v == 0.0 {
            break;
        }
        if v > 0.0 {
            lo = x;
        } else {
            hi = x;
        }
        let newton = x - v / slope;
        let next = if newton > lo && newton < hi {
            newton
        } else {
            0.5 * (lo + hi)
        };
        let done = (next - x).abs() <= 1e-13 * (1.0 + x.abs());
        x = next;
        if done {
            break;
        }
    }
    Some(pdf.iter().map(|&(a, p)| p / (1.0 + x * (a - s))).collect())
}

/// The log-likelihood ratio of H1 (`elo1`) over H0 (`elo0`) after A's match `record`: the
/// trinomial [`generalized_llr`] on match scores 0, ½ and 1.
#[must_use]
pub fn match_llr(record: &Record, elo0: f64, elo1: f64) -> f64 {
    let outcomes = [
        (0.0, f64::from(record.losses)),
        (0.5, f64::from(record.draws)),
        (1.0, f64::from(record.wins)),
    ];
    generalized_llr(&outcomes, score_from_elo(elo0), score_from_elo(elo1))
}

/// A test set up: its settings and Wald's bounds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sprt {
    /// The settings.
    pub config: SprtConfig,
    /// Lower bound: H0 is accepted at or below it.
    pub lower: f64,
    /// Upper bound: H1 is accepted at or above it.
    pub upper: f64,
}

impl Sprt {
    /// The test of `config`, checked ([`SprtConfig::check`]).
    pub fn new(config: SprtConfig) -> Result<Sprt, EvalError> {
        config.check().map_err(|e| EvalError::Sprt {
            text: describe(&config),
            cause: e.to_string(),
        })?;
        let (lower, upper) = bounds(config.alpha, config.beta);
        Ok(Sprt {
            config,
            lower,
            upper,
        })
    }

    /// The log-likelihood ratio after `record`.
    #[must_use]
    pub fn llr(&self, record: &Record) -> f64 {
        match_llr(record, self.config.elo0, self.config.elo1)
    }

    /// The verdict after `record`, if the test stops there: H1 or H0 when a bound is
    /// reached, inconclusive at the maximum count, `None` to go on.
    #[must_use]
    pub fn decide(&self, record: &Record) -> Option<SprtVerdict> {
        let llr = self.llr(record);
        if llr >= self.upper {
            Some(SprtVerdict::H1)
        } else if llr <= self.lower {
            Some(SprtVerdict::H0)
        } else if record.total() >= self.config.max_matches {
            Some(SprtVerdict::Inconclusive)
        } else {
            None
        }
    }

    /// The report of a test that counted `record` and stopped (or ran out of matches),
    /// with `played_past_stop` matches finished beyond the stop and left out.
    #[must_use]
    pub fn report(&self, record: &Record, played_past_stop: u32) -> SprtReport {
        let llr = self.llr(record);
        let verdict = self.decide(record).unwrap_or(SprtVerdict::Inconclusive);
        let c = &self.config;
        SprtReport {
            elo0: c.elo0,
            elo1: c.elo1,
            alpha: c.alpha,
            beta: c.beta,
            max_matches: c.max_matches,
            lower: self.lower,
            upper: self.upper,
            llr,
            verdict,
            matches: record.total(),
            match_elo: EloInterval::from_score(record.score(), f64::from(record.total())),
            played_past_stop,
        }
    }
}

/// `ELO0,ELO1,ALPHA,BETA` of `config`, as given to `--sprt`.
fn describe(c: &SprtConfig) -> String {
    format!("{},{},{},{}", c.elo0, c.elo1, c.alpha, c.beta)
}

/// What a sequential test found; part of a [`crate::MatchReport`] (`"sprt"` in its JSON).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SprtReport {
    /// Elo of H0 (A over B, on the match score).
    pub elo0: f64,
    /// Elo of H1.
    pub elo1: f64,
    /// Largest false-positive rate.
    pub alpha: f64,
    /// Largest false-negative rate.
    pub beta: f64,
    /// Matches after which the test stops inconclusive.
    pub max_matches: u32,
    /// Lower bound of the log-likelihood ratio.
    pub lower: f64,
    /// Upper bound.
    pub upper: f64,
    /// The log-likelihood ratio when the test stopped.
    pub llr: f64,
    /// What it decided.
    pub verdict: SprtVerdict,
    /// Matches the test counted: matches 0 to `matches − 1` of the seed's stream.
    pub matches: u32,
    /// Elo of A − B on the match score, with a 95 % Wilson interval over the counted
    /// matches (the fixed-sample interval: it does not correct for the test having stopped
    /// where the evidence looked strongest). `null` bounds in JSON are unbounded.
    pub match_elo: EloInterval,
    /// Matches that finished after the stop (they were already being played) and are not
    /// counted.
    pub played_past_stop: u32,
}

impl SprtReport {
    /// The verdict, the ratio and its bounds, as a metrics line records them.
    #[must_use]
    pub fn summary(&self) -> SprtSummary {
        SprtSummary {
            verdict: self.verdict,
            elo0: self.elo0,
            elo1: self.elo1,
            llr: self.llr,
            lower: self.lower,
            upper: self.upper,
        }
    }
}

impl fmt::Display for SprtReport {
    /// Two lines for people: the verdict with the ratio and its bounds, the settings, and
    /// the match-score Elo.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let outcome = match self.verdict {
            SprtVerdict::H1 => format!(
                "H1 accepted after {} matches: LLR {:.2} reached the upper bound {:.2}",
                self.matches, self.llr, self.upper
            ),
            SprtVerdict::H0 => format!(
                "H0 accepted after {} matches: LLR {:.2} reached the lower bound {:.2}",
                self.matches, self.llr, self.lower
            ),
            SprtVerdict::Inconclusive => format!(
                "inconclusive after {} matches (the maximum): LLR {:.2} between {:.2} and {:.2}",
                self.matches, self.llr, self.lower, self.upper
            ),
        };
        writeln!(
            f,
            "sprt     {outcome} (H0: A - B = {} Elo, H1: {} Elo, alpha {}, beta {}, \
             at most {} matches)",
            self.elo0, self.elo1, self.alpha, self.beta, self.max_matches
        )?;
        write!(
            f,
            "         A - B = {} Elo (95% interval {} to {}) from the match score",
            signed(self.match_elo.elo),
            signed(self.match_elo.low),
            signed(self.match_elo.high)
        )?;
        if self.played_past_stop > 0 {
            write!(
                f,
                "; {} more matches finished after the stop and are not counted",
                self.played_past_stop
            )?;
        }
        Ok(())
    }
}

/// Parses `ELO0,ELO1[,ALPHA,BETA]` (alpha and beta default to 0.05) into a test that
/// stops at `max_matches`; the error names the text and what is wrong with it.
pub fn parse_sprt(text: &str, max_matches: u32) -> Result<SprtConfig, EvalError> {
    let err = |cause: String| EvalError::Sprt {
        text: text.to_owned(),
        cause,
    };
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    if parts.len() != 2 && parts.len() != 4 {
        return Err(err(format!(
            "expected ELO0,ELO1 or ELO0,ELO1,ALPHA,BETA, got {} values",
            parts.len()
        )));
    }
    let names = ["elo0", "elo1", "alpha", "beta"];
    let mut values = [0.0, 0.0, 0.05, 0.05];
    for (i, part) in parts.iter().enumerate() {
        values[i] = part
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| err(format!("{}: {part:?} is not a number", names[i])))?;
    }
    let config = SprtConfig {
        elo0: values[0],
        elo1: values[1],
        alpha: values[2],
        beta: values[3],
        max_matches,
    };
    config.check().map_err(|e| err(e.to_string()))?;
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(wins: u32, draws: u32, losses: u32) -> Record {
        Record {
            wins,
            draws,
            losses,
        }
    }

    /// Test vectors computed independently by fishtest's own statistics code
    /// (official-stockfish/fishtest, `server/fishtest/stats/LLRcalc.py`,
    /// `LLR_logistic(elo0, elo1, [losses, draws, wins])`, at commit b8eecff2 of
    /// 2026-08-22, run with Python 3.11 and SciPy 1.17.1).
    const FISHTEST: [(u32, u32, u32, f64, f64, f64); 10] = [
        (0, 0, 20, 0.0, 30.0, 1.652_465_885_918_718_2),
        (0, 0, 36, 0.0, 30.0, 2.974_444_563_620_25),
        (3, 2, 25, 0.0, 30.0, 1.920_402_677_050_474_7),
        (10, 5, 30, 0.0, 30.0, 1.758_970_341_812_447),
        (40, 20, 40, 0.0, 30.0, -0.465_301_534_757_536_1),
        (45, 10, 45, -10.0, 20.0, -0.137_971_514_580_646_08),
        (12, 70, 18, 0.0, 30.0, 0.489_176_419_220_246_9),
        (30, 40, 30, 0.0, 50.0, -1.712_346_908_057_405),
        (5, 0, 15, 0.0, 60.0, 1.430_237_437_081_245_6),
        (50, 3, 47, 0.0, 30.0, -0.650_861_033_231_475_7),
    ];

    #[test]
    fn llr_matches_fishtest() {
        for (losses, draws, wins, elo0, elo1, expected) in FISHTEST {
            let got = match_llr(&record(wins, draws, losses), elo0, elo1);
            assert!(
                (got - expected).abs() < 1e-6,
                "{losses}/{draws}/{wins} [{elo0}, {elo1}]: {got} vs {expected}"
            );
        }
    }

    #[test]
    fn llr_of_a_pentanomial_matches_fishtest() {
        // The same routine on game pairs (fishtest's pentanomial, pair scores 0, ¼, ½, ¾, 1):
        // LLR_logistic(0, 30, [2, 10, 40, 12, 6]) = 0.9166107110068038 (source as above).
        let outcomes = [
            (0.0, 2.0),
            (0.25, 10.0),
            (0.5, 40.0),
            (0.75, 12.0),
            (1.0, 6.0),
        ];
        let got = generalized_llr(&outcomes, score_from_elo(0.0), score_from_elo(30.0));
        assert!((got - 0.916_610_711_006_803_8).abs() < 1e-6, "{got}");
    }

    #[test]
    fn without_draws_the_llr_is_the_binomial_one() {
        // Wald's SPRT for a Bernoulli parameter (Wald 1945): W ln(p1/p0) + L ln(q1/q0),
        // by hand. The empty draw cell of 0.001 moves it by less than 0.005.
        let (p0, p1) = (0.5, score_from_elo(30.0));
        for (w, l) in [(20u32, 0u32), (30, 10), (12, 18), (100, 97)] {
            let by_hand =
                f64::from(w) * (p1 / p0).ln() + f64::from(l) * ((1.0 - p1) / (1.0 - p0)).ln();
            let got = match_llr(&record(w, 0, l), 0.0, 30.0);
            assert!((got - by_hand).abs() < 5e-3, "{w}/{l}: {got} vs {by_hand}");
        }
    }

    #[test]
    fn wald_bounds() {
        // ln(0.05/0.95) = −ln 19 = −2.944439; ln(0.9/0.05) = ln 18; ln(0.1/0.95).
        let (lo, hi) = bounds(0.05, 0.05);
        assert!((lo + 2.944_438_979_166_44).abs() < 1e-12);
        assert!((hi - 2.944_438_979_166_44).abs() < 1e-12);
        let (lo, hi) = bounds(0.05, 0.1);
        assert!((lo - (0.1f64 / 0.95).ln()).abs() < 1e-12);
        assert!((hi - 18f64.ln()).abs() < 1e-12);
    }

    #[test]
    fn decisions_follow_the_bounds_and_the_maximum() {
        let sprt = Sprt::new(SprtConfig {
            max_matches: 50,
            ..SprtConfig::default()
        })
        .unwrap();
        // 35 straight wins stay below ln 19 (LLR 2.89), the 36th crosses it (2.97).
        assert_eq!(sprt.decide(&record(35, 0, 0)), None);
        assert_eq!(sprt.decide(&record(36, 0, 0)), Some(SprtVerdict::H1));
        assert_eq!(
            sprt.decide(&record(20, 10, 20)),
            Some(SprtVerdict::Inconclusive)
        );
        // 32 straight losses stay above −ln 19 (LLR −2.88), the 33rd reaches it (−2.97).
        assert_eq!(sprt.decide(&record(0, 0, 32)), None);
        assert_eq!(sprt.decide(&record(0, 0, 33)), Some(SprtVerdict::H0));
        let r = sprt.report(&record(36, 0, 0), 3);
        assert_eq!(r.verdict, SprtVerdict::H1);
        assert_eq!((r.matches, r.played_past_stop), (36, 3));
        assert_eq!(r.match_elo.elo, f64::INFINITY);
        assert!(r.match_elo.low > 200.0, "{r:?}");
        let json = serde_json::to_string(&r).unwrap();
        assert!(json.contains(r#""verdict":"h1""#), "{json}");
        assert_eq!(r.summary().verdict, SprtVerdict::H1);
    }

    /// Plays `runs` simulated tests of `config` at a true Elo difference `elo` on the match
    /// score, with a share `draws` of drawn matches; the share of each verdict and the mean
    /// matches played.
    fn simulate(config: SprtConfig, elo: f64, draws: f64, runs: u32, seed: u64) -> [f64; 4] {
        use rand::{Rng, SeedableRng};
        let sprt = Sprt::new(config).unwrap();
        let s = score_from_elo(elo);
        let (win, loss) = (s - draws / 2.0, 1.0 - s - draws / 2.0);
        assert!(win > 0.0 && loss > 0.0);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut verdicts = [0u32; 3];
        let mut matches = 0u64;
        for _ in 0..runs {
            let mut r = Record::default();
            let verdict = loop {
                let u: f64 = rng.random();
                if u < win {
                    r.wins += 1;
                } else if u < win + draws {
                    r.draws += 1;
                } else {
                    r.losses += 1;
                }
                if let Some(v) = sprt.decide(&r) {
                    break v;
                }
            };
            matches += u64::from(r.total());
            verdicts[verdict as usize] += 1;
        }
        let share = |n: u32| f64::from(n) / f64::from(runs);
        [
            share(verdicts[SprtVerdict::H0 as usize]),
            share(verdicts[SprtVerdict::H1 as usize]),
            share(verdicts[SprtVerdict::Inconclusive as usize]),
            matches as f64 / f64::from(runs),
        ]
    }

    #[test]
    fn simulated_tests_keep_their_error_rates() {
        // 2,000 tests at each true difference, with no practical maximum. Three standard
        // errors of a rate of 0.05 over 2,000 tests are 0.015.
        let runs = 2000;
        let slack = 3.0 * (0.05f64 * 0.95 / f64::from(runs)).sqrt();
        let config = SprtConfig {
            max_matches: 1_000_000,
            ..SprtConfig::default()
        };
        for (elo, draws, seed) in [(0.0, 0.05, 1), (0.0, 0.3, 2)] {
            let [h0, h1, _, n] = simulate(config, elo, draws, runs, seed);
            eprintln!("[0, 30] at {elo} Elo, draws {draws}: H1 {h1}, H0 {h0}, {n:.0} matches");
            assert!(h1 <= config.alpha + slack, "false positives {h1} at {elo}");
        }
        for (elo, draws, seed) in [(30.0, 0.05, 3), (30.0, 0.3, 4)] {
            let [h0, h1, _, n] = simulate(config, elo, draws, runs, seed);
            eprintln!("[0, 30] at {elo} Elo, draws {draws}: H1 {h1}, H0 {h0}, {n:.0} matches");
            assert!(h0 <= config.beta + slack, "false negatives {h0} at {elo}");
        }
        // Halfway between the hypotheses either verdict is as likely; far outside them the
        // wrong one (almost) never comes.
        let [h0, h1, _, _] = simulate(config, 15.0, 0.05, runs, 5);
        assert!(
            (h1 - 0.5).abs() < 0.06 && (h0 - 0.5).abs() < 0.06,
            "{h0} {h1}"
        );
        let [_, h1, _, n] = simulate(config, -60.0, 0.05, 500, 6);
        assert!(h1 < 0.005, "{h1}");
        assert!(n < 200.0, "{n}");
        // Unequal rates: alpha 0.01, beta 0.2.
        let uneven = SprtConfig {
            alpha: 0.01,
            beta: 0.2,
            ..config
        };
        let [_, h1, _, _] = simulate(uneven, 0.0, 0.05, runs, 7);
        let tight = 3.0 * (0.01f64 * 0.99 / f64::from(runs)).sqrt();
        assert!(h1 <= 0.01 + tight, "false positives {h1} at alpha 0.01");
        let [h0, _, _, _] = simulate(uneven, 30.0, 0.05, runs, 8);
        let loose = 3.0 * (0.2f64 * 0.8 / f64::from(runs)).sqrt();
        assert!(h0 <= 0.2 + loose, "false negatives {h0} at beta 0.2");
    }

    #[test]
    fn a_maximum_ends_tests_inconclusive() {
        let capped = SprtConfig {
            max_matches: 100,
            ..SprtConfig::default()
        };
        let [h0, h1, open, n] = simulate(capped, 0.0, 0.05, 500, 9);
        assert!(open > 0.5 && h0 + h1 + open == 1.0, "{h0} {h1} {open}");
        assert!(n <= 100.0);
    }

    #[test]
    fn the_option_parses_and_bad_text_is_named() {
        let c = parse_sprt("0,30", 100).unwrap();
        assert_eq!((c.elo0, c.elo1, c.alpha, c.beta), (0.0, 30.0, 0.05, 0.05));
        assert_eq!(c.max_matches, 100);
        let c = parse_sprt("-5, 10, 0.01, 0.1", 7).unwrap();
        assert_eq!((c.elo0, c.elo1, c.alpha, c.beta), (-5.0, 10.0, 0.01, 0.1));
        for (text, says) in [
            ("30", "got 1 values"),
            ("0,30,0.05", "got 3 values"),
            ("0,x", "elo1: \"x\" is not a number"),
            ("0,inf", "elo1: \"inf\" is not a number"),
            ("30,0", "elo1: must be above elo0 (30), got 0"),
            (
                "0,30,0.5,0.05",
                "alpha: must be strictly between 0 and 0.5, got 0.5",
            ),
            (
                "0,30,0.05,0",
                "beta: must be strictly between 0 and 0.5, got 0",
            ),
            ("0,2000", "elo1: must be between -1000 and 1000, got 2000"),
        ] {
            let e = parse_sprt(text, 100).unwrap_err().to_string();
            assert!(e.starts_with(&format!("SPRT {text:?}: ")), "{text}: {e}");
            assert!(e.ends_with(says), "{text}: {e}");
        }
        let e = parse_sprt("0,30", 0).unwrap_err().to_string();
        assert!(
            e.ends_with("max_matches: must be between 1 and 1000000, got 0"),
            "{e}"
        );
    }
}
