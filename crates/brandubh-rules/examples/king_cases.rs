//! Positions in which a Black move lands next to the King, for checking the King-capture
//! variants against another program's referee (scripts/opentafl-king-check.sh): one line a
//! case, `POSITION<TAB>MOVE`, Black to move, seeded.
//!
//!     cargo run --release -p brandubh-rules --example king_cases -- CASES SEED
use std::collections::HashSet;

use brandubh_rules::{Bitboard, Game, Position, Side, Square};
use rand::{Rng, SeedableRng};

fn main() {
    let mut args = std::env::args().skip(1);
    let wanted: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(2000);
    let seed: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(70);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let ordinary: Vec<Square> = Square::all().filter(|s| !s.is_restricted()).collect();
    let mut seen = HashSet::new();
    while seen.len() < wanted {
        // Half the Kings in or next to the Castle, where the variants differ.
        let near: Vec<Square> = Square::all()
            .filter(|&s| s == Square::CASTLE || Square::CASTLE.bb().neighbours().contains(s))
            .collect();
        let king = if rng.random_bool(0.5) {
            near[rng.random_range(0..near.len())]
        } else {
            Square::all()
                .filter(|s| !Bitboard::CORNERS.contains(*s))
                .nth(rng.random_range(0..45))
                .unwrap_or(Square::CASTLE)
        };
        // Attackers around him (each neighbour by chance), then a few more pieces anywhere.
        let mut attackers = Bitboard::EMPTY;
        for n in Square::all().filter(|&s| king.bb().neighbours().contains(s)) {
            if !n.is_restricted() && rng.random_bool(0.6) {
                attackers = attackers.with(n);
            }
        }
        let mut defenders = Bitboard::EMPTY;
        for _ in 0..rng.random_range(2..6) {
            let s = ordinary[rng.random_range(0..ordinary.len())];
            if s != king && !attackers.contains(s) && !defenders.contains(s) {
                if rng.random_bool(0.75) {
                    attackers = attackers.with(s);
                } else if defenders.count() < 4 {
                    defenders = defenders.with(s);
                }
            }
        }
        if attackers.count() > 8 {
            continue;
        }
        let Ok(position) = Position::from_parts(attackers, defenders, king, Side::Black) else {
            continue;
        };
        if Game::new(position).is_over() {
            continue;
        }
        for mv in position.legal_moves() {
            if seen.len() < wanted
                && king.bb().neighbours().contains(mv.to)
                && seen.insert((position, mv))
            {
                println!("{position}\t{mv}");
            }
        }
    }
}
