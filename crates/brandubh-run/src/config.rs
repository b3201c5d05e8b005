//! The training run configuration, read from TOML.
//!
//! Every knob of a run lives in one [`RunConfig`]: model size, search, self-play,
//! training and evaluation. Files are parsed with serde and
//! `#[serde(deny_unknown_fields)]` on every section, then checked by
//! [`RunConfig::validate`]. Every key is optional and falls back to the default shown in
//! its documentation. Errors are one line naming the file and the key:
//!
//! ```text
//! configs/quick.toml: search.simulations: must be between 1 and 100000, got 0
//! configs/x.toml: unknown key selfplay.gmes_per_iteration at line 12, column 1 (did you mean selfplay.games_per_iteration?)
//! ```
//!
//! A minimal file:
//!
//! ```toml
//! name = "quick"
//! iterations = 40
//!
//! [search]
//! algorithm = "gumbel"
//! simulations = 16
//!
//! [training]
//! lr_schedule = [[20, 0.0005]]   # from iteration 20 on, the learning rate is 0.0005
//! ```
//!
//! Iterations are numbered from 1.
//!
//! A file read from disk may start from another: `extends = "default.toml"` (a path
//! relative to the extending file) takes every key of that file, and the extending file's
//! own keys replace it key by key (a table is merged, any other value replaced). Chains
//! are followed up to 8 files deep, and a cycle is an error. Each file's own keys are
//! checked (unknown keys, types), and those errors name it; ranges are checked once merged,
//! and name the file given. The result is one whole configuration: a run's copy of
//! it (`config.toml` in the run) names no other file. An ablation is then its baseline and
//! the change under test, and nothing else:
//!
//! ```toml
//! extends = "ablation-root-value.toml"
//! name = "ablation-black-budget"
//!
//! [selfplay]
//! black_budget_scale = 2.0
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use brandubh_search::SearchSettings;
use serde::{Deserialize, Serialize};

/// The whole configuration of a training run (top level of the TOML file).
///
/// The range of every number of every section is in [`RANGES`], its one home;
/// [`RunConfig::validate`] checks them and the keys that depend on others.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    /// Name of the run; the run directory defaults to `runs/NAME`. 1–64 characters from
    /// `A–Z a–z 0–9 . _ -`, not starting with a dot. Default `"brandubh"`.
    pub name: String,
    /// Seed of every random number generator of the run (self-play, sampling, network
    /// initialisation). Range 0–9,223,372,036,854,775,807 (TOML integers are signed 64-bit).
    /// Default `0`.
    pub seed: u64,
    /// Total number of iterations (self-play, train, evaluate) the run aims for. Default
    /// `100`.
    pub iterations: u32,
    /// The network (`[model]`).
    pub model: ModelConfig,
    /// The tree search of self-play (`[search]`): the search crate's settings, whose keys
    /// and ranges are documented on [`SearchSettings`] (`search.simulations` is narrower
    /// here: [`RANGES`]).
    pub search: SearchSettings,
    /// Self-play games (`[selfplay]`).
    pub selfplay: SelfPlayConfig,
    /// Optimisation and the replay window (`[training]`).
    pub training: TrainingConfig,
    /// Matches against the previous network and a baseline (`[evaluation]`).
    pub evaluation: EvaluationConfig,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            name: "brandubh".to_owned(),
            seed: 0,
            iterations: 100,
            model: ModelConfig::default(),
            search: SearchSettings::default(),
            selfplay: SelfPlayConfig::default(),
            training: TrainingConfig::default(),
            evaluation: EvaluationConfig::default(),
        }
    }
}

/// The residual network (`[model]`). The ranges of its keys are in [`RANGES`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ModelConfig {
    /// Channels of every convolution of the residual tower (C). Default `32`.
    pub channels: u32,
    /// Number of residual blocks (N). Default `4`.
    pub blocks: u32,
    /// Three more input planes with exact facts about the King's escape (rule 8.1): the
    /// squares it can move to, those it can reach in two moves, and those from which it
    /// would reach a corner in one (`brandubh_net::encoding`). Default `false` (not written
    /// to files when false, so older configs and runs read as before).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub king_planes: bool,
    /// Four more input planes after the King planes (which it needs): the squares the
    /// attackers and the defenders can move to, and the pieces of each side that one move
    /// of the other would capture (rules 4–7; `brandubh_net::encoding`). Default `false`
    /// (not written to files when false).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub threat_planes: bool,
}

impl Default for ModelConfig {
    fn default() -> Self {
        ModelConfig {
            channels: 32,
            blocks: 4,
            king_planes: false,
            threat_planes: false,
        }
    }
}

/// Self-play (`[selfplay]`). The ranges of its keys are in [`RANGES`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SelfPlayConfig {
    /// Games played per iteration. Default `64`.
    pub games_per_iteration: u32,
    /// Games each worker thread advances together; their leaves form one network batch.
    /// Default `32`.
    pub concurrent_games: u32,
    /// Leaves each game's search hands out per round (virtual loss spreads them over its
    /// tree); the network batch is about `concurrent_games × leaves_per_game`. More leaves
    /// per tree fill batches with fewer games in memory but weaken the search a little.
    /// Default `1`.
    pub leaves_per_game: u32,
    /// Worker threads; `0` means one per available core. Default `0`.
    pub threads: u32,
    /// Plies after which a game is stopped and recorded as unfinished (value target 0).
    /// Default `150`.
    pub ply_cap: u32,
    /// Temperature of move selection during the first `temperature_plies` plies: moves are
    /// sampled from the search policy raised to 1/temperature (0 = always the best move).
    /// Default `1.0`.
    pub temperature: f64,
    /// Plies played with `temperature`; after them the best move is played. Default `8`.
    pub temperature_plies: u32,
    /// Playout-cap randomisation (KataGo): the fraction of moves searched with
    /// `search.simulations` and recorded as policy targets. The other moves are searched
    /// with `cheap_simulations` and not recorded. `1.0` searches every move fully. Default
    /// `1.0`.
    pub full_search_fraction: f64,
    /// Simulations of the cheap searches (see `full_search_fraction`), at most
    /// `search.simulations` when `full_search_fraction` is below 1 (unused otherwise).
    /// Default `16`.
    pub cheap_simulations: u32,
    /// Scales both search budgets (`search.simulations` and `cheap_simulations`) of Black's
    /// moves, so that the side that loses more of the self-play games defends with a deeper
    /// search (`2.0` doubles Black's simulations). Default `1.0`.
    pub black_budget_scale: f64,
    /// If set, the first this many plies of every game are uniformly random legal moves
    /// (not recorded), to diversify openings; at most `ply_cap`. Default: off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub opening_random_plies: Option<u32>,
    /// Share of an iteration's games that start part-way through one of the previous
    /// iteration's games instead of from the start (KataGo's forks): a position is drawn
    /// uniformly from all of those games' positions but their first and last, the moves up
    /// to it are replayed (not recorded as targets), and self-play searches from there,
    /// with `temperature_plies` counted from the fork. An actor forks from the games of its
    /// own previous segment. The first iteration has nothing to fork from. Default `0.0`
    /// (every game from the start).
    pub fork_fraction: f64,
    /// Share of an iteration's games in which White is not the network but the project's
    /// alpha-beta searcher (`brandubh_search::AlphaBetaPlayer`) at `sparring_depth` plies,
    /// drawn at each game's start: sparring games, in which only Black's moves are searched
    /// and recorded, so that Black's targets come from games against a different White (and
    /// closer ones: self-play's White wins most games, the alpha-beta's far fewer). Their
    /// White moves are neither searched nor recorded. Default `0.0`: off (not written to
    /// files then).
    #[serde(skip_serializing_if = "is_zero_f64")]
    pub sparring_fraction: f64,
    /// Depth of the alpha-beta White of sparring games, in plies (see `sparring_fraction`).
    /// Default `5` (not written to files then).
    #[serde(skip_serializing_if = "is_default_sparring_depth")]
    pub sparring_depth: u32,
    /// Evaluate every leaf under a random one of the 8 board symmetries (as AlphaGo Zero
    /// did), which averages out orientation biases of the network. Default `true`.
    /// (Files written before this key moved here may still give it as
    /// `search.symmetry_at_inference`; it is read from there too.)
    pub symmetry_at_inference: bool,
    /// Positions the evaluation caches hold, all workers together
    /// (`brandubh_search::EvalCache`: a position met again, or a mirror image of it, is
    /// answered from the cache instead of the network); `0` turns them off. Each worker
    /// has its own share, emptied when the network changes, so seeded sessions still
    /// repeat exactly. 64 bytes a slot and 6 a legal move of each position held (about
    /// 300 bytes a position). Default `0`: off (not written to files then);
    /// `configs/default.toml` sets it.
    #[serde(skip_serializing_if = "is_zero_u32")]
    pub eval_cache: u32,
}

impl Default for SelfPlayConfig {
    fn default() -> Self {
        SelfPlayConfig {
            games_per_iteration: 64,
            concurrent_games: 32,
            leaves_per_game: 1,
            threads: 0,
            ply_cap: 150,
            temperature: 1.0,
            temperature_plies: 8,
            full_search_fraction: 1.0,
            cheap_simulations: 16,
            black_budget_scale: 1.0,
            opening_random_plies: None,
            fork_fraction: 0.0,
            sparring_fraction: 0.0,
            sparring_depth: DEFAULT_SPARRING_DEPTH,
            symmetry_at_inference: true,
            eval_cache: 0,
        }
    }
}

