//! `brandubh serve`: a local web app to play trained agents and watch training runs.
//!
//! - a **Play page** (`/`): an SVG board, moves by click or drag, the agent's reply with
//!   its analysis, undo, two-game matches (RULES.md "Matches"), game records;
//! - a **Run page** (`/run?run=N`): learning curves, the Elo ladder, the checkpoints of a
//!   run directory, refreshed while `brandubh train` writes it;
//! - a JSON API under `/api/` that both pages use (see [`api`]).
//!
//! Everything the server may touch is fixed when it starts ([`ServeConfig`]): agent files
//! and run directories are referred to by index, checkpoints by the names the run lists.
//! No request names a file path. Request bodies are bounded ([`MAX_BODY_BYTES`]); searches
//! run on tokio's blocking pool, at most [`Limits::searches`] at once, each asked for at
//! most [`Limits::max_move_ms`] (or [`api::MAX_SIMS`] simulations); games idle for [`Limits::idle`] are dropped; at most
//! [`Limits::max_games`] are open. Errors are JSON `{"error": "..."}` with a status code.
//!
//! Who may ask is checked before any route ([`guard`]: the `Host` header against the bound
//! address and `--allow-host` names, the `Origin` of requests that change state, JSON
//! bodies only, security headers on every answer). The connections are bounded too
//! ([`serve`]): at most [`Limits::max_connections`] at once, each closed when a request's
//! header does not arrive within [`Limits::header_timeout`] (also the idle time between
//! requests) or its body within [`Limits::body_timeout`].
#![warn(missing_docs)]

pub mod agents;
pub mod api;
mod assets;
pub mod conns;
mod error;
pub mod games;
pub mod guard;
pub mod record;
pub mod runs;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub use error::ApiError;

/// Largest request body accepted, in bytes.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// The server's bounds.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Searches running at once (others wait up to `queue_wait`, then get 503).
    pub searches: usize,
    /// Longest wait for a search slot.
    pub queue_wait: Duration,
    /// Open games at most.
    pub max_games: usize,
    /// A game without a request for this long is dropped.
    pub idle: Duration,
    /// Fewest milliseconds a client may give the agent per move.
    pub min_move_ms: u64,
    /// Most milliseconds a client may give the agent per move.
    pub max_move_ms: u64,
    /// Thinking time when the client gives none.
    pub default_move_ms: u64,
    /// Connections at once; a new one closes the oldest that is not inside a request, or
    /// waits until one ends.
    pub max_connections: usize,
    /// Longest wait for a request's whole header, and for the next request on an idle
    /// connection: then the connection is closed.
    pub header_timeout: Duration,
    /// Longest wait for a request's whole body: then 408 and the connection is closed.
    pub body_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            searches: std::thread::available_parallelism().map_or(2, |n| n.get()),
            queue_wait: Duration::from_secs(60),
            max_games: 256,
            idle: Duration::from_secs(30 * 60),
            min_move_ms: 10,
            max_move_ms: 10_000,
            default_move_ms: 1_000,
            max_connections: 256,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(10),
        }
    }
}

/// What the server serves, fixed at start.
#[derive(Clone, Debug, Default)]
pub struct ServeConfig {
    /// Agent files, loaded at start (index 0 is the default opponent).
    pub agents: Vec<PathBuf>,
    /// Run directories.
    pub runs: Vec<PathBuf>,
    /// Host names the server answers to besides its address (and `localhost` on
    /// loopback): `--allow-host`.
    pub allow_hosts: Vec<String>,
    /// Bounds.
    pub limits: Limits,
}

/// The shared state of the app.
#[derive(Debug)]
pub struct AppState {
    agents: agents::Agents,
    runs: Vec<runs::RunSource>,
    games: games::Store,
    searcher: agents::Searcher,
    limits: Limits,
    allow_hosts: Vec<String>,
}

