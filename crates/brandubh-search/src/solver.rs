//! The MCTS-Solver part of the search (Winands et al. 2008; lc0's "certainty
//! propagation"): game-theoretic values proven inside the tree and propagated upward.
//!
//! - A terminal node is proven at once: its value is fixed (rule 8; 0 for the ply cap).
//! - A node whose side to move has a move that wins on the spot (the King onto a corner,
//!   rule 8.1; a Black move next to the King that captures it, rule 7) is proven won in one
//!   ply as soon as a simulation reaches it, without a network evaluation.
//! - A node is proven won when one of its moves leads to a position proven lost for the
//!   opponent, and proven when all of its moves lead to proven positions (its value is
//!   then the best of them).
//!
//! A proven node is searched no further: a simulation that reaches it backs up the proven
//! value, and its mean value is reset to the proven one, so that its parent sees the exact
//! value at once. Proofs count plies, so the move choice can take the fastest win and,
//! when every move loses, the longest defence (which also matters for the match tiebreak
//! of the seed's rule 8: the faster win takes a drawn match).
//!
//! The tree has one node per line of play (no transpositions), so a proof holds for the
//! game's history along that line, repetitions (rule 8.4) included.

use brandubh_rules::{Bitboard, Game, MoveList, Side};

use crate::tree::{NO_PARENT, Tree};

/// A value proven by the solver, from the view of the side to move at the node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proven {
    /// 1: the side to move wins with best play; -1: it loses whatever it does; 0: the ply
    /// cap ends the game first (an unfinished game, rule 9).
    pub value: i8,
    /// Plies from this node to the end of the game with the proven line (0 at a terminal):
    /// the winner's fastest and the loser's longest.
    pub plies: u16,
}

impl Proven {
    /// A terminal node's proof.
    pub(crate) const fn terminal(value: i8) -> Proven {
        Proven { value, plies: 0 }
    }

    /// The same proof seen from the parent: what the move leading to this node is worth to
    /// the player who chooses it, plies counted from the parent.
    #[must_use]
    pub const fn parent_view(self) -> Proven {
        Proven {
            value: -self.value,
            plies: self.plies.saturating_add(1),
        }
    }

    /// Whether `self` is better than `other` for the side to move: a higher value, then
    /// (for a win) fewer plies or (otherwise) more plies.
    fn better_than(self, other: Proven) -> bool {
        if self.value != other.value {
            return self.value > other.value;
        }
        if self.value > 0 {
            self.plies < other.plies
        } else {
            self.plies > other.plies
        }
    }
}

/// The index in `moves` of a move that wins the game on the spot for the side to move of
/// `game`, if there is one among the cheap candidates: for White, the King onto a corner
/// (rule 8.1); for Black, a move onto a square next to the King that captures it (rule 7).
/// Candidates are played and judged by the rules themselves, then taken back. Other wins
/// (encirclement, the fifth repetition, no moves) are found when their node is reached.
pub(crate) fn immediate_win(game: &mut Game, moves: &MoveList) -> Option<usize> {
    let side = game.side_to_move();
    let king = game.position().king();
    let targets = match side {
        Side::White => Bitboard::CORNERS,
        Side::Black => king.bb().neighbours(),
    };
    moves.iter().position(|&mv| {
        let candidate = targets.contains(mv.to) && (side == Side::Black || mv.from == king);
        if !candidate {
            return false;
        }
        game.play_unchecked(mv);
        let wins = game.outcome().is_some_and(|o| o.winner == side);
        game.undo();
        wins
    })
}

impl Tree {
    /// The proof of `node` from its children's, if they prove it: some move leads to a
    /// position lost for the opponent, or every move leads to a proven position.
    fn solve(&self, node: u32) -> Option<Proven> {
        let (best, all_proven) = self.best_proven_move(node);
        best.map(|(_, proof)| proof)
            .filter(|b| all_proven || b.value > 0)
    }

    /// Records `proof` for `node` and carries it up: each ancestor its children now prove is
    /// proven in turn. A newly proven node's mean value becomes the proven value.
    pub(crate) fn prove(&mut self, mut node: u32, mut proof: Proven) {
        loop {
            let value = self.proven_value(proof);
            let n = self.get_mut(node);
            n.proof = Some(proof);
            n.value_sum = value * n.visits as f32;
            let parent = n.parent;
            if parent == NO_PARENT || self.get(parent).proof.is_some() {
                return;
            }
            match self.solve(parent) {
                Some(p) => {
                    node = parent;
                    proof = p;
                }
                None => return,
            }
        }
    }

    /// The child of `node` with the best proof for the side to move at `node` (the fastest
    /// win, or with every move lost the longest defence), once `node` is proven.
    pub(crate) fn proven_best_child(&self, node: u32) -> Option<u32> {
        self.get(node).proof?;
        self.best_proven_move(node).0.map(|(child, _)| child)
    }

    /// The child of `node` whose proof is best for the side to move at `node`, with that
    /// proof seen from `node`, and whether every child is proven. `(None, false)` for a
    /// node without children.
    fn best_proven_move(&self, node: u32) -> (Option<(u32, Proven)>, bool) {
        let range = self.child_range(node);
        let mut all_proven = !range.is_empty();
        let mut best: Option<(u32, Proven)> = None;
        for child in range {
            let Some(proof) = self.get(child).proof else {
                all_proven = false;
                continue;
            };
            let proof = proof.parent_view();
            if best.is_none_or(|(_, b)| proof.better_than(b)) {
                best = Some((child, proof));
            }
        }
        (best, all_proven)
    }

    /// Whether the move to `child` is proven to lose for the player choosing it.
    pub(crate) fn is_proven_loss(&self, child: u32) -> bool {
        self.get(child).proof.is_some_and(|p| p.value > 0)
    }
}
