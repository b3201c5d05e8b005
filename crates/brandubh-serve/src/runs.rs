//! What the Run page shows of a run directory, read through the library functions that own
//! each file: the layout and state (`brandubh_run::RunDir`), metrics
//! (`brandubh_run::metrics`), checkpoints (`brandubh_eval::list_checkpoints`), the Elo
//! ladder's report (`brandubh_eval::LadderReport`).
//!
//! This module is the only place in the crate that touches a run directory.

use std::path::Path;
use std::time::{Duration, SystemTime};

use brandubh_eval::LadderReport;
use brandubh_run::RunDir;
use brandubh_run::config::RunConfig;
use brandubh_run::metrics::{IterationMetrics, read_metrics};
use brandubh_run::replay::list_chunks;
use brandubh_search::SearchSettings;
use serde::Serialize;

/// A run given with `--run`: its name (the directory's) and where it lies.
#[derive(Clone, Debug)]
pub struct RunSource {
    /// The name shown (the directory's file name).
    pub name: String,
    dir: RunDir,
}

/// A checkpoint of a run, as the Run page lists it.
#[derive(Clone, Debug, Serialize)]
pub struct CheckpointInfo {
    /// Its name, e.g. `iter-000012` (the key a client plays it by).
    pub name: String,
    /// The training iteration that wrote it, if recorded.
    pub iteration: Option<u64>,
    /// Optimizer steps.
    pub step: u64,
    /// When it was written, seconds since the Unix epoch.
    pub created_unix_s: u64,
}

/// Everything the Run page shows, read fresh on each poll.
#[derive(Clone, Debug, Serialize)]
pub struct RunSnapshot {
    /// The run's name.
    pub name: String,
    /// The configuration's name and planned iterations, if `config.toml` reads.
    pub config_name: Option<String>,
    /// Iterations the configuration asks for.
    pub planned_iterations: Option<u32>,
    /// The last complete iteration (0: none).
    pub iteration: u32,
    /// What the trainer is doing, in words.
    pub activity: String,
    /// Seconds since a file of the run last changed.
    pub idle_s: Option<u64>,
    /// One record per complete iteration (non-finite numbers as `null`).
    pub metrics: Vec<IterationMetrics>,
    /// The Elo ladder, if `brandubh ladder` has rated the run.
    pub ladder: Option<LadderReport>,
    /// The checkpoints, oldest first.
    pub checkpoints: Vec<CheckpointInfo>,
    /// Files that did not read, each a one-line message naming the file.
    pub problems: Vec<String>,
}

/// A run that is still "being trained" when a file changed within this long.
const ACTIVE: Duration = Duration::from_secs(180);

impl RunSource {
    /// The run at `dir`; an error when it is not a directory.
    pub fn new(dir: &Path) -> Result<RunSource, String> {
        if !dir.is_dir() {
            return Err(format!("--run {}: not a directory", dir.display()));
        }
        let name = dir
            .canonicalize()
            .ok()
            .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| dir.display().to_string());
        Ok(RunSource {
            name,
            dir: RunDir::new(dir),
        })
    }

    /// The run directory.
    #[must_use]
    pub fn dir(&self) -> &Path {
        self.dir.root()
    }

    /// The configuration the run trains with, if it reads.
    pub fn config(&self) -> Result<RunConfig, String> {
        RunConfig::from_run_copy(self.dir.config()).map_err(|e| e.to_string())
    }

    /// The search the run's agents play with (its configuration's, else the defaults).
    pub fn search_settings(&self) -> Result<SearchSettings, String> {
        brandubh_eval::run_search_settings(Some(&self.dir)).map_err(|e| e.to_string())
    }

    /// The checkpoints, oldest first.
    pub fn checkpoints(&self) -> Result<Vec<brandubh_eval::Checkpoint>, String> {
        brandubh_eval::list_checkpoints(self.dir.root()).map_err(|e| e.to_string())
    }

    /// Reads everything the Run page shows. Files that do not read become `problems`;
    /// this never fails as a whole.
    #[must_use]
    pub fn snapshot(&self) -> RunSnapshot {
        let mut problems = Vec::new();
        let config = self.config().map_err(|e| problems.push(e)).ok();
        let metrics = read_metrics(&self.dir.metrics())
            .map_err(|e| problems.push(e.to_string()))
            .unwrap_or_default();
        let iteration = match self.dir.read_state() {
            Ok(state) => state.map_or(0, |s| s.iteration),
            Err(e) => {
                problems.push(e.to_string());
                0
            }
        };
        let checkpoints: Vec<CheckpointInfo> = self
            .checkpoints()
            .map_err(|e| problems.push(e))
            .unwrap_or_default()
            .into_iter()
            .map(|c| CheckpointInfo {
                iteration: c
                    .meta
                    .extra
                    .get("iteration")
                    .and_then(serde_json::Value::as_u64),
                name: c.name,
                step: c.meta.step,
                created_unix_s: c.meta.created_unix_s,
            })
            .collect();
        let ladder = self.ladder().map_err(|e| problems.push(e)).ok().flatten();
        let planned = config.as_ref().map(|c| c.iterations);
        let idle = self.idle();
        let activity = self.activity(iteration, planned, idle, &checkpoints);
        RunSnapshot {
            name: self.name.clone(),
            config_name: config.as_ref().map(|c| c.name.clone()),
            planned_iterations: planned,
            iteration,
            activity,
            idle_s: idle.map(|d| d.as_secs()),
            metrics,
            ladder,
            checkpoints,
            problems,
        }
    }

    /// `ladder/ratings.json`, if the run has been rated.
    fn ladder(&self) -> Result<Option<LadderReport>, String> {
        let path = self.dir.ladder_ratings();
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| format!("{}: {e}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("{}: {e}", path.display())),
        }
    }

    /// Time since the newest of the files training writes changed.
    fn idle(&self) -> Option<Duration> {
        let newest = [
            self.dir.state(),
            self.dir.metrics(),
            self.dir.chunks(),
            self.dir.checkpoints(),
        ]
        .iter()
        .filter_map(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok())
        .max()?;
        SystemTime::now().duration_since(newest).ok()
    }

    /// What the trainer is doing, judged from the files.
    fn activity(
        &self,
        iteration: u32,
        planned: Option<u32>,
        idle: Option<Duration>,
        checkpoints: &[CheckpointInfo],
    ) -> String {
        if planned.is_some_and(|p| iteration >= p) {
            return "the run is finished".to_owned();
        }
        let active = idle.is_some_and(|d| d < ACTIVE);
        if !active {
            let minutes = idle.map_or(String::new(), |d| {
                format!(" (no file changed for {} min)", d.as_secs() / 60)
            });
            return format!("not training now{minutes}");
        }
        let next = iteration + 1;
        let next_ckpt = checkpoints
            .iter()
            .any(|c| c.iteration == Some(u64::from(next)));
        if next_ckpt {
            return format!("evaluating iteration {next} (its checkpoint is written)");
        }
        let chunks = list_chunks(&self.dir.chunks())
            .map(|c| c.iter().filter(|c| c.iteration == next).count())
            .unwrap_or(0);
        if chunks > 0 {
            format!(
                "iteration {next}: self-play or training ({chunks} chunk files of its games so far)"
            )
        } else {
            format!("iteration {next}: starting self-play")
        }
    }
}
