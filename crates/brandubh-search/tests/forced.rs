//! `forced_win`, the exact search for a forced win within n plies: the shortest win, the
//! absence of one, the node budget, and agreement with plain minimax (rule 8 throughout).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests may unwrap: a panic is a failed test"
)]

mod common;

use brandubh_rules::{Game, Side};
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
