//! Perft and move-generation speed. Each bench asserts what it computes.
//!
//! Run: `cargo bench -p brandubh-rules --bench perft`. Target (issue 2): perft(5) from the
//! start in ≤ 0.6 s on one core (≥ 40M leaves/s).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "benchmarks may unwrap: a panic is a failed benchmark"
)]

use std::hint::black_box;
use std::time::Instant;

use brandubh_rules::{Game, Position};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Mid-game positions reached by seeded random play (20–40 plies, game not over).
fn midgame_positions(n: usize) -> Vec<Position> {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut out = Vec::new();
    while out.len() < n {
        let mut g = Game::default();
        let plies = rng.random_range(20..40);
        g.random_playout(plies, |n| rng.random_range(0..n));
        if !g.is_over() {
            out.push(*g.position());
        }
    }
    out
}

fn bench(c: &mut Criterion) {
    // One timed perft(5) printed as a plain figure, beside criterion's statistics.
    let t = Instant::now();
    let n = Game::default().perft(5);
    let secs = t.elapsed().as_secs_f64();
    assert_eq!(n, 25_732_536); // rule 3; see tests/data/perft.txt
    println!(
        "perft(5) = {n} in {secs:.3} s = {:.1}M leaves/s",
        n as f64 / secs / 1e6
    );

    let mut g = c.benchmark_group("perft");
    g.sample_size(10);
    g.throughput(Throughput::Elements(975_056));
    g.bench_function("start_depth4", |b| {
        b.iter(|| {
            let n = Game::default().perft(black_box(4));
            assert_eq!(n, 975_056);
        })
    });
    g.finish();

    let positions = midgame_positions(256);
    let expected: usize = positions.iter().map(|p| p.legal_moves().len()).sum();
    let mut g = c.benchmark_group("movegen");
    g.throughput(Throughput::Elements(positions.len() as u64));
    g.bench_function("midgame_legal_moves", |b| {
        b.iter(|| {
            let total: usize = positions
                .iter()
                .map(|p| black_box(p).legal_moves().len())
                .sum();
            assert_eq!(total, expected);
        })
    });
    g.bench_function("midgame_play_all", |b| {
        b.iter(|| {
            let mut captured = 0;
            for p in &positions {
                for mv in p.legal_moves() {
                    captured += black_box(p.play_unchecked(mv)).captured.count();
                }
            }
            black_box(captured)
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
