//! Load test of `brandubh serve` (scripts/load-test.sh runs it): a server on 127.0.0.1 in
//! this process and N clients, each a thread playing whole games over HTTP (create a game,
//! a random legal move, the agent's reply, ..., close it, next game) for a fixed time.
//! Prints requests/s, latency percentiles and errors (non-2xx answers and transport
//! failures), and the process's memory (resident set, Linux) before the clients start, at
//! its peak, and after they finished and closed their games.
//!
//! cargo run --release -p brandubh-serve --example load -- AGENT_FILE [CLIENTS] [SECONDS] [MOVE_MS]
//!
//! The agent thinks MOVE_MS milliseconds per move (default 50): the search's own deadline,
//! as a player's game asks for it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a load-test tool: a panic stops the run with its message"
)]

#[path = "../tests/common/http.rs"]
mod http;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use brandubh_serve::{Limits, Running, ServeConfig};
use serde_json::{Value, json};

#[derive(Default)]
struct Stats {
    latencies_us: Vec<u64>,
    by_kind: [(u64, u64); 4],
    errors: Vec<String>,
    games: u64,
}

const KINDS: [&str; 4] = ["create", "move", "reply", "close"];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(agent) = args.first().map(PathBuf::from) else {
        eprintln!("usage: load AGENT_FILE [CLIENTS] [SECONDS] [MOVE_MS]");
        std::process::exit(2);
    };
    let number = |i: usize, default: u64| -> u64 {
        args.get(i).map_or(default, |s| {
            s.parse().unwrap_or_else(|_| {
                eprintln!("argument {i}: {s:?} is not a number");
                std::process::exit(2)
            })
        })
    };
    let clients = number(1, 50).clamp(1, 1000) as usize;
    let seconds = number(2, 30).clamp(1, 600);
    let move_ms = number(3, 50).clamp(1, 10_000);
    let server = Running::start(
        ServeConfig {
            agents: vec![agent.clone()],
            runs: vec![],
            allow_hosts: vec![],
            limits: Limits {
                min_move_ms: 1,
                max_games: clients * 2,
                ..Limits::default()
            },
        },
        "127.0.0.1:0".parse().unwrap(),
    )
    .unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(1)
    });
    let addr = server.addr;
    let searches = Limits::default().searches;
    println!(
        "load test: {clients} clients, {seconds} s, agent {} thinking {move_ms} ms a move, {searches} search slots, server {}",
        agent.display(),
        server.url()
    );
    let before = memory();
    let stats = Arc::new(Mutex::new(Stats::default()));
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let t0 = Instant::now();
    let threads: Vec<_> = (0..clients)
        .map(|c| {
            let stats = Arc::clone(&stats);
            std::thread::spawn(move || client(addr, c as u64, deadline, move_ms, &stats))
        })
        .collect();
    for t in threads {
        let _ = t.join();
    }
    let wall = t0.elapsed().as_secs_f64();
    let ok = report(&stats, wall);
    let after = memory();
    println!(
        "memory (resident): {} before the clients, {} at the peak, {} after (open games {})",
        mib(before.0),
        mib(after.1),
        mib(after.0),
        http::get(addr, "/api/info").json()["open_games"]
    );
    if !ok {
        std::process::exit(1);
    }
}

/// The process's resident memory now and at its peak, in KiB (Linux; 0 elsewhere).
fn memory() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

/// Prints the throughput, the latency percentiles and the errors; `true` without errors.
fn report(stats: &Mutex<Stats>, wall: f64) -> bool {
    let mut s = stats.lock().unwrap();
    s.latencies_us.sort_unstable();
    let n = s.latencies_us.len();
    let pct = |p: f64| -> f64 {
        if n == 0 {
            return f64::NAN;
        }
        s.latencies_us[((n as f64 - 1.0) * p).round() as usize] as f64 / 1000.0
    };
    println!(
        "requests {n} in {wall:.1} s: {:.0} requests/s; latency p50 {:.1} ms, p95 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        n as f64 / wall,
        pct(0.5),
        pct(0.95),
        pct(0.99),
        pct(1.0)
    );
    for (k, (count, total_us)) in KINDS.iter().zip(s.by_kind) {
        if count > 0 {
            println!(
                "  {k:6} {count:7} requests, mean {:.1} ms",
                total_us as f64 / count as f64 / 1000.0
            );
        }
    }
    println!("games finished {}; errors {}", s.games, s.errors.len());
    for e in s.errors.iter().take(10) {
        println!("  error: {e}");
    }
    s.errors.is_empty()
}

/// One client: whole games until the deadline.
fn client(
    addr: std::net::SocketAddr,
    seed: u64,
    deadline: Instant,
    move_ms: u64,
    stats: &Mutex<Stats>,
) {
    let mut rng = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let call = |kind: usize, method: &str, path: &str, body: Value| -> Option<Value> {
        let t = Instant::now();
        let r = http::try_request(addr, method, path, body.to_string().as_bytes());
        let us = t.elapsed().as_micros() as u64;
        let mut s = stats.lock().unwrap();
        s.latencies_us.push(us);
        s.by_kind[kind].0 += 1;
        s.by_kind[kind].1 += us;
        match r {
            Ok(r) if (200..300).contains(&r.status) => serde_json::from_str(&r.body).ok(),
            Ok(r) => {
                s.errors
                    .push(format!("{method} {path}: {} {}", r.status, r.body));
                None
            }
            Err(e) => {
                s.errors.push(format!("{method} {path}: {e}"));
                None
            }
        }
    };
    while Instant::now() < deadline {
        let side = if next() % 2 == 0 { "white" } else { "black" };
        let Some(mut g) = call(
            0,
            "POST",
            "/api/games",
            json!({"side": side, "move_ms": move_ms, "seed": seed}),
        ) else {
            return;
        };
        let id = g["id"].as_str().unwrap_or_default().to_owned();
        while Instant::now() < deadline && g["outcome"].is_null() {
            let reply = if g["your_turn"] == true {
                let legal = g["legal"].as_array().cloned().unwrap_or_default();
                let mv = legal[(next() % legal.len().max(1) as u64) as usize].clone();
                call(
                    1,
                    "POST",
                    &format!("/api/games/{id}/move"),
                    json!({"move": mv}),
                )
            } else {
                call(2, "POST", &format!("/api/games/{id}/reply"), json!({}))
            };
            match reply {
                Some(v) => g = v,
                None => return,
            }
        }
        if !g["outcome"].is_null() {
            stats.lock().unwrap().games += 1;
        }
        call(3, "DELETE", &format!("/api/games/{id}"), json!({}));
    }
}
