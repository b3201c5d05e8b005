//! Baseline players: alpha-beta and greedy tactics, time limits, legal moves in whole games,
//! and the MCTS player's tree reuse.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests may unwrap: a panic is a failed test"
)]

mod common;

use std::time::{Duration, Instant};

use brandubh_rules::{Game, Reason, Side};
use brandubh_search::{
    AlphaBetaConfig, AlphaBetaPlayer, GreedyEvaluator, GreedyPlayer, MctsPlayer, Player,
    RandomPlayer, SearchConfig, SearchError, UniformEvaluator, WIN,
};
use common::{BLOCK_IN_ONE, CAPTURE_IN_ONE, ESCAPE_IN_ONE, game, mv, safe_moves, winning_moves};

#[test]
fn alphabeta_finds_the_escape_and_the_capture() {
    let mut player = AlphaBetaPlayer::with_depth(3).unwrap();
    let escape = player.search(&game(ESCAPE_IN_ONE)).unwrap();
    assert_eq!(escape.best_move, mv("a2-a1"));
    assert_eq!(escape.score, WIN - 1);
    assert_eq!(escape.depth, 1, "a forced win stops the deepening");

    let g = game(CAPTURE_IN_ONE);
    let capture = player.search(&g).unwrap();
    assert_eq!(winning_moves(&g), [capture.best_move]);
    assert_eq!(capture.score, WIN - 1);
}

#[test]
fn alphabeta_sees_the_threat_at_depth_two() {
    let g = game(BLOCK_IN_ONE);
    // One ply only sees its own move: it misses the King's reply.
    let shallow = AlphaBetaPlayer::with_depth(1).unwrap().search(&g).unwrap();
    assert!(shallow.score > -WIN / 2);
    // Two plies find the only move that does not lose at once.
    let deep = AlphaBetaPlayer::with_depth(2).unwrap().search(&g).unwrap();
    assert_eq!(safe_moves(&g), [deep.best_move]);
    assert!(deep.score > -WIN / 2);
    assert!(deep.nodes > shallow.nodes);
}

#[test]
fn alphabeta_stops_at_the_time_limit() {
    let mut player = AlphaBetaPlayer::new(AlphaBetaConfig {
        max_depth: 64,
        time_limit: Some(Duration::from_millis(100)),
        ply_cap: None,
    })
    .unwrap();
    let start = Instant::now();
    let result = player.search(&Game::default()).unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    assert!((1..64).contains(&result.depth));
    assert!(Game::default().legal_moves().contains(&result.best_move));
}

#[test]
fn greedy_takes_a_win_and_blocks_an_open_corner() {
    let mut greedy = GreedyPlayer::new(0);
    assert_eq!(greedy.choose(&game(ESCAPE_IN_ONE)).unwrap(), mv("a2-a1"));
    let g = game(CAPTURE_IN_ONE);
    let mut after = g.clone();
    after.play(greedy.choose(&g).unwrap()).unwrap();
    assert_eq!(
        after.outcome().map(|o| (o.winner, o.reason)),
        Some((Side::Black, Reason::KingCaptured))
    );
    // The heuristic counts the King's open lines to a corner, so one ply sees the threat.
    assert_eq!(greedy.choose(&game(BLOCK_IN_ONE)).unwrap(), mv("b5-b1"));
}

fn players(seed: u64) -> Vec<Box<dyn Player>> {
    vec![
        Box::new(RandomPlayer::new(seed)),
        Box::new(GreedyPlayer::new(seed)),
        Box::new(AlphaBetaPlayer::with_depth(2).unwrap()),
        Box::new(MctsPlayer::new(UniformEvaluator, SearchConfig::gumbel(16), seed).unwrap()),
        Box::new(
            MctsPlayer::new(GreedyEvaluator::default(), SearchConfig::puct(32), seed).unwrap(),
        ),
    ]
}

#[test]
fn baseline_players_always_return_legal_moves() {
    let names: Vec<String> = players(0).iter().map(|p| p.name()).collect();
    assert_eq!(
        names,
        [
            "random",
            "greedy",
            "alphabeta(depth 2)",
            "mcts-gumbel(16 simulations)",
            "mcts-puct(32 simulations)"
        ]
    );
    let mut finished = 0;
    for (i, j) in [(0, 1), (1, 2), (2, 3), (3, 4), (4, 0), (1, 4)] {
        let mut white = players(i as u64).swap_remove(i);
        let mut black = players(j as u64 + 10).swap_remove(j);
        let mut game = Game::default();
        while !game.is_over() && game.ply() < 80 {
            let player = match game.side_to_move() {
                Side::White => &mut white,
                Side::Black => &mut black,
            };
            let m = player.choose(&game).unwrap();
            game.play(m)
                .unwrap_or_else(|e| panic!("{}: {e}", player.name()));
        }
        finished += usize::from(game.is_over());
        if game.is_over() {
            assert_eq!(white.choose(&game), Err(SearchError::GameOver));
        }
    }
    assert!(finished > 0);
}

#[test]
fn mcts_player_reuses_its_tree_across_turns() {
    // Without the solver, which would prove the escape of the last game at once.
    let config = SearchConfig {
        solver: false,
        ..SearchConfig::puct(200).without_noise()
    };
    let mut player = MctsPlayer::new(GreedyEvaluator::default(), config, 1).unwrap();
    let mut g = Game::default();
    let first = player.choose(&g).unwrap();
    g.play(first).unwrap();
    // The opponent answers with the reply the player looked at most; the player then
    // searches from the kept subtree.
    let tree = player.search().unwrap().tree();
    let played = tree
        .children(tree.root())
        .find(|&c| tree.node(c).mv() == Some(first))
        .unwrap();
    let reply = tree
        .children(played)
        .max_by_key(|&c| tree.node(c).visits())
        .unwrap();
    let kept = tree.node(reply).visits();
    assert!(kept > 1);
    g.play(tree.node(reply).mv().unwrap()).unwrap();
    player.choose(&g).unwrap();
    let result = player.last_result().unwrap();
    assert_eq!(result.simulations, 200);
    assert_eq!(
        result.visits.iter().sum::<u32>(),
        200 + kept - 1,
        "visits kept"
    );

    // A different game starts a fresh tree.
    player.choose(&game(ESCAPE_IN_ONE)).unwrap();
    assert_eq!(
        player.last_result().unwrap().visits.iter().sum::<u32>(),
        200
    );
}
