//! [`Thinker`]: an agent's search over one game that lives from move to move. It keeps the
//! subtree of the moves actually played (its own and the opponent's) instead of searching
//! each position from scratch, and thinks for a number of simulations or until a deadline.
//!
//! `brandubh play`, `brandubh analyze` and `brandubh engine` all search through it.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use brandubh_net::NetEvaluator;
use brandubh_rules::{Game, KingCapture, KingRule, Move};
use brandubh_search::{
    AlgorithmConfig, Evaluator, Leaf, MAX_SIMULATIONS, Player, Proven, Search, SearchConfig,
    SearchError,
};

use crate::agent::{Agent, Analysis, Budget, MoveStats};
use crate::error::AgentError;

/// Most leaves one network call may take ([`Thinker::set_batch`]).
pub const MAX_BATCH: usize = 256;

/// Gumbel plans its sequential halving for this share more simulations than the measured
/// rate says fit in the time, so that a slightly faster search is not left idle; the
/// deadline stops it either way.
const GUMBEL_PLAN_MARGIN: f64 = 1.25;

/// A stateful searcher for one game (see the module documentation).
///
/// ```
/// use brandubh_agent::{Agent, AgentMeta, Budget, SourceInfo, TrainingInfo};
/// use brandubh_search::SearchSettings;
/// use brandubh_net::{Device, NetConfig};
/// use brandubh_rules::Game;
///
/// let model = NetConfig::new().with_channels(8).with_blocks(1).init(&Device::flex());
/// let meta = AgentMeta::new("tiny", SearchSettings::default(), TrainingInfo::default(),
///                           SourceInfo::default());
/// let agent = Agent::from_model(&model, meta, "tiny.agent")?;
/// let mut thinker = agent.thinker(7)?;
/// let mut game = Game::default();
/// let first = thinker.think(&game, Budget::Simulations(32))?;
/// game.play(first.best_move).unwrap();
/// let reply = thinker.think(&game, Budget::Simulations(32))?;
/// // The subtree of the move played was kept: its visits are counted as reused.
/// assert_eq!(first.simulations, 32);
/// assert!(reply.reused > 0);
/// # Ok::<(), brandubh_agent::AgentError>(())
/// ```
#[derive(Debug)]
pub struct Thinker {
    evaluator: NetEvaluator,
    config: SearchConfig,
    path: PathBuf,
    seed: u64,
    searches: u64,
    reuse: bool,
    batch: usize,
    /// Simulations per second measured so far (0: not yet), for Gumbel's plan.
    rate: f64,
    search: Option<Search>,
    /// Set by another thread to end the running search now ([`Thinker::set_halt`]).
    halt: Option<Arc<AtomicBool>>,
    /// The King capture of a host that referees the games ([`Thinker::set_referee`]).
    referee: Option<KingCapture>,
}

impl Agent {
    /// A [`Thinker`] with this agent's search settings (no noise, no ply cap), seeded with
    /// `seed`, keeping subtrees between moves and sending one leaf per network call.
    pub fn thinker(&self, seed: u64) -> Result<Thinker, AgentError> {
        Ok(Thinker {
            evaluator: self.evaluator(),
            config: self.search_config(None, None)?,
            path: self.path().to_path_buf(),
            seed,
            searches: 0,
            reuse: true,
            batch: 1,
            rate: 0.0,
            search: None,
            halt: None,
            referee: None,
        })
    }
}

impl Thinker {
    /// Whether the subtree of the moves played is kept between searches (default on). Off,
    /// every search starts from an empty tree (for measuring what reuse gains).
    pub fn set_reuse(&mut self, reuse: bool) {
        self.reuse = reuse;
        if !reuse {
            self.search = None;
        }
    }

    /// Leaves per network call, 1 to [`MAX_BATCH`] (default 1: plain sequential MCTS).
    /// Above 1, the leaves of one call are spread by virtual loss.
    pub fn set_batch(&mut self, leaves: usize) {
        self.batch = leaves.clamp(1, MAX_BATCH);
    }

    /// Treats ply `cap` as the end of the game in the searches (`None`: no cap). Drops the
    /// tree kept so far.
    pub fn set_ply_cap(&mut self, cap: Option<u32>) {
        self.config.ply_cap = cap;
        self.search = None;
    }

    /// A flag that ends the searches as soon as another thread sets it (read after every
    /// network call): the move is then the best found so far ([`Search::run_halting`]).
    /// `None`: only the budget ends them (default).
    pub fn set_halt(&mut self, halt: Option<Arc<AtomicBool>>) {
        self.halt = halt;
    }

    /// A host referees the games by its own King capture `host` (OpenTafl's `ks:`), or
    /// none (`None`, the default: the game's own rule). With a host, every search is by
    /// [`KingRule::guarded`] for the side to move: its own King captures count only where
    /// both RULES.md and the host see them, the opponent's where either does. Drops the
    /// tree kept so far.
    pub fn set_referee(&mut self, host: Option<KingCapture>) {
        self.referee = host;
        self.search = None;
    }

