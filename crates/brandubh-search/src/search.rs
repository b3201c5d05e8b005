//! [`Search`]: one tree over one game, run as a loop of *gather* (hand out leaves, with
//! virtual loss) and *apply* (take their evaluations back), plus the synchronous
//! [`Search::run`] and the result of a search.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use brandubh_rules::{Game, Move, MoveList};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::config::{
    AlgorithmConfig, MAX_ROOT_PROOF_PLIES, ROOT_PROOF_NODES, SearchConfig, VERIFY_NODES,
};
use crate::error::SearchError;
use crate::evaluator::{Evaluation, Evaluator, Leaf};
use crate::forced::forced_win_until;
use crate::gumbel::{self, GumbelRoot};
use crate::puct;
use crate::solver::{self, Proven};
use crate::tree::{ROOT, State, Tree};

/// Most simulations ending on a terminal node that one [`Search::gather`] call finishes.
pub const MAX_TERMINALS_PER_GATHER: u32 = 1024;

/// What a search says about the root position.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchResult {
    /// The move to play.
    pub best_move: Move,
    /// The legal moves, in `Position::legal_moves` order; the vectors below follow it.
    pub moves: MoveList,
    /// Visits of each move (those kept from earlier searches by tree reuse included).
    pub visits: Vec<u32>,
    /// The policy training target, summing to 1: the visit distribution (PUCT) or the
    /// improved policy (Gumbel).
    pub policy: Vec<f32>,
    /// The root's mean value, in [-1, 1], from the view of the side to move.
    pub value: f32,
    /// Simulations spent by this search (not counting visits kept by tree reuse).
    pub simulations: u32,
}

/// Where one simulation ended.
enum Descent {
    /// At a new leaf (appended to the output), now waiting for an evaluation.
    Leaf(u32),
    /// At a terminal node; already backed up.
    Terminal,
    /// At a leaf already waiting for an evaluation; abandoned.
    Collision,
}

/// A search tree over one game.
///
/// A search spends [`SearchConfig::simulations`] simulations on the current position of
/// its game, then [`Search::result`] tells the move; [`Search::advance`] plays a move and
/// keeps its subtree for the next search. The steps:
///
/// 1. [`Search::gather`] walks the tree and hands out leaves to evaluate, each simulation
///    in flight adding a virtual loss along its path so the next one looks elsewhere.
///    Simulations that end on a terminal node are finished on the spot.
/// 2. Someone evaluates the leaves: this tree's alone, or those of many trees together in
///    one [`Evaluator::evaluate`] call.
/// 3. [`Search::apply`] takes the evaluations back, in the order of the leaves.
///
/// [`Search::run`] does the loop with one evaluator. The first leaf of a fresh root is the
/// root itself: that evaluation is not a simulation.
#[derive(Clone, Debug)]
pub struct Search {
    config: SearchConfig,
    game: Game,
    tree: Tree,
    rng: ChaCha8Rng,
    /// Leaves handed out and not yet applied, in order.
    pending: Vec<u32>,
    /// Simulations started at this root (in flight included).
    started: u32,
    /// Simulations finished at this root.
    spent: u32,
    /// Whether the root noise (Dirichlet or Gumbel) of this search is drawn.
    root_ready: bool,
    gumbel: GumbelRoot,
    /// Positions the verification of chosen moves may still visit at this root
    /// ([`SearchConfig::verify_plies`]).
    verify_left: u64,
    /// Root children already verified (not proven lost) at this root.
    verified: Vec<u32>,
    /// The deadline of the running [`Search::run_until`], which the exact proofs also keep.
    deadline: Option<Instant>,
}

impl Search {
    /// A search of the current position of `game`; `seed` seeds every random choice.
    pub fn new(game: Game, config: SearchConfig, seed: u64) -> Result<Search, SearchError> {
        config.validate()?;
        if game.is_over() {
            return Err(SearchError::GameOver);
        }
        Ok(Search {
            tree: Tree::with_discount(config.discount),
            config,
            game,
            rng: ChaCha8Rng::seed_from_u64(seed),
            pending: Vec::new(),
            started: 0,
            spent: 0,
            root_ready: false,
            gumbel: GumbelRoot::default(),
            verify_left: VERIFY_NODES,
            verified: Vec::new(),
            deadline: None,
        })
    }

