//! The per-iteration metrics log, `metrics.jsonl`: one JSON object per line.
//!
//! [`append_metrics`] rewrites the whole file through [`brandubh_fs::write_atomic`], so a
//! crash never leaves a partial line; [`read_metrics`] still tolerates a truncated last
//! line (a file written by other means, or copied while being written). Non-finite numbers
//! (a diverged loss, a loss of an iteration without training) are written as `null` and
//! read back as NaN.
//!
//! A line looks like (wrapped here):
//!
//! ```text
//! {"iteration":3,"elapsed_s":95.2,"iteration_s":31.0,"selfplay_s":22.1,"training_s":6.3,
//!  "selfplay_games":48,"positions":2371,"total_positions":7012,"evaluations_per_s":1712.5,
//!  "mean_game_length":49.4,"white_win_rate":0.44,"black_win_rate":0.5,
//!  "unfinished_rate":0.06,"training_steps":40,"policy_loss":2.91,"value_loss":0.83,
//!  "total_loss":3.74,"learning_rate":0.002,"window_size":7012,
//!  "vs_baseline":{"opponent":"random","matches":4,"wins":3,"draws":1,"losses":0}}
//! ```

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use brandubh_fs::FsError;

/// The result of a series of two-game matches (RULES.md, "Matches").
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MatchSummary {
    /// The opponent, e.g. `"previous"` or an agent spec such as `"greedy"`.
    pub opponent: String,
    /// Matches played (with `sprt`: the matches the test took to decide).
    pub matches: u32,
    /// Matches won by the new network.
    pub wins: u32,
    /// Matches drawn.
    pub draws: u32,
    /// Matches lost.
    pub losses: u32,
    /// The sequential test that decided when the series stopped, if one did
    /// (`[evaluation.sprt]`); absent in lines of fixed series and written before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sprt: Option<SprtSummary>,
}

/// What a sequential probability ratio test decided (`brandubh_eval::sprt`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SprtVerdict {
    /// H0 accepted: the log-likelihood ratio fell to the lower bound.
    H0,
    /// H1 accepted: the log-likelihood ratio rose to the upper bound.
    H1,
    /// Neither: the maximum number of matches came first.
    Inconclusive,
}

impl fmt::Display for SprtVerdict {
    /// `H0`, `H1`, `inconclusive`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SprtVerdict::H0 => "H0",
            SprtVerdict::H1 => "H1",
            SprtVerdict::Inconclusive => "inconclusive",
        })
    }
}

/// A sequential test's verdict with its log-likelihood ratio and bounds, as a metrics line
/// records it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SprtSummary {
    /// What the test decided.
    pub verdict: SprtVerdict,
    /// Elo of H0 (match score, A over B).
    pub elo0: f64,
    /// Elo of H1.
    pub elo1: f64,
    /// The log-likelihood ratio of H1 over H0 when the test stopped.
    pub llr: f64,
    /// The lower bound, `ln(beta / (1 - alpha))`: H0 is accepted at or below it.
    pub lower: f64,
    /// The upper bound, `ln((1 - beta) / alpha)`: H1 is accepted at or above it.
    pub upper: f64,
}

impl MatchSummary {
    /// (wins + draws / 2) / matches, in [0, 1]; NaN when no match was played.
    #[must_use]
    pub fn score(&self) -> f64 {
        (f64::from(self.wins) + 0.5 * f64::from(self.draws)) / f64::from(self.matches)
    }
}

