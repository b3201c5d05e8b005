//! Playing matches: [`run_matches`] plays N two-game matches between two agents in
//! parallel, each from its own seeded opening, and sums them up in a [`MatchReport`].
//!
//! Results do not depend on the number of threads: every game's players are seeded from
//! the match seed, the match index and the game, and the reports list matches in order.
//! (Agents with a time limit are the exception: how deep they get depends on the machine.)

use std::fmt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::time::Instant;

use brandubh_rules::Reason;
use serde::{Deserialize, Serialize};

pub use crate::agent::DEFAULT_PLY_CAP;
use crate::agent::PlayerFactory;
use crate::elo::EloInterval;
use crate::error::EvalError;
pub use crate::game::{PlayedGame, play_match_game, player_seed};
use crate::openings::{Opening, OpeningConfig, Openings};
use crate::scoring::{Contestant, MatchGame, MatchResult, score_match};
use crate::sprt::{Sprt, SprtReport};
use crate::table::{self, GameTask, Series};

/// Most matches one call may play.
pub const MAX_MATCHES: u32 = 1_000_000;
/// Highest ply cap.
pub const MAX_PLY_CAP: u32 = 10_000;

/// How a series of matches is played.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatchConfig {
    /// Matches (two games each), 1 to [`MAX_MATCHES`]. Default 20.
    pub matches: u32,
    /// Worker threads; 0 uses every core. Default 0.
    pub threads: usize,
    /// Seed of the openings and of every player. Default 0.
    pub seed: u64,
    /// A game still running after this many plies (opening included) stops unfinished,
    /// 1 to [`MAX_PLY_CAP`]. Default [`DEFAULT_PLY_CAP`].
    pub ply_cap: u32,
    /// How openings are drawn.
    pub openings: OpeningConfig,
    /// Index of the first match: matches `first_match..first_match + matches` of the seed's
    /// stream are played (their openings and seeds), so more can be added later. Default 0.
    pub first_match: u32,
}

impl Default for MatchConfig {
    fn default() -> Self {
        MatchConfig {
            matches: 20,
            threads: 0,
            seed: 0,
            ply_cap: DEFAULT_PLY_CAP,
            openings: OpeningConfig::default(),
            first_match: 0,
        }
    }
}

impl MatchConfig {
    /// Checks every field; the error names the first bad one.
    pub fn validate(&self) -> Result<(), EvalError> {
        if !(1..=MAX_MATCHES).contains(&self.matches) {
            return Err(EvalError::setting("matches", self.matches, "1 to 1000000"));
        }
        if !(1..=MAX_PLY_CAP).contains(&self.ply_cap) {
            return Err(EvalError::setting("ply_cap", self.ply_cap, "1 to 10000"));
        }
        if self.threads > 1024 {
            return Err(EvalError::setting(
                "threads",
                self.threads,
                "0 (all cores) to 1024",
            ));
        }
        if self.first_match.checked_add(self.matches).is_none() {
            return Err(EvalError::setting(
                "first_match",
                self.first_match,
                "a smaller index",
            ));
        }
        self.openings.validate()
    }
}

/// One match: its opening and both games (A is White in the first, B in the second).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MatchRecord {
    /// Index of the match in its seed's stream.
    pub index: u32,
    /// The opening's moves, space-separated (`"d5-c5 c7-c6"`).
    pub opening: String,
    /// The two games.
    pub games: [MatchGame; 2],
    /// The result (RULES.md, "Matches").
    pub result: MatchResult,
    /// Each game's moves from the start position, the opening's included, space-separated
    /// (`brandubh replay` and `brandubh analyze` take them as they are). Empty in reports
    /// written before the moves were kept.
    #[serde(default)]
    pub moves: [String; 2],
}

/// Wins, draws and losses, from one contestant's view.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// Won.
    pub wins: u32,
    /// Drawn.
    pub draws: u32,
    /// Lost.
    pub losses: u32,
}

impl Record {
    /// Counts one result for `who`.
    pub fn add(&mut self, result: MatchResult, who: Contestant) {
        match result.winner() {
            Some(w) if w == who => self.wins += 1,
            Some(_) => self.losses += 1,
            None => self.draws += 1,
        }
    }

    /// Total counted.
    #[must_use]
    pub const fn total(&self) -> u32 {
        self.wins + self.draws + self.losses
    }

