//! Replay data: the chunk file format, chunk listing, and the training window.
//!
//! Self-play writes its finished games as *chunk files* in the run directory. A chunk holds
//! whole games: the start position, the move list, the outcome, and for every *recorded*
//! position (the ply index into the move list) the search's policy target, root value and
//! whether it came from a full search. Everything else a training sample needs (the
//! position itself, its repetition count, the final result from the side to move's view)
//! is reconstructed by replaying the moves with the rules engine, which also validates
//! the file: a chunk that decodes is a chunk whose games are legal.
//!
//! # File layout (format version 3, encoding version 1)
//!
//! ```text
//! offset  size  field
//!      0     8  magic "BRZCHUNK"
//!      8     4  format version, u32 little-endian        (FORMAT_VERSION)
//!     12     4  encoding version, u32 little-endian      (ENCODING_VERSION)
//!     16     8  body length in bytes, u64 little-endian  (at most MAX_BODY_BYTES)
//!     24     4  CRC-32 (IEEE) of the body, u32 little-endian
//!     28     …  body: bincode 2 (serde, standard config: little-endian varints)
//! ```
//!
//! The body is, in bincode's serde encoding:
//!
//! ```text
//! Body     { info: Info, games: Vec<Game> }
//! Body     { info: Info, games: Vec<Game>, sparring: Vec<u32> }   (format version 3)
//! Info     { run_id: String, iteration: u32, created_unix_ms: u64, producer: String }
//! Game     { attackers: u64, defenders: u64, king: u8, side: u8 (0 white, 1 black),
//!            moves: Vec<[u8; 2]> (from, to squares), result: Result,
//!            positions: Vec<Recorded> }
//! Result   = Unfinished | Finished { winner: u8 (0 white, 1 black), reason: u8 (rule 8.x - 1) }
//!          | Resigned { winner: u8 }       (format versions 2 and 3; retired: refused)
//! Recorded { ply: u32, policy: Vec<(u8, f32)>, root_value: f32, full_search: bool }
//! ```
//!
//! *Format version* covers the header and the record layout above. Version 2 added the
//! `Resigned` result of self-play resignation, an experiment since retired
//! (configs/ablations/README.md): this build reads version-2 chunks, and refuses a
//! resigned game in any chunk with an error naming the commit whose build reads it.
//! Version 3 added the body's `sparring` list: the indices, strictly increasing, of the
//! games whose White was the alpha-beta searcher (sparring games,
//! `selfplay.sparring_fraction`). A chunk is written in the oldest version that holds its
//! games: version 1 without sparring games, which older builds read, so runs without them
//! write exactly the files they wrote before; else 3.
//! *Encoding version*
//! covers how moves are numbered: version 1 numbers squares `rank · 7 + file` (`a1` = 0)
//! and a policy entry's `u8` is the index of its move in `brandubh_rules` legal-move order
//! (ascending from-square index, then ascending to-square index). Readers reject any other
//! version. Files are written with
//! [`brandubh_fs::write_atomic`], so a reader never sees a partial chunk; the length and
//! checksum catch files damaged later.

mod window;

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use brandubh_rules::{Bitboard, Reason, Side, Square};
use brandubh_rules::{Game, IllegalMoveError, Move, Outcome, Position, PositionErrorKind};
use serde::{Deserialize, Serialize};

use brandubh_fs::FsError;

pub use window::{RefreshReport, ReplayWindow, TrainingSample};

/// The first eight bytes of every chunk file.
pub const MAGIC: [u8; 8] = *b"BRZCHUNK";
/// Newest version of the header and record layout, which this build reads and writes
/// (for chunks that hold a sparring game).
pub const FORMAT_VERSION: u32 = 3;
/// The format version that added the list of sparring games.
pub const SPARRING_FORMAT_VERSION: u32 = 3;
/// The commit whose build still reads resigned games (the retired
/// `selfplay.resign_threshold`, `crate::config::RETIRED_KEYS`).
pub const RESIGNATION_COMMIT: &str = "cf0dd85";
/// Oldest format version this build reads; it writes chunks without a sparring game in it.
pub const OLDEST_FORMAT_VERSION: u32 = 1;
/// Version of the move and policy numbering this build reads and writes.
pub const ENCODING_VERSION: u32 = 1;
/// Length of the fixed header before the body.
pub const HEADER_LEN: usize = 28;
/// Largest body accepted or written (64 MiB); also bincode's decoding limit, so a
/// corrupted length prefix cannot make the reader allocate more.
pub const MAX_BODY_BYTES: usize = 64 << 20;
/// Extension of chunk files.
pub const CHUNK_EXTENSION: &str = "brz";

/// Largest tolerated distance of a policy target's sum from 1.
pub const POLICY_SUM_TOLERANCE: f32 = 0.01;

type BincodeConfig = bincode::config::Configuration<
    bincode::config::LittleEndian,
    bincode::config::Varint,
    bincode::config::Limit<MAX_BODY_BYTES>,
>;

const fn bincode_config() -> BincodeConfig {
    bincode::config::standard().with_limit::<MAX_BODY_BYTES>()
}

/// How a recorded game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GameResult {
    /// Decided by the rules.
    Finished(Outcome),
    /// Stopped by the self-play ply cap (not a result of the rules).
    Unfinished,
}

impl GameResult {
    /// The value target for `side`: +1 if it won, −1 if it lost, 0 if unfinished.
    #[must_use]
    pub fn value_for(self, side: Side) -> f32 {
        match self.winner() {
            Some(winner) if winner == side => 1.0,
            Some(_) => -1.0,
            None => 0.0,
        }
    }

    /// The winner; `None` if unfinished.
    #[must_use]
    pub fn winner(self) -> Option<Side> {
        match self {
            GameResult::Finished(o) => Some(o.winner),
            GameResult::Unfinished => None,
        }
    }

    fn describe(self) -> String {
        match self {
            GameResult::Finished(o) => format!("{} wins by {}", o.winner, o.reason.name()),
            GameResult::Unfinished => "unfinished".to_owned(),
        }
    }
}

/// A recorded position of a game: the search's output there.
#[derive(Clone, Debug, PartialEq)]
pub struct PositionRecord {
    /// The position after this many moves of the game's move list (0 = start).
    pub ply: u32,
    /// The policy target: legal moves with their probabilities, summing to 1 (within
    /// [`POLICY_SUM_TOLERANCE`]), each move at most once. May be empty when `full_search`
    /// is false (a value-only sample).
    pub policy: Vec<(Move, f32)>,
    /// The search's value of the position, from the side to move's view, in [−1, 1].
    pub root_value: f32,
    /// Whether the move was searched with the full budget (playout-cap randomisation);
    /// only those policy targets are meant for training.
    pub full_search: bool,
}

/// A whole self-play game with its recorded positions.
#[derive(Clone, Debug, PartialEq)]
pub struct GameRecord {
    /// The start position.
    pub start: Position,
    /// Every move played, in order.
    pub moves: Vec<Move>,
    /// The outcome; must agree with replaying `moves` from `start`.
    pub result: GameResult,
    /// Recorded positions, by strictly increasing ply; none after the game's end.
    pub positions: Vec<PositionRecord>,
    /// Whether White was the alpha-beta searcher, not the network (a sparring game,
    /// `selfplay.sparring_fraction`): then only Black's positions are recorded, and the
    /// game is no evidence of the network against itself. Stored from format version 3.
    pub sparring: bool,
}

/// Who wrote a chunk, for which run, when.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkInfo {
    /// The run (e.g. its name, or a hash of its configuration).
    pub run_id: String,
    /// The iteration whose self-play produced the games (numbered from 1).
    pub iteration: u32,
    /// Creation time, milliseconds since the Unix epoch.
    pub created_unix_ms: u64,
    /// The program that wrote it, e.g. `brandubh-run 0.1.0`.
    pub producer: String,
}

