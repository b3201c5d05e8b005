//! The Hnefatafl Text Protocol (HTP) of the hnefatafl-copenhagen project, as its engine
//! `hnefatafl-text-protocol` 6.4.1 speaks it on stdin and stdout, for its Brandubh
//! (`board_size 7`): the host's commands as a typed [`Command`] ([`parse_command`], a pure
//! function), and [`Engine`], the engine's side as a state machine that turns each line
//! into reply lines and log lines. `brandubh engine --protocol htp` wraps it in stdin and
//! stdout.
//!
//! **The protocol** is close to GTP: one command a line (`#` starts a comment, a blank line
//! is ignored), answered by one line `= RESULT` or by `? ERROR` and an empty line; the
//! replies of `list_commands` and `show_board` go on over further lines. A driver keeps
//! both players in step by sending each one's move to the other with `play ROLE FROM TO`
//! (`play defender d5 f5`, squares as RULES.md names them; the reply lists the captured
//! squares, the King's among them when he is taken), asks for a move with `generate_move`
//! (the reply is the `play` command of the move, then `, score: …, delay milliseconds: …,
//! loops: …` as the project's engine writes it) and reads the result with `final_status`
//! (`ongoing`, `attacker_wins`, `defender_wins`, `draw`). Roles are `attacker` (`a`, Black)
//! and `defender` (`d`, White); the defenders move first on 7×7.
//!
//! **Whose rules.** The engine plays RULES.md. Its `final_status` is RULES.md's verdict (the
//! first end along the moves played, or a resignation); when the driver plays on past it,
//! as a host whose referee sees no end does, the engine plays on from the position and says
//! so once in its log. Where the project's referee (its `Game`) judges otherwise
//! (docs/guide/hnefatafl.md measures where), the engine plays to it: it never plays a
//! defenders' move to a placement of the board seen before in the game, which that referee
//! refuses ([`repeats_a_board`]), and it logs once that the referee calls a game a draw
//! after [`HOST_MAX_PLIES`] plies. The referee captures the King exactly as rule 7 does
//! ([`HOST_KING`]), so the engine's searches count King captures as RULES.md does.
//!
//! **Clocks.** `time_settings fischer MINUTES ADD_SECONDS` gives each side MINUTES and adds
//! ADD_SECONDS after each of its moves; the engine keeps both clocks from the moves it sees
//! (a side's clock runs from the previous move until its own) and thinks as the time
//! manager plans ([`TimeManager::plan_fischer`](crate::clock::TimeManager::plan_fischer)).
//! Without one (`time_settings un-timed`, the start) it thinks for the agent file's
//! simulations (`--sims`).

use std::fmt;
use std::time::{Duration, Instant};

use brandubh_rules::{Bitboard, Game, KingCapture, Move, Outcome, Position, Reason, Side, Square};

use crate::agent::Analysis;
pub use crate::session::CommandError;
use crate::session::{EngineOptions, MAX_LINE, Session, Step};
use crate::thinker::Thinker;

/// How the hnefatafl-copenhagen referee (6.4.1, board size 7) captures the King: as rule 7
/// does, measured on its binary (`scripts/hnefatafl-king-check.sh`,
/// `crates/brandubh-rules/tests/data/hnefatafl-king.tsv`).
pub const HOST_KING: KingCapture = KingCapture::RULEBOOK;

/// The hnefatafl-copenhagen referee calls a game a draw at its move after this many plies
/// (`MAX_TURNS`; RULES.md has no draws, rule 9).
pub const HOST_MAX_PLIES: usize = 141;

/// The protocol version the engine speaks, as `protocol_version` answers it.
pub const PROTOCOL_VERSION: &str = "1-beta";

/// The commands of the protocol, as `list_commands` lists them.
pub const COMMANDS: [&str; 17] = [
    "board_size",
    "final_status",
    "first_move",
    "generate_move",
    "known_command",
    "list_commands",
    "name",
    "play",
    "play_from",
    "play_to",
    "play_undo",
    "protocol_version",
    "quit",
    "show_board",
    "show_board_open_tafl",
    "time_settings",
    "version",
];

/// The only board size this engine plays (Brandubh).
pub const BOARD_SIZE: u32 = 7;

/// Longest game time `time_settings fischer` accepts, in minutes (a year).
pub const MAX_MINUTES: u32 = 366 * 24 * 60;

/// A Fischer clock: `minutes` each, `add_seconds` added after every move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fischer {
    /// Each side's time at the start.
    pub minutes: u32,
    /// Added to a side's clock after each of its moves.
    pub add_seconds: u32,
}

