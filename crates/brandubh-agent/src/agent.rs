//! [`Agent`]: a loaded agent file, its network ready for inference, and what it is for:
//! players for games ([`Agent::player`]) and analysis of positions ([`Agent::analyze`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use brandubh_net::encoding::{ENCODING_VERSION, PLANE_SIZE, POLICY_SIZE};
use brandubh_net::{FastNet, NetConfig, NetEvaluator, PolicyValueNet, checkpoint};
use brandubh_rules::{Game, Move};
use brandubh_search::{Evaluator, Leaf, MctsPlayer, Proven, SearchConfig, SearchSettings};

use crate::error::AgentError;
use crate::format;
use crate::meta::{AgentMeta, RULES_NAME, SourceInfo, TrainingInfo, utc_date};

/// A trained agent: its metadata and its network on the fast inference path.
///
/// ```no_run
/// use brandubh_agent::{Agent, Budget};
/// use brandubh_rules::Game;
///
/// let agent = Agent::load("models/brandubh-v1.agent")?;
/// let analysis = agent.analyze(&Game::default(), Budget::Simulations(200), 1)?;
/// println!("{} plays {} (value {:+.2})", agent.name(), analysis.best_move, analysis.value);
/// # Ok::<(), brandubh_agent::AgentError>(())
/// ```
#[derive(Debug)]
pub struct Agent {
    meta: AgentMeta,
    net: Arc<FastNet>,
    weights: Vec<u8>,
    path: PathBuf,
}

/// How long a search may run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Budget {
    /// Exactly this many new simulations (1 to [`brandubh_search::MAX_SIMULATIONS`]), however long they
    /// take; visits kept from earlier moves by tree reuse come on top.
    Simulations(u32),
    /// Until this much time has passed since the search began: the clock is read after
    /// every network call and the search stops at the first reading past the deadline
    /// (so it overruns by at most one call, plus the root's own evaluation when the tree
    /// has none). Never converted to a simulation count; at most
    /// [`brandubh_search::MAX_SIMULATIONS`].
    Time(Duration),
}

/// What a search says about one root move.
#[derive(Clone, Debug, PartialEq)]
pub struct MoveStats {
    /// The move.
    pub mv: Move,
    /// Simulations through it.
    pub visits: u32,
    /// The network's prior for it.
    pub prior: f32,
    /// The search's policy for it: the visit distribution (PUCT) or the improved policy
    /// (Gumbel).
    pub policy: f32,
    /// Its mean value in [-1, 1] for the side to move at the root; `None` when unvisited.
    /// For a move the solver proved, the proven result (±1, 0). With a value discount γ
    /// (`SearchSettings::value_discount`) searched values are discounted: a result k plies
    /// away counts γ^k of it.
    pub q: Option<f32>,
    /// What the solver proved the move is worth to the side to move at the root (value and
    /// plies to the end, counted from the root), if it did.
    pub proven: Option<Proven>,
}

/// The result of [`Agent::analyze`].
#[derive(Clone, Debug, PartialEq)]
pub struct Analysis {
    /// The move the agent plays.
    pub best_move: Move,
    /// The root's value after the search, in [-1, 1], for the side to move (discounted
    /// as [`MoveStats::q`] says).
    pub value: f32,
    /// The network's own value of the root, before any search.
    pub net_value: f32,
    /// Every legal move: the best move first, then by visits and prior.
    pub moves: Vec<MoveStats>,
    /// Simulations run by this search.
    pub simulations: u32,
    /// Visits of the root kept from earlier searches by tree reuse (0 for a fresh tree).
    pub reused: u32,
    /// Time the search took.
    pub elapsed: Duration,
}

impl Agent {
    /// Loads and checks the agent file at `path` (see the crate documentation for what is
    /// checked). Needs nothing but the file.
    pub fn load(path: impl AsRef<Path>) -> Result<Agent, AgentError> {
        let path = path.as_ref();
        let bytes = read_file(path)?;
        Agent::from_bytes(&bytes, path)
    }

    /// An agent from the bytes of an agent file; `path` names it in errors.
    pub fn from_bytes(bytes: &[u8], path: impl AsRef<Path>) -> Result<Agent, AgentError> {
        let path = path.as_ref();
        let (meta, weights) = parse(bytes, path)?;
        Agent::assemble(meta, weights.to_vec(), path)
    }

