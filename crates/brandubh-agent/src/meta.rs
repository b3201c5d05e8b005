//! What an agent file says about its network: [`AgentMeta`] with the model shape, the
//! search it plays best with ([`SearchSettings`]), its training ([`TrainingInfo`]) and
//! where it came from ([`SourceInfo`]). Stored as JSON inside the file.

use std::fmt;

use brandubh_net::NetConfig;
use brandubh_search::{Algorithm, ConfigError, Fpu, GumbelConfig, PuctConfig, SearchConfig};
use serde::{Deserialize, Serialize};

/// The rule set every agent of this build plays (RULES.md).
pub const RULES_NAME: &str = "Brandubh 2.5W";

/// Which tree search an agent plays with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchAlgo {
    /// Gumbel AlphaZero (sequential halving at the root).
    Gumbel,
    /// AlphaZero's PUCT.
    Puct,
}

impl SearchAlgo {
    /// `"gumbel"` or `"puct"`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            SearchAlgo::Gumbel => "gumbel",
            SearchAlgo::Puct => "puct",
        }
    }
}

impl fmt::Display for SearchAlgo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The search an agent plays best with: usually the one it was trained with, with the
/// simulations chosen at export. Play never adds noise (see
/// [`SearchSettings::search_config`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SearchSettings {
    /// PUCT or Gumbel.
    pub algorithm: SearchAlgo,
    /// Simulations per move.
    pub simulations: u32,
    /// PUCT exploration constant.
    pub c_puct: f32,
    /// PUCT first-play urgency: an unvisited move is worth the parent's value minus this.
    pub fpu_reduction: f32,
    /// Gumbel: root moves considered (m).
    pub gumbel_candidates: u32,
    /// Gumbel: `c_visit` of the value transform.
    pub gumbel_c_visit: f32,
    /// Gumbel: `c_scale` of the value transform.
    pub gumbel_c_scale: f32,
}

impl Default for SearchSettings {
    /// Gumbel with 64 simulations and the search crate's default constants (the default of
    /// a training run).
    fn default() -> Self {
        SearchSettings::from_algorithm(SearchAlgo::Gumbel, 64)
    }
}

impl SearchSettings {
    /// `algorithm` with `simulations` and the search crate's default constants.
    #[must_use]
    pub fn from_algorithm(algorithm: SearchAlgo, simulations: u32) -> SearchSettings {
        let puct = PuctConfig::default();
        let gumbel = GumbelConfig::default();
        SearchSettings {
            algorithm,
            simulations,
            c_puct: puct.c_puct,
            fpu_reduction: match puct.fpu {
                Fpu::Reduction(r) => r,
                Fpu::Absolute(_) => 0.0,
            },
            gumbel_candidates: gumbel.considered_moves,
            gumbel_c_visit: gumbel.c_visit,
            gumbel_c_scale: gumbel.c_scale,
        }
    }

    /// The search for play: these settings with `simulations` per move, without noise
    /// (PUCT: no Dirichlet noise, temperature 0; Gumbel: no Gumbel noise) and with the
    /// given ply cap (none in play, rule 9). Checked: a setting out of range is an error
    /// naming it.
    pub fn search_config(
        &self,
        simulations: u32,
        ply_cap: Option<u32>,
    ) -> Result<SearchConfig, ConfigError> {
        let algorithm = match self.algorithm {
            SearchAlgo::Puct => Algorithm::Puct(PuctConfig {
                c_puct: self.c_puct,
                fpu: Fpu::Reduction(self.fpu_reduction),
                ..PuctConfig::default()
            }),
            SearchAlgo::Gumbel => Algorithm::Gumbel(GumbelConfig {
                considered_moves: self.gumbel_candidates,
                c_visit: self.gumbel_c_visit,
                c_scale: self.gumbel_c_scale,
                ..GumbelConfig::default()
            }),
        };
        let config = SearchConfig {
            simulations,
            algorithm,
            ply_cap,
        }
        .without_noise();
        config.validate()?;
        Ok(config)
    }
}

/// How the network was trained, from the checkpoint's metadata. Fields a checkpoint did not
/// record (one saved outside a training run) are `None`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TrainingInfo {
    /// Name of the run's configuration (`name` in its config.toml).
    pub config_name: Option<String>,
    /// The training iteration that produced the checkpoint.
    pub iteration: Option<u32>,
    /// Self-play games behind the network.
    pub games: Option<u64>,
    /// Self-play positions behind the network.
    pub positions: Option<u64>,
    /// Optimizer steps behind the network.
    pub steps: u64,
    /// Wall time of the run up to the checkpoint, in seconds.
    pub wall_time_s: Option<f64>,
    /// When the checkpoint was written, seconds since the Unix epoch.
    pub trained_unix_s: u64,
    /// The same as a UTC date, `YYYY-MM-DDTHH:MM:SSZ`.
    pub trained_date: String,
}

