//! `brandubh status --run LOCATION`: a run's state, read without writing anything.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use brandubh_store::{Location, Store};
use brandubh_train::remote::utc;
use brandubh_train::status::{self, Audit, RunStatus};

use crate::out;

/// Show a run's state: iteration, networks, and per actor the chunks and games uploaded
/// and consumed and the last upload. Reads a directory or a store; writes nothing.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run: a directory or a store URL (as for `brandubh train --run`).
    #[arg(long, value_name = "LOCATION")]
    run: String,
    /// Check the books of a store run: every object under chunks/ consumed exactly once,
    /// pending, or quarantined with its reason; no chunk an actor reported missing; the
    /// learner's records, state.json and latest in agreement. Exits 1 if they do not
    /// balance.
    #[arg(long)]
    audit: bool,
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
    let audited = if args.audit {
        let a = status::audit(&store).with_context(|| format!("auditing run {location}"))?;
        w.write_all(render_audit(&a).as_bytes())?;
        Some(a)
    } else {
        None
    };
    out::flush(&mut w)?;
    match audited {
        Some(a) if !a.problems.is_empty() => anyhow::bail!(
            "run {location}: the books do not balance ({} problems, listed above)",
            a.problems.len()
        ),
        _ => Ok(ExitCode::SUCCESS),
    }
}

fn render_audit(a: &Audit) -> String {
    let mut text = format!(
        "audit: {} records; trained {} chunks ({} games), consumed without training {} ({} games too old); pending {}; not yet quarantined {}\n",
        a.records,
        a.trained_chunks,
        a.trained_games,
        a.stale_chunks,
        a.stale_games,
        a.pending.len(),
        a.foreign.len()
    );
    for (actor, reported, found) in &a.actors {
        text += &format!("actor {actor}: {reported} chunks reported uploaded, {found} found\n");
    }
    text += &format!(
        "quarantined: {} ({} without a reason)\n",
        a.quarantined.len(),
        a.unexplained.len()
    );
    for (note, present) in &a.quarantined {
        text += &format!(
            "  {} ({} bytes, iteration {}){}: {}\n",
            note.key,
            note.size,
            note.iteration,
            if *present { "" } else { " [object gone]" },
            note.reason
        );
    }
    for key in &a.foreign {
        text += &format!("  {key}: not an actor chunk, waiting for the learner's quarantine\n");
    }
    text += &format!(
        "games lost: {} chunks; trained twice: {}\n",
        a.lost_chunks(),
        a.problems.iter().filter(|p| p.contains("twice")).count()
    );
    if a.problems.is_empty() {
        text += "books: balanced\n";
    } else {
        for p in &a.problems {
            text += &format!("problem: {p}\n");
        }
    }
    text
}

fn render(location: &Location, s: &RunStatus) -> String {
    let mut text = String::new();
    let (name, planned) = s
        .config
        .as_ref()
        .map_or(("(no config.toml)".to_owned(), 0), |(n, i)| (n.clone(), *i));
    text += &format!("run {name} at {location}\n");
    if let Some(id) = &s.identity {
        text += &format!(
            "run id {} (created {})\n",
            id.run_id,
            utc(id.created_unix_ms)
        );
    }
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
    if !s.actors.is_empty() || s.quarantined > 0 || s.foreign_objects > 0 {
        text += &format!(
            "pending chunks: {}, quarantined: {}, foreign objects in chunks/: {}, games too old (not trained on): {}, chunks left waiting by the last iteration: {}\n",
            s.pending_chunks, s.quarantined, s.foreign_objects, s.stale_games, s.waiting_chunks
        );
    }
    text += &render_lease(s);
    text
}

/// The learner's lease of a store run, on one line.
fn render_lease(s: &RunStatus) -> String {
    let Some(l) = &s.lease else {
        return String::new();
    };
    let now = brandubh_train::remote::now_unix_ms();
    if l.expires_unix_ms > now {
        format!(
            "learner lease: held by {} until {} (fencing {})\n",
            l.owner,
            utc(l.expires_unix_ms),
            l.fencing
        )
    } else {
        format!(
            "learner lease: free (last held by {}, fencing {})\n",
            l.owner, l.fencing
        )
    }
}
