//! [`SearchSettings`]: the one description of "which search, with which constants" that a
//! run configuration (`[search]`), an agent file's metadata, an agent spec and the command
//! line all use. It is flat and serialisable (with the `serde` feature) so that every file
//! spells it the same way; [`SearchSettings::search_config`] turns it into the
//! [`SearchConfig`] a [`crate::Search`] runs with.

use std::fmt;
use std::str::FromStr;

use crate::config::{AlgorithmConfig, Fpu, GumbelConfig, PuctConfig, SearchConfig, SettingError};

/// Most simulations per move any player, agent or run may ask for.
pub const MAX_SIMULATIONS: u32 = 1_000_000;

/// Which tree search runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "lowercase")
)]
pub enum Algorithm {
    /// Gumbel AlphaZero: Gumbel top-k sampling of candidates, sequential halving, and the
    /// completed-Q improved policy as target (`"gumbel"`). Strong with few simulations.
    Gumbel,
    /// AlphaZero PUCT with Dirichlet noise at the root and visit counts as target
    /// (`"puct"`).
    Puct,
}

impl Algorithm {
    /// Every algorithm, in the order they are listed in help texts.
    pub const ALL: [Algorithm; 2] = [Algorithm::Gumbel, Algorithm::Puct];

    /// `"gumbel"` or `"puct"`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Algorithm::Gumbel => "gumbel",
            Algorithm::Puct => "puct",
        }
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not an [`Algorithm`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownAlgorithm(pub String);

impl fmt::Display for UnknownAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown search algorithm {:?}; expected gumbel or puct",
            self.0
        )
    }
}

impl std::error::Error for UnknownAlgorithm {}

impl FromStr for Algorithm {
    type Err = UnknownAlgorithm;

    fn from_str(s: &str) -> Result<Algorithm, UnknownAlgorithm> {
        Algorithm::ALL
            .into_iter()
            .find(|a| a.name() == s)
            .ok_or_else(|| UnknownAlgorithm(s.to_owned()))
    }
}

/// The search a player plays with or a run trains with: the algorithm, simulations per
/// move and the constants of both algorithms (only the chosen one's are used).
///
/// As TOML (a run's `[search]` section) or JSON (an agent file's `"search"`), every key is
/// optional and defaults as documented; unknown keys are errors.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(deny_unknown_fields, default)
)]
pub struct SearchSettings {
    /// `"gumbel"` or `"puct"`. Default `"gumbel"`.
    pub algorithm: Algorithm,
    /// Simulations (network evaluations) of a full search, 1 to [`MAX_SIMULATIONS`].
    /// Default `64`.
    pub simulations: u32,
    /// PUCT exploration constant (also used below the root by Gumbel). Range (0, 100].
    /// Default `1.25`.
    pub c_puct: f64,
    /// First-play urgency: an unvisited child is valued at the parent's value minus this.
    /// 0 keeps exploring when every move tried so far looks lost; 0.2–0.4 (Lc0, KataGo)
    /// narrows the search once the priors deserve trust. Range [0, 2]. Default `0.0`.
    pub fpu_reduction: f64,
    /// Concentration of the Dirichlet noise mixed into the root priors (PUCT self-play
    /// only; play never adds noise). Range (0, 10]. Default `0.3` (about 10 / typical
    /// number of legal moves).
    pub dirichlet_alpha: f64,
    /// Weight of the Dirichlet noise in the root priors (PUCT self-play only); 0 disables
    /// it. Range [0, 1]. Default `0.25`.
    pub dirichlet_fraction: f64,
    /// Gumbel: number of root candidates m sampled with Gumbel top-k (capped by the number
    /// of legal moves). Range 1–96. Default `16`.
    pub gumbel_candidates: u32,
    /// Gumbel: c_visit of the σ transform of completed Q-values. Range (0, 10000].
    /// Default `50`.
    pub gumbel_c_visit: f64,
    /// Gumbel: c_scale of the σ transform of completed Q-values. Range (0, 100]. Default
    /// `1.0`.
    pub gumbel_c_scale: f64,
    /// MCTS-Solver: prove wins and losses inside the tree (see
    /// [`crate::SearchConfig::solver`]). `true` or `false` for every search; unset (the
    /// default) is on in play ([`SearchSettings::play_config`]) and off in self-play
    /// ([`SearchSettings::search_config`]), as measured in docs/research/ablations.md: it makes
    /// play stronger, and early self-play games so one-sided that Black learns less.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub solver: Option<bool>,
    /// Per-ply discount γ of values: a run trains its value head on the game's result
    /// discounted over the plies to the end (`z·γ^plies`,
    /// [`SearchSettings::discount_over`]), and every search with these settings discounts
    /// backed-up values by γ per ply ([`crate::SearchConfig::discount`]), so that the
    /// network's values and the tree's agree and a faster win (or a slower loss) is worth
    /// more. An agent file keeps the value its network was trained with. Range
    /// [0.5, 1]. Default `1` (no discount; not written to files then).
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "is_one"))]
    pub value_discount: f64,
    /// Exact proofs of the root moves before each search, this many plies deep
    /// ([`crate::SearchConfig::root_proof_plies`]). Range 0 to
    /// [`crate::MAX_ROOT_PROOF_PLIES`]. Default `0`: off (not written to files then).
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "is_zero"))]
    pub root_proof_plies: u32,
    /// Exact verification of the move each search would play, this many plies deep
    /// ([`crate::SearchConfig::verify_plies`]); it needs the solver. Range 0 to
    /// [`crate::MAX_ROOT_PROOF_PLIES`]. Default `0`: off (not written to files then).
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "is_zero"))]
    pub verify_plies: u32,
}