/// What one iteration of training did: one line of `metrics.jsonl`.
///
/// Rates are fractions in [0, 1]; times are seconds of wall-clock time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IterationMetrics {
    /// The iteration, numbered from 1.
    pub iteration: u32,
    /// Wall time since the run started, resumed sessions included.
    #[serde(with = "nan_as_null")]
    pub elapsed_s: f64,
    /// Wall time of this iteration.
    #[serde(with = "nan_as_null")]
    pub iteration_s: f64,
    /// Of which self-play.
    #[serde(with = "nan_as_null")]
    pub selfplay_s: f64,
    /// Of which training.
    #[serde(with = "nan_as_null")]
    pub training_s: f64,
    /// Self-play games finished this iteration.
    pub selfplay_games: u32,
    /// Positions recorded this iteration.
    pub positions: u64,
    /// Positions recorded since the run started.
    pub total_positions: u64,
    /// Leaves evaluated per second during self-play, those the evaluation cache answered
    /// included (their share: `cache_hit_rate`); null when this process played no game of
    /// the iteration (its games were on disk from before a restart, or came from actors).
    #[serde(with = "nan_as_null")]
    pub evaluations_per_s: f64,
    /// Share of self-play's leaves the evaluation cache answered (`selfplay.eval_cache`);
    /// 0 without it (not written then).
    #[serde(default, skip_serializing_if = "crate::config::is_zero_f64")]
    pub cache_hit_rate: f64,
    /// Mean length of the self-play games, in plies.
    #[serde(with = "nan_as_null")]
    pub mean_game_length: f64,
    /// Fraction of self-play games won by White (by the rules).
    /// Sparring games (`sparring_games`) are not among them: the rates of this line are
    /// of the network against itself.
    #[serde(with = "nan_as_null")]
    pub white_win_rate: f64,
    /// Fraction of self-play games won by Black (by the rules).
    #[serde(with = "nan_as_null")]
    pub black_win_rate: f64,
    /// Fraction of self-play games stopped by the ply cap.
    #[serde(with = "nan_as_null")]
    pub unfinished_rate: f64,
    /// Of `selfplay_games`, the sparring games (`selfplay.sparring_fraction`: White was
    /// the alpha-beta searcher), also those of a resumed iteration's chunks (which record
    /// them from chunk format version 3); 0 in files written before.
    #[serde(default, skip_serializing_if = "crate::config::is_zero_u32")]
    pub sparring_games: u32,
    /// Of those, the games Black (the network) won.
    #[serde(default, skip_serializing_if = "crate::config::is_zero_u32")]
    pub sparring_black_wins: u32,
    /// Store runs: games the learner consumed but did not train on, their network being
    /// more than its `max_network_age` older than the one trained.
    #[serde(default, skip_serializing_if = "crate::config::is_zero_u32")]
    pub stale_games: u32,
    /// Store runs: valid chunks left waiting for later iterations because this one had its
    /// most games (`--max-games`).
    #[serde(default, skip_serializing_if = "crate::config::is_zero_u32")]
    pub waiting_chunks: u32,
    /// Gradient steps taken.
    pub training_steps: u32,
    /// Mean policy cross-entropy over the iteration's steps.
    #[serde(with = "nan_as_null")]
    pub policy_loss: f64,
    /// Mean value MSE over the iteration's steps.
    #[serde(with = "nan_as_null")]
    pub value_loss: f64,
    /// Mean MSE of the moves-left head over the iteration's steps (plies to the end / 50),
    /// in runs whose network has one (`training.moves_left_loss_weight`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moves_left_loss: Option<f64>,
    /// Mean total loss (policy + weighted value + L2).
    #[serde(with = "nan_as_null")]
    pub total_loss: f64,
    /// Learning rate of the iteration.
    #[serde(with = "nan_as_null")]
    pub learning_rate: f64,
    /// Positions in the replay window.
    pub window_size: u64,
    /// Matches of the new network against the previous one, if evaluated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vs_previous: Option<MatchSummary>,
    /// Matches of the new network against the baseline, if evaluated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vs_baseline: Option<MatchSummary>,
    /// With gating on: whether the new network replaced the previous one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accepted: Option<bool>,
}