impl ChunkInfo {
    /// Info for a chunk created now by this crate.
    #[must_use]
    pub fn new(run_id: impl Into<String>, iteration: u32) -> ChunkInfo {
        let created_unix_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        ChunkInfo {
            run_id: run_id.into(),
            iteration,
            created_unix_ms,
            producer: concat!("brandubh-run ", env!("CARGO_PKG_VERSION")).to_owned(),
        }
    }
}

/// The content of a chunk file.
#[derive(Clone, Debug, PartialEq)]
pub struct Chunk {
    /// Header information.
    pub info: ChunkInfo,
    /// The games.
    pub games: Vec<GameRecord>,
}

impl Chunk {
    /// The number of recorded positions in all games.
    #[must_use]
    pub fn position_count(&self) -> usize {
        self.games.iter().map(|g| g.positions.len()).sum()
    }
}

/// What is wrong with a game record. Plies are 0-based indices into the move list.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum GameError {
    /// The start position breaks the rules' invariants.
    #[error("invalid start position: {0}")]
    BadStart(String),
    /// A square index beyond the board.
    #[error("move at ply {ply}: square index {index} is off the board")]
    BadSquare {
        /// The move's ply.
        ply: usize,
        /// The index read.
        index: u8,
    },
    /// A move that is not legal when replayed.
    #[error("move at ply {ply}: {error}")]
    IllegalMove {
        /// The move's ply.
        ply: usize,
        /// Why it is illegal.
        error: IllegalMoveError,
    },
    /// An unknown result code.
    #[error("unknown result code (winner {winner}, reason {reason})")]
    BadResult {
        /// The winner code read.
        winner: u8,
        /// The reason code read.
        reason: u8,
    },
    /// A resigned game (format versions 2 and 3): self-play resignation is retired.
    #[error(
        "a resigned game: self-play resignation is retired (configs/ablations/README.md); \
         the build of commit {} reads it",
        RESIGNATION_COMMIT
    )]
    Resigned,
    /// The recorded result disagrees with the replay.
    #[error("recorded result is {recorded} but replaying the moves gives {replayed}")]
    ResultMismatch {
        /// What the record says.
        recorded: String,
        /// What replaying says.
        replayed: String,
    },
    /// Recorded plies not strictly increasing.
    #[error("recorded position at ply {ply} comes after ply {previous}")]
    PliesOutOfOrder {
        /// The offending ply.
        ply: u32,
        /// The ply before it.
        previous: u32,
    },
    /// A recorded ply beyond the move list.
    #[error("recorded position at ply {ply} is beyond the {moves} moves of the game")]
    PlyOutOfRange {
        /// The offending ply.
        ply: u32,
        /// Length of the move list.
        moves: usize,
    },
    /// A recorded position where the game is already over.
    #[error("recorded position at ply {ply} comes after the end of the game")]
    AfterEnd {
        /// The offending ply.
        ply: u32,
    },
    /// A policy index beyond the legal moves.
    #[error("policy target at ply {ply}: move index {index} but only {legal} legal moves")]
    PolicyIndex {
        /// The position's ply.
        ply: u32,
        /// The index read.
        index: u8,
        /// The number of legal moves.
        legal: usize,
    },
    /// A policy move that is not legal in its position.
    #[error("policy target at ply {ply}: {mv} is not a legal move")]
    PolicyMove {
        /// The position's ply.
        ply: u32,
        /// The move.
        mv: Move,
    },
    /// A move listed twice in a policy.
    #[error("policy target at ply {ply}: {mv} appears twice")]
    PolicyDuplicate {
        /// The position's ply.
        ply: u32,
        /// The move.
        mv: Move,
    },
    /// A probability outside [0, 1].
    #[error("policy target at ply {ply}: probability {value} is not in [0, 1]")]
    Probability {
        /// The position's ply.
        ply: u32,
        /// The value read.
        value: f32,
    },
    /// Probabilities that do not sum to 1.
    #[error("policy target at ply {ply}: probabilities sum to {sum}, not 1")]
    PolicySum {
        /// The position's ply.
        ply: u32,
        /// Their sum.
        sum: f32,
    },
    /// A full search without a policy target.
    #[error("full search at ply {ply} has an empty policy target")]
    EmptyPolicy {
        /// The position's ply.
        ply: u32,
    },
    /// A root value outside [−1, 1].
    #[error("root value {value} at ply {ply} is not in [-1, 1]")]
    RootValue {
        /// The position's ply.
        ply: u32,
        /// The value read.
        value: f32,
    },
}

/// Why a chunk could not be written.
#[derive(Debug, thiserror::Error)]
pub enum EncodeError {
    /// A game that is not valid.
    #[error("game {game}: {error}")]
    Game {
        /// Index of the game in the chunk.
        game: usize,
        /// What is wrong.
        error: GameError,
    },
    /// The body would exceed [`MAX_BODY_BYTES`].
    #[error("chunk body of {len} bytes exceeds the limit of {MAX_BODY_BYTES} bytes")]
    TooLarge {
        /// The body length.
        len: usize,
    },
    /// bincode failed.
    #[error("cannot encode: {0}")]
    Bincode(String),
}

/// A chunk that could not be read or written. Every message names the file.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// Reading or listing failed.
    #[error("{}: cannot {action}: {cause}", file.display())]
    Io {
        /// The file or directory.
        file: PathBuf,
        /// What was being done.
        action: &'static str,
        /// The underlying error.
        cause: io::Error,
    },
    /// Writing failed.
    #[error(transparent)]
    Write(#[from] FsError),
    /// Not a chunk file at all.
    #[error("{}: not a replay chunk (bad magic bytes)", file.display())]
    BadMagic {
        /// The file.
        file: PathBuf,
    },
    /// A format or encoding version this build does not read.
    #[error("{}: unsupported {what} version {found} (this build reads {})", file.display(), versions(*oldest, *newest))]
    Version {
        /// The file.
        file: PathBuf,
        /// `"format"` or `"encoding"`.
        what: &'static str,
        /// The version in the file.
        found: u32,
        /// The oldest version this build reads.
        oldest: u32,
        /// The newest version this build reads.
        newest: u32,
    },
    /// The file is shorter than its header says.
    #[error("{}: truncated: {found} bytes, expected {expected}", file.display())]
    Truncated {
        /// The file.
        file: PathBuf,
        /// Its length.
        found: u64,
        /// The length the header announces.
        expected: u64,
    },
    /// Bytes after the end the header announces, or after the decoded body.
    #[error("{}: {extra} bytes of trailing garbage", file.display())]
    TrailingBytes {
        /// The file.
        file: PathBuf,
        /// How many.
        extra: u64,
    },
    /// The header announces a body larger than [`MAX_BODY_BYTES`].
    #[error("{}: body length {len} exceeds the limit of {MAX_BODY_BYTES} bytes", file.display())]
    TooLarge {
        /// The file.
        file: PathBuf,
        /// The announced length.
        len: u64,
    },
    /// The body's checksum does not match.
    #[error("{}: checksum mismatch (stored {stored:08x}, computed {computed:08x}): the file is corrupted", file.display())]
    Checksum {
        /// The file.
        file: PathBuf,
        /// Checksum in the header.
        stored: u32,
        /// Checksum of the body.
        computed: u32,
    },
    /// The body is not valid bincode for the record layout.
    #[error("{}: cannot decode body: {message}", file.display())]
    Decode {
        /// The file.
        file: PathBuf,
        /// bincode's message.
        message: String,
    },
    /// A format-version-3 list of sparring games that is not a strictly increasing list of
    /// the chunk's game indices.
    #[error("{}: list of sparring games: {problem}", file.display())]
    SparringList {
        /// The file.
        file: PathBuf,
        /// What is wrong, naming the index.
        problem: String,
    },
    /// A game that does not replay.
    #[error("{}: game {game}: {error}", file.display())]
    Game {
        /// The file.
        file: PathBuf,
        /// Index of the game in the chunk.
        game: usize,
        /// What is wrong.
        error: GameError,
    },
    /// A chunk that could not be encoded.
    #[error("{}: cannot write chunk: {error}", file.display())]
    Encode {
        /// The file.
        file: PathBuf,
        /// Why.
        error: EncodeError,
    },
}

