//! `brandubh engine [--protocol otep|htp] [--agent FILE] [--threads N] [--log FILE]
//! [--batch N] [--sims N] [--seed S]`: an agent as an OpenTafl engine (OTEP over
//! stdin/stdout) or as a hnefatafl-copenhagen engine (its Hnefatafl Text Protocol).
//!
//! Thin: lines in, the protocol's [`Session`] ([`brandubh_agent::otep::Engine`],
//! [`brandubh_agent::htp::Engine`]) decides, lines out. stdout carries protocol lines only;
//! the log (the traffic and what the engine decided) goes to stderr or to `--log FILE`.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use anyhow::Context;
use brandubh_agent::session::{EngineOptions, MAX_LINE, MAX_WRITE, Session, Step};
use brandubh_agent::{Agent, MAX_BATCH, clock::TimeManager, htp, otep};

use super::play::agent_path;
use crate::out;

/// How long `play` waits for the `clock` line that the protocol sends right after it.
const CLOCK_WAIT: Duration = Duration::from_millis(20);

/// Run an agent as an OpenTafl engine (OTEP on stdin/stdout), or with `--protocol htp` as
/// an engine of the hnefatafl-copenhagen project (its Hnefatafl Text Protocol).
///
/// Install it in OpenTafl with an .ini file in OpenTafl's engines folder (see
/// docs/opentafl/brandubh.ini) and the rules string of docs/guide/opentafl.md. The
/// engine plays RULES.md's Brandubh 2.5W: a rules string describing another game is
/// refused (an `error` line when the host starts the game) with exit status 1. Nothing
/// but `hello` is sent before the host's first `play` or `analyze`. With `--protocol htp`
/// it answers `board_size 7`, `play`, `generate_move`, `final_status` and the protocol's
/// other commands as the project's `hnefatafl-text-protocol` does (docs/guide/hnefatafl.md).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The protocol on stdin/stdout: OpenTafl's engine protocol, or the hnefatafl-copenhagen
    /// project's Hnefatafl Text Protocol.
    #[arg(long, value_enum, default_value_t = Protocol::Otep)]
    protocol: Protocol,
    #[arg(long, value_name = "FILE", help = super::play::AGENT_HELP)]
    agent: Option<PathBuf>,
    /// Threads for the network's inference (default: every core).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    threads: Option<u16>,
    /// Append the log (protocol traffic and decisions, each line stamped with the process id
    /// and the seconds since the start) to FILE instead of stderr.
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    /// Leaves per network call, spread by virtual loss (1 is plain sequential MCTS).
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u16).range(1..=MAX_BATCH as i64))]
    batch: u16,
    /// Simulations per move when the game has no clock (default: the agent file's).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    sims: Option<u32>,
    /// Seed of the searches.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// The protocols `--protocol` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Protocol {
    /// OpenTafl's engine protocol (docs/guide/opentafl.md).
    Otep,
    /// The hnefatafl-copenhagen project's Hnefatafl Text Protocol (docs/guide/hnefatafl.md).
    Htp,
}

/// Where log lines go.
enum Log {
    Stderr,
    File(File),
}

impl Log {
    /// Writes `[PID SECONDS] text`: OpenTafl may run two engines from one .ini (a player
    /// and the analysis engine, or both players), which then append to one log file.
    fn line(&mut self, t0: Instant, text: &str) {
        let line = format!(
            "[{} {:9.3}] {text}\n",
            std::process::id(),
            t0.elapsed().as_secs_f64()
        );
        // A log that cannot be written must not stop the game.
        let _ = match self {
            Log::Stderr => std::io::stderr().write_all(line.as_bytes()),
            Log::File(f) => f.write_all(line.as_bytes()),
        };
    }
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let t0 = Instant::now();
    let mut log = match &args.log {
        Some(path) => Log::File(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .with_context(|| format!("--log {}", path.display()))?,
        ),
        None => Log::Stderr,
    };
    if let Some(n) = args.threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(usize::from(n))
            .build_global()
            .context("--threads")?;
    }
    let mut w = out::stdout();
    // An agent that does not load ends the engine before its `hello`: OpenTafl then reports
    // that the engine failed to start (an `error` line now would reach a host with no game
    // to show it on; brandubh_agent::otep). main prints the error on stderr.
    let agent = Agent::load(agent_path(args.agent.as_deref())?)?;
    let mut thinker = agent.thinker(args.seed)?;
    thinker.set_batch(usize::from(args.batch));
    let options = EngineOptions {
        time: TimeManager::default(),
        untimed_simulations: args.sims.unwrap_or(agent.meta().search.simulations),
    };
    let mut engine: Box<dyn Session> = match args.protocol {
        Protocol::Otep => Box::new(otep::Engine::new(thinker, options)),
        Protocol::Htp => Box::new(htp::Engine::new(thinker, options)),
    };
    log.line(t0, &format!("engine: {}", agent.meta().summary()));
    if let Some(greeting) = engine.greeting() {
        send(&mut w, &mut log, t0, &[greeting.to_owned()])?;
    }

    let lines = spawn_reader();
    let mut queue: VecDeque<(String, Instant)> = VecDeque::new();
    let mut last_was_clock = false;
    loop {
        let (line, received) = match queue.pop_front() {
            Some(item) => item,
            None => match lines.recv() {
                Ok(item) => item,
                Err(_) => {
                    if let Some(why) = engine.failure() {
                        log.line(
                            t0,
                            &format!("end of input without a game: refused the rules: {why}"),
                        );
                        return Ok(ExitCode::from(1));
                    }
                    log.line(t0, "end of input: exiting");
                    return Ok(ExitCode::SUCCESS);
                }
            },
        };
        log.line(t0, &format!("< {line}"));
        let is_play = args.protocol == Protocol::Otep && line.trim_start().starts_with("play");
        if is_play && !last_was_clock {
            // OTEP sends `clock` right after `play`: take it first.
            match lines.recv_timeout(CLOCK_WAIT) {
                Ok((next, at)) if next.trim_start().starts_with("clock") => {
                    log.line(t0, &format!("< {next}"));
                    let step = engine.handle_line(&next, at);
                    if let Some(code) = apply(step, &mut w, &mut log, t0)? {
                        return Ok(ExitCode::from(code));
                    }
                }
                Ok(other) => queue.push_front(other),
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {}
            }
        }
        last_was_clock = line.trim_start().starts_with("clock");
        let step = engine.handle_line(&line, received);
        if let Some(code) = apply(step, &mut w, &mut log, t0)? {
            return Ok(ExitCode::from(code));
        }
    }
}