    /// (wins + draws/2) / total; 0.5 when empty.
    #[must_use]
    pub fn score(&self) -> f64 {
        if self.total() == 0 {
            0.5
        } else {
            (f64::from(self.wins) + 0.5 * f64::from(self.draws)) / f64::from(self.total())
        }
    }
}

/// Game-level counts of a series of matches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameStats {
    /// Games played.
    pub games: u32,
    /// Games A won playing White.
    pub a_wins_as_white: u32,
    /// Games A won playing Black.
    pub a_wins_as_black: u32,
    /// Games B won playing White.
    pub b_wins_as_white: u32,
    /// Games B won playing Black.
    pub b_wins_as_black: u32,
    /// Games stopped by the ply cap.
    pub unfinished: u32,
    /// How A's White wins ended.
    #[serde(default)]
    pub a_wins_as_white_by: WinsBy,
    /// How A's Black wins ended: repetition wins (rule 8.4) are legal wins, but they count
    /// apart here, so that a report shows how much of Black's score comes from them.
    #[serde(default)]
    pub a_wins_as_black_by: WinsBy,
    /// How B's White wins ended.
    #[serde(default)]
    pub b_wins_as_white_by: WinsBy,
    /// How B's Black wins ended.
    #[serde(default)]
    pub b_wins_as_black_by: WinsBy,
}

/// Won games counted by how they ended (rule 8).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct WinsBy {
    /// The King reached a corner (8.1).
    pub king_escaped: u32,
    /// The King was captured (8.2).
    pub king_captured: u32,
    /// White was encircled (8.3).
    pub encirclement: u32,
    /// A position occurred for the fifth time (8.4).
    pub repetition: u32,
    /// The loser had no legal move (8.5).
    pub no_moves: u32,
}

impl WinsBy {
    /// Counts one win that ended for `reason`.
    pub fn add(&mut self, reason: Reason) {
        *match reason {
            Reason::KingEscaped => &mut self.king_escaped,
            Reason::KingCaptured => &mut self.king_captured,
            Reason::Encirclement => &mut self.encirclement,
            Reason::Repetition => &mut self.repetition,
            Reason::NoMoves => &mut self.no_moves,
        } += 1;
    }

    /// Wins counted, repetition wins included.
    #[must_use]
    pub const fn total(&self) -> u32 {
        self.king_escaped + self.king_captured + self.encirclement + self.repetition + self.no_moves
    }

    /// Wins counted, repetition wins left out.
    #[must_use]
    pub const fn without_repetition(&self) -> u32 {
        self.total() - self.repetition
    }
}

impl std::ops::Add for WinsBy {
    type Output = WinsBy;

    /// Both counts, reason by reason (e.g. White's wins of both players).
    fn add(self, other: WinsBy) -> WinsBy {
        WinsBy {
            king_escaped: self.king_escaped + other.king_escaped,
            king_captured: self.king_captured + other.king_captured,
            encirclement: self.encirclement + other.encirclement,
            repetition: self.repetition + other.repetition,
            no_moves: self.no_moves + other.no_moves,
        }
    }
}

impl fmt::Display for WinsBy {
    /// `escape 40, repetition 3`: the reasons that occurred, or `none`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let counts = [
            ("escape", self.king_escaped),
            ("capture", self.king_captured),
            ("encirclement", self.encirclement),
            ("repetition", self.repetition),
            ("no moves", self.no_moves),
        ];
        let shown: Vec<String> = counts
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(name, n)| format!("{name} {n}"))
            .collect();
        if shown.is_empty() {
            f.write_str("none")
        } else {
            f.write_str(&shown.join(", "))
        }
    }
}

impl GameStats {
    /// Counts one game of a match.
    fn add(&mut self, game: &MatchGame) {
        self.games += 1;
        let (Some(winner), Some(reason)) = (game.winner, game.reason) else {
            self.unfinished += 1;
            return;
        };
        let (count, by) = match (winner, game.white == winner) {
            (Contestant::A, true) => (&mut self.a_wins_as_white, &mut self.a_wins_as_white_by),
            (Contestant::A, false) => (&mut self.a_wins_as_black, &mut self.a_wins_as_black_by),
            (Contestant::B, true) => (&mut self.b_wins_as_white, &mut self.b_wins_as_white_by),
            (Contestant::B, false) => (&mut self.b_wins_as_black, &mut self.b_wins_as_black_by),
        };
        *count += 1;
        by.add(reason);
    }
}

