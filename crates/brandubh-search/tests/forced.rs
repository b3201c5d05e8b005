//! `forced_win`, the exact search for a forced win within n plies: the shortest win, the
//! absence of one, the node budget, and agreement with plain minimax (rule 8 throughout).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests may unwrap: a panic is a failed test"
)]

mod common;

use brandubh_rules::{Bitboard, Game, Position, Reason, Side, Square};
use std::time::{Duration, Instant};

use brandubh_search::{forced_win, forced_win_until};
use common::{BLOCK_IN_ONE, ESCAPE_IN_ONE, game, wins_within};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[test]
fn a_corner_in_one_is_a_win_in_one_ply() {
    // Rule 8.1: the King on a2 reaches a1.
    let g = game(ESCAPE_IN_ONE);
    let r = forced_win(&g, Side::White, 9, 1_000_000);
    assert_eq!(r.plies, Some(1));
    // White wins on the first ply, so Black has no forced win at any depth.
    let r = forced_win(&g, Side::Black, 4, 1_000_000);
    assert_eq!(r.plies, None);
    assert_eq!(r.searched, 4);
}

#[test]
fn a_double_threat_is_a_win_in_three() {
    // d2-d1 leaves the King two ways to a corner (rule 8.1); Black can shut one.
    let g = game("1AAA3/7/7/7/7/3K3/7 w");
    let r = forced_win(&g, Side::White, 9, 1_000_000);
    assert_eq!(r.plies, Some(3));
    assert!(wins_within(&mut g.clone(), Side::White, 3));
    assert!(!wins_within(&mut g.clone(), Side::White, 1));
}

#[test]
fn a_threat_black_can_shut_is_no_forced_win_and_the_wrong_reply_loses() {
    // Black to move; the King on c1 threatens c1-a1, and only b5-b1 stops it.
    let g = game(BLOCK_IN_ONE);
    let r = forced_win(&g, Side::White, 2, 1_000_000);
    assert_eq!(r.plies, None);
    assert_eq!(r.searched, 2);
    // Any other reply: White wins at once.
    let mut other = g.clone();
    let mv = other
        .legal_moves()
        .iter()
        .copied()
        .find(|m| m.to_string() != "b5-b1")
        .expect("another move");
    other.play(mv).expect("legal");
    assert_eq!(forced_win(&other, Side::White, 1, 1000).plies, Some(1));
}

#[test]
fn agrees_with_plain_minimax_on_random_positions() {
    let mut rng = ChaCha8Rng::seed_from_u64(15);
    let mut checked = 0;
    let mut wins = 0;
    while checked < 60 {
        let mut g = Game::default();
        let plies = rng.random_range(6..40);
        g.random_playout(plies, |n| rng.random_range(0..n));
        if g.is_over() {
            continue;
        }
        for winner in [Side::White, Side::Black] {
            for depth in 1..=3 {
                let r = forced_win(&g, winner, depth, u64::MAX);
                let exact = (1..=depth).find(|&d| wins_within(&mut g.clone(), winner, d));
                assert_eq!(r.plies, exact, "{} {winner:?} {depth}", g.position());
                wins += u32::from(exact.is_some());
            }
        }
        checked += 1;
    }
    // The sample holds wins to find, not only their absence.
    assert!(wins > 0);
}

/// A seeded random sparse position (the King, up to `defenders` defenders, 2 to
/// `attackers` attackers, either side to move), where captures, encirclement and a side
/// left without moves are near, as a game not yet over.
fn sparse_game(rng: &mut ChaCha8Rng, defenders: usize, attackers: usize) -> Game {
    loop {
        let mut squares: Vec<Square> = Square::all().filter(|s| !s.is_restricted()).collect();
        for i in (1..squares.len()).rev() {
            squares.swap(i, rng.random_range(0..=i));
        }
        let king = squares[0];
        let d = rng.random_range(0..=defenders);
        let a = rng.random_range(2..=attackers);
        let defs = squares[1..=d]
            .iter()
            .fold(Bitboard::EMPTY, |b, &s| b.with(s));
        let atts = squares[1 + d..=d + a]
            .iter()
            .fold(Bitboard::EMPTY, |b, &s| b.with(s));
        let side = if rng.random_bool(0.5) {
            Side::White
        } else {
            Side::Black
        };
        let position = Position::from_parts(atts, defs, king, side).expect("valid parts");
        let g = Game::new(position);
        if !g.is_over() {
            return g;
        }
    }
}

/// Black to move, White (the King and up to two defenders) inside the diamond of attackers
/// around the Castle with one of its eight squares open and the eighth attacker somewhere
/// outside: a wall that one move may close (rule 8.3), or not.
fn walled_game(rng: &mut ChaCha8Rng) -> Game {
    let sq = |name: &str| name.parse::<Square>().expect("a square");
    let mut wall: Vec<Square> = ["d2", "d6", "b4", "f4", "c3", "e3", "c5", "e5"]
        .map(sq)
        .to_vec();
    let inside = ["d3", "c4", "e4", "d5", "d4"].map(sq);
    loop {
        let open = wall.swap_remove(rng.random_range(0..wall.len()));
        let king = inside[rng.random_range(0..inside.len())];
        let defs = inside
            .iter()
            .filter(|&&s| s != king && s != Square::CASTLE && rng.random_bool(0.3))
            .fold(Bitboard::EMPTY, |b, &s| b.with(s));
        let mut atts = wall.iter().fold(Bitboard::EMPTY, |b, &s| b.with(s));
        let outside: Vec<Square> = Square::all()
            .filter(|&s| {
                !s.is_restricted() && !atts.contains(s) && s != open && !inside.contains(&s)
            })
            .collect();
        atts = atts.with(outside[rng.random_range(0..outside.len())]);
        wall.push(open);
        let position = Position::from_parts(atts, defs, king, Side::Black).expect("valid parts");
        let g = Game::new(position);
        if !g.is_over() {
            return g;
        }
    }
}