impl SelfPlayConfig {
    /// The number of worker threads: `threads`, or the available cores when it is 0.
    #[must_use]
    pub fn worker_threads(&self) -> usize {
        if self.threads == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            self.threads as usize
        }
    }
}

/// The optimiser.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Optimizer {
    /// Adam (`"adam"`); `weight_decay` is added to the gradient as L2.
    Adam,
    /// Stochastic gradient descent with `momentum` (`"sgd"`).
    Sgd,
}

/// Which implementation runs the training step (`training.engine`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TrainingEngine {
    /// The hand-written step on the fast path's SIMD kernels, on the CPU (`"fast"`).
    #[default]
    Fast,
    /// burn's autodiff on the binary's training device (`"burn"`): the reference, and the
    /// one that trains on a GPU.
    Burn,
}

impl TrainingEngine {
    /// The name a config writes: `fast` or `burn`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            TrainingEngine::Fast => "fast",
            TrainingEngine::Burn => "burn",
        }
    }
}

/// Training (`[training]`). The ranges of its keys are in [`RANGES`].
///
/// The replay window grows with the data as in KataGo: after N positions have been
/// generated in total, training samples from the most recent
/// `min(window_max_positions, max(window_min_positions, window_scale · N^window_alpha))`
/// positions ([`TrainingConfig::window_size`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrainingConfig {
    /// Positions per gradient step. Default `256`.
    pub batch_size: u32,
    /// Gradient steps per iteration (fewer if `max_sample_reuse` caps them). Default `100`.
    pub steps_per_iteration: u32,
    /// `"adam"` or `"sgd"`. Default `"adam"`.
    pub optimizer: Optimizer,
    /// `"fast"` (the hand-written step on the CPU's SIMD kernels) or `"burn"` (burn's
    /// autodiff on the training device, e.g. a GPU). Both compute the same step and write
    /// the same checkpoints, so a run may switch between them (docs/guide/training-step.md).
    /// Default `"fast"`.
    #[serde(default)]
    pub engine: TrainingEngine,
    /// Learning rate from iteration 1 until the first `lr_schedule` breakpoint. Default
    /// `0.001`.
    pub learning_rate: f64,
    /// Momentum of SGD (ignored by Adam). Default `0.9`.
    pub momentum: f64,
    /// L2 regularisation coefficient (the L2 term of the loss). Default `0.0001`.
    pub weight_decay: f64,
    /// Step schedule: a list of `[iteration, learning_rate]` breakpoints; from that
    /// iteration on the rate is the given one. Iterations ≥ 1 and strictly increasing,
    /// rates in (0, 10]. Empty = constant `learning_rate`. Default `[]`.
    pub lr_schedule: Vec<(u32, f64)>,
    /// Weight of the value loss (MSE) against the policy loss (cross-entropy). Default
    /// `1.0`.
    pub value_loss_weight: f64,
    /// Weight `w` of the search's root value `q` in the value target, against the game's
    /// result `z`: the network learns `(1 − w)·z + w·q` (both from the side to move's view;
    /// [`TrainingConfig::value_target`]). `0` trains on results alone, as AlphaZero does;
    /// `0.5` is the average of z and q that makes targets less noisy in lopsided games.
    /// Default `0.0`.
    pub root_value_weight: f64,
    /// Smallest replay window, in positions. Default `10000`.
    pub window_min_positions: u64,
    /// Largest replay window, in positions; at least `window_min_positions`. Default
    /// `250000`.
    pub window_max_positions: u64,
    /// Factor c of the window growth c·N^α. Default `4.0`.
    pub window_scale: f64,
    /// Exponent α of the window growth c·N^α. Default `0.75`.
    pub window_alpha: f64,
    /// If set, caps the steps of an iteration so that, on average, each newly generated
    /// position is sampled at most this many times: `steps ≤ ceil(max_sample_reuse ·
    /// new_positions / batch_size)`. Default: off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_sample_reuse: Option<f64>,
    /// If set, the network gets a moves-left head (lc0's name) trained on the plies to the
    /// game's end, with this weight on its MSE against the policy loss: an auxiliary target
    /// for the shared tower, which no search reads. Default: off (no head; the run's
    /// checkpoints then load only into networks without one, and the other way round).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moves_left_loss_weight: Option<f64>,
}

impl Default for TrainingConfig {
    fn default() -> Self {
        TrainingConfig {
            batch_size: 256,
            steps_per_iteration: 100,
            optimizer: Optimizer::Adam,
            engine: TrainingEngine::Fast,
            learning_rate: 0.001,
            momentum: 0.9,
            weight_decay: 0.0001,
            lr_schedule: Vec::new(),
            value_loss_weight: 1.0,
            root_value_weight: 0.0,
            window_min_positions: 10_000,
            window_max_positions: 250_000,
            window_scale: 4.0,
            window_alpha: 0.75,
            max_sample_reuse: None,
            moves_left_loss_weight: None,
        }
    }
}

impl TrainingConfig {
    /// The replay window after `total_positions` positions have been generated:
    /// `min(max, max(min, c · N^α))`.
    #[must_use]
    pub fn window_size(&self, total_positions: u64) -> usize {
        let grown = self.window_scale * (total_positions as f64).powf(self.window_alpha);
        let min = self.window_min_positions as f64;
        let max = self.window_max_positions as f64;
        // `max(min)` first, then `min(max)`: a NaN from a bad config lands on the minimum.
        let size = grown.max(min).min(max);
        size as usize
    }

    /// The value target of a sample whose game ended `result` (+1 won, −1 lost, 0
    /// unfinished; already discounted, see [`RunConfig::value_target`]) and whose search
    /// valued it `root_value`, both from the side to move's view:
    /// `(1 − w)·result + w·root_value` with `w = root_value_weight`.
    #[must_use]
    pub fn value_target(&self, result: f32, root_value: f32) -> f32 {
        let w = self.root_value_weight as f32;
        (1.0 - w) * result + w * root_value
    }

    /// The learning rate of `iteration` (numbered from 1): the rate of the last
    /// `lr_schedule` breakpoint at or before it, else `learning_rate`.
    #[must_use]
    pub fn learning_rate_at(&self, iteration: u32) -> f64 {
        self.lr_schedule
            .iter()
            .rev()
            .find(|(from, _)| *from <= iteration)
            .map_or(self.learning_rate, |&(_, lr)| lr)
    }

    /// The gradient steps of an iteration that produced `new_positions` positions:
    /// `steps_per_iteration`, capped by `max_sample_reuse` when set (at least 1 step when
    /// there is new data, 0 when there is none and a cap is set).
    #[must_use]
    pub fn steps_for(&self, new_positions: u64) -> u32 {
        match self.max_sample_reuse {
            None => self.steps_per_iteration,
            Some(reuse) => {
                let cap = (reuse * new_positions as f64 / f64::from(self.batch_size)).ceil();
                // `as` saturates, and NaN becomes 0.
                self.steps_per_iteration.min(cap as u32)
            }
        }
    }
}

/// Evaluation after each iteration (`[evaluation]`). The ranges of its keys are in
/// [`RANGES`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EvaluationConfig {
    /// Two-game matches (sides swapped) of the new network against the previous one and
    /// against `baseline`, each, per iteration; `0` turns evaluation off. Default `8`.
    pub matches: u32,
    /// The fixed opponent, as an agent spec of the search crate (e.g. `"greedy"`,
    /// `"random"`). Non-empty, at most 100 characters, no control characters. Default
    /// `"greedy"`.
    pub baseline: String,
    /// Keep the previous network unless the new one scores at least `gating_threshold`
    /// against it. Needs `matches` > 0. Default `false`.
    pub gating: bool,
    /// Score (wins + draws/2 over matches) the new network needs against the previous one
    /// to be accepted when `gating` is on. Default `0.55`.
    pub gating_threshold: f64,
    /// Simulations per move of both players in evaluation games. Default `32`.
    pub sims: u32,
    /// Gating by a sequential probability ratio test (`[evaluation.sprt]`) instead of
    /// `gating_threshold`: the new network plays the previous one until the test accepts
    /// H1 (it is kept), accepts H0 or reaches `sprt.max_matches` (the previous network
    /// stays). `matches` then counts only the series against `baseline`. Needs `gating`.
    /// Default: none (not written to files then); `docs/guide/sprt.md` explains the test.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sprt: Option<SprtConfig>,
}

/// A sequential probability ratio test between two agents over two-game matches
/// (`[evaluation.sprt]`; `brandubh match --sprt ELO0,ELO1[,ALPHA,BETA]`). The hypotheses are
/// Elo differences of A over B on the **match** score of RULES.md, "Matches" (a won match
/// 1, a drawn one ½): H0 says A is `elo0` above B, H1 says `elo1` above.
/// `brandubh_eval::sprt` runs the test; [`SprtConfig::check`] is its one set of ranges.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SprtConfig {
    /// Elo of H0. Range −1,000 to 1,000, below `elo1`. Default `0`.
    pub elo0: f64,
    /// Elo of H1. Range −1,000 to 1,000, above `elo0`. Default `30`.
    pub elo1: f64,
    /// Largest probability of accepting H1 when H0 holds (false positive). Range
    /// (0, 0.5). Default `0.05`.
    pub alpha: f64,
    /// Largest probability of accepting H0 when H1 holds (false negative). Range (0, 0.5).
    /// Default `0.05`.
    pub beta: f64,
    /// Matches after which a test that has decided nothing stops, inconclusive. Range
    /// 1–1,000,000. Default `1000`.
    pub max_matches: u32,
}

