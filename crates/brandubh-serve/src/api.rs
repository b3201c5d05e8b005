//! The HTTP routes: the JSON API under `/api/`, the pages and their assets.
//!
//! Every request body is read through [`body_json`]: at most [`crate::MAX_BODY_BYTES`]
//! bytes of well-formed JSON with exactly the fields of its request type. Positions and
//! moves go only through the rules crate's parsers and `Game::play`. Every error is an
//! [`ApiError`]: JSON `{"error": "..."}` with a status code.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use brandubh_rules::{Game, Move, Position, Side};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::agents::{AgentRef, Searcher};
use crate::assets;
use crate::error::ApiError;
use crate::games::{AnalysisView, MatchPlay, Session};
use crate::guard::Guard;
use crate::record::parse_record;
use crate::{AppState, Limits, MAX_BODY_BYTES};

type Shared = Arc<AppState>;

/// Most simulations per move a client may ask for.
pub const MAX_SIMS: u32 = 20_000;
type ApiResult = Result<Response, ApiError>;

/// The router of the whole app, every request through `guard` first.
pub fn router(state: Shared, guard: Guard) -> Router {
    Router::new()
        .route("/", get(assets::play_page))
        .route("/run", get(assets::run_page))
        .route("/assets/{name}", get(assets::asset))
        .route("/api/info", get(info))
        .route("/api/games", post(create_game))
        .route("/api/games/{id}", get(show_game).delete(close_game))
        .route("/api/games/{id}/move", post(human_move))
        .route("/api/games/{id}/reply", post(agent_reply))
        .route("/api/games/{id}/analyze", post(analyze))
        .route("/api/games/{id}/undo", post(undo))
        .route("/api/games/{id}/stop", post(stop))
        .route("/api/games/{id}/next", post(next_game))
        .route("/api/runs/{run}", get(run_snapshot))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(axum::middleware::from_fn_with_state(
            Arc::new(guard),
            crate::guard::check,
        ))
        .with_state(state)
}

async fn not_found() -> ApiError {
    ApiError::not_found("no such page or API route")
}

async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "this route does not take that method",
    )
}

/// A JSON request body: bounded, well-formed, exactly the fields of `T`.
fn body_json<T: DeserializeOwned>(body: Result<Bytes, BytesRejection>) -> Result<T, ApiError> {
    let bytes = body.map_err(|e| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("request body too large: at most {MAX_BODY_BYTES} bytes"),
            )
        } else {
            ApiError::new(e.status(), format!("request body: {}", e.body_text()))
        }
    })?;
    let bytes: &[u8] = if bytes.iter().all(u8::is_ascii_whitespace) {
        b"{}"
    } else {
        &bytes
    };
    serde_json::from_slice(bytes).map_err(|e| ApiError::bad_request(format!("bad JSON body: {e}")))
}

fn json_response(value: impl serde::Serialize) -> ApiResult {
    Ok(axum::Json(value).into_response())
}

async fn info(State(state): State<Shared>) -> ApiResult {
    let agents: Vec<Value> = state
        .agents
        .files()
        .iter()
        .enumerate()
        .map(|(i, a)| json!({"index": i, "name": a.name(), "summary": a.meta().summary()}))
        .collect();
    let runs: Vec<Value> = state
        .runs
        .iter()
        .enumerate()
        .map(|(i, r)| json!({"index": i, "name": r.name}))
        .collect();
    let l = &state.limits;
    json_response(json!({
        "version": env!("CARGO_PKG_VERSION"),
        "open_games": state.games.len(),
        "rules": brandubh_agent::RULES_NAME,
        "agents": agents,
        "runs": runs,
        "limits": {
            "min_move_ms": l.min_move_ms,
            "max_move_ms": l.max_move_ms,
            "default_move_ms": l.default_move_ms,
            "max_games": l.max_games,
            "searches": l.searches,
            "idle_s": l.idle.as_secs(),
            "max_body_bytes": MAX_BODY_BYTES,
        },
    }))
}

