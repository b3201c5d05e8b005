//! One module per subcommand: `Args` (clap) and `run(args) -> anyhow::Result<ExitCode>`.

pub mod analyze;
pub mod bench;
pub mod bench_gpu;
pub mod engine;
pub mod export;
pub mod ladder;
pub mod match_;
pub mod perft;
pub mod play;
pub mod remote;
pub mod replay;
pub mod report;
pub mod serve;
pub mod status;
pub mod train;

use anyhow::Context;
use brandubh_rules::Position;
use brandubh_train::run::{Evaluate, EvaluationError, EvaluationReport, EvaluationRequest};

/// `--prove` and `--verify`: the exact checks around each search of an agent (`analyze`,
/// `export`); each left out keeps the agent's or the run's setting.
#[derive(Debug, clap::Args)]
pub struct ExactChecks {
    /// Exact proofs of the root moves this many plies deep before each search, 0-15 (the
    /// search's `root_proof_plies`; default: the agent's or the run's setting).
    #[arg(long, value_name = "PLIES", value_parser = clap::value_parser!(u32)
              .range(0..=i64::from(brandubh_search::MAX_ROOT_PROOF_PLIES)))]
    pub prove: Option<u32>,
    /// Exact check of the move to play for a forced loss this many plies deep after each
    /// search, 0-15 (the search's `verify_plies`; default: the agent's or the run's
    /// setting).
    #[arg(long, value_name = "PLIES", value_parser = clap::value_parser!(u32)
              .range(0..=i64::from(brandubh_search::MAX_ROOT_PROOF_PLIES)))]
    pub verify: Option<u32>,
}

impl ExactChecks {
    /// Sets the checks given in `search`.
    pub fn apply(&self, search: &mut brandubh_search::SearchSettings) {
        if let Some(p) = self.prove {
            search.root_proof_plies = p;
        }
        if let Some(p) = self.verify {
            search.verify_plies = p;
        }
    }
}

/// Parses a `--position` argument, naming the option in the error.
pub fn parse_position(text: Option<&str>) -> anyhow::Result<Position> {
    match text {
        None => Ok(Position::start()),
        Some(t) => t.parse().context("--position"),
    }
}

/// The evaluation of `brandubh train`: after each iteration the new checkpoint plays the
/// previous one and the run's baseline, with the run's search settings and its evaluation
/// simulations.
#[derive(Debug, Default)]
pub struct MatchEvaluation;

impl Evaluate for MatchEvaluation {
    fn evaluate(
        &mut self,
        request: &EvaluationRequest<'_>,
    ) -> Result<Option<EvaluationReport>, EvaluationError> {
        let eval = brandubh_eval::training::evaluate_iteration(
            request.candidate,
            request.previous,
            request.config,
            request.search,
            request.seed,
        )
        .map_err(|e| EvaluationError {
            iteration: request.iteration,
            cause: Box::new(e),
        })?;
        Ok(Some(EvaluationReport {
            vs_previous: Some(eval.vs_previous.summary("previous")),
            vs_baseline: Some(eval.vs_baseline.summary(&request.config.baseline)),
        }))
    }
}
