//! Game sessions: one person against one agent, a single game or a two-game match
//! (RULES.md "Matches": sides swapped, scored by `brandubh_eval::score_match`), held in a
//! bounded store under ids the server generates, dropped when idle.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use brandubh_agent::{Agent, Analysis};
use brandubh_eval::{Contestant, MatchGame, MatchResult, score_match};
use brandubh_rules::{Bitboard, Game, Piece, Position, Reason, Side, Square};
use serde::Serialize;

use crate::agents::AgentRef;
use crate::error::ApiError;
use crate::record::write_record;

/// Top moves an analysis reports.
pub const TOP_MOVES: usize = 5;

/// One person's game (or match) against an agent.
#[derive(Debug)]
pub struct Session {
    /// The id the server gave it.
    pub id: String,
    /// The agent played against.
    pub agent_ref: AgentRef,
    /// Its label.
    pub agent_name: String,
    /// The agent.
    pub agent: Arc<Agent>,
    /// The side the person plays (in the current game of a match).
    pub human: Side,
    /// The agent's thinking time per move.
    pub move_ms: u64,
    /// Simulations per move instead of a time, if asked for.
    pub sims: Option<u32>,
    /// Seed of the agent's searches (each search adds the ply).
    pub seed: u64,
    /// The game.
    pub game: Game,
    /// A search for the agent's move is running.
    pub thinking: bool,
    /// Ends that search now when set (its best move so far is played, or dropped when the
    /// think was abandoned).
    pub halt: Option<Arc<AtomicBool>>,
    /// Bumped on every change, so a search result for an older state is dropped.
    pub version: u64,
    /// Last request.
    pub last_used: Instant,
    /// The agent's last analysis (of its reply or of a hint).
    pub analysis: Option<AnalysisView>,
    /// Set in match mode.
    pub match_play: Option<MatchPlay>,
}

/// A two-game match: the person is contestant A (their side in game 1 is `first_side`).
#[derive(Clone, Debug)]
pub struct MatchPlay {
    /// 1 or 2.
    pub number: u8,
    /// The first game's result, once it is over.
    pub first: Option<MatchGame>,
    /// The second game's, once over.
    pub second: Option<MatchGame>,
}

/// An analysis as the page shows it.
#[derive(Clone, Debug, Serialize)]
pub struct AnalysisView {
    /// Ply of the analysed position.
    pub ply: usize,
    /// Side to move there (whose value `value` is).
    pub side: &'static str,
    /// The search's value for the side to move, in [-1, 1].
    pub value: f32,
    /// The network's own value.
    pub net_value: f32,
    /// Simulations run.
    pub simulations: u32,
    /// Milliseconds the search took.
    pub elapsed_ms: u64,
    /// The move the agent plays (or suggests).
    pub best: String,
    /// The top moves: the best first, then by visits.
    pub top: Vec<TopMove>,
}

/// One of an analysis's top moves.
#[derive(Clone, Debug, Serialize)]
pub struct TopMove {
    /// The move.
    #[serde(rename = "move")]
    pub mv: String,
    /// Simulations through it.
    pub visits: u32,
    /// The network's prior.
    pub prior: f32,
    /// Mean value for the side to move, if visited.
    pub q: Option<f32>,
}

impl AnalysisView {
    /// The view of `a`, a search of `game`'s current position.
    #[must_use]
    pub fn new(a: &Analysis, game: &Game) -> AnalysisView {
        AnalysisView {
            ply: game.ply(),
            side: side_name(game.side_to_move()),
            value: a.value,
            net_value: a.net_value,
            simulations: a.simulations,
            elapsed_ms: a.elapsed.as_millis() as u64,
            best: a.best_move.to_string(),
            top: a
                .moves
                .iter()
                .take(TOP_MOVES)
                .map(|m| TopMove {
                    mv: m.mv.to_string(),
                    visits: m.visits,
                    prior: m.prior,
                    q: m.q,
                })
                .collect(),
        }
    }
}

