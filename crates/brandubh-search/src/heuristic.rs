//! A simple hand-made evaluation of a position, shared by the greedy player, the greedy
//! evaluator and alpha-beta: material, the King's distance to the nearest corner, his open
//! lines to a corner and the attackers next to him.

use brandubh_rules::{Bitboard, Move, Position, Side, Square};

/// Worth of a defender, in hundredths.
pub const DEFENDER: i32 = 100;
/// Worth of an attacker (there are twice as many).
pub const ATTACKER: i32 = 60;
/// Penalty per step (Manhattan distance) between the King and the nearest corner.
pub const KING_STEP: i32 = 12;
/// Bonus per corner the King could reach in one move.
pub const OPEN_CORNER: i32 = 150;
/// Penalty per attacker on a square next to the King.
pub const KING_NEIGHBOUR: i32 = 25;

/// The static score of `position` from `side`'s view: positive is good for `side`.
///
/// ```text
/// white = 100·defenders − 60·attackers − 12·(King's distance to the nearest corner)
///       + 150·(corners the King reaches in one move) − 25·(attackers next to the King)
/// ```
#[must_use]
pub fn score(position: &Position, side: Side) -> i32 {
    let king = position.king();
    let distance = Square::CORNERS
        .iter()
        .map(|c| king.file().abs_diff(c.file()) + king.rank().abs_diff(c.rank()))
        .min()
        .unwrap_or(0);
    let open = (position.targets(king) & Bitboard::CORNERS).count();
    let besiegers = (king.bb().neighbours() & position.attackers()).count();
    let white = DEFENDER * position.defenders().count() as i32
        - ATTACKER * position.attackers().count() as i32
        - KING_STEP * i32::from(distance)
        + OPEN_CORNER * open as i32
        - KING_NEIGHBOUR * besiegers as i32;
    match side {
        Side::White => white,
        Side::Black => -white,
    }
}

/// A move that wins at once for the side to move, if there is one: the King reaching a
/// corner for White, a capture of the King for Black. (Wins by encirclement, repetition or
/// lack of moves are not looked for.)
#[must_use]
pub fn decisive_move(position: &Position) -> Option<Move> {
    let king = position.king();
    match position.side_to_move() {
        Side::White => (position.targets(king) & Bitboard::CORNERS)
            .first()
            .map(|corner| Move::new(king, corner)),
        Side::Black => {
            let around_king = king.bb().neighbours();
            position.attackers().into_iter().find_map(|from| {
                (position.targets(from) & around_king)
                    .map(|to| Move::new(from, to))
                    .find(|&mv| position.play_unchecked(mv).king_captured)
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_position_is_scored_from_both_sides() {
        let p = Position::start();
        // 4 defenders, 8 attackers, King 6 steps from a corner, no open line, no besieger.
        let white = 4 * DEFENDER - 8 * ATTACKER - 6 * KING_STEP;
        assert_eq!(score(&p, Side::White), white);
        assert_eq!(score(&p, Side::Black), -white);
    }

    #[test]
    fn decisive_moves_are_found() {
        let escape: Position = "3A3/7/2AD3/A3DAA/7/K2A3/3A3 w".parse().unwrap();
        assert_eq!(decisive_move(&escape), Some("a2-a1".parse().unwrap()));
        let capture: Position = "3A3/7/3D3/AA3AA/4KA1/7/3A3 b".parse().unwrap();
        assert_eq!(decisive_move(&capture), Some("d1-d3".parse().unwrap()));
        assert_eq!(decisive_move(&Position::start()), None);
    }
}
