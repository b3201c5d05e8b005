//! Shared by the API and browser tests: a tiny seeded agent file, a tiny trained run, and
//! a minimal HTTP/1.1 client over `std::net::TcpStream` (one request per connection).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use brandubh_agent::{Agent, AgentMeta, SourceInfo, TrainingInfo};
use brandubh_net::{Device, NetConfig};
use brandubh_search::{Algorithm, SearchSettings};

/// A fresh scratch directory inside Cargo's target directory.
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("brandubh-serve-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A tiny agent file (C8xN1, PUCT, seeded weights), written once per test binary.
pub fn tiny_agent() -> &'static Path {
    static AGENT: OnceLock<PathBuf> = OnceLock::new();
    AGENT.get_or_init(|| {
        let device = Device::flex();
        device.seed(11);
        let model = NetConfig::new()
            .with_channels(8)
            .with_blocks(1)
            .init(&device);
        let search = SearchSettings {
            algorithm: Algorithm::Puct,
            simulations: 16,
            ..SearchSettings::default()
        };
        let meta = AgentMeta::new(
            "tiny",
            search,
            TrainingInfo::default(),
            SourceInfo::default(),
        );
        let path = scratch("agent").join("tiny.agent");
        Agent::from_model(&model, meta, &path)
            .unwrap()
            .save(&path)
            .unwrap();
        path
    })
}

/// A run of `configs/tiny.toml` trained for its two iterations, once per test binary.
pub fn tiny_run() -> &'static Path {
    static RUN: OnceLock<PathBuf> = OnceLock::new();
    RUN.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let config =
            brandubh_run::config::RunConfig::from_file(root.join("configs/tiny.toml")).unwrap();
        let dir = scratch("run").join("tiny");
        let options = brandubh_train::run::RunOptions {
            dir: dir.clone(),
            force_config: false,
            max_new_iterations: None,
            device: Device::flex(),
            selfplay_on_device: false,
        };
        brandubh_train::run::train(
            &config,
            &options,
            &mut brandubh_train::run::Quiet,
            &mut Matches,
        )
        .unwrap();
        dir
    })
}

/// The evaluation matches `brandubh train` plays after each iteration, so that the run's
/// metrics have evaluation results like a real run's.
struct Matches;

impl brandubh_train::run::Evaluate for Matches {
    fn evaluate(
        &mut self,
        r: &brandubh_train::run::EvaluationRequest<'_>,
    ) -> Result<Option<brandubh_train::run::EvaluationReport>, brandubh_train::run::EvaluationError>
    {
        let eval = brandubh_eval::training::evaluate_iteration(
            r.candidate,
            r.previous,
            r.config,
            r.search,
            r.seed,
        )
        .map_err(|e| brandubh_train::run::EvaluationError {
            iteration: r.iteration,
            cause: Box::new(e),
        })?;
        Ok(Some(brandubh_train::run::EvaluationReport {
            vs_previous: Some(eval.vs_previous.summary("previous")),
            vs_baseline: Some(eval.vs_baseline.summary(&r.config.baseline)),
        }))
    }
}

pub mod http;
#[allow(unused_imports)]
pub use http::{Reply, get, post, request_raw};