    /// Reads and checks the agent file at `path` (checksums included) and returns its
    /// metadata, without building the network.
    pub fn read_meta(path: impl AsRef<Path>) -> Result<AgentMeta, AgentError> {
        let path = path.as_ref();
        let bytes = read_file(path)?;
        Ok(parse(&bytes, path)?.0)
    }

    /// An agent around `model`. `meta` gives the name, search settings, training and
    /// source; the fields that describe the weights (rules, encoding version, model config,
    /// weights size and CRC) and the export date are filled in here. `path` is where the
    /// agent will be saved (it names the agent in errors).
    pub fn from_model(
        model: &PolicyValueNet,
        meta: AgentMeta,
        path: impl AsRef<Path>,
    ) -> Result<Agent, AgentError> {
        let path = path.as_ref();
        let weights =
            checkpoint::weights_to_bytes(model).map_err(|reason| AgentError::Weights {
                path: path.to_path_buf(),
                reason: brandubh_fs::one_line(&reason),
            })?;
        Agent::from_weights(weights, model.config(), meta, path)
    }

    /// Like [`Agent::from_model`], for a model of `config` given as a safetensors image
    /// (a checkpoint's weights file, as `brandubh_net::checkpoint::read_weights` returns it).
    pub fn from_weights(
        weights: Vec<u8>,
        config: NetConfig,
        mut meta: AgentMeta,
        path: impl AsRef<Path>,
    ) -> Result<Agent, AgentError> {
        let path = path.as_ref();
        let now = crate::meta::now_unix_s();
        meta.rules = RULES_NAME.to_owned();
        meta.encoding_version = ENCODING_VERSION;
        meta.model = config;
        meta.weights_bytes = weights.len() as u64;
        meta.weights_crc32 = format!("{:08x}", crc32fast::hash(&weights));
        meta.exported_unix_s = now;
        meta.exported_date = utc_date(now);
        meta.exported_by = concat!("brandubh-agent ", env!("CARGO_PKG_VERSION")).to_owned();
        // Refuse to build what could not be loaded back.
        check_meta(&meta, &weights, path)?;
        Agent::assemble(meta, weights, path)
    }

    /// The agent of checked `meta` and its `weights` (safetensors), read from or bound for
    /// `path`.
    fn assemble(meta: AgentMeta, weights: Vec<u8>, path: &Path) -> Result<Agent, AgentError> {
        let net = FastNet::from_safetensors(&meta.model, weights.clone()).map_err(|reason| {
            AgentError::Weights {
                path: path.to_path_buf(),
                reason: brandubh_fs::one_line(&reason),
            }
        })?;
        Ok(Agent {
            net: Arc::new(net),
            meta,
            weights,
            path: path.to_path_buf(),
        })
    }

