//! [`Position`]: the placement of the pieces and the side to move, with move generation and
//! move application (rules 2–7).

use std::fmt;
use std::str::FromStr;

use arrayvec::ArrayVec;

use crate::error::{IllegalMoveError, IllegalMoveReason, ParsePositionError, PositionErrorKind};
use crate::king::KingRule;
use crate::types::{Bitboard, Direction, Move, NUM_SQUARES, Piece, SIZE, Side, Square};

/// At most 8 attackers × 12 destinations; White has at most 5 × 12.
pub const MAX_MOVES: usize = 96;

/// A list of moves that never allocates.
pub type MoveList = ArrayVec<Move, MAX_MOVES>;

const fn compute_rays() -> [[u64; NUM_SQUARES]; 4] {
    let mut rays = [[0u64; NUM_SQUARES]; 4];
    let mut sq = 0;
    while sq < NUM_SQUARES {
        let (f, r) = ((sq % 7) as i32, (sq / 7) as i32);
        let deltas = [(0, 1), (1, 0), (0, -1), (-1, 0)];
        let mut d = 0;
        while d < 4 {
            let (mut nf, mut nr) = (f + deltas[d].0, r + deltas[d].1);
            while nf >= 0 && nr >= 0 && nf < 7 && nr < 7 {
                rays[d][sq] |= 1u64 << (nr * 7 + nf);
                nf += deltas[d].0;
                nr += deltas[d].1;
            }
            d += 1;
        }
        sq += 1;
    }
    rays
}

/// `RAYS[dir][sq]`: the squares strictly beyond `sq` in direction `dir` (N, E, S, W).
static RAYS: [[u64; NUM_SQUARES]; 4] = compute_rays();

/// The squares a rook on `sq` reaches when `blockers` stop it (blockers themselves excluded).
#[inline]
fn slide_targets(sq: usize, blockers: u64) -> u64 {
    let mut targets = 0;
    // North and East run towards higher indices: the nearest blocker is the lowest bit.
    for d in [0usize, 1] {
        let ray = RAYS[d][sq];
        let blk = ray & blockers;
        targets |= if blk == 0 {
            ray
        } else {
            let b = blk.trailing_zeros() as usize;
            ray & !(RAYS[d][b] | 1 << b)
        };
    }
    for d in [2usize, 3] {
        let ray = RAYS[d][sq];
        let blk = ray & blockers;
        targets |= if blk == 0 {
            ray
        } else {
            let b = 63 - blk.leading_zeros() as usize;
            ray & !(RAYS[d][b] | 1 << b)
        };
    }
    targets
}

/// A validated placement of the pieces plus the side to move.
///
/// Invariants (checked by every constructor): exactly one King, at most 8 attackers and 4
/// defenders, no two pieces on one square, no attacker or defender on a restricted square.
///
/// ```text
/// 7 . . . A . . .
/// 6 . . . A . . .
/// 5 . . . D . . .
/// 4 A A D K D A A      3A3/3A3/3D3/AADKDAA/3D3/3A3/3A3 w
/// 3 . . . D . . .
/// 2 . . . A . . .
/// 1 . . . A . . .
///   a b c d e f g
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Position {
    attackers: Bitboard,
    defenders: Bitboard,
    king: Square,
    side: Side,
}

/// What playing a move did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveEffect {
    /// The position after the move (the King stays on his square even when captured: the
    /// capture ends the game, see [`MoveEffect::king_captured`]).
    pub position: Position,
    /// Attackers or defenders removed by the move (rule 5).
    pub captured: Bitboard,
    /// Whether the move captured the King (rule 7).
    pub king_captured: bool,
}

impl Default for Position {
    fn default() -> Self {
        Position::start()
    }
}

impl Position {
    /// The start position, `3A3/3A3/3D3/AADKDAA/3D3/3A3/3A3 w`.
    #[must_use]
    pub const fn start() -> Position {
        // Attackers: d1 d2 a4 b4 f4 g4 d6 d7. Defenders: d3 c4 e4 d5. King: d4.
        let a = 1u64 << 3 | 1 << 10 | 1 << 21 | 1 << 22 | 1 << 26 | 1 << 27 | 1 << 38 | 1 << 45;
        let d = 1u64 << 17 | 1 << 23 | 1 << 25 | 1 << 31;
        Position {
            attackers: Bitboard(a),
            defenders: Bitboard(d),
            king: Square::CASTLE,
            side: Side::White,
        }
    }

