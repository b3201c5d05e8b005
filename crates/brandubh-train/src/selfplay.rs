//! Batched multithreaded self-play.
//!
//! Each worker thread owns one [`Evaluator`] and keeps `concurrent_games` games going. A
//! round gathers a few leaves from every game's [`Search`], evaluates all of them in one
//! call (one network forward pass), and hands each search its evaluations back. When a
//! search is done its move is played (the subtree is kept), and a finished game is sent to
//! the caller, who writes it to disk as games arrive.
//!
//! Seeded sessions repeat exactly, whatever the threads' timing: worker `w` of `T` plays
//! the games `w, w + T, w + 2T, …` (so each worker's games, batches, evaluator state and
//! evaluation cache depend on the seed alone, as with one worker), and the caller receives
//! the games in index order (so chunks, the replay window and a resumed iteration see the
//! same games in the same order: the games written are always the first ones).
//!
//! With `selfplay.eval_cache` each worker keeps an [`EvalCache`] in front of its
//! evaluator: a leaf whose position (or a mirror image of it) the worker evaluated before
//! in the session is answered from it.
//!
//! In a share of the games (`selfplay.sparring_fraction`) White is the
//! alpha-beta searcher instead of the network: the worker plays its moves at once, on its
//! own thread, and only Black's moves are searched and recorded.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use brandubh_rules::{Game, Move, Position, Side};
use brandubh_run::config::{RunConfig, SelfPlayConfig};
use brandubh_run::replay::{GameRecord, GameResult, PositionRecord};
use brandubh_search::{
    AlphaBetaConfig, AlphaBetaPlayer, Batcher, CachedEvaluator, EvalCache, Evaluator, Search,
    SearchConfig, SearchError, SearchResult, SettingError,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// How self-play games are played: the run's `[selfplay]` section, read as it was
/// validated ([`SelfPlayConfig`], whose keys, meanings and ranges are documented there
/// and checked once by `RunConfig::validate`), the search it runs, and the games forks
/// start from.
#[derive(Clone, Debug)]
pub struct SelfPlaySettings {
    /// The `[selfplay]` section of a valid run configuration.
    pub config: SelfPlayConfig,
    /// The full search (`[search]`; its `simulations` is the full budget, and its
    /// `ply_cap` is `selfplay.ply_cap`, so that it scores capped lines as unfinished).
    pub search: SearchConfig,
    /// The earlier games that forked games start from (empty: every game starts from the
    /// start).
    pub forks: Arc<ForkPool>,
}

/// What a self-play session did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SelfPlayStats {
    /// Games finished.
    pub games: u64,
    /// Positions recorded (full searches).
    pub positions: u64,
    /// Moves played, in all games.
    pub moves: u64,
    /// Leaves the searches had evaluated, those the evaluation caches answered included.
    pub evaluations: u64,
    /// Of those, the leaves the workers' evaluation caches answered (`selfplay.eval_cache`),
    /// so that the evaluators saw `evaluations - cache_hits`.
    pub cache_hits: u64,
    /// Bytes the workers' evaluation caches held at their end, together.
    pub cache_bytes: u64,
    /// Evaluator calls (batches).
    pub batches: u64,
    /// Wall time of the whole session.
    pub wall: Duration,
    /// Summed time the workers spent inside `Evaluator::evaluate`.
    pub eval_time: Duration,
    /// Summed time the workers were running (from their start to their last game).
    pub worker_time: Duration,
}

impl SelfPlayStats {
    /// Leaves evaluated per second of wall time.
    #[must_use]
    pub fn evaluations_per_second(&self) -> f64 {
        self.evaluations as f64 / self.wall.as_secs_f64().max(1e-9)
    }

    /// Mean leaves per evaluator call (before the cache).
    #[must_use]
    pub fn mean_batch(&self) -> f64 {
        self.evaluations as f64 / (self.batches.max(1)) as f64
    }

    /// The share of leaves the evaluation caches answered (0 without them).
    #[must_use]
    pub fn cache_hit_rate(&self) -> f64 {
        self.cache_hits as f64 / self.evaluations.max(1) as f64
    }

    /// Leaves the evaluators themselves evaluated (the caches' answers left out).
    #[must_use]
    pub fn network_evaluations(&self) -> u64 {
        self.evaluations.saturating_sub(self.cache_hits)
    }

    /// Those per second of wall time.
    #[must_use]
    pub fn network_evaluations_per_second(&self) -> f64 {
        self.network_evaluations() as f64 / self.wall.as_secs_f64().max(1e-9)
    }

    /// Mean leaves per evaluator call that reached the evaluators (the caches' answers
    /// left out).
    #[must_use]
    pub fn network_mean_batch(&self) -> f64 {
        self.network_evaluations() as f64 / (self.batches.max(1)) as f64
    }
}

/// A game being played by a worker.
struct Slot {
    /// The game's index in the session.
    index: u64,
    search: Search,
    record: GameRecord,
    rng: ChaCha8Rng,
    full: bool,
    /// The ply self-play took the game over at: 0, or a fork's ply.
    first_ply: usize,
}