/// Sends a step's lines and logs; the exit code it asks for.
fn apply(step: Step, w: &mut impl Write, log: &mut Log, t0: Instant) -> anyhow::Result<Option<u8>> {
    send(w, log, t0, &step.send)?;
    for line in &step.log {
        log.line(t0, line);
    }
    if let Some(code) = step.exit {
        log.line(t0, &format!("exiting with status {code}"));
    }
    Ok(step.exit)
}

/// Sends `lines` in as few writes as [`MAX_WRITE`] allows, never cutting a line: OpenTafl's
/// host splits each read of the pipe at line breaks, so a line must never arrive in two
/// reads (every line is shorter than [`MAX_WRITE`]; brandubh_agent::session).
fn send(w: &mut impl Write, log: &mut Log, t0: Instant, lines: &[String]) -> anyhow::Result<()> {
    for chunk in writes(lines) {
        w.write_all(chunk.as_bytes())?;
        out::flush(w)?;
    }
    for line in lines {
        log.line(t0, &format!("> {line}"));
    }
    Ok(())
}

/// `lines`, each with its line break, packed into writes of at most [`MAX_WRITE`] bytes.
fn writes(lines: &[String]) -> Vec<String> {
    let mut chunks: Vec<String> = Vec::new();
    let mut text = String::new();
    for line in lines {
        if !text.is_empty() && text.len() + line.len() + 1 > MAX_WRITE {
            chunks.push(std::mem::take(&mut text));
        }
        text.push_str(line);
        text.push('\n');
    }
    if !text.is_empty() {
        chunks.push(text);
    }
    chunks
}

/// Reads stdin on its own thread, one line at a time (at most [`MAX_LINE`] bytes are kept
/// of a longer one), stamped with the time it arrived. The channel closes at the end of
/// input or on a read error.
fn spawn_reader() -> Receiver<(String, Instant)> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut input = stdin.lock();
        loop {
            match read_line_bounded(&mut input, MAX_LINE + 1) {
                Ok(Some(bytes)) => {
                    let line = String::from_utf8_lossy(&bytes).trim_end().to_owned();
                    if tx.send((line, Instant::now())).is_err() {
                        return;
                    }
                }
                Ok(None) | Err(_) => return,
            }
        }
    });
    rx
}

/// One line without its `\n`, keeping at most `max` bytes of it (the rest is skipped);
/// `None` at the end of input.
fn read_line_bounded(input: &mut impl BufRead, max: usize) -> std::io::Result<Option<Vec<u8>>> {
    let mut line = Vec::new();
    let mut seen_any = false;
    loop {
        let buf = input.fill_buf()?;
        if buf.is_empty() {
            return Ok(seen_any.then_some(line));
        }
        seen_any = true;
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        let room = max.saturating_sub(line.len());
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let used = done.unwrap_or(buf.len());
        input.consume(used);
        if done.is_some() {
            return Ok(Some(line));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_carry_whole_lines_within_the_bound() {
        let lines: Vec<String> = (0..5).map(|i| format!("{i}{}", "x".repeat(1500))).collect();
        let chunks = writes(&lines);
        assert_eq!(chunks.len(), 3, "two lines a write");
        assert!(
            chunks
                .iter()
                .all(|c| c.len() <= MAX_WRITE && c.ends_with('\n'))
        );
        assert_eq!(
            chunks.concat(),
            lines.iter().map(|l| format!("{l}\n")).collect::<String>()
        );
        assert_eq!(writes(&["move a1-a2".into(), "status ok".into()]).len(), 1);
        assert!(writes(&[]).is_empty());
    }

    #[test]
    fn lines_are_read_with_a_bound() {
        let text = b"hello\nlong line here\r\nlast";
        let mut input = &text[..];
        assert_eq!(
            read_line_bounded(&mut input, 100).unwrap().unwrap(),
            b"hello"
        );
        assert_eq!(read_line_bounded(&mut input, 4).unwrap().unwrap(), b"long");
        assert_eq!(
            read_line_bounded(&mut input, 100).unwrap().unwrap(),
            b"last"
        );
        assert_eq!(read_line_bounded(&mut input, 100).unwrap(), None);
    }
}