impl Default for SprtConfig {
    fn default() -> Self {
        SprtConfig {
            elo0: 0.0,
            elo1: 30.0,
            alpha: 0.05,
            beta: 0.05,
            max_matches: 1000,
        }
    }
}

impl SprtConfig {
    /// Checks every field against its documented range: the error names the field
    /// (`elo0`, `elo1`, `alpha`, `beta` or `max_matches`) and says what is wrong.
    pub fn check(&self) -> Result<(), ValueError> {
        float("elo0", self.elo0, Closed(-1000.0), Closed(1000.0))?;
        float("elo1", self.elo1, Closed(-1000.0), Closed(1000.0))?;
        if self.elo1 <= self.elo0 {
            return Err(bad(
                "elo1",
                format!("must be above elo0 ({}), got {}", self.elo0, self.elo1),
            ));
        }
        float("alpha", self.alpha, Open(0.0), Open(0.5))?;
        float("beta", self.beta, Open(0.0), Open(0.5))?;
        int("max_matches", self.max_matches, 1, 1_000_000)
    }
}

impl Default for EvaluationConfig {
    fn default() -> Self {
        EvaluationConfig {
            matches: 8,
            baseline: "greedy".to_owned(),
            gating: false,
            gating_threshold: 0.55,
            sims: 32,
            sprt: None,
        }
    }
}

/// An out-of-range value: the dotted key and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {message}")]
pub struct ValueError {
    /// The dotted key, e.g. `search.simulations`.
    pub key: String,
    /// What is wrong, e.g. `must be between 1 and 100000, got 0`.
    pub message: String,
}

/// Where in a TOML file an error lies (1-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    /// Line, from 1.
    pub line: usize,
    /// Column in characters, from 1.
    pub column: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

/// A configuration that could not be read. Every message is one line and starts with the
/// file name.
#[derive(Debug)]
pub enum ConfigError {
    /// The file could not be read.
    Io {
        /// The file.
        file: String,
        /// Why.
        source: io::Error,
    },
    /// The text is not valid TOML.
    Syntax {
        /// The file.
        file: String,
        /// Where, if known.
        location: Option<Location>,
        /// The parser's message (on one line).
        message: String,
    },
    /// A key that no section has (a typo, or a key of another version).
    UnknownKey {
        /// The file.
        file: String,
        /// The dotted key, e.g. `selfplay.gmes_per_iteration`.
        key: String,
        /// Where, if known.
        location: Option<Location>,
        /// The known key closest to it, if one is close.
        suggestion: Option<String>,
    },
    /// A key of an experiment that was tried, not kept and removed ([`RETIRED_KEYS`]).
    Retired {
        /// The file.
        file: String,
        /// The dotted key, e.g. `selfplay.resign_threshold`.
        key: String,
        /// Where, if known.
        location: Option<Location>,
        /// The commit whose build still reads the key.
        commit: &'static str,
    },
    /// A value of the wrong type, or an unknown choice (e.g. `algorithm = "gumble"`).
    BadValue {
        /// The file.
        file: String,
        /// The dotted key, when it could be determined.
        key: Option<String>,
        /// Where, if known.
        location: Option<Location>,
        /// What is wrong (on one line).
        message: String,
    },
    /// A value out of its range, found by [`RunConfig::validate`].
    Invalid {
        /// The file.
        file: String,
        /// The key and what is wrong.
        error: ValueError,
    },
    /// A run's copy of its configuration fails its checksum (see
    /// [`RunConfig::to_run_copy`]).
    Damaged {
        /// The file.
        file: String,
        /// What is wrong (on one line).
        message: String,
    },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = |loc: &Option<Location>| match loc {
            Some(l) => format!(" at {l}"),
            None => String::new(),
        };
        match self {
            ConfigError::Io { file, source } => write!(f, "{file}: cannot read: {source}"),
            ConfigError::Syntax {
                file,
                location,
                message,
            } => write!(f, "{file}: invalid TOML{}: {message}", at(location)),
            ConfigError::UnknownKey {
                file,
                key,
                location,
                suggestion,
            } => {
                write!(f, "{file}: unknown key {key}{}", at(location))?;
                if let Some(s) = suggestion {
                    write!(f, " (did you mean {s}?)")?;
                }
                Ok(())
            }
            ConfigError::Retired {
                file,
                key,
                location,
                commit,
            } => write!(
                f,
                "{file}: {key}{} is retired: its experiment was not kept \
                 (configs/ablations/README.md); commit {commit} can reproduce it",
                at(location)
            ),
            ConfigError::BadValue {
                file,
                key,
                location,
                message,
            } => match key {
                Some(key) => write!(f, "{file}: {key}: {message}{}", at(location)),
                None => write!(f, "{file}: {message}{}", at(location)),
            },
            ConfigError::Invalid { file, error } => write!(f, "{file}: {error}"),
            ConfigError::Damaged { file, message } => write!(f, "{file}: damaged: {message}"),
        }
    }
}

/// The message shows every cause, so `source()` returns none (they would print twice).
impl std::error::Error for ConfigError {}

/// How a run's copy of its configuration begins; the checksum follows.
const RUN_COPY_LABEL: &str = "# brandubh run configuration, fnv1a64 ";

/// The TOML of a run's copy of its configuration once its checksum line checks out; the
/// whole text when it has none. The checksum line is a first line that starts with `#` and
/// ends with 16 hex digits; they are the checksum of the rest of that line (so a damaged
/// comment counts too) followed by everything after it.
fn verify_run_copy(text: &str) -> Result<&str, String> {
    let (line, toml) = text.split_once('\n').unwrap_or((text, ""));
    let split = line
        .len()
        .checked_sub(16)
        .filter(|&i| line.is_char_boundary(i));
    let Some((label, stored)) = split.map(|i| line.split_at(i)) else {
        return Ok(text);
    };
    if !line.starts_with('#') || !stored.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(text);
    }
    let computed = format!("{:016x}", run_copy_checksum(label, toml));
    if stored == computed {
        Ok(toml)
    } else {
        Err(format!(
            "checksum mismatch (stored {stored}, computed {computed}): the file is damaged or \
             was edited by hand (to change a run's configuration, pass the new file with \
             --config and --force-config)"
        ))
    }
}

/// The text of the file at `path` and its name for errors.
fn read_text(path: &Path) -> Result<(String, String), ConfigError> {
    let file = path.display().to_string();
    match std::fs::read_to_string(path) {
        Ok(text) => Ok((text, file)),
        Err(source) => Err(ConfigError::Io { file, source }),
    }
}

/// The checksum of a run's copy of its configuration: of its first line up to the checksum
/// and of the TOML after that line.
fn run_copy_checksum(label: &str, toml: &str) -> u64 {
    brandubh_fs::fnv1a64(format!("{label}\n{toml}").as_bytes())
}

impl RunConfig {
    /// The value target of `sample`: its game's result discounted over the plies to the
    /// end (`z·γ^plies`, [`SearchSettings::discount_over`], the same γ the search
    /// discounts with), mixed with the search's root value
    /// ([`TrainingConfig::value_target`]).
    #[must_use]
    pub fn value_target(&self, sample: &crate::replay::TrainingSample) -> f32 {
        let result = sample.result * self.search.discount_over(sample.plies_to_end);
        self.training.value_target(result, sample.root_value)
    }

    /// Reads, parses and validates a TOML file, with the files it `extends` (see the
    /// module documentation); errors name the file as given.
    pub fn from_file(path: impl AsRef<Path>) -> Result<RunConfig, ConfigError> {
        let path = path.as_ref();
        let (text, file) = read_text(path)?;
        let Some(table) = extends_table(&text) else {
            return RunConfig::from_toml_str(&text, &file);
        };
        let table = extended_table(path, &file, &text, table, &mut Vec::new())?;
        let config: RunConfig = serde_path_to_error::deserialize(toml::Value::Table(table))
            .map_err(|e| toml_error(&file, &text, e, false))?;
        config
            .validate()
            .map_err(|error| ConfigError::Invalid { file, error })?;
        Ok(config)
    }

    /// Parses and validates TOML `text`; `name` is the file name used in errors. The text
    /// cannot `extends` another file (there is no file to be relative to).
    pub fn from_toml_str(text: &str, name: &str) -> Result<RunConfig, ConfigError> {
        if has_extends(text) {
            return Err(ConfigError::BadValue {
                file: name.to_owned(),
                key: Some(EXTENDS.to_owned()),
                location: None,
                message: "only a configuration file read from disk can extend another".to_owned(),
            });
        }
        let config = parse_toml(text, name)?;
        config.validate().map_err(|error| ConfigError::Invalid {
            file: name.to_owned(),
            error,
        })?;
        Ok(config)
    }

    /// The text of a run's own copy of its configuration (`config.toml` in the run): a first
    /// line `# brandubh run configuration, fnv1a64 <16 hex digits>` with the checksum of
    /// that line's text and the TOML that follows, so that [`RunConfig::from_run_copy`] tells a damaged copy
    /// (truncated, flipped) from a valid one. The rest is [`RunConfig::to_toml_string`].
    pub fn to_run_copy(&self) -> Result<String, ValueError> {
        let toml = self.to_toml_string()?;
        let sum = run_copy_checksum(RUN_COPY_LABEL, &toml);
        Ok(format!("{RUN_COPY_LABEL}{sum:016x}\n{toml}"))
    }

    /// Reads a run's copy of its configuration, written by [`RunConfig::to_run_copy`]: the
    /// checksum is verified, then the TOML is read as by [`RunConfig::from_file`]. A copy
    /// without the checksum line (runs made before it existed) is read as it is.
    pub fn from_run_copy(path: impl AsRef<Path>) -> Result<RunConfig, ConfigError> {
        let (text, file) = read_text(path.as_ref())?;
        RunConfig::from_run_copy_str(&text, &file)
    }