/// The state of a session, as every game request answers it.
#[derive(Clone, Debug, Serialize)]
pub struct GameView {
    id: String,
    agent: String,
    /// The agent as the page's menu names it: `a:INDEX` or `c:RUN:CHECKPOINT`.
    agent_key: String,
    human: &'static str,
    move_ms: u64,
    start: String,
    position: String,
    /// 49 letters, index `rank * 7 + file` (a1 = 0): `A`, `D`, `K` or `.`.
    board: String,
    side_to_move: &'static str,
    ply: usize,
    moves: Vec<String>,
    /// Legal moves of the person when it is their turn, else empty.
    legal: Vec<String>,
    last_move: Option<String>,
    /// Squares emptied by the last move's captures (the King's, if captured, included).
    captured: Vec<String>,
    /// Squares emptied by the captures of the move before it.
    captured_before: Vec<String>,
    your_turn: bool,
    thinking: bool,
    outcome: Option<OutcomeView>,
    analysis: Option<AnalysisView>,
    #[serde(rename = "match")]
    match_view: Option<MatchView>,
    record: String,
}

#[derive(Clone, Debug, Serialize)]
struct OutcomeView {
    winner: &'static str,
    /// Whether the person won.
    you_won: bool,
    reason: &'static str,
    rule: &'static str,
    /// E.g. "You win: the King escaped to a corner (rule 8.1) after 31 plies.", or "You
    /// lose: brandubh-v5 wins, ..."
    text: String,
}

#[derive(Clone, Debug, Serialize)]
struct MatchView {
    number: u8,
    games: Vec<String>,
    /// Set once both games are over.
    result: Option<String>,
}

impl Session {
    /// The person's turn in an unfinished game.
    #[must_use]
    pub fn your_turn(&self) -> bool {
        !self.game.is_over() && self.game.side_to_move() == self.human && !self.thinking
    }

    /// The agent's budget per move: its simulations if fixed, else its time.
    #[must_use]
    pub fn budget(&self) -> brandubh_agent::Budget {
        match self.sims {
            Some(n) => brandubh_agent::Budget::Simulations(n),
            None => brandubh_agent::Budget::Time(Duration::from_millis(self.move_ms)),
        }
    }

    /// Marks a change.
    pub fn touch(&mut self) {
        self.version += 1;
        self.last_used = Instant::now();
    }

    /// Abandons the think under way, if any: its search stops at once and its move is
    /// dropped when it comes (the version changes with the change that abandons it).
    pub fn abandon_think(&mut self) {
        self.halt_search();
        self.thinking = false;
    }

    /// Tells the search under way, if any, to end now.
    pub fn halt_search(&self) {
        if let Some(halt) = &self.halt {
            halt.store(true, Ordering::Relaxed);
        }
    }

    /// Records the end of the current game of a match.
    pub fn note_game_end(&mut self) {
        let Some(outcome) = self.game.outcome() else {
            return;
        };
        let human = self.human;
        let Some(m) = self.match_play.as_mut() else {
            return;
        };
        let white = if human == Side::White {
            Contestant::A
        } else {
            Contestant::B
        };
        let winner = if outcome.winner == human {
            Contestant::A
        } else {
            Contestant::B
        };
        let record = MatchGame::won(white, winner, outcome.reason, self.game.ply() as u32);
        if m.number == 1 {
            m.first.get_or_insert(record);
        } else {
            m.second.get_or_insert(record);
        }
    }

    /// Starts game 2 of a match: sides swapped, from the same start.
    pub fn next_game(&mut self) -> Result<(), ApiError> {
        let Some(m) = self.match_play.as_mut() else {
            return Err(ApiError::conflict("this game is not part of a match"));
        };
        if m.number != 1 || m.first.is_none() {
            return Err(ApiError::conflict(
                "the second game starts once the first is over, and a match has two games",
            ));
        }
        m.number = 2;
        self.human = self.human.opponent();
        self.game = Game::new(*self.game.start());
        self.analysis = None;
        self.touch();
        Ok(())
    }