    /// The bytes of this agent's file.
    ///
    /// # Panics
    /// Never in practice: the metadata is plain data that always serialises.
    #[must_use]
    #[expect(
        clippy::expect_used,
        reason = "`AgentMeta` is plain data (strings, numbers, structs; no maps with non-string \
                  keys, no custom `Serialize`), which serde_json always serialises; non-finite \
                  floats become `null`"
    )]
    pub fn to_bytes(&self) -> Vec<u8> {
        let json = serde_json::to_vec_pretty(&self.meta).expect("agent metadata serialises");
        format::encode(&json, &self.weights)
    }

    /// Writes the agent file to `path` atomically (temporary sibling, `fsync`, rename);
    /// returns its size in bytes.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<u64, AgentError> {
        let bytes = self.to_bytes();
        format::write_atomic(path.as_ref(), &bytes)?;
        Ok(bytes.len() as u64)
    }

    /// The same agent with the search's MCTS-Solver turned on or off (for comparisons; the
    /// file's own setting is `meta().search.solver`).
    #[must_use]
    pub fn with_solver(mut self, solver: bool) -> Agent {
        self.meta.search.solver = Some(solver);
        self
    }

    /// The same agent with exact proofs of the root moves this many plies deep before
    /// each search (`SearchSettings::root_proof_plies`; 0 turns them off).
    #[must_use]
    pub fn with_root_proof(mut self, plies: u32) -> Agent {
        self.meta.search.root_proof_plies = plies;
        self
    }

    /// The same agent with the move each search would play checked exactly for a forced
    /// loss this many plies deep (`SearchSettings::verify_plies`; 0 turns it off).
    #[must_use]
    pub fn with_verify(mut self, plies: u32) -> Agent {
        self.meta.search.verify_plies = plies;
        self
    }

    /// The metadata.
    #[must_use]
    pub fn meta(&self) -> &AgentMeta {
        &self.meta
    }

    /// The agent's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.meta.name
    }

    /// The file it was loaded from (or will be saved to).
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The weights block: a safetensors image, as a checkpoint's weights file (e.g. for
    /// `brandubh_net::checkpoint::folded_from_bytes`).
    #[must_use]
    pub fn weights(&self) -> &[u8] {
        &self.weights
    }

    /// The network, shareable between threads.
    #[must_use]
    pub fn net(&self) -> &Arc<FastNet> {
        &self.net
    }

    /// A fresh evaluator on the network (identity symmetry: deterministic).
    #[must_use]
    pub fn evaluator(&self) -> NetEvaluator {
        NetEvaluator::new(Arc::clone(&self.net))
    }

    /// The network's value (side to move's view) and priors (in `game.legal_moves()`
    /// order) for the current position of an unfinished game; `None` once it is over.
    #[must_use]
    pub fn evaluate(&self, game: &Game) -> Option<(f32, Vec<f32>)> {
        if game.is_over() {
            return None;
        }
        let mut e = self.evaluator().evaluate(&[Leaf::from_game(game)]);
        let e = e.pop()?;
        Some((e.value, e.priors))
    }

    /// The search this agent plays with: its settings, `simulations` per move (default:
    /// the file's), no noise, and `ply_cap` (none in play).
    pub fn search_config(
        &self,
        simulations: Option<u32>,
        ply_cap: Option<u32>,
    ) -> Result<SearchConfig, AgentError> {
        let settings = match simulations {
            Some(n) => self.meta.search.clone().with_simulations(n),
            None => self.meta.search.clone(),
        };
        settings
            .play_config(ply_cap)
            .map_err(|cause| AgentError::Settings {
                path: self.path.clone(),
                cause,
            })
    }

    /// A player with the file's search settings and no ply cap, seeded with `seed`.
    pub fn player(&self, seed: u64) -> Result<MctsPlayer<NetEvaluator>, AgentError> {
        self.player_with(None, None, seed)
    }

    /// A player with `simulations` per move (default: the file's) and `ply_cap` (treated
    /// by the search as the end of the game), seeded with `seed`.
    pub fn player_with(
        &self,
        simulations: Option<u32>,
        ply_cap: Option<u32>,
        seed: u64,
    ) -> Result<MctsPlayer<NetEvaluator>, AgentError> {
        let config = self.search_config(simulations, ply_cap)?;
        MctsPlayer::new(self.evaluator(), config, seed).map_err(|cause| AgentError::Settings {
            path: self.path.clone(),
            cause,
        })
    }

    /// Searches the current position of `game` with this agent's settings and `budget`
    /// (a fresh tree, seeded with `seed`) and reports every root move. To keep the tree
    /// between the moves of a game, use a [`crate::Thinker`].
    pub fn analyze(&self, game: &Game, budget: Budget, seed: u64) -> Result<Analysis, AgentError> {
        let mut thinker = self.thinker(seed)?;
        thinker.set_reuse(false);
        thinker.think(game, budget)
    }
}

impl AgentMeta {
    /// Metadata for [`Agent::from_model`]: the name, search settings, training and source;
    /// the rest is filled in from the model when the agent is built.
    #[must_use]
    pub fn new(
        name: impl Into<String>,
        search: SearchSettings,
        training: TrainingInfo,
        source: SourceInfo,
    ) -> AgentMeta {
        AgentMeta {
            name: name.into(),
            rules: RULES_NAME.to_owned(),
            encoding_version: ENCODING_VERSION,
            model: NetConfig::new(),
            search,
            training,
            source,
            exported_unix_s: 0,
            exported_date: String::new(),
            exported_by: String::new(),
            weights_bytes: 0,
            weights_crc32: String::new(),
        }
    }
}