/// `POST /api/games`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NewGame {
    /// Index of an `--agent` file (default 0) ...
    agent: Option<usize>,
    /// ... or a run's index with `checkpoint`, the name of one of its checkpoints.
    run: Option<usize>,
    checkpoint: Option<String>,
    /// The person's side: "white" (default) or "black".
    side: Option<String>,
    /// The agent's time per move in milliseconds ...
    move_ms: Option<u64>,
    /// ... or its simulations per move (a fixed amount of work: reproducible analysis).
    sims: Option<u32>,
    /// A two-game match (sides swapped for game 2).
    #[serde(rename = "match", default)]
    match_mode: bool,
    /// A start position in RULES.md notation ...
    position: Option<String>,
    /// ... or a game record (see `record`) to continue.
    record: Option<String>,
    /// Seed of the agent's searches (default: fresh).
    seed: Option<u64>,
}

impl NewGame {
    /// The agent asked for: an `--agent` file, or a run's checkpoint.
    fn agent_ref(&self) -> Result<AgentRef, ApiError> {
        match (self.agent, self.run, &self.checkpoint) {
            (Some(_), Some(_), _) => Err(ApiError::bad_request(
                "give either agent or run with checkpoint, not both",
            )),
            (_, Some(run), Some(name)) => Ok(AgentRef::Checkpoint {
                run,
                name: name.clone(),
            }),
            (_, Some(_), None) => Err(ApiError::bad_request(
                "run needs checkpoint (a checkpoint's name)",
            )),
            (_, None, Some(_)) => Err(ApiError::bad_request("checkpoint needs run")),
            (a, None, None) => Ok(AgentRef::File(a.unwrap_or(0))),
        }
    }

    /// The person's side.
    fn human(&self) -> Result<Side, ApiError> {
        match self.side.as_deref() {
            None | Some("white") => Ok(Side::White),
            Some("black") => Ok(Side::Black),
            Some(other) => Err(ApiError::bad_request(format!(
                "side must be \"white\" or \"black\", not {:?}",
                brandubh_fs::one_line(other)
            ))),
        }
    }

    /// The agent's time per move within the server's limits; `sims`, when given instead,
    /// within 1 to [`MAX_SIMS`].
    fn move_ms(&self, l: &Limits) -> Result<u64, ApiError> {
        let move_ms = self.move_ms.unwrap_or(l.default_move_ms);
        if !(l.min_move_ms..=l.max_move_ms).contains(&move_ms) {
            return Err(ApiError::bad_request(format!(
                "move_ms {move_ms} is out of range: {} to {} milliseconds",
                l.min_move_ms, l.max_move_ms
            )));
        }
        if let Some(n) = self.sims {
            if self.move_ms.is_some() {
                return Err(ApiError::bad_request(
                    "give either move_ms or sims, not both",
                ));
            }
            if !(1..=MAX_SIMS).contains(&n) {
                return Err(ApiError::bad_request(format!(
                    "sims {n} is out of range: 1 to {MAX_SIMS} simulations"
                )));
            }
        }
        Ok(move_ms)
    }

    /// The game to start from: a position, a record to continue, or the start; a match
    /// only from an unfinished position.
    fn game(&self) -> Result<Game, ApiError> {
        let game = match (&self.position, &self.record) {
            (Some(_), Some(_)) => {
                return Err(ApiError::bad_request(
                    "give either position or record, not both",
                ));
            }
            (Some(p), None) => Game::new(
                p.parse::<Position>()
                    .map_err(|e| ApiError::bad_request(e.to_string()))?,
            ),
            (None, Some(r)) => parse_record(r).map_err(ApiError::bad_request)?,
            (None, None) => Game::default(),
        };
        if self.match_mode && game.ply() > 0 {
            return Err(ApiError::bad_request(
                "a match starts from a position, not from a game in progress",
            ));
        }
        if self.match_mode && game.is_over() {
            return Err(ApiError::bad_request(
                "a match cannot start from a finished position",
            ));
        }
        Ok(game)
    }
}