// ---------------------------------------------------------------------------------------
// Wire types: the body as stored. Plain integers, so the layout is defined here and not by
// the rules crate's types.

#[derive(Serialize, Deserialize)]
struct WireChunk {
    info: ChunkInfo,
    games: Vec<WireGame>,
}

/// Format version 3's body: `WireChunk` and the indices of the sparring games.
#[derive(Serialize, Deserialize)]
struct WireChunkV3 {
    info: ChunkInfo,
    games: Vec<WireGame>,
    sparring: Vec<u32>,
}

#[derive(Serialize, Deserialize)]
struct WireGame {
    attackers: u64,
    defenders: u64,
    king: u8,
    side: u8,
    moves: Vec<[u8; 2]>,
    result: WireResult,
    positions: Vec<WirePosition>,
}

#[derive(Serialize, Deserialize)]
enum WireResult {
    Unfinished,
    Finished { winner: u8, reason: u8 },
    // Format versions 2 and 3; retired, refused on reading. Kept so that the variants'
    // indices stay those of the format.
    Resigned { winner: u8 },
}

#[derive(Serialize, Deserialize)]
struct WirePosition {
    ply: u32,
    policy: Vec<(u8, f32)>,
    root_value: f32,
    full_search: bool,
}

const REASONS: [Reason; 5] = [
    Reason::KingEscaped,
    Reason::KingCaptured,
    Reason::Encirclement,
    Reason::Repetition,
    Reason::NoMoves,
];

fn side_code(side: Side) -> u8 {
    match side {
        Side::White => 0,
        Side::Black => 1,
    }
}

fn side_from(code: u8) -> Option<Side> {
    match code {
        0 => Some(Side::White),
        1 => Some(Side::Black),
        _ => None,
    }
}

fn describe_position_error(kind: &PositionErrorKind) -> String {
    match kind {
        PositionErrorKind::KingCount(n) => format!("expected exactly one King, found {n}"),
        PositionErrorKind::TooManyAttackers(n) => {
            format!("at most 8 attackers are allowed, found {n}")
        }
        PositionErrorKind::TooManyDefenders(n) => {
            format!("at most 4 defenders are allowed, found {n}")
        }
        PositionErrorKind::RestrictedSquare(sq) => {
            format!("only the King may stand on the restricted square {sq}")
        }
        PositionErrorKind::Overlap(sq) => format!("two pieces stand on {sq}"),
        PositionErrorKind::OffBoard => "a piece lies outside the 7x7 board".to_owned(),
        other => format!("{other:?}"),
    }
}

/// Replays a game, calling `visit(i, game)` at the ply of the `i`-th recorded position,
/// and checks the plies and the result.
fn replay(
    start: Position,
    moves: &[Move],
    result: GameResult,
    plies: &[u32],
    mut visit: impl FnMut(usize, &Game) -> Result<(), GameError>,
) -> Result<(), GameError> {
    for pair in plies.windows(2) {
        if pair[1] <= pair[0] {
            return Err(GameError::PliesOutOfOrder {
                ply: pair[1],
                previous: pair[0],
            });
        }
    }
    if let Some(&last) = plies.last()
        && last as usize > moves.len()
    {
        return Err(GameError::PlyOutOfRange {
            ply: last,
            moves: moves.len(),
        });
    }
    let mut game = Game::new(start);
    let mut next = 0;
    for ply in 0..=moves.len() {
        while next < plies.len() && plies[next] as usize == ply {
            if game.is_over() {
                return Err(GameError::AfterEnd { ply: plies[next] });
            }
            visit(next, &game)?;
            next += 1;
        }
        if let Some(&mv) = moves.get(ply) {
            game.play(mv)
                .map_err(|error| GameError::IllegalMove { ply, error })?;
        }
    }
    let replayed = game
        .outcome()
        .map_or(GameResult::Unfinished, GameResult::Finished);
    if replayed != result {
        return Err(GameError::ResultMismatch {
            recorded: result.describe(),
            replayed: replayed.describe(),
        });
    }
    Ok(())
}

/// The entries of a recorded policy as `(move, index among the legal moves, probability)`:
/// `index_of` finds each entry's index in `legal` (or says why it cannot), and no move may
/// come twice.
fn checked_policy<T: Copy>(
    ply: u32,
    policy: &[(T, f32)],
    legal: &[Move],
    index_of: impl Fn(T) -> Result<usize, GameError>,
) -> Result<Vec<(Move, usize, f32)>, GameError> {
    let mut seen = 0u128;
    let mut out = Vec::with_capacity(policy.len());
    for &(entry, p) in policy {
        let index = index_of(entry)?;
        let mv = legal[index];
        if seen >> index & 1 != 0 {
            return Err(GameError::PolicyDuplicate { ply, mv });
        }
        seen |= 1 << index;
        out.push((mv, index, p));
    }
    Ok(out)
}

/// Checks a recorded position's root value and policy probabilities (`policy`'s second
/// elements).
fn check_values<T>(
    ply: u32,
    root_value: f32,
    full_search: bool,
    policy: &[(T, f32)],
) -> Result<(), GameError> {
    let probs: Vec<f32> = policy.iter().map(|e| e.1).collect();
    if !(-1.0..=1.0).contains(&root_value) {
        return Err(GameError::RootValue {
            ply,
            value: root_value,
        });
    }
    if probs.is_empty() {
        return if full_search {
            Err(GameError::EmptyPolicy { ply })
        } else {
            Ok(())
        };
    }
    if let Some(&value) = probs.iter().find(|p| !(0.0..=1.0).contains(*p)) {
        return Err(GameError::Probability { ply, value });
    }
    let sum: f32 = probs.iter().sum();
    if (sum - 1.0).abs() > POLICY_SUM_TOLERANCE {
        return Err(GameError::PolicySum { ply, sum });
    }
    Ok(())
}

impl GameRecord {
    /// The oldest chunk format version that can hold this game.
    fn format_version(&self) -> u32 {
        if self.sparring {
            SPARRING_FORMAT_VERSION
        } else {
            OLDEST_FORMAT_VERSION
        }
    }

    /// Checks the record by replaying it: legal moves, the result, recorded plies in
    /// order and before the end, policy targets over legal moves summing to 1, values in
    /// range.
    pub fn validate(&self) -> Result<(), GameError> {
        self.to_wire().map(|_| ())
    }

    /// Replays the game ([`replay`]), calling `visit` with each recorded position and the
    /// game at it.
    fn replay_positions(
        &self,
        mut visit: impl FnMut(&PositionRecord, &Game) -> Result<(), GameError>,
    ) -> Result<(), GameError> {
        let plies: Vec<u32> = self.positions.iter().map(|p| p.ply).collect();
        replay(self.start, &self.moves, self.result, &plies, |i, game| {
            visit(&self.positions[i], game)
        })
    }

