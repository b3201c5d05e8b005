//! The agents a client may play: the `--agent` files, loaded at start, and the checkpoints
//! of the `--run` directories, loaded on first use into a small cache. Searches run on
//! tokio's blocking pool, at most [`crate::Limits::searches`] at a time.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use brandubh_agent::{Agent, AgentMeta, Analysis, Budget, SourceInfo, training_info};
use brandubh_net::checkpoint;
use brandubh_rules::Game;
use tokio::sync::Semaphore;

use crate::error::ApiError;
use crate::runs::RunSource;

/// Checkpoint agents kept loaded.
const CHECKPOINT_CACHE: usize = 4;

/// Which agent a game plays against: one of the `--agent` files, or a checkpoint (by name)
/// of one of the `--run` directories. Never a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AgentRef {
    /// `--agent` file number `index` (from 0, in command-line order).
    File(usize),
    /// Checkpoint `name` of run number `run`.
    Checkpoint {
        /// The run's index.
        run: usize,
        /// The checkpoint's name, e.g. `iter-000003`.
        name: String,
    },
}

impl AgentRef {
    /// The key the Play page's menu uses: `a:INDEX` or `c:RUN:CHECKPOINT`.
    #[must_use]
    pub fn key(&self) -> String {
        match self {
            AgentRef::File(i) => format!("a:{i}"),
            AgentRef::Checkpoint { run, name } => format!("c:{run}:{name}"),
        }
    }
}

/// The loaded agents and the checkpoint cache.
#[derive(Debug)]
pub struct Agents {
    files: Vec<Arc<Agent>>,
    cache: Mutex<Vec<(AgentRef, Arc<Agent>)>>,
}

impl Agents {
    /// Loads every agent file; the first that does not load is the error (naming it).
    pub fn load(paths: &[impl AsRef<Path>]) -> Result<Agents, String> {
        let files = paths
            .iter()
            .map(|p| Agent::load(p).map(Arc::new).map_err(|e| e.to_string()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Agents {
            files,
            cache: Mutex::new(Vec::new()),
        })
    }

    /// The `--agent` files, in order.
    #[must_use]
    pub fn files(&self) -> &[Arc<Agent>] {
        &self.files
    }

    /// The agent `r` names; a checkpoint is loaded (blocking: call it off the async
    /// runtime) unless cached. Errors say what is unknown.
    pub fn get(&self, r: &AgentRef, runs: &[RunSource]) -> Result<(Arc<Agent>, String), ApiError> {
        match r {
            AgentRef::File(i) => self
                .files
                .get(*i)
                .map(|a| (Arc::clone(a), a.name().to_owned()))
                .ok_or_else(|| {
                    ApiError::not_found(format!(
                        "unknown agent {i}: the server has {} agent file(s), numbered from 0",
                        self.files.len()
                    ))
                }),
            AgentRef::Checkpoint { run, name } => {
                let source = runs.get(*run).ok_or_else(|| {
                    ApiError::not_found(format!(
                        "unknown run {run}: the server has {} run(s), numbered from 0",
                        runs.len()
                    ))
                })?;
                let label = format!("{} {name}", source.name);
                if let Some(agent) = self.cached(r) {
                    return Ok((agent, label));
                }
                let agent = Arc::new(load_checkpoint(source, name)?);
                let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
                cache.retain(|(k, _)| k != r);
                cache.push((r.clone(), Arc::clone(&agent)));
                if cache.len() > CHECKPOINT_CACHE {
                    cache.remove(0);
                }
                Ok((agent, label))
            }
        }
    }

    fn cached(&self, r: &AgentRef) -> Option<Arc<Agent>> {
        let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        cache
            .iter()
            .find(|(k, _)| k == r)
            .map(|(_, a)| Arc::clone(a))
    }
}

/// Checkpoint `name` of `run` as an agent that searches with the run's settings.
fn load_checkpoint(run: &RunSource, name: &str) -> Result<Agent, ApiError> {
    let list = run.checkpoints().map_err(ApiError::internal)?;
    // The name is only a key into the run's own list: never joined to a path.
    let found = list.into_iter().find(|c| c.name == name).ok_or_else(|| {
        ApiError::not_found(format!(
            "run {} has no checkpoint {:?}",
            run.name,
            brandubh_fs::one_line(name)
        ))
    })?;
    let settings = run.search_settings().map_err(ApiError::internal)?;
    let (model, meta) = checkpoint::load(&found.stem, &brandubh_net::device::cpu(), None)
        .map_err(|e| ApiError::internal(e.to_string()))?;
    let agent_meta = AgentMeta::new(
        format!("{} {}", run.name, found.name),
        settings,
        training_info(&meta),
        SourceInfo {
            checkpoint: found.stem.display().to_string(),
            weights_fnv1a64: meta.weights_fnv1a64.clone(),
            burn_version: meta.burn_version.clone(),
        },
    );
    Agent::from_model(&model, agent_meta, &found.stem)
        .map_err(|e| ApiError::internal(e.to_string()))
}

/// Runs searches off the async runtime, a bounded number at a time.
#[derive(Debug)]
pub struct Searcher {
    slots: Arc<Semaphore>,
    capacity: usize,
    queue_wait: Duration,
}

impl Searcher {
    /// At most `capacity` searches at once; a request waits at most `queue_wait` for a slot.
    #[must_use]
    pub fn new(capacity: usize, queue_wait: Duration) -> Searcher {
        let capacity = capacity.max(1);
        Searcher {
            slots: Arc::new(Semaphore::new(capacity)),
            capacity,
            queue_wait,
        }
    }

    /// Searches the current position of `game` with `agent` on the blocking pool (a fresh
    /// tree, as `Agent::analyze`); setting `halt` ends the search with its best move so far.
    pub async fn analyze(
        &self,
        agent: Arc<Agent>,
        game: Game,
        budget: Budget,
        seed: u64,
        halt: Option<Arc<AtomicBool>>,
    ) -> Result<Analysis, ApiError> {
        let permit = tokio::time::timeout(self.queue_wait, Arc::clone(&self.slots).acquire_owned())
            .await
            .map_err(|_| {
                ApiError::busy(format!(
                    "the server is busy: all {} search slots stayed taken for {} s; try again",
                    self.capacity,
                    self.queue_wait.as_secs()
                ))
            })?
            .map_err(|_| ApiError::internal("the search pool is closed"))?;
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let mut thinker = agent.thinker(seed)?;
            thinker.set_reuse(false);
            thinker.set_halt(halt);
            thinker.think(&game, budget)
        })
        .await
        .map_err(|e| ApiError::internal(format!("the search failed: {e}")))?
        .map_err(|e| ApiError::internal(e.to_string()))
    }

    /// Runs blocking work (file reads) on the blocking pool.
    pub async fn blocking<T: Send + 'static>(
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, ApiError> {
        tokio::task::spawn_blocking(f)
            .await
            .map_err(|e| ApiError::internal(format!("a background task failed: {e}")))
    }
}