impl Slot {
    /// The game as handed over, with its index.
    fn finished(self) -> (u64, GameRecord) {
        (self.index, self.record)
    }
}

/// Earlier games that self-play games may start part-way through, as KataGo starts a
/// share of its games from positions of earlier games: a position is drawn uniformly from
/// every position of the pool's games that is neither their start nor their end, and the
/// new game replays that game's moves up to it (so that repetitions count as in the
/// game), then searches from there. The moves before the fork are in the new record but
/// none of its positions: only what self-play searched is a training target.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ForkPool {
    /// Each game's start and moves.
    games: Vec<(Position, Vec<Move>)>,
    /// Every position a game may start from: (game, plies played).
    points: Vec<(u32, u32)>,
}

impl ForkPool {
    /// The pool of `games` (their order decides which index draws which position).
    pub fn new<'a>(games: impl IntoIterator<Item = &'a GameRecord>) -> ForkPool {
        let mut pool = ForkPool::default();
        pool.extend(games);
        pool
    }

    /// Adds `games` (their start and moves; their recorded positions are not kept).
    pub fn extend<'a>(&mut self, games: impl IntoIterator<Item = &'a GameRecord>) {
        for g in games {
            let index = self.games.len() as u32;
            // Positions after 1 to len-1 moves: not the start, and not the end (a
            // finished game's last position is over; a capped one's is at the cap).
            let n = g.moves.len() as u32;
            // A game with no position to start from is not kept.
            if n > 1 {
                self.points.extend((1..n).map(|ply| (index, ply)));
                self.games.push((g.start, g.moves.clone()));
            }
        }
    }

    /// Positions to start from.
    #[must_use]
    pub fn len(&self) -> usize {
        self.points.len()
    }

    /// Whether there is no position to start from.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// The game replayed up to a position drawn with `rng`; `None` if the pool is empty or
    /// the drawn line is not a live game under the rules (a damaged record).
    fn draw(&self, rng: &mut ChaCha8Rng) -> Option<Game> {
        if self.is_empty() {
            return None;
        }
        let (index, ply) = self.points[rng.random_range(0..self.points.len())];
        let (start, moves) = &self.games[index as usize];
        let mut game = Game::new(*start);
        for &mv in &moves[..ply as usize] {
            game.play(mv).ok()?;
        }
        (!game.is_over()).then_some(game)
    }
}

/// Seed of game `index` of a session seeded with `seed` (splitmix64 of both).
#[must_use]
pub fn game_seed(seed: u64, index: u64) -> u64 {
    brandubh_fs::mix64(seed ^ index.wrapping_mul(brandubh_fs::GOLDEN_GAMMA))
}

impl SelfPlaySettings {
    /// The self-play of the valid run configuration `run`, with no games to fork from.
    pub fn new(run: &RunConfig) -> Result<SelfPlaySettings, SettingError> {
        Ok(SelfPlaySettings {
            config: run.selfplay.clone(),
            search: run.search.search_config(Some(run.selfplay.ply_cap))?,
            forks: Arc::new(ForkPool::default()),
        })
    }

    /// Worker threads: `selfplay.threads`, or one per core when it is 0.
    #[must_use]
    pub fn threads(&self) -> usize {
        self.config.worker_threads()
    }