    /// A position from its parts, validated as the parser validates.
    pub fn from_parts(
        attackers: Bitboard,
        defenders: Bitboard,
        king: Square,
        side: Side,
    ) -> Result<Position, PositionErrorKind> {
        if attackers.0 & !Bitboard::FULL.0 != 0 || defenders.0 & !Bitboard::FULL.0 != 0 {
            return Err(PositionErrorKind::OffBoard);
        }
        let overlap = (attackers & defenders) | ((attackers | defenders) & king.bb());
        if let Some(sq) = overlap.first() {
            return Err(PositionErrorKind::Overlap(sq));
        }
        if attackers.count() > 8 {
            return Err(PositionErrorKind::TooManyAttackers(attackers.count()));
        }
        if defenders.count() > 4 {
            return Err(PositionErrorKind::TooManyDefenders(defenders.count()));
        }
        if let Some(sq) = ((attackers | defenders) & Bitboard::RESTRICTED).first() {
            return Err(PositionErrorKind::RestrictedSquare(sq));
        }
        Ok(Position {
            attackers,
            defenders,
            king,
            side,
        })
    }

    /// A position from parts already known to be valid (symmetric images of valid ones).
    pub(crate) const fn from_parts_unchecked(
        attackers: Bitboard,
        defenders: Bitboard,
        king: Square,
        side: Side,
    ) -> Position {
        Position {
            attackers,
            defenders,
            king,
            side,
        }
    }

    /// The attackers.
    #[must_use]
    pub const fn attackers(&self) -> Bitboard {
        self.attackers
    }

    /// The defenders (the King excluded).
    #[must_use]
    pub const fn defenders(&self) -> Bitboard {
        self.defenders
    }

    /// The King's square.
    #[must_use]
    pub const fn king(&self) -> Square {
        self.king
    }

    /// The side to move.
    #[must_use]
    pub const fn side_to_move(&self) -> Side {
        self.side
    }

    /// All white pieces: defenders and King.
    #[must_use]
    pub const fn white(&self) -> Bitboard {
        Bitboard(self.defenders.0 | 1 << self.king.index())
    }

    /// Every occupied square.
    #[must_use]
    pub const fn occupied(&self) -> Bitboard {
        Bitboard(self.attackers.0 | self.defenders.0 | 1 << self.king.index())
    }

    /// The pieces of `side`.
    #[must_use]
    pub const fn pieces(&self, side: Side) -> Bitboard {
        match side {
            Side::White => self.white(),
            Side::Black => self.attackers,
        }
    }

    /// Number of pieces on the board (the King included).
    #[must_use]
    pub const fn piece_count(&self) -> u32 {
        self.attackers.count() + self.defenders.count() + 1
    }

