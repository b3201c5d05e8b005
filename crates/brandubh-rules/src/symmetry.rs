//! The 8 symmetries of the square (the dihedral group D4) on squares, bitboards, moves and
//! positions. The Castle and the corners map to themselves under all of them, so every
//! symmetric image of a legal position is legal and play commutes with the symmetries.

use crate::position::Position;
use crate::types::{Bitboard, Move, NUM_SQUARES, Square};

/// One of the 8 symmetries of the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Symmetry {
    /// (f, r) → (f, r).
    Identity,
    /// Quarter turn anticlockwise: (f, r) → (6−r, f).
    Rot90,
    /// Half turn: (f, r) → (6−f, 6−r).
    Rot180,
    /// Quarter turn clockwise: (f, r) → (r, 6−f).
    Rot270,
    /// Mirror a↔g: (f, r) → (6−f, r).
    FlipFiles,
    /// Mirror 1↔7: (f, r) → (f, 6−r).
    FlipRanks,
    /// Mirror in the a1–g7 diagonal: (f, r) → (r, f).
    Transpose,
    /// Mirror in the a7–g1 diagonal: (f, r) → (6−r, 6−f).
    AntiTranspose,
}

const N: u8 = 6;

const fn map_coords(sym: usize, f: u8, r: u8) -> (u8, u8) {
    match sym {
        0 => (f, r),
        1 => (N - r, f),
        2 => (N - f, N - r),
        3 => (r, N - f),
        4 => (N - f, r),
        5 => (f, N - r),
        6 => (r, f),
        _ => (N - r, N - f),
    }
}

const fn compute_maps() -> [[u8; NUM_SQUARES]; 8] {
    let mut maps = [[0u8; NUM_SQUARES]; 8];
    let mut s = 0;
    while s < 8 {
        let mut sq = 0;
        while sq < NUM_SQUARES {
            let (f, r) = map_coords(s, (sq % 7) as u8, (sq / 7) as u8);
            maps[s][sq] = r * 7 + f;
            sq += 1;
        }
        s += 1;
    }
    maps
}

static MAPS: [[u8; NUM_SQUARES]; 8] = compute_maps();

impl Symmetry {
    /// All eight, identity first; `ALL[i].index() == i`.
    pub const ALL: [Symmetry; 8] = [
        Symmetry::Identity,
        Symmetry::Rot90,
        Symmetry::Rot180,
        Symmetry::Rot270,
        Symmetry::FlipFiles,
        Symmetry::FlipRanks,
        Symmetry::Transpose,
        Symmetry::AntiTranspose,
    ];

    /// Index 0..8 in [`Symmetry::ALL`].
    #[must_use]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The symmetry that undoes this one.
    #[must_use]
    pub const fn inverse(self) -> Symmetry {
        match self {
            Symmetry::Rot90 => Symmetry::Rot270,
            Symmetry::Rot270 => Symmetry::Rot90,
            other => other,
        }
    }

    /// The image of a square.
    #[must_use]
    #[expect(
        clippy::expect_used,
        reason = "`MAPS` is computed at compile time and sends coordinates in 0..=6 to \
                  coordinates in 0..=6, so every entry is a square below 49 \
                  (tests/properties.rs checks the symmetries form a group)"
    )]
    pub fn square(self, sq: Square) -> Square {
        let to = MAPS[self.index()][sq.index()];
        Square::new(to).expect("symmetry tables map squares onto squares")
    }

    /// The image of a set of squares.
    #[must_use]
    pub fn bitboard(self, bb: Bitboard) -> Bitboard {
        let map = &MAPS[self.index()];
        let mut out = 0u64;
        for sq in bb {
            out |= 1u64 << map[sq.index()];
        }
        Bitboard(out)
    }

    /// The image of a move.
    #[must_use]
    pub fn mv(self, mv: Move) -> Move {
        Move::new(self.square(mv.from), self.square(mv.to))
    }

    /// The image of a position (same side to move).
    #[must_use]
    pub fn position(self, p: &Position) -> Position {
        Position::from_parts_unchecked(
            self.bitboard(p.attackers()),
            self.bitboard(p.defenders()),
            self.square(p.king()),
            p.side_to_move(),
        )
    }
}