    /// Game `index`, ready for its first search, and whether it already ended (a sparring
    /// game whose alpha-beta White won or reached the ply cap with its first move).
    fn start_game(&self, index: u64, seed: u64) -> Result<(Slot, bool), SearchError> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        // No number is drawn for forks unless there can be one, so that runs without forks
        // play exactly the games they played before forks existed.
        let c = &self.config;
        let fork = (c.fork_fraction > 0.0
            && !self.forks.is_empty()
            && rng.random::<f32>() < c.fork_fraction as f32)
            .then(|| self.forks.draw(&mut rng))
            .flatten();
        let first_ply = fork.as_ref().map_or(0, Game::ply);
        let game = fork.unwrap_or_else(|| {
            let mut game = Game::new(Position::start());
            let plies = c.opening_random_plies.unwrap_or(0) as usize;
            game.random_playout(plies, |n| rng.random_range(0..n));
            if game.is_over() {
                // Random openings this short never end the game, but stay safe.
                game = Game::new(Position::start());
            }
            game
        });
        // Likewise, no number is drawn for sparring unless it is on.
        let sparring =
            c.sparring_fraction > 0.0 && rng.random::<f32>() < c.sparring_fraction as f32;
        let record = GameRecord {
            start: *game.start(),
            moves: game.moves().to_vec(),
            result: GameResult::Unfinished,
            positions: Vec::new(),
            sparring,
        };
        let search = Search::new(game, self.search.clone(), rng.random())?;
        let mut slot = Slot {
            index,
            search,
            record,
            rng,
            full: true,
            first_ply,
        };
        let ended = self.play_sparring_white(&mut slot)?;
        if !ended {
            self.choose_budget(&mut slot);
        }
        Ok((slot, ended))
    }

    /// In a sparring game with White to move, plays the alpha-beta's move (the next
    /// move is Black's); returns whether the game ended (by the rules or the ply cap).
    /// Plays nothing in other games, with Black to move, or in an ended game.
    fn play_sparring_white(&self, slot: &mut Slot) -> Result<bool, SearchError> {
        if slot.record.sparring
            && slot.search.game().side_to_move() == Side::White
            && !self.ended(slot)?
        {
            let mut white = AlphaBetaPlayer::new(AlphaBetaConfig {
                max_depth: self.config.sparring_depth,
                time_limit: None,
                ply_cap: Some(self.config.ply_cap),
            })?;
            let mv = white.search(slot.search.game())?.best_move;
            slot.search.advance(mv)?;
            slot.record.moves.push(mv);
        }
        self.ended(slot)
    }

    /// Whether the game of `slot` is over (its result then recorded) or at the ply cap.
    fn ended(&self, slot: &mut Slot) -> Result<bool, SearchError> {
        let game = slot.search.game();
        if let Some(outcome) = game.outcome() {
            slot.record.result = GameResult::Finished(outcome);
            return Ok(true);
        }
        Ok(game.ply() >= self.config.ply_cap as usize)
    }

    /// Playout-cap randomisation: draws whether the next move gets the full search.
    fn choose_budget(&self, slot: &mut Slot) {
        slot.full = slot.rng.random::<f32>() < self.config.full_search_fraction as f32;
        let budget = if slot.full {
            self.search.simulations
        } else {
            self.config.cheap_simulations
        };
        let side = slot.search.game().side_to_move();
        slot.search.set_simulations(self.budget_for(side, budget));
    }

    /// `budget` scaled for `side` by `black_budget_scale`.
    fn budget_for(&self, side: Side, budget: u32) -> u32 {
        match side {
            Side::White => budget,
            // `as` saturates; the scale is at least 1, so the budget never shrinks.
            Side::Black => {
                let scale = self.config.black_budget_scale as f32;
                ((budget as f32 * scale).round() as u32).max(budget)
            }
        }
    }

    /// The move to play: the search's best move, or, in the opening plies, a move drawn
    /// from its policy target sharpened by the temperature.
    fn choose_move(&self, result: &SearchResult, slot: &mut Slot) -> Move {
        let ply = slot.search.game().ply() - slot.first_ply;
        let (temperature, plies) = (self.config.temperature, self.config.temperature_plies);
        if ply >= plies as usize || temperature <= 0.0 {
            return result.best_move;
        }
        let weights: Vec<f64> = result
            .policy
            .iter()
            .map(|&p| f64::from(p.max(0.0)).powf(1.0 / temperature))
            .collect();
        let total: f64 = weights.iter().sum();
        if !(total > 0.0 && total.is_finite()) {
            return result.best_move;
        }
        let mut x = slot.rng.random::<f64>() * total;
        for (i, w) in weights.iter().enumerate() {
            x -= w;
            if x < 0.0 {
                return result.moves[i];
            }
        }
        result.best_move
    }

    /// Plays the searched move of a done search; returns whether the game ended (by the
    /// rules or the ply cap).
    fn finish_move(&self, slot: &mut Slot) -> Result<bool, SearchError> {
        let result = slot.search.result()?;
        if slot.full {
            let root_value = result.value.clamp(-1.0, 1.0);
            slot.record.positions.push(PositionRecord {
                ply: slot.search.game().ply() as u32,
                policy: result
                    .moves
                    .iter()
                    .copied()
                    .zip(result.policy.iter().copied())
                    .filter(|&(_, p)| p > 0.0)
                    .collect(),
                root_value,
                full_search: true,
            });
        }
        let mv = self.choose_move(&result, slot);
        slot.search.advance(mv)?;
        slot.record.moves.push(mv);
        if self.ended(slot)? || self.play_sparring_white(slot)? {
            return Ok(true);
        }
        self.choose_budget(slot);
        Ok(false)
    }
}

/// Counters and flags that a session's workers share.
#[derive(Debug, Default)]
struct Shared {
    /// Set when the session stops early (an error).
    stop: AtomicBool,
    evaluations: AtomicU64,
    cache_hits: AtomicU64,
    cache_bytes: AtomicU64,
    batches: AtomicU64,
    eval_nanos: AtomicU64,
    worker_nanos: AtomicU64,
}

impl Shared {
    fn stats_into(&self, stats: &mut SelfPlayStats, t0: Instant) {
        stats.evaluations = self.evaluations.load(Ordering::Relaxed);
        stats.cache_hits = self.cache_hits.load(Ordering::Relaxed);
        stats.cache_bytes = self.cache_bytes.load(Ordering::Relaxed);
        stats.batches = self.batches.load(Ordering::Relaxed);
        stats.wall = t0.elapsed();
        stats.eval_time = Duration::from_nanos(self.eval_nanos.load(Ordering::Relaxed));
    }
}