    /// Takes back the person's last move and the agent's replies after it; while the agent
    /// thinks about its reply, the think is abandoned (its move is dropped when it comes).
    pub fn undo(&mut self) -> Result<(), ApiError> {
        if self.match_play.is_some() {
            return Err(ApiError::conflict("moves cannot be taken back in a match"));
        }
        // The person's last move: the last ply played with them to move.
        let positions = self.game.positions();
        let Some(last) = (0..self.game.ply())
            .rev()
            .find(|&i| positions[i].side_to_move() == self.human)
        else {
            return Err(ApiError::conflict(
                "nothing to undo: you have not moved yet",
            ));
        };
        while self.game.ply() > last {
            self.game.undo();
        }
        self.abandon_think();
        self.analysis = None;
        self.touch();
        Ok(())
    }

    /// The view every game request answers with.
    #[must_use]
    pub fn view(&self) -> GameView {
        let game = &self.game;
        let legal = if self.your_turn() {
            let mut v: Vec<String> = game.legal_moves().iter().map(ToString::to_string).collect();
            v.sort();
            v
        } else {
            Vec::new()
        };
        let mut header = vec![format!(
            "White: {}, Black: {}",
            self.player_name(Side::White),
            self.player_name(Side::Black)
        )];
        if let Some(m) = &self.match_play {
            header.push(format!("game {} of a two-game match", m.number));
        }
        GameView {
            id: self.id.clone(),
            agent: self.agent_name.clone(),
            agent_key: self.agent_ref.key(),
            human: side_name(self.human),
            move_ms: self.move_ms,
            start: game.start().to_string(),
            position: game.position().to_string(),
            board: board_letters(game.position()),
            side_to_move: side_name(game.side_to_move()),
            ply: game.ply(),
            moves: game.moves().iter().map(ToString::to_string).collect(),
            legal,
            last_move: game.moves().last().map(ToString::to_string),
            captured: captured(game, game.ply()).map(|s| s.to_string()).collect(),
            captured_before: captured(game, game.ply().saturating_sub(1))
                .map(|s| s.to_string())
                .collect(),
            your_turn: self.your_turn(),
            thinking: self.thinking,
            outcome: game.outcome().map(|o| OutcomeView {
                winner: side_name(o.winner),
                you_won: o.winner == self.human,
                reason: o.reason.name(),
                rule: o.reason.rule(),
                text: format!(
                    "{}: {} (rule {}) after {} plies.",
                    if o.winner == self.human {
                        "You win".to_owned()
                    } else {
                        format!("You lose, {} wins", self.agent_name)
                    },
                    o.reason,
                    o.reason.rule(),
                    game.ply()
                ),
            }),
            analysis: self.analysis.clone(),
            match_view: self.match_play.as_ref().map(|m| self.match_view(m)),
            record: write_record(game, &header),
        }
    }

    fn player_name(&self, side: Side) -> &str {
        if side == self.human {
            "you"
        } else {
            &self.agent_name
        }
    }

    fn match_view(&self, m: &MatchPlay) -> MatchView {
        let describe = |n: u8, r: &MatchGame| {
            let you = if r.white == Contestant::A {
                "White"
            } else {
                "Black"
            };
            let who = if r.winner == Some(Contestant::A) {
                "you won".to_owned()
            } else {
                format!("{} won", self.agent_name)
            };
            format!("game {n} (you {you}): {who} in {} plies", r.plies)
        };
        let mut games = Vec::new();
        if let Some(r) = &m.first {
            games.push(describe(1, r));
        }
        if let Some(r) = &m.second {
            games.push(describe(2, r));
        }
        let result = match (&m.first, &m.second) {
            (Some(a), Some(b)) => Some(self.match_result(a, b)),
            _ => None,
        };
        MatchView {
            number: m.number,
            games,
            result,
        }
    }

    fn match_result(&self, a: &MatchGame, b: &MatchGame) -> String {
        let result = score_match(a, b);
        let split = a.winner != b.winner;
        let who = match result {
            MatchResult::AWins => "You win the match".to_owned(),
            MatchResult::BWins => format!("{} wins the match", self.agent_name),
            MatchResult::Draw => "The match is drawn".to_owned(),
        };
        if !split {
            return format!("{who}: both games won by the same player.");
        }
        let (yours, theirs) = if a.winner == Some(Contestant::A) {
            (a.plies, b.plies)
        } else {
            (b.plies, a.plies)
        };
        format!(
            "{who}: one win each, and the win in fewer plies takes the match (yours {yours}, \
             the agent's {theirs}; RULES.md \"Matches\")."
        )
    }
}