    /// The game, at the root position.
    #[must_use]
    pub fn game(&self) -> &Game {
        &self.game
    }

    /// The settings.
    #[must_use]
    pub fn config(&self) -> &SearchConfig {
        &self.config
    }

    /// The tree, for inspection.
    #[must_use]
    pub fn tree(&self) -> &Tree {
        &self.tree
    }

    /// Simulations finished at this root.
    #[must_use]
    pub fn simulations(&self) -> u32 {
        self.spent
    }

    /// Leaves handed out by [`Search::gather`] and not yet applied.
    #[must_use]
    pub fn in_flight(&self) -> usize {
        self.pending.len()
    }

    /// Whether the search of this root is complete (or the game is over): its budget is
    /// spent, or (with the solver) the evaluated root is proven.
    #[must_use]
    pub fn is_done(&self) -> bool {
        let root = self.tree.get(ROOT);
        self.game.is_over()
            || self.spent >= self.config.simulations
            || (root.proof.is_some() && root.is_expanded())
    }

    /// Hands out up to `max_leaves` leaves, appended to `out`, and returns how many.
    ///
    /// Gathering stops early when the budget is all started, or when a simulation runs into
    /// a leaf already waiting for its evaluation (apply the pending ones, then gather
    /// again). While a fresh root waits for its own evaluation, nothing else is handed out.
    /// At most [`MAX_TERMINALS_PER_GATHER`] simulations ending on terminal nodes are
    /// finished per call. With no leaf in flight, this returns 0 only once the search is
    /// done or after finishing terminal simulations only (then [`Search::simulations`] grew).
    pub fn gather(&mut self, max_leaves: usize, out: &mut Vec<Leaf>) -> usize {
        if self.game.is_over() || max_leaves == 0 {
            return 0;
        }
        match self.tree.get(ROOT).state {
            State::Unvisited => {
                let leaf = Leaf::from_game(&self.game);
                self.tree.add_children(ROOT, &leaf.moves);
                if self.config.solver {
                    self.prove_immediate_win_at_root(&leaf.moves);
                }
                self.tree.add_virtual_loss(ROOT);
                self.pending.push(ROOT);
                out.push(leaf);
                return 1;
            }
            State::Evaluating | State::Terminal(_) => return 0,
            State::Expanded if self.tree.get(ROOT).proof.is_some() => return 0,
            State::Expanded => {}
        }
        if !self.root_ready {
            self.prepare_root();
        }
        let mut handed_out = 0;
        let mut terminals = 0;
        while handed_out < max_leaves
            && self.started < self.config.simulations
            && self.tree.get(ROOT).proof.is_none()
        {
            match self.descend(out) {
                Descent::Leaf(node) => {
                    self.started += 1;
                    self.pending.push(node);
                    handed_out += 1;
                }
                Descent::Terminal => {
                    self.started += 1;
                    self.spent += 1;
                    terminals += 1;
                    // Bounded, so that a caller watching a clock gets control back soon
                    // even where every line ends in a terminal position.
                    if terminals >= MAX_TERMINALS_PER_GATHER {
                        break;
                    }
                }
                Descent::Collision => break,
            }
        }
        handed_out
    }

    /// Takes back one evaluation per leaf handed out since the last `apply`, in order:
    /// expands each leaf and backs its value up to the root. Nothing changes on error.
    pub fn apply(&mut self, evaluations: &[Evaluation]) -> Result<(), SearchError> {
        if evaluations.len() != self.pending.len() {
            return Err(SearchError::EvaluationCount {
                expected: self.pending.len(),
                got: evaluations.len(),
            });
        }
        for (index, (&node, e)) in self.pending.iter().zip(evaluations).enumerate() {
            let expected = self.tree.get(node).num_children();
            if e.priors.len() != expected {
                return Err(SearchError::PriorCount {
                    index,
                    expected,
                    got: e.priors.len(),
                });
            }
            if !e.value.is_finite() || !e.priors.iter().all(|p| p.is_finite() && *p >= 0.0) {
                return Err(SearchError::InvalidEvaluation { index });
            }
        }
        for (&node, e) in self.pending.iter().zip(evaluations) {
            self.tree.set_evaluation(node, e);
            self.tree.backup(node, e.value.clamp(-1.0, 1.0));
            if node != ROOT {
                self.spent += 1;
            }
        }
        self.pending.clear();
        Ok(())
    }