/// What the matches of [`run_matches`] came to. Serializes to the JSON printed by
/// `brandubh match --json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchReport {
    /// Agent A (canonical spec or label).
    pub a: String,
    /// Agent B.
    pub b: String,
    /// The seed of openings and players.
    pub seed: u64,
    /// The ply cap.
    pub ply_cap: u32,
    /// Matches played.
    pub matches: u32,
    /// A's match record.
    pub record: Record,
    /// A's match score: (wins + draws/2) / matches.
    pub match_score: f64,
    /// Game counts.
    pub games: GameStats,
    /// A's game score: (games won + unfinished/2) / games.
    pub game_score: f64,
    /// Mean length of the games, in plies (openings included).
    pub mean_game_plies: f64,
    /// Elo of A minus Elo of B with its 95 % interval, from the **game** score (the scale
    /// of the Bradley–Terry ladder, which also rates games). The interval is a Wilson
    /// interval that takes each *match* as one trial scoring its mean game points (0, ½
    /// or 1): the two games of a match share an opening and are not independent, and
    /// counting them as one trial is the conservative choice. `null` bounds in JSON are
    /// unbounded (a game score of exactly 0 or 1).
    pub elo: EloInterval,
    /// Wall time, in seconds.
    pub seconds: f64,
    /// The machine the matches were played on ([`brandubh_fs::cpu_description`]); empty
    /// where unknown (a report summed from stored games, or written before it was kept).
    #[serde(default)]
    pub cpu: String,
    /// The sequential test that decided when to stop (`brandubh match --sprt`), if one did;
    /// `match_records` then holds the matches it counted. Absent from the JSON otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sprt: Option<SprtReport>,
    /// Every match, in index order.
    pub match_records: Vec<MatchRecord>,
}

impl MatchReport {
    /// Sums up `records` (matches between `a` and `b`).
    #[must_use]
    pub fn from_records(
        a: String,
        b: String,
        seed: u64,
        ply_cap: u32,
        match_records: Vec<MatchRecord>,
        seconds: f64,
    ) -> MatchReport {
        let mut record = Record::default();
        let mut games = GameStats::default();
        let mut a_points = 0.0;
        let mut plies = 0u64;
        for m in &match_records {
            record.add(m.result, Contestant::A);
            for g in &m.games {
                games.add(g);
                plies += u64::from(g.plies);
                a_points += g.points(Contestant::A);
            }
        }
        let n = match_records.len() as u32;
        let game_score = if games.games == 0 {
            0.5
        } else {
            a_points / f64::from(games.games)
        };
        MatchReport {
            a,
            b,
            seed,
            ply_cap,
            matches: n,
            record,
            match_score: record.score(),
            games,
            game_score,
            mean_game_plies: if games.games == 0 {
                0.0
            } else {
                plies as f64 / f64::from(games.games)
            },
            elo: EloInterval::from_score(game_score, f64::from(n)),
            seconds,
            cpu: String::new(),
            sprt: None,
            match_records,
        }
    }

    /// Whether A scores at least `threshold` of the matches (gating a new network).
    #[must_use]
    pub fn passes(&self, threshold: f64) -> bool {
        self.match_score >= threshold
    }

    /// The match record of A as a line item of the training metrics (`metrics.jsonl`),
    /// against `opponent` (e.g. `"previous"`).
    #[must_use]
    pub fn summary(&self, opponent: &str) -> brandubh_run::metrics::MatchSummary {
        brandubh_run::metrics::MatchSummary {
            opponent: opponent.to_owned(),
            matches: self.matches,
            wins: self.record.wins,
            draws: self.record.draws,
            losses: self.record.losses,
            sprt: self.sprt.as_ref().map(SprtReport::summary),
        }
    }
}

/// `+123`, `-45`, `+inf`, `-inf`.
pub(crate) fn signed(v: f64) -> String {
    if v.is_nan() {
        "?".to_owned()
    } else if v.is_infinite() {
        if v > 0.0 { "+inf" } else { "-inf" }.to_owned()
    } else {
        format!("{v:+.0}")
    }
}

