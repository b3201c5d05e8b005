//! The runtime configuration of one search: [`SearchConfig`] chooses between PUCT and
//! Gumbel AlphaZero through [`AlgorithmConfig`], and [`SearchConfig::validate`] turns bad
//! values into a [`SettingError`] naming the field. Users, files and the command line
//! describe a search with [`crate::SearchSettings`], which becomes a [`SearchConfig`].

use std::fmt;

/// Everything a [`crate::Search`] needs to know besides the game and the seed.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchConfig {
    /// Simulations per move (per root), at least 1. The evaluation of a fresh root is not a
    /// simulation: each simulation adds exactly one visit to one root move.
    pub simulations: u32,
    /// PUCT or Gumbel, with the settings of each.
    pub algorithm: AlgorithmConfig,
    /// A game whose ply count (counted from the game's start) reaches the cap inside the
    /// tree is a terminal node worth 0 ("unfinished"). `None`: no cap.
    pub ply_cap: Option<u32>,
    /// MCTS-Solver ([`crate::Proven`]): prove wins and losses inside the tree, search
    /// proven nodes no further, play the fastest proven win and never a proven loss while
    /// another move is not proven lost. Default on.
    pub solver: bool,
    /// Per-ply discount γ of values backed up the tree, in (0, 1]: a value reaches the
    /// node a ply above multiplied by γ (and negated), and a proof of a result `k` plies
    /// away is worth `γ^k` of it, so that a faster win and a slower loss are worth more.
    /// It matches a network trained on discounted results
    /// ([`crate::SearchSettings::value_discount`]). Default 1: no discount.
    pub discount: f32,
    /// Exact proofs at the root: before each search, every root move is
    /// checked with [`crate::forced_win`] for a forced win of the opponent within this
    /// many plies after it, and for a forced win of the side to move within one ply
    /// fewer, each with at most [`ROOT_PROOF_NODES`] positions; a move so proven is a
    /// proven loss or win (never played while another move is not proven lost, and out
    /// of the policy target; the fastest proven win is played). Lines longer than the
    /// tree is deep, which the network's priors can hide (docs/research/ablations.md, "The
    /// play-time search"). They do not need the solver: without it, the root's moves are
    /// the only ones proven. Under a deadline the proofs end at it. 0: off (default); at most [`MAX_ROOT_PROOF_PLIES`].
    pub root_proof_plies: u32,
    /// Exact verification of the chosen move, with the solver: after the search, the move
    /// it would play is checked with [`crate::forced_win`] for a forced win of the opponent
    /// within this many plies after it; a move so proven is marked a proven loss and the
    /// next choice is checked, until one is not proven lost or [`VERIFY_NODES`] positions
    /// (for all the checks of one search) are spent. Deeper than the root proofs of every
    /// move can afford, because only the moves that would be played are checked. Under a
    /// deadline ([`crate::Search::run_until`]) the simulations stop at three quarters of
    /// the time left and the checks end at the deadline. 0: off (default); at most
    /// [`MAX_ROOT_PROOF_PLIES`].
    pub verify_plies: u32,
}

/// Most positions one root move's exact proof ([`SearchConfig::root_proof_plies`]) may
/// visit, per side.
pub const ROOT_PROOF_NODES: u64 = 200_000;
/// Deepest exact proof at the root, in plies.
pub const MAX_ROOT_PROOF_PLIES: u32 = 15;
/// Most positions the verification of the chosen move ([`SearchConfig::verify_plies`]) may
/// visit in one search, all its checks together: about half a second on one core.
pub const VERIFY_NODES: u64 = 1_000_000;

impl Default for SearchConfig {
    /// 200 simulations of PUCT with self-play defaults, no ply cap.
    fn default() -> Self {
        SearchConfig::puct(200)
    }
}

impl SearchConfig {
    /// A Gumbel AlphaZero search with default settings and this many simulations.
    #[must_use]
    pub fn gumbel(simulations: u32) -> SearchConfig {
        SearchConfig::with(
            simulations,
            AlgorithmConfig::Gumbel(GumbelConfig::default()),
        )
    }

    /// A PUCT search with default settings and this many simulations.
    #[must_use]
    pub fn puct(simulations: u32) -> SearchConfig {
        SearchConfig::with(simulations, AlgorithmConfig::Puct(PuctConfig::default()))
    }

