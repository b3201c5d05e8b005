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
#![warn(missing_docs)]

pub mod agents;
pub mod api;
mod assets;
mod error;
pub mod games;
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
}

impl AppState {
    /// Loads the agents and checks the run directories; errors name the file.
    pub fn new(config: ServeConfig) -> Result<Arc<AppState>, String> {
        if config.agents.is_empty() && config.runs.is_empty() {
            return Err("nothing to serve: give at least one --agent FILE or --run DIR".into());
        }
        let l = &config.limits;
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
        }))
    }

    /// Open games.
    #[must_use]
    pub fn open_games(&self) -> usize {
        self.games.len()
    }
}

/// Serves the app on `listener` until `shutdown` completes; drops idle games meanwhile.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: Arc<AppState>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
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
    let app = api::router(state);
    let result = axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await;
    sweeper.abort();
    result
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
