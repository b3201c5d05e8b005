//! Board → input planes and move ↔ policy index: pure functions, no tensor library.
//!
//! # Input planes
//!
//! A position is written as [`NUM_PLANES`] planes of 7×7 `f32`, laid out
//! `[plane][rank][file]` (so the flat offset is `plane * 49 + square.index()`). The board is
//! always seen from the same, absolute orientation (`a1` at `[0][0]`); the side to move is
//! an input plane instead of a flip of the board.
//!
//! | plane | meaning |
//! |---|---|
//! | 0 [`PLANE_ATTACKERS`] | 1 on every attacker |
//! | 1 [`PLANE_DEFENDERS`] | 1 on every defender |
//! | 2 [`PLANE_KING`] | 1 on the King |
//! | 3 [`PLANE_WHITE_TO_MOVE`] | all 1 when White is to move, all 0 when Black is |
//! | 4 [`PLANE_RESTRICTED`] | 1 on the Castle and the four corners |
//! | 5 [`PLANE_ONES`] | all 1 (lets zero-padded convolutions see the board edge) |
//! | 6, 7, 8 [`PLANE_REPETITIONS`] | all 1 when the position has occurred at least 2, 3, 4 times |
//!
//! The repetition planes matter because the fifth occurrence of a position loses for White
//! (rule 8.4).
//!
//! A network may also take three *King planes* after these ([`NUM_PLANES_WITH_KING`] planes
//! in all; `NetConfig::input_planes` says which layout a network takes): exact facts about
//! the King's escape (rule 8.1) that a small convolutional tower would otherwise have to
//! learn to trace along ranks and files.
//!
//! | plane | meaning |
//! |---|---|
//! | 9 [`PLANE_KING_MOVES`] | 1 on every square the King can move to now (rules 2, 3) |
//! | 10 [`PLANE_KING_TWO_MOVES`] | 1 on every square it can reach in two moves, the other pieces standing still (its own square excluded) |
//! | 11 [`PLANE_CORNER_LINES`] | 1 on every square from which the King would reach a corner in one move, the other pieces where they are (squares holding an attacker or a defender excluded) |
//!
//! A network with the King planes may also take four *threat planes* after them
//! ([`NUM_PLANES_WITH_THREATS`] planes in all): where each side's pieces can go now and which
//! pieces each side could capture with one move, facts that need whole-board slides and the
//! capture rules (4–7) to compute.
//!
//! | plane | meaning |
//! |---|---|
//! | 12 [`PLANE_ATTACKER_REACH`] | 1 on every square some attacker can move to now, whoever is to move (rules 2, 3) |
//! | 13 [`PLANE_DEFENDER_REACH`] | 1 on every square some defender can move to now (the King's are plane 9) |
//! | 14 [`PLANE_WHITE_THREATENED`] | 1 on every defender, and on the King, that one move of Black would capture (rules 5–7), were it Black's turn |
//! | 15 [`PLANE_BLACK_THREATENED`] | 1 on every attacker that one move of White would capture (rules 5, 6), were it White's turn |
//!
//! A network with the threat planes may also take three *escape planes* after them
//! ([`NUM_PLANES_WITH_ESCAPES`] planes in all): where the King's escape routes run, two
//! moves deep, and which of them only the attackers close; facts that Black's defence rests
//! on and that need slides across the board to compute. Each is over the squares a King
//! could stand on (no attacker, defender or corner there), the King imagined there with every
//! other piece where it is (the real King's square empty).
//!
//! | plane | meaning |
//! |---|---|
//! | 16 [`PLANE_CORNER_FORKS`] | 1 on every square from which the King would reach two or more corners in one move (a double threat one blocker cannot meet) |
//! | 17 [`PLANE_CORNER_TWO_MOVES`] | 1 on every square from which the King would reach a corner in at most two moves (a superset of plane 11) |
//! | 18 [`PLANE_ATTACKER_LINES`] | 1 on every square (no attacker or corner there) from which the King would reach a corner in one move were the defenders off the board: the lines only the attackers close |
//!
//! The writer ([`encode_into`]) takes the layout from the length of its output; [`LAYOUTS`]
//! lists the plane counts it writes.
//!
//! # Policy index
//!
//! Every rook move is `from` (49 squares) × direction (4, in [`Direction::ALL`] order:
//! N, E, S, W) × distance (1..=6), so
//! `index = (from.index() * 4 + direction.index()) * 6 + (distance - 1)`, 0..[`POLICY_SIZE`].
//! Indices whose move would leave the board exist but never name a legal move.
//!
//! Both encodings commute with the 8 symmetries of the board
//! ([`transform_planes`], [`transform_policy_index`]).
//!
//! ```
//! use brandubh_net::encoding::{self, INPUT_SIZE, PLANE_KING};
//! use brandubh_rules::{Move, Position, Square};
//!
//! let planes = encoding::encode(&Position::start(), 1);
//! assert_eq!(planes.len(), INPUT_SIZE);
//! assert_eq!(planes[PLANE_KING * 49 + Square::CASTLE.index()], 1.0);
//!
//! let mv: Move = "d5-c5".parse()?;
//! let index = encoding::policy_index(mv).expect("a rook move");
//! assert_eq!(encoding::index_to_move(index), Some(mv));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use brandubh_rules::{Bitboard, Direction, Move, NUM_SQUARES, Position, Side, Square, Symmetry};

