//! [`RunLayout`]: the names of every file of a run, relative to its root. The run
//! directory ([`crate::RunDir`]) joins them to a path; a store run (`brandubh-store`)
//! uses them as object keys. Nothing else spells a run's file names.
//!
//! ```text
//! config.toml                       RunLayout::CONFIG          the run's configuration
//! state.json                        RunLayout::STATE           the last complete iteration
//! checkpoints/iter-NNNNNN.*         RunLayout::checkpoint      network after iteration N
//! chunks/chunk-NNNNNN-SSSSSS.brz    RunLayout::chunk           games trained in iteration N
//! metrics.jsonl                     RunLayout::METRICS         one line per iteration
//! learning_curves.png               RunLayout::LEARNING_CURVES
//! ladder/games.jsonl, ratings.json  RunLayout::LADDER_GAMES, LADDER_RATINGS
//! elo.png                           RunLayout::ELO_PLOT
//!
//! A store run (learner and actors on shared object storage) adds:
//! run.json                          RunLayout::RUN             the run's identity, written once
//! latest                            RunLayout::LATEST          the network actors play (written last)
//! chunks/ACTOR/SESSION-SSSSSSSS.brz RunLayout::actor_chunk     an actor's games, immutable
//! actors/ACTOR.json                 RunLayout::actor_status    an actor's counts, last upload
//! learner/lease.json                RunLayout::LEASE           who may write the run, until when
//! learner/iter-NNNNNN.json          RunLayout::consumed        the chunks iteration N trained on
//! quarantine/objects/TAG            RunLayout::quarantined     objects that failed their checks
//! quarantine/reasons/TAG.json       RunLayout::quarantine_reason  their keys, and why
//! ```
//!
//! A quarantined object's `TAG` is derived from its original key by the learner (a hash:
//! a stranger's key may hold characters no key of this layout has), so the object and its
//! reason are found from each other.
//!
//! ```text
//! ```
//!
//! An actor chunk's key is unique by construction: `SESSION` is 16 hex digits drawn by
//! each actor process when it starts (its start time in milliseconds and random bits), and
//! `SSSSSSSS` counts that process's chunks from 0; nothing found in the store changes them.

use crate::replay::{CHUNK_EXTENSION, chunk_file_name};

/// The relative names of a run's files (see the module documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunLayout;

/// The prefix of the trainer's checkpoint names.
pub const CHECKPOINT_PREFIX: &str = "iter-";

impl RunLayout {
    /// The configuration the run was started with.
    pub const CONFIG: &'static str = "config.toml";
    /// The last complete iteration (`RunState`).
    pub const STATE: &'static str = "state.json";
    /// The checkpoint directory.
    pub const CHECKPOINTS: &'static str = "checkpoints";
    /// The chunk directory (and, in a store run, the prefix of every actor's chunks).
    pub const CHUNKS: &'static str = "chunks";
    /// One JSON line per complete iteration.
    pub const METRICS: &'static str = "metrics.jsonl";
    /// The learning curves.
    pub const LEARNING_CURVES: &'static str = "learning_curves.png";
    /// The ladder's directory.
    pub const LADDER: &'static str = "ladder";
    /// The ladder's stored matches.
    pub const LADDER_GAMES: &'static str = "ladder/games.jsonl";
    /// The ladder's ratings.
    pub const LADDER_RATINGS: &'static str = "ladder/ratings.json";
    /// The ladder's plot.
    pub const ELO_PLOT: &'static str = "elo.png";
    /// Store runs: the pointer to the network actors play, written after everything else
    /// of an iteration.
    pub const LATEST: &'static str = "latest";
    /// Store runs: the actors' status files.
    pub const ACTORS: &'static str = "actors";
    /// Store runs: the learner's records of consumed chunks.
    pub const LEARNER: &'static str = "learner";
    /// Store runs: objects moved aside because they failed their checks.
    pub const QUARANTINE: &'static str = "quarantine";
    /// Store runs: the run's identity, written once when the run is created.
    pub const RUN: &'static str = "run.json";
    /// Store runs: the learner's lease.
    pub const LEASE: &'static str = "learner/lease.json";

    /// `checkpoints/iter-NNNNNN`: the checkpoint of `iteration`, without extension.
    #[must_use]
    pub fn checkpoint(iteration: u32) -> String {
        format!("{}/{}", Self::CHECKPOINTS, checkpoint_name(iteration))
    }

    /// `chunks/chunk-NNNNNN-SSSSSS.brz`: chunk `seq` of the games iteration `iteration`
    /// trained on (played by it in a directory run; taken from actors in a store run).
    #[must_use]
    pub fn chunk(iteration: u32, seq: u32) -> String {
        format!("{}/{}", Self::CHUNKS, chunk_file_name(iteration, seq))
    }

    /// `chunks/ACTOR/SESSION-SSSSSSSS.brz`: chunk `seq` of the actor process `session` (see
    /// the module documentation). Actor ids are unique and every process draws its own
    /// session, so no two chunks share a key.
    #[must_use]
    pub fn actor_chunk(actor: &str, session: u64, seq: u64) -> String {
        format!(
            "{}/{actor}/{session:016x}-{seq:08}.{CHUNK_EXTENSION}",
            Self::CHUNKS
        )
    }