/// A command from the host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// `board_size N`: a new game on an N×N board (only 7 is played here).
    BoardSize(u32),
    /// `final_status`: the result so far.
    FinalStatus,
    /// `first_move ROLE`: a new game, ROLE to move first.
    FirstMove(Side),
    /// `generate_move`: the engine moves for the side to move.
    GenerateMove,
    /// `known_command NAME`.
    KnownCommand(String),
    /// `list_commands`.
    ListCommands,
    /// `name`.
    Name,
    /// `play ROLE FROM TO`: ROLE moved.
    Play(Side, Move),
    /// `play ROLE resigns`: ROLE resigned.
    Resign(Side),
    /// `play_from`: the side to move and the squares it can move from.
    PlayFrom,
    /// `play_to ROLE FROM`: the squares the piece on FROM can move to.
    PlayTo(Side, Square),
    /// `play_undo`: takes the last move back.
    PlayUndo,
    /// `protocol_version`.
    ProtocolVersion,
    /// `quit`.
    Quit,
    /// `show_board`: a diagram.
    ShowBoard,
    /// `show_board_open_tafl`: the board as the project's engine writes it for OpenTafl.
    ShowBoardOpenTafl,
    /// `time_settings un-timed` (`None`) or `time_settings fischer MINUTES ADD_SECONDS`: a new
    /// game with that clock.
    TimeSettings(Option<Fischer>),
    /// `version`.
    Version,
}

/// `attacker` for Black, `defender` for White.
#[must_use]
pub fn role(side: Side) -> &'static str {
    match side {
        Side::Black => "attacker",
        Side::White => "defender",
    }
}

/// A role word: `a`, `attacker`, `d` or `defender`, in any case.
fn parse_role(word: &str) -> Option<Side> {
    match word.to_ascii_lowercase().as_str() {
        "a" | "attacker" => Some(Side::Black),
        "d" | "defender" => Some(Side::White),
        _ => None,
    }
}

/// A square: a file letter `a`–`g` in either case and a rank `1`–`7`.
fn parse_square(word: &str) -> Option<Square> {
    let mut chars = word.chars();
    let file = chars.next()?.to_ascii_lowercase();
    let rank: u8 = chars.as_str().parse().ok()?;
    if !('a'..='g').contains(&file) || !(1..=7).contains(&rank) {
        return None;
    }
    Square::from_coords(file as u8 - b'a', rank - 1)
}

/// `play ROLE FROM TO`: the command that tells a player of the move.
#[must_use]
pub fn write_play(side: Side, mv: Move) -> String {
    format!("play {} {} {}", role(side), mv.from, mv.to)
}

/// Parses one line from the host (without its line break): `Ok(None)` for a blank line or
/// a comment. Words after a command's arguments are ignored, as the project's engine does.
pub fn parse_command(line: &str) -> Result<Option<Command>, CommandError> {
    let text = line.split('#').next().unwrap_or_default();
    let args: Vec<&str> = text.split_ascii_whitespace().collect();
    let Some(&word) = args.first() else {
        return Ok(None);
    };
    let malformed = |command: &'static str, problem: &str| CommandError::Malformed {
        command,
        line: crate::otn::printable(line),
        problem: problem.to_owned(),
    };
    let role_at = |command: &'static str, i: usize| {
        args.get(i)
            .and_then(|w| parse_role(w))
            .ok_or_else(|| malformed(command, "expected a role: attacker or defender"))
    };
    let square_at = |command: &'static str, i: usize| {
        args.get(i)
            .and_then(|w| parse_square(w))
            .ok_or_else(|| malformed(command, "expected a square a1-g7"))
    };
    let command = match word {
        "board_size" => args
            .get(1)
            .and_then(|n| n.parse().ok())
            .map(Command::BoardSize)
            .ok_or_else(|| malformed("board_size", "expected a board size, 7"))?,
        "final_status" => Command::FinalStatus,
        "first_move" => Command::FirstMove(role_at("first_move", 1)?),
        "generate_move" => Command::GenerateMove,
        "known_command" => Command::KnownCommand(
            args.get(1)
                .map(|w| crate::otn::printable(w))
                .ok_or_else(|| malformed("known_command", "expected a command name"))?,
        ),
        "list_commands" => Command::ListCommands,
        "name" => Command::Name,
        "play" => {
            let side = role_at("play", 1)?;
            if matches!(args.get(2), Some(&"resigns" | &"resign")) {
                Command::Resign(side)
            } else {
                Command::Play(
                    side,
                    Move::new(square_at("play", 2)?, square_at("play", 3)?),
                )
            }
        }
        "play_from" => Command::PlayFrom,
        "play_to" => Command::PlayTo(role_at("play_to", 1)?, square_at("play_to", 2)?),
        "play_undo" => Command::PlayUndo,
        "protocol_version" => Command::ProtocolVersion,
        "quit" => Command::Quit,
        "show_board" => Command::ShowBoard,
        "show_board_open_tafl" => Command::ShowBoardOpenTafl,
        "time_settings" => Command::TimeSettings(
            parse_time_settings(&args).map_err(|p| malformed("time_settings", p))?,
        ),
        "version" => Command::Version,
        _ => {
            return Err(CommandError::Unknown(
                crate::otn::printable(word).chars().take(40).collect(),
            ));
        }
    };
    Ok(Some(command))
}

