//! What the engine protocols share ([`otep`](crate::otep), [`htp`](crate::htp)): a
//! [`Session`] is the engine's side of one protocol as a state machine that turns each line
//! from the host into a [`Step`] (lines to send, lines to log, an exit), so that
//! `brandubh engine` is the same thin loop over stdin and stdout whichever protocol it
//! speaks; [`EngineOptions`] are the engine's settings beyond the agent's.

use std::time::{Duration, Instant};

use thiserror::Error;

use crate::agent::Budget;
use crate::clock::TimeManager;

/// Longest command line accepted; longer ones are answered with an error and skipped.
pub const MAX_LINE: usize = 16 * 1024;

/// Most bytes the engine writes at once, line breaks included, and so the longest line it
/// sends (less its line break). OpenTafl's host splits each read of the pipe at line
/// breaks and takes the pieces as whole commands: a line cut across two reads is taken as
/// two broken ones, and a broken `analysis` or `move` line ends OpenTafl (an uncaught
/// exception). A pipe write of at most `PIPE_BUF` bytes (4096 on Linux) reaches the reader
/// whole.
pub const MAX_WRITE: usize = 4096;

/// A line that is not a command the engine understands, in either protocol.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum CommandError {
    /// The first word is no command of the protocol.
    #[error("unknown command {0:?}")]
    Unknown(String),
    /// A known command with arguments that do not parse.
    #[error("malformed {command} command {line:?}: {problem}")]
    Malformed {
        /// The command word.
        command: &'static str,
        /// The line (at most 80 characters of it).
        line: String,
        /// What is wrong.
        problem: String,
    },
}

/// What the engine does after one command.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Step {
    /// Protocol lines to send, in order (without line breaks).
    pub send: Vec<String>,
    /// Lines for the log.
    pub log: Vec<String>,
    /// `Some(code)`: exit now with this status.
    pub exit: Option<u8>,
}

impl Step {
    /// Queues a protocol line: printable ASCII, at most [`MAX_WRITE`] - 1 bytes (a longer
    /// one, such as a notice listing a huge rules string's settings, is cut).
    pub(crate) fn send(&mut self, line: impl Into<String>) {
        let mut line = ascii_line(&line.into());
        line.truncate(MAX_WRITE - 1);
        self.send.push(line);
    }

    pub(crate) fn log(&mut self, line: impl Into<String>) {
        self.log.push(line.into());
    }
}

/// `text` as one protocol line: printable ASCII only (anything else becomes `?`).
#[must_use]
pub fn ascii_line(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii() && !c.is_ascii_control() {
                c
            } else {
                '?'
            }
        })
        .collect()
}

/// Engine settings beyond the agent's.
#[derive(Clone, Debug, PartialEq)]
pub struct EngineOptions {
    /// How the clock is shared out.
    pub time: TimeManager,
    /// The simulations per move without a clock (the agent file's by default).
    pub untimed_simulations: u32,
}

impl EngineOptions {
    /// The search of a move the host asked for at `received`: on a clock, the time
    /// manager's `plan` and its deadline; without one, the untimed simulations.
    #[must_use]
    pub fn budget(&self, plan: Option<Duration>, received: Instant) -> (Budget, Option<Instant>) {
        match plan {
            Some(plan) => (Budget::Time(plan), Some(received + plan)),
            None => (Budget::Simulations(self.untimed_simulations), None),
        }
    }
}

/// The engine's side of a protocol session, line by line.
pub trait Session {
    /// The line to send before the host's first command, if the protocol has one (OTEP's
    /// `hello`).
    fn greeting(&self) -> Option<&'static str>;

    /// Handles one line from the host (without its line break), received at `received`
    /// (a clock for the engine's move runs from then).
    fn handle_line(&mut self, line: &str, received: Instant) -> Step;

    /// Why the session has failed if the host's input ends now (OTEP: a rules string was
    /// refused and never reported), or `None` when ending is a success.
    fn failure(&self) -> Option<&str>;
}

/// A thinker of a tiny untrained agent (C8xN1, PUCT, 16 simulations) and engine options
/// with 16 simulations a move: the engines' tests.
#[cfg(test)]
pub(crate) fn tiny_thinker() -> (crate::Thinker, EngineOptions) {
    use brandubh_net::{Device, NetConfig};
    let model = NetConfig::new()
        .with_channels(8)
        .with_blocks(1)
        .init(&Device::flex());
    let meta = crate::AgentMeta::new(
        "tiny",
        brandubh_search::SearchSettings::new(brandubh_search::Algorithm::Puct, 16),
        crate::TrainingInfo::default(),
        crate::SourceInfo::default(),
    );
    let agent = crate::Agent::from_model(&model, meta, "tiny.agent").unwrap();
    let options = EngineOptions {
        time: TimeManager::default(),
        untimed_simulations: 16,
    };
    (agent.thinker(1).unwrap(), options)
}
