//! The OpenTafl Engine Protocol (OTEP): the host's commands as a typed [`Command`]
//! ([`parse_command`], a pure function), and [`Engine`], the engine's side of a session as
//! a state machine that turns each command into protocol lines to send and log lines.
//! `brandubh engine` wraps it in stdin/stdout.
//!
//! The engine keeps its game in step with the host: every `opponent-move` and every `move`
//! confirmation carries the host's position; when it differs from the engine's own, the
//! engine adopts the host's (and logs it), losing only the repetition history.
//!
//! **Nothing unsolicited before the game.** OpenTafl's host hands every `status`, `error`,
//! `move` and `analysis` line to its game display, which does not exist until it has
//! started a game with the engine: a `status` line in reply to `rules` crashed OpenTafl
//! 0.4.8.0b (`NullPointerException` in `ExternalEngineHost.handleStatusCommand`). So until
//! the host's first `play` or `analyze`, the engine sends nothing (`hello` is sent by the
//! caller before any command): what it would have said goes to the log, the rules notice
//! waits and follows the first answer as a `status` line, and a refused rules string is
//! reported in answer to that first `play` (`error -1`, after which OpenTafl resigns for
//! the engine) or `analyze` (`error 0`: an analysis engine has no player to resign), and
//! the engine exits with status 1. `move` only ever answers `play`, `analysis` only
//! `analyze`.
//!
//! **What else the host cannot take.** OpenTafl splits each read of the pipe at line
//! breaks and ends itself on an exception in its reader thread (a cut `analysis` or `move`
//! line throws), so a line never spans two writes and a write is at most [`MAX_WRITE`]
//! bytes. It shows every `error` in a dialog box: a request it sends in good faith (an
//! analysis of a finished game) is answered with a `status` line instead. It does not end
//! a game when the attackers have no legal move (RULES.md 8.5), so a `play` in a position
//! RULES.md has ended for the engine is answered with `error -1` (OpenTafl resigns for
//! it). Its in-game `dumplasteval` sends `dump N` without a line break: the debug request
//! is dropped and the command glued to it is kept.

use std::time::{Duration, Instant};

use brandubh_rules::{Game, KingCapture, KingRule, Position, Side};

use crate::agent::{Analysis, MoveStats};
use crate::clock::{GameClock, SideClock};
use crate::otn;
use crate::session::Session;
pub use crate::session::{CommandError, EngineOptions, MAX_LINE, MAX_WRITE, Step, ascii_line};
use crate::thinker::Thinker;

/// Most moves an `analyze` reply lists.
pub const MAX_ANALYSIS_MOVES: u32 = 50;
/// Longest principal line shown per move in an `analysis` reply.
pub const MAX_LINE_MOVES: usize = 12;
/// Longest analysis accepted, in seconds.
pub const MAX_ANALYSIS_SECONDS: u32 = 3600;

/// A command from the host.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// `hello` (the host answers the engine's; nothing to do).
    Hello,
    /// `start` (sent by some OpenTafl versions before a game; nothing to do).
    Start,
    /// `rules RULES`: an OTN rules string.
    Rules(String),
    /// `position RECORD`: the board to analyze or follow in a replay.
    Position(String),
    /// `side attackers|defenders`: the side to move (analysis and replays).
    Side(Side),
    /// `clock A[*] D[*] OVERTIME_S A_PERIODS D_PERIODS`.
    Clock(GameClock),
    /// `play attackers|defenders`: move now for that side.
    Play(Side),
    /// `opponent-move MOVES POSITION`: the other side moved (`|`-separated moves).
    OpponentMove {
        /// The move records, oldest first.
        moves: Vec<String>,
        /// The position record after them.
        position: String,
    },
    /// `move POSITION`: the engine's move was accepted; the position after it.
    Move(String),
    /// `analyze N SECONDS`.
    Analyze {
        /// Moves wanted.
        count: u32,
        /// Time allowed.
        seconds: u32,
    },
    /// `finish CODE`: the game is over (0 abandoned, 1 draw, 2 attackers, 3 defenders).
    Finish(u8),
    /// `goodbye`: shut down.
    Goodbye,
    /// `error CODE`: the engine's last move was refused (1 wrong side, 2 illegal, 3–4
    /// berserk).
    Error(i32),
}

/// `attackers` → Black, `defenders` → White.
fn parse_side(word: &str) -> Option<Side> {
    match word {
        "attackers" => Some(Side::Black),
        "defenders" => Some(Side::White),
        _ => None,
    }
}

/// `attackers` or `defenders`.
#[must_use]
pub fn side_word(side: Side) -> &'static str {
    match side {
        Side::Black => "attackers",
        Side::White => "defenders",
    }
}

