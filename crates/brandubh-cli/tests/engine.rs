//! `brandubh engine` through the binary: scripted OpenTafl host sessions (issue 17). The
//! host side keeps its own game with the rules crate as referee and checks every move the
//! engine sends against it.
//!
//! `BRANDUBH_ENGINE_CLOCK_MS=60000 cargo test --release -p brandubh-cli --test engine
//! clock_main -- --nocapture` plays the clock test on a 60-second clock (about a minute)
//! and prints the per-move figures; by default it uses 6 seconds. `BRANDUBH_ENGINE_AGENT=
//! models/brandubh-v1.agent` plays it with that agent instead of the tiny one.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests may unwrap: a panic is a failed test"
)]

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use brandubh_agent::clock::{SideClock, TimeManager};
use brandubh_agent::otn;
use brandubh_rules::{Game, Move, Position, Side};
use brandubh_search::SearchSettings;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Longest wait for one line from the engine.
const LINE_TIMEOUT: Duration = Duration::from_secs(60);
/// Plies after which a scripted game stops (the tiny agent and a random host can wander).
const MAX_PLIES: usize = 160;

/// A tiny seeded agent (C8xN1, PUCT, 8 simulations), saved once for this test binary.
fn tiny_agent() -> &'static Path {
    static AGENT: OnceLock<PathBuf> = OnceLock::new();
    AGENT.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("brandubh-cli-engine-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("tiny.agent");
        let search = SearchSettings::new(brandubh_search::Algorithm::Puct, 8);
        common::save_tiny_agent(&path, 17, search);
        path
    })
}

/// The host end of a session with a running engine.
struct Host {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// Every line the engine sent.
    received: Vec<String>,
}

impl Host {
    fn start(extra: &[&str]) -> Host {
        Host::start_with(tiny_agent().to_str().unwrap(), extra)
    }