impl fmt::Display for MatchReport {
    /// A few lines for people, naming the agents A and B after the first line; `--json`
    /// gives everything.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = &self.record;
        let g = &self.games;
        writeln!(
            f,
            "{} vs {}: {} matches, seed {}, ply cap {}",
            self.a, self.b, self.matches, self.seed, self.ply_cap
        )?;
        writeln!(
            f,
            "matches  A {} W / {} D / {} L (match score {:.3})",
            r.wins, r.draws, r.losses, self.match_score
        )?;
        writeln!(
            f,
            "games    A won {} as White, {} as Black; B won {} as White, {} as Black; \
             {} unfinished (A's game score {:.3})",
            g.a_wins_as_white,
            g.a_wins_as_black,
            g.b_wins_as_white,
            g.b_wins_as_black,
            g.unfinished,
            self.game_score
        )?;
        writeln!(
            f,
            "how      A as White: {}; A as Black: {}; B as White: {}; B as Black: {}",
            g.a_wins_as_white_by, g.a_wins_as_black_by, g.b_wins_as_white_by, g.b_wins_as_black_by
        )?;
        writeln!(
            f,
            "length   {:.1} plies per game on average",
            self.mean_game_plies
        )?;
        write!(
            f,
            "elo      A - B = {} (95% interval {} to {}), from the game score",
            signed(self.elo.elo),
            signed(self.elo.low),
            signed(self.elo.high)
        )?;
        if let Some(t) = &self.sprt {
            write!(f, "\n{t}")?;
        }
        Ok(())
    }
}

/// Progress of [`run_matches`], given to its callback after every finished match.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Progress {
    /// Matches finished.
    pub done: u32,
    /// Matches to play.
    pub total: u32,
    /// A's record so far.
    pub record: Record,
    /// With a sequential test: its log-likelihood ratio after the matches counted so far
    /// (`done` of them, in index order).
    pub llr: Option<f64>,
}

/// Feeds the results of a series to a sequential test in match-index order only: a match
/// that finishes early waits until every match before it is in. The test thus sees the same
/// sequence of results, and stops at the same match, whatever the number of threads and
/// whichever games happen to be quick; stopping at the first results to arrive would favour
/// the outcomes of short games.
///
/// Workers start a match only within a window of matches ahead of those counted
/// ([`InOrder::admits`]): a long game holding up the count would otherwise let the others
/// play far past the point where the test stops (a first version played 127 matches past
/// a stop at 36, v5 against v1).
struct InOrder<'a> {
    sprt: &'a Sprt,
    state: Mutex<InOrderState>,
    /// Set when the test has decided: workers take no more games.
    halt: AtomicBool,
    /// Matches counted so far (as in the state, readable without its lock).
    counted: AtomicUsize,
    /// Matches a worker may start beyond those counted.
    window: usize,
}

/// What [`InOrder`] has seen.
struct InOrderState {
    /// Each match's result, once both its games are in.
    results: Vec<Option<MatchResult>>,
    /// Matches `0..counted` are counted in `record`.
    counted: usize,
    record: Record,
    stopped: bool,
}