    /// The actor, session and sequence number of an actor chunk's key, if it is exactly
    /// one that [`RunLayout::actor_chunk`] writes.
    #[must_use]
    pub fn parse_actor_chunk(key: &str) -> Option<ActorChunk<'_>> {
        let rest = key.strip_prefix(Self::CHUNKS)?.strip_prefix('/')?;
        let (actor, file) = rest.split_once('/')?;
        let stem = file.strip_suffix(CHUNK_EXTENSION)?.strip_suffix('.')?;
        let (session, seq) = stem.split_once('-')?;
        let hex = |s: &str| {
            s.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        };
        let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if !valid_actor_id(actor)
            || session.len() != 16
            || !hex(session)
            || seq.len() != 8
            || !digits(seq)
        {
            return None;
        }
        Some(ActorChunk {
            actor,
            session: u64::from_str_radix(session, 16).ok()?,
            seq: seq.parse().ok()?,
        })
    }

    /// `actors/ACTOR.json`: an actor's status.
    #[must_use]
    pub fn actor_status(actor: &str) -> String {
        format!("{}/{actor}.json", Self::ACTORS)
    }

    /// `learner/iter-NNNNNN.json`: the chunks iteration `iteration` consumed.
    #[must_use]
    pub fn consumed(iteration: u32) -> String {
        format!("{}/{}.json", Self::LEARNER, checkpoint_name(iteration))
    }

    /// The iteration of a consumed-chunks record's key, if it is one.
    #[must_use]
    pub fn parse_consumed(key: &str) -> Option<u32> {
        let name = key.strip_prefix(Self::LEARNER)?.strip_prefix('/')?;
        let digits = name
            .strip_prefix(CHECKPOINT_PREFIX)?
            .strip_suffix(".json")?;
        (digits.len() == 6 && digits.bytes().all(|b| b.is_ascii_digit()))
            .then(|| digits.parse().ok())?
    }

    /// `quarantine/objects/TAG`: where an object that failed its checks is moved.
    #[must_use]
    pub fn quarantined(tag: &str) -> String {
        format!("{}/objects/{tag}", Self::QUARANTINE)
    }

    /// `quarantine/reasons/TAG.json`: the original key of the object `TAG` and why it
    /// was quarantined.
    #[must_use]
    pub fn quarantine_reason(tag: &str) -> String {
        format!("{}/reasons/{tag}.json", Self::QUARANTINE)
    }

    /// The tag of a quarantine reason's key.
    #[must_use]
    pub fn parse_quarantine_reason(key: &str) -> Option<&str> {
        key.strip_prefix(Self::QUARANTINE)?
            .strip_prefix("/reasons/")?
            .strip_suffix(".json")
    }
}

/// An actor chunk's key, parsed ([`RunLayout::parse_actor_chunk`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ActorChunk<'k> {
    /// The actor's id.
    pub actor: &'k str,
    /// The actor process that wrote it.
    pub session: u64,
    /// Its number among that process's chunks.
    pub seq: u64,
}

/// `iter-NNNNNN`: the trainer's name for the checkpoint of `iteration`.
#[must_use]
pub fn checkpoint_name(iteration: u32) -> String {
    format!("{CHECKPOINT_PREFIX}{iteration:06}")
}

/// Whether `id` can name an actor: 1–64 ASCII letters, digits, `-` or `_`.
#[must_use]
pub fn valid_actor_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_follow_the_layout_and_parse_back() {
        assert_eq!(RunLayout::checkpoint(7), "checkpoints/iter-000007");
        assert_eq!(RunLayout::chunk(3, 4), "chunks/chunk-000003-000004.brz");
        let key = RunLayout::actor_chunk("host-1a2b", 0x0193_a1b2_c3d4_e5f6, 12);
        assert_eq!(key, "chunks/host-1a2b/0193a1b2c3d4e5f6-00000012.brz");
        assert_eq!(
            RunLayout::parse_actor_chunk(&key),
            Some(ActorChunk {
                actor: "host-1a2b",
                session: 0x0193_a1b2_c3d4_e5f6,
                seq: 12
            })
        );
        assert_eq!(RunLayout::actor_status("a"), "actors/a.json");
        assert_eq!(RunLayout::consumed(5), "learner/iter-000005.json");
        assert_eq!(
            RunLayout::parse_consumed("learner/iter-000005.json"),
            Some(5)
        );
        assert_eq!(RunLayout::quarantined("ab12"), "quarantine/objects/ab12");
        let reason = RunLayout::quarantine_reason("ab12");
        assert_eq!(reason, "quarantine/reasons/ab12.json");
        assert_eq!(RunLayout::parse_quarantine_reason(&reason), Some("ab12"));
    }

    #[test]
    fn foreign_names_are_not_actor_chunks() {
        for key in [
            "chunks/chunk-000001-000000.brz",
            "chunks/a/12.brz",
            "chunks/a/00000001.brz",
            "chunks/a/99999999.brz",
            "chunks/a/0193a1b2c3d4e5f6-0000001.brz",
            "chunks/a/0193A1B2C3D4E5F6-00000001.brz",
            "chunks/a/0193a1b2c3d4e5f-00000001.brz",
            "chunks/a/0193a1b2c3d4e5f6-000000001.brz",
            "chunks/a/0193a1b2c3d4e5f6-00000001.brz.tmp",
            "chunks/a/0000001x.brz",
            "chunks/a/b/00000001.brz",
            "chunks/a b/00000001.brz",
            "chunks//00000001.brz",
            "chunks/a/00000001.brz.tmp",
            "quarantine/objects/0193a1b2c3d4e5f6",
        ] {
            assert_eq!(RunLayout::parse_actor_chunk(key), None, "{key}");
        }
        assert_eq!(RunLayout::parse_consumed("learner/iter-1.json"), None);
        assert!(valid_actor_id("node-07_a"));
        assert!(!valid_actor_id("") && !valid_actor_id("a/b") && !valid_actor_id(&"x".repeat(65)));
    }
}