    fn start_with(agent: &str, extra: &[&str]) -> Host {
        let mut child = Command::new(env!("CARGO_BIN_EXE_brandubh"))
            .args(["engine", "--agent", agent, "--threads", "1"])
            .args(extra)
            .env("NO_COLOR", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the brandubh binary runs");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let mut host = Host {
            stdin: child.stdin.take(),
            child,
            lines: rx,
            received: Vec::new(),
        };
        assert_eq!(
            host.recv().as_deref(),
            Some("hello"),
            "the engine greets first"
        );
        host
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    /// The next line, checked to be a protocol line; `None` once the engine closed stdout.
    fn recv(&mut self) -> Option<String> {
        let line = self.lines.recv_timeout(LINE_TIMEOUT).ok()?;
        let word = line.split(' ').next().unwrap_or_default();
        assert!(
            ["hello", "move", "analysis", "status", "error"].contains(&word),
            "not a protocol line on stdout: {line:?}"
        );
        self.received.push(line.clone());
        Some(line)
    }

    /// Fails if the engine sends any line within `wait`: what a host before its first
    /// `play` or `analyze` must see (OpenTafl has no game display to take a line yet).
    fn assert_silent(&mut self, wait: Duration, after: &str) {
        if let Ok(line) = self.lines.recv_timeout(wait) {
            panic!("unsolicited line after {after:?}: {line:?}");
        }
    }

    /// Fails if the engine sends anything but `status` lines within `wait`.
    fn assert_silent_but_status(&mut self, wait: Duration) {
        let t0 = Instant::now();
        while let Some(left) = wait.checked_sub(t0.elapsed()) {
            match self.lines.recv_timeout(left) {
                Ok(line) if line.starts_with("status ") => self.received.push(line),
                Ok(line) => panic!("unsolicited line: {line:?}"),
                Err(_) => return,
            }
        }
    }

    /// The next line that is not a `status` line.
    fn recv_reply(&mut self) -> String {
        loop {
            let line = self.recv().expect("the engine replies");
            if !line.starts_with("status ") {
                return line;
            }
        }
    }

    /// Sends `play` (and `clock`, if given) and returns the move and the time it took.
    fn play(&mut self, side: Side, clock: Option<&str>) -> (Move, Duration) {
        let t0 = Instant::now();
        self.send(&format!("play {}", side_word(side)));
        if let Some(c) = clock {
            self.send(c);
        }
        let reply = self.recv_reply();
        let elapsed = t0.elapsed();
        let record = reply
            .strip_prefix("move ")
            .unwrap_or_else(|| panic!("expected a move, got {reply:?}"));
        (otn::parse_move(record).expect("a move record"), elapsed)
    }

    /// Closes stdin and waits for the engine to exit.
    fn close(mut self) -> ExitStatus {
        drop(self.stdin.take());
        self.wait()
    }

    fn wait(&mut self) -> ExitStatus {
        let t0 = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(30),
                "the engine did not exit"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn side_word(side: Side) -> &'static str {
    match side {
        Side::Black => "attackers",
        Side::White => "defenders",
    }
}

fn finish_code(game: &Game) -> u8 {
    match game.outcome() {
        Some(o) if o.winner == Side::Black => 2,
        Some(_) => 3,
        None => 0,
    }
}

/// How the scripted host behaves in one game.
#[derive(Clone, Copy, Default)]
struct Script {
    /// Tell the engine a wrong move list now and then (the position stays the host's).
    wrong_move_lists: bool,
    /// Remove a random piece from the host's board now and then (the host judges
    /// captures differently): the engine must follow the host's position.
    edit_positions: bool,
    /// Confirm each engine move with the host's position (`move POSITION`).
    confirm: bool,
}

/// Plays one game between the engine (as `engine_side`) and a random host player; checks
/// every engine move against the host's game. Returns the game and the plies the engine
/// played.
fn play_game(host: &mut Host, engine_side: Side, seed: u64, script: Script) -> (Game, usize) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut game = Game::default();
    let mut last_host_move: Option<Move> = None;
    let mut engine_moves = 0;
    host.send(&format!("rules {}", otn::BRANDUBH_RULES));
    while !game.is_over() && game.ply() < MAX_PLIES {
        if game.side_to_move() == engine_side {
            if let Some(mv) = last_host_move.take() {
                let told = if script.wrong_move_lists && rng.random_bool(0.2) {
                    "a1-a2".to_owned()
                } else {
                    mv.to_string()
                };
                let record = otn::write_position(game.position());
                host.send(&format!("opponent-move {told} {record}"));
            }
            let (mv, _) = host.play(engine_side, None);
            game.play(mv).unwrap_or_else(|e| {
                panic!(
                    "ply {}: the engine sent an illegal move for {}: {e}",
                    game.ply() + 1,
                    game.position()
                )
            });
            engine_moves += 1;
            if script.confirm && !game.is_over() {
                host.send(&format!("move {}", otn::write_position(game.position())));
            }
        } else {
            let moves = game.legal_moves();
            let mv = *moves.as_slice().choose(&mut rng).unwrap();
            game.play(mv).unwrap();
            last_host_move = Some(mv);
            if script.edit_positions
                && !game.is_over()
                && rng.random_bool(0.15)
                && let Some(edited) = remove_a_piece(game.position(), &mut rng)
            {
                game = Game::new(edited);
            }
        }
    }
    host.send(&format!("finish {}", finish_code(&game)));
    (game, engine_moves)
}

/// `pos` with one attacker or defender (not the King) taken off, if that is still a
/// position where the game goes on.
fn remove_a_piece(pos: &Position, rng: &mut ChaCha8Rng) -> Option<Position> {
    let text = pos.to_string();
    let (placement, side) = text.split_once(' ')?;
    let mut cells: Vec<char> = Vec::new();
    for c in placement.chars() {
        match c {
            '/' => cells.push('/'),
            d if d.is_ascii_digit() => {
                cells.extend(std::iter::repeat_n('1', d as usize - '0' as usize))
            }
            other => cells.push(other),
        }
    }
    let pieces: Vec<usize> = (0..cells.len())
        .filter(|&i| cells[i] == 'A' || cells[i] == 'D')
        .collect();
    let &i = pieces.as_slice().choose(rng)?;
    cells[i] = '1';
    let edited: String = cells.into_iter().collect();
    let p: Position = format!("{edited} {side}").parse().ok()?;
    (!Game::new(p).is_over()).then_some(p)
}

#[test]
fn whole_games_as_defenders_and_as_attackers() {
    for (side, seed) in [(Side::White, 1), (Side::Black, 2)] {
        let mut host = Host::start(&[]);
        let script = Script {
            confirm: true,
            ..Script::default()
        };
        let (game, engine_moves) = play_game(&mut host, side, seed, script);
        assert!(engine_moves > 0);
        // The engine reports each move in a status line.
        assert!(
            host.received
                .iter()
                .any(|l| l.starts_with("status ") && l.contains("simulations"))
        );
        host.send("goodbye");
        let status = host.wait();
        assert!(status.success(), "{status:?} after {} plies", game.ply());
    }
}

#[test]
fn every_engine_move_is_legal_for_the_hosts_position_over_many_random_games() {
    let mut host = Host::start(&["--sims", "4"]);
    let mut plies = 0;
    let mut finished = 0;
    for seed in 0..20u64 {
        let side = if seed % 2 == 0 {
            Side::White
        } else {
            Side::Black
        };
        let script = Script {
            wrong_move_lists: seed % 4 < 2,
            edit_positions: seed % 3 != 0,
            confirm: seed % 2 == 0,
        };
        let (game, engine_moves) = play_game(&mut host, side, 100 + seed, script);
        plies += engine_moves;
        finished += usize::from(game.is_over());
    }
    assert!(plies > 300, "{plies} engine moves");
    assert!(finished >= 10, "{finished} of 20 games finished");
    assert!(host.close().success());
}

#[test]
fn analysis_of_a_position_set_by_position_and_side() {
    let mut host = Host::start(&[]);
    host.send(&format!("rules {}", otn::BRANDUBH_RULES));
    // White to move, the King on a2 escapes to a1 (RULES.md 8.1). In OTN rank 1 comes
    // first: a flipped board would put the King on a6.
    let ours: Position = "3A3/7/2AD3/A3DAA/7/K2A3/3A3 w".parse().unwrap();
    let record = otn::write_position(&ours);
    assert_eq!(record, "/3t3/K2t3/7/t3Ttt/2tT3/7/3t3/");
    host.send(&format!("position {record}"));
    host.send("side defenders");
    host.send("clock 60000 60000 0 0 0");
    host.send("analyze 3 1");
    let reply = host.recv_reply();
    let fields: Vec<&str> = reply.split(' ').collect();
    assert_eq!(fields[0], "analysis", "{reply}");
    let n: usize = fields[1].parse().unwrap();
    assert!((1..=3).contains(&n), "{reply}");
    assert_eq!(fields.len(), 2 + 2 * n, "{reply}");
    assert!(fields[2].starts_with("a2-a1"), "the escape first: {reply}");
    let game = Game::new(ours);
    for pair in fields[2..].chunks(2) {
        let line: Vec<Move> = pair[0]
            .split('|')
            .map(|m| otn::parse_move(m).unwrap())
            .collect();
        let mut g = game.clone();
        for mv in line {
            g.play(mv).unwrap_or_else(|e| panic!("{reply}: {e}"));
        }
        let value: f64 = pair[1].parse().unwrap();
        assert!((-1.0..=1.0).contains(&value), "{reply}");
    }
    let escape: f64 = fields[3].parse().unwrap();
    assert!(escape > 0.99, "an escape wins: {reply}");

    // The same board with Black to move: the attackers' moves (a2-a1 is not theirs).
    host.send("side attackers");
    host.send("analyze 2 1");
    let reply = host.recv_reply();
    let first = reply
        .split(' ')
        .nth(2)
        .unwrap()
        .split('|')
        .next()
        .unwrap()
        .to_owned();
    let black = Game::new(otn::parse_position(&record, Side::Black).unwrap());
    assert!(
        black
            .legal_moves()
            .contains(&otn::parse_move(&first).unwrap()),
        "{reply}"
    );
    assert!(host.close().success());
}

/// The engine's time per move against its plan on a clock of `main_ms` per side (and
/// overtime periods), over a scripted game; the host's clock never runs out.
fn clock_game(main_ms: u64, overtime_s: u64, periods: u32, seed: u64) -> Vec<(Duration, Duration)> {
    let agent = std::env::var("BRANDUBH_ENGINE_AGENT").ok();
    let mut host = match &agent {
        Some(path) => Host::start_with(path, &[]),
        None => Host::start(&[]),
    };
    let engine_side = Side::White;
    let tm = TimeManager::default();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut game = Game::default();
    host.send(&format!("rules {}", otn::BRANDUBH_RULES));
    let mut left_ms = main_ms as i64;
    let mut in_overtime = false;
    let mut figures = Vec::new();
    let mut last = None;
    while !game.is_over() && game.ply() < MAX_PLIES {
        if game.side_to_move() != engine_side {
            let mv = *game.legal_moves().as_slice().choose(&mut rng).unwrap();
            game.play(mv).unwrap();
            last = Some(mv);
            continue;
        }
        if let Some(mv) = last.take() {
            host.send(&format!(
                "opponent-move {mv} {}",
                otn::write_position(game.position())
            ));
        }
        let ours = if in_overtime {
            SideClock {
                millis: overtime_s * 1000,
                in_overtime: true,
                periods,
            }
        } else {
            SideClock {
                millis: left_ms as u64,
                in_overtime: false,
                periods,
            }
        };
        let star = if ours.in_overtime { "*" } else { "" };
        let clock = format!(
            "clock 60000 {}{star} {overtime_s} {periods} {periods}",
            ours.millis
        );
        let plan = tm.plan(&ours, Duration::from_secs(overtime_s));
        let (mv, took) = host.play(engine_side, Some(&clock));
        game.play(mv).unwrap();
        figures.push((plan, took));
        // Generous: the plan plus half a second (a shared machine, the pipes, the host).
        assert!(
            took <= plan + Duration::from_millis(500),
            "ply {}: {took:?} for a plan of {plan:?}",
            game.ply()
        );
        if in_overtime {
            assert!(
                took.as_millis() < u128::from(overtime_s) * 1000,
                "lost an overtime period"
            );
        } else {
            left_ms -= took.as_millis() as i64;
            if left_ms <= 0 {
                assert!(periods > 0, "flagged at ply {}", game.ply());
                in_overtime = true;
            }
        }
    }
    host.send("goodbye");
    assert!(host.wait().success());
    figures
}

#[test]
fn clock_main_time_only_never_flags_and_keeps_to_the_plan() {
    let main_ms = std::env::var("BRANDUBH_ENGINE_CLOCK_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(6_000);
    let figures = clock_game(main_ms, 0, 0, 5);
    let total: Duration = figures.iter().map(|f| f.1).sum();
    let worst = figures
        .iter()
        .map(|(plan, took)| took.as_secs_f64() - plan.as_secs_f64())
        .fold(f64::NEG_INFINITY, f64::max);
    println!(
        "clock {main_ms} ms: {} engine moves, {:.3} s used in all, first plan {:.3} s, largest overrun {:+.3} s",
        figures.len(),
        total.as_secs_f64(),
        figures.first().map_or(0.0, |f| f.0.as_secs_f64()),
        worst
    );
    for (i, (plan, took)) in figures.iter().enumerate() {
        println!(
            "  move {:3}: plan {:.3} s, took {:.3} s",
            i + 1,
            plan.as_secs_f64(),
            took.as_secs_f64()
        );
    }
    assert!(total < Duration::from_millis(main_ms));
}

#[test]
fn clock_with_overtime_spends_main_time_then_stays_inside_the_periods() {
    // 1 s of main time, then 1-second periods: the engine moves into overtime and must
    // keep every move inside a period.
    let figures = clock_game(1_000, 1, 3, 6);
    assert!(figures.len() >= 3);
}

#[test]
fn finish_and_goodbye_end_games_and_the_session() {
    let mut host = Host::start(&["--sims", "4"]);
    let (game, _) = play_game(&mut host, Side::White, 9, Script::default());
    assert!(game.ply() > 0);
    // A second game in the same session, then goodbye.
    let (_, moves) = play_game(&mut host, Side::Black, 10, Script::default());
    assert!(moves > 0);
    host.send("goodbye");
    assert!(host.wait().success());
}

#[test]
fn bad_input_gets_error_replies_and_the_engine_keeps_running() {
    let mut host = Host::start(&["--sims", "4"]);
    host.send(&format!("rules {}", otn::BRANDUBH_RULES));
    // Before the host's first `play`, bad lines are logged, never answered.
    host.send("fly to the moon");
    host.send("position /3t3/");
    host.assert_silent(Duration::from_millis(300), "bad lines before the game");
    let (mv, _) = host.play(Side::White, None);
    let mut game = Game::default();
    game.play(mv).unwrap();
    host.send(&format!("move {}", otn::write_position(game.position())));
    for line in [
        "fly to the moon",
        "play sideways",
        "clock a b c d e",
        "analyze 0 5",
        "position /3t3/",
        "opponent-move d5-f5 /3t3/3t3/",
        "finish 9",
    ] {
        host.send(line);
        let reply = host.recv_reply();
        assert!(reply.starts_with("error 0 "), "{line:?} -> {reply:?}");
    }
    // Not UTF-8, and a line longer than the engine keeps.
    host.send_bytes(b"\xff\xfe junk\n");
    assert!(host.recv_reply().starts_with("error 0 "));
    host.send(&"x".repeat(100_000));
    assert!(host.recv_reply().starts_with("error 0 "));
    // The host's own messages need no reply: `hello`, `error` codes.
    host.send("hello");
    host.send("error 2");
    // Still playing: Black's reply.
    let (mv, _) = host.play(Side::Black, None);
    assert!(game.legal_moves().contains(&mv));
    // A closed stdin ends the engine cleanly.
    assert!(host.close().success());
}

#[test]
fn rules_for_another_game_are_refused_when_the_game_starts_and_the_engine_exits_1() {
    let refused = [
        "dim:11 atkf:n start:/3ttttt3/5t5/11/t4T4t/t3TTT3t/tt1TTKTT1tt/t3TTT3t/t4T4t/11/5t5/3ttttt3/",
        "dim:7 esc:e atkf:n ks:w cenp:K cenhe:tT start:/3t3/3t3/3T3/ttTKTtt/3T3/3t3/3t3/",
        "not a rules string",
    ];
    for rules in refused {
        // As a player: the refusal answers the first `play` as a critical error (OpenTafl
        // shows it and resigns for the engine).
        let mut host = Host::start(&[]);
        host.send(&format!("rules {rules}"));
        host.assert_silent(Duration::from_millis(300), "refused rules");
        host.send("play attackers");
        let reply = host.recv_reply();
        assert!(reply.starts_with("error -1 "), "{reply}");
        assert!(reply.contains("Brandubh 2.5W only"), "{reply}");
        assert_eq!(host.wait().code(), Some(1), "{rules}");
        assert!(host.recv().is_none(), "nothing after the error");
    }
    // As OpenTafl's analysis engine: a non-critical error (no player to resign).
    let mut host = Host::start(&[]);
    host.send(&format!("rules {}", refused[1]));
    host.send("analyze 3 1");
    let reply = host.recv_reply();
    assert!(reply.starts_with("error 0 "), "{reply}");
    assert_eq!(host.wait().code(), Some(1));
    // A session that ends before any game: exit status 1, nothing but `hello` sent.
    let mut host = Host::start(&[]);
    host.send(&format!("rules {}", refused[0]));
    assert_eq!(host.close().code(), Some(1));
}

/// Which lines the engine sent, as OpenTafl 0.4.8.0b's host (`ExternalEngineHost`,
/// `ExternalEnginePlayer`) drives a game: it sends `rules` as soon as the process starts
/// (before the engine's `hello` may have arrived), and at each of the engine's turns
/// `opponent-move` (after the opponent's move), `clock` (only with a clock), then `play`;
/// each accepted move is confirmed with `move POSITION`. Its handlers of `status`, `error`,
/// `move` and `analysis` need the game display, which exists only once the game has
/// started, so nothing but `hello` may come before the first `play`.
#[test]
fn opentafl_game_start_order_gets_no_unsolicited_line() {
    // The engine as White (moves first), with a clock, and the rules string of
    // docs/guide/opentafl.md.
    let mut host = Host::start(&["--sims", "4"]);
    host.send(&format!("rules {}", otn::BRANDUBH_RULES));
    host.assert_silent(Duration::from_millis(500), "rules");
    host.send("clock 60000 60000 0 0 0 ");
    host.assert_silent(Duration::from_millis(300), "clock");
    host.send("play defenders");
    let first = host.recv().unwrap();
    assert!(
        first.starts_with("move "),
        "the first answer is the move: {first}"
    );
    let mv = otn::parse_move(first.strip_prefix("move ").unwrap()).unwrap();
    let mut game = Game::default();
    game.play(mv).unwrap();
    host.send(&format!("move {}", otn::write_position(game.position())));
    // The rules notice (tfr, ks) follows the move as a status line.
    host.assert_silent_but_status(Duration::from_millis(300));
    let reply = *game.legal_moves().first().unwrap();
    game.play(reply).unwrap();
    host.send(&format!(
        "opponent-move {reply} {}",
        otn::write_position(game.position())
    ));
    host.send("clock 59000 60000 0 0 0 ");
    host.send("play defenders");
    let second = host.recv_reply();
    assert!(second.starts_with("move "), "{second}");
    host.send("finish 0");
    host.send("goodbye");
    assert!(host.wait().success());
    let notices = host
        .received
        .iter()
        .filter(|l| l.contains("as the host referees it"))
        .count();
    assert_eq!(notices, 1, "the rules notice once: {:?}", host.received);

    // The engine as Black (moves second), no clock: the first command after `rules` is
    // the opponent's move.
    let mut host = Host::start(&["--sims", "4"]);
    host.send(&format!("rules {}", otn::BRANDUBH_RULES));
    host.assert_silent(Duration::from_millis(300), "rules");
    let mut game = Game::default();
    let opening = *game.legal_moves().first().unwrap();
    game.play(opening).unwrap();
    host.send(&format!(
        "opponent-move {opening} {}",
        otn::write_position(game.position())
    ));
    host.assert_silent(Duration::from_millis(300), "opponent-move");
    host.send("play attackers");
    assert!(host.recv().unwrap().starts_with("move "));
    host.send("goodbye");
    assert!(host.wait().success());

    // OpenTafl's analysis engine: rules, position and side, then `analyze`.
    let mut host = Host::start(&[]);
    host.send(&format!("rules {}", otn::BRANDUBH_RULES));
    host.send(&format!(
        "position {}",
        otn::write_position(&Position::start())
    ));
    host.send("side defenders");
    host.assert_silent(Duration::from_millis(300), "position and side");
    // The analysis takes the time given less the engine's 100 ms margin, not the shorter
    // plan of a timed Gumbel search (it answered after 73 % of 2 s before).
    let asked = std::time::Instant::now();
    host.send("analyze 2 1");
    let reply = host.recv().unwrap();
    let took = asked.elapsed();
    assert!(reply.starts_with("analysis "), "{reply}");
    assert!(
        took >= Duration::from_millis(800),
        "answered after {took:?}: {reply}"
    );
    assert!(host.close().success());
}

/// OpenTafl's in-game `dumplasteval` command sends `dump 0` to the engine without a line
/// break (`ExternalEngineHost.dumpEvaluation`), so the host's next command arrives glued to
/// it: the engine must still take that command, and answer the dump with nothing.
#[test]
fn opentafls_dump_without_a_line_break_loses_no_command() {
    let mut host = Host::start(&["--sims", "4"]);
    host.send(&format!("rules {}", otn::BRANDUBH_RULES));
    let (mv, _) = host.play(Side::White, None);
    let mut game = Game::default();
    game.play(mv).unwrap();
    host.send(&format!("move {}", otn::write_position(game.position())));
    host.assert_silent_but_status(Duration::from_millis(300));
    host.send_bytes(b"dump 0");
    let reply = *game.legal_moves().first().unwrap();
    game.play(reply).unwrap();
    host.send(&format!(
        "opponent-move {reply} {}",
        otn::write_position(game.position())
    ));
    host.send("play defenders");
    let answer = host.recv_reply();
    let mv = otn::parse_move(answer.strip_prefix("move ").expect(&answer)).unwrap();
    assert!(
        game.legal_moves().contains(&mv),
        "a move for the host's position after the glued opponent-move: {answer}"
    );
    host.send("dump 0");
    host.assert_silent_but_status(Duration::from_millis(300));
    assert!(host.close().success());
}
