//! `brandubh status --run LOCATION`: a run's state, read without writing anything.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use brandubh_store::{Location, Store};
use brandubh_train::status::{self, RunStatus};

use crate::out;

/// Show a run's state: iteration, networks, and per actor the chunks and games uploaded
/// and consumed and the last upload. Reads a directory or a store; writes nothing.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run: a directory or a store URL (as for `brandubh train --run`).
    #[arg(long, value_name = "LOCATION")]
    run: String,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let location = Location::parse(&args.run)?;
    if let Location::Local(dir) = &location
        && !dir.is_dir()
    {
        anyhow::bail!("run {}: no such directory", dir.display());
    }
    let env: Vec<(String, String)> = std::env::vars().collect();
    // A look, not a job: give up on an unreachable store after a few retries.
    let retry = brandubh_store::Retry {
        give_up_after: std::time::Duration::from_secs(20),
        ..brandubh_store::Retry::default()
    };
    let store = Store::open_with(location.clone(), retry, &env)?;
    let s = status::status(&store).with_context(|| format!("run {location}"))?;
    let mut w = out::stdout();
    w.write_all(render(&location, &s).as_bytes())?;
    out::flush(&mut w)?;
    Ok(ExitCode::SUCCESS)
}

fn render(location: &Location, s: &RunStatus) -> String {
    let mut text = String::new();
    let (name, planned) = s
        .config
        .as_ref()
        .map_or(("(no config.toml)".to_owned(), 0), |(n, i)| (n.clone(), *i));
    text += &format!("run {name} at {location}\n");
    match &s.state {
        Some(st) => {
            text += &format!(
                "iteration {}/{planned}: {} games, {} positions, {} optimizer steps, {:.0} s\n",
                st.iteration, st.total_games, st.total_positions, st.total_steps, st.elapsed_s
            );
        }
        None => text += "no iteration recorded yet\n",
    }
    let nets = &s.checkpoints;
    text += &match (nets.first(), nets.last()) {
        (Some(a), Some(b)) => format!("networks: {} ({a}..{b})", nets.len()),
        _ => "networks: none".to_owned(),
    };
    if let Some(p) = &s.latest {
        text += &format!(
            "; actors play network {}{}",
            p.network,
            if p.finished { " (run finished)" } else { "" }
        );
    }
    text += "\n";
    if s.local_chunks > 0 {
        text += &format!("chunks of in-process self-play: {}\n", s.local_chunks);
    }
    if !s.actors.is_empty() {
        text += "actor  chunks  consumed  games-consumed  games-uploaded  network  games/s  last-upload\n";
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    for a in &s.actors {
        let (uploaded, network, rate, last) = match &a.status {
            Some(st) => (
                st.games.to_string(),
                st.network.to_string(),
                format!("{:.2}", st.games_per_s),
                format!(
                    "{:.0} s ago",
                    now.saturating_sub(st.last_upload_unix_ms) as f64 / 1000.0
                ),
            ),
            None => ("-".into(), "-".into(), "-".into(), "-".into()),
        };
        text += &format!(
            "{}  {}  {}  {}  {uploaded}  {network}  {rate}  {last}\n",
            a.actor, a.chunks, a.consumed_chunks, a.consumed_games
        );
    }
    if !s.actors.is_empty() || s.rejected_chunks > 0 {
        text += &format!(
            "pending chunks: {}, rejected: {}\n",
            s.pending_chunks, s.rejected_chunks
        );
    }
    text
}