/// Which games a session plays: indices `first..first + count`, seeded from `seed`.
#[derive(Clone, Copy, Debug)]
struct GameRange {
    seed: u64,
    first: u64,
    count: u64,
}

/// One self-play worker (kZero's executor shape): its evaluator and the games it keeps in
/// flight. Each round it tops its games up, advances all their searches with one
/// evaluator call, plays the moves of the searches that are done and sends finished games
/// with their indices.
struct Worker<'a, E> {
    settings: &'a SelfPlaySettings,
    shared: &'a Shared,
    range: GameRange,
    /// The next game this worker starts (a session index; it steps by `stride`).
    next: u64,
    /// The number of workers.
    stride: u64,
    evaluator: E,
    /// The worker's evaluation cache (its share of `selfplay.eval_cache`; `None` when 0).
    cache: Option<EvalCache>,
    slots: Vec<Slot>,
    /// Games that ended as they started (see [`SelfPlaySettings::start_game`]), handed
    /// over with the next round's.
    ended_at_start: Vec<(u64, GameRecord)>,
    batcher: Batcher,
}

impl<E: Evaluator> Worker<'_, E> {
    /// Plays until no game is left, the session stops or nobody listens any more.
    fn run(
        &mut self,
        finished: &mpsc::Sender<Result<(u64, GameRecord), SearchError>>,
    ) -> Result<(), SearchError> {
        while !self.shared.stop.load(Ordering::Relaxed) {
            self.top_up()?;
            if self.slots.is_empty() && self.ended_at_start.is_empty() {
                break;
            }
            self.step()?;
            for record in self.play_moves()? {
                if finished.send(Ok(record)).is_err() {
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// Starts this worker's next games until `concurrent_games` are in flight or none is
    /// left.
    fn top_up(&mut self) -> Result<(), SearchError> {
        while self.slots.len() < self.settings.config.concurrent_games as usize
            && self.next < self.range.count
        {
            let index = self.next;
            self.next += self.stride;
            let seed = game_seed(self.range.seed, self.range.first + index);
            let (slot, ended) = self.settings.start_game(index, seed)?;
            if ended {
                self.ended_at_start.push(slot.finished());
            } else {
                self.slots.push(slot);
            }
        }
        Ok(())
    }

    /// One batched round over every game's search.
    fn step(&mut self) -> Result<(), SearchError> {
        let mut searches: Vec<&mut Search> = self.slots.iter_mut().map(|s| &mut s.search).collect();
        let leaves_per_game = self.settings.config.leaves_per_game as usize;
        let (round, hits) = match &mut self.cache {
            Some(cache) => {
                let before = cache.stats().hits;
                let mut cached = CachedEvaluator {
                    inner: &mut self.evaluator,
                    cache,
                };
                let round = self
                    .batcher
                    .round(&mut searches, leaves_per_game, &mut cached)?;
                (round, cache.stats().hits - before)
            }
            None => (
                self.batcher
                    .round(&mut searches, leaves_per_game, &mut self.evaluator)?,
                0,
            ),
        };
        if round.leaves > 0 {
            let shared = self.shared;
            shared.cache_hits.fetch_add(hits, Ordering::Relaxed);
            shared
                .eval_nanos
                .fetch_add(round.eval_time.as_nanos() as u64, Ordering::Relaxed);
            shared
                .evaluations
                .fetch_add(round.leaves as u64, Ordering::Relaxed);
            shared.batches.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Plays the move of every done search; returns the games that ended, with their
    /// indices.
    fn play_moves(&mut self) -> Result<Vec<(u64, GameRecord)>, SearchError> {
        let mut ended = std::mem::take(&mut self.ended_at_start);
        let mut i = 0;
        while i < self.slots.len() {
            let slot = &mut self.slots[i];
            let done = slot.search.is_done() && slot.search.in_flight() == 0;
            if done && self.settings.finish_move(slot)? {
                ended.push(self.slots.swap_remove(i).finished());
            } else {
                i += 1;
            }
        }
        Ok(ended)
    }
}

/// Plays games `first_game..first_game + games` (indices seed each game) on
/// `settings.threads()` workers. `make_evaluator(worker)` builds each worker's evaluator on
/// its thread. `on_game` runs on the calling thread for every game, in index order (a game
/// that finishes before an earlier one waits for it; the stats it gets count every game
/// finished so far); returning an error stops the session (games in flight or waiting are
/// dropped, so the games delivered are always the first ones).
pub fn play<E, F, G, Err>(
    settings: &SelfPlaySettings,
    seed: u64,
    first_game: u64,
    games: u64,
    make_evaluator: F,
    mut on_game: G,
) -> Result<SelfPlayStats, Err>
where
    E: Evaluator,
    F: Fn(usize) -> E + Sync,
    G: FnMut(GameRecord, &SelfPlayStats) -> Result<(), Err>,
    Err: From<SearchError>,
{
    let t0 = Instant::now();
    let shared = Shared::default();
    let range = GameRange {
        seed,
        first: first_game,
        count: games,
    };
    let mut stats = SelfPlayStats::default();
    let (tx, rx) = mpsc::channel::<Result<(u64, GameRecord), SearchError>>();
    let workers = settings.threads();
    let outcome = std::thread::scope(|scope| {
        for worker in 0..workers {
            let tx = tx.clone();
            let (shared, make_evaluator) = (&shared, &make_evaluator);
            scope.spawn(move || {
                let started = Instant::now();
                let mut w = Worker {
                    settings,
                    shared,
                    range,
                    next: worker as u64,
                    stride: workers as u64,
                    evaluator: make_evaluator(worker),
                    cache: (settings.config.eval_cache > 0).then(|| {
                        EvalCache::new((settings.config.eval_cache / workers as u32).max(1))
                    }),
                    slots: Vec::new(),
                    ended_at_start: Vec::new(),
                    batcher: Batcher::new(),
                };
                let result = w.run(&tx);
                if let Some(cache) = &w.cache {
                    shared
                        .cache_bytes
                        .fetch_add(cache.bytes() as u64, Ordering::Relaxed);
                }
                shared
                    .worker_nanos
                    .fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
                if let Err(e) = result {
                    let _ = tx.send(Err(e));
                }
            });
        }
        drop(tx);
        // Games that finished before an earlier one, by index.
        let mut waiting = BTreeMap::new();
        let mut next_out = 0u64;
        for message in rx.iter() {
            let stopped = message.map_err(Err::from).and_then(|(index, game)| {
                stats.games += 1;
                stats.moves += game.moves.len() as u64;
                stats.positions += game.positions.len() as u64;
                shared.stats_into(&mut stats, t0);
                waiting.insert(index, game);
                while let Some(game) = waiting.remove(&next_out) {
                    next_out += 1;
                    on_game(game, &stats)?;
                }
                Ok(())
            });
            if let Err(e) = stopped {
                shared.stop.store(true, Ordering::Relaxed);
                return Err(e);
            }
        }
        Ok(())
    });
    outcome?;
    shared.stats_into(&mut stats, t0);
    stats.worker_time = Duration::from_nanos(shared.worker_nanos.load(Ordering::Relaxed));
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use brandubh_search::{RolloutEvaluator, UniformEvaluator};

    fn settings(threads: usize) -> SelfPlaySettings {
        let mut search = SearchConfig::gumbel(8);
        search.ply_cap = Some(30);
        SelfPlaySettings {
            config: SelfPlayConfig {
                cheap_simulations: 2,
                full_search_fraction: 0.5,
                ply_cap: 30,
                opening_random_plies: Some(2),
                sparring_depth: 2,
                temperature_plies: 6,
                concurrent_games: 3,
                leaves_per_game: 2,
                threads: threads as u32,
                ..SelfPlayConfig::default()
            },
            search,
            forks: Arc::new(ForkPool::default()),
        }
    }

    #[test]
    fn settings_of_a_run_read_its_selfplay_section() {
        let mut run = RunConfig::default();
        run.selfplay.sparring_depth = 3;
        run.selfplay.threads = 2;
        run.selfplay.ply_cap = 77;
        let s = SelfPlaySettings::new(&run).unwrap();
        assert_eq!(s.config, run.selfplay);
        assert_eq!(s.threads(), 2);
        assert_eq!(s.search.ply_cap, Some(77));
        assert_eq!(s.search.simulations, run.search.simulations);
        assert!(s.forks.is_empty());
    }

    fn collect(threads: usize, seed: u64) -> (Vec<GameRecord>, SelfPlayStats) {
        collect_with(&settings(threads), seed)
    }

    fn collect_with(settings: &SelfPlaySettings, seed: u64) -> (Vec<GameRecord>, SelfPlayStats) {
        games_of(settings, seed, |_| UniformEvaluator)
    }

    /// Games 0..7 of seed `seed`, each worker `w` evaluating with `make_evaluator(w)`.
    fn games_of<E: Evaluator>(
        settings: &SelfPlaySettings,
        seed: u64,
        make_evaluator: impl Fn(usize) -> E + Sync,
    ) -> (Vec<GameRecord>, SelfPlayStats) {
        let mut games = Vec::new();
        let stats = play::<_, _, _, SearchError>(settings, seed, 0, 7, make_evaluator, |g, _| {
            assert!(
                !g.sparring,
                "sparring games are collected by `sparring_games`"
            );
            games.push(g);
            Ok(())
        })
        .unwrap();
        (games, stats)
    }

    #[test]
    fn plays_every_game_and_records_valid_games() {
        let (games, stats) = collect(2, 1);
        assert_eq!(games.len(), 7);
        assert_eq!(stats.games, 7);
        assert!(stats.evaluations > 0 && stats.batches > 0);
        assert!(
            stats.mean_batch() > 1.0,
            "leaves of several games share a batch"
        );
        for g in &games {
            g.validate().unwrap();
            assert!(g.moves.len() <= 30);
            assert!(g.moves.len() >= 2, "two random opening plies at least");
            assert!(g.positions.iter().all(|p| p.ply >= 2 && p.full_search));
            if g.moves.len() < 30 {
                assert!(matches!(g.result, GameResult::Finished(_)));
            }
        }
        let recorded: u64 = games.iter().map(|g| g.positions.len() as u64).sum();
        assert_eq!(recorded, stats.positions);
        // Roughly half the moves get the full search.
        let moves: usize = games.iter().map(|g| g.moves.len() - 2).sum();
        assert!(recorded as usize > moves / 5 && (recorded as usize) < moves * 4 / 5);
    }

    #[test]
    fn black_searches_with_the_scaled_budget() {
        let mut s = settings(1);
        s.config.black_budget_scale = 2.5;
        assert_eq!(s.budget_for(Side::White, 8), 8);
        assert_eq!(s.budget_for(Side::Black, 8), 20);
        assert_eq!(s.budget_for(Side::Black, 2), 5);
        s.config.black_budget_scale = 1.0;
        assert_eq!(s.budget_for(Side::Black, 8), 8);
        // Played: the same games' moves cost more evaluations with Black's budget scaled.
        let per_move = |st: &SelfPlayStats| st.evaluations as f64 / st.moves as f64;
        let plain = collect_with(&s, 4).1;
        s.config.black_budget_scale = 4.0;
        let scaled = collect_with(&s, 4).1;
        assert!(
            per_move(&scaled) > 1.5 * per_move(&plain),
            "{} vs {} evaluations a move",
            per_move(&scaled),
            per_move(&plain)
        );
    }

    #[test]
    fn same_seed_same_games_with_one_worker() {
        let mut a = collect(1, 9).0;
        let mut b = collect(1, 9).0;
        let key = |g: &GameRecord| g.moves.clone();
        a.sort_by_key(key);
        b.sort_by_key(key);
        assert_eq!(a, b);
        let mut c = collect(1, 10).0;
        c.sort_by_key(key);
        assert_ne!(a, c);
    }

    /// Games 0..7 of seed `seed` on `threads` workers whose evaluators keep state: random
    /// playouts from a generator seeded with the worker's number, as the network's random
    /// symmetries are drawn in training.
    fn collect_rollouts(threads: usize, seed: u64) -> Vec<GameRecord> {
        games_of(&settings(threads), seed, |worker| {
            RolloutEvaluator::new(100 + worker as u64, 12)
        })
        .0
    }

    #[test]
    fn games_arrive_in_index_order_whatever_the_workers() {
        // With a stateless evaluator a game depends on its index alone, so the sessions
        // agree game for game, in order, whatever the number of workers.
        let one = collect(1, 9).0;
        assert_eq!(one.len(), 7);
        assert_eq!(collect(2, 9).0, one);
        assert_eq!(collect(3, 9).0, one);
        assert_eq!(collect(8, 9).0, one, "more workers than games");
    }

    #[test]
    fn seeded_sessions_repeat_with_several_workers_and_stateful_evaluators() {
        let first = collect_rollouts(2, 5);
        for _ in 0..3 {
            assert_eq!(collect_rollouts(2, 5), first);
        }
        assert_eq!(collect_rollouts(3, 5), collect_rollouts(3, 5));
        // The evaluators' state does decide the games: a different split of the games
        // between workers plays others.
        assert_ne!(collect_rollouts(1, 5), first);
    }

    /// Uniform evaluations, counting the leaves it is asked for.
    struct CountingUniform<'a>(&'a AtomicU64);
    impl Evaluator for CountingUniform<'_> {
        fn evaluate(
            &mut self,
            leaves: &[brandubh_search::Leaf],
        ) -> Vec<brandubh_search::Evaluation> {
            self.0.fetch_add(leaves.len() as u64, Ordering::Relaxed);
            UniformEvaluator.evaluate(leaves)
        }
    }

    #[test]
    fn the_evaluation_cache_answers_recurring_positions_without_changing_the_games() {
        for threads in [1, 2] {
            let plain = collect(threads, 9);
            let mut s = settings(threads);
            s.config.eval_cache = 4096;
            let asked = AtomicU64::new(0);
            let cached = games_of(&s, 9, |_| CountingUniform(&asked));
            // Uniform priors are the same under every symmetry, so a cached evaluation is
            // exactly what the evaluator would have said: the same games, the same leaves.
            assert_eq!(cached.0, plain.0);
            assert_eq!(cached.1.evaluations, plain.1.evaluations);
            assert_eq!(cached.1.batches, plain.1.batches);
            assert_eq!((plain.1.cache_hits, plain.1.cache_bytes), (0, 0));
            let hits = cached.1.cache_hits;
            assert!(hits > 0 && hits < cached.1.evaluations, "{hits} hits");
            // The evaluators saw only the misses.
            assert_eq!(asked.load(Ordering::Relaxed), cached.1.evaluations - hits);
            // 4,096 slots in all, split between the workers.
            assert!(
                cached.1.cache_bytes >= 4096 * 64 && cached.1.cache_bytes < 4096 * 64 + 400_000
            );
            assert!(cached.1.cache_hit_rate() > 0.0 && cached.1.cache_hit_rate() < 1.0);
        }
    }

    #[test]
    fn seeded_sessions_with_the_cache_repeat_with_several_workers() {
        let mut s = settings(2);
        s.config.eval_cache = 1024;
        let run = || games_of(&s, 5, |w| RolloutEvaluator::new(100 + w as u64, 12));
        let first = run();
        assert!(first.1.cache_hits > 0);
        for _ in 0..2 {
            assert_eq!(run().0, first.0);
        }
        // A hit skips the evaluator's random draws, so a stateful evaluator plays other
        // games with the cache than without.
        assert_ne!(first.0, collect_rollouts(2, 5));
    }

    /// Why a test session stopped.
    #[derive(Debug, PartialEq)]
    enum Stop {
        Enough,
        Search(String),
    }

    impl From<SearchError> for Stop {
        fn from(e: SearchError) -> Stop {
            Stop::Search(e.to_string())
        }
    }

    #[test]
    fn a_session_stopped_early_has_delivered_the_first_games() {
        let all = collect(2, 9).0;
        let mut got = Vec::new();
        let stopped = play::<_, _, _, Stop>(
            &settings(2),
            9,
            0,
            7,
            |_| UniformEvaluator,
            |g, _| {
                got.push(g);
                if got.len() == 3 {
                    Err(Stop::Enough)
                } else {
                    Ok(())
                }
            },
        );
        assert_eq!(stopped.unwrap_err(), Stop::Enough);
        assert_eq!(got, all[..3]);
    }

    /// Self-play with `fork_fraction` of the games forked from `pool`.
    fn forked(fraction: f64, pool: &[GameRecord], seed: u64) -> Vec<GameRecord> {
        let mut s = settings(1);
        s.config.fork_fraction = fraction;
        s.forks = Arc::new(ForkPool::new(pool));
        collect_with(&s, seed).0
    }

    /// The longest prefix that `game`'s moves share with a game of `pool` that started
    /// from the same position.
    fn shared_prefix(game: &GameRecord, pool: &[GameRecord]) -> usize {
        pool.iter()
            .filter(|p| p.start == game.start)
            .map(|p| {
                p.moves
                    .iter()
                    .zip(&game.moves)
                    .take_while(|(a, b)| a == b)
                    .count()
            })
            .max()
            .unwrap_or(0)
    }

    #[test]
    fn the_fork_pool_holds_every_inner_position_of_its_games() {
        let (games, _) = collect(1, 5);
        let pool = ForkPool::new(&games);
        let inner: usize = games.iter().map(|g| g.moves.len() - 1).sum();
        assert_eq!(pool.len(), inner);
        assert!(ForkPool::new(&[]).is_empty());
        // Every draw is a live game on one of the pool's lines, neither start nor end.
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for _ in 0..200 {
            let g = pool.draw(&mut rng).unwrap();
            assert!(!g.is_over());
            let record = GameRecord {
                start: *g.start(),
                moves: g.moves().to_vec(),
                result: GameResult::Unfinished,
                positions: Vec::new(),
                sparring: false,
            };
            let n = record.moves.len();
            assert!(n >= 1 && shared_prefix(&record, &games) == n);
            assert!(
                games
                    .iter()
                    .any(|p| p.moves.len() > n && p.moves[..n] == record.moves[..])
            );
        }
    }

    #[test]
    fn forked_games_continue_earlier_games_and_record_only_their_own_moves() {
        let (pool, _) = collect(1, 5);
        let games = forked(1.0, &pool, 6);
        assert_eq!(games.len(), 7);
        let mut deep = 0;
        for g in &games {
            g.validate().unwrap();
            // The game's first moves are a line of the pool (the random opening plies of a
            // fresh game would be two moves at most).
            let prefix = shared_prefix(g, &pool);
            assert!(prefix >= 1, "{:?} does not continue a pool game", g.moves);
            deep += usize::from(prefix > 2);
        }
        assert!(
            deep >= 3,
            "most forks start past the opening plies: {deep} of 7"
        );
        // Forks change the games; without a pool or with fraction 0 they are the plain
        // games, exactly (no random number is drawn for forks).
        let plain = collect(1, 6).0;
        assert_ne!(games, plain);
        assert_eq!(forked(0.0, &pool, 6), plain);
        assert_eq!(forked(1.0, &[], 6), plain);
    }

    /// Games 0..7 of seed `seed` with `settings`, as handed over (sparring flag included),
    /// Black's searches evaluating with rollouts.
    fn sparring_games(settings: &SelfPlaySettings, seed: u64) -> Vec<GameRecord> {
        let mut games = Vec::new();
        let rollouts = |w: usize| RolloutEvaluator::new(70 + w as u64, 50);
        play::<_, _, _, SearchError>(settings, seed, 0, 7, rollouts, |g, _| {
            games.push(g);
            Ok(())
        })
        .unwrap();
        games
    }

    #[test]
    fn in_sparring_games_white_plays_the_alpha_beta_moves_and_only_black_is_recorded() {
        let mut s = settings(2);
        s.config.sparring_fraction = 1.0;
        s.config.sparring_depth = 2;
        let games = sparring_games(&s, 8);
        assert_eq!(games.len(), 7);
        let (mut white_moves, mut black_recorded) = (0, 0);
        for g in &games {
            assert!(g.sparring);
            g.validate().unwrap();
            let mut game = Game::new(g.start);
            let mut recorded = g.positions.iter().map(|p| p.ply as usize).peekable();
            for (ply, &mv) in g.moves.iter().enumerate() {
                let side = game.side_to_move();
                if ply >= 2 && side == Side::White {
                    // Past the random opening plies, every White move is the alpha-beta's
                    // (deterministic, so replaying it gives the same move).
                    let mut ab = AlphaBetaPlayer::new(AlphaBetaConfig {
                        max_depth: 2,
                        time_limit: None,
                        ply_cap: Some(30),
                    })
                    .unwrap();
                    assert_eq!(ab.search(&game).unwrap().best_move, mv, "ply {ply}");
                    white_moves += 1;
                }
                if recorded.peek() == Some(&ply) {
                    recorded.next();
                    assert_eq!(side, Side::Black, "a White position was recorded");
                    black_recorded += 1;
                }
                game.play(mv).unwrap();
            }
            assert!(recorded.next().is_none());
        }
        assert!(white_moves > 20 && black_recorded > 10);
        // Black's searches make the games vary: not every game is the same line.
        assert!(games.iter().any(|g| g.moves != games[0].moves));
    }

    #[test]
    fn a_sparring_game_the_alpha_beta_wins_at_once_is_handed_over_whole() {
        // A game whose position after its first move lets White's King step into a1
        // (RULES.md rule 8.1: the King on a corner wins): every game forks there, and the
        // alpha-beta White wins before any search, so the game ends as it starts.
        let start: Position = "3A3/3A3/7/AA3AA/7/K6/3A3 b".parse().unwrap();
        let mut line = Game::new(start);
        let black: Move = "d7-e7".parse().unwrap();
        let escape: Move = "a2-a1".parse().unwrap();
        line.play(black).unwrap();
        line.play(escape).unwrap();
        let pool = GameRecord {
            start,
            moves: vec![black, escape],
            result: GameResult::Finished(line.outcome().unwrap()),
            positions: Vec::new(),
            sparring: false,
        };
        let mut s = settings(2);
        s.config.sparring_fraction = 1.0;
        s.config.fork_fraction = 1.0;
        s.forks = Arc::new(ForkPool::new([&pool]));
        let games = sparring_games(&s, 9);
        assert_eq!(games.len(), 7);
        for g in games {
            assert!(g.sparring);
            assert_eq!(g.moves, vec![black, escape]);
            assert!(g.positions.is_empty());
            assert_eq!(g.result.winner(), Some(Side::White));
            g.validate().unwrap();
        }
    }

    #[test]
    fn a_sparring_fraction_makes_about_that_share_of_games_sparring_games() {
        let mut s = settings(1);
        s.config.sparring_fraction = 0.25;
        let sparring = (0..400)
            .filter(|&i| s.start_game(i, game_seed(3, i)).unwrap().0.record.sparring)
            .count();
        assert!((70..=130).contains(&sparring), "{sparring} of 400");
    }

    #[test]
    fn a_fork_fraction_forks_about_that_share_of_games() {
        let (pool, _) = collect(1, 5);
        let mut s = settings(1);
        s.config.fork_fraction = 0.5;
        s.forks = Arc::new(ForkPool::new(&pool));
        let forked = (0..200)
            .filter(|&i| {
                let slot = s.start_game(i, game_seed(3, i)).unwrap().0;
                // A forked game starts with the pool line's moves and no recorded
                // position: what came before the fork is no training target.
                assert_eq!(slot.record.moves.len(), slot.search.game().ply());
                assert!(slot.record.positions.is_empty());
                assert!(slot.first_ply == 0 || slot.first_ply == slot.record.moves.len());
                slot.first_ply > 0
            })
            .count();
        assert!((70..=130).contains(&forked), "{forked} of 200 forked");
    }

    #[test]
    fn a_callback_error_stops_the_session() {
        let mut seen = 0;
        let r = play::<_, _, _, Box<dyn std::error::Error>>(
            &settings(2),
            3,
            0,
            50,
            |_| UniformEvaluator,
            |_, _| {
                seen += 1;
                if seen == 2 {
                    Err("disk full".into())
                } else {
                    Ok(())
                }
            },
        );
        assert_eq!(r.unwrap_err().to_string(), "disk full");
        assert_eq!(seen, 2);
    }
}
