//! `brandubh replay [--position POS] [MOVE ...]`: JSON Lines, one object per ply.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, anyhow};
use brandubh_rules::{Game, Move, Outcome};
use serde::Serialize;

use crate::out;

/// Play moves from a position and print one JSON object per ply (ply 0 = the start).
///
/// Each line: `{"ply":N,"move":"c4-c5"|null,"position":"…","legal":[…],"outcome":null|{…}}`
/// with `legal` sorted as strings and empty once the game is over. A bad move stops the
/// replay with a one-line error naming it and its ply, after the lines before it.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Start position in RULES.md notation (default: the start of the game).
    #[arg(long, value_name = "POS")]
    position: Option<String>,
    /// Moves in `from-to` (or `fromto`) notation.
    #[arg(value_name = "MOVE")]
    moves: Vec<String>,
}

#[derive(Serialize)]
struct Line<'a> {
    ply: usize,
    #[serde(rename = "move")]
    mv: Option<String>,
    position: String,
    legal: Vec<String>,
    outcome: Option<OutcomeJson<'a>>,
}

/// The JSON shape of an outcome: `{"winner":"white","reason":"king_escaped"}`.
#[derive(Serialize)]
pub struct OutcomeJson<'a> {
    winner: &'a str,
    reason: &'a str,
}

impl From<Outcome> for OutcomeJson<'static> {
    fn from(o: Outcome) -> Self {
        OutcomeJson {
            winner: o.winner.name(),
            reason: o.reason.name(),
        }
    }
}

fn line(game: &Game, mv: Option<Move>) -> Line<'static> {
    let mut legal: Vec<String> = game.legal_moves().iter().map(Move::to_string).collect();
    legal.sort();
    Line {
        ply: game.ply(),
        mv: mv.map(|m| m.to_string()),
        position: game.position().to_string(),
        legal,
        outcome: game.outcome().map(OutcomeJson::from),
    }
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let pos = super::parse_position(args.position.as_deref())?;
    let mut game = Game::new(pos);
    let mut w = out::stdout();
    serde_json::to_writer(&mut w, &line(&game, None))?;
    writeln!(w)?;
    for (i, text) in args.moves.iter().enumerate() {
        let ply = i + 1;
        let result = text
            .parse::<Move>()
            .map_err(|e| anyhow!(e))
            .and_then(|mv| game.play(mv).map(|_| mv).map_err(|e| anyhow!(e)));
        let mv = match result {
            Ok(mv) => mv,
            Err(e) => {
                // The lines before the bad move are already part of the output.
                out::flush(&mut w)?;
                return Err(e).with_context(|| format!("ply {ply}"));
            }
        };
        serde_json::to_writer(&mut w, &line(&game, Some(mv)))?;
        writeln!(w)?;
    }
    out::flush(&mut w)?;
    Ok(ExitCode::SUCCESS)
}
