//! The search tree: an arena of [`Node`]s with `u32` indices, the children of a node stored
//! contiguously, values kept from the view of the side to move at each node.

use std::ops::Range;

use brandubh_rules::{Move, MoveList, Square};

use crate::evaluator::Evaluation;
use crate::solver::Proven;

/// The root's index.
pub(crate) const ROOT: u32 = 0;
/// The root's parent.
pub(crate) const NO_PARENT: u32 = u32::MAX;
/// Placeholder move of the root, which no move leads to.
const NO_MOVE: Move = Move::new(Square::CASTLE, Square::CASTLE);

/// The index of a node in its [`Tree`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(u32);

impl NodeId {
    /// The index in the arena.
    #[must_use]
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

/// Where a node stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum State {
    /// Never reached by a simulation.
    Unvisited,
    /// Handed out as a leaf; its children exist but wait for their priors.
    Evaluating,
    /// Evaluated; its children can be selected.
    Expanded,
    /// The game is over here (or stopped by the ply cap): the value, from the view of the
    /// side to move, is fixed. Never expanded.
    Terminal(i8),
}

/// One position of the tree, reached from its parent by [`Node::mv`].
#[derive(Clone, Debug)]
pub struct Node {
    pub(crate) parent: u32,
    pub(crate) first_child: u32,
    pub(crate) visits: u32,
    /// Sum of the backed-up values, from the view of the side to move here.
    pub(crate) value_sum: f32,
    /// The evaluator's value of this position (side to move's view), once evaluated.
    pub(crate) raw_value: f32,
    pub(crate) prior: f32,
    /// Simulations through this node whose leaf waits for an evaluation. Each counts as one
    /// extra visit lost by the player who moved into this node (virtual loss).
    pub(crate) virtual_loss: u16,
    pub(crate) mv: Move,
    pub(crate) num_children: u8,
    pub(crate) state: State,
    /// The value the solver proved here, if any (only with [`crate::SearchConfig::solver`]).
    pub(crate) proof: Option<Proven>,
}

impl Node {
    fn new(parent: u32, mv: Move) -> Node {
        Node {
            parent,
            first_child: 0,
            visits: 0,
            value_sum: 0.0,
            raw_value: 0.0,
            prior: 0.0,
            virtual_loss: 0,
            mv,
            num_children: 0,
            state: State::Unvisited,
            proof: None,
        }
    }

    /// The move from the parent to this node; `None` for the root.
    #[must_use]
    pub fn mv(&self) -> Option<Move> {
        (self.parent != NO_PARENT).then_some(self.mv)
    }

    /// The prior the parent's evaluation gave this move (root noise included).
    #[must_use]
    pub fn prior(&self) -> f32 {
        self.prior
    }

    /// Completed simulations through this node.
    #[must_use]
    pub fn visits(&self) -> u32 {
        self.visits
    }

    /// Mean backed-up value in [-1, 1], from the view of the side to move at this node;
    /// 0 before the first visit.
    #[must_use]
    pub fn value(&self) -> f32 {
        if self.visits == 0 {
            0.0
        } else {
            self.value_sum / self.visits as f32
        }
    }

    /// Simulations through this node whose leaf waits for its evaluation.
    #[must_use]
    pub fn in_flight(&self) -> u32 {
        u32::from(self.virtual_loss)
    }

    /// Whether the game is over at this node (or stopped by the ply cap).
    #[must_use]
    pub fn is_terminal(&self) -> bool {
        matches!(self.state, State::Terminal(_))
    }

    /// The game-theoretic value the solver proved for this node (side to move's view), if
    /// any: terminal nodes, wins in one, and nodes whose children prove them.
    #[must_use]
    pub fn proven(&self) -> Option<Proven> {
        self.proof
    }

    /// Whether the node has been evaluated and its children can be searched.
    #[must_use]
    pub fn is_expanded(&self) -> bool {
        self.state == State::Expanded
    }

    /// Number of children (0 until the node is handed out as a leaf, and for terminals).
    #[must_use]
    pub fn num_children(&self) -> usize {
        usize::from(self.num_children)
    }
}

/// The arena. The root is always index 0.
#[derive(Clone, Debug)]
pub struct Tree {
    pub(crate) nodes: Vec<Node>,
    /// Spare arena reused when the tree moves to a subtree.
    spare: Vec<Node>,
    /// Scratch for moving to a subtree: the old index of each node copied so far.
    old_ids: Vec<u32>,
    /// Per-ply discount of backed-up values ([`crate::SearchConfig::discount`]).
    discount: f32,
}

impl Default for Tree {
    fn default() -> Self {
        Tree {
            nodes: vec![Node::new(NO_PARENT, NO_MOVE)],
            spare: Vec::new(),
            old_ids: Vec::new(),
            discount: 1.0,
        }
    }
}

