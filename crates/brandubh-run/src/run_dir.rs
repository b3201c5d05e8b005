//! [`RunDir`]: a run's layout ([`RunLayout`], the names relative to the run's root) as
//! paths of a directory. Every path inside a run directory is built here; the trainer, the
//! evaluator, the ladder and the binary ask a `RunDir` for them.
//!
//! ```text
//! runs/NAME/
//!   config.toml                      RunDir::config        the configuration the run started with
//!   state.json                       RunDir::state         the last complete iteration (written last)
//!   checkpoints/iter-NNNNNN.*        RunDir::checkpoint    network after iteration N (0: initial)
//!   chunks/chunk-NNNNNN-SSSSSS.brz   RunDir::chunk         self-play games of iteration N
//!   metrics.jsonl                    RunDir::metrics       one line per complete iteration
//!   learning_curves.png              RunDir::learning_curves
//!   ladder/games.jsonl               RunDir::ladder_games  the ladder's stored matches
//!   ladder/ratings.json              RunDir::ladder_ratings
//!   elo.png                          RunDir::elo_plot
//! ```

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use brandubh_fs::FsError;

pub use crate::layout::checkpoint_name;
use crate::layout::{CHECKPOINT_PREFIX, RunLayout};

/// The files of a run directory (nothing is created until written).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunDir {
    root: PathBuf,
}

/// What `state.json` records: the last complete iteration and running totals.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    /// The last iteration whose checkpoint, metrics and plot are written (0: none yet).
    pub iteration: u32,
    /// Self-play games of complete iterations.
    pub total_games: u64,
    /// Recorded positions of complete iterations.
    pub total_positions: u64,
    /// Optimizer steps so far.
    pub total_steps: u64,
    /// Wall time of complete iterations, in seconds (time across restarts).
    pub elapsed_s: f64,
    /// The checkpoint self-play uses next (differs from the last one when gating keeps an
    /// older network), relative to the run directory.
    pub selfplay_checkpoint: String,
}

