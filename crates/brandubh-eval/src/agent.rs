//! From an [`AgentSpec`] to players: [`Agent::prepare`] loads what the spec needs once
//! (a checkpoint's weights), then [`PlayerFactory::player`] makes a fresh, seeded player for
//! each game, cheaply (network agents share their weights through an `Arc`).
//!
//! Checkpoints of a run directory are found by [`list_checkpoints`], the one place that
//! knows the layout: `RUN/checkpoints/NAME.json` + `NAME.safetensors` as written by
//! `brandubh_net::checkpoint::save` (the trainer names them `iter-NNNNNN`), ordered by the
//! training step in their metadata.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use brandubh_net::checkpoint::{self, CheckpointMeta, META_EXTENSION, WEIGHTS_EXTENSION};
use brandubh_net::{Device, FastNet, NetEvaluator};
use brandubh_search::{
    AlphaBetaConfig, AlphaBetaPlayer, GreedyPlayer, MctsPlayer, Player, RandomPlayer,
    RolloutEvaluator, SearchConfig,
};

use crate::error::EvalError;
use crate::seeds::mix;
use crate::spec::{AgentSpec, Algo, AlphaBetaLimit, NetSource};

/// The directory of a run that holds its checkpoints.
pub const CHECKPOINT_DIR: &str = "checkpoints";

/// Makes players for games. Implemented by [`Agent`]; a caller with its own kind of player
/// (e.g. the training loop with a network still in memory) can implement it too.
pub trait PlayerFactory: Sync {
    /// The agent's name in reports: its canonical spec, or a label.
    fn name(&self) -> String;

    /// A fresh player for one game, seeded with `seed`. Searches treat ply `ply_cap` as the
    /// end of the game (an unfinished, neutral result).
    fn player(&self, seed: u64, ply_cap: u32) -> Result<Box<dyn Player + Send>, EvalError>;
}

/// A prepared agent: a spec with its weights loaded, ready to make players.
#[derive(Clone, Debug)]
pub struct Agent {
    name: String,
    kind: Kind,
}

#[derive(Clone, Debug)]
enum Kind {
    Random,
    Greedy,
    Mcts {
        simulations: u32,
        algorithm: Algo,
        rollout_plies: u32,
    },
    AlphaBeta(AlphaBetaLimit),
    Net {
        net: Arc<FastNet>,
        simulations: u32,
        algorithm: Algo,
        checkpoint: Option<Box<Checkpoint>>,
    },
    File {
        agent: Arc<brandubh_agent::Agent>,
        simulations: Option<u32>,
    },
}

/// A checkpoint found on disk: its stem (path without extension), name and metadata.
#[derive(Clone, Debug, PartialEq)]
pub struct Checkpoint {
    /// The path without extension, e.g. `runs/x/checkpoints/iter-000012`.
    pub stem: PathBuf,
    /// The file name without extension, e.g. `iter-000012`.
    pub name: String,
    /// Its metadata (training step, creation time, …).
    pub meta: CheckpointMeta,
}

impl Agent {
    /// Prepares `spec`: loads the weights of a network agent (the latest checkpoint of a
    /// run, or the one named). Errors name the spec or the file.
    pub fn prepare(spec: &AgentSpec) -> Result<Agent, EvalError> {
        let kind = match spec {
            AgentSpec::Random => Kind::Random,
            AgentSpec::Greedy => Kind::Greedy,
            AgentSpec::Mcts {
                simulations,
                algorithm,
                rollout_plies,
            } => Kind::Mcts {
                simulations: *simulations,
                algorithm: *algorithm,
                rollout_plies: *rollout_plies,
            },
            AgentSpec::AlphaBeta(limit) => Kind::AlphaBeta(*limit),
            AgentSpec::Net {
                source,
                simulations,
                algorithm,
            } => {
                let in_spec = |e: EvalError| EvalError::AgentConfig {
                    agent: spec.to_string(),
                    cause: e.to_string(),
                };
                let stem = match source {
                    NetSource::Run(dir) => latest_checkpoint(dir).map_err(in_spec)?.stem,
                    NetSource::Checkpoint(path) => path.clone(),
                };
                let (net, checkpoint) = load_checkpoint(&stem).map_err(in_spec)?;
                Kind::Net {
                    net,
                    simulations: *simulations,
                    algorithm: *algorithm,
                    checkpoint: Some(Box::new(checkpoint)),
                }
            }
            // The file's errors name it.
            AgentSpec::File { path, simulations } => Kind::File {
                agent: Arc::new(
                    brandubh_agent::Agent::load(path)
                        .map_err(|e| EvalError::Checkpoint(e.to_string()))?,
                ),
                simulations: *simulations,
            },
        };
        let agent = Agent {
            name: spec.to_string(),
            kind,
        };
        // Surface bad settings now, not in the middle of a match.
        agent.player(0, crate::runner::DEFAULT_PLY_CAP)?;
        Ok(agent)
    }

    /// Parses and prepares a spec string.
    pub fn from_spec(spec: &str) -> Result<Agent, EvalError> {
        Agent::prepare(&spec.parse()?)
    }