/// The arguments of `time_settings`.
fn parse_time_settings(args: &[&str]) -> Result<Option<Fischer>, &'static str> {
    const USAGE: &str = "expected un-timed or fischer MINUTES ADD_SECONDS";
    match args.get(1..) {
        Some(["un-timed", ..]) => Ok(None),
        Some(["fischer", minutes, add, ..]) => match (minutes.parse::<u32>(), add.parse::<u32>()) {
            (Ok(minutes), Ok(add_seconds)) if minutes <= MAX_MINUTES => Ok(Some(Fischer {
                minutes,
                add_seconds: add_seconds.min(MAX_MINUTES * 60),
            })),
            _ => Err(USAGE),
        },
        _ => Err(USAGE),
    }
}

/// Whether the defenders' move `mv` in `game` leaves the pieces as they stood after an
/// earlier move or at the start (whoever was then to move): the hnefatafl-copenhagen
/// referee refuses it ("you already reached that position"); RULES.md allows it (only a
/// fifth occurrence of a position ends the game, rule 8.4). The attackers may repeat.
#[must_use]
pub fn repeats_a_board(game: &Game, mv: Move) -> bool {
    let here = game.position();
    if here.side_to_move() != Side::White {
        return false;
    }
    let after = here.play_unchecked(mv).position;
    // A capture changes the pieces for good: only the run since the last one can repeat.
    game.since_capture().iter().any(|p| same_board(p, &after))
}

/// Whether two positions have the same pieces on the same squares.
fn same_board(a: &Position, b: &Position) -> bool {
    a.with_side_to_move(Side::White) == b.with_side_to_move(Side::White)
}

/// The result as `final_status` reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Ongoing,
    Won(Side),
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Status::Ongoing => "ongoing",
            Status::Won(Side::Black) => "attacker_wins",
            Status::Won(Side::White) => "defender_wins",
        })
    }
}

/// Both sides' Fischer clocks as the engine keeps them from the moves it sees.
#[derive(Clone, Copy, Debug)]
struct Clocks {
    /// Time left: the defenders' (White's), then the attackers'.
    left: [Duration; 2],
    increment: Duration,
    /// When the side to move's clock started (the previous move, or the settings).
    since: Instant,
}

impl Clocks {
    fn new(fischer: Fischer, now: Instant) -> Clocks {
        let main = Duration::from_secs(u64::from(fischer.minutes) * 60);
        Clocks {
            left: [main; 2],
            increment: Duration::from_secs(u64::from(fischer.add_seconds)),
            since: now,
        }
    }

    fn index(side: Side) -> usize {
        match side {
            Side::White => 0,
            Side::Black => 1,
        }
    }

    /// What `side` has left at `now`, its clock running since the previous move.
    fn left_at(&self, side: Side, now: Instant) -> Duration {
        self.left[Clocks::index(side)].saturating_sub(now.saturating_duration_since(self.since))
    }

    /// `side` moved at `now`: its time is spent, the increment added.
    fn moved(&mut self, side: Side, now: Instant) {
        self.left[Clocks::index(side)] = self.left_at(side, now) + self.increment;
        self.since = now;
    }
}

/// The engine's side of an HTP session (see the module documentation).
#[derive(Debug)]
pub struct Engine {
    thinker: Thinker,
    options: EngineOptions,
    /// The game as RULES.md judges it; after a RULES.md end the driver played on past, a
    /// game from the position where it went on.
    game: Game,
    /// The plies played in this game (the host's count: [`Engine::game`] restarts when the
    /// driver plays on past a RULES.md end).
    plies: usize,
    /// The first end RULES.md saw in this game (its ply and outcome), which stands while
    /// the driver plays on.
    rulebook_end: Option<(usize, Outcome)>,
    /// The side that resigned (`play ROLE resigns`, or the engine with no move left).
    resigned: Option<Side>,
    /// The Fischer clock of `time_settings`, if any.
    fischer: Option<Fischer>,
    clocks: Option<Clocks>,
    /// Whether the log has said that the host's referee would call the game a draw.
    said_draw: bool,
}

/// A command's reply: the text after `= `, or the error after `? `.
type Reply = Result<String, String>;

/// The project's engine's words when a move comes after the end.
const GAME_OVER: &str = "play: the game is already over";

impl Engine {
    /// An engine searching with `thinker`, a game of Brandubh set up (as after
    /// `board_size 7`), no clock.
    #[must_use]
    pub fn new(mut thinker: Thinker, options: EngineOptions) -> Engine {
        thinker.set_referee(Some(HOST_KING));
        Engine {
            thinker,
            options,
            game: Game::default(),
            plies: 0,
            rulebook_end: None,
            resigned: None,
            fischer: None,
            clocks: None,
            said_draw: false,
        }
    }

