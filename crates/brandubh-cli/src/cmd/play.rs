//! `brandubh play [--agent FILE] [--side white|black] [--sims N | --time SECONDS] [--seed S]
//! [--position POS]`: a human against a trained agent, in the terminal or through a pipe.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::bail;
use brandubh_agent::{Agent, Analysis, Budget, Thinker};
use brandubh_rules::{Bitboard, Game, Move, Outcome, Piece, Position, Reason, SIZE, Side, Square};

use crate::out;

/// The shipped agent's path as a literal, for `concat!` in the help texts of `play`,
/// `analyze`, `engine` and `serve`: the one place it is written.
macro_rules! default_agent {
    () => {
        "models/brandubh-v5.agent"
    };
}
pub(crate) use default_agent;

/// The agent `play`, `analyze`, `engine` and `serve` use when none is given.
pub const DEFAULT_AGENT: &str = default_agent!();

/// The help text of `--agent` in `play`, `analyze` and `engine`.
pub const AGENT_HELP: &str = concat!(
    "The agent file (default: ",
    default_agent!(),
    ", the shipped model)."
);

/// Play a game against a trained agent.
///
/// Type moves in RULES.md notation (d5-f5 or d5f5); `moves` lists the legal moves, `undo`
/// takes back your last move and the agent's reply, `hint` shows the agent's suggestion,
/// `board` redraws the board, `quit` ends. Input may come from a pipe, one line per command;
/// the end of input ends the game. Colours are used when stdout is a terminal and NO_COLOR
/// is not set.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[arg(long, value_name = "FILE", help = AGENT_HELP)]
    agent: Option<PathBuf>,
    /// The side you play.
    #[arg(long, value_enum, default_value_t = SideArg::White)]
    side: SideArg,
    /// Simulations per agent move, 1-1000000 (default: the agent file's setting).
    #[arg(long, value_name = "N", conflicts_with = "time",
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    sims: Option<u32>,
    /// Thinking time per agent move in seconds, 0.001-3600 (instead of --sims): the search
    /// stops at this deadline, checked after every network call.
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    time: Option<f64>,
    /// Seed of the agent's searches.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Start position in RULES.md notation (default: the start of the game).
    #[arg(long, value_name = "POS")]
    position: Option<String>,
}

/// A side on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SideArg {
    /// The King and his defenders; moves first.
    White,
    /// The attackers.
    Black,
}

pub fn parse_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if (0.001..=3600.0).contains(&s) => Ok(s),
        _ => Err(format!(
            "{text:?} is not a number of seconds from 0.001 to 3600"
        )),
    }
}

/// The agent file named by `--agent`, or the shipped model; a clear error when neither
/// exists.
pub fn agent_path(arg: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(p) = arg {
        return Ok(p.to_path_buf());
    }
    // Beside the working directory first, then in the checkout this binary was built from.
    let candidates = [
        PathBuf::from(DEFAULT_AGENT),
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(DEFAULT_AGENT),
    ];
    match candidates.into_iter().find(|p| p.is_file()) {
        Some(p) => Ok(p),
        None => bail!(
            "no agent file given and no shipped model at {DEFAULT_AGENT} yet; export one with \
             `brandubh export RUN_DIR --out {DEFAULT_AGENT}` or pass --agent FILE"
        ),
    }
}

/// The search budget of `--sims N` or `--time SECONDS`; the agent file's simulations when
/// neither is given.
pub fn budget(sims: Option<u32>, time: Option<f64>, agent: &Agent) -> Budget {
    match (sims, time) {
        (Some(n), _) => Budget::Simulations(n),
        (None, Some(t)) => Budget::Time(Duration::from_secs_f64(t)),
        (None, None) => Budget::Simulations(agent.meta().search.simulations),
    }
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let path = agent_path(args.agent.as_deref())?;
    let agent = Agent::load(&path)?;
    let start = super::parse_position(args.position.as_deref())?;
    let human = match args.side {
        SideArg::White => Side::White,
        SideArg::Black => Side::Black,
    };
    let budget = budget(args.sims, args.time, &agent);
    let mut session = Session {
        agent: &agent,
        thinker: agent.thinker(args.seed)?,
        human,
        budget,
        color: std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
        echo: !std::io::stdin().is_terminal(),
    };
    let stdin = std::io::stdin();
    session.play(Game::new(start), &mut stdin.lock(), &mut out::stdout())
}

