//! `brandubh serve [--agent FILE]... [--run DIR]... [--addr 127.0.0.1:8080]
//! [--allow-host NAME]...`: the web app of `brandubh-serve` (play agents, watch runs) on a
//! local address.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use brandubh_serve::{AppState, Limits, ServeConfig};

/// Serve the Play page (play the agents in a browser) and the Run page (watch training runs).
///
/// Agents and runs are fixed here; the browser picks among them by number and never names a
/// file. Binds to 127.0.0.1 unless --addr says otherwise.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[arg(
        long,
        value_name = "FILE",
        help = concat!(
            "An agent file to play against (repeatable; default: ",
            super::play::default_agent!(),
            " if present)."
        )
    )]
    agent: Vec<PathBuf>,
    /// A run directory to show on the Run page, its checkpoints playable (repeatable).
    #[arg(long, value_name = "DIR")]
    run: Vec<PathBuf>,
    /// Address to listen on (port 0: any free port). Anything but loopback exposes the
    /// server to the network.
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    /// A host name the server answers to besides its IP address (and localhost on loopback),
    /// e.g. a name it is reached by on the network or through a proxy (repeatable). Requests
    /// naming any other host are refused: a page on another site cannot reach the server by
    /// rebinding its own name to this address.
    #[arg(long, value_name = "NAME")]
    allow_host: Vec<String>,
    /// Connections open at once; a new one closes the oldest that is not inside a request
    /// (idle, silent, or still sending its header), or waits until one ends.
    #[arg(long, value_name = "N", default_value_t = 256,
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    max_connections: u32,
    /// Searches at once (default: the number of cores).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=256))]
    searches: Option<u32>,
    /// Most thinking time a client may ask per agent move, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 10_000,
          value_parser = clap::value_parser!(u64).range(10..=600_000))]
    max_move_ms: u64,
    /// Open games at most.
    #[arg(long, value_name = "N", default_value_t = 256,
          value_parser = clap::value_parser!(u32).range(1..=100_000))]
    max_games: u32,
    /// Minutes without a request after which a game is dropped.
    #[arg(long, value_name = "MIN", default_value_t = 30,
          value_parser = clap::value_parser!(u64).range(1..=10_000))]
    idle_minutes: u64,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut agents = args.agent.clone();
    if agents.is_empty() {
        if let Ok(p) = super::play::agent_path(None) {
            agents.push(p);
        } else if args.run.is_empty() {
            bail!(
                "nothing to serve: no --agent FILE, no --run DIR, and no shipped model at {}",
                super::play::DEFAULT_AGENT
            );
        }
    }
    let mut limits = Limits {
        max_move_ms: args.max_move_ms,
        max_games: args.max_games as usize,
        idle: Duration::from_secs(args.idle_minutes * 60),
        max_connections: args.max_connections as usize,
        ..Limits::default()
    };
    limits.default_move_ms = limits.default_move_ms.min(limits.max_move_ms);
    if let Some(n) = args.searches {
        limits.searches = n as usize;
    }
    let state = AppState::new(ServeConfig {
        agents,
        runs: args.run,
        allow_hosts: args.allow_host.clone(),
        limits,
    })
    .map_err(anyhow::Error::msg)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(args.addr)
            .await
            .with_context(|| format!("--addr {}", args.addr))?;
        let addr = listener.local_addr().context("the bound address")?;
        let reach = if addr.ip().is_loopback() {
            "bound to loopback: only this machine can connect".to_owned()
        } else {
            format!("bound to {}: other machines can connect", addr.ip())
        };
        println!("brandubh serve: open http://{addr}/ ({reach}; Ctrl-C stops)");
        if !args.allow_host.is_empty() {
            println!(
                "brandubh serve: also answers to the host name(s) {}",
                args.allow_host.join(", ")
            );
        }
        brandubh_serve::serve(listener, state, async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .context("serving")
    })?;
    Ok(ExitCode::SUCCESS)
}