    /// The engine's game (RULES.md's; see [`Engine`]).
    #[must_use]
    pub fn game(&self) -> &Game {
        &self.game
    }

    /// Handles one line from the host, received at `received` (a clock for the engine's
    /// move runs from then).
    pub fn handle_line(&mut self, line: &str, received: Instant) -> Step {
        let mut step = Step::default();
        let reply = if line.len() > MAX_LINE {
            Err(format!("command longer than {MAX_LINE} bytes ignored"))
        } else {
            match parse_command(line) {
                Ok(None) => return step,
                Ok(Some(Command::Quit)) => {
                    step.exit = Some(0);
                    return step;
                }
                Ok(Some(command)) => self.handle(command, received, &mut step),
                Err(e) => Err(e.to_string()),
            }
        };
        match reply {
            Ok(text) => {
                let mut lines = text.split('\n');
                step.send(format!("= {}", lines.next().unwrap_or_default()));
                for line in lines {
                    step.send(line);
                }
            }
            Err(e) => {
                step.log(format!("refused {:?}: {e}", crate::otn::printable(line)));
                step.send(format!("? {e}"));
                step.send("");
            }
        }
        step
    }

    fn handle(&mut self, command: Command, received: Instant, step: &mut Step) -> Reply {
        match command {
            Command::BoardSize(BOARD_SIZE) => {
                // As the project's engine does, a clock set before any move is kept.
                let keep = if self.game.ply() == 0 {
                    self.fischer
                } else {
                    None
                };
                self.new_game(keep, received);
                Ok(String::new())
            }
            Command::BoardSize(n) => Err(format!(
                "board_size {n}: this engine plays Brandubh only, board_size {BOARD_SIZE}"
            )),
            Command::FirstMove(Side::White) => {
                self.new_game(self.fischer, received);
                Ok(String::new())
            }
            Command::FirstMove(Side::Black) => Err(
                "first_move attacker: this engine plays RULES.md Brandubh, where the defenders \
                 move first (rule 1)"
                    .to_owned(),
            ),
            Command::TimeSettings(fischer) => {
                self.new_game(fischer, received);
                Ok(String::new())
            }
            Command::FinalStatus => Ok(self.status().to_string()),
            Command::GenerateMove => self.generate_move(received, step),
            Command::Play(side, mv) => self.play(side, mv, received, step),
            Command::Resign(side) => self.resign(side, step),
            Command::PlayUndo => self.undo(step),
            Command::PlayFrom => Ok(self.play_from()),
            Command::PlayTo(side, from) => self.play_to(side, from),
            Command::KnownCommand(name) => Ok(COMMANDS.contains(&name.as_str()).to_string()),
            Command::ListCommands => Ok(format!("\n{}", COMMANDS.join("\n"))),
            Command::Name => Ok("brandubh".to_owned()),
            Command::Version => Ok(env!("CARGO_PKG_VERSION").to_owned()),
            Command::ProtocolVersion => Ok(PROTOCOL_VERSION.to_owned()),
            Command::ShowBoard => Ok(format!("\n{}", self.game.position().diagram().trim_end())),
            Command::ShowBoardOpenTafl => Ok(board_record(self.game.position())),
            // Handled before: it has no reply.
            Command::Quit => Ok(String::new()),
        }
    }

    /// A new game from the start with the clock `fischer`.
    fn new_game(&mut self, fischer: Option<Fischer>, now: Instant) {
        self.game = Game::default();
        self.plies = 0;
        self.rulebook_end = None;
        self.resigned = None;
        self.said_draw = false;
        self.fischer = fischer;
        self.clocks = fischer.map(|f| Clocks::new(f, now));
        self.thinker.clear();
    }

    /// The result: a resignation, or the first end RULES.md saw.
    fn status(&self) -> Status {
        match (self.resigned, self.rulebook_end) {
            (Some(side), _) => Status::Won(side.opponent()),
            (None, Some((_, outcome))) => Status::Won(outcome.winner),
            (None, None) => Status::Ongoing,
        }
    }

    /// Before a move: when RULES.md has ended the game and the driver plays on (its
    /// referee sees no end), the game goes on from the position.
    fn play_on(&mut self, step: &mut Step) {
        if let (Some(outcome), true) = (self.game.outcome(), self.game.ply() > 0) {
            step.log(format!(
                "RULES.md ended this game at ply {} ({outcome}); the host plays on, and so \
                 does the engine",
                self.plies
            ));
            self.game = Game::new(*self.game.position());
        }
    }