/// Checks the request (in the order its fields are documented), loads the agent and opens
/// the session.
async fn create_game(
    State(state): State<Shared>,
    body: Result<Bytes, BytesRejection>,
) -> ApiResult {
    let req: NewGame = body_json(body)?;
    let agent_ref = req.agent_ref()?;
    let human = req.human()?;
    let move_ms = req.move_ms(&state.limits)?;
    let game = req.game()?;
    let st = Arc::clone(&state);
    let r = agent_ref.clone();
    let (agent, agent_name) = Searcher::blocking(move || st.agents.get(&r, &st.runs)).await??;
    let session = Session {
        id: String::new(),
        agent_ref,
        agent_name,
        agent,
        human,
        move_ms,
        sims: req.sims,
        seed: req.seed.unwrap_or_else(brandubh_eval::fresh_seed),
        game,
        thinking: false,
        halt: None,
        version: 0,
        last_used: Instant::now(),
        analysis: None,
        match_play: req.match_mode.then_some(MatchPlay {
            number: 1,
            first: None,
            second: None,
        }),
    };
    let session = state.games.insert(session)?;
    let view = lock(&session).view();
    Ok((StatusCode::CREATED, axum::Json(view)).into_response())
}

fn lock(s: &Mutex<Session>) -> std::sync::MutexGuard<'_, Session> {
    s.lock().unwrap_or_else(|p| p.into_inner())
}

async fn show_game(State(state): State<Shared>, Path(id): Path<String>) -> ApiResult {
    let session = state.games.get(&id)?;
    let mut s = lock(&session);
    s.last_used = Instant::now();
    json_response(s.view())
}

async fn close_game(State(state): State<Shared>, Path(id): Path<String>) -> ApiResult {
    state.games.remove(&id)?;
    json_response(json!({"closed": id}))
}

/// `POST /api/games/{id}/move`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MoveRequest {
    #[serde(rename = "move")]
    mv: String,
}