    /// [`RunConfig::from_run_copy`] for the text of a run's copy (e.g. an object read from
    /// a store); `name` names it in errors.
    ///
    /// A copy written before a key was retired ([`RETIRED_KEYS`]) reads as without it
    /// while the key turned its experiment off (every run wrote `selfplay.resign_threshold
    /// = 0.0`); one that turned it on is refused, naming the key.
    pub fn from_run_copy_str(text: &str, name: &str) -> Result<RunConfig, ConfigError> {
        let toml = verify_run_copy(text).map_err(|message| ConfigError::Damaged {
            file: name.to_owned(),
            message,
        })?;
        let stripped = toml.parse::<toml::Table>().ok().and_then(|mut table| {
            drop_retired_off_keys(&mut table)
                .then(|| toml::to_string(&table).ok())
                .flatten()
        });
        RunConfig::from_toml_str(stripped.as_deref().unwrap_or(toml), name)
    }

    /// The configuration as TOML that [`RunConfig::from_toml_str`] reads back unchanged.
    /// Fails only for a configuration that [`RunConfig::validate`] rejects.
    pub fn to_toml_string(&self) -> Result<String, ValueError> {
        self.validate()?;
        // A valid configuration has no integer beyond TOML's i64, so this cannot fail; the
        // error is still passed on rather than unwrapped.
        toml::to_string(self).map_err(|e| bad("config", brandubh_fs::one_line(&e.to_string())))
    }

    /// The dotted keys whose values differ between `self` and `other`, sorted (e.g.
    /// `["search.simulations"]`); empty when the configurations are equal. Used to refuse
    /// resuming a run with a changed configuration, naming what changed.
    #[must_use]
    pub fn changed_keys(&self, other: &RunConfig) -> Vec<String> {
        let (a, b) = (leaves(self), leaves(other));
        let mut keys: Vec<String> = a
            .keys()
            .chain(b.keys())
            .filter(|k| a.get(*k) != b.get(*k))
            .cloned()
            .collect();
        keys.sort();
        keys.dedup();
        keys
    }

    /// Checks every value: the name and the seed, every range of [`RANGES`], the search
    /// crate's checks of `[search]`, and the keys that depend on others. The error names
    /// the first offending key.
    pub fn validate(&self) -> Result<(), ValueError> {
        self.validate_name_and_seed()?;
        let values = leaves(self);
        for &(key, range) in RANGES {
            if let Some(value) = values.get(key) {
                range.check(key, value)?;
            }
        }
        self.search.validate().map_err(|e| {
            bad(
                &format!("search.{}", e.field),
                format!("must be {}, got {}", e.expected, e.value),
            )
        })?;
        validate_lr_schedule(&self.training.lr_schedule)?;
        self.validate_relations()?;
        self.validate_evaluation()
    }

    /// `name`, and `seed` (whose range is TOML's: a larger one cannot be written, so it
    /// is checked before anything is turned into TOML).
    fn validate_name_and_seed(&self) -> Result<(), ValueError> {
        let name_ok = !self.name.is_empty()
            && self.name.len() <= 64
            && !self.name.starts_with('.')
            && self
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
        if !name_ok {
            return Err(bad(
                "name",
                format!(
                    "must be 1-64 characters from A-Z a-z 0-9 . _ - not starting with a dot, got {:?}",
                    truncate(&self.name, 70)
                ),
            ));
        }
        if self.seed > i64::MAX as u64 {
            return Err(bad(
                "seed",
                format!("must be between 0 and {}, got {}", i64::MAX, self.seed),
            ));
        }
        Ok(())
    }

    /// The keys whose valid values depend on another key's.
    fn validate_relations(&self) -> Result<(), ValueError> {
        let (m, p, t) = (&self.model, &self.selfplay, &self.training);
        if m.threat_planes && !m.king_planes {
            return Err(bad(
                "model.threat_planes",
                "needs model.king_planes = true (the threat planes come after the King planes)"
                    .to_string(),
            ));
        }
        if p.full_search_fraction < 1.0 && p.cheap_simulations > self.search.simulations {
            return Err(bad(
                "selfplay.cheap_simulations",
                format!(
                    "must be at most search.simulations ({}) when full_search_fraction is below 1, got {}",
                    self.search.simulations, p.cheap_simulations
                ),
            ));
        }
        if let Some(n) = p.opening_random_plies
            && n > p.ply_cap
        {
            return Err(bad(
                "selfplay.opening_random_plies",
                format!("must be at most selfplay.ply_cap ({}), got {n}", p.ply_cap),
            ));
        }
        if t.window_max_positions < t.window_min_positions {
            return Err(bad(
                "training.window_max_positions",
                format!(
                    "must be at least training.window_min_positions ({}), got {}",
                    t.window_min_positions, t.window_max_positions
                ),
            ));
        }
        Ok(())
    }

    /// `[evaluation]`'s baseline, the keys that need another, and `[evaluation.sprt]`
    /// ([`SprtConfig::check`], shared with `brandubh match --sprt`).
    fn validate_evaluation(&self) -> Result<(), ValueError> {
        let e = &self.evaluation;
        if e.baseline.trim().is_empty()
            || e.baseline.chars().count() > 100
            || e.baseline.chars().any(char::is_control)
        {
            return Err(bad(
                "evaluation.baseline",
                format!(
                    "must be a non-empty agent spec of at most 100 characters without control characters, got {:?}",
                    truncate(&e.baseline, 40)
                ),
            ));
        }
        if e.gating && e.matches == 0 {
            return Err(bad(
                "evaluation.gating",
                "needs evaluation.matches > 0 to decide".to_owned(),
            ));
        }
        let Some(sprt) = &e.sprt else {
            return Ok(());
        };
        if !e.gating {
            return Err(bad(
                "evaluation.sprt",
                "gates the new network, so it needs evaluation.gating = true".to_owned(),
            ));
        }
        sprt.check()
            .map_err(|v| bad(&format!("evaluation.sprt.{}", v.key), v.message))
    }
}

/// The valid values of a number: integers from `lo` to `hi`, both included, or decimals
/// between two bounds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Range {
    /// Integers `lo..=hi`.
    Int(i64, i64),
    /// Decimals between a lower and an upper bound (NaN is never inside).
    Float(Bound, Bound),
}

/// A bound of a decimal [`Range`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bound {
    /// The bound itself is outside the range.
    Open(f64),
    /// The bound itself is inside the range.
    Closed(f64),
}
use Bound::{Closed, Open};
use Range::{Float, Int};

impl Range {
    /// Checks `value` (of the key `key`, which the error names).
    fn check(self, key: &str, value: &toml::Value) -> Result<(), ValueError> {
        match (self, value) {
            (Int(lo, hi), &toml::Value::Integer(v)) => int(key, v, lo, hi),
            (Float(lo, hi), &toml::Value::Float(v)) => float(key, v, lo, hi),
            _ => Err(bad(key, format!("must be a number, got {value}"))),
        }
    }
}

/// The range of every number of a run configuration, by dotted key: the one place each is
/// written. [`RunConfig::validate`] checks them (the keys that depend on another key are
/// checked there too, and the `[search]` keys but `search.simulations` by the search crate's
/// `SearchSettings::validate`, `[evaluation.sprt]` by [`SprtConfig::check`]); the fields'
/// documentation points here, and docs/guide/training.md's key table is tested against
/// them (`crates/brandubh-run/tests/docs.rs`).
pub const RANGES: &[(&str, Range)] = &[
    ("iterations", Int(1, 1_000_000)),
    ("model.channels", Int(1, 1024)),
    ("model.blocks", Int(1, 64)),
    ("search.simulations", Int(1, 100_000)),
    ("selfplay.games_per_iteration", Int(1, 1_000_000)),
    ("selfplay.concurrent_games", Int(1, 65_536)),
    ("selfplay.leaves_per_game", Int(1, 64)),
    ("selfplay.threads", Int(0, 1024)),
    ("selfplay.ply_cap", Int(1, 10_000)),
    ("selfplay.temperature", Float(Closed(0.0), Closed(10.0))),
    ("selfplay.temperature_plies", Int(0, 10_000)),
    (
        "selfplay.full_search_fraction",
        Float(Open(0.0), Closed(1.0)),
    ),
    ("selfplay.cheap_simulations", Int(1, 100_000)),
    (
        "selfplay.black_budget_scale",
        Float(Closed(1.0), Closed(16.0)),
    ),
    ("selfplay.fork_fraction", Float(Closed(0.0), Closed(1.0))),
    (
        "selfplay.sparring_fraction",
        Float(Closed(0.0), Closed(1.0)),
    ),
    ("selfplay.sparring_depth", Int(1, 8)),
    (
        "selfplay.eval_cache",
        Int(0, brandubh_search::MAX_CACHE_POSITIONS as i64),
    ),
    ("training.batch_size", Int(1, 65_536)),
    ("training.steps_per_iteration", Int(1, 1_000_000)),
    ("training.learning_rate", LEARNING_RATE),
    ("training.momentum", Float(Closed(0.0), Open(1.0))),
    ("training.weight_decay", Float(Closed(0.0), Closed(1.0))),
    (
        "training.value_loss_weight",
        Float(Closed(0.0), Closed(100.0)),
    ),
    (
        "training.root_value_weight",
        Float(Closed(0.0), Closed(1.0)),
    ),
    ("training.window_min_positions", Int(1, 100_000_000)),
    ("training.window_max_positions", Int(1, 100_000_000)),
    (
        "training.window_scale",
        Float(Open(0.0), Closed(1_000_000.0)),
    ),
    ("training.window_alpha", Float(Open(0.0), Closed(1.0))),
    (
        "training.max_sample_reuse",
        Float(Open(0.0), Closed(1000.0)),
    ),
    (
        "training.moves_left_loss_weight",
        Float(Open(0.0), Closed(100.0)),
    ),
    ("evaluation.matches", Int(0, 10_000)),
    (
        "evaluation.gating_threshold",
        Float(Closed(0.5), Closed(1.0)),
    ),
    ("evaluation.sims", Int(1, 100_000)),
];