    /// Plays `mv` for `side` (legal in the position) and keeps the books: the clocks,
    /// RULES.md's first end, the host's draw. The squares captured, the King's among them.
    /// In a position RULES.md itself judges over (no legal move for the other side,
    /// White encircled) that the host plays on from, the game goes on from the position
    /// after the move.
    fn apply(&mut self, side: Side, mv: Move, now: Instant, step: &mut Step) -> Bitboard {
        let king = self.game.position().king();
        let effect = if self.game.is_over() {
            let effect = self.game.position().play_unchecked(mv);
            self.game = Game::new(effect.position);
            effect
        } else {
            self.game.play_unchecked(mv)
        };
        self.plies += 1;
        if let Some(clocks) = &mut self.clocks {
            clocks.moved(side, now);
        }
        if let (None, Some(outcome)) = (self.rulebook_end, self.game.outcome()) {
            self.rulebook_end = Some((self.plies, outcome));
        }
        if self.plies >= HOST_MAX_PLIES && !self.said_draw && !self.game.is_over() {
            self.said_draw = true;
            step.log(format!(
                "past ply {HOST_MAX_PLIES}: the hnefatafl-copenhagen referee calls the game a \
                 draw at its next move; RULES.md has no draws (rule 9) and the engine plays on"
            ));
        }
        if effect.king_captured {
            effect.captured.with(king)
        } else {
            effect.captured
        }
    }

    fn play(&mut self, side: Side, mv: Move, now: Instant, step: &mut Step) -> Reply {
        if self.resigned.is_some() {
            return Err(GAME_OVER.to_owned());
        }
        self.play_on(step);
        if side != self.game.side_to_move() {
            return Err(format!(
                "play: it isn't your turn (the {}s are to move)",
                role(self.game.side_to_move())
            ));
        }
        self.game
            .position()
            .check_move(mv)
            .map_err(|e| format!("play: {e}"))?;
        let captured = self.apply(side, mv, now, step);
        Ok(captured.map(|s| format!("{s} ")).collect())
    }

    fn resign(&mut self, side: Side, step: &mut Step) -> Reply {
        if self.resigned.is_some() {
            return Err(GAME_OVER.to_owned());
        }
        if side != self.game.side_to_move() {
            return Err("play: you can't resign for the other player".to_owned());
        }
        step.log(format!("the {}s resigned", role(side)));
        self.resigned = Some(side);
        Ok(String::new())
    }

    fn undo(&mut self, step: &mut Step) -> Reply {
        if self.resigned.take().is_some() {
            return Ok(String::new());
        }
        if self.game.undo().is_none() {
            return Err("play undo: it is the first move".to_owned());
        }
        self.plies = self.plies.saturating_sub(1);
        self.rulebook_end = self.rulebook_end.filter(|&(ply, _)| ply <= self.plies);
        self.thinker.clear();
        step.log(format!("took back a move: ply {}", self.plies));
        Ok(String::new())
    }

    /// `ROLE FROM ...`: the side to move and the squares it can move from.
    fn play_from(&self) -> String {
        let pos = self.game.position();
        let mut from: Vec<Square> = pos.legal_moves().iter().map(|m| m.from).collect();
        from.dedup();
        let squares: Vec<String> = from.iter().map(ToString::to_string).collect();
        format!("{} {}", role(pos.side_to_move()), squares.join(" "))
    }

    fn play_to(&self, side: Side, from: Square) -> Reply {
        let pos = self.game.position();
        if side != pos.side_to_move() {
            return Err("play: it isn't your turn".to_owned());
        }
        let to: Vec<String> = pos
            .legal_moves()
            .iter()
            .filter(|m| m.from == from)
            .map(|m| m.to.to_string())
            .collect();
        if to.is_empty() {
            return Err(format!(
                "play to: no move of the {}s from {from}",
                role(side)
            ));
        }
        Ok(to.join(" "))
    }

    fn generate_move(&mut self, received: Instant, step: &mut Step) -> Reply {
        if self.resigned.is_some() {
            return Err(GAME_OVER.to_owned());
        }
        self.play_on(step);
        let side = self.game.side_to_move();
        if let Some(outcome) = self.game.outcome() {
            // The position itself is over under RULES.md (no legal move, encircled): the
            // side to move has lost there.
            step.log(format!("resigning: {outcome} under RULES.md"));
            self.resigned = Some(side);
            return Ok(format!("play {} resigns _", role(side)));
        }
        let plan = self.clocks.map(|clocks| {
            let left = clocks.left_at(side, received);
            self.options.time.plan_fischer(left, clocks.increment)
        });
        let (budget, deadline) = self.options.budget(plan, received);
        let a = self
            .thinker
            .think_until(&self.game, budget, deadline)
            .map_err(|e| format!("generate_move: search failed: {e}"))?;
        let mv = self.choose(&a, step);
        let used = received.elapsed();
        let planned = plan.map_or_else(String::new, |p| {
            format!(" of {:.3} s planned", p.as_secs_f64())
        });
        step.log(format!(
            "ply {}: {mv}: value {:+.3}, {} simulations ({} reused) in {:.3} s{planned}",
            self.plies + 1,
            a.value,
            a.simulations,
            a.reused,
            used.as_secs_f64()
        ));
        self.apply(side, mv, Instant::now(), step);
        // The score as the project's engines give it: positive favours the attackers.
        let score = match side {
            Side::Black => a.value,
            Side::White => -a.value,
        };
        Ok(format!(
            "{}, score: {score:.3}, delay milliseconds: {}, loops: {}",
            write_play(side, mv),
            used.as_millis(),
            a.simulations
        ))
    }