fn read_file(path: &Path) -> Result<Vec<u8>, AgentError> {
    let io = |cause| AgentError::Io {
        path: path.to_path_buf(),
        cause,
    };
    let len = std::fs::metadata(path).map_err(io)?.len();
    let max = format::HEADER_LEN as u64 + u64::from(format::MAX_META_LEN) + format::MAX_WEIGHTS_LEN;
    if len > max {
        return Err(AgentError::Length {
            path: path.to_path_buf(),
            len,
            expected: max,
        });
    }
    std::fs::read(path).map_err(io)
}

/// The checked metadata and the weights block of a file.
fn parse<'a>(bytes: &'a [u8], path: &Path) -> Result<(AgentMeta, &'a [u8]), AgentError> {
    let blocks = format::decode(bytes, path)?;
    let meta: AgentMeta =
        serde_json::from_slice(blocks.meta).map_err(|e| AgentError::Metadata {
            path: path.to_path_buf(),
            reason: brandubh_fs::one_line(&e.to_string()),
        })?;
    check_meta(&meta, blocks.weights, path)?;
    Ok((meta, blocks.weights))
}

/// Everything the metadata promises that can be checked before building the network.
fn check_meta(meta: &AgentMeta, weights: &[u8], path: &Path) -> Result<(), AgentError> {
    let bad = |reason: String| AgentError::Metadata {
        path: path.to_path_buf(),
        reason,
    };
    if meta.rules != RULES_NAME {
        return Err(bad(format!(
            "the agent plays the rules {:?}, this build plays {RULES_NAME:?}",
            brandubh_fs::one_line(&meta.rules)
        )));
    }
    if meta.encoding_version != ENCODING_VERSION {
        return Err(AgentError::Encoding {
            path: path.to_path_buf(),
            found: meta.encoding_version,
            expected: ENCODING_VERSION,
        });
    }
    let c = &meta.model;
    c.check_limits().map_err(bad)?;
    // The network is allocated before its weights are read: its size must be vouched for
    // by the weights actually present.
    let least = 4 * min_parameters(c);
    if (weights.len() as u64) < least {
        return Err(bad(format!(
            "a C{}xN{} model needs at least {least} bytes of weights, the file has {}",
            c.channels,
            c.blocks,
            weights.len()
        )));
    }
    if meta.weights_bytes != weights.len() as u64 {
        return Err(bad(format!(
            "weights_bytes {} but the weights block has {} bytes",
            meta.weights_bytes,
            weights.len()
        )));
    }
    let crc = format!("{:08x}", crc32fast::hash(weights));
    if meta.weights_crc32 != crc {
        return Err(bad(format!(
            "weights_crc32 {:?} but the weights block has CRC-32 {crc}",
            brandubh_fs::one_line(&meta.weights_crc32)
        )));
    }
    meta.search
        .validate()
        .map_err(|cause| AgentError::Settings {
            path: path.to_path_buf(),
            cause,
        })?;
    Ok(())
}

/// Weights of the convolutions and linear layers of a model of `config` (biases and
/// batch-norm statistics left out): a lower bound of its parameter count.
fn min_parameters(c: &NetConfig) -> u64 {
    let (ch, sq) = (c.channels as u64, PLANE_SIZE as u64);
    let (pc, vc, h) = (
        c.policy_channels as u64,
        c.value_channels as u64,
        c.value_hidden as u64,
    );
    9 * c.planes() as u64 * ch
        + c.blocks as u64 * 2 * 9 * ch * ch
        + ch * pc
        + pc * sq * POLICY_SIZE as u64
        + ch * vc
        + vc * sq * h
        + h
}

#[cfg(test)]
mod tests {
    use super::*;
    use brandubh_net::Device;

    #[test]
    fn min_parameters_is_a_lower_bound() {
        for (c, n) in [(8, 1), (32, 4), (4, 0)] {
            let config = NetConfig::new().with_channels(c).with_blocks(n);
            let model = config.init(&Device::flex());
            let bytes = checkpoint::weights_to_bytes(&model).unwrap();
            let least = 4 * min_parameters(&config);
            assert!(least <= bytes.len() as u64, "C{c}xN{n}");
            // ... and a tight one: biases and batch norm add little.
            assert!(least * 10 >= bytes.len() as u64 * 9, "C{c}xN{n}");
        }
    }
}