/// The range of a learning rate: `training.learning_rate` and each of `training.lr_schedule`'s.
const LEARNING_RATE: Range = Float(Open(0.0), Closed(10.0));

/// Whether a count is 0 (such keys are not written to files then).
#[allow(clippy::trivially_copy_pass_by_ref)] // serde hands a reference
/// Whether `v` is 0, for `skip_serializing_if` (config and metrics keys left out at 0).
pub(crate) fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}

pub(crate) fn is_zero_f64(v: &f64) -> bool {
    *v == 0.0
}

/// Default of `selfplay.sparring_depth`.
const DEFAULT_SPARRING_DEPTH: u32 = 5;

fn is_default_sparring_depth(v: &u32) -> bool {
    *v == DEFAULT_SPARRING_DEPTH
}

fn bad(key: &str, message: String) -> ValueError {
    ValueError {
        key: key.to_owned(),
        message,
    }
}

fn truncate(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

fn int<T: PartialOrd + fmt::Display + Copy>(
    key: &str,
    v: T,
    lo: T,
    hi: T,
) -> Result<(), ValueError> {
    if v < lo || v > hi {
        return Err(bad(key, format!("must be between {lo} and {hi}, got {v}")));
    }
    Ok(())
}

fn float(key: &str, v: f64, lo: Bound, hi: Bound) -> Result<(), ValueError> {
    let ok_lo = match lo {
        Open(l) => v > l,
        Closed(l) => v >= l,
    };
    let ok_hi = match hi {
        Open(h) => v < h,
        Closed(h) => v <= h,
    };
    if ok_lo && ok_hi {
        return Ok(());
    }
    let message = match (lo, hi) {
        (Closed(l), Closed(h)) => format!("must be between {l} and {h}, got {v}"),
        (Open(l), Closed(h)) => format!("must be greater than {l} and at most {h}, got {v}"),
        (Closed(l), Open(h)) => format!("must be at least {l} and below {h}, got {v}"),
        (Open(l), Open(h)) => format!("must be strictly between {l} and {h}, got {v}"),
    };
    Err(bad(key, message))
}

/// Every leaf value of the configuration by dotted key.
fn leaves(config: &RunConfig) -> BTreeMap<String, toml::Value> {
    fn walk(prefix: &str, value: toml::Value, out: &mut BTreeMap<String, toml::Value>) {
        match value {
            toml::Value::Table(table) => {
                for (k, v) in table {
                    let key = if prefix.is_empty() {
                        k
                    } else {
                        format!("{prefix}.{k}")
                    };
                    walk(&key, v, out);
                }
            }
            other => {
                out.insert(prefix.to_owned(), other);
            }
        }
    }
    let mut out = BTreeMap::new();
    if let Ok(value) = toml::Value::try_from(config) {
        walk("", value, &mut out);
    }
    out
}

/// `training.lr_schedule`: iterations strictly increasing from 1, rates in (0, 10].
fn validate_lr_schedule(schedule: &[(u32, f64)]) -> Result<(), ValueError> {
    let mut previous = 0;
    for (i, &(iteration, lr)) in schedule.iter().enumerate() {
        if iteration <= previous {
            return Err(bad(
                "training.lr_schedule",
                format!(
                    "breakpoint {} must name an iteration after {previous}, got {iteration}",
                    i + 1
                ),
            ));
        }
        previous = iteration;
        LEARNING_RATE
            .check("training.lr_schedule", &toml::Value::Float(lr))
            .map_err(|e| {
                bad(
                    "training.lr_schedule",
                    format!("learning rate of breakpoint {}: {}", i + 1, e.message),
                )
            })?;
    }
    Ok(())
}

/// The top-level key naming the file a configuration file starts from.
const EXTENDS: &str = "extends";

/// Most files in one chain of `extends`.
const MAX_EXTENDS: usize = 8;

/// `text` as a table, if it is valid TOML with a top-level `extends` key.
fn extends_table(text: &str) -> Option<toml::Table> {
    text.parse::<toml::Table>()
        .ok()
        .filter(|t| t.contains_key(EXTENDS))
}

/// Whether `text` is valid TOML with a top-level `extends` key.
fn has_extends(text: &str) -> bool {
    extends_table(text).is_some()
}

/// The table of the configuration file at `path` (named `file` in errors, read as `text`,
/// parsed as `table`, which has an `extends` key), merged over the tables of the files it
/// extends; `chain` holds the files (canonical paths) that extend it. The file's own keys
/// are checked against [`RunConfig`] on their own, so that its errors name it.
fn extended_table(
    path: &Path,
    file: &str,
    text: &str,
    mut table: toml::Table,
    chain: &mut Vec<PathBuf>,
) -> Result<toml::Table, ConfigError> {
    let bad = |message: String| ConfigError::BadValue {
        file: file.to_owned(),
        key: Some(EXTENDS.to_owned()),
        location: None,
        message,
    };
    let base = table.remove(EXTENDS);
    migrate_symmetry_key(&mut table, file)?;
    serde_path_to_error::deserialize::<_, RunConfig>(toml::Value::Table(table.clone()))
        .map_err(|e| toml_error(file, text, e, false))?;
    let Some(toml::Value::String(base)) = base else {
        return Err(bad(
            "must be the path of a configuration file (a string)".to_owned()
        ));
    };
    let base_path = path.parent().unwrap_or(Path::new("")).join(&base);
    let shown = base_path.display();
    let here = std::fs::canonicalize(path).map_err(|e| bad(format!("{}: {e}", path.display())))?;
    chain.push(here);
    let id =
        std::fs::canonicalize(&base_path).map_err(|e| bad(format!("cannot read {shown}: {e}")))?;
    if chain.contains(&id) {
        return Err(bad(format!(
            "{shown} extends, in the end, this file again (a cycle)"
        )));
    }
    if chain.len() >= MAX_EXTENDS {
        return Err(bad(format!(
            "{shown} is more than {MAX_EXTENDS} files down a chain of extends"
        )));
    }
    let mut merged = base_table(&base_path, chain)?;
    merge_tables(&mut merged, table);
    Ok(merged)
}

/// The table of the configuration file at `path`, which another file extends, with the
/// files it extends in turn ([`extended_table`]).
fn base_table(path: &Path, chain: &mut Vec<PathBuf>) -> Result<toml::Table, ConfigError> {
    let (text, file) = read_text(path)?;
    if let Some(table) = extends_table(&text) {
        return extended_table(path, &file, &text, table, chain);
    }
    // A file that extends none: checked whole, with located errors.
    parse_toml(&text, &file)?;
    let mut table = text
        .parse::<toml::Table>()
        .map_err(|e| ConfigError::Syntax {
            file: file.clone(),
            location: None,
            message: brandubh_fs::one_line(e.message()),
        })?;
    migrate_symmetry_key(&mut table, &file)?;
    Ok(table)
}

/// Puts the keys of `over` into `base`: a table into a table key by key, any other value
/// in place of the old one.
fn merge_tables(base: &mut toml::Table, over: toml::Table) {
    for (key, value) in over {
        match value {
            toml::Value::Table(over) => {
                if let Some(toml::Value::Table(base)) = base.get_mut(&key) {
                    merge_tables(base, over);
                    continue;
                }
                base.insert(key, toml::Value::Table(over));
            }
            value => {
                base.insert(key, value);
            }
        }
    }
}

/// Deserializes `text`, moving the legacy key `search.symmetry_at_inference` to
/// `[selfplay]` first; errors name the key through `serde_path_to_error`.
fn parse_toml(text: &str, file: &str) -> Result<RunConfig, ConfigError> {
    let legacy = text
        .parse::<toml::Table>()
        .ok()
        .filter(|t| legacy_symmetry_key(t).is_some());
    match legacy {
        // Only files that use the old key lose the line numbers of their errors.
        Some(mut table) => {
            migrate_symmetry_key(&mut table, file)?;
            serde_path_to_error::deserialize(toml::Value::Table(table))
                .map_err(|e| toml_error(file, text, e, false))
        }
        None => serde_path_to_error::deserialize(toml::Deserializer::new(text))
            .map_err(|e| toml_error(file, text, e, true)),
    }
}

fn legacy_symmetry_key(table: &toml::Table) -> Option<&toml::Value> {
    table.get("search")?.as_table()?.get(LEGACY_SYMMETRY_KEY)
}

const LEGACY_SYMMETRY_KEY: &str = "symmetry_at_inference";

fn migrate_symmetry_key(table: &mut toml::Table, file: &str) -> Result<(), ConfigError> {
    let Some(value) = table
        .get_mut("search")
        .and_then(toml::Value::as_table_mut)
        .and_then(|search| search.remove(LEGACY_SYMMETRY_KEY))
    else {
        return Ok(());
    };
    let selfplay = table
        .entry("selfplay")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    match selfplay.as_table_mut() {
        Some(t) if !t.contains_key(LEGACY_SYMMETRY_KEY) => {
            t.insert(LEGACY_SYMMETRY_KEY.to_owned(), value);
            Ok(())
        }
        _ => Err(ConfigError::BadValue {
            file: file.to_owned(),
            key: Some("search.symmetry_at_inference".to_owned()),
            location: None,
            message: "is also given as selfplay.symmetry_at_inference; keep only that one"
                .to_owned(),
        }),
    }
}

/// Turns a deserialization error into a one-line [`ConfigError`] naming the key (from the
/// error's path) and, where the text has one, its location.
fn toml_error(
    file: &str,
    text: &str,
    err: serde_path_to_error::Error<toml::de::Error>,
    located: bool,
) -> ConfigError {
    let key = dotted_key(err.path());
    let err = err.into_inner();
    let span = err.span().filter(|_| located);
    let location = span.as_ref().map(|s| location_of(text, s.start));
    let mut message = brandubh_fs::one_line(err.message());
    let file = file.to_owned();
    if text.parse::<toml::Table>().is_err() {
        if message.is_empty() {
            // The parser gives some syntax errors no text (e.g. `key =` at the end).
            let at_end = span.is_some_and(|s| s.start >= text.trim_end().len());
            message = if at_end {
                "unexpected end of file"
            } else {
                "syntax error"
            }
            .to_owned();
        }
        return ConfigError::Syntax {
            file,
            location,
            message,
        };
    }
    match key {
        Some(key) if message.starts_with("unknown field") => match retired_commit(&key) {
            Some(commit) => ConfigError::Retired {
                file,
                key,
                location,
                commit,
            },
            None => ConfigError::UnknownKey {
                suggestion: closest_known_key(&key),
                file,
                key,
                location,
            },
        },
        key => ConfigError::BadValue {
            file,
            key,
            location,
            message,
        },
    }
}

/// The keys of experiments that lost their ablation (or were inconclusive and off) and
/// were removed with their code, each with the commit that added its ablation config, whose
/// build still runs it (configs/ablations/README.md). A file naming one is refused with an
/// error that says so; a run's own copy written before may name one at the value that
/// turned it off, and reads as without it ([`RunConfig::from_run_copy`]).
pub const RETIRED_KEYS: &[(&str, &str)] = &[
    ("model.escape_planes", "d3f7abe"),
    ("selfplay.black_proof_plies", "5e1df2d"),
    ("selfplay.fork_black_losses", "0c6ac1d"),
    ("selfplay.resign_check_fraction", "cf0dd85"),
    ("selfplay.resign_consecutive", "cf0dd85"),
    ("selfplay.resign_threshold", "cf0dd85"),
    ("training.recency_half_life", "23ebfcc"),
];

/// The commit that can reproduce the retired `key`; `None` if `key` is not retired.
fn retired_commit(key: &str) -> Option<&'static str> {
    RETIRED_KEYS
        .iter()
        .find(|(retired, _)| *retired == key)
        .map(|&(_, commit)| commit)
}