/// Version of the input-plane and policy-index layouts. Checkpoints record it; bump it on
/// any change to this module's layouts.
pub const ENCODING_VERSION: u32 = 1;

/// Width and height of the board.
pub const BOARD_SIZE: usize = 7;
/// Squares per plane.
pub const PLANE_SIZE: usize = NUM_SQUARES;
/// Number of input planes of the basic layout (every network without King planes).
pub const NUM_PLANES: usize = 9;
/// `f32` values per encoded position in the basic layout: `NUM_PLANES * 49`.
pub const INPUT_SIZE: usize = NUM_PLANES * PLANE_SIZE;
/// Number of input planes with the three King planes.
pub const NUM_PLANES_WITH_KING: usize = NUM_PLANES + 3;
/// Number of input planes with the King planes and the four threat planes.
pub const NUM_PLANES_WITH_THREATS: usize = NUM_PLANES_WITH_KING + 4;
/// Number of input planes with the King, threat and escape planes.
pub const NUM_PLANES_WITH_ESCAPES: usize = NUM_PLANES_WITH_THREATS + 3;
/// Every layout the encoder writes, by number of planes: the basic one, with the King
/// planes, with the King and threat planes, with the King, threat and escape planes. A
/// network's `input_planes` must be one of them.
pub const LAYOUTS: [usize; 4] = [
    NUM_PLANES,
    NUM_PLANES_WITH_KING,
    NUM_PLANES_WITH_THREATS,
    NUM_PLANES_WITH_ESCAPES,
];

/// The layout a network with these input features takes: the basic one, with the King
/// planes (`king_planes`), with the King and threat planes (`threat_planes`), with all three
/// groups (`escape_planes`). Each group comes after the one before and so implies it; a
/// run's config refuses a group without the one before by name before it gets here.
#[must_use]
pub fn layout(king_planes: bool, threat_planes: bool, escape_planes: bool) -> usize {
    if escape_planes {
        NUM_PLANES_WITH_ESCAPES
    } else if threat_planes {
        NUM_PLANES_WITH_THREATS
    } else if king_planes {
        NUM_PLANES_WITH_KING
    } else {
        NUM_PLANES
    }
}

/// Whether the encoder writes a layout of `planes` planes (one of [`LAYOUTS`]).
#[must_use]
pub fn is_layout(planes: usize) -> bool {
    LAYOUTS.contains(&planes)
}

/// Plane of the attackers.
pub const PLANE_ATTACKERS: usize = 0;
/// Plane of the defenders.
pub const PLANE_DEFENDERS: usize = 1;
/// Plane of the King.
pub const PLANE_KING: usize = 2;
/// Constant plane: 1 when White is to move.
pub const PLANE_WHITE_TO_MOVE: usize = 3;
/// Plane of the restricted squares (Castle and corners).
pub const PLANE_RESTRICTED: usize = 4;
/// Constant plane of ones.
pub const PLANE_ONES: usize = 5;
/// Constant planes for "occurred at least 2, 3, 4 times".
pub const PLANE_REPETITIONS: [usize; 3] = [6, 7, 8];
/// King plane: the squares the King can move to.
pub const PLANE_KING_MOVES: usize = 9;
/// King plane: the squares the King can reach in two moves.
pub const PLANE_KING_TWO_MOVES: usize = 10;
/// King plane: the squares from which the King would reach a corner in one move.
pub const PLANE_CORNER_LINES: usize = 11;
/// Threat plane: the squares some attacker can move to.
pub const PLANE_ATTACKER_REACH: usize = 12;
/// Threat plane: the squares some defender can move to.
pub const PLANE_DEFENDER_REACH: usize = 13;
/// Threat plane: the white pieces one move of Black would capture.
pub const PLANE_WHITE_THREATENED: usize = 14;
/// Threat plane: the attackers one move of White would capture.
pub const PLANE_BLACK_THREATENED: usize = 15;
/// Escape plane: the squares from which the King would reach two or more corners in one move.
pub const PLANE_CORNER_FORKS: usize = 16;
/// Escape plane: the squares from which the King would reach a corner in at most two moves.
pub const PLANE_CORNER_TWO_MOVES: usize = 17;
/// Escape plane: the squares from which the King would reach a corner in one move were the
/// defenders off the board.
pub const PLANE_ATTACKER_LINES: usize = 18;

/// Move directions per square.
pub const NUM_DIRECTIONS: usize = 4;
/// Longest slide on a 7×7 board.
pub const MAX_DISTANCE: usize = 6;
/// Number of policy logits: 49 × 4 × 6 = 1176.
pub const POLICY_SIZE: usize = NUM_SQUARES * NUM_DIRECTIONS * MAX_DISTANCE;