impl<'a> InOrder<'a> {
    /// The test `sprt` over `matches` matches played on `threads` workers: each may start a
    /// match up to as many matches ahead of the count as all workers' tables hold games,
    /// so that every worker can keep its tables full while the count moves.
    fn new(sprt: &'a Sprt, matches: usize, threads: usize) -> InOrder<'a> {
        InOrder {
            sprt,
            state: Mutex::new(InOrderState {
                results: vec![None; matches],
                counted: 0,
                record: Record::default(),
                stopped: false,
            }),
            halt: AtomicBool::new(false),
            counted: AtomicUsize::new(0),
            window: threads * table::TABLES_PER_WORKER,
        }
    }

    /// Whether match `m` (within the series) may be started now.
    fn admits(&self, m: usize) -> bool {
        m < self.counted.load(Ordering::SeqCst) + self.window
    }

    /// Files match `m`'s result and counts every match that is now next in order, until
    /// the test stops. The progress, if anything was counted.
    fn finished(&self, m: usize, result: MatchResult, total: u32) -> Option<Progress> {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.results[m] = Some(result);
        let before = s.counted;
        while !s.stopped {
            let Some(Some(next)) = s.results.get(s.counted).copied() else {
                break;
            };
            s.record.add(next, Contestant::A);
            s.counted += 1;
            self.counted.store(s.counted, Ordering::SeqCst);
            if self.sprt.decide(&s.record).is_some() {
                s.stopped = true;
                self.halt.store(true, Ordering::SeqCst);
            }
        }
        (s.counted > before).then(|| Progress {
            done: s.counted as u32,
            total,
            record: s.record,
            llr: Some(self.sprt.llr(&s.record)),
        })
    }

    /// The matches counted and A's record over them.
    fn counted(&self) -> (usize, Record) {
        let s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        (s.counted, s.record)
    }
}

/// Plays both games of every match of `series` on `threads` batched workers
/// ([`table::work`]), calling `progress` as matches finish (with `in_order`, as they are
/// counted, until its test stops the series); returns each match's games, `None` for a
/// match left unplayed or unfinished after the stop.
fn play_series(
    series: &Series<'_>,
    threads: usize,
    progress: &(dyn Fn(&Progress) + Sync),
    in_order: Option<&InOrder<'_>>,
) -> Result<Vec<Option<[PlayedGame; 2]>>, EvalError> {
    let matches = series.openings.len();
    // Both games of a match go to the same worker in turn, so that a match finishes early.
    let tasks: Vec<GameTask> = (0..matches)
        .flat_map(|m| [GameTask { m, game: 0 }, GameTask { m, game: 1 }])
        .collect();
    // Each match's first finished game waits here for its second one.
    let halves: Vec<Mutex<[Option<PlayedGame>; 2]>> =
        (0..matches).map(|_| Mutex::new([None, None])).collect();
    let done = AtomicU32::new(0);
    let tally = Mutex::new(Record::default());
    let finished = |task: GameTask, played: PlayedGame| -> Result<(), EvalError> {
        let pair = {
            let mut half = halves[task.m].lock().unwrap_or_else(|e| e.into_inner());
            half[task.game as usize] = Some(played);
            match &*half {
                [Some(g1), Some(g2)] => Some((g1.record, g2.record)),
                _ => None,
            }
        };
        let Some((g1, g2)) = pair else {
            return Ok(());
        };
        let result = score_match(&g1, &g2);
        if let Some(in_order) = in_order {
            if let Some(p) = in_order.finished(task.m, result, matches as u32) {
                progress(&p);
            }
            return Ok(());
        }
        let record_now = {
            let mut t = tally.lock().unwrap_or_else(|e| e.into_inner());
            t.add(result, Contestant::A);
            *t
        };
        let done = done.fetch_add(1, Ordering::SeqCst) + 1;
        progress(&Progress {
            done,
            total: matches as u32,
            record: record_now,
            llr: None,
        });
        Ok(())
    };
    let never = AtomicBool::new(false);
    let in_window = |m: usize| in_order.is_none_or(|o| o.admits(m));
    let gate = table::Gate {
        halt: in_order.map_or(&never, |o| &o.halt),
        admit: &in_window,
    };
    run_workers(series, &tasks, threads, &gate, &finished)?;
    Ok(halves
        .into_iter()
        .map(
            |half| match half.into_inner().unwrap_or_else(|e| e.into_inner()) {
                [Some(g1), Some(g2)] => Some([g1, g2]),
                _ => None,
            },
        )
        .collect())
}

/// Plays `tasks` on `threads` workers ([`table::work`]) as `gate` admits them.
fn run_workers(
    series: &Series<'_>,
    tasks: &[GameTask],
    threads: usize,
    gate: &table::Gate<'_>,
    finished: &(dyn Fn(GameTask, PlayedGame) -> Result<(), EvalError> + Sync),
) -> Result<(), EvalError> {
    let next = AtomicUsize::new(0);
    let worker_failed = |cause: &str| EvalError::Threads {
        threads,
        cause: cause.to_owned(),
    };
    // With a worker per core, each worker runs in a rayon pool of its own thread, so that
    // its network calls do not split their batches over the global pool behind the other
    // workers (self-play measured 0.8x its rate that way; see FastNet::with_parallel).
    let own_pool = threads >= std::thread::available_parallelism().map_or(1, |n| n.get());
    let work = || {
        let pool = own_pool
            .then(|| rayon::ThreadPoolBuilder::new().num_threads(1).build().ok())
            .flatten();
        match pool {
            Some(pool) => pool.install(|| table::work(series, tasks, &next, gate, finished)),
            None => table::work(series, tasks, &next, gate, finished),
        }
    };
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.min(tasks.len()).max(1))
            .map(|_| scope.spawn(work))
            .collect();
        workers
            .into_iter()
            .map(|w| {
                w.join()
                    .unwrap_or_else(|_| Err(worker_failed("a match worker panicked")))
            })
            .collect::<Result<Vec<()>, EvalError>>()
    })?;
    Ok(())
}