/// Removes from a run's copy of its configuration the retired keys that a build before
/// their retirement wrote while they were off (`resign_threshold = 0.0` with its two
/// companions, every run wrote them); a retired key that was on stays, to be refused by
/// name. Returns whether a key was removed.
fn drop_retired_off_keys(table: &mut toml::Table) -> bool {
    let is_off = |v: &toml::Value| match v {
        toml::Value::Boolean(b) => !b,
        toml::Value::Integer(i) => *i == 0,
        toml::Value::Float(x) => *x == 0.0,
        _ => false,
    };
    let mut dropped = false;
    for (section, fields) in table.iter_mut() {
        let Some(fields) = fields.as_table_mut() else {
            continue;
        };
        let resigning = fields.get("resign_threshold").is_some_and(|v| !is_off(v));
        fields.retain(|field, value| {
            let key = format!("{section}.{field}");
            let companion = key.starts_with("selfplay.resign_") && !resigning;
            let drop = retired_commit(&key).is_some() && (is_off(value) || companion);
            dropped |= drop;
            !drop
        });
    }
    dropped
}

/// The dotted TOML key of a deserialization path: its map keys up to the first array
/// index (`training.lr_schedule[1][1]` → `training.lr_schedule`); `None` at the top.
fn dotted_key(path: &serde_path_to_error::Path) -> Option<String> {
    let parts: Vec<String> = path
        .iter()
        .map_while(|segment| match segment {
            serde_path_to_error::Segment::Map { key } => Some(key.clone()),
            _ => None,
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join("."))
}

/// The known key or section closest to the unknown `key`, in the same section, if one is
/// within a small edit distance of its last part.
fn closest_known_key(key: &str) -> Option<String> {
    let (section, field) = key.rsplit_once('.').unwrap_or(("", key));
    let limit = (field.chars().count() / 3).max(2);
    known_keys()
        .into_iter()
        .filter_map(|known| {
            let (known_section, known_field) = known.rsplit_once('.').unwrap_or(("", &known));
            let distance = strsim::levenshtein(field, known_field);
            (known_section == section && distance <= limit).then_some((distance, known))
        })
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, known)| known)
}

/// Every key and section a configuration file may contain, dotted.
fn known_keys() -> Vec<String> {
    let mut full = RunConfig::default();
    // Optional keys are only written when set.
    full.selfplay.opening_random_plies = Some(0);
    full.selfplay.sparring_fraction = 0.5;
    full.selfplay.sparring_depth = 1;
    full.model.king_planes = true;
    full.model.threat_planes = true;
    full.training.max_sample_reuse = Some(1.0);
    full.training.moves_left_loss_weight = Some(1.0);
    full.evaluation.sprt = Some(SprtConfig::default());
    let mut keys: Vec<String> = Vec::new();
    for leaf in leaves(&full).into_keys() {
        let mut prefix = String::new();
        for part in leaf.split('.') {
            if !prefix.is_empty() {
                prefix.push('.');
            }
            prefix.push_str(part);
            keys.push(prefix.clone());
        }
    }
    keys.sort();
    keys.dedup();
    keys
}