/// Writes the planes of `position` (which has occurred `repetitions` times, this time
/// included) into `out`, in the layout of `out.len() / 49` planes (one of [`LAYOUTS`]).
///
/// # Panics
/// If `out` has any other length (a programming error, not a data error).
pub fn encode_into(position: &Position, repetitions: u32, out: &mut [f32]) {
    let planes = out.len() / PLANE_SIZE;
    assert!(
        out.len().is_multiple_of(PLANE_SIZE) && is_layout(planes),
        "encode_into needs 9, 12, 16 or 19 planes of 49 values, got {}",
        out.len()
    );
    let king_planes = planes >= NUM_PLANES_WITH_KING;
    let mut corner_lines = Bitboard::EMPTY;
    out.fill(0.0);
    let mut set = |plane: usize, bb: Bitboard| {
        for sq in bb {
            out[plane * PLANE_SIZE + sq.index()] = 1.0;
        }
    };
    set(PLANE_ATTACKERS, position.attackers());
    set(PLANE_DEFENDERS, position.defenders());
    set(PLANE_KING, position.king().bb());
    set(PLANE_RESTRICTED, Bitboard::RESTRICTED);
    if king_planes {
        let [moves, two_moves, lines] = king_plane_bitboards(position);
        set(PLANE_KING_MOVES, moves);
        set(PLANE_KING_TWO_MOVES, two_moves);
        set(PLANE_CORNER_LINES, lines);
        corner_lines = lines;
    }
    if planes >= NUM_PLANES_WITH_THREATS {
        let [
            attacker_reach,
            defender_reach,
            white_threatened,
            black_threatened,
        ] = threat_plane_bitboards(position);
        set(PLANE_ATTACKER_REACH, attacker_reach);
        set(PLANE_DEFENDER_REACH, defender_reach);
        set(PLANE_WHITE_THREATENED, white_threatened);
        set(PLANE_BLACK_THREATENED, black_threatened);
    }
    if planes == NUM_PLANES_WITH_ESCAPES {
        let [forks, two_moves, attacker_lines] = escape_planes_from_lines(position, corner_lines);
        set(PLANE_CORNER_FORKS, forks);
        set(PLANE_CORNER_TWO_MOVES, two_moves);
        set(PLANE_ATTACKER_LINES, attacker_lines);
    }
    let mut fill = |plane: usize| {
        out[plane * PLANE_SIZE..(plane + 1) * PLANE_SIZE].fill(1.0);
    };
    if position.side_to_move() == Side::White {
        fill(PLANE_WHITE_TO_MOVE);
    }
    fill(PLANE_ONES);
    for (i, &plane) in PLANE_REPETITIONS.iter().enumerate() {
        if repetitions >= i as u32 + 2 {
            fill(plane);
        }
    }
}

/// The three King planes of `position` as bitboards (see the module's table).
#[must_use]
pub fn king_plane_bitboards(position: &Position) -> [Bitboard; 3] {
    let king = position.king();
    let moves = position.targets(king);
    let mut two_moves = moves;
    for sq in moves {
        two_moves |= position.king_targets_from(sq);
    }
    let two_moves = two_moves.without(king);
    let others = position.attackers() | position.defenders() | Bitboard::CORNERS;
    [moves, two_moves, corner_lines(position, others)]
}

/// The squares not in `excluded` from which the King of `position` would reach a corner in
/// one move, imagined there with every other piece where it is (plane 11 with the pieces
/// and corners excluded; plane 18 on a position without defenders).
fn corner_lines(position: &Position, excluded: Bitboard) -> Bitboard {
    Square::all()
        .filter(|&sq| {
            !excluded.contains(sq)
                && !(position.king_targets_from(sq) & Bitboard::CORNERS).is_empty()
        })
        .fold(Bitboard::EMPTY, Bitboard::with)
}

/// The three escape planes of `position` as bitboards (see the module's table): the
/// squares from which the King would reach two or more corners in one move, those from
/// which it would reach a corner in at most two moves, and those from which it would reach
/// a corner in one move were the defenders off the board.
#[must_use]
pub fn escape_plane_bitboards(position: &Position) -> [Bitboard; 3] {
    escape_planes_from_lines(position, king_plane_bitboards(position)[2])
}

/// [`escape_plane_bitboards`] given `lines`, the position's plane 11 (which the encoder has
/// computed for the King planes already).
fn escape_planes_from_lines(position: &Position, lines: Bitboard) -> [Bitboard; 3] {
    let free = |sq: Square| {
        !(position.attackers() | position.defenders() | Bitboard::CORNERS).contains(sq)
    };
    // Every fork is a line square.
    let forks = lines
        .into_iter()
        .filter(|&sq| (position.king_targets_from(sq) & Bitboard::CORNERS).count() >= 2)
        .fold(Bitboard::EMPTY, Bitboard::with);
    // Two moves: a first move to a corner, or to a square with a line to one. The square
    // the King left is empty for the second move as it was (a free square), so the lines
    // above are the second move's.
    let goals = lines | Bitboard::CORNERS;
    let two_moves = Square::all()
        .filter(|&sq| free(sq) && !(position.king_targets_from(sq) & goals).is_empty())
        .fold(Bitboard::EMPTY, Bitboard::with);
    // The defenders taken off: only the attackers (and the King's own square, empty for a
    // King imagined elsewhere) stand in the way.
    let attackers_only = Position::from_parts(
        position.attackers(),
        Bitboard::EMPTY,
        position.king(),
        position.side_to_move(),
    );
    let attacker_lines = attackers_only.map_or(Bitboard::EMPTY, |p| {
        corner_lines(&p, position.attackers() | Bitboard::CORNERS)
    });
    [forks, two_moves, attacker_lines]
}

