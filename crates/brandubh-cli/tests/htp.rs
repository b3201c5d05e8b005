//! `brandubh engine --protocol htp` through the binary: scripted sessions, and games against
//! the hnefatafl-copenhagen project's own engine `hnefatafl-text-protocol` 6.4.1 (issue 70):
//! its built-in AI chooses its moves with `generate_move`, its `Game` referees every move
//! with `play` and `final_status`, and the rules crate checks every move against RULES.md.
//!
//! That binary is installed by `.ci/run` (`cargo install hnefatafl-copenhagen --version
//! 6.4.1 --locked --no-default-features --bin hnefatafl-text-protocol` into
//! `~/.cache/brandubh/hnefatafl-6.4.1`); `BRANDUBH_HNEFATAFL` names another copy. With `CI`
//! set a missing binary fails the game test; without, it is skipped with a printed line.
//!
//! Three measurements use the same driver, each behind an environment variable (they run
//! for minutes; the scripts in `scripts/` set them): `BRANDUBH_HTP_GAMES=N` plays N games of
//! the shipped agent against the project's AI (`scripts/hnefatafl-games.sh`),
//! `BRANDUBH_HTP_REPLAY=GAMES.jsonl` replays `brandubh replay` records through its referee
//! (`scripts/hnefatafl-rules.sh`) and `BRANDUBH_HTP_KING_CASES=N` checks its King captures
//! (`scripts/hnefatafl-king-check.sh`).
//!
//! **Version 6.4.1's AI cannot move twice.** On a 7×7 board its `generate_move` announces
//! the move it chose (`2 turn: defender play: play defender c4 c5`), then panics printing
//! the reply (its escape-distance table assumes 11×11 or 13×13: "index out of bounds: the
//! len is 49"), and its TCP mode panics the same way after sending the move. So each of its
//! moves is asked of a fresh process given the game so far, and read from that
//! announcement; the referee is a second, long-lived process that is only given `play`,
//! `final_status` and `board_size`, which work. Its `play_undo` gives the turn to the wrong
//! side after an attackers' move, so nothing here undoes a move.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests may unwrap: a panic is a failed test"
)]

mod common;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use brandubh_agent::htp::{self, write_play};
use brandubh_eval::Openings;
use brandubh_rules::{Bitboard, Game, Move, Outcome, Position, Side, Square};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Longest wait for one reply.
const REPLY_TIMEOUT: Duration = Duration::from_secs(120);
/// Plies after which a game between the two stops unfinished (the referee draws at 142).
const MAX_PLIES: usize = 300;
/// The setting of the project's binary chosen by the rules comparison
/// (docs/guide/hnefatafl.md): without it the referee refuses every defenders' move back to
/// an earlier board, which cost 38 of 400 games their RULES.md ending; with it, 5 games.
const REPEAT_MOVES: &str = "--repeat-moves";

/// The shipped agent.
fn v5() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/brandubh-v5.agent")
}

/// The project's `hnefatafl-text-protocol`: `BRANDUBH_HNEFATAFL`, or where `.ci/run`
/// installs it, or on the PATH. `None` (after printing why) when it is missing and CI is
/// not set; with CI set a missing binary fails the test.
fn hnefatafl_binary() -> Option<PathBuf> {
    let name = "hnefatafl-text-protocol";
    let candidates = std::env::var_os("BRANDUBH_HNEFATAFL")
        .map(PathBuf::from)
        .into_iter()
        .chain(std::env::var_os("HOME").map(|home| {
            Path::new(&home)
                .join(".cache/brandubh/hnefatafl-6.4.1/bin")
                .join(name)
        }))
        .chain(
            std::env::var_os("PATH")
                .iter()
                .flat_map(std::env::split_paths)
                .map(|dir| dir.join(name))
                .collect::<Vec<_>>(),
        );
    for path in candidates {
        if path.is_file() {
            return Some(path);
        }
    }
    let why = format!(
        "{name} not found (BRANDUBH_HNEFATAFL, ~/.cache/brandubh/hnefatafl-6.4.1/bin, PATH): \
         install it as .ci/run does"
    );
    assert!(std::env::var_os("CI").is_none(), "CI is set and {why}");
    println!("skipped: {why}");
    None
}