/// A metrics log that could not be read or written. Messages name the file.
#[derive(Debug, thiserror::Error)]
pub enum MetricsError {
    /// Reading failed.
    #[error("{}: cannot read: {cause}", file.display())]
    Io {
        /// The file.
        file: PathBuf,
        /// The underlying error.
        cause: io::Error,
    },
    /// A complete line that is not a metrics record.
    #[error("{}: line {line}: {message}", file.display())]
    Parse {
        /// The file.
        file: PathBuf,
        /// The line number, from 1.
        line: usize,
        /// serde_json's message.
        message: String,
    },
    /// A record that cannot be written as JSON.
    #[error("{}: cannot encode iteration {iteration}: {message}", file.display())]
    Encode {
        /// The file.
        file: PathBuf,
        /// The record's iteration.
        iteration: u32,
        /// serde_json's message.
        message: String,
    },
    /// Writing failed.
    #[error(transparent)]
    Write(#[from] FsError),
}

/// Parses the text of a metrics log. A last line without its newline that does not parse
/// is a write cut short: it is skipped with a warning. Blank lines are ignored.
pub fn parse_metrics(text: &str, file: &Path) -> Result<Vec<IterationMetrics>, MetricsError> {
    let complete = text.ends_with('\n');
    let lines: Vec<&str> = text.lines().collect();
    let mut records = Vec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<IterationMetrics>(line) {
            Ok(record) => records.push(record),
            Err(_) if i + 1 == lines.len() && !complete => {
                tracing::warn!(
                    "{}: ignoring truncated last line {} (an interrupted write)",
                    file.display(),
                    i + 1
                );
            }
            Err(e) => {
                return Err(MetricsError::Parse {
                    file: file.to_path_buf(),
                    line: i + 1,
                    message: e.to_string(),
                });
            }
        }
    }
    Ok(records)
}

/// Reads a metrics log (see [`parse_metrics`]); a missing file has no records.
pub fn read_metrics(path: &Path) -> Result<Vec<IterationMetrics>, MetricsError> {
    match std::fs::read_to_string(path) {
        Ok(text) => parse_metrics(&text, path),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(source) => Err(MetricsError::Io {
            file: path.to_path_buf(),
            cause: source,
        }),
    }
}

/// Adds `record` to the log at `path` and returns every record now in it.
///
/// Records of `record.iteration` and later are replaced (an iteration redone after a
/// resume has one line). The file is rewritten atomically.
pub fn append_metrics(
    path: &Path,
    record: &IterationMetrics,
) -> Result<Vec<IterationMetrics>, MetricsError> {
    let mut records = read_metrics(path)?;
    records.retain(|r| r.iteration < record.iteration);
    records.push(record.clone());
    let mut text = String::new();
    for r in &records {
        let line = serde_json::to_string(r).map_err(|e| MetricsError::Encode {
            file: path.to_path_buf(),
            iteration: r.iteration,
            message: e.to_string(),
        })?;
        text.push_str(&line);
        text.push('\n');
    }
    brandubh_fs::write_atomic(path, text.as_bytes())?;
    Ok(records)
}