    /// This search moved on to `game` when `game` continues the game searched here (same
    /// start, this game's moves first), keeping the subtree of the moves played since;
    /// `None` when it does not continue it, or when this search's game judges the moves
    /// played since otherwise than `game` does (another King-capture rule, see
    /// [`brandubh_rules::KingRule`]).
    #[must_use]
    pub fn follow(mut self, game: &Game) -> Option<Search> {
        let known = self.game.moves().len();
        let continues = self.game.start() == game.start()
            && game.moves().len() >= known
            && game.moves()[..known] == *self.game.moves();
        (continues
            && game.moves()[known..]
                .iter()
                .all(|&mv| self.advance(mv).is_ok())
            && self.game.position() == game.position()
            && self.game.outcome() == game.outcome())
        .then_some(self)
    }

    /// Runs the search to the end with `evaluator`, handing it up to `max_batch` leaves of
    /// this tree at a time (1 is plain sequential MCTS), and returns the result.
    pub fn run<E: Evaluator + ?Sized>(
        &mut self,
        evaluator: &mut E,
        max_batch: usize,
    ) -> Result<SearchResult, SearchError> {
        self.run_loop(evaluator, max_batch, None, None)
    }

    /// Runs the search until it is done or `deadline` has passed, whichever comes first,
    /// handing `evaluator` up to `max_batch` leaves at a time, and returns the result.
    /// The exact proofs stop at the deadline too; with the check of the chosen move on
    /// ([`SearchConfig::verify_plies`]) the simulations stop at three quarters of the time
    /// left, and the check has the rest.
    ///
    /// The clock is read after every evaluator call (one batch of simulations), never
    /// converted to a simulation count: the budget of [`SearchConfig::simulations`] is an
    /// upper bound (and, for Gumbel, the plan of the sequential halving). A fresh root is
    /// always evaluated, so a result exists even when the deadline has already passed;
    /// with no simulation run the move is the network's (PUCT: the highest prior; Gumbel:
    /// the highest `g + log π`).
    pub fn run_until<E: Evaluator + ?Sized>(
        &mut self,
        evaluator: &mut E,
        max_batch: usize,
        deadline: Instant,
    ) -> Result<SearchResult, SearchError> {
        self.run_loop(evaluator, max_batch, Some(deadline), None)
    }

    /// [`Search::run`] (no `deadline`) or [`Search::run_until`] that also stops, once the
    /// root is evaluated, as soon as another thread sets `halt` (read after every evaluator
    /// call, like the clock): a player who says "move now", or a search no longer wanted.
    /// The check of the chosen move then ends at once too (a root proof under way when the
    /// flag is set finishes first, within its node budget and the deadline). The result is
    /// the search's so far.
    pub fn run_halting<E: Evaluator + ?Sized>(
        &mut self,
        evaluator: &mut E,
        max_batch: usize,
        deadline: Option<Instant>,
        halt: &AtomicBool,
    ) -> Result<SearchResult, SearchError> {
        self.run_loop(evaluator, max_batch, deadline, Some(halt))
    }

    /// The loop of [`Search::run`], [`Search::run_until`] and [`Search::run_halting`]:
    /// gather, evaluate, apply until the search is done or, once the root is evaluated,
    /// `deadline` has passed or `halt` is set.
    fn run_loop<E: Evaluator + ?Sized>(
        &mut self,
        evaluator: &mut E,
        max_batch: usize,
        deadline: Option<Instant>,
        halt: Option<&AtomicBool>,
    ) -> Result<SearchResult, SearchError> {
        self.no_leaves_in_flight()?;
        self.deadline = deadline;
        let stop = deadline.map(|d| {
            let now = Instant::now();
            if self.config.solver && self.config.verify_plies > 0 {
                now + d.saturating_duration_since(now).mul_f64(0.75)
            } else {
                d
            }
        });
        let mut leaves = Vec::with_capacity(max_batch.max(1));
        while !self.is_done() {
            let root_ready = self.tree.get(ROOT).is_expanded();
            if root_ready && stop.is_some_and(|d| Instant::now() >= d) {
                break;
            }
            if root_ready && halt.is_some_and(|h| h.load(Ordering::Relaxed)) {
                // The check of the move that follows keeps the deadline: now.
                self.deadline = Some(Instant::now());
                break;
            }
            leaves.clear();
            let before = self.spent;
            if self.gather(max_batch.max(1), &mut leaves) == 0 {
                if self.spent == before {
                    break;
                }
                continue;
            }
            let evaluations = evaluator.evaluate(&leaves);
            self.apply(&evaluations)?;
        }
        self.result()
    }