/// `white` or `black`.
#[must_use]
pub fn side_name(side: Side) -> &'static str {
    match side {
        Side::White => "white",
        Side::Black => "black",
    }
}

fn board_letters(p: &Position) -> String {
    Square::all()
        .map(|sq| p.piece_at(sq).map_or('.', Piece::letter))
        .collect()
}

/// Squares the captures of ply `n` (the move into position `n`) emptied; the captured
/// King's square included when that move ended the game.
fn captured(game: &Game, n: usize) -> impl Iterator<Item = Square> {
    let mut gone = Bitboard::EMPTY;
    if n > 0 && n <= game.ply() {
        let before = game.positions()[n - 1];
        let after = game.positions()[n];
        gone = (before.attackers() | before.defenders()) & !(after.attackers() | after.defenders());
        gone = gone.without(game.moves()[n - 1].from);
        if n == game.ply()
            && game
                .outcome()
                .is_some_and(|o| o.reason == Reason::KingCaptured)
        {
            gone = gone.with(after.king());
        }
    }
    gone
}

/// The sessions, bounded in number, dropped after `idle` without a request.
#[derive(Debug)]
pub struct Store {
    sessions: Mutex<HashMap<String, Arc<Mutex<Session>>>>,
    max: usize,
    idle: Duration,
}

impl Store {
    /// A store of at most `max` sessions, each dropped after `idle` without a request.
    #[must_use]
    pub fn new(max: usize, idle: Duration) -> Store {
        Store {
            sessions: Mutex::new(HashMap::new()),
            max: max.max(1),
            idle,
        }
    }

    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Mutex<Session>>>> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds a session under a fresh id (set into it); 503 when the store is full.
    pub fn insert(&self, mut session: Session) -> Result<Arc<Mutex<Session>>, ApiError> {
        self.sweep();
        let mut map = self.map();
        if map.len() >= self.max {
            return Err(ApiError::busy(format!(
                "too many open games ({}); close one or wait until idle games are dropped",
                self.max
            )));
        }
        let id = loop {
            let id = format!("{:032x}", fresh_id());
            if !map.contains_key(&id) {
                break id;
            }
        };
        session.id.clone_from(&id);
        let session = Arc::new(Mutex::new(session));
        map.insert(id, Arc::clone(&session));
        Ok(session)
    }

    /// The session `id`; 404 when unknown (never created, closed or dropped when idle).
    pub fn get(&self, id: &str) -> Result<Arc<Mutex<Session>>, ApiError> {
        self.map().get(id).cloned().ok_or_else(|| {
            ApiError::not_found(format!(
                "unknown game id {:?}: it was never created, was closed, or was dropped after {} s idle",
                brandubh_fs::one_line(&id.chars().take(64).collect::<String>()),
                self.idle.as_secs()
            ))
        })
    }

    /// Closes the session `id`, abandoning its think.
    pub fn remove(&self, id: &str) -> Result<(), ApiError> {
        let session = self.get(id)?;
        self.map().remove(id);
        session
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .abandon_think();
        Ok(())
    }

    /// Drops the sessions idle for longer than the limit; returns how many are left.
    pub fn sweep(&self) -> usize {
        let mut map = self.map();
        map.retain(|_, s| {
            // A session in use right now is not idle.
            match s.try_lock() {
                Ok(s) => s.thinking || s.last_used.elapsed() <= self.idle,
                Err(_) => true,
            }
        });
        map.len()
    }

    /// Open sessions.
    #[must_use]
    pub fn len(&self) -> usize {
        self.map().len()
    }

    /// Whether none is open.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// 128 bits no client can guess: std's randomly keyed SipHash over a counter and the time.
fn fresh_id() -> u128 {
    use std::collections::hash_map::RandomState;
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let half = |salt: u64| {
        let mut h = RandomState::new().build_hasher();
        h.write_u64(n);
        h.write_u128(t);
        h.write_u64(salt);
        h.finish()
    };
    (u128::from(half(1)) << 64) | u128::from(half(2))
}
