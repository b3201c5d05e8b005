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
//! latest                            RunLayout::LATEST          the network actors play (written last)
//! chunks/ACTOR/SSSSSSSS.brz         RunLayout::actor_chunk     an actor's games, immutable
//! actors/ACTOR.json                 RunLayout::actor_status    an actor's counts, last upload
//! learner/iter-NNNNNN.json          RunLayout::consumed        the chunks iteration N trained on
//! rejected/chunks/ACTOR/SSSSSSSS.brz RunLayout::rejected       chunks that failed their checks
//! ```

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
    /// Store runs: chunks moved aside because they failed their checks.
    pub const REJECTED: &'static str = "rejected";

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

    /// `chunks/ACTOR/SSSSSSSS.brz`: an actor's chunk `seq`. Actor ids are unique, so two
    /// actors never write the same key, and an actor never writes a key twice.
    #[must_use]
    pub fn actor_chunk(actor: &str, seq: u64) -> String {
        format!("{}/{actor}/{seq:08}.{CHUNK_EXTENSION}", Self::CHUNKS)
    }

    /// The `(actor, seq)` of an actor chunk's key, if it is one.
    #[must_use]
    pub fn parse_actor_chunk(key: &str) -> Option<(&str, u64)> {
        let rest = key.strip_prefix(Self::CHUNKS)?.strip_prefix('/')?;
        let (actor, file) = rest.split_once('/')?;
        let seq = file.strip_suffix(CHUNK_EXTENSION)?.strip_suffix('.')?;
        if !valid_actor_id(actor) || seq.len() != 8 || !seq.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        Some((actor, seq.parse().ok()?))
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

    /// `rejected/KEY`: where a chunk that failed its checks is moved.
    #[must_use]
    pub fn rejected(key: &str) -> String {
        format!("{}/{key}", Self::REJECTED)
    }
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
        let key = RunLayout::actor_chunk("host-1a2b", 12);
        assert_eq!(key, "chunks/host-1a2b/00000012.brz");
        assert_eq!(RunLayout::parse_actor_chunk(&key), Some(("host-1a2b", 12)));
        assert_eq!(RunLayout::actor_status("a"), "actors/a.json");
        assert_eq!(RunLayout::consumed(5), "learner/iter-000005.json");
        assert_eq!(
            RunLayout::parse_consumed("learner/iter-000005.json"),
            Some(5)
        );
        assert_eq!(
            RunLayout::rejected(&key),
            "rejected/chunks/host-1a2b/00000012.brz"
        );
    }

    #[test]
    fn foreign_names_are_not_actor_chunks() {
        for key in [
            "chunks/chunk-000001-000000.brz",
            "chunks/a/12.brz",
            "chunks/a/0000001x.brz",
            "chunks/a/b/00000001.brz",
            "chunks/a b/00000001.brz",
            "chunks//00000001.brz",
            "chunks/a/00000001.brz.tmp",
            "rejected/chunks/a/00000001.brz",
        ] {
            assert_eq!(RunLayout::parse_actor_chunk(key), None, "{key}");
        }
        assert_eq!(RunLayout::parse_consumed("learner/iter-1.json"), None);
        assert!(valid_actor_id("node-07_a"));
        assert!(!valid_actor_id("") && !valid_actor_id("a/b") && !valid_actor_id(&"x".repeat(65)));
    }
}