    /// The result so far (normally called once [`Search::is_done`]). With PUCT the move is
    /// drawn at the temperature of the game's ply, from this search's random generator.
    pub fn result(&mut self) -> Result<SearchResult, SearchError> {
        if self.game.is_over() {
            return Err(SearchError::GameOver);
        }
        if !self.tree.get(ROOT).is_expanded() {
            return Err(SearchError::RootNotEvaluated);
        }
        if !self.root_ready {
            self.prepare_root();
        }
        let children = self.tree.child_range(ROOT);
        let moves: MoveList = children.clone().map(|c| self.tree.get(c).mv).collect();
        let visits: Vec<u32> = children.clone().map(|c| self.tree.get(c).visits).collect();
        let (best, mut policy) = match self.proven_choice(children.clone()) {
            Some(choice) => choice,
            None => self.verified_choice(&visits),
        };
        self.drop_proven_losses(&mut policy);
        Ok(SearchResult {
            best_move: moves[best],
            moves,
            visits,
            policy,
            value: self.tree.get(ROOT).value(),
            simulations: self.spent,
        })
    }

    /// Takes the root's moves proven lost out of the policy target (the rest renormalised),
    /// unless no other move keeps any of it: a move proven to lose is never a move to learn,
    /// whatever visits or completed values it had before its proof.
    fn drop_proven_losses(&self, policy: &mut [f32]) {
        let children = self.tree.child_range(ROOT);
        let lost: Vec<bool> = children.map(|c| self.tree.is_proven_loss(c)).collect();
        if !lost.contains(&true) {
            return;
        }
        let kept: f32 = policy
            .iter()
            .zip(&lost)
            .filter(|&(_, &l)| !l)
            .map(|(p, _)| p)
            .sum();
        if kept <= 0.0 || kept.is_nan() {
            return;
        }
        for (p, &l) in policy.iter_mut().zip(&lost) {
            *p = if l { 0.0 } else { *p / kept };
        }
    }

    /// The move and policy target of a root the solver proved won: the fastest win, and a
    /// target all on it. `None` for a root not proven won.
    fn proven_choice(&self, children: std::ops::Range<u32>) -> Option<(usize, Vec<f32>)> {
        let root = self.tree.get(ROOT);
        if root.proof.is_none_or(|p| p.value <= 0) {
            return None;
        }
        let best = self.tree.proven_best_child(ROOT)?;
        let index = children.clone().position(|c| c == best)?;
        let mut policy = vec![0.0; children.len()];
        policy[index] = 1.0;
        Some((index, policy))
    }

    /// The move and policy target from the search statistics. With the solver, a move
    /// proven lost is replaced by the most visited move not proven lost, if there is one;
    /// a root proven lost plays the longest defence.
    fn searched_choice(&mut self, visits: &[u32]) -> (usize, Vec<f32>) {
        let children = self.tree.child_range(ROOT);
        let (best, policy) = match &self.config.algorithm {
            AlgorithmConfig::Puct(cfg) => {
                let priors: Vec<f32> = children.clone().map(|c| self.tree.get(c).prior).collect();
                let total: u32 = visits.iter().sum();
                let policy = if total > 0 {
                    visits.iter().map(|&n| n as f32 / total as f32).collect()
                } else {
                    priors.clone()
                };
                let t = cfg.temperature_at(self.game.ply());
                (puct::choose(visits, &priors, t, &mut self.rng), policy)
            }
            AlgorithmConfig::Gumbel(cfg) => (
                self.gumbel.best(&self.tree, cfg),
                gumbel::improved_policy(&self.tree, ROOT, cfg),
            ),
        };
        let first = children.start;
        if !self.tree.is_proven_loss(first + best as u32) {
            return (best, policy);
        }
        if let Some(defence) = self.tree.proven_best_child(ROOT) {
            return ((defence - first) as usize, policy);
        }
        let alive = children
            .filter(|&c| !self.tree.is_proven_loss(c))
            .max_by_key(|&c| (self.tree.get(c).visits, std::cmp::Reverse(c)));
        match alive {
            Some(c) => ((c - first) as usize, policy),
            None => (best, policy),
        }
    }