    /// `algorithm` with this many simulations, the solver on, no discount, no ply cap and no
    /// exact checks.
    const fn with(simulations: u32, algorithm: AlgorithmConfig) -> SearchConfig {
        SearchConfig {
            simulations,
            algorithm,
            ply_cap: None,
            solver: true,
            discount: 1.0,
            root_proof_plies: 0,
            verify_plies: 0,
        }
    }

    /// The same search without randomness in the move choice, for evaluation play: no
    /// Dirichlet noise and temperature 0 (PUCT), no Gumbel noise (Gumbel).
    #[must_use]
    pub fn without_noise(mut self) -> SearchConfig {
        match &mut self.algorithm {
            AlgorithmConfig::Puct(p) => {
                p.dirichlet_fraction = 0.0;
                p.temperature_plies = 0;
                p.final_temperature = 0.0;
            }
            AlgorithmConfig::Gumbel(g) => g.gumbel_scale = 0.0,
        }
        self
    }

    /// Checks every field; the error names the first bad one.
    pub fn validate(&self) -> Result<(), SettingError> {
        check("simulations", self.simulations, "at least 1", |v| v >= 1.0)?;
        if let Some(cap) = self.ply_cap {
            check("ply_cap", cap, "at least 1", |v| v >= 1.0)?;
        }
        check("discount", self.discount, "a number in (0, 1]", |v| {
            v > 0.0 && v <= 1.0
        })?;
        check("root_proof_plies", self.root_proof_plies, "0 to 15", |v| {
            v <= f64::from(MAX_ROOT_PROOF_PLIES)
        })?;
        check("verify_plies", self.verify_plies, "0 to 15", |v| {
            v <= f64::from(MAX_ROOT_PROOF_PLIES)
        })?;
        match &self.algorithm {
            AlgorithmConfig::Puct(p) => p.validate(),
            AlgorithmConfig::Gumbel(g) => g.validate(),
        }
    }
}

/// Which search runs, with its settings.
#[derive(Clone, Debug, PartialEq)]
pub enum AlgorithmConfig {
    /// AlphaZero: PUCT selection everywhere, Dirichlet noise at the root, move chosen from
    /// the visit counts; the policy target is the visit distribution.
    Puct(PuctConfig),
    /// Gumbel AlphaZero (Danihelka et al. 2022): Gumbel-top-k candidates and sequential
    /// halving at the root, deterministic selection below; the policy target is the improved
    /// policy built from completed Q-values. Learns with 8–32 simulations per move.
    Gumbel(GumbelConfig),
}

/// First-play urgency: the value an unvisited move is given during PUCT selection.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Fpu {
    /// This fixed value, from the view of the player choosing the move.
    Absolute(f32),
    /// The parent's mean value minus this amount.
    Reduction(f32),
}

/// PUCT (AlphaZero) settings.
///
/// A move `a` of a node is chosen by the highest `Q(a) + c_puct · P(a) · √N / (1 + N(a))`
/// where `N` counts the node's visits, `N(a)` and `Q(a)` the move's visits and mean value
/// for the player choosing, and `P(a)` its prior.
#[derive(Clone, Debug, PartialEq)]
pub struct PuctConfig {
    /// Exploration constant `c_puct`, > 0. Default 1.25.
    pub c_puct: f32,
    /// Value of unvisited moves. Default: the parent's value (`Reduction(0.0)`), which keeps
    /// exploring when every move tried so far looks lost; a reduction of 0.2–0.4 (Lc0,
    /// KataGo) narrows the search once the priors deserve trust.
    pub fpu: Fpu,
    /// Dirichlet concentration of the root noise, > 0. Default 0.3 (about 10 / the usual
    /// number of legal moves).
    pub dirichlet_alpha: f32,
    /// Share of the root priors replaced by noise, in [0, 1]; 0 turns noise off.
    /// Default 0.25.
    pub dirichlet_fraction: f32,
    /// Temperature of the move choice while the game's ply count is below
    /// `temperature_plies`: a move is drawn with probability ∝ `N(a)^(1/T)`. Default 1.
    pub temperature: f32,
    /// Number of opening plies played with `temperature`. Default 8.
    pub temperature_plies: u32,
    /// Temperature afterwards; 0 plays the most visited move. Default 0.
    pub final_temperature: f32,
}

impl Default for PuctConfig {
    fn default() -> Self {
        PuctConfig {
            c_puct: 1.25,
            fpu: Fpu::Reduction(0.0),
            dirichlet_alpha: 0.3,
            dirichlet_fraction: 0.25,
            temperature: 1.0,
            temperature_plies: 8,
            final_temperature: 0.0,
        }
    }
}