/// A running program that speaks the protocol on stdin and stdout.
struct Program {
    name: String,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// Lines that were no reply (the project's engine prints its AI's thoughts).
    chatter: Vec<String>,
}

impl Program {
    fn start(name: &str, command: &mut Command) -> Program {
        let mut child = command
            .env("NO_COLOR", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{name} runs: {e}"));
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Program {
            name: name.to_owned(),
            stdin: child.stdin.take(),
            child,
            lines: rx,
            chatter: Vec::new(),
        }
    }

    /// `brandubh engine --protocol htp` with `args`.
    fn brandubh(args: &[&str]) -> Program {
        let mut command = Command::new(env!("CARGO_BIN_EXE_brandubh"));
        command.args(["engine", "--protocol", "htp", "--threads", "1"]);
        Program::start("brandubh engine", command.args(args))
    }

    /// The project's engine, with `--repeat-moves`.
    fn hnefatafl(binary: &Path) -> Program {
        Program::start(
            "hnefatafl-text-protocol",
            Command::new(binary).arg(REPEAT_MOVES),
        )
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// The next line, or `None` once the program closed stdout or said nothing in time.
    fn line(&mut self) -> Option<String> {
        self.lines.recv_timeout(REPLY_TIMEOUT).ok()
    }

    /// The reply to the last command: `Ok` after `= `, `Err` after `? `. Other lines are
    /// kept as chatter.
    fn reply(&mut self) -> Result<String, String> {
        loop {
            let line = self
                .line()
                .unwrap_or_else(|| panic!("{} ended without a reply", self.name));
            if let Some(text) = line.strip_prefix("= ").or((line == "=").then_some("")) {
                return Ok(text.to_owned());
            }
            if let Some(text) = line.strip_prefix("? ") {
                return Err(text.to_owned());
            }
            self.chatter.push(line);
        }
    }

    /// Sends `line` and returns its reply.
    fn ask(&mut self, line: &str) -> Result<String, String> {
        self.send(line);
        self.reply()
    }

    /// Sends `line`, which must succeed.
    fn ok(&mut self, line: &str) -> String {
        self.ask(line)
            .unwrap_or_else(|e| panic!("{}: {line:?} refused: {e}", self.name))
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A move of a `play` command or of a `generate_move` reply (`play ROLE FROM TO, score: …`):
/// `None` for a resignation.
fn played(text: &str) -> Option<(Side, Move)> {
    let command = text.split(',').next().unwrap_or_default();
    match htp::parse_command(command) {
        Ok(Some(htp::Command::Play(side, mv))) => Some((side, mv)),
        Ok(Some(htp::Command::Resign(_))) => None,
        other => panic!("not a move: {text:?} ({other:?})"),
    }
}

/// The project's AI's move after `moves` from the start: a fresh engine (see the module
/// documentation) given the game, then `generate_move`; its announcement names the move.
fn their_move(binary: &Path, moves: &[Move]) -> Option<(Side, Move)> {
    let mut ai = Program::hnefatafl(binary);
    ai.ok("board_size 7");
    let mut game = Game::default();
    for &mv in moves {
        ai.ok(&write_play(game.side_to_move(), mv));
        game.play_unchecked(mv);
    }
    ai.send("generate_move");
    loop {
        let line = ai
            .line()
            .unwrap_or_else(|| panic!("no move from the AI after {moves:?}: {:?}", ai.chatter));
        // `N turn: ROLE play: play ROLE FROM TO`, or the reply itself for an obvious move.
        if let Some((_, play)) = line.split_once(" play: ") {
            return played(play);
        }
        if let Some(play) = line.strip_prefix("= play ") {
            return played(&format!("play {play}"));
        }
        assert!(!line.starts_with("? "), "generate_move refused: {line}");
    }
}

/// The squares a move emptied that are not its own: what the project's `play` lists, the
/// King's square when he was captured.
fn captured(before: &Position, mv: Move, after: &Game) -> Bitboard {
    let effect = before.play_unchecked(mv);
    let king = if effect.king_captured {
        before.king().bb()
    } else {
        Bitboard::EMPTY
    };
    debug_assert_eq!(effect.position, *after.position());
    effect.captured | king
}

/// A `play` reply as squares.
fn squares(reply: &str) -> Bitboard {
    reply
        .split_ascii_whitespace()
        .map(|s| {
            s.parse::<Square>()
                .unwrap_or_else(|_| panic!("a square: {s:?}"))
        })
        .fold(Bitboard::EMPTY, Bitboard::with)
}

/// `final_status` for a winner, or `ongoing`.
fn status_of(winner: Option<Side>) -> &'static str {
    match winner {
        None => "ongoing",
        Some(Side::Black) => "attacker_wins",
        Some(Side::White) => "defender_wins",
    }
}

/// One game between the engine and the project's AI.
struct Played {
    engine_side: Side,
    /// The plies of the opening, played before either player moves.
    opening: usize,
    moves: Vec<Move>,
    /// The referee's last `final_status`.
    host: String,
    /// RULES.md's first end along the moves (ply and outcome).
    rulebook: Option<(usize, Outcome)>,
    /// The side that resigned (the project's AI resigns a game it sees lost).
    resigned: Option<Side>,
    /// The engine's last `final_status` (RULES.md's verdict as it keeps it).
    engine_status: String,
    seconds: f64,
}

impl Played {
    /// What RULES.md gives: the first end's status, or the resignation's before any end,
    /// or `ongoing`.
    fn rulebook_status(&self) -> &'static str {
        match (self.rulebook, self.resigned) {
            (Some((_, o)), _) => status_of(Some(o.winner)),
            (None, resigned) => status_of(resigned.map(Side::opponent)),
        }
    }

    /// The engine's result under the host and under RULES.md.
    fn results(&self) -> (String, String) {
        let mine = |status: &str| match (status, self.engine_side) {
            ("attacker_wins", Side::Black) | ("defender_wins", Side::White) => "win",
            ("attacker_wins", Side::White) | ("defender_wins", Side::Black) => "loss",
            ("draw", _) => "draw",
            _ => "unfinished",
        };
        (
            mine(&self.host).to_owned(),
            mine(self.rulebook_status()).to_owned(),
        )
    }

    fn transcript(&self) -> String {
        let mut text = String::new();
        let rulebook = match (self.rulebook, self.resigned) {
            (Some((ply, o)), _) => format!("{o}, at ply {ply}"),
            (None, Some(side)) => format!("no end before the {side} player resigned"),
            (None, None) => "no end".to_owned(),
        };
        let opening: Vec<String> = self.moves[..self.opening]
            .iter()
            .map(ToString::to_string)
            .collect();
        writeln!(
            text,
            "engine (brandubh-v5) as {}, opening {}: {} plies; hnefatafl-copenhagen's \
             referee: {}; RULES.md: {}",
            self.engine_side,
            opening.join(" "),
            self.moves.len(),
            self.host,
            rulebook
        )
        .unwrap();
        for (i, pair) in self.moves.chunks(2).enumerate() {
            let pair: Vec<String> = pair.iter().map(ToString::to_string).collect();
            writeln!(text, "{:3}. {}", i + 1, pair.join(" ")).unwrap();
        }
        text
    }
}

/// Plays one game from `opening` (played to both, then the players move): the engine
/// (`engine_args`) on `engine_side`, the project's AI on the other, the project's referee
/// judging every move and the rules crate checking each one against RULES.md. Stops when
/// the referee ends the game (or at [`MAX_PLIES`]).
fn play_game(binary: &Path, engine_side: Side, opening: &[Move], engine_args: &[&str]) -> Played {
    let t0 = Instant::now();
    let agent = v5();
    let mut args = vec!["--agent", agent.to_str().unwrap()];
    args.extend_from_slice(engine_args);
    let mut engine = Program::brandubh(&args);
    let mut referee = Program::hnefatafl(binary);
    referee.ok("board_size 7");
    engine.ok("board_size 7");
    // RULES.md's game; past a RULES.md end it goes on from the position, as the engine's.
    let mut rules = Game::default();
    let mut moves = Vec::new();
    let mut rulebook = None;
    let mut resigned = None;
    let mut host = "ongoing".to_owned();
    let mut engine_status = "ongoing".to_owned();
    while moves.len() < MAX_PLIES {
        let side = rules.side_to_move();
        let generated = if let Some(&mv) = opening.get(moves.len()) {
            Some((side, mv))
        } else if side == engine_side {
            played(&engine.ok("generate_move"))
        } else {
            their_move(binary, &moves)
        };
        let Some((by, mv)) = generated else {
            // A resignation: the referee is told, and so is the engine if it was the AI's.
            let resign = format!("play {} resigns", htp::role(side));
            referee.ok(&resign);
            if side != engine_side {
                engine.ok(&resign);
            }
            resigned = Some(side);
            host = referee.ok("final_status");
            engine_status = engine.ok("final_status");
            break;
        };
        assert_eq!(by, side, "ply {}: {mv} for the wrong side", moves.len() + 1);
        if rules.is_over() {
            rules = Game::new(*rules.position());
        }
        let before = *rules.position();
        before
            .check_move(mv)
            .unwrap_or_else(|e| panic!("ply {}: RULES.md refuses {mv}: {e}", moves.len() + 1));
        if rules.is_over() {
            rules = Game::new(before.play_unchecked(mv).position);
        } else {
            rules.play_unchecked(mv);
        }
        moves.push(mv);
        let ours = captured(&before, mv, &rules);
        let theirs = squares(&referee.ok(&write_play(side, mv)));
        assert_eq!(theirs, ours, "ply {}: {mv} captures", moves.len());
        if side != engine_side || moves.len() <= opening.len() {
            assert_eq!(squares(&engine.ok(&write_play(side, mv))), ours);
        }
        if rulebook.is_none() {
            rulebook = rules.outcome().map(|o| (moves.len(), o));
        }
        engine_status = engine.ok("final_status");
        assert_eq!(
            engine_status,
            status_of(rulebook.map(|(_, o): (usize, Outcome)| o.winner)),
            "ply {}: the engine's final_status is RULES.md's",
            moves.len()
        );
        host = referee.ok("final_status");
        if host != "ongoing" {
            break;
        }
    }
    Played {
        engine_side,
        opening: opening.len(),
        moves,
        host,
        rulebook,
        resigned,
        engine_status,
        seconds: t0.elapsed().as_secs_f64(),
    }
}

#[test]
fn a_whole_game_against_the_projects_ai_refereed_by_its_binary() {
    let Some(binary) = hnefatafl_binary() else {
        return;
    };
    let opening = Openings::new(70).next().unwrap();
    let game = play_game(&binary, Side::Black, opening.moves(), &["--sims", "200"]);
    println!("{}({:.1} s)", game.transcript(), game.seconds);
    assert!(game.moves.len() >= 10, "{}", game.transcript());
    assert_ne!(game.host, "ongoing", "{}", game.transcript());
    // The referee and RULES.md agree on this game's result.
    assert_eq!(game.host, game.rulebook_status(), "{}", game.transcript());
    assert_eq!(game.engine_status, game.host);
}

/// `BRANDUBH_HTP_GAMES=N`: N games of the shipped agent (the agent file's search, or
/// `BRANDUBH_HTP_SIMS` simulations a move) against the project's AI, in pairs from the
/// seeded balanced openings of `brandubh match` (`BRANDUBH_HTP_SEED`, default 70): the engine
/// White in the first game of a pair, Black in the second. Neither player draws at random,
/// so the opening is what varies the games. Prints a table and, with
/// `BRANDUBH_HTP_OUT=FILE`, writes the transcripts to FILE.
#[test]
fn games_against_the_projects_ai() {
    let Some(n) = std::env::var("BRANDUBH_HTP_GAMES").ok() else {
        println!("skipped: set BRANDUBH_HTP_GAMES=N to play N games (scripts/hnefatafl-games.sh)");
        return;
    };
    let n: u64 = n.parse().expect("BRANDUBH_HTP_GAMES is a number");
    let Some(binary) = hnefatafl_binary() else {
        return;
    };
    let sims = std::env::var("BRANDUBH_HTP_SIMS").ok();
    let mut args = Vec::new();
    if let Some(sims) = &sims {
        args.extend(["--sims", sims.as_str()]);
    }
    let seed = std::env::var("BRANDUBH_HTP_SEED").map_or(70, |s| s.parse().expect("a seed"));
    let mut openings = Openings::new(seed);
    let mut opening = Vec::new();
    let mut transcripts = String::new();
    let mut tally: BTreeMap<(String, String, String), u32> = BTreeMap::new();
    println!(
        "| game | engine | plies | referee | RULES.md | engine's result (referee / RULES.md) | s |"
    );
    println!("|---|---|---|---|---|---|---|");
    for i in 1..=n {
        let side = if i % 2 == 1 { Side::White } else { Side::Black };
        if side == Side::White {
            opening = openings.next().expect("an opening").moves().to_vec();
        }
        let game = play_game(&binary, side, &opening, &args);
        let (host, rulebook) = game.results();
        let end = match (game.rulebook, game.resigned) {
            (Some((ply, o)), _) => {
                format!("{} ({}, ply {ply})", status_of(Some(o.winner)), o.reason)
            }
            (None, Some(side)) => format!("{} resigned", htp::role(side)),
            (None, None) => "-".to_owned(),
        };
        println!(
            "| {i} | {} | {} | {} | {end} | {host} / {rulebook} | {:.0} |",
            game.engine_side,
            game.moves.len(),
            game.host,
            game.seconds
        );
        *tally
            .entry((game.engine_side.to_string(), host, rulebook))
            .or_default() += 1;
        transcripts.push_str(&game.transcript());
        transcripts.push('\n');
    }
    for ((side, host, rulebook), count) in &tally {
        println!("engine as {side}: {count} x referee {host}, RULES.md {rulebook}");
    }
    if let Ok(out) = std::env::var("BRANDUBH_HTP_OUT") {
        std::fs::write(&out, transcripts).expect("write the transcripts");
    }
}

/// One ply of a `brandubh replay` record.
#[derive(serde::Deserialize)]
struct Ply {
    #[serde(rename = "move")]
    mv: Option<String>,
    position: String,
    outcome: Option<serde_json::Value>,
}

/// One game of `scripts/hnefatafl-rules.sh`'s games.jsonl.
#[derive(serde::Deserialize)]
struct Replayed {
    id: String,
    plies: Vec<Ply>,
}

/// Where the referee first judged a replayed game otherwise than RULES.md, by kind.
fn first_difference(referee: &mut Program, game: &Replayed) -> (usize, Option<(String, String)>) {
    referee.ok("board_size 7");
    for (k, pair) in game.plies.windows(2).enumerate() {
        let (before, after) = (&pair[0], &pair[1]);
        let pos: Position = before.position.parse().unwrap();
        let mv: Move = after.mv.as_deref().unwrap().parse().unwrap();
        let example = |what: &str| format!("{} ply {}: {mv} in {pos}{what}", game.id, k + 1);
        let reply = match referee.ask(&write_play(pos.side_to_move(), mv)) {
            Ok(reply) => reply,
            Err(e) => return (k, Some((format!("refused ({e})"), example("")))),
        };
        let next: Position = after.position.parse().unwrap();
        let effect = pos.play_unchecked(mv);
        assert_eq!(effect.position, next, "{}: brandubh replay", game.id);
        let ours = if effect.king_captured {
            effect.captured.with(pos.king())
        } else {
            effect.captured
        };
        let theirs = squares(&reply);
        if theirs != ours {
            let names = |b: Bitboard| b.map(|s| s.to_string()).collect::<Vec<_>>().join(" ");
            let what = format!(
                ": the referee captures [{}], RULES.md [{}]",
                names(theirs),
                names(ours)
            );
            return (k + 1, Some(("captures".to_owned(), example(&what))));
        }
        let rulebook = match &after.outcome {
            Some(o) => format!(
                "{} ({})",
                if o["winner"] == "white" {
                    "defender_wins"
                } else {
                    "attacker_wins"
                },
                o["reason"].as_str().unwrap_or_default()
            ),
            None => "ongoing".to_owned(),
        };
        let host = referee.ok("final_status");
        if !rulebook.starts_with(&host) {
            let kind = format!("end: referee {host}, RULES.md {rulebook}");
            return (k + 1, Some((kind, example(""))));
        }
    }
    (game.plies.len() - 1, None)
}

/// `BRANDUBH_HTP_REPLAY=GAMES.jsonl`: every game of the file (`brandubh replay` records,
/// as scripts/hnefatafl-rules.sh writes them) played move by move to the project's referee,
/// with and without `--repeat-moves`: the plies judged alike, and where each game is first
/// judged otherwise (a refused move, other captures, another end), by kind.
#[test]
fn replayed_games_judged_by_the_projects_referee() {
    let Some(file) = std::env::var_os("BRANDUBH_HTP_REPLAY") else {
        println!("skipped: set BRANDUBH_HTP_REPLAY=GAMES.jsonl (scripts/hnefatafl-rules.sh)");
        return;
    };
    let Some(binary) = hnefatafl_binary() else {
        return;
    };
    let games: Vec<Replayed> = std::fs::read_to_string(&file)
        .expect("read the games")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a replayed game"))
        .collect();
    for setting in [None, Some(REPEAT_MOVES)] {
        let mut command = Command::new(&binary);
        command.args(setting);
        let mut referee = Program::start("hnefatafl-text-protocol", &mut command);
        let (mut alike, mut kinds) = (0, BTreeMap::<String, Vec<String>>::new());
        for game in &games {
            let (plies, difference) = first_difference(&mut referee, game);
            alike += plies;
            if let Some((kind, example)) = difference {
                kinds.entry(kind).or_default().push(example);
            }
        }
        let differing: usize = kinds.values().map(Vec::len).sum();
        println!(
            "referee {}: {} games, {alike} plies judged alike, {differing} games judged \
             otherwise",
            setting.unwrap_or("(default)"),
            games.len()
        );
        for (kind, examples) in &kinds {
            println!("  {} x {kind}", examples.len());
            for example in examples.iter().take(3) {
                println!("      {example}");
            }
        }
    }
}

/// `BRANDUBH_HTP_KING_CASES=N [BRANDUBH_HTP_SEED=S]`: the project's referee judges N
/// attackers' moves next to the King in positions of seeded random games (the attackers
/// drawn to the King), each played after the game so far; prints one line a case,
/// `POSITION<TAB>MOVE<TAB>1|0` (1: the referee takes the King), the data of
/// `crates/brandubh-rules/tests/data/hnefatafl-king.tsv` (scripts/hnefatafl-king-check.sh).
#[test]
fn king_captures_judged_by_the_projects_referee() {
    let Some(wanted) = std::env::var("BRANDUBH_HTP_KING_CASES").ok() else {
        println!("skipped: set BRANDUBH_HTP_KING_CASES=N (scripts/hnefatafl-king-check.sh)");
        return;
    };
    let wanted: usize = wanted.parse().expect("BRANDUBH_HTP_KING_CASES is a number");
    let seed = std::env::var("BRANDUBH_HTP_SEED").map_or(70, |s| s.parse().expect("a seed"));
    let Some(binary) = hnefatafl_binary() else {
        return;
    };
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut referee = Program::hnefatafl(&binary);
    let mut cases = std::collections::HashSet::new();
    let mut lines = Vec::new();
    while lines.len() < wanted {
        let mut game = Game::default();
        while !game.is_over() && game.ply() < 80 && lines.len() < wanted {
            let pos = *game.position();
            let legal = game.legal_moves();
            let near: Vec<Move> = legal
                .iter()
                .copied()
                .filter(|m| {
                    pos.side_to_move() == Side::Black && pos.king().bb().neighbours().contains(m.to)
                })
                .collect();
            for &mv in &near {
                if lines.len() >= wanted || !cases.insert((pos, mv)) {
                    continue;
                }
                let Some(taken) = judge_king(&mut referee, game.moves(), mv, pos.king()) else {
                    continue;
                };
                lines.push(format!("{pos}\t{mv}\t{}", u8::from(taken)));
            }
            let pick = if !near.is_empty() && rng.random_bool(0.6) {
                near[rng.random_range(0..near.len())]
            } else {
                legal[rng.random_range(0..legal.len())]
            };
            game.play_unchecked(pick);
        }
    }
    println!(
        "# hnefatafl-copenhagen 6.4.1's referee (hnefatafl-text-protocol --repeat-moves) on \
         King captures,"
    );
    println!(
        "# by scripts/hnefatafl-king-check.sh ({wanted} cases, seed {seed}): attackers' moves \
         next to the"
    );
    println!(
        "# King in seeded random games. Columns: position (Black to move), move, 1 where the \
         referee takes"
    );
    println!("# the King off the board after the move.");
    for line in lines {
        println!("{line}");
    }
}

/// Whether the referee, given `moves` from the start and then `mv`, takes the King off
/// `king`; `None` when it does not take the moves (its own end came first).
fn judge_king(referee: &mut Program, moves: &[Move], mv: Move, king: Square) -> Option<bool> {
    referee.ok("board_size 7");
    let mut game = Game::default();
    for &m in moves.iter().chain([&mv]) {
        let reply = referee.ask(&write_play(game.side_to_move(), m)).ok()?;
        game.play_unchecked(m);
        if m == mv && game.ply() == moves.len() + 1 {
            return Some(squares(&reply).contains(king));
        }
    }
    None
}

/// `brandubh engine --protocol htp` with a tiny agent (8 simulations a move) in `dir`.
fn tiny_engine(dir: &Path) -> Program {
    let agent = dir.join("tiny.agent");
    let search = brandubh_search::SearchSettings::new(brandubh_search::Algorithm::Puct, 8);
    common::save_tiny_agent(&agent, 70, search);
    Program::brandubh(&["--agent", common::s(&agent)])
}

/// The error `line` gets.
fn refused(engine: &mut Program, line: &str) -> String {
    engine.ask(line).expect_err(&format!("{line:?} is refused"))
}

#[test]
fn a_scripted_session_gets_the_projects_replies() {
    let dir = common::temp_dir();
    let mut engine = tiny_engine(dir.path());
    assert_eq!(engine.ok("protocol_version"), htp::PROTOCOL_VERSION);
    assert_eq!(engine.ok("known_command generate_move"), "true");
    assert_eq!(engine.ok("known_command genmove"), "false");
    assert_eq!(engine.ok("board_size 7   # Brandubh"), "");
    // A comment or a blank line gets no reply: the next reply is the next command's.
    engine.send("# nothing");
    engine.send("");
    assert_eq!(engine.ok("final_status"), "ongoing");
    assert!(refused(&mut engine, "board_size 11").contains("Brandubh only"));
    assert!(refused(&mut engine, "first_move attacker").contains("rule 1"));
    assert!(refused(&mut engine, "fly away").starts_with("unknown command"));
    assert!(refused(&mut engine, "play attacker d7 e7").contains("turn"));
    assert!(refused(&mut engine, "play defender d5 d7").starts_with("play: "));
    assert_eq!(
        engine.ok("show_board_open_tafl"),
        "/3A3/3A3/3D3/AADKDAA/3D3/3A3/3A3/"
    );
    // Multi-line replies go on over further lines; the next reply is still the next one.
    assert_eq!(engine.ok("list_commands"), "");
    assert_eq!(engine.ok("final_status"), "ongoing");
    assert!(
        engine.chatter.iter().any(|l| l == "time_settings"),
        "{:?}",
        engine.chatter
    );
    engine.send("quit");
    // quit has no reply: the engine ends.
    assert_eq!(engine.line(), None);
    assert!(engine.child.wait().unwrap().success());
}

#[test]
fn moves_told_and_generated_captures_undo_and_resignation() {
    let dir = common::temp_dir();
    let mut engine = tiny_engine(dir.path());
    // A move for each side: White's told, Black's generated (and legal under RULES.md).
    assert_eq!(engine.ok("play d c4 c5"), "");
    let reply = engine.ok("generate_move");
    let (side, mv) = played(&reply).expect("a move, not a resignation");
    assert_eq!(side, Side::Black);
    assert!(
        reply.contains(", score: ") && reply.ends_with(", loops: 8"),
        "{reply}"
    );
    let mut game = Game::default();
    game.play("c4-c5".parse().unwrap()).unwrap();
    assert!(game.play(mv).is_ok(), "{mv} is legal for Black");
    assert_eq!(engine.ok("play_undo"), "");
    assert_eq!(engine.ok("play_undo"), "");
    assert!(refused(&mut engine, "play_undo").contains("first move"));
    // A capture: the reply lists the captured square (c6, between b6 and d6).
    assert_eq!(engine.ok("play defender c4 c6"), "");
    assert_eq!(engine.ok("play attacker b4 b6"), "c6 ");
    assert!(engine.ok("play_from").starts_with("defender "));
    assert_eq!(engine.ok("play_to d d5"), "a5 b5 c5 e5 f5 g5");
    assert_eq!(engine.ok("play defender resigns"), "");
    assert_eq!(engine.ok("final_status"), "attacker_wins");
    assert!(refused(&mut engine, "generate_move").contains("already over"));
    // The end of input ends the engine, with success.
    drop(engine.stdin.take());
    while engine.line().is_some() {}
    assert!(engine.child.wait().unwrap().success());
}