/// The four threat planes of `position` as bitboards (see the module's table): the
/// attackers' and the defenders' reach, the white pieces Black could capture and the
/// attackers White could capture, each with one move, whoever is to move.
#[must_use]
pub fn threat_plane_bitboards(position: &Position) -> [Bitboard; 4] {
    // For each side, one pass over its pieces gives both where they can move and every
    // capture it could make with one move: the rules' own move, played. What a move takes
    // depends only on the square it lands on (rules 5-7; the King captures like a
    // defender): the square it left lies on the line it came along, so it is never the far
    // side of a piece it takes, nor one of the Castle's neighbours an attacker stands on.
    // So one move per destination is played. The King's destinations count for White's
    // captures but not for the defenders' plane (the King planes show them).
    let scan = |side: Side| {
        let p = position.with_side_to_move(side);
        let (mut reach, mut taken, mut landed) =
            (Bitboard::EMPTY, Bitboard::EMPTY, Bitboard::EMPTY);
        for from in position.pieces(side) {
            let targets = position.targets(from);
            if from != position.king() {
                reach |= targets;
            }
            for to in targets {
                if landed.contains(to) {
                    continue;
                }
                landed = landed.with(to);
                let effect = p.play_unchecked(Move { from, to });
                taken |= effect.captured;
                if effect.king_captured {
                    taken = taken.with(p.king());
                }
            }
        }
        (reach, taken)
    };
    let (black_reach, black_takes) = scan(Side::Black);
    let (white_reach, white_takes) = scan(Side::White);
    [black_reach, white_reach, black_takes, white_takes]
}

/// The planes of `position`, which has occurred `repetitions` times (this time included),
/// in the basic layout.
#[must_use]
pub fn encode(position: &Position, repetitions: u32) -> Vec<f32> {
    encode_planes(position, repetitions, NUM_PLANES)
}

/// The planes of `position` in the layout of `planes` planes (one of [`LAYOUTS`]).
///
/// # Panics
/// If `planes` is not a layout.
#[must_use]
pub fn encode_planes(position: &Position, repetitions: u32, planes: usize) -> Vec<f32> {
    let mut out = vec![0.0; planes * PLANE_SIZE];
    encode_into(position, repetitions, &mut out);
    out
}

/// Writes the image of encoded `planes` under `sym` into `out`: the value of square `s`
/// goes to square `sym.square(s)`, in every plane. Both slices hold a whole number of
/// planes, the same number.
///
/// # Panics
/// If the lengths differ or are not a multiple of 49.
pub fn transform_planes(sym: Symmetry, planes: &[f32], out: &mut [f32]) {
    assert_eq!(
        planes.len(),
        out.len(),
        "transform_planes needs equal lengths"
    );
    assert_eq!(
        planes.len() % PLANE_SIZE,
        0,
        "transform_planes needs whole planes"
    );
    let map = &TABLES.square[sym.index()];
    for (src, dst) in planes
        .chunks_exact(PLANE_SIZE)
        .zip(out.chunks_exact_mut(PLANE_SIZE))
    {
        for (sq, &v) in src.iter().enumerate() {
            dst[map[sq] as usize] = v;
        }
    }
}

/// The policy index of a rook move (`from` and `to` on one rank or file, distinct);
/// `None` for anything else. Legality is not checked.
#[must_use]
pub fn policy_index(mv: Move) -> Option<usize> {
    let (ff, fr) = (mv.from.file() as i32, mv.from.rank() as i32);
    let (tf, tr) = (mv.to.file() as i32, mv.to.rank() as i32);
    let (dir, dist) = match (tf - ff, tr - fr) {
        (0, d) if d > 0 => (Direction::North, d),
        (d, 0) if d > 0 => (Direction::East, d),
        (0, d) if d < 0 => (Direction::South, -d),
        (d, 0) if d < 0 => (Direction::West, -d),
        _ => return None,
    };
    Some(raw_index(mv.from.index(), dir.index(), dist as usize))
}