/// Parses one line from the host (without its line break; surrounding white space is
/// ignored).
pub fn parse_command(line: &str) -> Result<Command, CommandError> {
    let line = line.trim();
    let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
    let rest = rest.trim();
    let args: Vec<&str> = rest.split_ascii_whitespace().collect();
    let malformed = |command: &'static str, problem: &str| CommandError::Malformed {
        command,
        line: otn::printable(line),
        problem: problem.to_owned(),
    };
    let none = |command: &'static str, c: Command| {
        if args.is_empty() {
            Ok(c)
        } else {
            Err(malformed(command, "takes no arguments"))
        }
    };
    let side = |command: &'static str| match args.as_slice() {
        [w] => parse_side(w).ok_or_else(|| malformed(command, "expected attackers or defenders")),
        _ => Err(malformed(command, "expected attackers or defenders")),
    };
    let one = |command: &'static str, what: &str| match args.as_slice() {
        [a] => Ok((*a).to_owned()),
        _ => Err(malformed(command, &format!("expected one {what}"))),
    };
    match word {
        "hello" => none("hello", Command::Hello),
        "start" => none("start", Command::Start),
        "goodbye" => none("goodbye", Command::Goodbye),
        "rules" if !rest.is_empty() => Ok(Command::Rules(rest.to_owned())),
        "rules" => Err(malformed("rules", "expected a rules string")),
        "position" => one("position", "position record").map(Command::Position),
        "move" => one("move", "position record").map(Command::Move),
        "side" => side("side").map(Command::Side),
        "play" => side("play").map(Command::Play),
        "clock" => parse_clock(&args)
            .map(Command::Clock)
            .map_err(|p| malformed("clock", p)),
        "opponent-move" => match args.as_slice() {
            [moves, position] => Ok(Command::OpponentMove {
                moves: moves.split('|').map(str::to_owned).collect(),
                position: (*position).to_owned(),
            }),
            _ => Err(malformed(
                "opponent-move",
                "expected a move list and a position record",
            )),
        },
        "analyze" => match args.as_slice() {
            [n, s] => match (n.parse::<u32>(), s.parse::<u32>()) {
                (Ok(count), Ok(seconds)) if count >= 1 && seconds <= MAX_ANALYSIS_SECONDS => {
                    Ok(Command::Analyze { count, seconds })
                }
                _ => Err(malformed(
                    "analyze",
                    "expected a move count of at least 1 and 0-3600 seconds",
                )),
            },
            _ => Err(malformed("analyze", "expected a move count and seconds")),
        },
        "finish" => match args.as_slice() {
            [c] => match c.parse::<u8>() {
                Ok(code @ 0..=3) => Ok(Command::Finish(code)),
                _ => Err(malformed("finish", "expected a code 0-3")),
            },
            _ => Err(malformed("finish", "expected a code 0-3")),
        },
        "error" => match args.first().map(|c| c.parse::<i32>()) {
            Some(Ok(code)) => Ok(Command::Error(code)),
            _ => Err(malformed("error", "expected an error code")),
        },
        _ => Err(CommandError::Unknown(
            otn::printable(word).chars().take(40).collect(),
        )),
    }
}

/// The five fields of a `clock` command.
fn parse_clock(args: &[&str]) -> Result<GameClock, &'static str> {
    const USAGE: &str =
        "expected ATTACKER_MS[*] DEFENDER_MS[*] OVERTIME_S ATTACKER_PERIODS DEFENDER_PERIODS";
    let [a, d, ot, ap, dp] = args else {
        return Err(USAGE);
    };
    let millis = |s: &str| -> Result<(u64, bool), &'static str> {
        let (digits, star) = match s.strip_suffix('*') {
            Some(d) => (d, true),
            None => (s, false),
        };
        // OpenTafl writes -1 for a clock it does not keep.
        let ms = match digits.parse::<i64>() {
            Ok(v) if v < 0 => 0,
            Ok(v) => v as u64,
            Err(_) => return Err(USAGE),
        };
        Ok((ms.min(1_000_000_000), star))
    };
    let count = |s: &str| s.parse::<u32>().map_err(|_| USAGE);
    let (am, astar) = millis(a)?;
    let (dm, dstar) = millis(d)?;
    let overtime = Duration::from_secs(u64::from(count(ot)?.min(1_000_000)));
    Ok(GameClock {
        attackers: SideClock {
            millis: am,
            in_overtime: astar,
            periods: count(ap)?,
        },
        defenders: SideClock {
            millis: dm,
            in_overtime: dstar,
            periods: count(dp)?,
        },
        overtime,
    })
}

/// The rest of a line that starts with OpenTafl's `dump [N]` (its evaluation-dump request,
/// sent without a line break), or `None` for any other line.
fn strip_dump(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix("dump")?;
    let rest = rest.trim_start_matches(' ');
    let rest = rest.strip_prefix('-').unwrap_or(rest);
    Some(rest.trim_start_matches(|c: char| c.is_ascii_digit()))
}

/// How the host started a game with the engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum HostGame {
    /// A `play`: the engine is a player.
    Play,
    /// An `analyze`: the engine is OpenTafl's analysis engine.
    Analyze,
}

/// The engine's side of an OTEP session (see the module documentation).
#[derive(Debug)]
pub struct Engine {
    thinker: Thinker,
    options: EngineOptions,
    game: Game,
    clock: Option<GameClock>,
    /// Whether `play` or `opponent-move` was seen since the last `rules`/`finish`.
    started: bool,
    /// The side the engine plays, once a `play` named it.
    ours: Option<Side>,
    /// The position before the engine's last move, and that move.
    last_sent: Option<(Position, brandubh_rules::Move)>,
    /// Moves the host refused (`error`) in a position: never sent there again.
    refused: Vec<(Position, brandubh_rules::Move)>,
    /// How the host started a game (its first `play` or `analyze`): until then nothing is
    /// sent (module documentation).
    host_game: Option<HostGame>,
    /// The rules notice, sent as a `status` line after the first answer.
    notice: Option<String>,
    /// Why the last rules string was refused: reported at the first `play` or `analyze`.
    refusal: Option<String>,
    /// What the host does at a third repetition (its rules string's `tfr`).
    host_repetition: otn::ThirdRepetition,
    /// How the host captures the King (its rules string's `ks`; RULES.md's before a rules
    /// string came). The engine's game follows it, and its searches are guarded by it.
    host_king: KingCapture,
    /// That RULES.md ended this game where the host plays on, once said to the player in
    /// the status line after the engine's next move (`None` once said, or not yet seen).
    rulebook_end: RulebookEnd,
}

/// Whether the player has been told that RULES.md ended the game where the host plays on.
#[derive(Clone, Debug, PartialEq, Eq)]
enum RulebookEnd {
    /// RULES.md has not ended this game.
    NotYet,
    /// It has; the text waits for the status line after the engine's next move.
    ToSay(String),
    /// Said.
    Said,
}