/// One game: who plays what, and how things are shown.
struct Session<'a> {
    agent: &'a Agent,
    /// The agent's search, keeping its tree over the moves played (and the hints).
    thinker: Thinker,
    human: Side,
    budget: Budget,
    /// ANSI colours on the board.
    color: bool,
    /// Repeat each input line after the prompt (input from a pipe is not shown otherwise).
    echo: bool,
}

/// What a line of input asks for.
#[derive(Debug, PartialEq, Eq)]
enum Command {
    Move(Move),
    Moves,
    Undo,
    Hint,
    Board,
    Help,
    Quit,
    Nothing,
    /// Looks like a move but does not parse: the parser's message.
    Malformed(String),
    Unknown(String),
}

fn parse_command(line: &str) -> Command {
    let word = line.trim();
    match word.to_ascii_lowercase().as_str() {
        "" => Command::Nothing,
        "moves" | "m" | "legal" => Command::Moves,
        "undo" | "u" | "takeback" => Command::Undo,
        "hint" | "h" => Command::Hint,
        "board" | "b" => Command::Board,
        "help" | "?" => Command::Help,
        "quit" | "q" | "exit" | "resign" => Command::Quit,
        _ => match word.parse::<Move>() {
            Ok(mv) => Command::Move(mv),
            // A square-like start (a letter then a digit) is taken for a move attempt.
            Err(e) if looks_like_a_move(word) => Command::Malformed(e.to_string()),
            Err(_) => Command::Unknown(word.chars().take(40).collect()),
        },
    }
}

fn looks_like_a_move(word: &str) -> bool {
    let b = word.as_bytes();
    b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1].is_ascii_digit()
}

const HELP: &str = "type a move such as d5-f5 (or d5f5), or one of: moves (list the legal moves), \
undo (take back your last move and the reply), hint (the agent's suggestion), board, quit";

/// What the game loop does after one step.
#[derive(Debug, PartialEq, Eq)]
enum Next {
    /// Go on without drawing the board again.
    Same,
    /// Draw the board, then go on.
    Redraw,
    /// The session is over.
    Stop,
}