/// The move a policy index names, if it stays on the board.
#[must_use]
pub fn index_to_move(index: usize) -> Option<Move> {
    if index >= POLICY_SIZE {
        return None;
    }
    let (from, dir, dist) = split_index(index);
    let from = Square::new(from as u8)?;
    let (df, dr) = Direction::ALL[dir].delta();
    let f = from.file() as i32 + df as i32 * dist as i32;
    let r = from.rank() as i32 + dr as i32 * dist as i32;
    if !(0..BOARD_SIZE as i32).contains(&f) || !(0..BOARD_SIZE as i32).contains(&r) {
        return None;
    }
    let to = Square::from_coords(f as u8, r as u8)?;
    Some(Move::new(from, to))
}

/// The index of the image under `sym` of the move with policy index `index`:
/// `policy_index(sym.mv(m)) == Some(transform_policy_index(sym, policy_index(m)?))`.
/// Off-board indices map to off-board indices, so this is a permutation of `0..POLICY_SIZE`.
///
/// # Panics
/// If `index >= POLICY_SIZE`.
#[must_use]
pub fn transform_policy_index(sym: Symmetry, index: usize) -> usize {
    TABLES.policy[sym.index()][index] as usize
}

/// Writes the image of a policy vector under `sym` into `out`: the value at `i` goes to
/// `transform_policy_index(sym, i)`. Both slices hold [`POLICY_SIZE`] values.
///
/// # Panics
/// If a length is not [`POLICY_SIZE`].
pub fn transform_policy(sym: Symmetry, policy: &[f32], out: &mut [f32]) {
    assert_eq!(
        policy.len(),
        POLICY_SIZE,
        "transform_policy needs POLICY_SIZE values"
    );
    assert_eq!(
        out.len(),
        POLICY_SIZE,
        "transform_policy needs POLICY_SIZE values"
    );
    for (i, &v) in policy.iter().enumerate() {
        out[transform_policy_index(sym, i)] = v;
    }
}

const fn raw_index(from: usize, dir: usize, dist: usize) -> usize {
    (from * NUM_DIRECTIONS + dir) * MAX_DISTANCE + (dist - 1)
}

const fn split_index(index: usize) -> (usize, usize, usize) {
    let dist = index % MAX_DISTANCE + 1;
    let rest = index / MAX_DISTANCE;
    (rest / NUM_DIRECTIONS, rest % NUM_DIRECTIONS, dist)
}

/// Precomputed permutations for each symmetry.
struct Tables {
    square: [[u8; NUM_SQUARES]; 8],
    policy: [[u16; POLICY_SIZE]; 8],
}

static TABLES: std::sync::LazyLock<Box<Tables>> = std::sync::LazyLock::new(build_tables);