impl PuctConfig {
    fn validate(&self) -> Result<(), SettingError> {
        check("puct.c_puct", self.c_puct, "a number > 0", |v| v > 0.0)?;
        match self.fpu {
            Fpu::Absolute(v) => check("puct.fpu", v, "a number in [-1, 1]", |v| {
                (-1.0..=1.0).contains(&v)
            })?,
            Fpu::Reduction(v) => check("puct.fpu", v, "a number in [0, 2]", |v| {
                (0.0..=2.0).contains(&v)
            })?,
        }
        check(
            "puct.dirichlet_alpha",
            self.dirichlet_alpha,
            "a number > 0",
            |v| v > 0.0,
        )?;
        check(
            "puct.dirichlet_fraction",
            self.dirichlet_fraction,
            "a number in [0, 1]",
            |v| (0.0..=1.0).contains(&v),
        )?;
        check("puct.temperature", self.temperature, "a number >= 0", |v| {
            v >= 0.0
        })?;
        check(
            "puct.final_temperature",
            self.final_temperature,
            "a number >= 0",
            |v| v >= 0.0,
        )
    }

    /// The temperature of the move choice at this game ply.
    #[must_use]
    pub fn temperature_at(&self, ply: usize) -> f32 {
        if ply < self.temperature_plies as usize {
            self.temperature
        } else {
            self.final_temperature
        }
    }
}

/// Gumbel AlphaZero settings (names as in the paper).
#[derive(Clone, Debug, PartialEq)]
pub struct GumbelConfig {
    /// `m`: how many root moves are sampled (Gumbel-top-k) and then halved, ≥ 1.
    /// Default 16.
    pub considered_moves: u32,
    /// `c_visit` of the value scale `σ(q) = (c_visit + max N) · c_scale · q`, ≥ 0.
    /// Default 50.
    pub c_visit: f32,
    /// `c_scale` of the same, > 0. Default 1 (the paper's board-game setting).
    pub c_scale: f32,
    /// Multiplies the Gumbel noise, ≥ 0: 1 for self-play, 0 for a deterministic search that
    /// takes the `m` moves of highest prior. Default 1.
    pub gumbel_scale: f32,
}

impl Default for GumbelConfig {
    fn default() -> Self {
        GumbelConfig {
            considered_moves: 16,
            c_visit: 50.0,
            c_scale: 1.0,
            gumbel_scale: 1.0,
        }
    }
}

impl GumbelConfig {
    fn validate(&self) -> Result<(), SettingError> {
        check(
            "gumbel.considered_moves",
            self.considered_moves,
            "at least 1",
            |v| v >= 1.0,
        )?;
        check("gumbel.c_visit", self.c_visit, "a number >= 0", |v| {
            v >= 0.0
        })?;
        check("gumbel.c_scale", self.c_scale, "a number > 0", |v| v > 0.0)?;
        check(
            "gumbel.gumbel_scale",
            self.gumbel_scale,
            "a number >= 0",
            |v| v >= 0.0,
        )
    }
}

/// A setting out of its range: which field, its value and what was expected.
#[derive(Clone, Debug, PartialEq)]
pub struct SettingError {
    /// The field, e.g. `"puct.c_puct"`.
    pub field: &'static str,
    /// The value given, as written by `Display`.
    pub value: String,
    /// What the field accepts, e.g. `"a number > 0"`.
    pub expected: String,
}

impl fmt::Display for SettingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid search setting {} = {}: expected {}",
            self.field, self.value, self.expected
        )
    }
}

impl std::error::Error for SettingError {}

/// What a result `plies` plies away is worth now with a per-ply discount `discount`:
/// `discount^plies` (exactly 1 without a discount). The one formula of the discount, for the
/// tree's proofs ([`crate::Tree`]) and training's value targets
/// ([`crate::SearchSettings::discount_over`]) alike.
pub(crate) fn discount_over(discount: f32, plies: u32) -> f32 {
    if discount == 1.0 {
        1.0
    } else {
        discount.powi(plies.min(i32::MAX as u32) as i32)
    }
}

/// `Ok` if `value` is finite and passes `ok`.
pub(crate) fn check<T: Copy + Into<f64> + fmt::Display>(
    field: &'static str,
    value: T,
    expected: &'static str,
    ok: impl FnOnce(f64) -> bool,
) -> Result<(), SettingError> {
    let v: f64 = value.into();
    if v.is_finite() && ok(v) {
        Ok(())
    } else {
        Err(SettingError {
            field,
            value: value.to_string(),
            expected: expected.to_owned(),
        })
    }
}
