//! Invariants over seeded random play and arbitrary input.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests may unwrap: a panic is a failed test"
)]

use std::collections::HashSet;

use brandubh_rules::{Game, Move, Position, Square, Symmetry};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Positions from `games` seeded random games (every position of each game).
fn random_positions(seed: u64, games: usize) -> Vec<Game> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    for _ in 0..games {
        let mut g = Game::default();
        while !g.is_over() && g.ply() < 200 {
            out.push(g.clone());
            g.random_playout(1, |n| rng.random_range(0..n));
        }
        out.push(g);
    }
    out
}

#[test]
fn generated_moves_are_exactly_the_accepted_moves() {
    for g in random_positions(1, 30) {
        let p = *g.position();
        let generated: HashSet<Move> = p.legal_moves().into_iter().collect();
        assert_eq!(generated.len(), p.legal_moves().len(), "duplicates in {p}");
        assert_eq!(generated.len() as u32, p.count_legal_moves());
        assert_eq!(!generated.is_empty(), p.has_legal_move());
        for from in Square::all() {
            for to in Square::all() {
                let m = Move::new(from, to);
                assert_eq!(
                    p.check_move(m).is_ok(),
                    generated.contains(&m),
                    "{m} in {p}"
                );
            }
        }
        // A finished game accepts nothing.
        if g.is_over() {
            assert!(g.legal_moves().is_empty());
            for m in p.legal_moves() {
                assert!(g.clone().play(m).is_err());
            }
        }
    }
}

#[test]
fn piece_counts_never_grow_and_captures_are_consistent() {
    for g in random_positions(2, 40) {
        let p = *g.position();
        if g.is_over() {
            continue;
        }
        for m in p.legal_moves() {
            let e = p.play_unchecked(m);
            let q = e.position;
            assert!(q.attackers().count() <= p.attackers().count());
            assert!(q.defenders().count() <= p.defenders().count());
            assert_eq!(
                p.piece_count() - q.piece_count(),
                e.captured.count(),
                "{m} in {p}"
            );
            // Only the opponent's pieces are captured, and only next to the arrival square.
            assert!((e.captured & p.pieces(p.side_to_move())).is_empty());
            assert!((e.captured & !m.to.bb().neighbours()).is_empty());
            assert_eq!(q.side_to_move(), p.side_to_move().opponent());
        }
    }
}

#[test]
fn notation_round_trips() {
    for g in random_positions(3, 20) {
        let p = *g.position();
        let text = p.to_string();
        assert_eq!(text.parse::<Position>().unwrap(), p, "{text}");
        for m in p.legal_moves() {
            assert_eq!(m.to_string().parse::<Move>().unwrap(), m);
            let compact = m.to_string().replace('-', "");
            assert_eq!(compact.parse::<Move>().unwrap(), m);
        }
    }
}

#[test]
fn symmetries_commute_with_move_generation_and_play() {
    for g in random_positions(4, 15) {
        let p = *g.position();
        for sym in Symmetry::ALL {
            let sp = sym.position(&p);
            assert_eq!(sym.inverse().position(&sp), p);
            let mut expected: Vec<Move> = p.legal_moves().iter().map(|&m| sym.mv(m)).collect();
            let mut actual: Vec<Move> = sp.legal_moves().to_vec();
            expected.sort();
            actual.sort();
            assert_eq!(actual, expected, "{sym:?} of {p}");
            for m in p.legal_moves() {
                let a = p.play_unchecked(m);
                let b = sp.play_unchecked(sym.mv(m));
                assert_eq!(sym.position(&a.position), b.position);
                assert_eq!(sym.bitboard(a.captured), b.captured);
                assert_eq!(a.king_captured, b.king_captured);
            }
            assert_eq!(p.white_encircled(), sp.white_encircled());
        }
    }
}

#[test]
fn symmetries_fix_the_restricted_squares_and_form_a_group() {
    for sym in Symmetry::ALL {
        assert_eq!(sym.square(Square::CASTLE), Square::CASTLE);
        for c in Square::CORNERS {
            assert!(Square::CORNERS.contains(&sym.square(c)));
        }
        let image: HashSet<Square> = Square::all().map(|s| sym.square(s)).collect();
        assert_eq!(image.len(), 49, "{sym:?} is a bijection");
        for s in Square::all() {
            assert_eq!(sym.inverse().square(sym.square(s)), s);
        }
    }
    // All eight images of an asymmetric square are distinct.
    let b2: Square = "b3".parse().unwrap();
    let images: HashSet<Square> = Symmetry::ALL.iter().map(|s| s.square(b2)).collect();
    assert_eq!(images.len(), 8);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn position_parser_never_panics(s in "\\PC{0,80}") {
        let _ = s.parse::<Position>();
    }

    #[test]
    fn position_parser_on_near_valid_input(s in "[ADK1-8/]{0,40} [wbx]?") {
        if let Ok(p) = s.parse::<Position>() {
            // Whatever parses prints back to something that parses to the same position.
            prop_assert_eq!(p.to_string().parse::<Position>().unwrap(), p);
        }
    }

    #[test]
    fn move_parser_never_panics(s in "\\PC{0,12}") {
        if let Ok(m) = s.parse::<Move>() {
            prop_assert_eq!(m.to_string().parse::<Move>().unwrap(), m);
        }
    }
}
