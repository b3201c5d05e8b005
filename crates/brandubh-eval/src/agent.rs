//! From an [`AgentSpec`] to players: [`Agent::prepare`] loads what the spec needs once
//! (a checkpoint's weights), then [`PlayerFactory::player`] makes a fresh, seeded player for
//! each game, cheaply (network agents share their weights through an `Arc`).
//!
//! Checkpoints of a run directory are found by [`list_checkpoints`]: the checkpoints that
//! [`RunDir`] finds with their weights beside them, ordered by the training step in their
//! metadata. A network agent searches with its run's settings (the run's `config.toml`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use brandubh_net::checkpoint::{self, CheckpointMeta};
use brandubh_net::{FastNet, NetEvaluator};
use brandubh_run::RunDir;
use brandubh_run::config::RunConfig;
use brandubh_search::{
    AlphaBetaConfig, AlphaBetaPlayer, Evaluator, GreedyPlayer, MctsPlayer, Player, RandomPlayer,
    RolloutEvaluator, SearchSettings, SettingError,
};

use crate::error::EvalError;
use crate::seeds::mix;
use crate::spec::{AgentSpec, AlphaBetaLimit, NetSource};

/// The ply cap of evaluation games unless set otherwise.
pub const DEFAULT_PLY_CAP: u32 = 200;

/// Makes players for games. Implemented by [`Entrant`]; a caller with its own kind of player
/// (e.g. the training loop with a network still in memory) can implement it too.
pub trait PlayerFactory: Sync {
    /// The agent's name in reports: its canonical spec, or a label.
    fn name(&self) -> String;

    /// A fresh player for one game, seeded with `seed`. Searches treat ply `ply_cap` as the
    /// end of the game (an unfinished, neutral result).
    fn player(&self, seed: u64, ply_cap: u32) -> Result<Box<dyn Player + Send>, EvalError>;

    /// For agents that search with a deterministic network: an evaluator giving the same
    /// values as their players' own, so that a match driver can evaluate the leaves of many
    /// games in one call. `None` (the default): the players choose by themselves.
    fn batch_evaluator(&self) -> Option<Box<dyn Evaluator + Send>> {
        None
    }
}

/// A prepared agent spec: its weights loaded, ready to make players for a match.
#[derive(Clone, Debug)]
pub struct Entrant {
    name: String,
    kind: Kind,
}