impl Session<'_> {
    /// The game loop: draw the board when it changed, end a finished game, let the agent
    /// move on its turn, and otherwise read and obey one line of input.
    fn play(
        &mut self,
        mut game: Game,
        input: &mut impl BufRead,
        w: &mut impl Write,
    ) -> anyhow::Result<ExitCode> {
        self.greet(w)?;
        let mut show_board = true;
        loop {
            if show_board {
                writeln!(w, "{}", self.board(&game))?;
            }
            let next = if let Some(outcome) = game.outcome() {
                self.game_over(&game, outcome, w)?
            } else if game.side_to_move() != self.human {
                self.agent_moves(&mut game, w)?
            } else {
                match self.read_line(input, w)? {
                    Some(line) => self.obey(parse_command(&line), &mut game, w)?,
                    None => {
                        writeln!(w)?;
                        let n = game.ply();
                        writeln!(w, "End of input: game abandoned after {n} plies.")?;
                        out::flush(w)?;
                        Next::Stop
                    }
                }
            };
            match next {
                Next::Stop => return Ok(ExitCode::SUCCESS),
                Next::Redraw => show_board = true,
                Next::Same => show_board = false,
            }
        }
    }

    /// The opening lines: who plays whom, and the help text.
    fn greet(&self, w: &mut impl Write) -> anyhow::Result<()> {
        let you = side_title(self.human);
        writeln!(
            w,
            "Brandubh ({}): you play {you} against {}.",
            brandubh_agent::RULES_NAME,
            self.agent.meta().summary()
        )?;
        writeln!(w, "{}", capitalise(HELP))?;
        writeln!(w)?;
        Ok(())
    }

    /// The result line of a finished game.
    fn game_over(&self, game: &Game, outcome: Outcome, w: &mut impl Write) -> anyhow::Result<Next> {
        let who = if outcome.winner == self.human {
            "You win.".to_owned()
        } else {
            format!("{} wins.", self.agent.name())
        };
        writeln!(w, "Game over after {} plies: {outcome}. {who}", game.ply())?;
        out::flush(w)?;
        Ok(Next::Stop)
    }

    /// The agent searches, plays its move and says what it found.
    fn agent_moves(&mut self, game: &mut Game, w: &mut impl Write) -> anyhow::Result<Next> {
        let a = self.search(game)?;
        let effect = game.play(a.best_move)?;
        writeln!(
            w,
            "{} plays {}{} (value {:+.2} for it, {}).",
            self.agent.name(),
            a.best_move,
            captures_text(effect.captured, effect.king_captured, &effect.position),
            a.value,
            search_text(&a)
        )?;
        Ok(Next::Redraw)
    }

    /// Prompts and reads one line (trimmed, echoed when input is a pipe); `None` at the end
    /// of input.
    fn read_line(
        &self,
        input: &mut impl BufRead,
        w: &mut impl Write,
    ) -> anyhow::Result<Option<String>> {
        write!(w, "you ({})> ", side_title(self.human))?;
        out::flush(w)?;
        let mut raw = Vec::new();
        if input.read_until(b'\n', &mut raw)? == 0 {
            return Ok(None);
        }
        let line = String::from_utf8_lossy(&raw).trim().to_owned();
        if self.echo {
            writeln!(w, "{line}")?;
        }
        Ok(Some(line))
    }

    /// Carries out one command of the human player.
    fn obey(
        &mut self,
        command: Command,
        game: &mut Game,
        w: &mut impl Write,
    ) -> anyhow::Result<Next> {
        match command {
            Command::Nothing => {}
            Command::Help => writeln!(w, "{}", capitalise(HELP))?,
            Command::Board => return Ok(Next::Redraw),
            Command::Quit => {
                writeln!(w, "Game abandoned after {} plies.", game.ply())?;
                out::flush(w)?;
                return Ok(Next::Stop);
            }
            Command::Moves => {
                let moves = sorted_moves(game);
                writeln!(w, "legal moves ({}): {}", moves.len(), moves.join(" "))?;
            }
            Command::Undo => return undo(game, w),
            Command::Hint => self.hint(game, w)?,
            Command::Malformed(message) => writeln!(w, "{message}")?,
            Command::Unknown(word) => writeln!(w, "unknown command {word:?}: {HELP}")?,
            Command::Move(mv) => return human_moves(mv, game, w),
        }
        Ok(Next::Same)
    }

    /// The agent's suggestion for the human's move, with two alternatives.
    fn hint(&mut self, game: &Game, w: &mut impl Write) -> anyhow::Result<()> {
        let a = self.search(game)?;
        let others: Vec<String> = a.moves[1..]
            .iter()
            .take(2)
            .map(|m| m.mv.to_string())
            .collect();
        write!(
            w,
            "hint: {} (value {:+.2} for you, {})",
            a.best_move,
            a.value,
            search_text(&a)
        )?;
        if others.is_empty() {
            writeln!(w)?;
        } else {
            writeln!(w, "; also {}", others.join(", "))?;
        }
        Ok(())
    }

    fn search(&mut self, game: &Game) -> anyhow::Result<Analysis> {
        Ok(self.thinker.think(game, self.budget)?)
    }

    fn board(&self, game: &Game) -> String {
        let n = game.ply();
        let last = game.moves().last().copied();
        let captured = if n > 0 {
            let before = game.positions()[n - 1];
            let after = game.position();
            let gone = (before.attackers() | before.defenders())
                & !(after.attackers() | after.defenders());
            last.map_or(gone, |mv| gone.without(mv.from))
        } else {
            Bitboard::EMPTY
        };
        let king_captured = game
            .outcome()
            .is_some_and(|o| o.reason == Reason::KingCaptured);
        render_board(game.position(), last, captured, king_captured, self.color)
    }
}