fn location_of(text: &str, offset: usize) -> Location {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    Location { line, column }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        RunConfig::from_toml_str(text, "configs/x.toml")
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn defaults_are_valid_and_empty_file_gives_defaults() {
        RunConfig::default().validate().unwrap();
        let c = RunConfig::from_toml_str("", "empty.toml").unwrap();
        assert_eq!(c, RunConfig::default());
    }

    #[test]
    fn unknown_key_names_file_section_key_and_suggests() {
        let text = "name = \"x\"\n\n[selfplay]\nply_cap = 40\ngmes_per_iteration = 3\n";
        assert_eq!(
            err(text),
            "configs/x.toml: unknown key selfplay.gmes_per_iteration at line 5, column 1 \
             (did you mean selfplay.games_per_iteration?)"
        );
    }

    #[test]
    fn unknown_top_level_key_and_section() {
        let e = err("nmae = \"x\"\n");
        assert!(
            e.starts_with("configs/x.toml: unknown key nmae at line 1, column 1"),
            "{e}"
        );
        assert!(e.ends_with("(did you mean name?)"), "{e}");
        let e = err("[model]\nblocks = 2\n[serach]\nsimulations = 3\n");
        assert!(
            e.starts_with("configs/x.toml: unknown key serach at line 3"),
            "{e}"
        );
        assert!(e.contains("did you mean search?"), "{e}");
    }

    #[test]
    fn unknown_key_in_dotted_and_inline_form() {
        let e = err("selfplay.gmes = 3\n");
        assert!(e.contains("unknown key selfplay.gmes"), "{e}");
        let e = err("model = { channels = 8, blokcs = 1 }\n");
        assert!(e.contains("unknown key model.blokcs"), "{e}");
        assert!(e.contains("did you mean model.blocks?"), "{e}");
        let e = err("[evaluation]\ngating = true\n[evaluation.sprt]\nelo_1 = 30\n");
        assert!(e.contains("unknown key evaluation.sprt.elo_1"), "{e}");
        assert!(e.contains("did you mean evaluation.sprt.elo1?"), "{e}");
    }

    #[test]
    fn wrong_type_and_unknown_variant_name_the_key() {
        let e = err("[search]\nsimulations = \"many\"\n");
        assert!(
            e.starts_with("configs/x.toml: search.simulations: invalid type"),
            "{e}"
        );
        assert!(e.contains("line 2"), "{e}");
        let e = err("[search]\nalgorithm = \"gumble\"\n");
        assert!(
            e.starts_with("configs/x.toml: search.algorithm: unknown variant"),
            "{e}"
        );
        let e = err("[selfplay]\nply_cap = -1\n");
        assert!(e.starts_with("configs/x.toml: selfplay.ply_cap: "), "{e}");
        let e = err("[training]\nlr_schedule = [\n  [10, 0.1],\n  [20, \"x\"],\n]\n");
        assert!(
            e.starts_with("configs/x.toml: training.lr_schedule: "),
            "{e}"
        );
        assert!(!e.contains('\n'));
    }

    #[test]
    fn syntax_errors_are_one_line_with_location() {
        let e = err("[search\nsimulations = 3\n");
        assert!(
            e.starts_with("configs/x.toml: invalid TOML at line 1"),
            "{e}"
        );
        assert!(!e.contains('\n'), "{e}");
    }

    #[test]
    fn a_bad_sprt_table_names_its_key() {
        let gated = "[evaluation]\ngating = true\n[evaluation.sprt]\n";
        for (body, field) in [
            ("elo0 = 30\nelo1 = 10", "elo1"),
            ("elo0 = -1001", "elo0"),
            ("alpha = 0.5", "alpha"),
            ("beta = 0", "beta"),
            ("max_matches = 0", "max_matches"),
        ] {
            let e = err(&format!("{gated}{body}"));
            let key = format!("configs/x.toml: evaluation.sprt.{field}: ");
            assert!(e.starts_with(&key), "{body:?} gave {e:?}");
        }
    }

    #[test]
    fn out_of_range_values_name_file_and_key() {
        assert_eq!(
            err("[search]\nsimulations = 0\n"),
            "configs/x.toml: search.simulations: must be between 1 and 100000, got 0"
        );
        let cases = [
            ("name = \"a b\"", "name"),
            ("name = \"\"", "name"),
            (
                "[model]\nking_planes = false\nthreat_planes = true",
                "model.threat_planes",
            ),
            ("[search]\nc_puct = 0", "search.c_puct"),
            ("[search]\nc_puct = nan", "search.c_puct"),
            ("[search]\nfpu_reduction = -0.1", "search.fpu_reduction"),
            ("[search]\ndirichlet_alpha = 0.0", "search.dirichlet_alpha"),
            (
                "[search]\ndirichlet_fraction = 1.5",
                "search.dirichlet_fraction",
            ),
            (
                "[search]\ngumbel_candidates = 97",
                "search.gumbel_candidates",
            ),
            ("[search]\ngumbel_c_visit = 0", "search.gumbel_c_visit"),
            ("[search]\ngumbel_c_scale = inf", "search.gumbel_c_scale"),
            ("[search]\nvalue_discount = 0.4", "search.value_discount"),
            ("[search]\nvalue_discount = 1.01", "search.value_discount"),
            (
                "[selfplay]\ncheap_simulations = 65\nfull_search_fraction = 0.5",
                "selfplay.cheap_simulations",
            ),
            (
                "[selfplay]\nply_cap = 10\nopening_random_plies = 11",
                "selfplay.opening_random_plies",
            ),
            (
                "[training]\nlr_schedule = [[0, 0.1]]",
                "training.lr_schedule",
            ),
            (
                "[training]\nlr_schedule = [[5, 0.1], [5, 0.01]]",
                "training.lr_schedule",
            ),
            (
                "[training]\nlr_schedule = [[5, -0.1]]",
                "training.lr_schedule",
            ),
            (
                "[training]\nwindow_min_positions = 100\nwindow_max_positions = 99",
                "training.window_max_positions",
            ),
            ("[evaluation]\nbaseline = \" \"", "evaluation.baseline"),
            (
                "[evaluation]\nmatches = 0\ngating = true",
                "evaluation.gating",
            ),
            ("[evaluation.sprt]\nelo1 = 40", "evaluation.sprt"),
        ];
        for (text, key) in cases {
            let e = err(text);
            assert!(
                e.starts_with(&format!("configs/x.toml: {key}: ")),
                "{text:?} gave {e:?}"
            );
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn retired_keys_are_refused_by_name_with_the_commit_that_runs_them() {
        for &(key, commit) in RETIRED_KEYS {
            let (section, field) = key.split_once('.').unwrap();
            let e = err(&format!("[{section}]\n{field} = true\n"));
            assert_eq!(
                e,
                format!(
                    "configs/x.toml: {key} at line 2, column 1 is retired: its experiment was \
                     not kept (configs/ablations/README.md); commit {commit} can reproduce it"
                )
            );
        }
    }

    #[test]
    fn a_run_copy_naming_retired_keys_turned_off_reads_without_them() {
        let copy = |body: &str| {
            let label = "# brandubh run configuration, fnv1a64 ";
            let sum = run_copy_checksum(label, body);
            format!("{label}{sum:016x}\n{body}")
        };
        // What every run's copy held before resignation was retired.
        let old = "name = \"old\"\n[selfplay]\nply_cap = 40\nresign_threshold = 0.0\n\
                   resign_consecutive = 2\nresign_check_fraction = 0.1\n\
                   [training]\nbatch_size = 8\n";
        let c = RunConfig::from_run_copy_str(&copy(old), "run/config.toml").unwrap();
        assert_eq!((c.name.as_str(), c.selfplay.ply_cap), ("old", 40));
        assert_eq!(c.training.batch_size, 8);
        // A run that resigned is not silently trained without it.
        let on = "[selfplay]\nresign_threshold = 0.9\nresign_consecutive = 2\n";
        let e = RunConfig::from_run_copy_str(&copy(on), "run/config.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("run/config.toml: selfplay.resign_threshold") && e.contains("cf0dd85"),
            "{e}"
        );
        let e = RunConfig::from_run_copy_str(&copy("[model]\nescape_planes = true\n"), "c")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("model.escape_planes") && e.contains("retired"),
            "{e}"
        );
    }

    /// Every range of [`RANGES`] refuses the values just outside it, naming the key.
    #[test]
    fn every_range_refuses_the_values_just_outside_it() {
        for &(key, range) in RANGES {
            let outside = match range {
                Int(lo, hi) => vec![(lo - 1).to_string(), (hi + 1).to_string()],
                Float(lo, hi) => {
                    let below = match lo {
                        Open(l) => l,
                        Closed(l) => l - 1e-6,
                    };
                    let above = match hi {
                        Open(h) => h,
                        Closed(h) => h + 1e-6 * h.abs().max(1.0),
                    };
                    vec![format!("{below:?}"), format!("{above:?}"), "nan".to_owned()]
                }
            };
            for value in outside {
                let text = match key.split_once('.') {
                    Some((section, field)) => format!("[{section}]\n{field} = {value}\n"),
                    None => format!("{key} = {value}\n"),
                };
                let e = err(&text);
                assert!(
                    e.starts_with(&format!("configs/x.toml: {key}: ")),
                    "{text:?} gave {e:?}"
                );
                assert!(!e.contains('\n'), "{e}");
            }
            // The range's own bounds are inside when closed.
            let inside = match range {
                Int(lo, _) => Some(lo.to_string()),
                Float(Closed(l), _) => Some(format!("{l:?}")),
                Float(Open(_), Closed(h)) => Some(format!("{h:?}")),
                Float(Open(_), Open(_)) => None,
            };
            if let Some(value) = inside {
                let (section, field) = key.split_once('.').unwrap_or(("", key));
                let text = if section.is_empty() {
                    format!("{field} = {value}\n")
                } else {
                    format!("[{section}]\n{field} = {value}\n")
                };
                // Another key may then be out of its relation (e.g. cheap_simulations),
                // but never this one for its range.
                if let Err(e) = RunConfig::from_toml_str(&text, "x.toml") {
                    assert!(!e.to_string().contains("must be between"), "{text:?}: {e}");
                }
            }
        }
    }

    #[test]
    fn toml_round_trip_preserves_everything() {
        let mut c = RunConfig {
            name: "round-trip".into(),
            seed: i64::MAX as u64,
            ..RunConfig::default()
        };
        c.search.algorithm = brandubh_search::Algorithm::Puct;
        c.selfplay.opening_random_plies = Some(4);
        c.training.optimizer = Optimizer::Sgd;
        c.training.lr_schedule = vec![(10, 0.01), (20, 0.001)];
        c.training.max_sample_reuse = Some(4.0);
        c.training.moves_left_loss_weight = Some(0.5);
        c.evaluation.baseline = "random".into();
        c.evaluation.gating = true;
        c.evaluation.sprt = Some(SprtConfig {
            elo0: -5.5,
            elo1: 45.0,
            alpha: 0.01,
            beta: 0.1,
            max_matches: 300,
        });
        let text = c.to_toml_string().unwrap();
        assert_eq!(RunConfig::from_toml_str(&text, "rt.toml").unwrap(), c);
        let d = RunConfig::default();
        assert_eq!(
            RunConfig::from_toml_str(&d.to_toml_string().unwrap(), "rt.toml").unwrap(),
            d
        );
    }

    #[test]
    fn seed_beyond_toml_integers_is_rejected_not_panicking() {
        let c = RunConfig {
            seed: u64::MAX,
            ..RunConfig::default()
        };
        let e = c.to_toml_string().unwrap_err().to_string();
        assert!(e.starts_with("seed: must be between 0 and "), "{e}");
    }

    #[test]
    fn changed_keys_lists_differences() {
        let a = RunConfig::default();
        let mut b = a.clone();
        assert!(a.changed_keys(&b).is_empty());
        b.search.simulations = 8;
        b.training.max_sample_reuse = Some(2.0);
        assert_eq!(
            a.changed_keys(&b),
            ["search.simulations", "training.max_sample_reuse"]
        );
    }

    #[test]
    fn window_grows_between_its_bounds() {
        let t = TrainingConfig::default();
        assert_eq!(t.window_size(0), 10_000);
        assert_eq!(t.window_size(1_000), 10_000);
        // 4 · 1e6^0.75 = 126491
        assert_eq!(t.window_size(1_000_000), 126_491);
        assert_eq!(t.window_size(u64::MAX), 250_000);
        let mut last = 0;
        for n in (0..10_000_000).step_by(99_991) {
            let w = t.window_size(n);
            assert!(w >= last);
            last = w;
        }
    }

    #[test]
    fn learning_rate_steps_at_breakpoints() {
        let t = TrainingConfig {
            learning_rate: 0.01,
            lr_schedule: vec![(10, 0.005), (20, 0.001)],
            ..TrainingConfig::default()
        };
        assert_eq!(t.learning_rate_at(1), 0.01);
        assert_eq!(t.learning_rate_at(9), 0.01);
        assert_eq!(t.learning_rate_at(10), 0.005);
        assert_eq!(t.learning_rate_at(19), 0.005);
        assert_eq!(t.learning_rate_at(1000), 0.001);
    }

    #[test]
    fn value_target_mixes_result_and_root_value() {
        let mut t = TrainingConfig::default();
        // The default trains on the game's result alone.
        assert_eq!(t.value_target(-1.0, 0.8), -1.0);
        assert_eq!(t.value_target(0.0, 0.8), 0.0);
        t.root_value_weight = 0.5;
        assert!((t.value_target(-1.0, 0.6) - -0.2).abs() < 1e-6);
        assert!((t.value_target(1.0, 1.0) - 1.0).abs() < 1e-6);
        t.root_value_weight = 1.0;
        assert_eq!(t.value_target(1.0, -0.25), -0.25);
        let parsed =
            RunConfig::from_toml_str("[training]\nroot_value_weight = 0.25", "x.toml").unwrap();
        assert_eq!(parsed.training.root_value_weight, 0.25);
    }

    #[test]
    fn a_discounted_run_learns_results_discounted_over_the_plies_to_the_end() {
        let sample = |result: f32, plies_to_end: u32| crate::replay::TrainingSample {
            position: brandubh_rules::Position::default(),
            repetitions: 1,
            ply: 0,
            policy: Vec::new(),
            result,
            plies_to_end,
            root_value: 0.5,
            full_search: true,
        };
        // Without a discount (the default) the length of the game does not matter.
        let plain = RunConfig::default();
        assert_eq!(plain.value_target(&sample(1.0, 1)), 1.0);
        assert_eq!(plain.value_target(&sample(-1.0, 40)), -1.0);
        let toml = "[search]\nvalue_discount = 0.9\n[training]\nroot_value_weight = 0.5";
        let config = RunConfig::from_toml_str(toml, "x.toml").unwrap();
        assert_eq!(config.search.value_discount, 0.9);
        let close = |a: f32, b: f32| (a - b).abs() < 1e-6;
        // z·0.9^plies, averaged with the root value 0.5.
        assert!(close(
            config.value_target(&sample(1.0, 1)),
            (0.9 + 0.5) / 2.0
        ));
        assert!(close(
            config.value_target(&sample(-1.0, 3)),
            (-0.729 + 0.5) / 2.0
        ));
        assert!(close(config.value_target(&sample(0.0, 3)), 0.25));
        // A faster win is a larger target, a slower loss a smaller penalty.
        assert!(config.value_target(&sample(1.0, 5)) > config.value_target(&sample(1.0, 9)));
        assert!(config.value_target(&sample(-1.0, 9)) > config.value_target(&sample(-1.0, 5)));
    }

    #[test]
    fn sample_reuse_caps_steps() {
        let mut t = TrainingConfig {
            batch_size: 100,
            steps_per_iteration: 50,
            ..TrainingConfig::default()
        };
        assert_eq!(t.steps_for(10), 50);
        t.max_sample_reuse = Some(2.0);
        assert_eq!(t.steps_for(1_000), 20);
        assert_eq!(t.steps_for(1), 1);
        assert_eq!(t.steps_for(0), 0);
        assert_eq!(t.steps_for(1_000_000), 50);
    }

    #[test]
    fn missing_file_is_named() {
        let e = RunConfig::from_file("configs/does-not-exist.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("configs/does-not-exist.toml: cannot read: "),
            "{e}"
        );
    }

    #[test]
    fn symmetry_key_is_read_from_selfplay_and_from_its_old_place_in_search() {
        let c =
            RunConfig::from_toml_str("[selfplay]\nsymmetry_at_inference = false\n", "a").unwrap();
        assert!(!c.selfplay.symmetry_at_inference);
        let old = "[search]\nsimulations = 8\nsymmetry_at_inference = false\n";
        let c = RunConfig::from_toml_str(old, "old.toml").unwrap();
        assert!(!c.selfplay.symmetry_at_inference);
        assert_eq!(c.search.simulations, 8);
        let both =
            "[search]\nsymmetry_at_inference = false\n[selfplay]\nsymmetry_at_inference = true\n";
        assert_eq!(
            err(both),
            "configs/x.toml: search.symmetry_at_inference: is also given as \
             selfplay.symmetry_at_inference; keep only that one"
        );
        // Other errors in such a file still name the key.
        let e = err("[search]\nsymmetry_at_inference = true\nsimulations = \"x\"\n");
        assert!(
            e.starts_with("configs/x.toml: search.simulations: invalid type"),
            "{e}"
        );
        let e = err("[search]\nsymmetry_at_inference = true\nsimulatons = 3\n");
        assert!(e.ends_with("(did you mean search.simulations?)"), "{e}");
    }

    /// Writes `files` (name, text) into a new directory.
    fn config_dir(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        dir
    }

    #[test]
    fn a_config_extends_another_key_by_key() {
        let dir = config_dir(&[
            (
                "base.toml",
                "name = \"base\"\nseed = 3\n[search]\nsimulations = 40\nc_puct = 2.0\n\
                 [training]\nlr_schedule = [[5, 0.001], [9, 0.0001]]\n",
            ),
            (
                "mid.toml",
                "extends = \"base.toml\"\nname = \"mid\"\n[search]\nsimulations = 50\n",
            ),
        ]);
        // A path is relative to the file that names it.
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(
            dir.path().join("sub/leaf.toml"),
            "extends = \"../mid.toml\"\nname = \"leaf\"\n[training]\nlr_schedule = [[7, 0.002]]\n",
        )
        .unwrap();
        let leaf = RunConfig::from_file(dir.path().join("sub/leaf.toml")).unwrap();
        let mut want = RunConfig {
            name: "leaf".into(),
            seed: 3,
            ..RunConfig::default()
        };
        want.search.simulations = 50; // mid's, over base's 40
        want.search.c_puct = 2.0; // base's, kept by mid's [search]
        want.training.lr_schedule = vec![(7, 0.002)]; // an array is replaced whole
        assert_eq!(leaf, want);
        // A run's copy is the whole configuration, and reads back without the other files.
        let copy = leaf.to_run_copy().unwrap();
        assert!(!copy.contains(EXTENDS), "{copy}");
        let copy_path = dir.path().join("copy.toml");
        std::fs::write(&copy_path, copy).unwrap();
        assert_eq!(RunConfig::from_run_copy(&copy_path).unwrap(), want);
    }

    #[test]
    fn bad_extends_are_one_line_errors_naming_the_file() {
        let dir = config_dir(&[
            ("a.toml", "extends = \"b.toml\"\nname = \"a\"\n"),
            ("b.toml", "extends = \"a.toml\"\n"),
            ("self.toml", "extends = \"self.toml\"\n"),
            ("missing.toml", "extends = \"nowhere.toml\"\n"),
            ("number.toml", "extends = 3\n"),
            (
                "typo.toml",
                "extends = \"good.toml\"\n[search]\nsimulatons = 3\n",
            ),
            ("good.toml", "name = \"good\"\n"),
            ("bad-base.toml", "extends = \"bad.toml\"\n"),
            ("bad.toml", "[search]\nsimulations = 0\n"),
            (
                "range.toml",
                "extends = \"good.toml\"\n[search]\nsimulations = 0\n",
            ),
        ]);
        let err = |name: &str| {
            let e = RunConfig::from_file(dir.path().join(name))
                .unwrap_err()
                .to_string();
            assert!(!e.contains('\n'), "{e}");
            e
        };
        let file = |name: &str| dir.path().join(name).display().to_string();
        for cyclic in ["a.toml", "self.toml"] {
            let e = err(cyclic);
            assert!(e.contains("extends:") && e.contains("a cycle"), "{e}");
        }
        let e = err("missing.toml");
        assert!(
            e.starts_with(&format!("{}: extends: cannot read", file("missing.toml")))
                && e.contains("nowhere.toml"),
            "{e}"
        );
        assert!(err("number.toml").contains("extends: must be the path"));
        let e = err("typo.toml");
        assert!(
            e.starts_with(&file("typo.toml"))
                && e.contains("unknown key search.simulatons")
                && e.ends_with("(did you mean search.simulations?)"),
            "{e}"
        );
        // Ranges are checked once merged, and the error names the file given.
        let e = err("bad-base.toml");
        assert!(
            e.starts_with(&format!("{}: search.simulations", file("bad-base.toml"))),
            "{e}"
        );
        let e = err("range.toml");
        assert!(
            e.starts_with(&format!("{}: search.simulations", file("range.toml"))),
            "{e}"
        );
        // Text that is not a file has nothing to be relative to.
        let e = RunConfig::from_toml_str("extends = \"good.toml\"\n", "t.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("t.toml: extends: only a configuration file"),
            "{e}"
        );
    }

    #[test]
    fn a_chain_of_extends_is_bounded() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("c0.toml"), "name = \"c0\"\n").unwrap();
        for i in 1..=MAX_EXTENDS {
            let text = format!("extends = \"c{}.toml\"\nseed = {i}\n", i - 1);
            std::fs::write(dir.path().join(format!("c{i}.toml")), text).unwrap();
        }
        // c7 → … → c0 is eight files; c8 would be the ninth.
        let seven = RunConfig::from_file(dir.path().join(format!("c{}.toml", MAX_EXTENDS - 1)));
        assert_eq!(seven.unwrap().seed, (MAX_EXTENDS - 1) as u64);
        let e = RunConfig::from_file(dir.path().join(format!("c{MAX_EXTENDS}.toml")))
            .unwrap_err()
            .to_string();
        assert!(e.contains("more than 8 files down a chain"), "{e}");
    }
}