async fn human_move(
    State(state): State<Shared>,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> ApiResult {
    let session = state.games.get(&id)?;
    let req: MoveRequest = body_json(body)?;
    let mv: Move = req
        .mv
        .parse()
        .map_err(|e: brandubh_rules::ParseMoveError| ApiError::bad_request(e.to_string()))?;
    let mut s = lock(&session);
    if s.thinking {
        return Err(ApiError::conflict(
            "the agent is thinking; wait for its move",
        ));
    }
    if !s.game.is_over() && s.game.side_to_move() != s.human {
        return Err(ApiError::conflict("it is the agent's turn, not yours"));
    }
    // The rules say why a move is illegal (game over included), as `brandubh play` does.
    s.game
        .play(mv)
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    s.analysis = None;
    s.touch();
    s.note_game_end();
    json_response(s.view())
}

/// The agent plays its move. The search and what follows it run as a task of their own:
/// a client that goes away (a reloaded page) leaves a session that finishes thinking and
/// plays, which the page finds when it comes back, never one stuck "thinking".
async fn agent_reply(State(state): State<Shared>, Path(id): Path<String>) -> ApiResult {
    let session = state.games.get(&id)?;
    let (agent, game, budget, seed, version, halt) = {
        let mut s = lock(&session);
        if s.thinking {
            return Err(ApiError::conflict("the agent is already thinking"));
        }
        if s.game.is_over() {
            return Err(ApiError::conflict("the game is over"));
        }
        if s.game.side_to_move() == s.human {
            return Err(ApiError::conflict("it is your turn, not the agent's"));
        }
        s.thinking = true;
        s.touch();
        let halt = Arc::new(AtomicBool::new(false));
        s.halt = Some(Arc::clone(&halt));
        (
            Arc::clone(&s.agent),
            s.game.clone(),
            s.budget(),
            s.seed.wrapping_add(s.game.ply() as u64),
            s.version,
            halt,
        )
    };
    let st = Arc::clone(&state);
    tokio::spawn(async move {
        let result = st
            .searcher
            .analyze(agent, game.clone(), budget, seed, Some(halt))
            .await;
        play_reply(&session, result, &game, version)
    })
    .await
    .map_err(|e| ApiError::internal(format!("the agent's move failed: {e}")))?
}

/// Plays the searched move, unless the game changed meanwhile (an undo or a new game
/// cancelled the think: then the move is dropped and the session is left as it is).
fn play_reply(
    session: &Mutex<Session>,
    result: Result<brandubh_agent::Analysis, ApiError>,
    game: &Game,
    version: u64,
) -> ApiResult {
    let mut s = lock(session);
    if s.version != version {
        return Err(ApiError::conflict(
            "the game changed while the agent was thinking: its move was dropped",
        ));
    }
    s.thinking = false;
    s.halt = None;
    let analysis = result?;
    let view = AnalysisView::new(&analysis, game);
    s.game
        .play(analysis.best_move)
        .map_err(|e| ApiError::internal(format!("the agent chose an illegal move: {e}")))?;
    s.analysis = Some(view);
    s.touch();
    s.note_game_end();
    json_response(s.view())
}

/// The agent's view of the current position, without playing.
async fn analyze(State(state): State<Shared>, Path(id): Path<String>) -> ApiResult {
    let session = state.games.get(&id)?;
    let (agent, game, budget, seed) = {
        let mut s = lock(&session);
        if s.game.is_over() {
            return Err(ApiError::conflict("the game is over: nothing to analyse"));
        }
        if s.thinking {
            return Err(ApiError::conflict(
                "the agent is thinking; ask after its move",
            ));
        }
        s.last_used = Instant::now();
        (
            Arc::clone(&s.agent),
            s.game.clone(),
            s.budget(),
            s.seed.wrapping_add(s.game.ply() as u64),
        )
    };
    let analysis = state
        .searcher
        .analyze(agent, game.clone(), budget, seed, None)
        .await?;
    let view = AnalysisView::new(&analysis, &game);
    let mut s = lock(&session);
    if s.game == game {
        s.analysis = Some(view.clone());
    }
    json_response(json!({ "analysis": view }))
}

async fn undo(State(state): State<Shared>, Path(id): Path<String>) -> ApiResult {
    let session = state.games.get(&id)?;
    let mut s = lock(&session);
    s.undo()?;
    json_response(s.view())
}

/// "Move now": the agent's search under way ends at once and its best move so far is
/// played (the reply request answers with it).
async fn stop(State(state): State<Shared>, Path(id): Path<String>) -> ApiResult {
    let session = state.games.get(&id)?;
    let s = lock(&session);
    if !s.thinking {
        return Err(ApiError::conflict("the agent is not thinking"));
    }
    s.halt_search();
    json_response(s.view())
}

async fn next_game(State(state): State<Shared>, Path(id): Path<String>) -> ApiResult {
    let session = state.games.get(&id)?;
    let mut s = lock(&session);
    s.next_game()?;
    json_response(s.view())
}

async fn run_snapshot(State(state): State<Shared>, Path(run): Path<String>) -> ApiResult {
    let index: usize = run
        .parse()
        .ok()
        .filter(|&i| i < state.runs.len())
        .ok_or_else(|| {
            ApiError::not_found(format!(
                "unknown run {:?}: the server has {} run(s), numbered from 0",
                brandubh_fs::one_line(&run.chars().take(40).collect::<String>()),
                state.runs.len()
            ))
        })?;
    let st = Arc::clone(&state);
    let snapshot = Searcher::blocking(move || st.runs[index].snapshot()).await?;
    Ok(([(header::CACHE_CONTROL, "no-store")], axum::Json(snapshot)).into_response())
}