    fn to_wire(&self) -> Result<WireGame, GameError> {
        let mut positions = Vec::with_capacity(self.positions.len());
        self.replay_positions(|rec, game| {
            let legal = game.legal_moves();
            let entries = checked_policy(rec.ply, &rec.policy, &legal, |mv| {
                let index = legal.iter().position(|&m| m == mv);
                index.ok_or(GameError::PolicyMove { ply: rec.ply, mv })
            })?;
            check_values(rec.ply, rec.root_value, rec.full_search, &rec.policy)?;
            positions.push(WirePosition {
                ply: rec.ply,
                // Legal moves number at most MAX_MOVES = 96, so the index fits a u8.
                policy: entries.iter().map(|&(_, i, p)| (i as u8, p)).collect(),
                root_value: rec.root_value,
                full_search: rec.full_search,
            });
            Ok(())
        })?;
        let result = match self.result {
            GameResult::Unfinished => WireResult::Unfinished,
            GameResult::Finished(o) => WireResult::Finished {
                winner: side_code(o.winner),
                reason: REASONS.iter().position(|&r| r == o.reason).unwrap_or(0) as u8,
            },
        };
        Ok(WireGame {
            attackers: self.start.attackers().0,
            defenders: self.start.defenders().0,
            king: self.start.king().index() as u8,
            side: side_code(self.start.side_to_move()),
            moves: self
                .moves
                .iter()
                .map(|m| [m.from.index() as u8, m.to.index() as u8])
                .collect(),
            result,
            positions,
        })
    }

    fn from_wire(wire: WireGame) -> Result<GameRecord, GameError> {
        let king = Square::new(wire.king).ok_or_else(|| {
            GameError::BadStart(format!("King square index {} is off the board", wire.king))
        })?;
        let side = side_from(wire.side)
            .ok_or_else(|| GameError::BadStart(format!("unknown side code {}", wire.side)))?;
        let start = Position::from_parts(
            Bitboard(wire.attackers),
            Bitboard(wire.defenders),
            king,
            side,
        )
        .map_err(|kind| GameError::BadStart(describe_position_error(&kind)))?;
        let mut moves = Vec::with_capacity(wire.moves.len());
        for (ply, [from, to]) in wire.moves.iter().copied().enumerate() {
            let square = |index: u8| Square::new(index).ok_or(GameError::BadSquare { ply, index });
            moves.push(Move::new(square(from)?, square(to)?));
        }
        let result = match wire.result {
            WireResult::Unfinished => GameResult::Unfinished,
            WireResult::Finished { winner, reason } => {
                match (side_from(winner), REASONS.get(reason as usize)) {
                    (Some(winner), Some(&reason)) => {
                        GameResult::Finished(Outcome { winner, reason })
                    }
                    _ => return Err(GameError::BadResult { winner, reason }),
                }
            }
            WireResult::Resigned { .. } => return Err(GameError::Resigned),
        };
        let plies: Vec<u32> = wire.positions.iter().map(|p| p.ply).collect();
        let mut positions = Vec::with_capacity(wire.positions.len());
        replay(start, &moves, result, &plies, |i, game| {
            let rec = &wire.positions[i];
            let legal = game.legal_moves();
            let entries = checked_policy(rec.ply, &rec.policy, &legal, |index| {
                match legal.get(index as usize) {
                    Some(_) => Ok(index as usize),
                    None => Err(GameError::PolicyIndex {
                        ply: rec.ply,
                        index,
                        legal: legal.len(),
                    }),
                }
            })?;
            check_values(rec.ply, rec.root_value, rec.full_search, &rec.policy)?;
            positions.push(PositionRecord {
                ply: rec.ply,
                policy: entries.iter().map(|&(mv, _, p)| (mv, p)).collect(),
                root_value: rec.root_value,
                full_search: rec.full_search,
            });
            Ok(())
        })?;
        Ok(GameRecord {
            start,
            moves,
            result,
            positions,
            sparring: false,
        })
    }

    /// The training samples of the recorded positions, reconstructed by replaying the
    /// game (identity symmetry).
    pub fn samples(&self) -> Result<Vec<TrainingSample>, GameError> {
        let mut out = Vec::with_capacity(self.positions.len());
        self.replay_positions(|rec, game| {
            let position = *game.position();
            out.push(TrainingSample {
                position,
                repetitions: game.repetitions(),
                ply: rec.ply,
                policy: rec.policy.clone(),
                result: self.result.value_for(position.side_to_move()),
                plies_to_end: (self.moves.len() as u32).saturating_sub(rec.ply),
                root_value: rec.root_value,
                full_search: rec.full_search,
            });
            Ok(())
        })?;
        Ok(out)
    }
}

/// Encodes a chunk into the bytes of a chunk file, validating every game first.
pub fn encode_chunk(chunk: &Chunk) -> Result<Vec<u8>, EncodeError> {
    let games = chunk
        .games
        .iter()
        .enumerate()
        .map(|(game, g)| {
            g.to_wire()
                .map_err(|error| EncodeError::Game { game, error })
        })
        .collect::<Result<Vec<_>, _>>()?;
    // The oldest version that can hold every game (see the module's docs).
    let version = chunk
        .games
        .iter()
        .map(GameRecord::format_version)
        .fold(OLDEST_FORMAT_VERSION, u32::max);
    let info = chunk.info.clone();
    let body = if version >= SPARRING_FORMAT_VERSION {
        let sparring = (0u32..).zip(&chunk.games).filter(|(_, g)| g.sparring);
        let wire = WireChunkV3 {
            info,
            games,
            sparring: sparring.map(|(i, _)| i).collect(),
        };
        bincode::serde::encode_to_vec(&wire, bincode_config())
    } else {
        bincode::serde::encode_to_vec(&WireChunk { info, games }, bincode_config())
    }
    .map_err(|e| EncodeError::Bincode(e.to_string()))?;
    if body.len() > MAX_BODY_BYTES {
        return Err(EncodeError::TooLarge { len: body.len() });
    }
    let mut bytes = Vec::with_capacity(HEADER_LEN + body.len());
    bytes.extend_from_slice(&MAGIC);
    bytes.extend_from_slice(&version.to_le_bytes());
    bytes.extend_from_slice(&ENCODING_VERSION.to_le_bytes());
    bytes.extend_from_slice(&(body.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&crc32fast::hash(&body).to_le_bytes());
    bytes.extend_from_slice(&body);
    Ok(bytes)
}

/// "version 1", or "versions 1 to 2".
fn versions(oldest: u32, newest: u32) -> String {
    if oldest == newest {
        format!("version {newest}")
    } else {
        format!("versions {oldest} to {newest}")
    }
}

fn le_u32(bytes: &[u8], at: usize) -> u32 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(b)
}

