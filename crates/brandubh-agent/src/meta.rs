//! What an agent file says about its network: [`AgentMeta`] with the model shape, the
//! search it plays best with (the search crate's [`SearchSettings`]), its training ([`TrainingInfo`]) and
//! where it came from ([`SourceInfo`]). Stored as JSON inside the file.

use brandubh_net::NetConfig;
use brandubh_search::SearchSettings;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// The rule set every agent of this build plays (RULES.md).
pub const RULES_NAME: &str = "Brandubh 2.5W";

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
        if self.search.root_proof_plies > 0 {
            s.push_str(&format!(
                " + exact root proofs {} plies",
                self.search.root_proof_plies
            ));
        }
        if self.search.verify_plies > 0 {
            s.push_str(&format!(
                " + exact check of the move {} plies",
                self.search.verify_plies
            ));
        }
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

/// `YYYY-MM-DDTHH:MM:SSZ` (RFC 3339, UTC) for seconds since the Unix epoch, e.g.
/// `2026-11-29T14:45:27Z`. A time after 9999-12-31T23:59:59Z (only a damaged clock or file
/// gives one) is written `unix time SECONDS`.
#[must_use]
pub fn utc_date(unix_s: u64) -> String {
    i64::try_from(unix_s)
        .ok()
        .and_then(|s| OffsetDateTime::from_unix_timestamp(s).ok())
        .and_then(|t| t.format(&Rfc3339).ok())
        .unwrap_or_else(|| format!("unix time {unix_s}"))
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
        assert_eq!(utc_date(1_795_963_527), "2026-11-29T14:45:27Z");
        assert_eq!(utc_date(253_402_300_799), "9999-12-31T23:59:59Z");
        assert_eq!(utc_date(253_402_300_800), "unix time 253402300800");
        assert_eq!(utc_date(u64::MAX), format!("unix time {}", u64::MAX));
    }
}
