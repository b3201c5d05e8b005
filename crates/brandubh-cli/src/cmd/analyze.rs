//! `brandubh analyze [--agent FILE] [--position POS] [--sims N | --time SECONDS] [--prove P] [--verify P] [--top K]
//! [--seed S] [--json] [MOVE ...]`: an agent's view of one position.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use brandubh_agent::{Agent, Analysis};
use brandubh_rules::{Game, Move};
use serde::Serialize;

use super::play::{agent_path, budget, render_board, search_text, side_title};
use crate::out;

/// Show an agent's top moves for a position, with visits, prior and value.
///
/// Columns: `visits` (simulations through the move), `policy` (the search's policy: visit
/// shares for PUCT, the improved policy for Gumbel), `prior` (the network's), `q` (the
/// move's mean value for the side to move, in [-1, 1]; `-` when unvisited). The first row is
/// the move the agent plays; the others follow by visits.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[arg(long, value_name = "FILE", help = super::play::AGENT_HELP)]
    agent: Option<PathBuf>,
    /// Position in RULES.md notation (default: the start of the game).
    #[arg(long, value_name = "POS")]
    position: Option<String>,
    /// Moves to play from the position first, in `from-to` notation (repetitions count).
    #[arg(value_name = "MOVE")]
    moves: Vec<String>,
    /// Simulations, 1-1000000 (default: the agent file's setting).
    #[arg(long, value_name = "N", conflicts_with = "time",
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    sims: Option<u32>,
    /// Thinking time in seconds, 0.001-3600 (instead of --sims): the search stops at this
    /// deadline, checked after every network call.
    #[arg(long, value_name = "SECONDS", value_parser = super::play::parse_seconds)]
    time: Option<f64>,
    #[command(flatten)]
    exact: super::ExactChecks,
    /// Moves to show.
    #[arg(long, value_name = "K", default_value_t = 10,
          value_parser = clap::value_parser!(u32).range(1..=200))]
    top: u32,
    /// Seed of the search.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print one JSON object (every move) instead of the table.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Json {
    agent: String,
    agent_file: String,
    position: String,
    side_to_move: &'static str,
    value: f32,
    net_value: f32,
    simulations: u32,
    elapsed_s: f64,
    best_move: String,
    moves: Vec<MoveJson>,
}

#[derive(Serialize)]
struct MoveJson {
    #[serde(rename = "move")]
    mv: String,
    visits: u32,
    policy: f32,
    prior: f32,
    q: Option<f32>,
}

/// Runs the command: set up the position, search it, print the result.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let path = agent_path(args.agent.as_deref())?;
    let mut agent = Agent::load(&path)?;
    if let Some(plies) = args.exact.prove {
        agent = agent.with_root_proof(plies);
    }
    if let Some(plies) = args.exact.verify {
        agent = agent.with_verify(plies);
    }
    let game = position_to_analyze(args.position.as_deref(), &args.moves)?;
    let budget = budget(args.sims, args.time, &agent);
    let a = agent.analyze(&game, budget, args.seed)?;
    let json = Json::new(&agent, &path, &game, &a);
    out::print(args.json, &json, |w, _| {
        write_report(w, &agent, &game, &a, args.top as usize)
    })?;
    Ok(ExitCode::SUCCESS)
}

/// The start position with the given moves played; an error when the game is over there.
fn position_to_analyze(position: Option<&str>, moves: &[String]) -> anyhow::Result<Game> {
    let mut game = Game::new(super::parse_position(position)?);
    for (i, text) in moves.iter().enumerate() {
        let ply = i + 1;
        let mv: Move = text.parse().with_context(|| format!("move {ply}"))?;
        game.play(mv).with_context(|| format!("move {ply}"))?;
    }
    if let Some(outcome) = game.outcome() {
        bail!(
            "position {}: the game is over ({outcome}); nothing to analyze",
            game.position()
        );
    }
    Ok(game)
}

impl Json {
    fn new(agent: &Agent, path: &Path, game: &Game, a: &Analysis) -> Self {
        Self {
            agent: agent.name().to_owned(),
            agent_file: path.display().to_string(),
            position: game.position().to_string(),
            side_to_move: game.side_to_move().name(),
            value: a.value,
            net_value: a.net_value,
            simulations: a.simulations,
            elapsed_s: a.elapsed.as_secs_f64(),
            best_move: a.best_move.to_string(),
            moves: a
                .moves
                .iter()
                .map(|m| MoveJson {
                    mv: m.mv.to_string(),
                    visits: m.visits,
                    policy: m.policy,
                    prior: m.prior,
                    q: m.q,
                })
                .collect(),
        }
    }
}

/// The human-readable report: the position, the search's summary, the top moves.
fn write_report(
    w: &mut impl Write,
    agent: &Agent,
    game: &Game,
    a: &Analysis,
    top: usize,
) -> anyhow::Result<()> {
    let last = game.moves().last().copied();
    writeln!(w, "agent     {}", agent.meta().summary())?;
    let side = side_title(game.side_to_move());
    writeln!(w, "position  {} ({side} to move)", game.position())?;
    writeln!(w)?;
    writeln!(
        w,
        "{}",
        render_board(
            game.position(),
            last,
            brandubh_rules::Bitboard::EMPTY,
            false,
            false
        )
    )?;
    writeln!(
        w,
        "value     {:+.3} for {side} after the search ({:+.3} from the network alone)",
        a.value, a.net_value
    )?;
    let rate = f64::from(a.simulations) / a.elapsed.as_secs_f64().max(1e-9);
    writeln!(
        w,
        "search    {} {} ({rate:.0} simulations/s)",
        agent.meta().search.algorithm,
        search_text(a)
    )?;
    writeln!(w, "best      {}", a.best_move)?;
    writeln!(w)?;
    write_moves(w, a, top)
}

/// The table of the `top` first moves.
fn write_moves(w: &mut impl Write, a: &Analysis, top: usize) -> anyhow::Result<()> {
    writeln!(w, "rank  move    visits  policy   prior        q")?;
    let shown = a.moves.len().min(top);
    for (i, m) in a.moves.iter().take(shown).enumerate() {
        let q = m.q.map_or_else(|| "-".to_owned(), |q| format!("{q:+.4}"));
        writeln!(
            w,
            "{:>4}  {:<6} {:>7}  {:.4}  {:.4}  {q:>7}",
            i + 1,
            m.mv.to_string(),
            m.visits,
            m.policy,
            m.prior
        )?;
    }
    if shown < a.moves.len() {
        writeln!(
            w,
            "({shown} of {} legal moves shown; --top K for more)",
            a.moves.len()
        )?;
    }
    Ok(())
}