#[cfg(feature = "serde")]
#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's skip_serializing_if passes a reference"
)]
fn is_zero(v: &u32) -> bool {
    *v == 0
}

#[cfg(feature = "serde")]
#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's skip_serializing_if passes a reference"
)]
fn is_one(v: &f64) -> bool {
    *v == 1.0
}

impl Default for SearchSettings {
    /// Gumbel with 64 simulations and the constants of [`PuctConfig::default`] and
    /// [`GumbelConfig::default`].
    fn default() -> Self {
        let puct = PuctConfig::default();
        let gumbel = GumbelConfig::default();
        SearchSettings {
            algorithm: Algorithm::Gumbel,
            simulations: 64,
            c_puct: f64::from(puct.c_puct),
            fpu_reduction: match puct.fpu {
                Fpu::Reduction(r) => f64::from(r),
                Fpu::Absolute(_) => 0.0,
            },
            dirichlet_alpha: f64::from(puct.dirichlet_alpha),
            dirichlet_fraction: f64::from(puct.dirichlet_fraction),
            gumbel_candidates: gumbel.considered_moves,
            gumbel_c_visit: f64::from(gumbel.c_visit),
            gumbel_c_scale: f64::from(gumbel.c_scale),
            solver: None,
            value_discount: 1.0,
            root_proof_plies: 0,
            verify_plies: 0,
        }
    }
}

impl SearchSettings {
    /// `algorithm` with `simulations` and the default constants.
    #[must_use]
    pub fn new(algorithm: Algorithm, simulations: u32) -> SearchSettings {
        SearchSettings {
            algorithm,
            simulations,
            ..SearchSettings::default()
        }
    }

    /// The same settings with another number of simulations.
    #[must_use]
    pub fn with_simulations(mut self, simulations: u32) -> SearchSettings {
        self.simulations = simulations;
        self
    }

    /// The same settings with another algorithm (its constants unchanged).
    #[must_use]
    pub fn with_algorithm(mut self, algorithm: Algorithm) -> SearchSettings {
        self.algorithm = algorithm;
        self
    }

    /// Checks every setting against its documented range; the error names the first bad
    /// one by its key (e.g. `c_puct`).
    pub fn validate(&self) -> Result<(), SettingError> {
        use Range::{Above, AtLeast};
        let sims = self.simulations;
        if !(1..=MAX_SIMULATIONS).contains(&sims) {
            let expected = if sims < 1 {
                "at least 1".to_owned()
            } else {
                format!("at most {MAX_SIMULATIONS}")
            };
            return Err(SettingError {
                field: "simulations",
                value: sims.to_string(),
                expected,
            });
        }
        range("c_puct", self.c_puct, Above(0.0), 100.0)?;
        range("fpu_reduction", self.fpu_reduction, AtLeast(0.0), 2.0)?;
        range("dirichlet_alpha", self.dirichlet_alpha, Above(0.0), 10.0)?;
        range(
            "dirichlet_fraction",
            self.dirichlet_fraction,
            AtLeast(0.0),
            1.0,
        )?;
        let most_moves = brandubh_rules::MAX_MOVES as f64;
        range(
            "gumbel_candidates",
            self.gumbel_candidates,
            AtLeast(1.0),
            most_moves,
        )?;
        range("gumbel_c_visit", self.gumbel_c_visit, Above(0.0), 10_000.0)?;
        range("gumbel_c_scale", self.gumbel_c_scale, Above(0.0), 100.0)?;
        range("value_discount", self.value_discount, AtLeast(0.5), 1.0)?;
        range(
            "root_proof_plies",
            self.root_proof_plies,
            AtLeast(0.0),
            f64::from(crate::MAX_ROOT_PROOF_PLIES),
        )?;
        range(
            "verify_plies",
            self.verify_plies,
            AtLeast(0.0),
            f64::from(crate::MAX_ROOT_PROOF_PLIES),
        )
    }