/// The openings of `config`'s matches and the worker threads to play them on.
fn prepare(config: &MatchConfig) -> Result<(Vec<Opening>, usize), EvalError> {
    config.validate()?;
    let openings: Vec<Opening> = Openings::with_config(config.seed, config.openings.clone())?
        .skip(config.first_match as usize)
        .take(config.matches as usize)
        .collect();
    if openings.len() < config.matches as usize {
        return Err(EvalError::setting(
            "openings",
            "too strict",
            "a config that some random openings pass",
        ));
    }
    let threads = match config.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    Ok((openings, threads))
}

/// The records of the first `n` matches of `games` (match `first + m` from `openings[m]`);
/// an error if one of them was not played.
fn match_records(
    first: usize,
    openings: &[Opening],
    games: Vec<Option<[PlayedGame; 2]>>,
    n: usize,
    threads: usize,
) -> Result<Vec<MatchRecord>, EvalError> {
    games
        .into_iter()
        .take(n)
        .enumerate()
        .map(|(m, pair)| {
            let [g1, g2] = pair.ok_or_else(|| EvalError::Threads {
                threads,
                cause: "a game was not played".to_owned(),
            })?;
            Ok(MatchRecord {
                index: (first + m) as u32,
                opening: openings[m].to_string(),
                games: [g1.record, g2.record],
                result: score_match(&g1.record, &g2.record),
                moves: [g1.moves, g2.moves],
            })
        })
        .collect()
}

/// Plays `config.matches` matches between `a` and `b` on `config.threads` threads and sums
/// them up. `progress` is called (from worker threads) after each finished match.
pub fn run_matches(
    a: &dyn PlayerFactory,
    b: &dyn PlayerFactory,
    config: &MatchConfig,
    progress: &(dyn Fn(&Progress) + Sync),
) -> Result<MatchReport, EvalError> {
    play_and_report(a, b, config, None, progress)
}

/// Plays matches between `a` and `b` as [`run_matches`] does, at most
/// `sprt.config.max_matches` of them (`config.matches` is not used), until the sequential
/// test `sprt` decides. The matches are played in parallel, but the test counts them in
/// index order only, so it stops after the same matches with the same verdict whatever
/// `config.threads` is (see [`InOrder`]). The report sums up the counted matches and
/// carries the test's verdict ([`MatchReport::sprt`]); matches that finished after the
/// stop are left out and only counted. `progress` is called as matches are counted.
pub fn run_sprt(
    a: &dyn PlayerFactory,
    b: &dyn PlayerFactory,
    config: &MatchConfig,
    sprt: &Sprt,
    progress: &(dyn Fn(&Progress) + Sync),
) -> Result<MatchReport, EvalError> {
    let config = MatchConfig {
        matches: sprt.config.max_matches,
        ..config.clone()
    };
    play_and_report(a, b, &config, Some(sprt), progress)
}

/// [`run_matches`], or with `sprt` [`run_sprt`].
fn play_and_report(
    a: &dyn PlayerFactory,
    b: &dyn PlayerFactory,
    config: &MatchConfig,
    sprt: Option<&Sprt>,
    progress: &(dyn Fn(&Progress) + Sync),
) -> Result<MatchReport, EvalError> {
    let started = Instant::now();
    let (openings, threads) = prepare(config)?;
    let series = Series {
        a,
        b,
        openings: &openings,
        first_match: config.first_match as usize,
        seed: config.seed,
        ply_cap: config.ply_cap,
    };
    let in_order = sprt.map(|t| InOrder::new(t, openings.len(), threads));
    let games = play_series(&series, threads, progress, in_order.as_ref())?;
    let counted = in_order.as_ref().map(InOrder::counted);
    let n = counted.map_or(openings.len(), |c| c.0);
    let past = games.iter().skip(n).filter(|g| g.is_some()).count() as u32;
    let records = match_records(series.first_match, &openings, games, n, threads)?;
    let mut report = MatchReport::from_records(
        a.name(),
        b.name(),
        config.seed,
        config.ply_cap,
        records,
        started.elapsed().as_secs_f64(),
    );
    report.cpu = brandubh_fs::cpu_description();
    if let (Some(t), Some((_, record))) = (sprt, counted) {
        report.sprt = Some(t.report(&record, past));
    }
    Ok(report)
}