/// How the host would end a game at a third repetition, for the engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum HostVerdict {
    /// The engine would win.
    Win,
    /// A draw.
    Draw,
    /// The engine would lose.
    Loss,
}

impl Engine {
    /// An engine searching with `thinker`.
    #[must_use]
    pub fn new(thinker: Thinker, options: EngineOptions) -> Engine {
        Engine {
            thinker,
            options,
            game: Game::default(),
            clock: None,
            started: false,
            ours: None,
            last_sent: None,
            refused: Vec::new(),
            host_game: None,
            notice: None,
            refusal: None,
            host_repetition: otn::ThirdRepetition::Draw,
            host_king: KingCapture::RULEBOOK,
            rulebook_end: RulebookEnd::NotYet,
        }
    }

    /// A game from `pos` as the host referees it (its King capture).
    fn new_game(&mut self, pos: Position) -> Game {
        self.rulebook_end = RulebookEnd::NotYet;
        Game::with_king_rule(pos, KingRule::One(self.host_king))
    }

    /// Why the rules string the host sent was refused, while that has not been reported
    /// (no `play` or `analyze` came): a session that ends so has failed.
    #[must_use]
    pub fn refusal(&self) -> Option<&str> {
        self.refusal.as_deref()
    }

    /// The first line to send: `hello`.
    #[must_use]
    pub fn hello() -> &'static str {
        "hello"
    }

    /// The engine's game (its current position is where it thinks the host is).
    #[must_use]
    pub fn game(&self) -> &Game {
        &self.game
    }

    /// Handles one line from the host, received at `received` (the host's clock for a
    /// `play` runs from then).
    pub fn handle_line(&mut self, line: &str, received: Instant) -> Step {
        let mut step = Step::default();
        // OpenTafl's `dumplasteval` sends `dump N` without a line break, so the host's next
        // command follows on the same line: drop the debug request, keep the command.
        let line = match strip_dump(line) {
            Some(rest) => {
                step.log("OpenTafl's debug `dump` request ignored");
                if rest.is_empty() {
                    return step;
                }
                rest
            }
            None => line,
        };
        if line.len() > MAX_LINE {
            step.send(format!(
                "error 0 command longer than {MAX_LINE} bytes ignored"
            ));
        } else {
            match parse_command(line) {
                Ok(command) => self.handle(command, received, &mut step),
                Err(e) => {
                    step.log(format!("refused {line:?}: {e}"));
                    step.send(format!("error 0 {e}"));
                }
            }
        }
        if self.host_game.is_none() {
            for line in std::mem::take(&mut step.send) {
                step.log(format!("not sent before the host starts a game: {line}"));
            }
        }
        step
    }

    fn handle(&mut self, command: Command, received: Instant, step: &mut Step) {
        match command {
            Command::Hello | Command::Start => {}
            Command::Rules(rules) => {
                self.refused.clear();
                self.rules(&rules, step);
            }
            Command::Position(record) => {
                let side = self.game.side_to_move();
                match otn::parse_position(&record, side) {
                    Ok(pos) => self.adopt(pos, "position", step),
                    Err(e) => step.send(format!("error 0 {e}")),
                }
            }
            Command::Side(side) => self.set_side(side, step),
            Command::Clock(clock) => self.clock = Some(clock),
            Command::Play(side) => {
                if self.start_game(HostGame::Play, step) {
                    self.started = true;
                    self.ours = Some(side);
                    self.set_side(side, step);
                    self.play(side, received, step);
                    self.send_notice(step);
                }
            }
            Command::OpponentMove { moves, position } => {
                self.started = true;
                self.opponent_moved(&moves, &position, step);
            }
            Command::Move(record) => {
                let side = self.game.side_to_move();
                match otn::parse_position(&record, side) {
                    Ok(pos) if pos == *self.game.position() => {}
                    Ok(pos) => self.adopt(pos, "the host's position after our move", step),
                    Err(e) => step.send(format!("error 0 {e}")),
                }
            }
            // Analysis has no game clock: its time counts from now.
            Command::Analyze { count, seconds } => {
                if self.start_game(HostGame::Analyze, step) {
                    self.analyze(count, seconds, Instant::now(), step);
                    self.send_notice(step);
                }
            }
            Command::Finish(code) => {
                step.log(format!(
                    "game finished (code {code}) after {} plies",
                    self.game.ply()
                ));
                self.rulebook_end = RulebookEnd::NotYet;
                self.started = false;
                self.ours = None;
                self.clock = None;
                self.refused.clear();
                self.thinker.clear();
            }
            Command::Goodbye => step.exit = Some(if self.refusal.is_some() { 1 } else { 0 }),
            Command::Error(code) => {
                step.log(format!("the host refused our last move (error {code})"));
                // The host will send its position and `play` again: try another move.
                if let Some(sent) = self.last_sent.take() {
                    self.refused.push(sent);
                }
            }
        }
    }

    /// The host starts (or goes on with) a game: reports a refusal of its rules string and
    /// exits, or says the game can go on.
    fn start_game(&mut self, game: HostGame, step: &mut Step) -> bool {
        let game = *self.host_game.get_or_insert(game);
        match self.refusal.take() {
            Some(why) => {
                self.refuse(game, &why, step);
                false
            }
            None => true,
        }
    }

    /// Sends a refusal of the rules and exits: `error -1` to a player, which OpenTafl then
    /// resigns; `error 0` to an analysis engine, which has no player to resign (OpenTafl's
    /// `-1` would call it).
    fn refuse(&mut self, game: HostGame, why: &str, step: &mut Step) {
        let code = match game {
            HostGame::Play => -1,
            HostGame::Analyze => 0,
        };
        step.send(format!("error {code} {why}"));
        step.exit = Some(1);
    }

    /// Sends the rules notice, once, after the first answer to the host.
    fn send_notice(&mut self, step: &mut Step) {
        if let Some(text) = self.notice.take() {
            step.send(format!("status {text}"));
        }
    }

    fn rules(&mut self, rules: &str, step: &mut Step) {
        self.notice = None;
        self.refusal = None;
        match otn::check_rules(rules) {
            Ok(deviations) => {
                self.host_repetition = otn::third_repetition(rules);
                self.host_king = otn::host_king_capture(rules);
                self.thinker.set_referee(Some(self.host_king));
                self.game.set_king_rule(KingRule::One(self.host_king));
                if !deviations.is_empty() {
                    let list: Vec<String> = deviations.iter().map(ToString::to_string).collect();
                    let text = format!(
                        "playing RULES.md Brandubh 2.5W as the host referees it; where the two \
                         differ: {}",
                        list.join("; ")
                    );
                    step.log(&text);
                    if self.host_game.is_some() {
                        step.send(format!("status {text}"));
                    } else {
                        self.notice = Some(text);
                    }
                }
                if !self.started {
                    self.game = self.new_game(Position::start());
                    self.thinker.clear();
                }
            }
            Err(e) => {
                let why = format!(
                    "{e}; this engine plays Brandubh 2.5W only, e.g. rules {}",
                    otn::BRANDUBH_RULES
                );
                step.log(format!("refused the rules: {why}"));
                if let Some(game) = self.host_game {
                    self.refuse(game, &why, step);
                } else {
                    // Reported when the host starts the game (module documentation).
                    self.refusal = Some(why);
                }
            }
        }
    }

    /// Makes `side` the side to move, keeping the board.
    fn set_side(&mut self, side: Side, step: &mut Step) {
        if self.game.side_to_move() == side && !self.game.is_over() {
            return;
        }
        let record = otn::write_position(self.game.position());
        match otn::parse_position(&record, side) {
            Ok(pos) => self.adopt(pos, "side", step),
            Err(e) => step.log(format!("cannot set the side: {e}")),
        }
    }

    /// Starts a new game at `pos` unless it is already the current position.
    fn adopt(&mut self, pos: Position, why: &str, step: &mut Step) {
        if pos == *self.game.position() && !self.game.is_over() {
            return;
        }
        step.log(format!(
            "{why}: adopting the host's position {pos} (ours was {})",
            self.game.position()
        ));
        self.game = self.new_game(pos);
    }

    fn opponent_moved(&mut self, moves: &[String], record: &str, step: &mut Step) {
        let mut game = self.game.clone();
        let mut followed = true;
        for text in moves {
            let before = *game.position();
            match otn::parse_move(text)
                .map_err(|e| e.to_string())
                .and_then(|mv| game.play(mv).map(|_| mv).map_err(|e| e.to_string()))
            {
                Ok(mv) => self.note_rulebook_end(&before, mv, game.ply(), step),
                Err(e) => {
                    step.log(format!(
                        "opponent move {text:?} does not follow from our position: {e}"
                    ));
                    followed = false;
                    break;
                }
            }
        }
        let side = if followed {
            game.side_to_move()
        } else {
            self.ours.unwrap_or(self.game.side_to_move().opponent())
        };
        match otn::parse_position(record, side) {
            Ok(pos) => {
                if followed && pos == *game.position() {
                    self.game = game;
                } else {
                    self.adopt(pos, "opponent-move", step);
                }
            }
            Err(e) => step.send(format!("error 0 {e}")),
        }
    }

    fn play(&mut self, side: Side, received: Instant, step: &mut Step) {
        if self.game.is_over() {
            // The host judges some points differently (e.g. repetition): play on from its
            // position.
            self.game = self.new_game(*self.game.position());
        }
        if let Some(outcome) = self.game.outcome() {
            // RULES.md ends the game here although the host plays on (OpenTafl does not end
            // a game when the attackers have no legal move, rule 8.5). Having lost, the
            // engine resigns: `error -1`, on which OpenTafl resigns for it; a game it has
            // won is only reported.
            let code = if outcome.winner == side { 0 } else { -1 };
            let resign = if code < 0 { "; resigning" } else { "" };
            step.send(format!(
                "error {code} the game is over for the {} under RULES.md ({outcome}){resign}",
                side_word(side)
            ));
            return;
        }
        if self.game.side_to_move() != side {
            step.send(format!(
                "error 0 cannot play for the {} here",
                side_word(side)
            ));
            return;
        }
        let plan = self.clock.as_ref().map(|clock| {
            let ours = match side {
                Side::Black => clock.attackers,
                Side::White => clock.defenders,
            };
            self.options.time.plan(&ours, clock.overtime)
        });
        let (budget, deadline) = self.options.budget(plan, received);
        match self.thinker.think_until(&self.game, budget, deadline) {
            Ok(a) => {
                let here = *self.game.position();
                let allowed: Vec<&MoveStats> = a
                    .moves
                    .iter()
                    .filter(|m| !self.refused.contains(&(here, m.mv)))
                    .collect();
                let Some(first) = allowed.first() else {
                    step.send("error 0 the host refused every legal move here");
                    return;
                };
                let mv = allowed
                    .iter()
                    .find(|m| {
                        self.referees_agree(m.mv, step)
                            && self.host_accepts(m.mv, m.q.unwrap_or(a.value), step)
                    })
                    .unwrap_or(first)
                    .mv;
                self.last_sent = Some((here, mv));
                step.send(format!("move {}", otn::write_move(mv)));
                let used = received.elapsed();
                let planned = plan.map_or_else(String::new, |p| {
                    format!(" of {:.3} s planned", p.as_secs_f64())
                });
                let mut text = format!(
                    "{mv}: value {:+.3}, {} simulations ({} reused) in {:.3} s{planned}",
                    a.value,
                    a.simulations,
                    a.reused,
                    used.as_secs_f64()
                );
                step.log(format!("ply {}: {text}", self.game.ply() + 1));
                match self.game.play(mv) {
                    Ok(_) => self.note_rulebook_end(&here, mv, self.game.ply(), step),
                    Err(e) => step.log(format!("our own move failed: {e}")),
                }
                if let RulebookEnd::ToSay(end) = &self.rulebook_end {
                    text = format!("{text}; {end}");
                    self.rulebook_end = RulebookEnd::Said;
                }
                step.send(format!("status {text}"));
            }
            Err(e) => {
                step.log(format!("search failed: {e}"));
                step.send(format!("error 0 search failed: {e}"));
            }
        }
    }

    /// Notes (and logs) that `mv`, played in `before` as the host referees it, is a King
    /// capture under RULES.md (rule 7) that the host does not see: RULES.md has ended the
    /// game at ply `ply` and the host plays on. The player is told once a game, in the
    /// status line after the engine's next move.
    fn note_rulebook_end(
        &mut self,
        before: &Position,
        mv: brandubh_rules::Move,
        ply: usize,
        step: &mut Step,
    ) {
        if self.rulebook_end != RulebookEnd::NotYet
            || !before.play_unchecked(mv).king_captured
            || before
                .play_unchecked_with(mv, &KingRule::One(self.host_king))
                .king_captured
        {
            return;
        }
        let text = format!(
            "RULES.md ends this game at ply {ply}: {mv} captures the King (rule 7, Black wins); \
             the host sees no capture and plays on, and so does the engine"
        );
        step.log(&text);
        self.rulebook_end = RulebookEnd::ToSay(text);
    }

    /// Whether RULES.md and the host agree on whether `mv` ends the game. A move that
    /// captures the King under rule 7 where the host sees no capture is skipped (and
    /// logged): the host plays on, so it is no win, and the game's record would then end
    /// otherwise under RULES.md than in the host. The guarded search already values it as
    /// the host's game goes on; the next move of its ranking is played instead, or it when
    /// there is no other.
    fn referees_agree(&self, mv: brandubh_rules::Move, step: &mut Step) -> bool {
        let here = self.game.position();
        let rulebook = here.play_unchecked(mv).king_captured;
        let host = here
            .play_unchecked_with(mv, &KingRule::One(self.host_king))
            .king_captured;
        if rulebook && !host {
            step.log(format!(
                "not playing {mv}: it captures the King under RULES.md (rule 7), which the host \
                 does not see"
            ));
        }
        !rulebook || host
    }

    /// Whether the engine may play `mv` (its search's value `q` for the side to move) as
    /// far as the host's repetition rule goes: OpenTafl ends a game at a position's third
    /// occurrence (RULES.md plays on to the fifth, rule 8.4), so a move is skipped when
    /// that ending, after it or after a reply the opponent can choose, is a loss for the
    /// engine, or a draw while the search expects better (`q` > 0). Logs a skipped move.
    fn host_accepts(&self, mv: brandubh_rules::Move, q: f32, step: &mut Step) -> bool {
        let verdict = self.host_verdict(mv);
        let ok = match verdict {
            Some(HostVerdict::Loss) => false,
            Some(HostVerdict::Draw) => q <= 0.0,
            Some(HostVerdict::Win) | None => true,
        };
        if !ok {
            step.log(format!(
                "not playing {mv} (value {q:+.3}): the host would end the game at a third \
                 repetition ({verdict:?} for us)"
            ));
        }
        ok
    }

    /// How the host would end the game at a third repetition right after `mv`, or after
    /// the opponent's worst reply for the engine (a reply that wins the opponent the game
    /// or draws it); `None` where neither can repeat a position a third time.
    fn host_verdict(&self, mv: brandubh_rules::Move) -> Option<HostVerdict> {
        use otn::ThirdRepetition::{Draw, MoverLoses, MoverWins};
        let verdict = |engine_moved: bool| match (self.host_repetition, engine_moved) {
            (Draw, _) => HostVerdict::Draw,
            (MoverWins, true) | (MoverLoses, false) => HostVerdict::Win,
            (MoverWins, false) | (MoverLoses, true) => HostVerdict::Loss,
        };
        let mut after = self.game.clone();
        after.play(mv).ok()?;
        if after.repetitions() >= 3 {
            return Some(verdict(true));
        }
        let mut worst = None;
        for reply in after.legal_moves() {
            let mut next = after.clone();
            if next.play(reply).is_ok() && next.repetitions() >= 3 {
                match verdict(false) {
                    HostVerdict::Loss => return Some(HostVerdict::Loss),
                    HostVerdict::Draw => worst = Some(HostVerdict::Draw),
                    // The opponent would not choose to lose.
                    HostVerdict::Win => {}
                }
            }
        }
        worst
    }

    fn analyze(&mut self, count: u32, seconds: u32, received: Instant, step: &mut Step) {
        if self.game.is_over() {
            self.game = self.new_game(*self.game.position());
        }
        if let Some(outcome) = self.game.outcome() {
            // A status line, not an error: OpenTafl shows errors in a dialog box.
            step.send(format!(
                "status the game is over here under RULES.md ({outcome}): nothing to analyze"
            ));
            return;
        }
        let time = Duration::from_secs(u64::from(seconds)).saturating_sub(self.options.time.margin);
        let result = self.thinker.think_to(&self.game, received + time);
        match result {
            Ok(a) => step.send(self.analysis_line(&a, count)),
            Err(e) => step.send(format!("error 0 analysis failed: {e}")),
        }
    }

    /// `analysis K line eval ...`: the visited moves, most visited first (at least the
    /// move the agent plays), each with its most visited continuation and its value for
    /// the side to move.
    fn analysis_line(&self, a: &Analysis, count: u32) -> String {
        let count = count.min(MAX_ANALYSIS_MOVES) as usize;
        let mut entries: Vec<String> = Vec::new();
        for (i, m) in a.moves.iter().enumerate() {
            if entries.len() >= count || (i > 0 && m.visits == 0) {
                break;
            }
            let line: Vec<String> = self
                .thinker
                .principal_line(m.mv, MAX_LINE_MOVES)
                .into_iter()
                .map(otn::write_move)
                .collect();
            let value = m.q.unwrap_or(a.value);
            entries.push(format!("{} {value:.3}", line.join("|")));
        }
        fit_analysis(&entries)
    }
}

