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
pub mod serve;
pub mod status;
pub mod train;

use anyhow::Context;
use brandubh_rules::Position;
use brandubh_train::run::{Evaluate, EvaluationError, EvaluationReport, EvaluationRequest};

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