    /// The best move of the search that the host's referee judges as RULES.md does (no
    /// [`Engine::objection`]), or the best move when every one has an objection.
    fn choose(&self, a: &Analysis, step: &mut Step) -> Move {
        for m in &a.moves {
            match self.objection(m.mv) {
                None => return m.mv,
                Some(why) => step.log(format!("not playing {}: {why}", m.mv)),
            }
        }
        a.best_move
    }

    /// Why the host's referee would judge `mv` otherwise than RULES.md, if it would: as
    /// the defenders, a move back to an earlier board, which it refuses
    /// ([`repeats_a_board`]); as the attackers, a move that makes a position's fifth
    /// occurrence, Black's win under rule 8.4 that it does not see (it plays on).
    fn objection(&self, mv: Move) -> Option<&'static str> {
        if repeats_a_board(&self.game, mv) {
            return Some("it repeats a board, which the host's referee refuses");
        }
        let mut after = self.game.clone();
        after.play_unchecked(mv);
        after
            .outcome()
            .is_some_and(|o| o.reason == Reason::Repetition)
            .then_some(
                "its fifth occurrence of the position wins under RULES.md (rule 8.4), which \
                 the host's referee does not see",
            )
    }
}

/// The board as the project's engine writes it for `show_board_open_tafl`: the ranks from
/// 7 down to 1, each after a `/`, with `A`, `D` and `K` and digits for empty runs, and a
/// closing `/` (the placement of RULES.md's position notation between slashes).
fn board_record(pos: &Position) -> String {
    let text = pos.to_string();
    let placement = text.split(' ').next().unwrap_or_default();
    format!("/{placement}/")
}