impl Session for Engine {
    fn greeting(&self) -> Option<&'static str> {
        Some(Engine::hello())
    }

    fn handle_line(&mut self, line: &str, received: Instant) -> Step {
        Engine::handle_line(self, line, received)
    }

    fn failure(&self) -> Option<&str> {
        self.refusal()
    }
}

/// `analysis K entry ...` with as many of `entries` (`line value`, best first) as fit in
/// one write ([`MAX_WRITE`]): a cut `analysis` line would end OpenTafl, so the entries
/// that do not fit are left out whole (the first always fits: at most
/// [`MAX_LINE_MOVES`] moves).
fn fit_analysis(entries: &[String]) -> String {
    let mut shown: Vec<&str> = Vec::new();
    let mut len = "analysis 50 ".len();
    for entry in entries {
        if !shown.is_empty() && len + 1 + entry.len() >= MAX_WRITE {
            break;
        }
        len += 1 + entry.len();
        shown.push(entry);
    }
    format!("analysis {} {}", shown.len(), shown.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::Budget;

    #[test]
    fn commands_parse() {
        assert_eq!(parse_command("hello"), Ok(Command::Hello));
        assert_eq!(parse_command(" goodbye \r"), Ok(Command::Goodbye));
        assert_eq!(
            parse_command("play attackers"),
            Ok(Command::Play(Side::Black))
        );
        assert_eq!(
            parse_command("side defenders"),
            Ok(Command::Side(Side::White))
        );
        assert_eq!(
            parse_command("rules dim:7 atkf:n start:/7/"),
            Ok(Command::Rules("dim:7 atkf:n start:/7/".into()))
        );
        assert_eq!(
            parse_command("opponent-move d5-f5|f5-f6 /3t3/7/"),
            Ok(Command::OpponentMove {
                moves: vec!["d5-f5".into(), "f5-f6".into()],
                position: "/3t3/7/".into()
            })
        );
        assert_eq!(
            parse_command("analyze 3 10"),
            Ok(Command::Analyze {
                count: 3,
                seconds: 10
            })
        );
        assert_eq!(parse_command("finish 2"), Ok(Command::Finish(2)));
        assert_eq!(parse_command("error 2"), Ok(Command::Error(2)));
        // OpenTafl's clock line ends with a space.
        let Ok(Command::Clock(c)) = parse_command("clock 60000 1500* 10 3 2 ") else {
            panic!("clock");
        };
        assert_eq!(
            c.attackers,
            SideClock {
                millis: 60_000,
                in_overtime: false,
                periods: 3
            }
        );
        assert_eq!(
            c.defenders,
            SideClock {
                millis: 1_500,
                in_overtime: true,
                periods: 2
            }
        );
        assert_eq!(c.overtime, Duration::from_secs(10));
        let Ok(Command::Clock(c)) = parse_command("clock -1 -1 0 0 0") else {
            panic!("clock -1");
        };
        assert_eq!(c.attackers.millis, 0);
    }

    fn tiny_engine() -> Engine {
        let (thinker, options) = crate::session::tiny_thinker();
        Engine::new(thinker, options)
    }

    fn sent_move(step: &Step) -> String {
        step.send
            .iter()
            .find_map(|l| l.strip_prefix("move "))
            .expect("a move")
            .to_owned()
    }

    #[test]
    fn a_move_the_host_refuses_is_not_sent_again() {
        let mut engine = tiny_engine();
        let now = Instant::now();
        engine.handle_line(&format!("rules {}", otn::BRANDUBH_RULES), now);
        let first = sent_move(&engine.handle_line("play defenders", now));
        // The host refuses it, restates the start and asks again (OTEP's error sequence).
        engine.handle_line("error 2", now);
        let start = otn::write_position(&Position::start());
        engine.handle_line(&format!("opponent-move d7-d6 {start}"), now);
        let second = sent_move(&engine.handle_line("play defenders", now));
        assert_ne!(first, second);
        assert_eq!(engine.game().ply(), 1);
        // A position that differs from the engine's is adopted.
        let step = engine.handle_line(&format!("move {start}"), now);
        assert!(step.log.iter().any(|l| l.contains("adopting")), "{step:?}");
        assert_eq!(engine.game().ply(), 0);
        assert_eq!(engine.game().side_to_move(), Side::Black);
    }

    #[test]
    fn opentafls_dump_request_without_a_line_break_keeps_the_next_command() {
        assert_eq!(strip_dump("dump 0"), Some(""));
        assert_eq!(
            strip_dump("dump 0finish 2"),
            Some("finish 2"),
            "OpenTafl sends no line break after dump"
        );
        assert_eq!(
            strip_dump("dump 12opponent-move d5-f5 /7/"),
            Some("opponent-move d5-f5 /7/")
        );
        assert_eq!(strip_dump("dump"), Some(""));
        assert_eq!(strip_dump("play attackers"), None);
        let mut engine = tiny_engine();
        let now = Instant::now();
        engine.handle_line(&format!("rules {}", otn::BRANDUBH_RULES), now);
        let step = engine.handle_line("dump 0play defenders", now);
        assert!(step.send.iter().any(|l| l.starts_with("move ")), "{step:?}");
        assert!(
            !step.send.iter().any(|l| l.starts_with("error")),
            "{step:?}"
        );
        let step = engine.handle_line("dump 0", now);
        assert!(step.send.is_empty(), "{step:?}");
    }

    #[test]
    fn without_a_legal_move_the_engine_resigns_and_does_not_analyze() {
        // Black's only piece, b1, is boxed in by the corner and two defenders: RULES.md 8.5
        // ends the game (White wins), which OpenTafl does not check for the attackers.
        let pos: Position = "7/7/7/3K3/7/1D5/1AD4 b".parse().unwrap();
        let record = otn::write_position(&pos);
        let now = Instant::now();
        let mut engine = tiny_engine();
        engine.handle_line(&format!("rules {}", otn::BRANDUBH_RULES), now);
        engine.handle_line(&format!("position {record}"), now);
        let step = engine.handle_line("play attackers", now);
        assert_eq!(step.send.len(), 2, "{step:?}");
        assert!(step.send[0].starts_with("error -1 "), "{step:?}");
        assert!(step.send[0].contains("resigning"), "{step:?}");
        // As OpenTafl's analysis engine: a status line, not an error dialog.
        let mut engine = tiny_engine();
        engine.handle_line(&format!("rules {}", otn::BRANDUBH_RULES), now);
        engine.handle_line(&format!("position {record}"), now);
        engine.handle_line("side attackers", now);
        let step = engine.handle_line("analyze 3 1", now);
        assert!(
            step.send[0].starts_with("status the game is over"),
            "{step:?}"
        );
        assert!(
            !step.send.iter().any(|l| l.starts_with("error")),
            "{step:?}"
        );
    }

    /// The start position after `plies` of the cycle c4-c5 a4-a5 c5-c4 a5-a4: the start
    /// occurs a third time after ply 8.
    fn cycled(plies: usize) -> Game {
        let cycle = ["c4-c5", "a4-a5", "c5-c4", "a5-a4"];
        let mut game = Game::default();
        for text in cycle.iter().cycle().take(plies) {
            game.play(text.parse().unwrap()).unwrap();
        }
        game
    }

    #[test]
    fn the_hosts_third_repetition_is_seen_coming() {
        let now = Instant::now();
        let mv = |t: &str| -> brandubh_rules::Move { t.parse().unwrap() };
        let verdicts = |tfr: &str, plies: usize, m: &str| {
            let mut engine = tiny_engine();
            let rules = otn::BRANDUBH_RULES.replace("tfr:l", tfr);
            engine.handle_line(&format!("rules {rules}"), now);
            engine.game = cycled(plies);
            engine.host_verdict(mv(m))
        };
        // Black's a5-a4 after 7 plies repeats the start a third time: OpenTafl's tfr:l
        // gives the game to the player who repeats, tfr:w to the other, tfr:d draws.
        assert_eq!(verdicts("tfr:l", 7, "a5-a4"), Some(HostVerdict::Win));
        assert_eq!(verdicts("tfr:w", 7, "a5-a4"), Some(HostVerdict::Loss));
        assert_eq!(verdicts("tfr:d", 7, "a5-a4"), Some(HostVerdict::Draw));
        assert_eq!(verdicts("tfr:l", 7, "d7-e7"), None);
        // One ply earlier White's c5-c4 lets Black repeat: a loss under tfr:l, a draw
        // under tfr:d, nothing under tfr:w (Black would not choose to lose).
        assert_eq!(verdicts("tfr:l", 6, "c5-c4"), Some(HostVerdict::Loss));
        assert_eq!(verdicts("tfr:d", 6, "c5-c4"), Some(HostVerdict::Draw));
        assert_eq!(verdicts("tfr:w", 6, "c5-c4"), None);

        // Playing: of the two moves left (the host refused the others), the engine skips
        // the one the host would count as its loss, whichever its search prefers.
        let mut engine = tiny_engine();
        engine.handle_line(&format!("rules {}", otn::BRANDUBH_RULES), now);
        engine.game = cycled(6);
        let here = *engine.game.position();
        for m in engine.game.legal_moves() {
            if m != mv("c5-c4") && m != mv("e4-e5") {
                engine.refused.push((here, m));
            }
        }
        let step = engine.handle_line("play defenders", now);
        assert_eq!(sent_move(&step), "e4-e5", "{step:?}");
    }

    /// Issue 70's two games against OpenTafl's AI, the engine as Black, up to the move
    /// that captures the King next to the Castle under rule 7 (c4 between c3 and c5; d5
    /// between c5 and e5) and that OpenTafl's `ks:c` does not see.
    const NEXT_TO_THE_CASTLE: [(&str, &str); 2] = [
        (
            "c4-c1 b4-b1 d4-c4 b1-b3 d5-b5 d6-c6 b5-g5 c6-g6 e4-e5 g6-c6 d3-e3 d2-e2 e3-g3 \
             f4-f5 e5-b5 c6-c5 b5-b6",
            "b3-c3",
        ),
        (
            "d3-e3 d6-e6 d5-d6 d2-c2 d4-d5 b4-b6 c4-c7 c2-c5 e3-b3",
            "e6-e5",
        ),
    ];

    /// The engine's game of `moves` from the start, as it follows the host.
    fn followed(engine: &mut Engine, moves: &str) -> Game {
        let mut game = engine.new_game(Position::start());
        for m in moves.split_whitespace() {
            game.play(m.parse().unwrap()).unwrap();
        }
        game
    }

    #[test]
    fn told_the_hosts_ks_c_the_engine_no_longer_counts_a_capture_next_to_the_castle_as_its_win() {
        let now = Instant::now();
        for (moves, capture) in NEXT_TO_THE_CASTLE {
            let capture: brandubh_rules::Move = capture.parse().unwrap();
            for told in [false, true] {
                let mut engine = tiny_engine();
                if told {
                    engine.handle_line(&format!("rules {}", otn::BRANDUBH_RULES), now);
                }
                engine.game = followed(&mut engine, moves);
                let a = engine
                    .thinker
                    .think(&engine.game, Budget::Simulations(256))
                    .unwrap();
                let stats = a.moves.iter().find(|m| m.mv == capture).unwrap();
                // Untold, the capture is a win in one (a terminal node, +1); told, a move
                // after which the game goes on, as it does in OpenTafl.
                assert_eq!(
                    stats.q == Some(1.0),
                    !told,
                    "told {told}: {capture} {stats:?}"
                );
                let mut after = engine.game.clone();
                after.play(capture).unwrap();
                assert_eq!(after.is_over(), !told, "told {told}: {capture}");
                if !told {
                    assert_eq!(a.best_move, capture);
                }
                // Nor does it play it: RULES.md would end the game there, the host not.
                let step = engine.handle_line("play attackers", now);
                assert_eq!(sent_move(&step) == capture.to_string(), !told, "{step:?}");
            }
        }
    }

    #[test]
    fn the_player_is_told_once_that_rules_md_ended_the_game_the_host_plays_on() {
        // The engine as White; OpenTafl's Black plays the capture next to the Castle,
        // which OpenTafl (ks:c) does not see.
        let now = Instant::now();
        let (moves, capture) = NEXT_TO_THE_CASTLE[0];
        let mut engine = tiny_engine();
        engine.handle_line(&format!("rules {}", otn::BRANDUBH_RULES), now);
        engine.game = followed(&mut engine, moves);
        engine.ours = Some(Side::White);
        let mut host = engine.game.clone();
        host.play(capture.parse().unwrap()).unwrap();
        let record = otn::write_position(host.position());
        let step = engine.handle_line(&format!("opponent-move {capture} {record}"), now);
        assert!(step.send.is_empty(), "{step:?}");
        assert_eq!(engine.game().ply(), 18);
        assert!(!engine.game().is_over());
        let step = engine.handle_line("play defenders", now);
        // The status line after the engine's move (the rules notice follows it).
        let status = step.send.iter().find(|l| l.starts_with("status")).unwrap();
        assert!(
            status.contains(
                "RULES.md ends this game at ply 18: b3-c3 captures the King (rule 7, Black wins)"
            ),
            "{step:?}"
        );
        // Said once: the next move's status line is the usual one.
        assert_eq!(
            engine.game().moves().last().map(ToString::to_string),
            Some(sent_move(&step))
        );
        let record = otn::write_position(engine.game().position());
        engine.handle_line(&format!("move {record}"), now);
        let mut host = engine.game().clone();
        let reply = host.legal_moves()[0];
        host.play(reply).unwrap();
        let record = otn::write_position(host.position());
        let step = engine.handle_line(&format!("opponent-move {reply} {record}"), now);
        assert!(!step.log.iter().any(|l| l.contains("adopting")), "{step:?}");
        let step = engine.handle_line("play defenders", now);
        assert!(
            step.send.iter().all(|l| !l.contains("RULES.md ends")),
            "{step:?}"
        );
    }

    #[test]
    fn every_line_fits_one_write() {
        // The most the engine shows, 50 moves with 12-move lines, fits whole (3,962 bytes).
        let entry = format!("{} -0.123", ["a1-a2"; MAX_LINE_MOVES].join("|"));
        let entries = vec![entry; MAX_ANALYSIS_MOVES as usize];
        let line = fit_analysis(&entries);
        assert!(line.len() < MAX_WRITE, "{}", line.len());
        assert_eq!(line.split(' ').nth(1), Some("50"));
        // Longer entries are left out whole once the line would not fit.
        let entry = format!("{} -0.123", ["a1-a2"; 20].join("|"));
        let entries = vec![entry; MAX_ANALYSIS_MOVES as usize];
        let line = fit_analysis(&entries);
        assert!(line.len() < MAX_WRITE, "{}", line.len());
        let fields: Vec<&str> = line.split(' ').collect();
        let n: usize = fields[1].parse().unwrap();
        assert!(n >= 30 && n < entries.len(), "{n}");
        assert_eq!(fields.len(), 2 + 2 * n, "whole entries only");
        assert_eq!(fit_analysis(&entries[..3]).split(' ').nth(1), Some("3"));
        let mut step = Step::default();
        step.send(format!("status {}", "x".repeat(10_000)));
        assert_eq!(step.send[0].len(), MAX_WRITE - 1);
    }

    #[test]
    fn bad_lines_are_typed_errors() {
        assert!(matches!(parse_command("fly away"), Err(CommandError::Unknown(w)) if w == "fly"));
        assert!(matches!(parse_command(""), Err(CommandError::Unknown(_))));
        for line in [
            "play sideways",
            "play",
            "side",
            "clock 1 2 3",
            "clock a b c d e",
            "clock 1** 2 3 4 5",
            "analyze 0 5",
            "analyze 3 99999",
            "analyze x y",
            "finish 7",
            "opponent-move d5-f5",
            "hello there",
            "rules",
            "error",
            "position a b",
        ] {
            assert!(
                matches!(parse_command(line), Err(CommandError::Malformed { .. })),
                "{line}"
            );
        }
    }
}