    /// The piece on `sq`, if any.
    #[must_use]
    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        if self.attackers.contains(sq) {
            Some(Piece::Attacker)
        } else if self.defenders.contains(sq) {
            Some(Piece::Defender)
        } else if self.king == sq {
            Some(Piece::King)
        } else {
            None
        }
    }

    /// Whether the King stands on a corner (rule 8.1).
    #[must_use]
    pub const fn king_on_corner(&self) -> bool {
        Bitboard::CORNERS.contains(self.king)
    }

    /// The squares the piece on `from` may move to (rules 2 and 3), whoever's turn it is;
    /// empty if `from` is empty.
    #[must_use]
    pub fn targets(&self, from: Square) -> Bitboard {
        let occ = self.occupied().0;
        if from == self.king {
            Bitboard(slide_targets(from.index(), occ))
        } else if self.occupied().contains(from) {
            Bitboard(slide_targets(from.index(), occ | Bitboard::RESTRICTED.0))
        } else {
            Bitboard::EMPTY
        }
    }

    /// The squares the King would reach in one move if it stood on `from`, every other
    /// piece where it is (its own square counts as empty): rule 2's slide, which may end on
    /// the Castle or a corner (rule 3). `from` may be any square.
    #[must_use]
    pub fn king_targets_from(&self, from: Square) -> Bitboard {
        let blockers = self.occupied().0 & !self.king.bb().0 & !from.bb().0;
        Bitboard(slide_targets(from.index(), blockers))
    }

    /// Every legal move of the side to move, by from-square then to-square index.
    ///
    /// This ignores whether the game is over: that is the [`crate::Game`]'s business.
    #[must_use]
    pub fn legal_moves(&self) -> MoveList {
        let mut list = MoveList::new();
        let occ = self.occupied().0;
        let blockers = occ | Bitboard::RESTRICTED.0;
        let own = self.pieces(self.side);
        for from in own {
            let b = if from == self.king { occ } else { blockers };
            for to in Bitboard(slide_targets(from.index(), b)) {
                list.push(Move { from, to });
            }
        }
        list
    }

    /// The number of legal moves of the side to move.
    #[must_use]
    pub fn count_legal_moves(&self) -> u32 {
        let occ = self.occupied().0;
        let blockers = occ | Bitboard::RESTRICTED.0;
        let mut n = 0;
        for from in self.pieces(self.side) {
            let b = if from == self.king { occ } else { blockers };
            n += slide_targets(from.index(), b).count_ones();
        }
        n
    }

    /// Whether the side to move has at least one legal move.
    #[must_use]
    pub fn has_legal_move(&self) -> bool {
        let occ = self.occupied().0;
        let blockers = occ | Bitboard::RESTRICTED.0;
        for from in self.pieces(self.side) {
            let b = if from == self.king { occ } else { blockers };
            if slide_targets(from.index(), b) != 0 {
                return true;
            }
        }
        false
    }

    /// Why `mv` is not legal here, or `Ok` if it is (rules 2 and 3).
    pub fn check_move(&self, mv: Move) -> Result<(), IllegalMoveError> {
        let err = |reason| Err(IllegalMoveError { mv, reason });
        let Some(piece) = self.piece_at(mv.from) else {
            return err(IllegalMoveReason::NoPiece);
        };
        if piece.side() != self.side {
            return err(IllegalMoveReason::NotYourPiece(self.side));
        }
        if mv.from == mv.to {
            return err(IllegalMoveReason::NullMove);
        }
        if mv.from.file() != mv.to.file() && mv.from.rank() != mv.to.rank() {
            return err(IllegalMoveReason::NotStraight);
        }
        let dir = if mv.to.file() > mv.from.file() {
            Direction::East
        } else if mv.to.file() < mv.from.file() {
            Direction::West
        } else if mv.to.rank() > mv.from.rank() {
            Direction::North
        } else {
            Direction::South
        };
        let occ = self.occupied();
        let mut sq = mv.from;
        while sq != mv.to {
            // The destination lies on the line, so stepping never leaves the board.
            let Some(next) = sq.step(dir) else {
                return err(IllegalMoveReason::NotStraight);
            };
            sq = next;
            if occ.contains(sq) {
                return err(IllegalMoveReason::Blocked(sq));
            }
            if piece != Piece::King && sq.is_restricted() {
                return err(IllegalMoveReason::Restricted(sq));
            }
        }
        Ok(())
    }

    /// Plays `mv` after checking it; see [`Position::play_unchecked`].
    pub fn play(&self, mv: Move) -> Result<MoveEffect, IllegalMoveError> {
        self.check_move(mv)?;
        Ok(self.play_unchecked(mv))
    }

    /// Plays a legal move: moves the piece, removes what it captures (rules 5–7) and passes
    /// the turn. The move must be legal (only `debug_assert`ed).
    #[must_use]
    pub fn play_unchecked(&self, mv: Move) -> MoveEffect {
        self.play_unchecked_with(mv, &KingRule::RULEBOOK)
    }

    /// [`Position::play_unchecked`] with the King captured by `king` instead of rule 7
    /// (the other captures are rules 5–6 in every variant).
    #[must_use]
    pub fn play_unchecked_with(&self, mv: Move, king: &KingRule) -> MoveEffect {
        debug_assert!(self.check_move(mv).is_ok(), "illegal move {mv} in {self}");
        let mut p = *self;
        let (from, to) = (mv.from.bb(), mv.to.bb());
        let mut captured = Bitboard::EMPTY;
        let mut king_captured = false;
        match self.side {
            Side::White => {
                if mv.from == self.king {
                    p.king = mv.to;
                } else {
                    p.defenders = Bitboard(p.defenders.0 ^ from.0 ^ to.0);
                }
                // Rules 4–6: an attacker is taken between the mover and a white piece (the
                // King included) or a hostile square. Corners are always hostile; the Castle
                // is either empty (hostile) or holds the King (a white piece): both capture.
                let anvils = p.white() | Bitboard::RESTRICTED;
                for dir in Direction::ALL {
                    let Some(n) = mv.to.step(dir) else { continue };
                    if !p.attackers.contains(n) {
                        continue;
                    }
                    if let Some(b) = n.step(dir)
                        && anvils.contains(b)
                    {
                        captured = captured.with(n);
                    }
                }
                p.attackers = Bitboard(p.attackers.0 & !captured.0);
                p.side = Side::Black;
            }
            Side::Black => {
                p.attackers = Bitboard(p.attackers.0 ^ from.0 ^ to.0);
                // Rules 4–5: a defender is taken between the mover and an attacker, a corner,
                // or the Castle while it is empty.
                let mut anvils = p.attackers | Bitboard::CORNERS;
                if p.king != Square::CASTLE {
                    anvils |= Bitboard::CASTLE;
                }
                for dir in Direction::ALL {
                    let Some(n) = mv.to.step(dir) else { continue };
                    if p.defenders.contains(n) {
                        if let Some(b) = n.step(dir)
                            && anvils.contains(b)
                        {
                            captured = captured.with(n);
                        }
                    } else if n == p.king {
                        // Rule 7 (or the variant given): see `KingCapture`.
                        king_captured = king.captures(p.attackers, n, mv.to);
                    }
                }
                p.defenders = Bitboard(p.defenders.0 & !captured.0);
                p.side = Side::White;
            }
        }
        MoveEffect {
            position: p,
            captured,
            king_captured,
        }
    }

    /// Rule 8.3: whether no square reachable from a white piece through squares free of
    /// attackers lies on the edge of the board.
    #[must_use]
    pub fn white_encircled(&self) -> bool {
        !self.white().reaches_edge(!self.attackers)
    }

    /// The same position with the other side to move (used by tests and analysis tools).
    #[must_use]
    pub const fn with_side_to_move(mut self, side: Side) -> Position {
        self.side = side;
        self
    }

    /// A multi-line board diagram with rank and file labels, `.` for empty squares and `+`
    /// for empty restricted squares.
    #[must_use]
    pub fn diagram(&self) -> String {
        let mut s = String::new();
        for rank in (0..SIZE).rev() {
            s.push_str(&format!("{} ", rank + 1));
            for file in 0..SIZE {
                #[expect(
                    clippy::expect_used,
                    reason = "`file` and `rank` run over `0..SIZE` in the enclosing loops"
                )]
                let sq = Square::from_coords(file, rank).expect("file and rank are below 7");
                let c = match self.piece_at(sq) {
                    Some(p) => p.letter(),
                    None if sq.is_restricted() => '+',
                    None => '.',
                };
                s.push(c);
                s.push(if file + 1 < SIZE { ' ' } else { '\n' });
            }
        }
        s.push_str("  a b c d e f g\n");
        s
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for rank in (0..SIZE).rev() {
            let mut empty = 0;
            for file in 0..SIZE {
                let sq = Square::from_coords(file, rank).ok_or(fmt::Error)?;
                match self.piece_at(sq) {
                    Some(p) => {
                        if empty > 0 {
                            write!(f, "{empty}")?;
                            empty = 0;
                        }
                        write!(f, "{}", p.letter())?;
                    }
                    None => empty += 1,
                }
            }
            if empty > 0 {
                write!(f, "{empty}")?;
            }
            if rank > 0 {
                f.write_str("/")?;
            }
        }
        write!(f, " {}", self.side.letter())
    }
}