/// Takes back the human's last move and the agent's reply.
fn undo(game: &mut Game, w: &mut impl Write) -> anyhow::Result<Next> {
    if game.ply() < 2 {
        writeln!(w, "nothing to undo")?;
        return Ok(Next::Same);
    }
    let a = game.undo();
    let b = game.undo();
    if let (Some(a), Some(b)) = (a, b) {
        writeln!(w, "took back {b} and {a}")?;
    }
    Ok(Next::Redraw)
}

/// Plays the human's move, naming what it captured. The agent replies at once: the board
/// is drawn after its move (or now, when the game is over).
fn human_moves(mv: Move, game: &mut Game, w: &mut impl Write) -> anyhow::Result<Next> {
    match game.play(mv) {
        Ok(effect) => {
            let captured = captures_text(effect.captured, effect.king_captured, &effect.position);
            if !captured.is_empty() {
                writeln!(w, "you play {mv}{captured}.")?;
            }
            Ok(if game.is_over() {
                Next::Redraw
            } else {
                Next::Same
            })
        }
        Err(e) => {
            writeln!(w, "{e}")?;
            Ok(Next::Same)
        }
    }
}

/// `White` or `Black`.
pub fn side_title(side: Side) -> &'static str {
    match side {
        Side::White => "White",
        Side::Black => "Black",
    }
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}

fn sorted_moves(game: &Game) -> Vec<String> {
    let mut moves: Vec<String> = game.legal_moves().iter().map(Move::to_string).collect();
    moves.sort();
    moves
}

/// `, capturing c3 and e5` (empty when nothing was captured).
fn captures_text(captured: Bitboard, king: bool, after: &Position) -> String {
    let mut names: Vec<String> = captured.map(|s| s.to_string()).collect();
    if king {
        names.push(format!("the King on {}", after.king()));
    }
    if names.is_empty() {
        String::new()
    } else {
        format!(", capturing {}", names.join(" and "))
    }
}

/// `64 simulations, 0.05 s` (`, 120 reused` when tree reuse kept visits).
pub fn search_text(a: &Analysis) -> String {
    let reused = if a.reused > 0 {
        format!(", {} reused", a.reused)
    } else {
        String::new()
    };
    format!(
        "{} simulations{reused}, {:.2} s",
        a.simulations,
        a.elapsed.as_secs_f64()
    )
}

const RESET: &str = "\x1b[0m";

/// The board with file and rank labels; the Castle and the corners marked; the last move
/// (from and to) and the squares it emptied by capture highlighted; a captured King marked.
///
/// Plain ASCII: `+` an empty restricted square, `[X]` where the last move landed, `(.)`
/// where it started, `x` a piece captured by it, `!K!` a captured King. With colours the
/// same squares get backgrounds (grey restricted squares, green last move, red captures).
pub fn render_board(
    pos: &Position,
    last: Option<Move>,
    captured: Bitboard,
    king_captured: bool,
    color: bool,
) -> String {
    let files = "     a  b  c  d  e  f  g\n";
    let mut s = String::from(files);
    for rank in (0..SIZE).rev() {
        s.push_str(&format!("  {} ", rank + 1));
        for file in 0..SIZE {
            let Some(sq) = Square::from_coords(file, rank) else {
                continue;
            };
            s.push_str(&cell(pos, sq, last, captured, king_captured, color));
        }
        s.push_str(&format!("  {}\n", rank + 1));
    }
    s.push_str(files);
    if let Some(mv) = last {
        s.push_str(&format!("  last move {mv}"));
        if !captured.is_empty() {
            let names: Vec<String> = captured.map(|q| q.to_string()).collect();
            s.push_str(&format!(", captured {}", names.join(" ")));
        }
        s.push('\n');
    }
    s.push_str(&format!(
        "  {} to move; + marks the Castle d4 and the corners\n",
        side_title(pos.side_to_move())
    ));
    s
}