    /// [`Search::searched_choice`], the choice verified when [`SearchConfig::verify_plies`]
    /// asks for it: a chosen move proven lost by the check is marked so in the tree, and
    /// the choice is made again, until a move is not proven lost (or every move is, or the
    /// budget is spent).
    fn verified_choice(&mut self, visits: &[u32]) -> (usize, Vec<f32>) {
        loop {
            let (best, policy) = self.searched_choice(visits);
            if !self.verify_move(best) {
                return (best, policy);
            }
        }
    }

    /// Checks root move `index` for a forced win of the opponent within
    /// [`SearchConfig::verify_plies`] plies after it, with what is left of
    /// [`VERIFY_NODES`]; `true` when it was proven lost now (and is marked so in the tree).
    /// A move already proven, or verified at this root, is not checked again; a loss longer
    /// than the ply cap allows is not a proof.
    fn verify_move(&mut self, index: usize) -> bool {
        let plies = self.config.verify_plies;
        if !self.config.solver || plies == 0 || self.verify_left == 0 {
            return false;
        }
        let child = self.tree.child_range(ROOT).start + index as u32;
        if self.tree.get(child).proof.is_some() || self.verified.contains(&child) {
            return false;
        }
        self.verified.push(child);
        let me = self.game.side_to_move();
        self.game.play_unchecked(self.tree.get(child).mv);
        let proof = (!self.game.is_over()).then(|| {
            forced_win_until(
                &self.game,
                me.opponent(),
                plies,
                self.verify_left,
                self.deadline,
            )
        });
        self.game.undo();
        let Some(proof) = proof else {
            return false;
        };
        self.verify_left = self.verify_left.saturating_sub(proof.nodes);
        match proof.plies {
            Some(k) if self.within_ply_cap(k) => {
                self.tree.prove(
                    child,
                    Proven {
                        value: 1,
                        plies: k as u16,
                    },
                );
                true
            }
            _ => false,
        }
    }

    /// Whether a line of `plies` plies after a root move ends before the ply cap: only then
    /// is an exact proof of it a proof in this game (it would end unfinished first).
    fn within_ply_cap(&self, plies: u32) -> bool {
        self.config
            .ply_cap
            .is_none_or(|cap| plies as usize <= (cap as usize).saturating_sub(self.game.ply() + 1))
    }

    /// Marks the root's moves that win on the spot as terminal children, which proves the
    /// root won in one ply.
    fn prove_immediate_win_at_root(&mut self, moves: &MoveList) {
        if let Some(index) = solver::immediate_win(&mut self.game, moves) {
            let child = self.tree.child_range(ROOT).start + index as u32;
            self.tree.get_mut(child).state = State::Terminal(-1);
            self.tree.prove(child, Proven::terminal(-1));
        }
    }

    /// The exact proofs of [`SearchConfig::root_proof_plies`]: each root move not yet
    /// proven is checked for a forced win of the opponent after it (a proven loss for the
    /// side to move) and then of the side to move (a proven win), within the node budget.
    /// Every move is checked before any proof reaches the tree, and the wins go in fastest
    /// first: the root's proof is then its fastest win, and a won position is won, not
    /// dragged out by the first proven win in move order. Lines that reach the ply cap are
    /// not proofs (the game would end unfinished first).
    fn prove_root_moves(&mut self) {
        let plies = self.config.root_proof_plies;
        let me = self.game.side_to_move();
        let mut proofs = Vec::new();
        for child in self.tree.child_range(ROOT) {
            if self.tree.get(child).proof.is_some() {
                continue;
            }
            self.game.play_unchecked(self.tree.get(child).mv);
            let proof = if self.game.is_over() {
                None
            } else if let Some(k) = forced_win_until(
                &self.game,
                me.opponent(),
                plies,
                ROOT_PROOF_NODES,
                self.deadline,
            )
            .plies
            {
                Some(Proven {
                    value: 1,
                    plies: k as u16,
                })
            } else if plies > 1 {
                forced_win_until(&self.game, me, plies - 1, ROOT_PROOF_NODES, self.deadline)
                    .plies
                    .map(|k| Proven {
                        value: -1,
                        plies: k as u16,
                    })
            } else {
                None
            };
            self.game.undo();
            if let Some(p) = proof
                && self.within_ply_cap(u32::from(p.plies))
            {
                proofs.push((child, p));
            }
        }
        // Wins (the child's side to move loses) first, fastest first; then the losses.
        proofs.sort_by_key(|&(_, p)| (p.value, p.plies));
        for (child, p) in proofs {
            self.tree.prove(child, p);
        }
    }