/// Decodes and validates the bytes of a chunk file; `file` names it in errors.
///
/// Checks, in order: magic, versions, length (truncation, trailing bytes), checksum,
/// bincode decoding (with a [`MAX_BODY_BYTES`] limit), then replays every game.
pub fn decode_chunk(bytes: &[u8], file: &Path) -> Result<Chunk, ReplayError> {
    let file_buf = || file.to_path_buf();
    if bytes.len() < MAGIC.len() || bytes[..MAGIC.len()] != MAGIC {
        // A prefix of the magic is a truncated chunk, not a foreign file.
        if bytes.len() < MAGIC.len() && MAGIC.starts_with(bytes) {
            return Err(ReplayError::Truncated {
                file: file_buf(),
                found: bytes.len() as u64,
                expected: HEADER_LEN as u64,
            });
        }
        return Err(ReplayError::BadMagic { file: file_buf() });
    }
    if bytes.len() < HEADER_LEN {
        return Err(ReplayError::Truncated {
            file: file_buf(),
            found: bytes.len() as u64,
            expected: HEADER_LEN as u64,
        });
    }
    for (what, at, oldest, newest) in [
        ("format", 8, OLDEST_FORMAT_VERSION, FORMAT_VERSION),
        ("encoding", 12, ENCODING_VERSION, ENCODING_VERSION),
    ] {
        let found = le_u32(bytes, at);
        if !(oldest..=newest).contains(&found) {
            return Err(ReplayError::Version {
                file: file_buf(),
                what,
                found,
                oldest,
                newest,
            });
        }
    }
    let mut len = [0u8; 8];
    len.copy_from_slice(&bytes[16..24]);
    let body_len = u64::from_le_bytes(len);
    if body_len > MAX_BODY_BYTES as u64 {
        return Err(ReplayError::TooLarge {
            file: file_buf(),
            len: body_len,
        });
    }
    let expected = HEADER_LEN as u64 + body_len;
    let found = bytes.len() as u64;
    if found < expected {
        return Err(ReplayError::Truncated {
            file: file_buf(),
            found,
            expected,
        });
    }
    if found > expected {
        return Err(ReplayError::TrailingBytes {
            file: file_buf(),
            extra: found - expected,
        });
    }
    let body = &bytes[HEADER_LEN..];
    let stored = le_u32(bytes, 24);
    let computed = crc32fast::hash(body);
    if stored != computed {
        return Err(ReplayError::Checksum {
            file: file_buf(),
            stored,
            computed,
        });
    }
    decode_body(body, le_u32(bytes, 8), file)
}

/// Decodes the whole of `body` as a `T`.
fn decode_body_as<T: serde::de::DeserializeOwned>(
    body: &[u8],
    file: &Path,
) -> Result<T, ReplayError> {
    let (wire, used): (T, usize) = bincode::serde::decode_from_slice(body, bincode_config())
        .map_err(|e| ReplayError::Decode {
            file: file.to_path_buf(),
            message: e.to_string().replace('\n', " "),
        })?;
    if used != body.len() {
        return Err(ReplayError::TrailingBytes {
            file: file.to_path_buf(),
            extra: (body.len() - used) as u64,
        });
    }
    Ok(wire)
}

/// Checks that `sparring` strictly increases and indexes `games` games.
fn check_sparring_list(sparring: &[u32], games: usize, file: &Path) -> Result<(), ReplayError> {
    for (k, &index) in sparring.iter().enumerate() {
        let problem = if index as usize >= games {
            format!("game index {index} is beyond the chunk's {games} games")
        } else if k > 0 && index <= sparring[k - 1] {
            let previous = sparring[k - 1];
            format!("game index {index} comes after {previous} (the indices must increase)")
        } else {
            continue;
        };
        return Err(ReplayError::SparringList {
            file: file.to_path_buf(),
            problem,
        });
    }
    Ok(())
}

