//! How the King is captured: RULES.md's rule 7 and the variants other programs referee by,
//! as data a [`Game`](crate::Game) is given ([`KingRule`]).
//!
//! RULES.md is the game this project plays. A host that referees a game by its own rules
//! (OpenTafl's `ks:` setting, say) may see a King capture where RULES.md sees none, or miss
//! one RULES.md makes. A player refereed so searches with [`KingRule::guarded`]: its own
//! captures count only where both rule sets see them, and its opponent's wherever either
//! does, so that every win it plays for is one the host will see and no threat of either
//! rule set is overlooked. Nothing else in the rules differs between the variants.

use crate::types::{Bitboard, Direction, Side, Square};

/// What the King needs around him to be captured, on one kind of square. The last attacker
/// to arrive must be one of those around him (rule 5: captures are active only).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KingSides {
    /// Custodial, like any other piece: the attacker that just moved on one side and, beyond
    /// the King on the same line, an attacker or a square hostile to him.
    Two,
    /// All four neighbours hostile (attackers, or squares hostile to him); never on the
    /// edge, where he has three.
    Four,
    /// Every neighbour on the board hostile: four, or three on the edge (two in a corner's
    /// neighbourhood is impossible: the corner itself is hostile).
    AllOnBoard,
}

/// A way of capturing the King: what he needs around him in the Castle, on the four squares
/// next to it, and elsewhere, and whether the empty Castle is hostile to him. Corners are
/// hostile to him in every variant (rule 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KingCapture {
    /// The King in the Castle.
    pub in_castle: KingSides,
    /// The King on one of the four squares next to the Castle.
    pub beside_castle: KingSides,
    /// The King anywhere else.
    pub elsewhere: KingSides,
    /// Whether the empty Castle is hostile to the King.
    pub castle_hostile: bool,
}

impl KingCapture {
    /// RULES.md's rule 7: four attackers in the Castle, custodial everywhere else (next to
    /// the Castle included), the empty Castle not hostile to him.
    pub const RULEBOOK: KingCapture = KingCapture {
        in_castle: KingSides::Four,
        beside_castle: KingSides::Two,
        elsewhere: KingSides::Two,
        castle_hostile: false,
    };
    /// Strong in and next to the Castle (four hostile sides, the empty Castle one of them),
    /// custodial elsewhere: OpenTafl's `ks:c`.
    pub const STRONG_NEAR_CASTLE: KingCapture = KingCapture {
        in_castle: KingSides::Four,
        beside_castle: KingSides::Four,
        elsewhere: KingSides::Two,
        castle_hostile: true,
    };
    /// Custodial everywhere, the Castle included, the empty Castle hostile: OpenTafl's
    /// `ks:w`.
    pub const WEAK: KingCapture = KingCapture {
        in_castle: KingSides::Two,
        beside_castle: KingSides::Two,
        elsewhere: KingSides::Two,
        castle_hostile: true,
    };
    /// Four hostile sides everywhere, so never on the edge: OpenTafl's `ks:s`.
    pub const STRONG: KingCapture = KingCapture {
        in_castle: KingSides::Four,
        beside_castle: KingSides::Four,
        elsewhere: KingSides::Four,
        castle_hostile: true,
    };
    /// Every neighbour on the board hostile (three on the edge): OpenTafl's `ks:m`
    /// ("middleweight").
    pub const ENCLOSED: KingCapture = KingCapture {
        in_castle: KingSides::AllOnBoard,
        beside_castle: KingSides::AllOnBoard,
        elsewhere: KingSides::AllOnBoard,
        castle_hostile: true,
    };

    /// What the King on `king` needs.
    #[must_use]
    pub fn sides_at(&self, king: Square) -> KingSides {
        if king == Square::CASTLE {
            self.in_castle
        } else if Square::CASTLE.bb().neighbours().contains(king) {
            self.beside_castle
        } else {
            self.elsewhere
        }
    }

    /// Whether an attacker that just moved to the neighbour `arrived` of the King on `king`
    /// captures him; `attackers` is the board after the move (`arrived` among them).
    #[must_use]
    pub fn captures(&self, attackers: Bitboard, king: Square, arrived: Square) -> bool {
        debug_assert!(attackers.contains(arrived), "{arrived} holds no attacker");
        debug_assert!(
            king.bb().neighbours().contains(arrived),
            "{arrived} is not next to {king}"
        );
        let mut hostile = attackers | Bitboard::CORNERS;
        if self.castle_hostile && king != Square::CASTLE {
            hostile |= Bitboard::CASTLE;
        }
        let around = king.bb().neighbours();
        match self.sides_at(king) {
            KingSides::Two => Direction::ALL.into_iter().any(|dir| {
                arrived.step(dir) == Some(king)
                    && king
                        .step(dir)
                        .is_some_and(|beyond| hostile.contains(beyond))
            }),
            KingSides::Four => around.count() == 4 && (hostile & around) == around,
            KingSides::AllOnBoard => (hostile & around) == around,
        }
    }
}

/// The King-capture rule a [`Game`](crate::Game) plays by: one [`KingCapture`], or two
/// combined for a player whose games a host referees by other rules ([`KingRule::guarded`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KingRule {
    /// One variant decides.
    One(KingCapture),
    /// A capture counts only where both variants see it.
    Both(KingCapture, KingCapture),
    /// A capture counts where either variant sees it.
    Either(KingCapture, KingCapture),
}

