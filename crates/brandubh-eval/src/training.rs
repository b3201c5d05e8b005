//! Evaluation inside training: after each iteration the new checkpoint plays matches
//! against the previous one and against a fixed baseline ([`evaluate_iteration`]). The
//! training crate does not depend on this one; the binary calls this from the training
//! loop's evaluation hook and files [`MatchReport::summary`] into `metrics.jsonl`.
//! Gating (keeping the previous network unless the new one scores at least the threshold,
//! or with `[evaluation.sprt]` unless a sequential test accepts H1) is decided by the loop
//! from `vs_previous`: its score, or the verdict its summary carries.

use std::path::Path;

use brandubh_run::config::EvaluationConfig;

use brandubh_search::SearchSettings;

use crate::agent::{Entrant, load_checkpoint};
use crate::error::EvalError;
use crate::runner::{DEFAULT_PLY_CAP, MatchConfig, MatchReport, run_matches, run_sprt};
use crate::seeds::mix;
use crate::spec::AgentSpec;
use crate::sprt::Sprt;

/// The two series of matches of one iteration.
#[derive(Clone, Debug, PartialEq)]
pub struct IterationEvaluation {
    /// The candidate (A) against the previous network (B).
    pub vs_previous: MatchReport,
    /// The candidate (A) against the baseline (B).
    pub vs_baseline: MatchReport,
}

/// Plays `config.matches` matches of the checkpoint `candidate` against the checkpoint
/// `previous` and as many against `config.baseline`, both networks searching with the run's
/// search `settings` (without noise) and `config.sims` simulations, on every core, with the
/// default ply cap. With gating by a sequential test (`config.sprt`), the matches against
/// `previous` go on until the test decides or reaches its maximum instead.
/// Each series has its own seed derived from `seed`.
pub fn evaluate_iteration(
    candidate: &Path,
    previous: &Path,
    config: &EvaluationConfig,
    settings: &SearchSettings,
    seed: u64,
) -> Result<IterationEvaluation, EvalError> {
    let baseline_spec: AgentSpec = config.baseline.parse()?;
    let (new, old) = iteration_entrants(candidate, previous, config, settings)?;
    let baseline = Entrant::prepare(&baseline_spec)?;
    let series = |tag: u64| MatchConfig {
        matches: config.matches,
        threads: 0,
        seed: mix(seed, &[tag]),
        ply_cap: DEFAULT_PLY_CAP,
        ..MatchConfig::default()
    };
    let vs_previous = match config.sprt.filter(|_| config.gating) {
        Some(sprt) => run_sprt(&new, &old, &series(1), &Sprt::new(sprt)?, &|_| {})?,
        None => run_matches(&new, &old, &series(1), &|_| {})?,
    };
    Ok(IterationEvaluation {
        vs_previous,
        vs_baseline: run_matches(&new, &baseline, &series(2), &|_| {})?,
    })
}

/// The candidate and the previous network of an iteration's evaluation: each searching with
/// `settings` and `config.sims` simulations.
pub fn iteration_entrants(
    candidate: &Path,
    previous: &Path,
    config: &EvaluationConfig,
    settings: &SearchSettings,
) -> Result<(Entrant, Entrant), EvalError> {
    let settings = settings.clone().with_simulations(config.sims);
    let (net, c) = load_checkpoint(candidate)?;
    let new = Entrant::from_net(format!("candidate {}", c.name), net, settings.clone());
    let (net, p) = load_checkpoint(previous)?;
    let old = Entrant::from_net(format!("previous {}", p.name), net, settings);
    Ok((new, old))
}