    /// What a result `plies` plies away is worth now: `γ^plies` with
    /// γ = [`SearchSettings::value_discount`] (1 without a discount). Training multiplies
    /// a game's result by it to get the value target of a position that many plies before
    /// the end.
    #[must_use]
    pub fn discount_over(&self, plies: u32) -> f32 {
        crate::config::discount_over(self.value_discount as f32, plies)
    }

    /// The search these settings describe, checked, with the given ply cap (`None` in play,
    /// rule 9). The move choice is the search's best move (a self-play driver applies its
    /// own temperature schedule); the root noise is on (Dirichlet noise as set, for PUCT;
    /// Gumbel noise, for Gumbel): call [`SearchConfig::without_noise`] for play. The
    /// solver is on only when [`SearchSettings::solver`] says so.
    pub fn search_config(&self, ply_cap: Option<u32>) -> Result<SearchConfig, SettingError> {
        self.config(ply_cap, self.solver.unwrap_or(false))
    }

    /// The search for evaluation play: [`SearchSettings::search_config`] without noise,
    /// with the solver unless [`SearchSettings::solver`] turns it off.
    pub fn play_config(&self, ply_cap: Option<u32>) -> Result<SearchConfig, SettingError> {
        Ok(self
            .config(ply_cap, self.solver.unwrap_or(true))?
            .without_noise())
    }

    /// The checked search of these settings, with or without the solver.
    fn config(&self, ply_cap: Option<u32>, solver: bool) -> Result<SearchConfig, SettingError> {
        self.validate()?;
        let algorithm = match self.algorithm {
            Algorithm::Puct => AlgorithmConfig::Puct(PuctConfig {
                c_puct: self.c_puct as f32,
                fpu: Fpu::Reduction(self.fpu_reduction as f32),
                dirichlet_alpha: self.dirichlet_alpha as f32,
                dirichlet_fraction: self.dirichlet_fraction as f32,
                temperature: 1.0,
                temperature_plies: 0,
                final_temperature: 0.0,
            }),
            Algorithm::Gumbel => AlgorithmConfig::Gumbel(GumbelConfig {
                considered_moves: self.gumbel_candidates,
                c_visit: self.gumbel_c_visit as f32,
                c_scale: self.gumbel_c_scale as f32,
                ..GumbelConfig::default()
            }),
        };
        let config = SearchConfig {
            simulations: self.simulations,
            algorithm,
            ply_cap,
            solver,
            discount: self.value_discount as f32,
            root_proof_plies: self.root_proof_plies,
            verify_plies: self.verify_plies,
        };
        config.validate()?;
        Ok(config)
    }
}

/// The lower bound of a range (the upper bound is always inclusive).
#[derive(Clone, Copy)]
enum Range {
    /// `value > bound`.
    Above(f64),
    /// `value >= bound`.
    AtLeast(f64),
}