#[expect(
    clippy::expect_used,
    reason = "constant input, run once while building the tables (checked by the \
              encoding tests): the Castle (d4) has a neighbour in every direction, \
              and a symmetry maps a one-square rook step to one, which has a policy \
              index"
)]
fn build_tables() -> Box<Tables> {
    let mut t = Box::new(Tables {
        square: [[0; NUM_SQUARES]; 8],
        policy: [[0; POLICY_SIZE]; 8],
    });
    for sym in Symmetry::ALL {
        let s = sym.index();
        for sq in Square::all() {
            t.square[s][sq.index()] = sym.square(sq).index() as u8;
        }
        // The image of each direction: the Castle is fixed by every symmetry, so step from
        // it and see where the step goes.
        let mut dir_map = [0usize; NUM_DIRECTIONS];
        for dir in Direction::ALL {
            let next = Square::CASTLE
                .step(dir)
                .expect("the Castle has four neighbours");
            let image = Move::new(sym.square(Square::CASTLE), sym.square(next));
            let idx = policy_index(image).expect("a symmetry maps a step to a step");
            dir_map[dir.index()] = split_index(idx).1;
        }
        for index in 0..POLICY_SIZE {
            let (from, dir, dist) = split_index(index);
            let from_image = t.square[s][from] as usize;
            t.policy[s][index] = raw_index(from_image, dir_map[dir], dist) as u16;
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use brandubh_rules::Game;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Positions (with repetition counts) reached by seeded random play.
    fn random_positions(n: usize, seed: u64) -> Vec<(Position, u32)> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut out = vec![(Position::start(), 1)];
        while out.len() < n {
            let mut g = Game::default();
            let plies = rng.random_range(0..60);
            g.random_playout(plies, |n| rng.random_range(0..n));
            out.push((*g.position(), rng.random_range(1..=4)));
        }
        out
    }

    /// The King's legal moves in `p` (White to move), by the rules' own move generator.
    fn king_moves(p: &Position) -> Vec<Square> {
        let p = p.with_side_to_move(Side::White);
        p.legal_moves()
            .into_iter()
            .filter(|mv| mv.from == p.king())
            .map(|mv| mv.to)
            .collect()
    }

    #[test]
    fn start_position_planes() {
        let p = encode(&Position::start(), 1);
        let count = |plane: usize| {
            p[plane * PLANE_SIZE..(plane + 1) * PLANE_SIZE]
                .iter()
                .sum::<f32>()
        };
        assert_eq!(count(PLANE_ATTACKERS), 8.0);
        assert_eq!(count(PLANE_DEFENDERS), 4.0);
        assert_eq!(count(PLANE_KING), 1.0);
        assert_eq!(count(PLANE_WHITE_TO_MOVE), 49.0);
        assert_eq!(count(PLANE_RESTRICTED), 5.0);
        assert_eq!(count(PLANE_ONES), 49.0);
        for plane in PLANE_REPETITIONS {
            assert_eq!(count(plane), 0.0);
        }
        // d1 is an attacker: square index 3 is rank 0, file 3.
        assert_eq!(p[PLANE_ATTACKERS * PLANE_SIZE + 3], 1.0);
        let black = encode(&Position::start().with_side_to_move(Side::Black), 4);
        assert!(
            black[PLANE_WHITE_TO_MOVE * PLANE_SIZE..][..PLANE_SIZE]
                .iter()
                .all(|&v| v == 0.0)
        );
        for plane in PLANE_REPETITIONS {
            assert!(
                black[plane * PLANE_SIZE..][..PLANE_SIZE]
                    .iter()
                    .all(|&v| v == 1.0)
            );
        }
    }

    #[test]
    fn repetition_planes_are_a_thermometer() {
        for reps in 1..=5u32 {
            let p = encode(&Position::start(), reps);
            for (i, &plane) in PLANE_REPETITIONS.iter().enumerate() {
                let want = if reps >= i as u32 + 2 { 1.0 } else { 0.0 };
                assert_eq!(p[plane * PLANE_SIZE], want, "reps {reps} plane {plane}");
            }
        }
    }

    #[test]
    fn planes_commute_with_symmetries() {
        let mut transformed = vec![0.0; INPUT_SIZE];
        for (pos, reps) in random_positions(200, 1) {
            let planes = encode(&pos, reps);
            for sym in Symmetry::ALL {
                transform_planes(sym, &planes, &mut transformed);
                assert_eq!(
                    encode(&sym.position(&pos), reps),
                    transformed,
                    "{sym:?} on {pos}"
                );
            }
        }
    }

    #[test]
    fn king_and_threat_planes_commute_with_symmetries() {
        for layout in [
            NUM_PLANES_WITH_KING,
            NUM_PLANES_WITH_THREATS,
            NUM_PLANES_WITH_ESCAPES,
        ] {
            let mut transformed = vec![0.0; layout * PLANE_SIZE];
            for (pos, reps) in random_positions(200, 3) {
                let planes = encode_planes(&pos, reps, layout);
                // Each layout extends the one before it.
                let before = LAYOUTS[LAYOUTS.iter().position(|&l| l == layout).unwrap() - 1];
                assert_eq!(
                    planes[..before * PLANE_SIZE],
                    encode_planes(&pos, reps, before)[..],
                    "{pos}"
                );
                for sym in Symmetry::ALL {
                    transform_planes(sym, &planes, &mut transformed);
                    assert_eq!(
                        encode_planes(&sym.position(&pos), reps, layout),
                        transformed,
                        "{sym:?} on {pos}"
                    );
                }
            }
        }
    }

    /// The threat planes checked against the rules' move generator and the pieces each move
    /// leaves on the board (rules 2–7).
    #[test]
    fn threat_planes_match_the_legal_moves_and_captures() {
        let mut seen = [0u32; 4];
        for (pos, _) in random_positions(300, 5) {
            let planes = threat_plane_bitboards(&pos);
            let mut want = [Bitboard::EMPTY; 4];
            for side in [Side::Black, Side::White] {
                let p = pos.with_side_to_move(side);
                for mv in p.legal_moves() {
                    if mv.from != p.king() {
                        let i = usize::from(side == Side::White);
                        want[i] = want[i].with(mv.to);
                    }
                    let after = p.play_unchecked(mv);
                    if side == Side::Black {
                        want[2] |= p.defenders() & !after.position.defenders();
                        if after.king_captured {
                            want[2] = want[2].with(p.king());
                        }
                    } else {
                        want[3] |= p.attackers() & !after.position.attackers();
                    }
                }
            }
            assert_eq!(planes, want, "{pos}");
            for (n, plane) in seen.iter_mut().zip(planes) {
                *n += plane.count();
            }
        }
        assert!(
            seen.iter().all(|&n| n > 100),
            "random positions have threats: {seen:?}"
        );
    }

    #[test]
    fn threat_planes_of_a_set_position() {
        let sq = |s: &str| -> Square { s.parse().expect("a square") };
        let bb = |squares: &[&str]| squares.iter().fold(Bitboard::EMPTY, |b, s| b.with(sq(s)));
        // Attackers b5, d7, a2; defenders c5, c3; the King in the Castle; White to move.
        let pos: Position = "3A3/7/1AD4/3K3/2D4/A6/7 w"
            .parse()
            .expect("a legal position");
        let [
            attacker_reach,
            defender_reach,
            white_threatened,
            black_threatened,
        ] = threat_plane_bitboards(&pos);
        // Rule 5: d7-d5 takes c5 against b5; rule 6: c3-a3 takes a2 against the corner a1.
        assert_eq!(white_threatened, bb(&["c5"]));
        assert_eq!(black_threatened, bb(&["a2"]));
        assert!(attacker_reach.contains(sq("d5")) && !attacker_reach.contains(sq("a1")));
        assert!(defender_reach.contains(sq("a3")) && !defender_reach.contains(sq("b5")));
        // The King's own moves are plane 9, not the defenders' reach.
        assert!(!defender_reach.contains(sq("e4")));
    }

    #[test]
    fn layouts_are_checked() {
        assert!(is_layout(9) && is_layout(12) && is_layout(16) && is_layout(19));
        assert!(!is_layout(0) && !is_layout(10) && !is_layout(15) && !is_layout(20));
        assert_eq!(layout(true, true, true), 19);
        assert_eq!(layout(true, true, false), 16);
    }

    /// The King planes checked against the rules' own move generator (rules 2, 3, 8.1):
    /// White to move, the King's legal moves from the position, from each of their
    /// results, and from the King placed on each square in turn.
    #[test]
    fn king_planes_match_the_kings_legal_moves() {
        // The King moved to `to` with nothing else changed (no capture is made: only the
        // placement matters here).
        let king_on = |p: &Position, to: Square| -> Option<Position> {
            Position::from_parts(p.attackers(), p.defenders(), to, Side::White).ok()
        };
        let mut corner_squares_seen = 0;
        for (pos, _) in random_positions(300, 4) {
            let [moves, two, lines] = king_plane_bitboards(&pos);
            let one: Vec<Square> = king_moves(&pos);
            assert_eq!(moves.into_iter().collect::<Vec<_>>(), one, "{pos}");
            let mut want_two = Bitboard::EMPTY;
            for &t in &one {
                want_two = want_two.with(t);
                let moved = king_on(&pos, t).expect("the King's target is empty");
                for u in king_moves(&moved) {
                    want_two = want_two.with(u);
                }
            }
            assert_eq!(two, want_two.without(pos.king()), "{pos}");
            let mut want_lines = Bitboard::EMPTY;
            for sq in Square::all() {
                let free = !(pos.attackers() | pos.defenders() | Bitboard::CORNERS).contains(sq);
                if let (true, Some(placed)) = (free, king_on(&pos, sq))
                    && king_moves(&placed)
                        .iter()
                        .any(|t| Bitboard::CORNERS.contains(*t))
                {
                    want_lines = want_lines.with(sq);
                }
            }
            assert_eq!(lines, want_lines, "{pos}");
            corner_squares_seen += lines.count();
        }
        assert!(
            corner_squares_seen > 300,
            "random positions open lines to corners"
        );
    }

    /// The escape planes checked against the rules' own move generator (rules 2, 3, 8.1):
    /// the King placed on each square in turn (White to move, nothing else changed), its
    /// legal moves to corners, from there and from each square it can reach, and the same
    /// with the defenders taken off the board.
    #[test]
    fn escape_planes_match_the_kings_legal_moves() {
        // The King on `sq` of a position with these attackers and defenders, White to move.
        let king_on = |attackers: Bitboard, defenders: Bitboard, sq: Square| {
            Position::from_parts(attackers, defenders, sq, Side::White).ok()
        };
        let corners = |ts: &[Square]| {
            ts.iter()
                .filter(|t| Bitboard::CORNERS.contains(**t))
                .count()
        };
        let mut seen = [0u32; 3];
        for (pos, _) in random_positions(300, 6) {
            let (a, d) = (pos.attackers(), pos.defenders());
            let mut want = [Bitboard::EMPTY; 3];
            for sq in Square::all() {
                if (a | Bitboard::CORNERS).contains(sq) {
                    continue;
                }
                if let Some(bare) = king_on(a, Bitboard::EMPTY, sq)
                    && corners(&king_moves(&bare)) > 0
                {
                    want[2] = want[2].with(sq);
                }
                if d.contains(sq) {
                    continue;
                }
                let placed = king_on(a, d, sq).expect("an empty square takes the King");
                let first = king_moves(&placed);
                if corners(&first) >= 2 {
                    want[0] = want[0].with(sq);
                }
                let two = first.iter().any(|&t| {
                    Bitboard::CORNERS.contains(t)
                        || king_on(a, d, t).is_some_and(|p| corners(&king_moves(&p)) > 0)
                });
                if two {
                    want[1] = want[1].with(sq);
                }
            }
            let got = escape_plane_bitboards(&pos);
            assert_eq!(got, want, "{pos}");
            for (n, plane) in seen.iter_mut().zip(got) {
                *n += plane.count();
            }
        }
        assert!(
            seen.iter().all(|&n| n > 100),
            "random positions have forks, two-move routes and attacker-only lines: {seen:?}"
        );
    }

    /// The escape planes of a set position, worked by hand (rules 2, 3, 8.1).
    #[test]
    fn escape_planes_of_a_set_position() {
        let sq = |s: &str| -> Square { s.parse().expect("a square") };
        let bb = |squares: &[&str]| squares.iter().fold(Bitboard::EMPTY, |b, s| b.with(sq(s)));
        // Attackers d6, a5, e1; defenders c7, c3; the King in the Castle; Black to move.
        let pos: Position = "2D4/3A3/A6/3K3/2D4/7/4A2 b"
            .parse()
            .expect("a legal position");
        let [forks, two, attacker_lines] = escape_plane_bitboards(&pos);
        // The g-file is empty: from g2-g6 the King sees g1 and g7. Everywhere else one
        // corner at most: e1 closes rank 1 to g1, a5 the a-file, c7 rank 7 to a7.
        assert_eq!(forks, bb(&["g2", "g3", "g4", "g5", "g6"]));
        let lines = bb(&[
            "b1", "c1", "d1", "f1", "a2", "a3", "a4", "a6", "b7", "d7", "e7", "f7", "g2", "g3",
            "g4", "g5", "g6",
        ]);
        assert_eq!(king_plane_bitboards(&pos)[2], lines);
        // With the defenders off, c7 no longer closes rank 7: c7 itself sees both corners,
        // and b7 now sees g7 too (already a line square).
        assert_eq!(attacker_lines, lines.with(sq("c7")));
        // Two moves: d2 via d1, e2 via a2 (rank 2 is empty), b6 via a6; not e1 (an attacker)
        // nor c7 (a defender stands there); every line square is on it.
        for s in ["d2", "e2", "b6"] {
            assert!(two.contains(sq(s)), "{s}");
        }
        assert!(!two.contains(sq("e1")) && !two.contains(sq("c7")));
        assert_eq!(two & lines, lines);
    }

    #[test]
    fn start_position_king_planes() {
        let p = Position::start();
        let [moves, two, lines] = king_plane_bitboards(&p);
        // Rule 1's start: the King in the Castle, boxed in by its four defenders.
        assert!(moves.is_empty() && two.is_empty());
        // Every edge square but the corners and the attackers' a4, g4, d1, d7 lies on an
        // open line to a corner: 4 edges of 5 inner squares, less the 4 attackers.
        assert_eq!(lines.count(), 16);
        assert!(lines.contains("b1".parse().expect("a square")));
        assert!(!lines.contains("b2".parse().expect("a square")));
    }

    #[test]
    fn policy_indices_commute_with_symmetries() {
        for (pos, _) in random_positions(200, 2) {
            for mv in pos.legal_moves() {
                let idx = policy_index(mv).expect("legal moves are rook moves");
                for sym in Symmetry::ALL {
                    assert_eq!(
                        policy_index(sym.mv(mv)),
                        Some(transform_policy_index(sym, idx)),
                        "{sym:?} on {mv}"
                    );
                }
            }
        }
        // Every index, on-board or not, through every symmetry and back.
        for sym in Symmetry::ALL {
            let mut seen = vec![false; POLICY_SIZE];
            for i in 0..POLICY_SIZE {
                let j = transform_policy_index(sym, i);
                assert!(!seen[j], "{sym:?} is not a permutation");
                seen[j] = true;
                assert_eq!(transform_policy_index(sym.inverse(), j), i);
                assert_eq!(
                    index_to_move(i).map(|m| sym.mv(m)),
                    index_to_move(j),
                    "{sym:?} index {i}"
                );
            }
        }
    }

    #[test]
    fn transform_policy_moves_values_with_moves() {
        let policy: Vec<f32> = (0..POLICY_SIZE).map(|i| i as f32).collect();
        let mut out = vec![0.0; POLICY_SIZE];
        for sym in Symmetry::ALL {
            transform_policy(sym, &policy, &mut out);
            for i in 0..POLICY_SIZE {
                assert_eq!(out[transform_policy_index(sym, i)], i as f32);
            }
        }
    }

    #[test]
    fn index_round_trips() {
        let mut on_board = 0;
        for i in 0..POLICY_SIZE {
            if let Some(mv) = index_to_move(i) {
                on_board += 1;
                assert_eq!(policy_index(mv), Some(i), "{mv}");
            }
        }
        // Each of the 7 ranks and 7 files has 7·6 ordered pairs of squares.
        assert_eq!(on_board, 14 * 42);
        for from in Square::all() {
            for to in Square::all() {
                let mv = Move::new(from, to);
                match policy_index(mv) {
                    Some(i) => {
                        assert!(i < POLICY_SIZE);
                        assert_eq!(index_to_move(i), Some(mv));
                    }
                    None => assert!(
                        from == to || (from.file() != to.file() && from.rank() != to.rank())
                    ),
                }
            }
        }
        assert_eq!(index_to_move(POLICY_SIZE), None);
    }

    #[test]
    fn legal_moves_have_distinct_in_range_indices() {
        for (pos, _) in random_positions(1000, 3) {
            let mut seen = [false; POLICY_SIZE];
            for mv in pos.legal_moves() {
                let i = policy_index(mv).expect("legal moves are rook moves");
                assert!(i < POLICY_SIZE);
                assert!(!seen[i], "duplicate index {i} in {pos}");
                seen[i] = true;
            }
        }
    }
}
