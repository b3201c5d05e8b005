//! `brandubh train --role learner|actor`: the roles of a run on shared storage.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::Context;
use brandubh_run::config::RunConfig;
use brandubh_store::{Location, Store};
use brandubh_train::actor::{self, ActorOptions};
use brandubh_train::learner::{self, LearnerOptions, Terminate};
use brandubh_train::run::RunError;

/// The exit status of a learner refused because another holds the run's lease
/// (`EX_TEMPFAIL` of sysexits.h: try again later).
pub const LEASE_HELD: u8 = 75;

use crate::cmd::train::{Args, log_finished};

/// The store of `location` (a directory becomes a local store).
fn open(location: &Location) -> anyhow::Result<Store> {
    let env: Vec<(String, String)> = std::env::vars().collect();
    Ok(Store::open_with(
        location.clone(),
        brandubh_store::Retry::default(),
        &env,
    )?)
}

/// The cache directory of a role: `--cache`, or one under the temporary directory named
/// after the location (and the actor, so that actors on one machine do not share one).
fn cache_dir(args: &Args, location: &Location, role: &str) -> PathBuf {
    if let Some(dir) = args.cache() {
        return dir.clone();
    }
    let tag = brandubh_fs::fnv1a64(location.to_string().as_bytes());
    std::env::temp_dir().join(format!("brandubh-{role}-{tag:016x}"))
}

/// `--role learner`.
pub fn learner(args: &Args, config: Option<&RunConfig>) -> anyhow::Result<ExitCode> {
    let location = args.location(config)?;
    let store = open(&location)?;
    // Without --config, the run's own (which `learn` would read anyway): the progress
    // bars need its iteration count.
    let stored;
    let config = match config {
        Some(c) => Some(c),
        None => {
            stored = brandubh_train::remote::stored_config(&store)?;
            stored.as_ref()
        }
    };
    let device = args.open_device()?;
    let options = LearnerOptions {
        run: args.options(cache_dir(args, &location, "learner"), &device),
        poll: args.poll(),
        max_network_age: args.max_network_age(),
        max_games: args.max_games(),
        lease_ttl: args.lease_ttl(),
        terminate: Some(Terminate {
            signal: watch_signals()?,
            then: exit_on_signal,
        }),
    };
    tracing::info!(
        "learner of {location} (cache {}) on {}",
        options.run.dir.display(),
        match config {
            Some(config) => args.placement(config, &device),
            None => device.name.clone(),
        }
    );
    let mut observer = args.bars(config.map_or(0, |c| c.iterations));
    let learned = learner::learn(
        &store,
        config,
        &options,
        &mut observer,
        &mut crate::cmd::MatchEvaluation,
    );
    if let Err(RunError::LeaseHeld(why)) = &learned {
        // Not a failure of this process: another learner runs. A distinct status, so that
        // an orchestrator can tell "try later" from an error (deploy/README.md).
        observer.finish();
        eprintln!("error: learner of {location}: {why}");
        return Ok(ExitCode::from(LEASE_HELD));
    }
    let state = learned.with_context(|| format!("learner of {location}"))?;
    observer.finish();
    if let Some(config) = config {
        log_finished(&location.to_string(), config, &state);
    }
    Ok(ExitCode::SUCCESS)
}

/// Watches SIGTERM and SIGINT (Ctrl-C): the first sets the number returned (the learner
/// gives its lease up, then [`exit_on_signal`]); a second ends the process at once.
fn watch_signals() -> anyhow::Result<Arc<AtomicUsize>> {
    use tokio::signal::unix::{SignalKind, signal};
    let flag = Arc::new(AtomicUsize::new(0));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .context("signal handling")?;
    let (mut term, mut int) = {
        let _in = runtime.enter();
        (
            signal(SignalKind::terminate()).context("SIGTERM handler")?,
            signal(SignalKind::interrupt()).context("SIGINT handler")?,
        )
    };
    let seen = Arc::clone(&flag);
    std::thread::spawn(move || {
        runtime.block_on(async move {
            loop {
                let number = tokio::select! {
                    _ = term.recv() => 15,
                    _ = int.recv() => 2,
                };
                if seen.swap(number, Ordering::SeqCst) != 0 {
                    eprintln!("learner: signal {number} again: stopping now");
                    exit_by_signal(number);
                }
            }
        });
    });
    Ok(flag)
}

/// The learner's end on a signal, its lease given up.
fn exit_on_signal(number: usize) {
    eprintln!(
        "learner: stopped by signal {number}; its lease is given up, the iteration under way is redone by the next learner"
    );
    exit_by_signal(number);
}

/// Ends the process with status 128 + the signal's number, as a shell reports a process
/// the signal killed.
fn exit_by_signal(number: usize) -> ! {
    std::process::exit(128 + i32::try_from(number).unwrap_or(0));
}

/// `--role actor`.
pub fn actor(args: &Args, config: Option<&RunConfig>) -> anyhow::Result<ExitCode> {
    let Some(text) = args.run_text() else {
        anyhow::bail!("--role actor needs --run LOCATION (the learner's run)");
    };
    let location = Location::parse(text)?;
    let store = open(&location)?;
    let actor_id = match args.actor_id() {
        Some(id) => id.to_owned(),
        None => default_actor_id(),
    };
    let mut dir = cache_dir(args, &location, "actor");
    if args.cache().is_none() {
        dir.as_mut_os_string().push(format!("-{actor_id}"));
    }
    let device = args.open_device()?;
    let options = ActorOptions {
        run: args.options(dir, &device),
        actor_id: actor_id.clone(),
        max_chunks: args.chunks(),
        poll: args.poll(),
    };
    tracing::info!(
        "actor {actor_id} of {location} (cache {}) on {}",
        options.run.dir.display(),
        device.name
    );
    let mut observer = args.bars(0);
    let summary = actor::act(&store, config, &options, &mut observer)
        .with_context(|| format!("actor {actor_id} of {location}"))?;
    observer.finish();
    tracing::info!(
        "actor {actor_id}: {} chunks, {} games, {} positions uploaded in {:.0} s ({:.2} games/s)",
        summary.chunks,
        summary.games,
        summary.positions,
        summary.seconds,
        summary.games as f64 / summary.seconds.max(1e-9)
    );
    Ok(ExitCode::SUCCESS)
}

/// `HOST-XXXXXXXX`: the host name (letters, digits and `-` kept) and 32 random bits.
fn default_actor_id() -> String {
    let host = brandubh_train::remote::host_name();
    let random = brandubh_train::remote::random_u64() as u32;
    if host.is_empty() {
        format!("actor-{random:08x}")
    } else {
        format!("{host}-{random:08x}")
    }
}