    /// Forgets the tree kept so far (a new game).
    pub fn clear(&mut self) {
        self.search = None;
    }

    /// The search settings (its `simulations` is the file's default budget).
    #[must_use]
    pub fn config(&self) -> &SearchConfig {
        &self.config
    }

    /// Simulations per second of the searches so far (0 before the first timed one).
    #[must_use]
    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// Searches the current position of `game` within `budget` and reports every root move.
    ///
    /// When `game` continues the game of the last search (same start, the moves searched
    /// then followed by the moves played since), the tree is carried over those moves and
    /// its visits are kept ([`Analysis::reused`]); otherwise the search starts afresh.
    /// `Budget::Simulations(n)` runs exactly `n` new simulations; `Budget::Time(t)` runs
    /// until `t` has passed since this call (checked after every network call).
    pub fn think(&mut self, game: &Game, budget: Budget) -> Result<Analysis, AgentError> {
        let t0 = Instant::now();
        let deadline = match budget {
            Budget::Simulations(_) => None,
            Budget::Time(t) => Some(t0 + t),
        };
        self.think_until(game, budget, deadline)
    }

    /// [`Thinker::think`] with the deadline given as an instant (e.g. counted from when a
    /// host's clock started); `budget` gives the plan for a time budget.
    pub fn think_until(
        &mut self,
        game: &Game,
        budget: Budget,
        deadline: Option<Instant>,
    ) -> Result<Analysis, AgentError> {
        let path = self.path.clone();
        let search_err = |cause| AgentError::Search {
            path: path.clone(),
            cause,
        };
        if game.is_over() {
            return Err(search_err(SearchError::GameOver));
        }
        let t0 = Instant::now();
        let simulations = match budget {
            Budget::Simulations(n) => n.clamp(1, MAX_SIMULATIONS),
            Budget::Time(t) => self.plan_for(t, game),
        };
        let mut search = self.take_search(game, simulations).map_err(search_err)?;
        let reused = search.tree().node(search.tree().root()).visits();
        let result = match (&self.halt, deadline) {
            (Some(halt), d) => search.run_halting(&mut self.evaluator, self.batch, d, halt),
            (None, Some(d)) => search.run_until(&mut self.evaluator, self.batch, d),
            (None, None) => search.run(&mut self.evaluator, self.batch),
        }
        .map_err(search_err)?;
        let elapsed = t0.elapsed();
        if deadline.is_some() {
            self.record_rate(result.simulations, elapsed);
        }
        let net_value = self.net_value(game);
        let analysis = analysis_of(&search, &result, net_value, elapsed, reused);
        self.search = self.reuse.then_some(search);
        Ok(analysis)
    }

    /// Searches until `deadline` whatever the budget's plan, for an analysis that is given a
    /// fixed time: a timed Gumbel search plans its simulations from the measured speed and
    /// can end well before its deadline, so the search goes on over the kept tree (new
    /// searches of the same root) while a tenth of the time, and at least 20 ms, is left.
    /// The analysis is the last search's, with every search's simulations.
    pub fn think_to(&mut self, game: &Game, deadline: Instant) -> Result<Analysis, AgentError> {
        let start = Instant::now();
        let time = deadline.saturating_duration_since(start);
        let enough = (time / 10).max(Duration::from_millis(20));
        let mut analysis = self.think_until(game, Budget::Time(time), Some(deadline))?;
        while self.reuse {
            let left = deadline.saturating_duration_since(Instant::now());
            if left < enough {
                break;
            }
            let more = self.think_until(game, Budget::Time(left), Some(deadline))?;
            if more.simulations == 0 {
                // Nothing left to search (a proven root).
                break;
            }
            analysis = Analysis {
                simulations: analysis.simulations + more.simulations,
                reused: analysis.reused,
                elapsed: start.elapsed(),
                ..more
            };
        }
        Ok(analysis)
    }

    /// The most visited line of the kept tree from the last search's root, starting with
    /// `first`, at most `max_len` moves (just `first` when it is not in the tree).
    #[must_use]
    pub fn principal_line(&self, first: Move, max_len: usize) -> Vec<Move> {
        let mut line = vec![first];
        let Some(search) = &self.search else {
            return line;
        };
        let tree = search.tree();
        let mut node = tree
            .children(tree.root())
            .find(|&c| tree.node(c).mv() == Some(first));
        while let Some(id) = node {
            if line.len() >= max_len {
                break;
            }
            let next = tree
                .children(id)
                .filter(|&c| tree.node(c).visits() > 0)
                .max_by_key(|&c| tree.node(c).visits());
            if let Some(mv) = next.and_then(|c| tree.node(c).mv()) {
                line.push(mv);
            }
            node = next;
        }
        line
    }