impl Tree {
    /// An empty tree (a root only) whose backed-up values are discounted by `discount` per
    /// ply ([`crate::SearchConfig::discount`]).
    pub(crate) fn with_discount(discount: f32) -> Tree {
        Tree {
            discount,
            ..Tree::default()
        }
    }

    /// What `proof` is worth as a value: its result discounted over its plies, `γ^plies`.
    #[inline]
    pub(crate) fn proven_value(&self, proof: Proven) -> f32 {
        f32::from(proof.value) * crate::config::discount_over(self.discount, u32::from(proof.plies))
    }

    /// The root.
    #[must_use]
    pub fn root(&self) -> NodeId {
        NodeId(ROOT)
    }

    /// Number of nodes, the root included.
    #[must_use]
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Always false: a tree holds at least its root.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The node with this id.
    #[must_use]
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.index()]
    }

    /// The children of `id`, in the order of `Position::legal_moves`.
    pub fn children(
        &self,
        id: NodeId,
    ) -> impl ExactSizeIterator<Item = NodeId> + DoubleEndedIterator + Clone + use<> {
        self.child_range(id.0).map(NodeId)
    }

    /// Every node id, the root first.
    pub fn ids(
        &self,
    ) -> impl ExactSizeIterator<Item = NodeId> + DoubleEndedIterator + Clone + use<> {
        (0..self.nodes.len() as u32).map(NodeId)
    }

    pub(crate) fn child_range(&self, node: u32) -> Range<u32> {
        let n = &self.nodes[node as usize];
        n.first_child..n.first_child + u32::from(n.num_children)
    }

    pub(crate) fn get(&self, node: u32) -> &Node {
        &self.nodes[node as usize]
    }

    pub(crate) fn get_mut(&mut self, node: u32) -> &mut Node {
        &mut self.nodes[node as usize]
    }

    /// Back to a lone unvisited root.
    pub(crate) fn clear(&mut self) {
        self.nodes.clear();
        self.nodes.push(Node::new(NO_PARENT, NO_MOVE));
    }

    /// Creates the children of a leaf about to be evaluated, one per legal move.
    #[expect(
        clippy::expect_used,
        reason = "2^32 nodes of about 32 bytes are 128 GiB, and every input caps simulations \
                  (1,000,000 in agent specs and files, 100,000 in configs) with at most 96 \
                  children per expansion; a `MoveList` holds at most `MAX_MOVES` = 96 < 256 \
                  moves"
    )]
    pub(crate) fn add_children(&mut self, node: u32, moves: &MoveList) {
        let first = u32::try_from(self.nodes.len()).expect("fewer than 2^32 nodes");
        self.nodes
            .extend(moves.iter().map(|&mv| Node::new(node, mv)));
        let n = self.get_mut(node);
        n.first_child = first;
        n.num_children = u8::try_from(moves.len()).expect("at most 96 legal moves");
        n.state = State::Evaluating;
    }

    /// Stores an evaluation (already checked: one finite, non-negative prior per child).
    /// Priors are normalised to sum 1 (uniform if they sum to 0).
    pub(crate) fn set_evaluation(&mut self, node: u32, eval: &Evaluation) {
        let range = self.child_range(node);
        let sum: f32 = eval.priors.iter().sum();
        let uniform = 1.0 / range.len() as f32;
        for (c, &p) in range.zip(&eval.priors) {
            self.get_mut(c).prior = if sum > 0.0 { p / sum } else { uniform };
        }
        let n = self.get_mut(node);
        n.raw_value = eval.value;
        n.state = State::Expanded;
    }

    /// Adds one virtual loss to `node` (a simulation passes through it).
    pub(crate) fn add_virtual_loss(&mut self, node: u32) {
        let n = self.get_mut(node);
        n.virtual_loss = n.virtual_loss.saturating_add(1);
    }

    /// Ends the simulation whose leaf is `node`: removes its virtual loss from the path and
    /// adds `value` (side to move at `node`) to every node up to the root, flipping the sign
    /// and multiplying by the discount at each ply. A proven node on the way adds its
    /// proven value instead, and so passes the exact value on to its ancestors.
    pub(crate) fn backup(&mut self, mut node: u32, mut value: f32) {
        let discount = self.discount;
        loop {
            if let Some(proof) = self.get(node).proof {
                value = self.proven_value(proof);
            }
            let n = self.get_mut(node);
            n.virtual_loss = n.virtual_loss.saturating_sub(1);
            n.visits += 1;
            n.value_sum += value;
            value = -value * discount;
            if n.parent == NO_PARENT {
                return;
            }
            node = n.parent;
        }
    }

    /// Removes the virtual loss of an abandoned simulation from `node` up to the root.
    pub(crate) fn revert_virtual_loss(&mut self, mut node: u32) {
        loop {
            let n = self.get_mut(node);
            n.virtual_loss = n.virtual_loss.saturating_sub(1);
            if n.parent == NO_PARENT {
                return;
            }
            node = n.parent;
        }
    }

    /// A child's visits and mean value from the view of the player choosing it (discounted
    /// by one ply), simulations in flight counted as losses for that player. The mean is 0
    /// without visits.
    #[inline]
    pub(crate) fn child_stats(&self, child: u32) -> (f32, f32) {
        let c = self.get(child);
        let vl = f32::from(c.virtual_loss);
        let n = c.visits as f32 + vl;
        let q = if n > 0.0 {
            (-c.value_sum - vl) / n * self.discount
        } else {
            0.0
        };
        (n, q)
    }

    /// Makes `child` (a child of the root) the new root, keeping its subtree and dropping
    /// the rest. The copy is breadth first, so children stay contiguous.
    pub(crate) fn reroot(&mut self, child: u32) {
        let mut new = std::mem::take(&mut self.spare);
        new.clear();
        self.old_ids.clear();
        let mut root = self.get(child).clone();
        root.parent = NO_PARENT;
        root.mv = NO_MOVE;
        new.push(root);
        self.old_ids.push(child);
        let mut i = 0;
        while i < new.len() {
            let range = self.child_range(self.old_ids[i]);
            if !range.is_empty() {
                new[i].first_child = new.len() as u32;
                for c in range {
                    let mut node = self.get(c).clone();
                    node.parent = i as u32;
                    new.push(node);
                    self.old_ids.push(c);
                }
            }
            i += 1;
        }
        self.spare = std::mem::replace(&mut self.nodes, new);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use brandubh_rules::Game;

    fn close(a: f32, b: f32) -> bool {
        (a - b).abs() < 1e-6
    }

    /// A root, its first child and that child's first child, all expanded from the start
    /// position's moves (the moves themselves do not matter to the bookkeeping).
    fn line(discount: f32) -> (Tree, u32, u32) {
        let moves = Game::default().legal_moves();
        let mut tree = Tree::with_discount(discount);
        tree.add_children(ROOT, &moves);
        let child = tree.child_range(ROOT).start;
        tree.add_children(child, &moves);
        let grandchild = tree.child_range(child).start;
        (tree, child, grandchild)
    }

    #[test]
    fn backed_up_values_lose_the_discount_at_every_ply() {
        let (mut tree, child, grandchild) = line(0.9);
        tree.backup(ROOT, 0.2);
        tree.backup(child, 0.5);
        tree.backup(grandchild, 0.4);
        // Each value reaches the node above negated and multiplied by 0.9.
        assert!(close(tree.get(grandchild).value_sum, 0.4));
        assert!(close(tree.get(child).value_sum, 0.5 - 0.9 * 0.4));
        assert!(close(
            tree.get(ROOT).value_sum,
            0.2 - 0.9 * 0.5 + 0.81 * 0.4
        ));
        // The root sees its child's mean discounted by one more ply.
        let (n, q) = tree.child_stats(child);
        assert_eq!(n, 2.0);
        assert!(close(q, -0.9 * (0.5 - 0.36) / 2.0));
        // Without a discount, the plain negamax sums.
        let (mut plain, child, grandchild) = line(1.0);
        plain.backup(ROOT, 0.2);
        plain.backup(child, 0.5);
        plain.backup(grandchild, 0.4);
        assert!(close(plain.get(ROOT).value_sum, 0.2 - 0.5 + 0.4));
    }

    #[test]
    fn a_proof_is_worth_its_result_discounted_over_its_plies() {
        let (mut tree, child, grandchild) = line(0.9);
        tree.backup(ROOT, 0.0);
        tree.backup(child, 0.0);
        // The side to move at the grandchild wins in three plies: worth 0.9³ there, and
        // whatever value the simulation brought is replaced by it.
        tree.prove(grandchild, Proven { value: 1, plies: 3 });
        tree.backup(grandchild, 0.3);
        let won = 0.9f32.powi(3);
        assert!(close(tree.get(grandchild).value_sum, won));
        assert!(close(tree.get(child).value_sum, -0.9 * won));
        assert!(close(
            tree.proven_value(Proven {
                value: -1,
                plies: 2
            }),
            -0.81
        ));
        assert!(close(tree.proven_value(Proven { value: 0, plies: 7 }), 0.0));
        assert!(close(tree.proven_value(Proven::terminal(1)), 1.0));
    }
}