/// Decodes a body of format `version` whose framing was checked: bincode, then replay of
/// every game.
fn decode_body(body: &[u8], version: u32, file: &Path) -> Result<Chunk, ReplayError> {
    let wire = if version >= SPARRING_FORMAT_VERSION {
        decode_body_as::<WireChunkV3>(body, file)?
    } else {
        let WireChunk { info, games } = decode_body_as(body, file)?;
        WireChunkV3 {
            info,
            games,
            sparring: Vec::new(),
        }
    };
    check_sparring_list(&wire.sparring, wire.games.len(), file)?;
    let mut games = wire
        .games
        .into_iter()
        .map(GameRecord::from_wire)
        .enumerate()
        .map(|(game, g)| {
            g.map_err(|error| ReplayError::Game {
                file: file.to_path_buf(),
                game,
                error,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    for &index in &wire.sparring {
        games[index as usize].sparring = true;
    }
    Ok(Chunk {
        info: wire.info,
        games,
    })
}

/// Encodes `chunk` and writes it atomically to `path` (temporary file, fsync, rename).
pub fn write_chunk(path: &Path, chunk: &Chunk) -> Result<(), ReplayError> {
    let bytes = encode_chunk(chunk).map_err(|error| ReplayError::Encode {
        file: path.to_path_buf(),
        error,
    })?;
    brandubh_fs::write_atomic(path, &bytes)?;
    Ok(())
}

/// Reads, decodes and validates the chunk file at `path`.
pub fn read_chunk(path: &Path) -> Result<Chunk, ReplayError> {
    let bytes = fs::read(path).map_err(|source| ReplayError::Io {
        file: path.to_path_buf(),
        action: "read",
        cause: source,
    })?;
    decode_chunk(&bytes, path)
}

/// A chunk file found by [`list_chunks`].
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ChunkEntry {
    /// The iteration that produced it.
    pub iteration: u32,
    /// Its sequence number within the iteration.
    pub seq: u32,
    /// Its path.
    pub path: PathBuf,
}

/// The file name of chunk `seq` of `iteration`: `chunk-IIIIII-SSSSSS.brz`.
#[must_use]
pub fn chunk_file_name(iteration: u32, seq: u32) -> String {
    format!("chunk-{iteration:06}-{seq:06}.{CHUNK_EXTENSION}")
}

/// The `(iteration, seq)` of a chunk file name, if it is one (temporary files are not).
#[must_use]
pub fn parse_chunk_file_name(name: &str) -> Option<(u32, u32)> {
    let stem = name
        .strip_prefix("chunk-")?
        .strip_suffix(CHUNK_EXTENSION)?
        .strip_suffix('.')?;
    let (iteration, seq) = stem.split_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(iteration) || !digits(seq) {
        return None;
    }
    Some((iteration.parse().ok()?, seq.parse().ok()?))
}

/// The chunk files in `dir`, oldest first (by iteration, then sequence number). Other
/// files, temporary files of interrupted writes included, are ignored; a missing `dir`
/// has no chunks.
pub fn list_chunks(dir: &Path) -> Result<Vec<ChunkEntry>, ReplayError> {
    let io_err = |source| ReplayError::Io {
        file: dir.to_path_buf(),
        action: "list directory",
        cause: source,
    };
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_err(e)),
    };
    let mut chunks = Vec::new();
    for entry in entries {
        let entry = entry.map_err(io_err)?;
        let name = entry.file_name();
        let Some((iteration, seq)) = name.to_str().and_then(parse_chunk_file_name) else {
            continue;
        };
        if entry.file_type().map_err(io_err)?.is_file() {
            chunks.push(ChunkEntry {
                iteration,
                seq,
                path: entry.path(),
            });
        }
    }
    chunks.sort();
    Ok(chunks)
}

#[cfg(test)]
pub(crate) mod testutil {
    //! Random but legal games for tests.

    use super::*;
    use rand::Rng;

    /// A random policy over a non-empty random subset of `legal`.
    pub fn random_policy(rng: &mut impl Rng, legal: &[Move]) -> Vec<(Move, f32)> {
        let mut picked: Vec<(Move, f32)> = Vec::new();
        for &m in legal {
            if rng.random_bool(0.6) {
                picked.push((m, rng.random_range(0.01f32..1.0)));
            }
        }
        if picked.is_empty() {
            picked.push((legal[rng.random_range(0..legal.len())], 1.0));
        }
        let sum: f32 = picked.iter().map(|e| e.1).sum();
        for e in &mut picked {
            e.1 /= sum;
        }
        picked
    }

    /// A game of random legal moves, stopped at `ply_cap`, recording most positions.
    pub fn random_game(rng: &mut impl Rng, ply_cap: usize) -> GameRecord {
        let mut game = Game::new(Position::start());
        let mut positions = Vec::new();
        while !game.is_over() && game.ply() < ply_cap {
            let legal = game.legal_moves();
            if rng.random_bool(0.8) {
                let full_search = rng.random_bool(0.7);
                let policy = if full_search || rng.random_bool(0.5) {
                    random_policy(rng, &legal)
                } else {
                    Vec::new()
                };
                positions.push(PositionRecord {
                    ply: game.ply() as u32,
                    policy,
                    root_value: rng.random_range(-1.0f32..=1.0),
                    full_search,
                });
            }
            let mv = legal[rng.random_range(0..legal.len())];
            game.play(mv).expect("legal move");
        }
        GameRecord {
            start: Position::start(),
            moves: game.moves().to_vec(),
            result: game
                .outcome()
                .map_or(GameResult::Unfinished, GameResult::Finished),
            positions,
            sparring: false,
        }
    }

    /// A chunk of `games` random games.
    pub fn random_chunk(rng: &mut impl Rng, games: usize, iteration: u32) -> Chunk {
        Chunk {
            info: ChunkInfo::new("test-run", iteration),
            games: (0..games).map(|_| random_game(rng, 60)).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testutil::*;
    use super::*;
    use proptest::prelude::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn small_chunk() -> Chunk {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut chunk = random_chunk(&mut rng, 3, 1);
        // Keep it small so that flipping every byte stays fast.
        for g in &mut chunk.games {
            g.moves.truncate(12);
            g.positions.retain(|p| p.ply < 12);
            g.result = GameResult::Unfinished;
        }
        chunk
    }

    #[test]
    fn round_trip_write_read_is_identical() {
        let dir = tempfile::tempdir().unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let chunk = random_chunk(&mut rng, 20, 3);
        assert!(
            chunk
                .games
                .iter()
                .any(|g| g.result != GameResult::Unfinished)
        );
        assert!(
            chunk
                .games
                .iter()
                .any(|g| g.result == GameResult::Unfinished)
        );
        let path = dir.path().join(chunk_file_name(3, 0));
        write_chunk(&path, &chunk).unwrap();
        assert_eq!(read_chunk(&path).unwrap(), chunk);
        assert!(!brandubh_fs::temp_path(&path).exists());
    }

    #[test]
    fn a_chunk_without_sparring_games_is_written_as_version_1() {
        // Older builds read it, and runs without sparring games write the bytes they
        // wrote before format version 2.
        let bytes = encode_chunk(&small_chunk()).unwrap();
        assert_eq!(le_u32(&bytes, 8), OLDEST_FORMAT_VERSION);
        assert_eq!(OLDEST_FORMAT_VERSION, 1);
    }

    /// The body of `small_chunk` with its second game resigned by Black (a retired result).
    fn resigned_games() -> Vec<WireGame> {
        let mut games: Vec<WireGame> = small_chunk()
            .games
            .iter()
            .map(|g| g.to_wire().unwrap())
            .collect();
        games[1].result = WireResult::Resigned { winner: 0 };
        games
    }

    #[test]
    fn a_version_2_chunk_reads_and_a_resigned_game_is_refused_naming_the_commit() {
        // Format version 2 without a resigned game: the layout of version 1.
        let chunk = small_chunk();
        let plain = encode_chunk(&chunk).unwrap();
        assert_eq!(
            decode_chunk(&frame(&plain[HEADER_LEN..]), Path::new("c.brz")).unwrap(),
            chunk
        );
        let expected = "c.brz: game 1: a resigned game: self-play resignation is retired \
                        (configs/ablations/README.md); the build of commit cf0dd85 reads it";
        let info = ChunkInfo::new("x", 1);
        let v2 = WireChunk {
            info: info.clone(),
            games: resigned_games(),
        };
        let body = bincode::serde::encode_to_vec(&v2, bincode_config()).unwrap();
        let err = decode_chunk(&frame(&body), Path::new("c.brz")).unwrap_err();
        assert_eq!(err.to_string(), expected);
        let v3 = WireChunkV3 {
            info,
            games: resigned_games(),
            sparring: vec![1],
        };
        let body = bincode::serde::encode_to_vec(&v3, bincode_config()).unwrap();
        let err = decode_chunk(&frame_as(3, &body), Path::new("c.brz")).unwrap_err();
        assert_eq!(err.to_string(), expected);
    }

    /// `small_chunk` with its first and last games sparring games.
    fn sparring_chunk() -> Chunk {
        let mut chunk = small_chunk();
        chunk.games[0].sparring = true;
        chunk.games[2].sparring = true;
        chunk
    }

    #[test]
    fn sparring_games_round_trip_in_a_version_3_chunk() {
        let dir = tempfile::tempdir().unwrap();
        for chunk in [sparring_chunk(), {
            let mut c = small_chunk();
            c.games[1].sparring = true;
            c
        }] {
            let path = dir.path().join(chunk_file_name(1, 0));
            write_chunk(&path, &chunk).unwrap();
            let bytes = fs::read(&path).unwrap();
            assert_eq!(le_u32(&bytes, 8), 3);
            let read = read_chunk(&path).unwrap();
            assert_eq!(read, chunk);
            let flags: Vec<bool> = read.games.iter().map(|g| g.sparring).collect();
            assert_eq!(
                flags,
                chunk.games.iter().map(|g| g.sparring).collect::<Vec<_>>()
            );
        }
        // The list holds the indices of the sparring games, after the games.
        let body = &encode_chunk(&sparring_chunk()).unwrap()[HEADER_LEN..];
        let wire: WireChunkV3 = decode_body_as(body, Path::new("c.brz")).unwrap();
        assert_eq!(wire.sparring, vec![0, 2]);
    }

    #[test]
    fn a_chunk_of_sparring_games_read_as_an_older_version_is_refused() {
        // The list after the games is bytes an older layout does not expect.
        let bytes = encode_chunk(&sparring_chunk()).unwrap();
        let body = &bytes[HEADER_LEN..];
        let err = decode_chunk(&frame(body), Path::new("c.brz")).unwrap_err();
        assert!(matches!(err, ReplayError::TrailingBytes { .. }), "{err}");
        // And a version-3 header on a body without the list is a decoding error.
        let plain = encode_chunk(&small_chunk()).unwrap();
        let err = decode_chunk(&frame_as(3, &plain[HEADER_LEN..]), Path::new("c.brz")).unwrap_err();
        assert!(matches!(err, ReplayError::Decode { .. }), "{err}");
    }

    #[test]
    fn a_list_of_sparring_games_must_name_each_game_once_in_order() {
        let games = || vec![wire_game(), wire_game(), wire_game()];
        for (sparring, message) in [
            (vec![3], "game index 3 is beyond the chunk's 3 games"),
            (vec![0, 7], "game index 7 is beyond the chunk's 3 games"),
            (
                vec![1, 1],
                "game index 1 comes after 1 (the indices must increase)",
            ),
            (
                vec![2, 0],
                "game index 0 comes after 2 (the indices must increase)",
            ),
        ] {
            let wire = WireChunkV3 {
                info: ChunkInfo::new("t", 1),
                games: games(),
                sparring,
            };
            let body = bincode::serde::encode_to_vec(&wire, bincode_config()).unwrap();
            let err = decode_chunk(&frame_as(3, &body), Path::new("c.brz")).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!("c.brz: list of sparring games: {message}")
            );
        }
        // A valid list marks exactly those games.
        let wire = WireChunkV3 {
            info: ChunkInfo::new("t", 1),
            games: games(),
            sparring: vec![1, 2],
        };
        let body = bincode::serde::encode_to_vec(&wire, bincode_config()).unwrap();
        let chunk = decode_chunk(&frame_as(3, &body), Path::new("c.brz")).unwrap();
        let flags: Vec<bool> = chunk.games.iter().map(|g| g.sparring).collect();
        assert_eq!(flags, vec![false, true, true]);
    }

    #[test]
    fn value_targets_of_every_result() {
        let escape = Outcome {
            winner: Side::White,
            reason: Reason::KingEscaped,
        };
        for (result, white, black) in [
            (GameResult::Finished(escape), 1.0, -1.0),
            (
                GameResult::Finished(Outcome {
                    winner: Side::Black,
                    reason: Reason::KingCaptured,
                }),
                -1.0,
                1.0,
            ),
            (GameResult::Unfinished, 0.0, 0.0),
        ] {
            assert_eq!(result.value_for(Side::White), white, "{result:?}");
            assert_eq!(result.value_for(Side::Black), black, "{result:?}");
        }
    }

    #[test]
    fn bytes_per_position_are_modest() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let chunk = random_chunk(&mut rng, 50, 1);
        let bytes = encode_chunk(&chunk).unwrap();
        let entries: usize = chunk
            .games
            .iter()
            .flat_map(|g| &g.positions)
            .map(|p| p.policy.len())
            .sum();
        let positions = chunk.position_count();
        // Per position: ply (1), policy length (1), root value (4), full-search flag (1),
        // 5 bytes per policy entry; 2 bytes per move and ~30 bytes per game besides.
        let per_position = bytes.len() as f64 / positions as f64;
        let moves: usize = chunk.games.iter().map(|g| g.moves.len()).sum();
        let bound = HEADER_LEN + 100 + 7 * positions + 5 * entries + 2 * moves + 40 * 50;
        assert!(bytes.len() <= bound, "{} > {bound}", bytes.len());
        eprintln!(
            "{positions} positions, {entries} policy entries, {} bytes: {per_position:.1} bytes/position",
            bytes.len()
        );
    }

    #[test]
    fn every_truncation_is_an_error() {
        let bytes = encode_chunk(&small_chunk()).unwrap();
        for len in 0..bytes.len() {
            let err = decode_chunk(&bytes[..len], Path::new("c.brz")).unwrap_err();
            assert!(
                matches!(err, ReplayError::Truncated { .. }),
                "length {len}: {err}"
            );
            assert!(err.to_string().starts_with("c.brz: truncated"));
        }
    }

    #[test]
    fn every_flipped_byte_is_an_error() {
        let bytes = encode_chunk(&small_chunk()).unwrap();
        for i in 0..bytes.len() {
            for flip in [0x01u8, 0x80, 0xff] {
                let mut bad = bytes.clone();
                bad[i] ^= flip;
                let err = decode_chunk(&bad, Path::new("c.brz")).unwrap_err();
                let msg = err.to_string();
                assert!(msg.starts_with("c.brz: "), "{msg}");
                assert!(!msg.contains('\n'), "{msg}");
            }
        }
    }

    #[test]
    fn header_errors_are_typed() {
        let bytes = encode_chunk(&small_chunk()).unwrap();
        let p = Path::new("runs/x/chunks/c.brz");
        // The chunk with the header bytes from `at` replaced by `with`, decoded.
        let patched = |at: usize, with: &[u8]| {
            let mut bad = bytes.clone();
            bad[at..at + with.len()].copy_from_slice(with);
            decode_chunk(&bad, p)
        };
        let err = patched(8, &4u32.to_le_bytes()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "runs/x/chunks/c.brz: unsupported format version 4 (this build reads versions 1 to 3)"
        );
        for (at, with) in [(8, 0u32), (12, 9)] {
            let err = patched(at, &with.to_le_bytes()).unwrap_err();
            let what = if at == 8 { "format" } else { "encoding" };
            assert!(
                matches!(err, ReplayError::Version { what: w, found, .. } if w == what && found == with),
                "{err}"
            );
        }
        let mut long = bytes.clone();
        long.extend_from_slice(b"junk");
        let errors = [
            patched(0, b"NOTCHUNK").unwrap_err(),
            decode_chunk(&long, p).unwrap_err(),
            patched(16, &u64::MAX.to_le_bytes()).unwrap_err(),
            decode_chunk(b"", p).unwrap_err(),
            decode_chunk(b"hello", p).unwrap_err(),
        ];
        assert!(
            matches!(errors[0], ReplayError::BadMagic { .. }),
            "{}",
            errors[0]
        );
        assert!(
            matches!(errors[1], ReplayError::TrailingBytes { extra: 4, .. }),
            "{}",
            errors[1]
        );
        assert!(
            matches!(errors[2], ReplayError::TooLarge { .. }),
            "{}",
            errors[2]
        );
        assert!(
            matches!(errors[3], ReplayError::Truncated { .. }),
            "{}",
            errors[3]
        );
        assert!(
            matches!(errors[4], ReplayError::BadMagic { .. }),
            "{}",
            errors[4]
        );
        // A length prefix of 2^64 - 1 for the first string: refused by the bincode limit,
        // not allocated; and one of 48 MiB likewise.
        let huge = [253u8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, b'x'];
        let near_limit = [253u8, 0, 0, 0, 0x03, 0, 0, 0, 0, b'x'];
        for body in [&huge, &near_limit] {
            let err = decode_chunk(&frame(body), p).unwrap_err();
            assert!(matches!(err, ReplayError::Decode { .. }), "{err}");
        }
    }

    /// `body`, a body without a list of sparring games, framed as a version-2 chunk.
    fn frame(body: &[u8]) -> Vec<u8> {
        frame_as(2, body)
    }

    /// Frames `body` as a chunk of format `version` with a correct header and checksum,
    /// bypassing the encoder's checks.
    fn frame_as(version: u32, body: &[u8]) -> Vec<u8> {
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&version.to_le_bytes());
        bytes.extend_from_slice(&ENCODING_VERSION.to_le_bytes());
        bytes.extend_from_slice(&(body.len() as u64).to_le_bytes());
        bytes.extend_from_slice(&crc32fast::hash(body).to_le_bytes());
        bytes.extend_from_slice(body);
        bytes
    }

    fn wire_game() -> WireGame {
        let start = Position::start();
        let legal = start.legal_moves();
        WireGame {
            attackers: start.attackers().0,
            defenders: start.defenders().0,
            king: start.king().index() as u8,
            side: 0,
            moves: vec![[legal[0].from.index() as u8, legal[0].to.index() as u8]],
            result: WireResult::Unfinished,
            positions: vec![WirePosition {
                ply: 0,
                policy: vec![(0, 0.5), (1, 0.5)],
                root_value: 0.0,
                full_search: true,
            }],
        }
    }

    fn decode_wire(game: WireGame) -> Result<Chunk, ReplayError> {
        let wire = WireChunk {
            info: ChunkInfo::new("t", 1),
            games: vec![game],
        };
        let body = bincode::serde::encode_to_vec(&wire, bincode_config()).unwrap();
        decode_chunk(&frame(&body), Path::new("c.brz"))
    }

    fn game_error(game: WireGame) -> GameError {
        match decode_wire(game) {
            Err(ReplayError::Game { error, game: 0, .. }) => error,
            other => panic!("expected a game error, got {other:?}"),
        }
    }

    #[test]
    #[expect(
        clippy::too_many_lines,
        reason = "a test: one table of cases or one scenario, read top to bottom"
    )]
    fn semantic_errors_are_caught_with_a_valid_checksum() {
        assert!(decode_wire(wire_game()).is_ok());
        let mut g = wire_game();
        g.attackers |= 1; // an attacker on the corner a1
        assert!(matches!(game_error(g), GameError::BadStart(_)));
        let mut g = wire_game();
        g.defenders |= g.attackers & g.attackers.wrapping_neg(); // overlap
        assert!(matches!(game_error(g), GameError::BadStart(_)));
        let mut g = wire_game();
        g.king = 49;
        assert!(matches!(game_error(g), GameError::BadStart(_)));
        let mut g = wire_game();
        g.side = 2;
        assert!(matches!(game_error(g), GameError::BadStart(_)));
        let mut g = wire_game();
        g.moves[0] = [3, 4]; // d1-e1 is legal for Black, but White is to move
        assert!(matches!(
            game_error(g),
            GameError::IllegalMove { ply: 0, .. }
        ));
        let mut g = wire_game();
        g.moves[0] = [60, 4];
        assert!(matches!(
            game_error(g),
            GameError::BadSquare { index: 60, .. }
        ));
        let mut g = wire_game();
        g.result = WireResult::Finished {
            winner: 0,
            reason: 0,
        };
        assert!(matches!(game_error(g), GameError::ResultMismatch { .. }));
        let mut g = wire_game();
        g.result = WireResult::Finished {
            winner: 0,
            reason: 9,
        };
        assert!(matches!(game_error(g), GameError::BadResult { .. }));
        let mut g = wire_game();
        g.positions[0].policy[1].0 = 200;
        assert!(matches!(
            game_error(g),
            GameError::PolicyIndex { index: 200, .. }
        ));
        let mut g = wire_game();
        g.positions[0].policy[1].0 = 0;
        assert!(matches!(game_error(g), GameError::PolicyDuplicate { .. }));
        let mut g = wire_game();
        g.positions[0].policy[1].1 = 0.1;
        assert!(matches!(game_error(g), GameError::PolicySum { .. }));
        let mut g = wire_game();
        g.positions[0].policy[1].1 = f32::NAN;
        assert!(matches!(game_error(g), GameError::Probability { .. }));
        let mut g = wire_game();
        g.positions[0].policy.clear();
        assert!(matches!(game_error(g), GameError::EmptyPolicy { ply: 0 }));
        let mut g = wire_game();
        g.positions[0].root_value = 1.5;
        assert!(matches!(game_error(g), GameError::RootValue { .. }));
        let mut g = wire_game();
        g.positions[0].ply = 2;
        assert!(matches!(
            game_error(g),
            GameError::PlyOutOfRange { ply: 2, moves: 1 }
        ));
        let mut g = wire_game();
        let p = g.positions.remove(0);
        g.positions.push(WirePosition { ply: 1, ..p });
        g.positions.push(WirePosition {
            ply: 0,
            policy: vec![(0, 1.0)],
            root_value: 0.0,
            full_search: true,
        });
        assert!(matches!(game_error(g), GameError::PliesOutOfOrder { .. }));
        let msg = decode_wire({
            let mut g = wire_game();
            g.moves[0] = [3, 4];
            g
        })
        .unwrap_err()
        .to_string();
        assert!(
            msg.starts_with("c.brz: game 0: move at ply 0: illegal move d1-e1"),
            "{msg}"
        );
    }

    #[test]
    fn recorded_position_after_the_end_is_rejected() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let game = (0..100)
            .map(|_| random_game(&mut rng, 200))
            .find(|g| g.result != GameResult::Unfinished)
            .expect("some random game finishes");
        let mut bad = game.clone();
        bad.positions.push(PositionRecord {
            ply: game.moves.len() as u32,
            policy: Vec::new(),
            root_value: 0.0,
            full_search: false,
        });
        assert!(matches!(bad.validate(), Err(GameError::AfterEnd { .. })));
        game.validate().unwrap();
    }

    #[test]
    fn writer_rejects_invalid_games() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let mut chunk = random_chunk(&mut rng, 2, 1);
        let p = &mut chunk.games[1].positions[0];
        p.policy = vec![("a1-a2".parse().unwrap(), 1.0)];
        let err = encode_chunk(&chunk).unwrap_err();
        assert!(matches!(
            err,
            EncodeError::Game {
                game: 1,
                error: GameError::PolicyMove { .. }
            }
        ));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("chunk-000001-000000.brz");
        let msg = write_chunk(&path, &chunk).unwrap_err().to_string();
        assert!(
            msg.contains("chunk-000001-000000.brz: cannot write chunk: game 1: "),
            "{msg}"
        );
        assert!(!path.exists());
    }

    #[test]
    fn listing_orders_chunks_and_ignores_temporary_and_other_files() {
        let dir = tempfile::tempdir().unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let chunk = random_chunk(&mut rng, 1, 1);
        for (it, seq) in [(10, 0), (2, 1), (2, 0), (1, 12)] {
            write_chunk(&dir.path().join(chunk_file_name(it, seq)), &chunk).unwrap();
        }
        let tmp = brandubh_fs::temp_path(&dir.path().join(chunk_file_name(11, 0)));
        fs::write(&tmp, b"BRZCHUNK partial").unwrap();
        fs::write(dir.path().join("notes.txt"), b"x").unwrap();
        fs::write(dir.path().join("chunk-1-x.brz"), b"x").unwrap();
        fs::create_dir(dir.path().join(chunk_file_name(12, 0))).unwrap();
        let listed: Vec<(u32, u32)> = list_chunks(dir.path())
            .unwrap()
            .iter()
            .map(|c| (c.iteration, c.seq))
            .collect();
        assert_eq!(listed, [(1, 12), (2, 0), (2, 1), (10, 0)]);
        assert!(list_chunks(&dir.path().join("missing")).unwrap().is_empty());
        assert_eq!(
            parse_chunk_file_name("chunk-000003-000004.brz"),
            Some((3, 4))
        );
        assert_eq!(parse_chunk_file_name("chunk-000003-000004.brz.tmp"), None);
        assert_eq!(parse_chunk_file_name("chunk--1.brz"), None);
        assert_eq!(parse_chunk_file_name("chunk-+1-1.brz"), None);
    }

    #[test]
    fn samples_reconstruct_positions_and_results() {
        let mut rng = ChaCha8Rng::seed_from_u64(21);
        for _ in 0..20 {
            let game = random_game(&mut rng, 80);
            let samples = game.samples().unwrap();
            assert_eq!(samples.len(), game.positions.len());
            let mut replay = Game::new(game.start);
            for (s, rec) in samples.iter().zip(&game.positions) {
                while replay.ply() < rec.ply as usize {
                    replay.play(game.moves[replay.ply()]).unwrap();
                }
                assert_eq!(s.position, *replay.position());
                assert_eq!(s.repetitions, replay.repetitions());
                assert_eq!(s.result, game.result.value_for(s.position.side_to_move()));
                assert_eq!(s.plies_to_end as usize, game.moves.len() - replay.ply());
                assert!(s.plies_to_end >= 1);
                let legal = s.position.legal_moves();
                assert!(s.policy.iter().all(|(m, _)| legal.contains(m)));
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        /// Arbitrary bodies behind a valid header and checksum never panic the decoder.
        #[test]
        fn garbage_bodies_never_panic(body in proptest::collection::vec(any::<u8>(), 0..400)) {
            let _ = decode_chunk(&frame(&body), Path::new("g.brz"));
        }

        /// A valid body with random bytes changed (checksum recomputed) decodes or fails
        /// cleanly.
        #[test]
        fn mutated_bodies_never_panic(seed in any::<u64>(), edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8)) {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut chunk = random_chunk(&mut rng, 2, 1);
            // Half the chunks have a list of sparring games (format version 3).
            chunk.games[1].sparring = seed % 2 == 1;
            let bytes = encode_chunk(&chunk).unwrap();
            let mut body = bytes[HEADER_LEN..].to_vec();
            for (at, value) in edits {
                let i = at % body.len();
                body[i] = value;
            }
            if let Err(e) = decode_chunk(&frame_as(le_u32(&bytes, 8), &body), Path::new("m.brz")) {
                prop_assert!(e.to_string().starts_with("m.brz: "));
            }
        }
    }
}