/// `f64` fields as JSON numbers, with NaN and infinities as `null` (read back as NaN).
mod nan_as_null {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        if v.is_finite() {
            s.serialize_f64(*v)
        } else {
            s.serialize_none()
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A plausible record of iteration `i`.
    pub fn fake(i: u32) -> IterationMetrics {
        let x = f64::from(i);
        IterationMetrics {
            iteration: i,
            elapsed_s: 30.0 * x,
            iteration_s: 30.0,
            selfplay_s: 22.0,
            training_s: 6.0,
            selfplay_games: 48,
            positions: 2400,
            total_positions: 2400 * u64::from(i),
            evaluations_per_s: 1500.0 + 10.0 * x,
            cache_hit_rate: 0.2,
            mean_game_length: 40.0 + 20.0 * (x / 5.0).sin(),
            white_win_rate: 0.3 + 0.02 * x,
            black_win_rate: 0.6 - 0.02 * x,
            unfinished_rate: 0.1,
            sparring_games: 0,
            sparring_black_wins: 0,
            stale_games: 0,
            waiting_chunks: 0,
            training_steps: 40,
            policy_loss: 3.0 / (1.0 + 0.1 * x),
            value_loss: 0.9 / (1.0 + 0.05 * x),
            moves_left_loss: None,
            total_loss: 3.0 / (1.0 + 0.1 * x) + 0.9 / (1.0 + 0.05 * x),
            learning_rate: 0.002,
            window_size: 2000 + 100 * u64::from(i),
            vs_previous: Some(MatchSummary {
                opponent: "previous".into(),
                matches: 4,
                wins: 2 + i % 2,
                draws: 1,
                losses: 1 - i % 2,
                sprt: None,
            }),
            vs_baseline: (!i.is_multiple_of(3)).then(|| MatchSummary {
                opponent: "random".into(),
                matches: 4,
                wins: 3,
                draws: 0,
                losses: 1,
                sprt: None,
            }),
            accepted: None,
        }
    }

    #[test]
    fn append_and_read_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("metrics.jsonl");
        assert!(read_metrics(&path).unwrap().is_empty());
        for i in 1..=5 {
            let all = append_metrics(&path, &fake(i)).unwrap();
            assert_eq!(all.len(), i as usize);
        }
        let read = read_metrics(&path).unwrap();
        assert_eq!(read, (1..=5).map(fake).collect::<Vec<_>>());
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 5);
        assert!(!text.lines().next().unwrap().contains("accepted"));
    }

    #[test]
    fn redoing_an_iteration_replaces_its_line_and_later_ones() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("metrics.jsonl");
        for i in 1..=4 {
            append_metrics(&path, &fake(i)).unwrap();
        }
        let mut again = fake(3);
        again.policy_loss = 1.0;
        let all = append_metrics(&path, &again).unwrap();
        assert_eq!(
            all.iter().map(|r| r.iteration).collect::<Vec<_>>(),
            [1, 2, 3]
        );
        assert_eq!(read_metrics(&path).unwrap()[2].policy_loss, 1.0);
    }

    #[test]
    fn truncated_last_line_is_tolerated_but_garbage_inside_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("metrics.jsonl");
        append_metrics(&path, &fake(1)).unwrap();
        append_metrics(&path, &fake(2)).unwrap();
        let full = std::fs::read_to_string(&path).unwrap();
        let second_start = full.find('\n').unwrap() + 1;
        // Every cut inside the second line leaves the first record.
        for cut in second_start..full.len() - 1 {
            let records = parse_metrics(&full[..cut], &path).unwrap();
            assert_eq!(records, [fake(1)], "cut at {cut}");
        }
        // Appending after a crash repairs the file.
        std::fs::write(&path, &full[..full.len() - 10]).unwrap();
        let all = append_metrics(&path, &fake(2)).unwrap();
        assert_eq!(all, [fake(1), fake(2)]);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), full);
        // A complete line that is not a record is an error naming file and line.
        let bad = format!("{}{{\"iteration\": 2}}\n", &full[..second_start]);
        let err = parse_metrics(&bad, Path::new("runs/x/metrics.jsonl")).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("runs/x/metrics.jsonl: line 2: missing field"),
            "{err}"
        );
    }

    #[test]
    fn non_finite_numbers_round_trip_as_null() {
        let mut r = fake(1);
        r.policy_loss = f64::NAN;
        r.value_loss = f64::INFINITY;
        let line = serde_json::to_string(&r).unwrap();
        assert!(line.contains("\"policy_loss\":null"), "{line}");
        let back: IterationMetrics = serde_json::from_str(&line).unwrap();
        assert!(back.policy_loss.is_nan() && back.value_loss.is_nan());
        assert_eq!(back.total_loss, r.total_loss);
    }

    #[test]
    fn match_score() {
        let m = MatchSummary {
            opponent: "greedy".into(),
            matches: 4,
            wins: 2,
            draws: 1,
            losses: 1,
            sprt: None,
        };
        assert_eq!(m.score(), 0.625);
        assert!(MatchSummary::default().score().is_nan());
    }

    #[test]
    fn a_sequential_gate_round_trips_and_older_lines_have_none() {
        let mut r = fake(2);
        let gate = SprtSummary {
            verdict: SprtVerdict::H1,
            elo0: 0.0,
            elo1: 30.0,
            llr: 2.97,
            lower: -2.94,
            upper: 2.94,
        };
        r.vs_previous.as_mut().unwrap().sprt = Some(gate);
        let line = serde_json::to_string(&r).unwrap();
        assert!(
            line.contains(r#""sprt":{"verdict":"h1","elo0":0.0,"elo1":30.0,"llr":2.97"#),
            "{line}"
        );
        let back: IterationMetrics = serde_json::from_str(&line).unwrap();
        assert_eq!(back.vs_previous.unwrap().sprt, Some(gate));
        let old = r#"{"opponent":"previous","matches":8,"wins":5,"draws":1,"losses":2}"#;
        let m: MatchSummary = serde_json::from_str(old).unwrap();
        assert_eq!(m.sprt, None);
        assert_eq!(serde_json::to_string(&m).unwrap(), old);
        assert_eq!(SprtVerdict::Inconclusive.to_string(), "inconclusive");
    }
}
