//! Small `Copy` vocabulary types: [`Side`], [`Square`], [`Bitboard`], [`Move`], [`Piece`].

use std::fmt;
use std::str::FromStr;

use crate::error::ParseMoveError;

/// Board width and height.
pub const SIZE: u8 = 7;
/// Number of squares on the board.
pub const NUM_SQUARES: usize = 49;

/// One of the two players.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Side {
    /// The King and his four defenders; moves first (rule 1).
    White,
    /// The eight attackers.
    Black,
}

impl Side {
    /// The other side.
    #[must_use]
    pub const fn opponent(self) -> Side {
        match self {
            Side::White => Side::Black,
            Side::Black => Side::White,
        }
    }

    /// `"white"` or `"black"`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Side::White => "white",
            Side::Black => "black",
        }
    }

    /// `'w'` or `'b'`, as in position notation.
    #[must_use]
    pub const fn letter(self) -> char {
        match self {
            Side::White => 'w',
            Side::Black => 'b',
        }
    }
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A piece kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Piece {
    /// A black attacker (`A`).
    Attacker,
    /// A white defender (`D`).
    Defender,
    /// The white King (`K`).
    King,
}

impl Piece {
    /// The side that owns this piece.
    #[must_use]
    pub const fn side(self) -> Side {
        match self {
            Piece::Attacker => Side::Black,
            Piece::Defender | Piece::King => Side::White,
        }
    }

    /// The notation letter: `A`, `D` or `K`.
    #[must_use]
    pub const fn letter(self) -> char {
        match self {
            Piece::Attacker => 'A',
            Piece::Defender => 'D',
            Piece::King => 'K',
        }
    }
}

/// A square of the 7×7 board: index `rank * 7 + file`, so `a1` = 0, `g1` = 6, `g7` = 48.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Square(u8);

impl Square {
    /// The Castle, `d4`.
    pub const CASTLE: Square = Square(24);
    /// The four corners `a1`, `g1`, `a7`, `g7`.
    pub const CORNERS: [Square; 4] = [Square(0), Square(6), Square(42), Square(48)];

    /// The square with this index, if it is below 49.
    #[must_use]
    pub const fn new(index: u8) -> Option<Square> {
        if (index as usize) < NUM_SQUARES {
            Some(Square(index))
        } else {
            None
        }
    }

    /// The square at `file` (0 = a) and `rank` (0 = rank 1), if both are below 7.
    #[must_use]
    pub const fn from_coords(file: u8, rank: u8) -> Option<Square> {
        if file < SIZE && rank < SIZE {
            Some(Square(rank * SIZE + file))
        } else {
            None
        }
    }

    /// The index `0..49`.
    #[must_use]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// The file, 0 (`a`) to 6 (`g`).
    #[must_use]
    pub const fn file(self) -> u8 {
        self.0 % SIZE
    }

    /// The rank, 0 (rank 1) to 6 (rank 7).
    #[must_use]
    pub const fn rank(self) -> u8 {
        self.0 / SIZE
    }

    /// A bitboard with only this square.
    #[must_use]
    pub const fn bb(self) -> Bitboard {
        Bitboard(1u64 << self.0)
    }

    /// Whether this is a corner or the Castle (rule 3).
    #[must_use]
    pub const fn is_restricted(self) -> bool {
        Bitboard::RESTRICTED.contains(self)
    }

    /// All 49 squares in index order.
    pub fn all() -> impl Iterator<Item = Square> {
        (0..NUM_SQUARES as u8).map(Square)
    }

    /// The neighbour one step in `dir`, if it is on the board.
    #[must_use]
    pub const fn step(self, dir: Direction) -> Option<Square> {
        let (f, r) = (self.file() as i8, self.rank() as i8);
        let (df, dr) = dir.delta();
        let (nf, nr) = (f + df, r + dr);
        if nf < 0 || nr < 0 || nf >= SIZE as i8 || nr >= SIZE as i8 {
            None
        } else {
            Some(Square(nr as u8 * SIZE + nf as u8))
        }
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", (b'a' + self.file()) as char, self.rank() + 1)
    }
}

impl FromStr for Square {
    type Err = ParseMoveError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let b = s.as_bytes();
        if b.len() == 2 && (b'a'..=b'g').contains(&b[0]) && (b'1'..=b'7').contains(&b[1]) {
            Ok(Square((b[1] - b'1') * SIZE + (b[0] - b'a')))
        } else {
            Err(ParseMoveError::new(s))
        }
    }
}

/// One of the four orthogonal directions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Towards rank 7.
    North,
    /// Towards file g.
    East,
    /// Towards rank 1.
    South,
    /// Towards file a.
    West,
}

impl Direction {
    /// All four directions, in the order N, E, S, W.
    pub const ALL: [Direction; 4] = [
        Direction::North,
        Direction::East,
        Direction::South,
        Direction::West,
    ];

    /// `(file delta, rank delta)`.
    #[must_use]
    pub const fn delta(self) -> (i8, i8) {
        match self {
            Direction::North => (0, 1),
            Direction::East => (1, 0),
            Direction::South => (0, -1),
            Direction::West => (-1, 0),
        }
    }

    /// Index 0..4 in [`Direction::ALL`].
    #[must_use]
    pub const fn index(self) -> usize {
        self as usize
    }
}

/// A set of squares: bit `i` is square `i`; only the low 49 bits are ever set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Bitboard(pub u64);