/// Where the network came from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SourceInfo {
    /// The checkpoint exported, as given at export (a path, for the record only: loading
    /// never reads it).
    pub checkpoint: String,
    /// The FNV-1a 64 hash of the checkpoint's weights file, as its metadata recorded it.
    pub weights_fnv1a64: String,
    /// The burn version that wrote the checkpoint.
    pub burn_version: String,
}

/// The metadata block of an agent file (JSON).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgentMeta {
    /// The agent's name (by default the file name without `.agent`).
    pub name: String,
    /// The rule set, always [`RULES_NAME`].
    pub rules: String,
    /// `brandubh_net::encoding::ENCODING_VERSION` of the network's inputs and policy.
    pub encoding_version: u32,
    /// The network's shape.
    pub model: NetConfig,
    /// The search it plays best with.
    pub search: SearchSettings,
    /// Its training.
    pub training: TrainingInfo,
    /// Its origin.
    pub source: SourceInfo,
    /// When the file was written, seconds since the Unix epoch.
    pub exported_unix_s: u64,
    /// The same as a UTC date.
    pub exported_date: String,
    /// The program that wrote it, e.g. `brandubh-agent 0.1.0`.
    pub exported_by: String,
    /// Size of the weights block in bytes.
    pub weights_bytes: u64,
    /// CRC-32 of the weights block, 8 hex digits (also a short identity of the network).
    pub weights_crc32: String,
}

impl AgentMeta {
    /// One line for humans: `brandubh-v1 (C32xN4, gumbel 64 simulations, iteration 12 of
    /// default: 4800 games, 1.3 h)`.
    #[must_use]
    pub fn summary(&self) -> String {
        let mut s = format!(
            "{} (C{}xN{}, {} {} simulations",
            self.name,
            self.model.channels,
            self.model.blocks,
            self.search.algorithm,
            self.search.simulations
        );
        let t = &self.training;
        if let Some(it) = t.iteration {
            s.push_str(&format!(", iteration {it}"));
            if let Some(name) = &t.config_name {
                s.push_str(&format!(" of {name}"));
            }
        }
        let mut parts = Vec::new();
        if let Some(g) = t.games {
            parts.push(format!("{g} games"));
        }
        if let Some(p) = t.positions {
            parts.push(format!("{p} positions"));
        }
        if let Some(w) = t.wall_time_s {
            parts.push(duration_text(w));
        }
        if !parts.is_empty() {
            s.push_str(": ");
            s.push_str(&parts.join(", "));
        }
        s.push(')');
        s
    }
}

/// `42 s`, `12.5 min`, `3.2 h`.
fn duration_text(seconds: f64) -> String {
    if seconds < 120.0 {
        format!("{seconds:.0} s")
    } else if seconds < 7200.0 {
        format!("{:.1} min", seconds / 60.0)
    } else {
        format!("{:.1} h", seconds / 3600.0)
    }
}

/// Seconds since the Unix epoch now (0 if the clock is before it).
pub(crate) fn now_unix_s() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `YYYY-MM-DDTHH:MM:SSZ` for seconds since the Unix epoch (proleptic Gregorian, UTC).
#[must_use]
pub fn utc_date(unix_s: u64) -> String {
    let days = (unix_s / 86_400) as i64;
    let secs = unix_s % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates() {
        assert_eq!(utc_date(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc_date(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc_date(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(utc_date(4_102_444_799), "2099-12-31T23:59:59Z");
    }

    #[test]
    fn settings_become_noise_free_search_configs() {
        let s = SearchSettings::from_algorithm(SearchAlgo::Puct, 100);
        let c = s.search_config(100, None).unwrap();
        match c.algorithm {
            Algorithm::Puct(p) => {
                assert_eq!(p.dirichlet_fraction, 0.0);
                assert_eq!(p.final_temperature, 0.0);
                assert_eq!(p.temperature_plies, 0);
            }
            Algorithm::Gumbel(_) => panic!("puct expected"),
        }
        let g = SearchSettings::default()
            .search_config(8, Some(50))
            .unwrap();
        assert_eq!(g.ply_cap, Some(50));
        match g.algorithm {
            Algorithm::Gumbel(g) => assert_eq!(g.gumbel_scale, 0.0),
            Algorithm::Puct(_) => panic!("gumbel expected"),
        }
        let bad = SearchSettings {
            c_puct: -1.0,
            ..SearchSettings::from_algorithm(SearchAlgo::Puct, 10)
        };
        assert!(bad.search_config(10, None).is_err());
        assert!(SearchSettings::default().search_config(0, None).is_err());
    }
}