impl AppState {
    /// Loads the agents and checks the run directories; errors name the file.
    pub fn new(config: ServeConfig) -> Result<Arc<AppState>, String> {
        if config.agents.is_empty() && config.runs.is_empty() {
            return Err("nothing to serve: give at least one --agent FILE or --run DIR".into());
        }
        let l = &config.limits;
        if l.max_connections == 0 || l.header_timeout.is_zero() || l.body_timeout.is_zero() {
            return Err("max_connections, header_timeout and body_timeout must be above 0".into());
        }
        if let Some(bad) = config.allow_hosts.iter().find(|h| !guard::valid_name(h)) {
            return Err(format!(
                "--allow-host {:?}: not a host name (letters, digits, '-' and '.')",
                brandubh_fs::one_line(bad)
            ));
        }
        if l.min_move_ms == 0
            || l.min_move_ms > l.default_move_ms
            || l.default_move_ms > l.max_move_ms
        {
            return Err(format!(
                "move times must satisfy 0 < min {} <= default {} <= max {} ms",
                l.min_move_ms, l.default_move_ms, l.max_move_ms
            ));
        }
        let agents = agents::Agents::load(&config.agents)?;
        let runs = config
            .runs
            .iter()
            .map(|d| runs::RunSource::new(d))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Arc::new(AppState {
            agents,
            runs,
            games: games::Store::new(l.max_games, l.idle),
            searcher: agents::Searcher::new(l.searches, l.queue_wait),
            limits: config.limits,
            allow_hosts: config.allow_hosts,
        }))
    }

    /// Open games.
    #[must_use]
    pub fn open_games(&self) -> usize {
        self.games.len()
    }
}

/// Serves the app on `listener` until `shutdown` completes; drops idle games meanwhile.
///
/// HTTP/1.1 through hyper with a timer: a request header (or the next request on a kept
/// connection) that takes longer than [`Limits::header_timeout`] closes the connection; at
/// most [`Limits::max_connections`] are open at once ([`conns`]: a new one closes the
/// oldest that is not inside a request). On shutdown the connections finish their requests
/// (at most 10 s).
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: Arc<AppState>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let bound = listener.local_addr()?;
    let sweeper = {
        let state = Arc::clone(&state);
        let every =
            (state.limits.idle / 2).clamp(Duration::from_millis(100), Duration::from_secs(30));
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            loop {
                tick.tick().await;
                state.games.sweep();
            }
        })
    };
    let limits = state.limits.clone();
    let guard = guard::Guard::new(bound, &state.allow_hosts, &limits);
    let app = api::router(state, guard);
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .max_headers(64);
    let conns = Arc::new(conns::Tracker::new(limits.max_connections));
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of file descriptors or a connection reset before it was taken: the
                // server goes on (after a pause, so that a full table is not spun on).
                tracing::warn!("accepting a connection: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let slot = tokio::select! {
            slot = conns.slot() => slot,
            () = &mut shutdown => break,
        };
        let Some(slot) = slot else { break };
        let _ = stream.set_nodelay(true);
        let (id, busy) = conns.register();
        let service = conns::Tracked::new(app.clone(), busy);
        let conn = http.serve_connection(hyper_util::rt::TokioIo::new(stream), service);
        let mut stopped = stopped.clone();
        let tracker = Arc::clone(&conns);
        let task = tokio::spawn(async move {
            let _slot = slot;
            let mut conn = std::pin::pin!(conn);
            let finished = tokio::select! {
                _ = conn.as_mut() => true,
                _ = stopped.wait_for(|s| *s) => false,
            };
            if !finished {
                conn.as_mut().graceful_shutdown();
                let _ = conn.await;
            }
            tracker.forget(id);
        });
        conns.spawned(id, task.abort_handle());
    }
    drop(listener);
    let _ = stop.send(true);
    conns.drain(Duration::from_secs(10)).await;
    sweeper.abort();
    Ok(())
}

/// A server on its own thread and runtime, for tests, examples and benchmarks: bound to
/// `addr` (port 0: any free port), stopped when dropped.
#[derive(Debug)]
pub struct Running {
    /// The address it listens on.
    pub addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<std::io::Result<()>>>,
}

impl Running {
    /// Starts the app of `config` on `addr`.
    pub fn start(config: ServeConfig, addr: SocketAddr) -> Result<Running, String> {
        let state = AppState::new(config)?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| format!("starting the async runtime: {e}"))?;
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind(addr))
            .map_err(|e| format!("binding {addr}: {e}"))?;
        let addr = listener
            .local_addr()
            .map_err(|e| format!("binding {addr}: {e}"))?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            runtime.block_on(serve(listener, state, async {
                let _ = stopped.await;
            }))
        });
        Ok(Running {
            addr,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// `http://ADDR`.
    #[must_use]
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