#[derive(Clone, Debug)]
enum Kind {
    /// `random`, `greedy`, `mcts:N` and `alphabeta:…`: nothing to load, players are made
    /// from the spec itself.
    Plain(AgentSpec),
    Net {
        net: Arc<FastNet>,
        settings: SearchSettings,
        checkpoint: Option<Box<Checkpoint>>,
    },
    /// An agent file, loaded; its spec (`AgentSpec::File`) holds the budget and reuse.
    File {
        agent: Arc<brandubh_agent::Agent>,
        spec: AgentSpec,
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

impl Entrant {
    /// Prepares `spec`: loads the weights of a network agent (the latest checkpoint of a
    /// run, or the one named). Errors name the spec or the file.
    pub fn prepare(spec: &AgentSpec) -> Result<Entrant, EvalError> {
        let kind = match spec {
            AgentSpec::Random
            | AgentSpec::Greedy
            | AgentSpec::Mcts { .. }
            | AgentSpec::AlphaBeta(_) => Kind::Plain(spec.clone()),
            AgentSpec::Net { source, .. } => {
                let in_spec = |e: EvalError| EvalError::AgentConfig {
                    agent: spec.to_string(),
                    cause: e.to_string(),
                };
                let (stem, run) = match source {
                    NetSource::Run(dir) => (
                        latest_checkpoint(dir).map_err(in_spec)?.stem,
                        Some(RunDir::new(dir)),
                    ),
                    NetSource::Checkpoint(path) => (path.clone(), RunDir::of_checkpoint(path)),
                };
                let (net, checkpoint) = load_checkpoint(&stem).map_err(in_spec)?;
                let mut settings = run_search_settings(run.as_ref()).map_err(in_spec)?;
                spec.set_net_options(&mut settings);
                Kind::Net {
                    net,
                    settings,
                    checkpoint: Some(Box::new(checkpoint)),
                }
            }
            // The file's errors name it.
            AgentSpec::File {
                path,
                solver,
                prove,
                verify,
                ..
            } => Kind::File {
                agent: Arc::new(load_agent_file(path, *solver, *prove, *verify)?),
                spec: spec.clone(),
            },
        };
        let agent = Entrant {
            name: spec.to_string(),
            kind,
        };
        // Surface bad settings now, not in the middle of a match.
        agent.player(0, DEFAULT_PLY_CAP)?;
        Ok(agent)
    }

    /// Parses and prepares a spec string.
    pub fn from_spec(spec: &str) -> Result<Entrant, EvalError> {
        Entrant::prepare(&spec.parse()?)
    }

    /// A network agent around weights already in memory (e.g. the training loop's),
    /// searching with `settings` (without noise), named `name` in reports.
    #[must_use]
    pub fn from_net(
        name: impl Into<String>,
        net: Arc<FastNet>,
        settings: SearchSettings,
    ) -> Entrant {
        Entrant {
            name: name.into(),
            kind: Kind::Net {
                net,
                settings,
                checkpoint: None,
            },
        }
    }

    /// The search settings of a network agent.
    #[must_use]
    pub fn search_settings(&self) -> Option<&SearchSettings> {
        match &self.kind {
            Kind::Net { settings, .. } => Some(settings),
            _ => None,
        }
    }

    /// The same agent under another name.
    #[must_use]
    pub fn named(mut self, name: impl Into<String>) -> Entrant {
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

impl PlayerFactory for Entrant {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn batch_evaluator(&self) -> Option<Box<dyn Evaluator + Send>> {
        match &self.kind {
            Kind::Net { net, .. } => Some(Box::new(NetEvaluator::new(Arc::clone(net)))),
            Kind::File { agent, .. } => Some(Box::new(agent.evaluator())),
            _ => None,
        }
    }

    fn player(&self, seed: u64, ply_cap: u32) -> Result<Box<dyn Player + Send>, EvalError> {
        let bad = |e: SettingError| EvalError::AgentConfig {
            agent: self.name.clone(),
            cause: e.to_string(),
        };
        let search = |settings: &SearchSettings| settings.play_config(Some(ply_cap)).map_err(bad);
        Ok(match &self.kind {
            Kind::Plain(AgentSpec::Random) => Box::new(RandomPlayer::new(seed)),
            Kind::Plain(AgentSpec::Greedy) => Box::new(GreedyPlayer::new(seed)),
            Kind::Plain(AgentSpec::Mcts {
                simulations,
                algorithm,
                rollout_plies,
            }) => Box::new(
                MctsPlayer::new(
                    RolloutEvaluator::new(mix(seed, &[1]), *rollout_plies),
                    search(&SearchSettings::new(*algorithm, *simulations))?,
                    seed,
                )
                .map_err(bad)?,
            ),
            Kind::Plain(AgentSpec::AlphaBeta(limit)) => {
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
            Kind::Net { net, settings, .. } => Box::new(
                MctsPlayer::new(NetEvaluator::new(Arc::clone(net)), search(settings)?, seed)
                    .map_err(bad)?,
            ),
            Kind::File {
                agent,
                spec:
                    AgentSpec::File {
                        simulations,
                        time,
                        reuse,
                        ..
                    },
            } => {
                let in_agent = |e: brandubh_agent::AgentError| EvalError::AgentConfig {
                    agent: self.name.clone(),
                    cause: e.to_string(),
                };
                if time.is_none() && *reuse {
                    Box::new(
                        agent
                            .player_with(*simulations, Some(ply_cap), seed)
                            .map_err(in_agent)?,
                    )
                } else {
                    let budget = match (time, simulations) {
                        (Some(t), _) => brandubh_agent::Budget::Time(*t),
                        (None, Some(n)) => brandubh_agent::Budget::Simulations(*n),
                        (None, None) => {
                            brandubh_agent::Budget::Simulations(agent.meta().search.simulations)
                        }
                    };
                    let mut thinker = agent.thinker(seed).map_err(in_agent)?;
                    thinker.set_reuse(*reuse);
                    thinker.set_ply_cap(Some(ply_cap));
                    Box::new(brandubh_agent::ThinkerPlayer::new(thinker, budget))
                }
            }
            // `prepare` makes a plain kind of the four specs above only, and a file kind of
            // file specs.
            Kind::Plain(spec @ (AgentSpec::Net { .. } | AgentSpec::File { .. }))
            | Kind::File { spec, .. } => {
                return Err(EvalError::AgentConfig {
                    agent: self.name.clone(),
                    cause: format!("{spec} is not prepared (Entrant::prepare loads it)"),
                });
            }
        })
    }
}

/// Loads the checkpoint `stem` (or either of its files) for inference.
pub fn load_checkpoint(stem: &Path) -> Result<(Arc<FastNet>, Checkpoint), EvalError> {
    let (net, meta) =
        FastNet::load(stem, None).map_err(|e| EvalError::Checkpoint(e.to_string()))?;
    let (weights, _) = checkpoint::paths(stem);
    let stem = weights.with_extension("");
    let name = stem
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok((Arc::new(net), Checkpoint { stem, name, meta }))
}

/// Every complete checkpoint of the run `run_dir`, oldest first (by training step, then
/// name): those [`RunDir::checkpoint_stems`] finds that have both their files.
/// Metadata that does not read is an error naming the file; a run without a checkpoint
/// directory has none.
pub fn list_checkpoints(run_dir: &Path) -> Result<Vec<Checkpoint>, EvalError> {
    if !run_dir.is_dir() {
        return Err(EvalError::io(
            run_dir,
            "not a directory (expected a run directory)",
        ));
    }
    let run = RunDir::new(run_dir);
    let stems = run
        .checkpoint_stems()
        .map_err(|e| EvalError::Checkpoint(e.to_string()))?;
    let mut found = Vec::new();
    for stem in stems {
        let (weights, meta_file) = checkpoint::paths(&stem);
        if !weights.is_file() || !meta_file.is_file() {
            continue;
        }
        let meta =
            checkpoint::read_meta(&meta_file).map_err(|e| EvalError::Checkpoint(e.to_string()))?;
        let name = stem
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
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

/// The search settings of a run (its `config.toml`); the search crate's defaults when
/// there is no run or it has no configuration. A configuration that does not read is an
/// error naming it.
pub fn run_search_settings(run: Option<&RunDir>) -> Result<SearchSettings, EvalError> {
    match run.map(RunDir::config).filter(|c| c.is_file()) {
        Some(file) => RunConfig::from_run_copy(&file)
            .map(|c| c.search)
            .map_err(|e| EvalError::Checkpoint(e.to_string())),
        None => Ok(SearchSettings::default()),
    }
}

/// The latest checkpoint of the run `run_dir` (highest training step).
pub fn latest_checkpoint(run_dir: &Path) -> Result<Checkpoint, EvalError> {
    list_checkpoints(run_dir)?
        .pop()
        .ok_or_else(|| EvalError::NoCheckpoints {
            run: run_dir.to_path_buf(),
            dir: RunDir::new(run_dir).checkpoints(),
        })
}

/// An agent file with the search options of its spec applied (`None`: the file's). The
/// file's errors name it.
fn load_agent_file(
    path: &Path,
    solver: Option<bool>,
    prove: Option<u32>,
    verify: Option<u32>,
) -> Result<brandubh_agent::Agent, EvalError> {
    let mut agent =
        brandubh_agent::Agent::load(path).map_err(|e| EvalError::Checkpoint(e.to_string()))?;
    if let Some(on) = solver {
        agent = agent.with_solver(on);
    }
    if let Some(plies) = prove {
        agent = agent.with_root_proof(plies);
    }
    if let Some(plies) = verify {
        agent = agent.with_verify(plies);
    }
    Ok(agent)
}
