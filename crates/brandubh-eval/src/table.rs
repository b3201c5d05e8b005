//! Batched match play: each worker thread keeps several games of a series going at once
//! (its "tables") and advances the searches of every network player with one evaluator
//! call per contestant and round ([`brandubh_search::Batcher`], as self-play does), instead
//! of one network call per leaf. Players without a network (random, greedy, alpha-beta,
//! rollout MCTS) choose by themselves as before. A game's moves are exactly those of
//! [`crate::game::play_match_game`]: the same seeded players, the same searches.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use brandubh_rules::{Game, Side};
use brandubh_search::{Batcher, Evaluator, Player, Search};

use crate::agent::PlayerFactory;
use crate::error::EvalError;
use crate::game::{PlayedGame, player_seed};
use crate::openings::Opening;
use crate::scoring::Contestant;

/// Games a worker keeps in flight: enough to batch, few enough to keep memory small.
pub(crate) const TABLES_PER_WORKER: usize = 16;

/// One game of a series: match `m` (0-based within the series) and game 0 or 1.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GameTask {
    pub m: usize,
    pub game: u32,
}

/// What a worker needs to know about the series.
pub(crate) struct Series<'a> {
    pub a: &'a dyn PlayerFactory,
    pub b: &'a dyn PlayerFactory,
    pub openings: &'a [Opening],
    pub first_match: usize,
    pub seed: u64,
    pub ply_cap: u32,
}

/// A game in progress.
struct Table {
    task: GameTask,
    game: Game,
    /// A's and B's players.
    players: [Box<dyn Player + Send>; 2],
    white_is: Contestant,
    /// Whether the side to move's search is running (its turn is begun).
    searching: bool,
}

/// A failure: who failed, at which ply, why.
type Failure = (Contestant, usize, String);

impl Table {
    fn mover(&self) -> Contestant {
        match self.game.side_to_move() {
            Side::White => self.white_is,
            Side::Black => self.white_is.other(),
        }
    }

    fn fail(&self, e: impl std::fmt::Display) -> Failure {
        (self.mover(), self.game.ply(), e.to_string())
    }

    fn is_finished(&self, ply_cap: u32) -> bool {
        self.game.is_over() || self.game.ply() >= ply_cap as usize
    }

    fn play(&mut self, mv: brandubh_rules::Move) -> Result<(), Failure> {
        self.searching = false;
        let ply = self.game.ply();
        let who = self.mover();
        self.game
            .play(mv)
            .map(|_| ())
            .map_err(|e| (who, ply, format!("chose an illegal move: {e}")))
    }

    /// Plays the turns of players that choose by themselves and begins the turn of a
    /// searching one (whose contestant has a batch evaluator), until the game ends or a
    /// search is running.
    fn advance(&mut self, batched: [bool; 2], ply_cap: u32) -> Result<(), Failure> {
        while !self.searching && !self.is_finished(ply_cap) {
            let who = self.mover();
            let player = &mut self.players[who.index()];
            match player.searching().filter(|_| batched[who.index()]) {
                Some(searching) => {
                    searching.begin_turn(&self.game).map_err(|e| self.fail(e))?;
                    self.searching = true;
                }
                None => {
                    let mv = player.choose(&self.game).map_err(|e| self.fail(e))?;
                    self.play(mv)?;
                }
            }
        }
        Ok(())
    }

    /// The running search of the side to move, if it belongs to `who`.
    fn search_of(&mut self, who: Contestant) -> Option<&mut Search> {
        if !self.searching || self.mover() != who {
            return None;
        }
        self.players[who.index()].searching()?.turn_search()
    }

    /// Ends the turn of a search that is done.
    fn end_turn_if_done(&mut self) -> Result<(), Failure> {
        let who = self.mover();
        let Some(searching) = self.players[who.index()]
            .searching()
            .filter(|_| self.searching)
        else {
            return Ok(());
        };
        let done = searching
            .turn_search()
            .is_some_and(|s| s.is_done() && s.in_flight() == 0);
        if done {
            let mv = searching.end_turn().map_err(|e| self.fail(e))?;
            self.play(mv)?;
        }
        Ok(())
    }

    fn record(&self) -> PlayedGame {
        PlayedGame::of(&self.game, self.white_is)
    }
}