impl Default for KingRule {
    fn default() -> Self {
        KingRule::RULEBOOK
    }
}

impl KingRule {
    /// RULES.md alone.
    pub const RULEBOOK: KingRule = KingRule::One(KingCapture::RULEBOOK);

    /// The rule to search by for a player on `side` whose game a host referees by `host`
    /// (RULES.md being the game it plays): as Black, whose moves are the only ones that
    /// capture the King, a capture counts only where both RULES.md and the host see it (its
    /// wins must be wins the host will see); as White, where either sees it (a threat to its
    /// King under either rule set is one). RULES.md alone when the host agrees with it.
    #[must_use]
    pub fn guarded(side: Side, host: KingCapture) -> KingRule {
        if host == KingCapture::RULEBOOK {
            return KingRule::RULEBOOK;
        }
        match side {
            Side::Black => KingRule::Both(KingCapture::RULEBOOK, host),
            Side::White => KingRule::Either(KingCapture::RULEBOOK, host),
        }
    }

    /// Whether an attacker that just moved to `arrived`, next to the King on `king`,
    /// captures him; `attackers` is the board after the move.
    #[must_use]
    pub fn captures(&self, attackers: Bitboard, king: Square, arrived: Square) -> bool {
        match self {
            KingRule::One(a) => a.captures(attackers, king, arrived),
            KingRule::Both(a, b) => {
                a.captures(attackers, king, arrived) && b.captures(attackers, king, arrived)
            }
            KingRule::Either(a, b) => {
                a.captures(attackers, king, arrived) || b.captures(attackers, king, arrived)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sq(name: &str) -> Square {
        let b = name.as_bytes();
        Square::from_coords(b[0] - b'a', b[1] - b'1').unwrap()
    }

    fn board(names: &[&str]) -> Bitboard {
        names.iter().fold(Bitboard::EMPTY, |b, n| b.with(sq(n)))
    }

    #[test]
    fn each_variant_captures_where_it_says() {
        use KingCapture as K;
        // (attackers after the move, King, the attacker that arrived, RULEBOOK,
        // STRONG_NEAR_CASTLE, WEAK, STRONG, ENCLOSED)
        let cases: &[(&[&str], &str, &str, [bool; 5])] = &[
            // In the Castle: four attackers; two on a line only for the weak King.
            (
                &["d3", "d5", "c4", "e4"],
                "d4",
                "d5",
                [true, true, true, true, true],
            ),
            (
                &["d3", "d5"],
                "d4",
                "d5",
                [false, false, true, false, false],
            ),
            // Next to the Castle (d5): two on a line (c5, e5) for RULES.md and the weak King;
            // the empty Castle hostile makes three attackers enough for the strong King.
            (&["c5", "e5"], "d5", "e5", [true, false, true, false, false]),
            (
                &["c5", "e5", "d6"],
                "d5",
                "e5",
                [true, true, true, true, true],
            ),
            (
                &["c5", "e5", "d6"],
                "d5",
                "d6",
                [false, true, true, true, true],
            ),
            (&["d6"], "d5", "d6", [false, false, true, false, false]),
            // Elsewhere (c6): custodial; the strong King needs four.
            (&["b6", "d6"], "c6", "d6", [true, true, true, false, false]),
            (
                &["b6", "d6", "c7", "c5"],
                "c6",
                "c5",
                [true, true, true, true, true],
            ),
            // On the edge (d7): three enclose him; the strong King is never taken there.
            (
                &["c7", "e7", "d6"],
                "d7",
                "d6",
                [false, false, false, false, true],
            ),
            (
                &["c7", "e7", "d6"],
                "d7",
                "e7",
                [true, true, true, false, true],
            ),
            // Against a corner (b1 between a1 and c1).
            (&["c1"], "b1", "c1", [true, true, true, false, false]),
            (
                &["c1", "b2"],
                "b1",
                "b2",
                [false, false, false, false, true],
            ),
        ];
        let variants = [
            K::RULEBOOK,
            K::STRONG_NEAR_CASTLE,
            K::WEAK,
            K::STRONG,
            K::ENCLOSED,
        ];
        for (attackers, king, arrived, want) in cases {
            for (variant, want) in variants.iter().zip(want) {
                assert_eq!(
                    variant.captures(board(attackers), sq(king), sq(arrived)),
                    *want,
                    "{variant:?}: King {king}, attackers {attackers:?}, {arrived} arrived"
                );
            }
        }
    }

    #[test]
    fn a_guarded_rule_takes_both_as_black_and_either_as_white() {
        let host = KingCapture::STRONG_NEAR_CASTLE;
        let (king, rulebook_only, host_only) =
            (sq("d5"), board(&["c5", "e5"]), board(&["c5", "e5", "d6"]));
        let black = KingRule::guarded(Side::Black, host);
        let white = KingRule::guarded(Side::White, host);
        // RULES.md alone sees c5-e5; the host alone sees d6 arriving beside c5 and e5.
        assert!(!black.captures(rulebook_only, king, sq("e5")));
        assert!(white.captures(rulebook_only, king, sq("e5")));
        assert!(!black.captures(host_only, king, sq("d6")));
        assert!(white.captures(host_only, king, sq("d6")));
        // Both see e5 arriving beside c5 and d6.
        assert!(black.captures(host_only, king, sq("e5")));
        assert_eq!(
            KingRule::guarded(Side::White, KingCapture::RULEBOOK),
            KingRule::RULEBOOK
        );
    }
}