impl FromStr for Position {
    type Err = ParsePositionError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = |kind| ParsePositionError::new(s, kind);
        let mut fields = s.split(' ');
        let (Some(placement), Some(side), None) = (fields.next(), fields.next(), fields.next())
        else {
            return Err(err(PositionErrorKind::MissingSide));
        };
        let side = match side {
            "w" => Side::White,
            "b" => Side::Black,
            other => {
                return Err(err(PositionErrorKind::BadSide(
                    other.chars().take(10).collect(),
                )));
            }
        };
        let ranks: Vec<&str> = placement.split('/').collect();
        if ranks.len() != SIZE as usize {
            return Err(err(PositionErrorKind::RankCount(ranks.len())));
        }
        let (mut attackers, mut defenders, mut kings) =
            (Bitboard::EMPTY, Bitboard::EMPTY, Bitboard::EMPTY);
        for (i, text) in ranks.iter().enumerate() {
            let rank = SIZE - 1 - i as u8;
            let mut file: u8 = 0;
            for c in text.chars() {
                let width_err = || err(PositionErrorKind::RankWidth { rank: rank + 1 });
                match c {
                    '1'..='7' => {
                        file += c as u8 - b'0';
                        if file > SIZE {
                            return Err(width_err());
                        }
                    }
                    'A' | 'D' | 'K' => {
                        let sq = Square::from_coords(file, rank).ok_or_else(width_err)?;
                        match c {
                            'A' => attackers = attackers.with(sq),
                            'D' => defenders = defenders.with(sq),
                            _ => kings = kings.with(sq),
                        }
                        file += 1;
                    }
                    other => return Err(err(PositionErrorKind::BadChar(other))),
                }
            }
            if file != SIZE {
                return Err(err(PositionErrorKind::RankWidth { rank: rank + 1 }));
            }
        }
        let king = match (kings.count(), kings.first()) {
            (1, Some(k)) => k,
            (n, _) => return Err(err(PositionErrorKind::KingCount(n))),
        };
        Position::from_parts(attackers, defenders, king, side).map_err(err)
    }
}