impl Bitboard {
    /// No squares.
    pub const EMPTY: Bitboard = Bitboard(0);
    /// All 49 squares.
    pub const FULL: Bitboard = Bitboard((1u64 << 49) - 1);
    /// The four corners.
    pub const CORNERS: Bitboard = Bitboard(1 | 1 << 6 | 1 << 42 | 1 << 48);
    /// The Castle.
    pub const CASTLE: Bitboard = Bitboard(1 << 24);
    /// Corners and Castle.
    pub const RESTRICTED: Bitboard = Bitboard(Self::CORNERS.0 | Self::CASTLE.0);
    /// File a.
    pub const FILE_A: Bitboard =
        Bitboard(1 | 1 << 7 | 1 << 14 | 1 << 21 | 1 << 28 | 1 << 35 | 1 << 42);
    /// File g.
    pub const FILE_G: Bitboard = Bitboard(Self::FILE_A.0 << 6);
    /// Rank 1.
    pub const RANK_1: Bitboard = Bitboard(0x7f);
    /// Rank 7.
    pub const RANK_7: Bitboard = Bitboard(0x7f << 42);
    /// The squares on the edge of the board.
    pub const EDGE: Bitboard =
        Bitboard(Self::FILE_A.0 | Self::FILE_G.0 | Self::RANK_1.0 | Self::RANK_7.0);

    /// Whether `sq` is in the set.
    #[must_use]
    pub const fn contains(self, sq: Square) -> bool {
        self.0 >> sq.0 & 1 != 0
    }

    /// Whether the set is empty.
    #[must_use]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Number of squares.
    #[must_use]
    pub const fn count(self) -> u32 {
        self.0.count_ones()
    }

    /// The set with `sq` added.
    #[must_use]
    pub const fn with(self, sq: Square) -> Bitboard {
        Bitboard(self.0 | 1 << sq.0)
    }

    /// The set with `sq` removed.
    #[must_use]
    pub const fn without(self, sq: Square) -> Bitboard {
        Bitboard(self.0 & !(1 << sq.0))
    }

    /// The lowest square, if any.
    #[must_use]
    pub const fn first(self) -> Option<Square> {
        if self.0 == 0 {
            None
        } else {
            Some(Square(self.0.trailing_zeros() as u8))
        }
    }

    /// The highest square, if any.
    #[must_use]
    pub const fn last(self) -> Option<Square> {
        if self.0 == 0 {
            None
        } else {
            Some(Square(63 - self.0.leading_zeros() as u8))
        }
    }

    /// Every square one orthogonal step from a square of the set.
    #[must_use]
    pub const fn neighbours(self) -> Bitboard {
        let b = self.0;
        Bitboard(
            ((b << 7) | (b >> 7) | ((b & !Self::FILE_G.0) << 1) | ((b & !Self::FILE_A.0) >> 1))
                & Self::FULL.0,
        )
    }

    /// Whether a square on the edge of the board can be reached from the set by orthogonal
    /// steps through `passable` squares (the set's own squares count as reached): the
    /// flood fill of rule 8.3. Stops as soon as the edge is reached.
    #[must_use]
    pub const fn reaches_edge(self, passable: Bitboard) -> bool {
        let mut reach = self.0;
        while reach & Self::EDGE.0 == 0 {
            let next = (reach | Bitboard(reach).neighbours().0) & passable.0;
            if next == reach {
                return false;
            }
            reach = next;
        }
        true
    }
}

impl std::ops::BitOr for Bitboard {
    type Output = Bitboard;
    fn bitor(self, rhs: Bitboard) -> Bitboard {
        Bitboard(self.0 | rhs.0)
    }
}
impl std::ops::BitAnd for Bitboard {
    type Output = Bitboard;
    fn bitand(self, rhs: Bitboard) -> Bitboard {
        Bitboard(self.0 & rhs.0)
    }
}
impl std::ops::BitXor for Bitboard {
    type Output = Bitboard;
    fn bitxor(self, rhs: Bitboard) -> Bitboard {
        Bitboard(self.0 ^ rhs.0)
    }
}
impl std::ops::Not for Bitboard {
    type Output = Bitboard;
    fn not(self) -> Bitboard {
        Bitboard(!self.0 & Self::FULL.0)
    }
}
impl std::ops::BitOrAssign for Bitboard {
    fn bitor_assign(&mut self, rhs: Bitboard) {
        self.0 |= rhs.0;
    }
}
impl std::ops::BitAndAssign for Bitboard {
    fn bitand_assign(&mut self, rhs: Bitboard) {
        self.0 &= rhs.0;
    }
}

impl Iterator for Bitboard {
    type Item = Square;
    fn next(&mut self) -> Option<Square> {
        let sq = self.first()?;
        self.0 &= self.0 - 1;
        Some(sq)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.count() as usize;
        (n, Some(n))
    }
}

/// A move: a piece slides from `from` to `to` along a rank or file.
///
/// Notation `<from>-<to>` (e.g. `d5-f5`); parsing also accepts `d5f5`. A parsed move is only
/// well-formed; whether it is legal depends on the position (`Position::check_move`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Move {
    /// The square the piece leaves.
    pub from: Square,
    /// The square it stops on.
    pub to: Square,
}

impl Move {
    /// A move from `from` to `to` (not checked).
    #[must_use]
    pub const fn new(from: Square, to: Square) -> Move {
        Move { from, to }
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.from, self.to)
    }
}

impl FromStr for Move {
    type Err = ParseMoveError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || ParseMoveError::new(s);
        let (a, b) = match s.len() {
            5 if s.is_ascii() && s.as_bytes()[2] == b'-' => (&s[..2], &s[3..]),
            4 if s.is_ascii() => (&s[..2], &s[2..]),
            _ => return Err(err()),
        };
        let from: Square = a.parse().map_err(|_| err())?;
        let to: Square = b.parse().map_err(|_| err())?;
        Ok(Move { from, to })
    }
}