/// One square, three characters wide (plus escape codes with colours).
fn cell(
    pos: &Position,
    sq: Square,
    last: Option<Move>,
    captured: Bitboard,
    king_captured: bool,
    color: bool,
) -> String {
    let piece = pos.piece_at(sq);
    let is_to = last.is_some_and(|m| m.to == sq);
    let is_from = last.is_some_and(|m| m.from == sq);
    let is_captured = captured.contains(sq);
    let dead_king = king_captured && piece == Some(Piece::King);
    let glyph = match piece {
        Some(p) => p.letter(),
        None if is_captured => 'x',
        None if sq.is_restricted() => '+',
        None => '.',
    };
    if !color {
        let (l, r) = if dead_king {
            ('!', '!')
        } else if is_to {
            ('[', ']')
        } else if is_from {
            ('(', ')')
        } else {
            (' ', ' ')
        };
        return format!("{l}{glyph}{r}");
    }
    let background = if dead_king || is_captured {
        "\x1b[41m" // red
    } else if is_to || is_from {
        "\x1b[42m" // green
    } else if sq.is_restricted() {
        "\x1b[100m" // grey
    } else {
        ""
    };
    let foreground = match piece {
        Some(Piece::Attacker) => "\x1b[1;31m",
        Some(Piece::Defender) => "\x1b[1;36m",
        Some(Piece::King) => "\x1b[1;33m",
        None if is_captured => "\x1b[1;37m",
        None => "\x1b[2m",
    };
    let foreground = if background == "\x1b[41m" && piece.is_some() {
        "\x1b[1;37m"
    } else {
        foreground
    };
    format!("{background}{foreground} {glyph} {RESET}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse() {
        assert_eq!(
            parse_command(" d5-f5 "),
            Command::Move("d5-f5".parse().unwrap())
        );
        assert_eq!(
            parse_command("d5f5"),
            Command::Move("d5-f5".parse().unwrap())
        );
        assert_eq!(parse_command("MOVES"), Command::Moves);
        assert_eq!(parse_command("undo"), Command::Undo);
        assert_eq!(parse_command("hint"), Command::Hint);
        assert_eq!(parse_command("quit"), Command::Quit);
        assert_eq!(parse_command(""), Command::Nothing);
        assert!(
            matches!(parse_command("d5-z9"), Command::Malformed(m) if m.contains("malformed move"))
        );
        assert!(matches!(parse_command("fly"), Command::Unknown(w) if w == "fly"));
    }

    #[test]
    fn ascii_board_marks_squares() {
        let mut game = Game::default();
        let board = |g: &Game| {
            let session_last = g.moves().last().copied();
            render_board(g.position(), session_last, Bitboard::EMPTY, false, false)
        };
        let start = board(&game);
        assert!(start.contains("  7  +  .  .  A  .  .  +   7\n"), "{start}");
        assert!(start.contains("  4  A  A  D  K  D  A  A   4\n"), "{start}");
        assert!(start.starts_with("     a  b  c  d  e  f  g\n"));
        assert!(!start.contains('\x1b'));
        game.play("d5-c5".parse().unwrap()).unwrap();
        let after = board(&game);
        assert!(after.contains("  5  .  . [D](.) .  .  .   5\n"), "{after}");
        assert!(after.contains("last move d5-c5"), "{after}");
    }

    #[test]
    fn captures_and_colours_are_shown() {
        let pos = Position::start();
        let captured = Bitboard::EMPTY.with("b3".parse().unwrap());
        let text = render_board(&pos, None, captured, false, false);
        assert!(text.contains("  3  .  x  .  D  .  .  .   3\n"), "{text}");
        let colored = render_board(&pos, None, captured, false, true);
        assert!(colored.contains("\x1b[41m"));
        assert!(colored.contains("\x1b[100m"));
        let dead = render_board(&pos, None, Bitboard::EMPTY, true, false);
        assert!(dead.contains("!K!"), "{dead}");
    }
}