/// What a worker may do: stop (`halt`, set when a sequential test has decided: the worker
/// leaves the games it has unfinished) and which matches it may start now (`admit`, given
/// the match's index within the series: a sequential test admits only a window of matches
/// ahead of those it has counted).
pub(crate) struct Gate<'a> {
    pub halt: &'a AtomicBool,
    pub admit: &'a (dyn Fn(usize) -> bool + Sync),
}

/// How long a worker with nothing it may start waits before it looks again.
const ADMIT_WAIT: Duration = Duration::from_millis(2);

/// One worker: takes games from `next` in order, as `gate` admits them, until none is left
/// or the gate halts, calling `finished` with each finished game as `(task, record)`.
pub(crate) fn work(
    series: &Series<'_>,
    tasks: &[GameTask],
    next: &AtomicUsize,
    gate: &Gate<'_>,
    finished: &(dyn Fn(GameTask, PlayedGame) -> Result<(), EvalError> + Sync),
) -> Result<(), EvalError> {
    let mut evaluators: [Option<Box<dyn Evaluator + Send>>; 2] =
        [series.a.batch_evaluator(), series.b.batch_evaluator()];
    let batched = [evaluators[0].is_some(), evaluators[1].is_some()];
    let mut tables: Vec<Table> = Vec::new();
    let mut batcher = Batcher::new();
    loop {
        if gate.halt.load(Ordering::SeqCst) {
            return Ok(());
        }
        while tables.len() < TABLES_PER_WORKER {
            let i = next.load(Ordering::SeqCst);
            let Some(&task) = tasks.get(i).filter(|t| (gate.admit)(t.m)) else {
                break;
            };
            if next
                .compare_exchange(i, i + 1, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
            {
                tables.push(series.open(task)?);
            }
        }
        if tables.is_empty() {
            if next.load(Ordering::SeqCst) >= tasks.len() {
                return Ok(());
            }
            std::thread::sleep(ADMIT_WAIT);
            continue;
        }
        let mut i = 0;
        while i < tables.len() {
            tables[i]
                .advance(batched, series.ply_cap)
                .map_err(|f| series.error(tables[i].task, f))?;
            if tables[i].is_finished(series.ply_cap) {
                let table = tables.swap_remove(i);
                finished(table.task, table.record())?;
            } else {
                i += 1;
            }
        }
        for who in [Contestant::A, Contestant::B] {
            let Some(evaluator) = evaluators[who.index()].as_mut() else {
                continue;
            };
            let mut searches: Vec<&mut Search> =
                tables.iter_mut().filter_map(|t| t.search_of(who)).collect();
            if !searches.is_empty() {
                let factory = if who == Contestant::A {
                    series.a
                } else {
                    series.b
                };
                batcher
                    .round(&mut searches, 1, evaluator.as_mut())
                    .map_err(|e| EvalError::AgentConfig {
                        agent: factory.name(),
                        cause: format!("batched search: {e}"),
                    })?;
            }
        }
        for table in &mut tables {
            table
                .end_turn_if_done()
                .map_err(|f| series.error(table.task, f))?;
        }
    }
}

impl Series<'_> {
    fn index(&self, task: GameTask) -> u32 {
        (self.first_match + task.m) as u32
    }

    /// A new table for `task`: its opening and both players, seeded as in
    /// [`crate::game::play_match_game`].
    fn open(&self, task: GameTask) -> Result<Table, EvalError> {
        let index = self.index(task);
        let opening = &self.openings[task.m];
        let white_is = if task.game == 0 {
            Contestant::A
        } else {
            Contestant::B
        };
        let game = opening
            .game()
            .map_err(|e| self.error(task, (white_is, 0, format!("opening {opening}: {e}"))))?;
        let pa = self.a.player(
            player_seed(self.seed, index, task.game, Contestant::A),
            self.ply_cap,
        )?;
        let pb = self.b.player(
            player_seed(self.seed, index, task.game, Contestant::B),
            self.ply_cap,
        )?;
        Ok(Table {
            task,
            game,
            players: [pa, pb],
            white_is,
            searching: false,
        })
    }

    fn error(&self, task: GameTask, (who, ply, cause): Failure) -> EvalError {
        EvalError::Player {
            agent: match who {
                Contestant::A => self.a.name(),
                Contestant::B => self.b.name(),
            },
            index: self.index(task),
            game: task.game + 1,
            ply,
            cause,
        }
    }
}