    /// Sets the simulation budget of the next searches (KataGo's playout-cap randomisation
    /// gives some moves a cheap search). Takes effect at a root not yet searched, i.e.
    /// right after [`Search::new`] or [`Search::advance`]; refused (returning `false`)
    /// once this root's search has started, or for a budget of 0.
    pub fn set_simulations(&mut self, simulations: u32) -> bool {
        if simulations == 0 || self.root_search_begun() {
            return false;
        }
        self.config.simulations = simulations;
        true
    }

    /// Plays `mv` (checked) in the game and makes its subtree the new root, visits kept;
    /// the next search starts with a fresh budget. Refused while leaves are in flight.
    pub fn advance(&mut self, mv: Move) -> Result<(), SearchError> {
        self.no_leaves_in_flight()?;
        self.game.play(mv)?;
        let child = self
            .tree
            .child_range(ROOT)
            .find(|&c| self.tree.get(c).mv == mv);
        match child {
            Some(c) if self.tree.get(c).is_expanded() => self.tree.reroot(c),
            _ => self.tree.clear(),
        }
        self.reset_root_search();
        Ok(())
    }

    /// Sets how deep the next searches' root proofs go ([`SearchConfig::root_proof_plies`];
    /// 0 turns them off), so that self-play can prove one side's moves only. Like
    /// [`Search::set_simulations`], it takes effect at a root not yet searched and is
    /// refused (returning `false`) once this root's search has started, or for more than
    /// [`MAX_ROOT_PROOF_PLIES`].
    pub fn set_root_proof_plies(&mut self, plies: u32) -> bool {
        if plies > MAX_ROOT_PROOF_PLIES || self.root_search_begun() {
            return false;
        }
        self.config.root_proof_plies = plies;
        true
    }

    /// Whether this root's search has begun (its root noise drawn, a simulation started or
    /// a leaf in flight): from then on its budget and proofs are fixed.
    fn root_search_begun(&self) -> bool {
        self.started > 0 || self.root_ready || !self.pending.is_empty()
    }

    /// Starts a new search of the same root with a budget of `simulations`, keeping the
    /// tree (its visits count as reused, like those kept by [`Search::advance`]); the root
    /// noise is drawn again. Refused while leaves are in flight or for a budget of 0.
    pub fn renew(&mut self, simulations: u32) -> Result<(), SearchError> {
        self.no_leaves_in_flight()?;
        let config = SearchConfig {
            simulations,
            ..self.config.clone()
        };
        config.validate()?;
        self.config = config;
        self.reset_root_search();
        Ok(())
    }

    /// Refuses (`LeavesInFlight`) while leaves are out for evaluation.
    fn no_leaves_in_flight(&self) -> Result<(), SearchError> {
        if self.pending.is_empty() {
            Ok(())
        } else {
            Err(SearchError::LeavesInFlight {
                count: self.pending.len(),
            })
        }
    }

    /// Makes the root's next search a fresh one (the one home of this reset, for
    /// [`Search::advance`] and [`Search::renew`]): no simulation started or spent, the
    /// root noise not drawn, the verification budget full and nothing verified, no
    /// deadline.
    fn reset_root_search(&mut self) {
        self.started = 0;
        self.spent = 0;
        self.root_ready = false;
        self.verify_left = VERIFY_NODES;
        self.verified.clear();
        self.deadline = None;
    }