    /// The kept search moved on to `game` with a fresh budget, or a new one; either way by
    /// the King-capture rule of [`Thinker::set_referee`].
    fn take_search(&mut self, game: &Game, simulations: u32) -> Result<Search, SearchError> {
        let rule = self.referee.map_or(game.king_rule(), |host| {
            KingRule::guarded(game.side_to_move(), host)
        });
        let kept = self
            .search
            .take()
            .filter(|s| s.game().king_rule() == rule)
            .and_then(|s| s.follow(game));
        let mut search = match kept {
            Some(s) => s,
            None => {
                self.searches += 1;
                let mut searched = game.clone();
                searched.set_king_rule(rule);
                Search::new(
                    searched,
                    self.config.clone(),
                    self.seed.wrapping_add(self.searches),
                )?
            }
        };
        search.renew(simulations)?;
        Ok(search)
    }

    /// The simulation budget for a search of about `time`: no limit but
    /// [`MAX_SIMULATIONS`] for PUCT (the deadline stops it); for Gumbel, whose sequential
    /// halving is planned for a budget, what the measured rate says fits (a short
    /// calibration before the first timed search).
    fn plan_for(&mut self, time: Duration, game: &Game) -> u32 {
        if matches!(self.config.algorithm, AlgorithmConfig::Puct(_)) {
            return MAX_SIMULATIONS;
        }
        if self.rate <= 0.0 {
            let leaf = [Leaf::from_game(game)];
            let t0 = Instant::now();
            let n = 16;
            for _ in 0..n {
                let _ = self.evaluator.evaluate(&leaf);
            }
            self.rate = f64::from(n) / t0.elapsed().as_secs_f64().max(1e-9) * 0.8;
        }
        (self.rate * time.as_secs_f64() * GUMBEL_PLAN_MARGIN).clamp(1.0, f64::from(MAX_SIMULATIONS))
            as u32
    }

    /// Remembers the speed of a timed search (a running mean favouring recent searches).
    fn record_rate(&mut self, simulations: u32, elapsed: Duration) {
        if simulations < 8 || elapsed.is_zero() {
            return;
        }
        let measured = f64::from(simulations) / elapsed.as_secs_f64();
        self.rate = if self.rate > 0.0 {
            0.5 * self.rate + 0.5 * measured
        } else {
            measured
        };
    }

    fn net_value(&mut self, game: &Game) -> f32 {
        self.evaluator
            .evaluate(&[Leaf::from_game(game)])
            .pop()
            .map_or(0.0, |e| e.value)
    }
}

/// A [`Player`] (for matches) that thinks with a [`Thinker`] for a fixed [`Budget`] per
/// move.
#[derive(Debug)]
pub struct ThinkerPlayer {
    thinker: Thinker,
    budget: Budget,
}

impl ThinkerPlayer {
    /// Plays with `thinker`, `budget` per move.
    #[must_use]
    pub fn new(thinker: Thinker, budget: Budget) -> ThinkerPlayer {
        ThinkerPlayer { thinker, budget }
    }

    /// The thinker (for its measured rate).
    #[must_use]
    pub fn thinker(&self) -> &Thinker {
        &self.thinker
    }
}

impl Player for ThinkerPlayer {
    fn name(&self) -> String {
        let budget = match self.budget {
            Budget::Simulations(n) => format!("{n} simulations"),
            Budget::Time(t) => format!("{} ms", t.as_millis()),
        };
        let reuse = if self.thinker.reuse { "" } else { ", no reuse" };
        format!("agent({budget}{reuse})")
    }

    fn choose(&mut self, game: &Game) -> Result<Move, SearchError> {
        match self.thinker.think(game, self.budget) {
            Ok(a) => Ok(a.best_move),
            Err(AgentError::Search { cause, .. }) => Err(cause),
            // `think` fails only in the search.
            Err(_) => Err(SearchError::GameOver),
        }
    }
}

/// The report of a finished search: every root move, the best first, then by visits and
/// prior.
fn analysis_of(
    search: &Search,
    result: &brandubh_search::SearchResult,
    net_value: f32,
    elapsed: Duration,
    reused: u32,
) -> Analysis {
    let tree = search.tree();
    let root = tree.root();
    let mut moves: Vec<MoveStats> = tree
        .children(root)
        .zip(&result.policy)
        .map(|(child, &policy)| {
            let node = tree.node(child);
            let proven = node.proven().map(Proven::parent_view);
            MoveStats {
                mv: node.mv().unwrap_or(result.best_move),
                visits: node.visits(),
                prior: node.prior(),
                policy,
                // A child's value is from its own side to move's view: the opponent's.
                q: proven
                    .map(|p| f32::from(p.value))
                    .or_else(|| (node.visits() > 0).then(|| -node.value())),
                proven,
            }
        })
        .collect();
    let best = result.best_move;
    moves.sort_by(|a, b| {
        (b.mv == best)
            .cmp(&(a.mv == best))
            .then(b.visits.cmp(&a.visits))
            .then(b.prior.total_cmp(&a.prior))
    });
    Analysis {
        best_move: best,
        value: result.value,
        net_value,
        moves,
        simulations: result.simulations,
        reused,
        elapsed,
    }
}
