//! Simulations per second with the uniform evaluator (tree and rules cost only), on the
//! start position and on mid-game positions reached by seeded random play, for PUCT and
//! Gumbel. Criterion reports the throughput in simulations ("elem") per second.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "benchmarks may unwrap: a panic is a failed benchmark"
)]

use std::hint::black_box;

use brandubh_rules::Game;
use brandubh_search::{Search, SearchConfig, UniformEvaluator};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A game after `plies` random moves, the first seed from `seed` up whose game lasts.
fn random_game(mut seed: u64, plies: usize) -> Game {
    loop {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut game = Game::default();
        game.random_playout(plies, |n| rng.random_range(0..n));
        if !game.is_over() {
            return game;
        }
        seed += 1;
    }
}

fn bench(c: &mut Criterion) {
    let positions = [
        ("start", Game::default()),
        ("mid20", random_game(1, 20)),
        ("mid40", random_game(2, 40)),
    ];
    let configs = [
        ("puct800", SearchConfig::puct(800)),
        ("gumbel800", SearchConfig::gumbel(800)),
        ("gumbel32", SearchConfig::gumbel(32)),
    ];
    for (config_name, config) in &configs {
        let mut group = c.benchmark_group(*config_name);
        group.throughput(Throughput::Elements(u64::from(config.simulations)));
        for (name, game) in &positions {
            group.bench_function(*name, |b| {
                b.iter(|| {
                    let mut search = Search::new(game.clone(), config.clone(), 1).unwrap();
                    let result = search.run(&mut UniformEvaluator, 1).unwrap();
                    assert_eq!(result.visits.iter().sum::<u32>(), config.simulations);
                    black_box(result.best_move)
                });
            });
        }
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(std::time::Duration::from_secs(1))
        .measurement_time(std::time::Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