    /// Draws this search's root noise: Dirichlet into the priors (PUCT) or the Gumbel
    /// variables and halving schedule (Gumbel).
    fn prepare_root(&mut self) {
        if self.config.root_proof_plies > 0 {
            self.prove_root_moves();
        }
        match &self.config.algorithm {
            AlgorithmConfig::Puct(cfg) => puct::add_dirichlet_noise(
                &mut self.tree,
                ROOT,
                cfg.dirichlet_alpha,
                cfg.dirichlet_fraction,
                &mut self.rng,
            ),
            AlgorithmConfig::Gumbel(cfg) => {
                self.gumbel
                    .prepare(&self.tree, cfg, self.config.simulations, &mut self.rng);
            }
        }
        self.root_ready = true;
    }

    /// One simulation from the root: selects down to an unvisited or terminal node, playing
    /// the moves in the game, then takes them back. A new leaf is appended to `out`.
    fn descend(&mut self, out: &mut Vec<Leaf>) -> Descent {
        let mut node = ROOT;
        let mut root_child = None;
        let mut depth = 0;
        let descent = loop {
            self.tree.add_virtual_loss(node);
            if let Some(proof) = self.tree.get(node).proof {
                self.tree.backup(node, f32::from(proof.value));
                break Descent::Terminal;
            }
            match self.tree.get(node).state {
                State::Expanded => {
                    let child = match &self.config.algorithm {
                        AlgorithmConfig::Puct(cfg) => puct::select(&self.tree, node, cfg),
                        AlgorithmConfig::Gumbel(cfg) if node == ROOT => {
                            self.gumbel.select(&self.tree, cfg, self.started)
                        }
                        AlgorithmConfig::Gumbel(cfg) => {
                            gumbel::select_interior(&self.tree, node, cfg)
                        }
                    };
                    if node == ROOT {
                        root_child = Some(child);
                    }
                    self.game.play_unchecked(self.tree.get(child).mv);
                    depth += 1;
                    node = child;
                }
                State::Terminal(value) => {
                    self.tree.backup(node, f32::from(value));
                    break Descent::Terminal;
                }
                State::Evaluating => {
                    self.tree.revert_virtual_loss(node);
                    if let (Some(child), AlgorithmConfig::Gumbel(_)) =
                        (root_child, &self.config.algorithm)
                    {
                        self.gumbel.unselect(&self.tree, child);
                    }
                    break Descent::Collision;
                }
                State::Unvisited => {
                    if let Some(value) = self.terminal_value() {
                        self.tree.get_mut(node).state = State::Terminal(value);
                        if self.config.solver {
                            self.tree.prove(node, Proven::terminal(value));
                        }
                        self.tree.backup(node, f32::from(value));
                        break Descent::Terminal;
                    }
                    let leaf = Leaf::from_game(&self.game);
                    if self.config.solver
                        && solver::immediate_win(&mut self.game, &leaf.moves).is_some()
                    {
                        let win = Proven { value: 1, plies: 1 };
                        self.tree.prove(node, win);
                        self.tree.backup(node, 1.0);
                        break Descent::Terminal;
                    }
                    self.tree.add_children(node, &leaf.moves);
                    out.push(leaf);
                    break Descent::Leaf(node);
                }
            }
        };
        for _ in 0..depth {
            self.game.undo();
        }
        descent
    }

    /// The fixed value, for the side to move, of the game's current position if the game
    /// is over there (±1) or stopped by the ply cap (0).
    fn terminal_value(&self) -> Option<i8> {
        if let Some(outcome) = self.game.outcome() {
            return Some(if outcome.winner == self.game.side_to_move() {
                1
            } else {
                -1
            });
        }
        let capped = self
            .config
            .ply_cap
            .is_some_and(|cap| self.game.ply() >= cap as usize);
        capped.then_some(0)
    }
}

/// Searches the current position of `game` with `evaluator`, one leaf at a time.
pub fn search<E: Evaluator + ?Sized>(
    game: &Game,
    config: &SearchConfig,
    evaluator: &mut E,
    seed: u64,
) -> Result<SearchResult, SearchError> {
    Search::new(game.clone(), config.clone(), seed)?.run(evaluator, 1)
}