    /// A network agent around weights already in memory (e.g. the training loop's), named
    /// `name` in reports.
    #[must_use]
    pub fn from_net(
        name: impl Into<String>,
        net: Arc<FastNet>,
        simulations: u32,
        algorithm: Algo,
    ) -> Agent {
        Agent {
            name: name.into(),
            kind: Kind::Net {
                net,
                simulations,
                algorithm,
                checkpoint: None,
            },
        }
    }

    /// The same agent under another name.
    #[must_use]
    pub fn named(mut self, name: impl Into<String>) -> Agent {
        self.name = name.into();
        self
    }

    /// The checkpoint a network agent plays with, if it was loaded from one.
    #[must_use]
    pub fn checkpoint(&self) -> Option<&Checkpoint> {
        match &self.kind {
            Kind::Net { checkpoint, .. } => checkpoint.as_deref(),
            _ => None,
        }
    }
}

impl PlayerFactory for Agent {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn player(&self, seed: u64, ply_cap: u32) -> Result<Box<dyn Player + Send>, EvalError> {
        let bad = |e: brandubh_search::ConfigError| EvalError::AgentConfig {
            agent: self.name.clone(),
            cause: e.to_string(),
        };
        let search = |simulations: u32, algorithm: Algo| {
            let config = match algorithm {
                Algo::Puct => SearchConfig::puct(simulations),
                Algo::Gumbel => SearchConfig::gumbel(simulations),
            };
            SearchConfig {
                ply_cap: Some(ply_cap),
                ..config.without_noise()
            }
        };
        Ok(match &self.kind {
            Kind::Random => Box::new(RandomPlayer::new(seed)),
            Kind::Greedy => Box::new(GreedyPlayer::new(seed)),
            Kind::Mcts {
                simulations,
                algorithm,
                rollout_plies,
            } => Box::new(
                MctsPlayer::new(
                    RolloutEvaluator::new(mix(seed, &[1]), *rollout_plies),
                    search(*simulations, *algorithm),
                    seed,
                )
                .map_err(bad)?,
            ),
            Kind::AlphaBeta(limit) => {
                let (max_depth, time_limit) = match limit {
                    AlphaBetaLimit::Depth(d) => (*d, None),
                    AlphaBetaLimit::Time(t) => (64, Some(*t)),
                };
                Box::new(
                    AlphaBetaPlayer::new(AlphaBetaConfig {
                        max_depth,
                        time_limit,
                        ply_cap: Some(ply_cap),
                    })
                    .map_err(bad)?,
                )
            }
            Kind::Net {
                net,
                simulations,
                algorithm,
                ..
            } => Box::new(
                MctsPlayer::new(
                    NetEvaluator::new(Arc::clone(net)),
                    search(*simulations, *algorithm),
                    seed,
                )
                .map_err(bad)?,
            ),
            Kind::File { agent, simulations } => Box::new(
                agent
                    .player_with(*simulations, Some(ply_cap), seed)
                    .map_err(|e| EvalError::AgentConfig {
                        agent: self.name.clone(),
                        cause: e.to_string(),
                    })?,
            ),
        })
    }
}

/// Loads the checkpoint `stem` (or either of its files) for inference.
pub fn load_checkpoint(stem: &Path) -> Result<(Arc<FastNet>, Checkpoint), EvalError> {
    let (model, meta) = checkpoint::load(stem, &Device::flex(), None)
        .map_err(|e| EvalError::Checkpoint(e.to_string()))?;
    let (weights, _) = checkpoint::paths(stem);
    let stem = weights.with_extension("");
    let name = stem
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok((
        Arc::new(FastNet::from_model(&model)),
        Checkpoint { stem, name, meta },
    ))
}

/// Every complete checkpoint of the run `run_dir`, oldest first (by training step, then
/// name): the `*.json` files of `run_dir/checkpoints/` that have their `*.safetensors`
/// beside them. Metadata that does not read is an error naming the file; a run without a
/// `checkpoints` directory has none.
pub fn list_checkpoints(run_dir: &Path) -> Result<Vec<Checkpoint>, EvalError> {
    if !run_dir.is_dir() {
        return Err(EvalError::io(
            run_dir,
            "not a directory (expected a run directory)",
        ));
    }
    let dir = run_dir.join(CHECKPOINT_DIR);
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(EvalError::io(&dir, e)),
    };
    let mut found = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| EvalError::io(&dir, e))?.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if name.starts_with('.')
            || path.extension().and_then(|e| e.to_str()) != Some(META_EXTENSION)
        {
            continue;
        }
        let stem = path.with_extension("");
        if !stem.with_extension(WEIGHTS_EXTENSION).is_file() {
            continue;
        }
        let meta =
            checkpoint::read_meta(&path).map_err(|e| EvalError::Checkpoint(e.to_string()))?;
        let name = name.trim_end_matches(".json").to_owned();
        found.push(Checkpoint { stem, name, meta });
    }
    found.sort_by(|a, b| {
        a.meta
            .step
            .cmp(&b.meta.step)
            .then_with(|| a.name.cmp(&b.name))
    });
    Ok(found)
}

/// The latest checkpoint of the run `run_dir` (highest training step).
pub fn latest_checkpoint(run_dir: &Path) -> Result<Checkpoint, EvalError> {
    list_checkpoints(run_dir)?
        .pop()
        .ok_or_else(|| EvalError::NoCheckpoints {
            run: run_dir.to_path_buf(),
            dir: run_dir.join(CHECKPOINT_DIR),
        })
}