impl Session for Engine {
    fn greeting(&self) -> Option<&'static str> {
        None
    }

    fn handle_line(&mut self, line: &str, received: Instant) -> Step {
        Engine::handle_line(self, line, received)
    }

    fn failure(&self) -> Option<&str> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::Budget;

    #[test]
    fn commands_parse_as_the_projects_engine_reads_them() {
        let mv = |t: &str| -> Move { t.parse().unwrap() };
        assert_eq!(
            parse_command("board_size 7"),
            Ok(Some(Command::BoardSize(7)))
        );
        assert_eq!(parse_command("  # a comment"), Ok(None));
        assert_eq!(parse_command(""), Ok(None));
        assert_eq!(
            parse_command("play defender d5 f5 # White"),
            Ok(Some(Command::Play(Side::White, mv("d5-f5"))))
        );
        assert_eq!(
            parse_command("play A D7 E7"),
            Ok(Some(Command::Play(Side::Black, mv("d7-e7"))))
        );
        assert_eq!(
            parse_command("play attacker resigns _"),
            Ok(Some(Command::Resign(Side::Black)))
        );
        assert_eq!(
            parse_command("play_to d d5"),
            Ok(Some(Command::PlayTo(Side::White, "d5".parse().unwrap())))
        );
        assert_eq!(
            parse_command("time_settings fischer 5 3"),
            Ok(Some(Command::TimeSettings(Some(Fischer {
                minutes: 5,
                add_seconds: 3
            }))))
        );
        assert_eq!(
            parse_command("time_settings un-timed"),
            Ok(Some(Command::TimeSettings(None)))
        );
        // Words after the arguments are ignored, as the project's engine does.
        assert_eq!(
            parse_command("generate_move defender"),
            Ok(Some(Command::GenerateMove))
        );
        // Every listed command parses (with arguments where it needs them).
        for name in COMMANDS {
            let args = match name {
                "board_size" => "7",
                "first_move" => "d",
                "known_command" => "play",
                "play" => "d d5 d6",
                "play_to" => "d d5",
                "time_settings" => "un-timed",
                _ => "",
            };
            let line = format!("{name} {args}");
            assert!(matches!(parse_command(&line), Ok(Some(_))), "{line}");
        }
        // A `generate_move` reply is the `play` command of the move.
        assert_eq!(write_play(Side::Black, mv("d7-e7")), "play attacker d7 e7");
    }

    #[test]
    fn bad_lines_are_one_line_errors() {
        assert!(matches!(
            parse_command("genmove b"),
            Err(CommandError::Unknown(w)) if w == "genmove"
        ));
        for line in [
            "board_size",
            "board_size seven",
            "first_move nobody",
            "play",
            "play defender",
            "play defender d5",
            "play defender d5 h5",
            "play defender d0 d1",
            "play_to d",
            "known_command",
            "time_settings",
            "time_settings fischer 5",
            "time_settings fischer -1 3",
            "time_settings fischer 999999999 3",
        ] {
            let e = parse_command(line).unwrap_err();
            assert!(matches!(e, CommandError::Malformed { .. }), "{line}");
            assert!(!e.to_string().contains('\n'), "{e}");
        }
    }

    fn tiny_engine() -> Engine {
        let (thinker, options) = crate::session::tiny_thinker();
        Engine::new(thinker, options)
    }

    /// The reply of one line: `Ok` after `= `, `Err` after `? `.
    fn reply(engine: &mut Engine, line: &str) -> Result<String, String> {
        let step = engine.handle_line(line, Instant::now());
        let first = step.send.first().cloned().unwrap_or_default();
        match (first.strip_prefix("= "), first.strip_prefix("? ")) {
            (Some(text), _) => Ok(text.to_owned()),
            (_, Some(text)) => {
                assert_eq!(step.send.get(1).map(String::as_str), Some(""), "{step:?}");
                Err(text.to_owned())
            }
            _ => panic!("no reply to {line:?}: {step:?}"),
        }
    }

    fn play_all(engine: &mut Engine, moves: &str) {
        for m in moves.split_whitespace() {
            let mv: Move = m.parse().unwrap();
            let side = engine.game().side_to_move();
            reply(engine, &write_play(side, mv)).unwrap();
        }
    }

    #[test]
    fn the_kings_capture_is_listed_and_ends_the_game_under_rules_md() {
        // Issue 70's second OpenTafl game up to e6-e5: the King on d5 between c5 and e5.
        let mut engine = tiny_engine();
        play_all(
            &mut engine,
            "d3-e3 d6-e6 d5-d6 d2-c2 d4-d5 b4-b6 c4-c7 c2-c5 e3-b3",
        );
        assert_eq!(reply(&mut engine, "final_status").unwrap(), "ongoing");
        assert_eq!(reply(&mut engine, "play attacker e6 e5").unwrap(), "d5 ");
        assert_eq!(reply(&mut engine, "final_status").unwrap(), "attacker_wins");
        // The King stays on his square (RULES.md), and undo takes the end back.
        assert_eq!(engine.game().position().king(), "d5".parse().unwrap());
        assert_eq!(reply(&mut engine, "play_undo").unwrap(), "");
        assert_eq!(reply(&mut engine, "final_status").unwrap(), "ongoing");
    }

    /// The start position after `plies` of the cycle c4-c5 a4-a5 c5-c4 a5-a4.
    fn cycle(plies: usize) -> String {
        let cycle = ["c4-c5", "a4-a5", "c5-c4", "a5-a4"];
        cycle
            .iter()
            .cycle()
            .take(plies)
            .copied()
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn as_the_defenders_the_engine_never_moves_back_to_an_earlier_board() {
        let mut engine = tiny_engine();
        play_all(&mut engine, &cycle(2));
        // c5-c4 gives a board not seen yet (the start's, but a5 for a4).
        let back: Move = "c5-c4".parse().unwrap();
        assert!(!repeats_a_board(engine.game(), back));
        play_all(&mut engine, &cycle(4)[12..]);
        assert_eq!(engine.game().ply(), 4);
        // Now White's c4-c5 would repeat the board after ply 1.
        let again: Move = "c4-c5".parse().unwrap();
        assert!(repeats_a_board(engine.game(), again));
        assert!(engine.objection(again).is_some());
        assert_ne!(chosen_first(&mut engine, again), again);
        // The attackers may repeat.
        play_all(&mut engine, "d5-e5");
        assert!(!repeats_a_board(engine.game(), "d7-d6".parse().unwrap()));
        // Whatever the search prefers, a generated move never repeats a board.
        let mut engine = tiny_engine();
        for _ in 0..40 {
            let before = engine.game().clone();
            let text = reply(&mut engine, "generate_move").unwrap();
            let Ok(Some(Command::Play(side, mv))) = parse_command(text.split(',').next().unwrap())
            else {
                panic!("{text}");
            };
            if side == Side::White {
                assert!(!repeats_a_board(&before, mv), "ply {}: {mv}", before.ply());
            }
            if engine.game().is_over() {
                break;
            }
        }
    }

    #[test]
    fn as_the_attackers_the_engine_does_not_win_by_a_repetition_the_host_does_not_see() {
        // After 15 plies of the cycle Black's a5-a4 makes the start's fifth occurrence.
        let mut engine = tiny_engine();
        play_all(&mut engine, &cycle(15));
        let fifth: Move = "a5-a4".parse().unwrap();
        assert!(engine.objection(fifth).is_some());
        let mut after = engine.game().clone();
        after.play(fifth).unwrap();
        assert_eq!(after.outcome().map(|o| o.reason), Some(Reason::Repetition));
        assert_ne!(chosen_first(&mut engine, fifth), fifth);
        let step = engine.handle_line("generate_move", Instant::now());
        assert!(!step.send[0].contains("play attacker a5 a4,"), "{step:?}");
    }

    /// The move the engine plays when its search ranks `first` first.
    fn chosen_first(engine: &mut Engine, first: Move) -> Move {
        let mut a = engine
            .thinker
            .think(&engine.game, Budget::Simulations(16))
            .unwrap();
        a.moves.sort_by_key(|m| m.mv != first);
        a.best_move = first;
        let mut step = Step::default();
        let chosen = engine.choose(&a, &mut step);
        assert!(
            step.log
                .iter()
                .any(|l| l.starts_with(&format!("not playing {first}: "))),
            "{step:?}"
        );
        chosen
    }

    #[test]
    fn past_a_rules_md_end_the_engine_plays_on_and_keeps_the_verdict() {
        // White repeats the start a fifth time: Black wins under rule 8.4; the driver
        // (whose referee has no such rule) plays on.
        let mut engine = tiny_engine();
        play_all(&mut engine, &cycle(16));
        assert_eq!(reply(&mut engine, "final_status").unwrap(), "attacker_wins");
        let step = engine.handle_line("play defender c4 c5", Instant::now());
        assert_eq!(step.send[0], "= ", "{step:?}");
        assert!(
            step.log
                .iter()
                .any(|l| l.contains("RULES.md ended this game at ply 16")),
            "{step:?}"
        );
        assert!(reply(&mut engine, "generate_move").is_ok());
        assert_eq!(reply(&mut engine, "final_status").unwrap(), "attacker_wins");
    }

    #[test]
    fn the_hosts_draw_is_said_once() {
        let mut engine = tiny_engine();
        let mut said = 0;
        // A long shuffle without a fifth occurrence: the defender on c4 and the attacker
        // on a4 walk through new squares.
        let moves = [
            "c4-c5", "a4-a5", "c5-c6", "a5-a6", "c6-c5", "a6-a5", "c5-c4", "a5-a4",
        ];
        for (i, m) in moves.iter().cycle().take(150).enumerate() {
            let side = if i % 2 == 0 { Side::White } else { Side::Black };
            let step = engine.handle_line(&write_play(side, m.parse().unwrap()), Instant::now());
            said += step.log.iter().filter(|l| l.contains("draw")).count();
        }
        assert_eq!(said, 1);
    }

    #[test]
    fn fischer_clocks_run_from_the_previous_move() {
        let t0 = Instant::now();
        let fischer = Fischer {
            minutes: 1,
            add_seconds: 2,
        };
        let mut clocks = Clocks::new(fischer, t0);
        let s = Duration::from_secs;
        assert_eq!(clocks.left_at(Side::White, t0 + s(10)), s(50));
        clocks.moved(Side::White, t0 + s(10));
        assert_eq!(clocks.left_at(Side::White, t0 + s(10)), s(52));
        // Black's clock started at White's move.
        assert_eq!(clocks.left_at(Side::Black, t0 + s(15)), s(55));
        clocks.moved(Side::Black, t0 + s(100));
        assert_eq!(clocks.left_at(Side::Black, t0 + s(100)), s(2));
        // The engine thinks as the time manager plans from its clock.
        let mut engine = tiny_engine();
        let now = Instant::now();
        engine.handle_line("time_settings fischer 0 1", now);
        let step = engine.handle_line("generate_move", now);
        assert!(step.send[0].starts_with("= play defender "), "{step:?}");
        assert!(
            step.log.iter().any(|l| l.contains("of 0.000 s planned")),
            "{step:?}"
        );
    }

    #[test]
    fn other_games_and_bad_commands_are_refused_and_the_engine_goes_on() {
        let mut engine = tiny_engine();
        assert!(
            reply(&mut engine, "board_size 11")
                .unwrap_err()
                .contains("Brandubh")
        );
        assert!(
            reply(&mut engine, "first_move attacker")
                .unwrap_err()
                .contains("rule 1")
        );
        assert!(
            reply(&mut engine, "play attacker d7 e7")
                .unwrap_err()
                .contains("turn")
        );
        assert!(
            reply(&mut engine, "play defender d4 d6")
                .unwrap_err()
                .contains("blocked")
        );
        assert!(reply(&mut engine, &"x".repeat(MAX_LINE + 1)).is_err());
        assert_eq!(reply(&mut engine, "first_move defender").unwrap(), "");
        assert_eq!(reply(&mut engine, "play d d5 f5").unwrap(), "");
        assert!(reply(&mut engine, "play attacker resigns").is_ok());
        assert!(
            reply(&mut engine, "play defender f5 f6")
                .unwrap_err()
                .contains("over")
        );
        assert_eq!(reply(&mut engine, "final_status").unwrap(), "defender_wins");
        assert_eq!(
            reply(&mut engine, "show_board_open_tafl").unwrap(),
            "/3A3/3A3/5D1/AADKDAA/3D3/3A3/3A3/"
        );
        let step = engine.handle_line("quit", Instant::now());
        assert_eq!((step.send.len(), step.exit), (0, Some(0)));
    }
}