fn range<T: Copy + Into<f64> + fmt::Display>(
    field: &'static str,
    value: T,
    low: Range,
    high: f64,
) -> Result<(), SettingError> {
    let v: f64 = value.into();
    let (ok_low, expected) = match low {
        Range::Above(l) => (
            v > l,
            format!("a number greater than {l} and at most {high}"),
        ),
        Range::AtLeast(l) => (v >= l, format!("a number between {l} and {high}")),
    };
    if v.is_finite() && ok_low && v <= high {
        Ok(())
    } else {
        Err(SettingError {
            field,
            value: value.to_string(),
            expected,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_come_from_the_runtime_configs_and_are_valid() {
        let s = SearchSettings::default();
        s.validate().unwrap();
        assert_eq!(s.algorithm, Algorithm::Gumbel);
        assert_eq!(s.c_puct, f64::from(PuctConfig::default().c_puct));
        assert_eq!(
            s.gumbel_candidates,
            GumbelConfig::default().considered_moves
        );
    }

    #[test]
    fn the_solver_is_on_in_play_and_off_in_self_play_unless_set() {
        let auto = SearchSettings::default();
        assert_eq!(auto.solver, None);
        assert!(auto.play_config(None).unwrap().solver);
        assert!(!auto.search_config(Some(100)).unwrap().solver);
        for set in [true, false] {
            let s = SearchSettings {
                solver: Some(set),
                ..SearchSettings::default()
            };
            assert_eq!(s.play_config(None).unwrap().solver, set);
            assert_eq!(s.search_config(Some(100)).unwrap().solver, set);
        }
    }

    #[test]
    fn settings_become_the_search_they_describe() {
        let s = SearchSettings {
            c_puct: 2.5,
            fpu_reduction: 0.25,
            dirichlet_fraction: 0.5,
            ..SearchSettings::new(Algorithm::Puct, 100)
        };
        let c = s.search_config(Some(40)).unwrap();
        assert_eq!((c.simulations, c.ply_cap), (100, Some(40)));
        assert_eq!((c.root_proof_plies, c.verify_plies), (0, 0));
        let proofs = SearchSettings {
            root_proof_plies: 5,
            verify_plies: 9,
            ..s.clone()
        };
        let pc = proofs.play_config(None).unwrap();
        assert_eq!((pc.root_proof_plies, pc.verify_plies), (5, 9));
        let AlgorithmConfig::Puct(p) = &c.algorithm else {
            panic!("{c:?}")
        };
        assert_eq!(
            (p.c_puct, p.fpu, p.dirichlet_fraction),
            (2.5, Fpu::Reduction(0.25), 0.5)
        );
        let AlgorithmConfig::Puct(p) = s.play_config(None).unwrap().algorithm else {
            panic!()
        };
        assert_eq!((p.dirichlet_fraction, p.temperature_plies), (0.0, 0));

        let g = SearchSettings {
            gumbel_c_scale: 0.1,
            gumbel_candidates: 8,
            ..SearchSettings::new(Algorithm::Gumbel, 32)
        };
        let AlgorithmConfig::Gumbel(cfg) = g.play_config(None).unwrap().algorithm else {
            panic!()
        };
        assert_eq!(
            (cfg.c_scale, cfg.considered_moves, cfg.gumbel_scale),
            (0.1, 8, 0.0)
        );
    }

    #[test]
    fn out_of_range_settings_name_the_key() {
        let bad = |s: SearchSettings| s.validate().unwrap_err().field;
        let d = SearchSettings::default;
        assert_eq!(bad(d().with_simulations(0)), "simulations");
        assert_eq!(
            bad(d().with_simulations(MAX_SIMULATIONS + 1)),
            "simulations"
        );
        assert_eq!(bad(SearchSettings { c_puct: 0.0, ..d() }), "c_puct");
        assert_eq!(
            bad(SearchSettings {
                c_puct: f64::NAN,
                ..d()
            }),
            "c_puct"
        );
        assert_eq!(
            bad(SearchSettings {
                fpu_reduction: -0.1,
                ..d()
            }),
            "fpu_reduction"
        );
        assert_eq!(
            bad(SearchSettings {
                gumbel_candidates: 97,
                ..d()
            }),
            "gumbel_candidates"
        );
        assert_eq!(
            bad(SearchSettings {
                gumbel_c_scale: f64::INFINITY,
                ..d()
            }),
            "gumbel_c_scale"
        );
        for discount in [0.49, 1.001, f64::NAN] {
            assert_eq!(
                bad(SearchSettings {
                    value_discount: discount,
                    ..d()
                }),
                "value_discount"
            );
        }
        for plies in [16, 100] {
            assert_eq!(
                bad(SearchSettings {
                    root_proof_plies: plies,
                    ..d()
                }),
                "root_proof_plies"
            );
            assert_eq!(
                bad(SearchSettings {
                    verify_plies: plies,
                    ..d()
                }),
                "verify_plies"
            );
        }
        let e = SearchSettings { c_puct: 0.0, ..d() }
            .search_config(None)
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid search setting c_puct = 0: expected a number greater than 0 and at most 100"
        );
    }

    #[test]
    fn the_value_discount_reaches_every_search_and_the_training_target() {
        let plain = SearchSettings::default();
        assert_eq!(plain.discount_over(30), 1.0);
        assert_eq!(plain.search_config(None).unwrap().discount, 1.0);
        let s = SearchSettings {
            value_discount: 0.98,
            ..SearchSettings::default()
        };
        assert_eq!(s.search_config(Some(100)).unwrap().discount, 0.98);
        assert_eq!(s.play_config(None).unwrap().discount, 0.98);
        assert!((s.discount_over(2) - 0.9604).abs() < 1e-6);
        assert_eq!(s.discount_over(0), 1.0);
        assert!(s.discount_over(u32::MAX) >= 0.0);
    }

    #[test]
    fn algorithm_names_round_trip() {
        for a in Algorithm::ALL {
            assert_eq!(a.name().parse::<Algorithm>(), Ok(a));
        }
        assert_eq!(
            "gumble".parse::<Algorithm>().unwrap_err().to_string(),
            "unknown search algorithm \"gumble\"; expected gumbel or puct"
        );
    }
}
