//! One module per subcommand: `Args` (clap) and `run(args) -> anyhow::Result<ExitCode>`.

pub mod analyze;
pub mod bench;
pub mod export;
pub mod ladder;
pub mod match_;
pub mod perft;
pub mod play;
pub mod replay;
pub mod train;

use anyhow::Context;
use brandubh_rules::Position;

/// Parses a `--position` argument, naming the option in the error.
pub fn parse_position(text: Option<&str>) -> anyhow::Result<Position> {
    match text {
        None => Ok(Position::start()),
        Some(t) => t.parse().context("--position"),
    }
}

/// The evaluation hook of `brandubh train` (matches after each iteration).
pub fn evaluation_hook(
    request: &brandubh_train::run::EvaluationRequest<'_>,
) -> Result<Option<brandubh_train::run::EvaluationReport>, String> {
    // The new checkpoint against the previous one and the run's baseline (networks with
    // Gumbel search and the run's evaluation simulations).
    let eval = brandubh_eval::training::evaluate_iteration(
        request.candidate,
        request.previous,
        request.config,
        brandubh_eval::Algo::Gumbel,
        request.seed,
    )
    .map_err(|e| format!("evaluating iteration {}: {e}", request.iteration))?;
    Ok(Some(brandubh_train::run::EvaluationReport {
        vs_previous: Some(eval.vs_previous.summary("previous")),
        vs_baseline: Some(eval.vs_baseline.summary(&request.config.baseline)),
    }))
}