/// How the side to move can win in one ply, by brute force: the reason of each winning move.
fn wins_in_one_by(g: &Game) -> Vec<Reason> {
    let mover = g.side_to_move();
    g.legal_moves()
        .into_iter()
        .filter_map(|m| {
            let mut next = g.clone();
            next.play(m).expect("legal");
            next.outcome()
                .filter(|o| o.winner == mover)
                .map(|o| o.reason)
        })
        .collect()
}

#[test]
fn the_last_ply_finds_every_way_to_win_in_one() {
    // The last ply plays only moves that meet a necessary condition for a win (rule 8.1
    // to 8.5); on sparse positions, where walls and blocked sides are common, it must find
    // a win in one exactly when some legal move wins, and the sample must hold wins by
    // encirclement (8.3) and by leaving no move (8.5) that are no escape or capture.
    let mut rng = ChaCha8Rng::seed_from_u64(83);
    let (mut encirclements, mut no_moves) = (0, 0);
    for i in 0..20_000 {
        let g = if i % 8 == 0 {
            walled_game(&mut rng)
        } else {
            sparse_game(&mut rng, 4, 8)
        };
        let reasons = wins_in_one_by(&g);
        let found = forced_win(&g, g.side_to_move(), 1, u64::MAX).plies;
        assert_eq!(found.is_some(), !reasons.is_empty(), "{}", g.position());
        let only = |r: Reason| reasons.iter().all(|&x| x == r) && !reasons.is_empty();
        encirclements += u32::from(only(Reason::Encirclement));
        no_moves += u32::from(only(Reason::NoMoves));
    }
    assert!(
        encirclements > 0 && no_moves > 0,
        "{encirclements} {no_moves}"
    );
}

#[test]
fn a_fifth_occurrence_is_a_win_in_one_for_black() {
    // Rule 8.4: White and Black shuffle a piece each to and fro. The start position occurs
    // for the fifth time after 16 plies, made by Black's 8th move; at ply 15 that move is a
    // win in one, at ply 11 (a fourth occurrence to come) it is not.
    let mut g = Game::default();
    let shuffle = ["c4-c3", "d6-c6", "c3-c4", "c6-d6"];
    for ply in 0..15 {
        if ply == 11 {
            assert_eq!(forced_win(&g, Side::Black, 1, u64::MAX).plies, None);
        }
        g.play(common::mv(shuffle[ply % 4])).expect("legal");
    }
    assert_eq!(g.side_to_move(), Side::Black);
    assert!(wins_in_one_by(&g).contains(&Reason::Repetition));
    assert_eq!(forced_win(&g, Side::Black, 1, u64::MAX).plies, Some(1));
}

#[test]
fn agrees_with_plain_minimax_deeper_on_sparse_positions_and_repetitions() {
    // Depths up to 5, where the table of decided positions is used, on sparse positions
    // (few moves, many endings), some after shuffles that leave a position one or two
    // occurrences short of the fifth (rule 8.4), where the table must stand aside.
    let mut rng = ChaCha8Rng::seed_from_u64(84);
    let mut wins = 0;
    for i in 0..40 {
        let mut g = sparse_game(&mut rng, 2, 4);
        if i % 2 == 1 {
            // Shuffle the side to move's first movable piece and the other side's, to and
            // fro, while the game lasts.
            for _ in 0..3 {
                let mut moved = Vec::new();
                for _ in 0..2 {
                    if g.is_over() {
                        break;
                    }
                    let mv = g.legal_moves()[0];
                    g.play(mv).expect("legal");
                    moved.push(mv);
                }
                for mv in moved {
                    let back = brandubh_rules::Move::new(mv.to, mv.from);
                    if g.is_over() || g.play(back).is_err() {
                        break;
                    }
                }
            }
            if g.is_over() {
                continue;
            }
        }
        for winner in [Side::White, Side::Black] {
            let depth = 5;
            let r = forced_win(&g, winner, depth, u64::MAX);
            let exact = (1..=depth).find(|&d| wins_within(&mut g.clone(), winner, d));
            assert_eq!(r.plies, exact, "{} {winner:?}", g.position());
            wins += u32::from(exact.is_some());
        }
    }
    assert!(wins > 0);
}

#[test]
fn the_budget_stops_the_search_and_says_how_far_it_got() {
    let g = Game::default();
    let r = forced_win(&g, Side::White, 15, 2_000);
    assert_eq!(r.plies, None);
    assert!(r.searched < 15);
    assert!(r.nodes <= 2_001);
}

#[test]
fn a_deadline_stops_the_search_like_the_budget() {
    // 15 plies from the start would take far longer than any test; with no node budget
    // the deadline alone ends it, at a depth short of 15, and says how far it got.
    let g = Game::default();
    let deadline = Instant::now() + Duration::from_millis(30);
    let r = forced_win_until(&g, Side::White, 15, u64::MAX, Some(deadline));
    assert_eq!(r.plies, None);
    assert!(r.searched < 15, "{r:?}");
    assert!(Instant::now() >= deadline);
    // A deadline already passed still lets the first CLOCK_EVERY positions be searched,
    // and a win in one is found within them.
    let past = Some(Instant::now());
    let r = forced_win_until(&game(ESCAPE_IN_ONE), Side::White, 9, u64::MAX, past);
    assert_eq!(r.plies, Some(1));
}