/// A run directory's file that could not be read or written; the message names it.
#[derive(Debug, thiserror::Error)]
pub enum RunDirError {
    /// A file or directory could not be read.
    #[error("{path}: {cause}", path = path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        cause: std::io::Error,
    },
    /// The state file is damaged.
    #[error("{path}: damaged state file: {reason}", path = path.display())]
    State {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A file could not be written.
    #[error(transparent)]
    Fs(#[from] FsError),
}

impl RunDir {
    /// The run directory at `root` (not created).
    #[must_use]
    pub fn new(root: impl Into<PathBuf>) -> RunDir {
        RunDir { root: root.into() }
    }

    /// The run a checkpoint lies in, if it lies in one (`RUN/checkpoints/NAME[.ext]`).
    #[must_use]
    pub fn of_checkpoint(checkpoint: &Path) -> Option<RunDir> {
        let dir = checkpoint.parent()?;
        if dir.file_name()? != RunLayout::CHECKPOINTS {
            return None;
        }
        let root = dir.parent()?;
        Some(RunDir::new(if root.as_os_str().is_empty() {
            Path::new(".")
        } else {
            root
        }))
    }

    /// The directory itself.
    #[must_use]
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `config.toml`: the configuration the run was started with.
    #[must_use]
    pub fn config(&self) -> PathBuf {
        self.root.join(RunLayout::CONFIG)
    }

    /// `state.json`: the last complete iteration.
    #[must_use]
    pub fn state(&self) -> PathBuf {
        self.root.join(RunLayout::STATE)
    }

    /// The chunk directory.
    #[must_use]
    pub fn chunks(&self) -> PathBuf {
        self.root.join(RunLayout::CHUNKS)
    }

    /// The chunk `seq` of `iteration`.
    #[must_use]
    pub fn chunk(&self, iteration: u32, seq: u32) -> PathBuf {
        self.root.join(RunLayout::chunk(iteration, seq))
    }

    /// The checkpoint directory.
    #[must_use]
    pub fn checkpoints(&self) -> PathBuf {
        self.root.join(RunLayout::CHECKPOINTS)
    }

    /// The checkpoint (stem, without extension) of `iteration`.
    #[must_use]
    pub fn checkpoint(&self, iteration: u32) -> PathBuf {
        self.root.join(RunLayout::checkpoint(iteration))
    }

    /// `metrics.jsonl`.
    #[must_use]
    pub fn metrics(&self) -> PathBuf {
        self.root.join(RunLayout::METRICS)
    }

    /// `learning_curves.png`.
    #[must_use]
    pub fn learning_curves(&self) -> PathBuf {
        self.root.join(RunLayout::LEARNING_CURVES)
    }

    /// The ladder's directory.
    #[must_use]
    pub fn ladder(&self) -> PathBuf {
        self.root.join(RunLayout::LADDER)
    }

    /// The ladder's stored matches.
    #[must_use]
    pub fn ladder_games(&self) -> PathBuf {
        self.root.join(RunLayout::LADDER_GAMES)
    }

    /// The ladder's ratings.
    #[must_use]
    pub fn ladder_ratings(&self) -> PathBuf {
        self.root.join(RunLayout::LADDER_RATINGS)
    }

    /// `elo.png`: the ladder's plot.
    #[must_use]
    pub fn elo_plot(&self) -> PathBuf {
        self.root.join(RunLayout::ELO_PLOT)
    }

    /// Creates the directory with its chunk and checkpoint directories, and removes the
    /// temporary files of writes that a crash interrupted.
    pub fn create(&self) -> Result<(), RunDirError> {
        for d in [self.root.clone(), self.chunks(), self.checkpoints()] {
            std::fs::create_dir_all(&d).map_err(|source| RunDirError::Io {
                path: d.clone(),
                cause: source,
            })?;
            brandubh_fs::remove_temp_files(&d)?;
        }
        Ok(())
    }

    /// Reads `state.json`; `None` if the run has no complete iteration yet.
    pub fn read_state(&self) -> Result<Option<RunState>, RunDirError> {
        let path = self.state();
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => {
                return Err(RunDirError::Io {
                    path,
                    cause: source,
                });
            }
        };
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| RunDirError::State {
                path,
                reason: e.to_string(),
            })
    }

    /// Writes `state.json` atomically.
    pub fn write_state(&self, state: &RunState) -> Result<(), RunDirError> {
        let json = serde_json::to_vec_pretty(state).map_err(|e| RunDirError::State {
            path: self.state(),
            reason: e.to_string(),
        })?;
        brandubh_fs::write_atomic(&self.state(), &json)?;
        Ok(())
    }

    /// The trainer's checkpoints present (`iter-NNNNNN`, at least one of their files), by
    /// iteration, as stems.
    pub fn list_checkpoints(&self) -> Result<Vec<(u32, PathBuf)>, RunDirError> {
        let mut out: Vec<(u32, PathBuf)> = self
            .checkpoint_stems()?
            .into_iter()
            .filter_map(|stem| {
                let name = stem.file_name()?.to_str()?;
                let n = name.strip_prefix(CHECKPOINT_PREFIX)?.parse::<u32>().ok()?;
                Some((n, stem))
            })
            .collect();
        out.sort();
        Ok(out)
    }

    /// Every checkpoint stem in the checkpoint directory: the file names without their
    /// extension (a checkpoint's format, in `brandubh-net`, decides which files make it
    /// whole), sorted and unique, leaving out hidden and temporary files; none if there is
    /// no such directory.
    pub fn checkpoint_stems(&self) -> Result<Vec<PathBuf>, RunDirError> {
        let dir = self.checkpoints();
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => {
                return Err(RunDirError::Io {
                    path: dir,
                    cause: source,
                });
            }
        };
        let mut stems = Vec::new();
        for entry in entries {
            let path = entry
                .map_err(|source| RunDirError::Io {
                    path: dir.clone(),
                    cause: source,
                })?
                .path();
            let visible = path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| !n.starts_with('.'));
            if visible && !brandubh_fs::is_temp_file(&path) && path.extension().is_some() {
                stems.push(path.with_extension(""));
            }
        }
        stems.sort();
        stems.dedup();
        Ok(stems)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_follow_the_layout() {
        let run = RunDir::new("runs/x");
        assert_eq!(run.config(), Path::new("runs/x/config.toml"));
        assert_eq!(run.state(), Path::new("runs/x/state.json"));
        assert_eq!(
            run.checkpoint(12),
            Path::new("runs/x/checkpoints/iter-000012")
        );
        assert_eq!(
            run.chunk(3, 4),
            Path::new("runs/x/chunks/chunk-000003-000004.brz")
        );
        assert_eq!(run.metrics(), Path::new("runs/x/metrics.jsonl"));
        assert_eq!(
            run.learning_curves(),
            Path::new("runs/x/learning_curves.png")
        );
        assert_eq!(run.ladder_games(), Path::new("runs/x/ladder/games.jsonl"));
        assert_eq!(
            run.ladder_ratings(),
            Path::new("runs/x/ladder/ratings.json")
        );
        assert_eq!(run.elo_plot(), Path::new("runs/x/elo.png"));
    }

    #[test]
    fn a_checkpoint_knows_its_run() {
        let run = RunDir::new("runs/x");
        assert_eq!(RunDir::of_checkpoint(&run.checkpoint(3)), Some(run.clone()));
        let file = run.checkpoint(3).with_extension("safetensors");
        assert_eq!(RunDir::of_checkpoint(&file), Some(run));
        assert_eq!(
            RunDir::of_checkpoint(Path::new("checkpoints/iter-000001")),
            Some(RunDir::new("."))
        );
        assert_eq!(
            RunDir::of_checkpoint(Path::new("elsewhere/iter-000001")),
            None
        );
        assert_eq!(RunDir::of_checkpoint(Path::new("iter-000001")), None);
    }
}
