//! The evaluation cache: what the evaluator said about a position, kept so that the same
//! position met again (the shared opening moves of a worker's games, transpositions inside
//! a tree, a fork replaying a game the previous iteration played) costs a lookup instead of
//! a network evaluation, as KataGo's and Leela's caches do.
//!
//! Positions are keyed by their canonical form under the board's eight symmetries (the
//! image whose attackers, defenders and King square are smallest, [`canonical`]) and their
//! repetition count, so that a position and its mirror images share one entry. The priors
//! are stored by the canonical image of each move and handed back permuted into the
//! asking leaf's own move order. The cache is a direct-mapped table of a fixed number of
//! positions (a new entry replaces whatever sat in its slot), so its memory is bounded:
//! [`EvalCache::bytes`] counts it.
//!
//! [`CachedEvaluator`] puts a cache in front of any [`Evaluator`]: hits are answered from
//! the cache, leaves of one batch that are the same position are evaluated once, and only
//! the rest go to the evaluator, in one call.

use std::collections::HashMap;
use std::mem::size_of;

use brandubh_rules::{Position, Side, Symmetry};

use crate::evaluator::{Evaluation, Evaluator, Leaf};

/// The largest cache, in positions (about 16.8 million; a few GB with their priors).
pub const MAX_CACHE_POSITIONS: u32 = 1 << 24;

/// A position's canonical image and the symmetry that takes the position to it.
///
/// The canonical image is the smallest of the eight images, compared by attackers,
/// defenders, then the King's square (the side to move is the same in all of them); when
/// the position is symmetric several symmetries give it, and the first in
/// [`Symmetry::ALL`] is returned.
#[must_use]
pub fn canonical(position: &Position) -> (Position, Symmetry) {
    let order = |p: &Position| (p.attackers().0, p.defenders().0, p.king().index());
    let mut best = (*position, Symmetry::Identity);
    let mut best_order = order(position);
    for sym in &Symmetry::ALL[1..] {
        let image = sym.position(position);
        let o = order(&image);
        if o < best_order {
            best = (image, *sym);
            best_order = o;
        }
    }
    best
}

/// What identifies an entry: the canonical image and the repetition count (the encoder
/// sees it, so positions that differ in it may be evaluated differently).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Key {
    attackers: u64,
    defenders: u64,
    king: u8,
    white_to_move: bool,
    repetitions: u8,
}

impl Key {
    fn of(leaf: &Leaf) -> (Key, Symmetry) {
        let (image, sym) = canonical(&leaf.position);
        let key = Key {
            attackers: image.attackers().0,
            defenders: image.defenders().0,
            king: image.king().index() as u8,
            white_to_move: image.side_to_move() == Side::White,
            repetitions: leaf.repetitions.min(u32::from(u8::MAX)) as u8,
        };
        (key, sym)
    }

    /// A well-mixed 64-bit hash (the finaliser of SplitMix64 over the fields), for the slot.
    fn hash(&self) -> u64 {
        let mut h = self.attackers ^ self.defenders.rotate_left(29);
        h ^= (u64::from(self.king) << 56)
            ^ (u64::from(self.white_to_move) << 63)
            ^ (u64::from(self.repetitions) << 50);
        h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        h ^ (h >> 31)
    }
}

/// A move of the canonical image, as one number (`from × 49 + to`).
fn move_code(sym: Symmetry, mv: brandubh_rules::Move) -> u16 {
    let m = sym.mv(mv);
    (m.from.index() * brandubh_rules::NUM_SQUARES + m.to.index()) as u16
}

/// One cached evaluation: the value, and the prior of each move of the canonical image,
/// sorted by move code.
#[derive(Clone, Debug)]
struct Entry {
    key: Key,
    value: f32,
    moves: Box<[u16]>,
    priors: Box<[f32]>,
}

impl Entry {
    /// The entry for `evaluation` of `leaf`, whose canonical symmetry is `sym`.
    fn new(key: Key, sym: Symmetry, leaf: &Leaf, evaluation: &Evaluation) -> Entry {
        let mut pairs: Vec<(u16, f32)> = leaf
            .moves
            .iter()
            .zip(&evaluation.priors)
            .map(|(&mv, &p)| (move_code(sym, mv), p))
            .collect();
        pairs.sort_unstable_by_key(|&(code, _)| code);
        Entry {
            key,
            value: evaluation.value,
            moves: pairs.iter().map(|&(code, _)| code).collect(),
            priors: pairs.iter().map(|&(_, p)| p).collect(),
        }
    }

    /// The evaluation of `leaf` (canonical symmetry `sym`, the same canonical image), its
    /// priors in the leaf's move order; `None` if a move of the leaf is not in the entry
    /// (which a valid key rules out).
    fn evaluation_for(&self, sym: Symmetry, leaf: &Leaf) -> Option<Evaluation> {
        if leaf.moves.len() != self.moves.len() {
            return None;
        }
        let priors = leaf
            .moves
            .iter()
            .map(|&mv| {
                let i = self.moves.binary_search(&move_code(sym, mv)).ok()?;
                Some(self.priors[i])
            })
            .collect::<Option<Vec<f32>>>()?;
        Some(Evaluation {
            value: self.value,
            priors,
        })
    }

    fn heap_bytes(&self) -> usize {
        self.moves.len() * (size_of::<u16>() + size_of::<f32>())
    }
}

/// Lookups and hits of a cache.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Leaves asked for.
    pub lookups: u64,
    /// Leaves answered without the evaluator: found in the cache, or the same position as
    /// an earlier leaf of the same batch.
    pub hits: u64,
}

impl CacheStats {
    /// Hits per lookup (0 with no lookups).
    #[must_use]
    pub fn hit_rate(&self) -> f64 {
        self.hits as f64 / self.lookups.max(1) as f64
    }
}

/// A bounded cache of evaluations (see the module's documentation).
#[derive(Debug)]
pub struct EvalCache {
    slots: Vec<Option<Entry>>,
    heap_bytes: usize,
    stats: CacheStats,
}

impl EvalCache {
    /// A cache of `positions` entries (at least 1, at most [`MAX_CACHE_POSITIONS`]). The
    /// slot table is allocated at once; the priors as entries arrive.
    #[must_use]
    pub fn new(positions: u32) -> EvalCache {
        let n = positions.clamp(1, MAX_CACHE_POSITIONS) as usize;
        EvalCache {
            slots: std::iter::repeat_with(|| None).take(n).collect(),
            heap_bytes: 0,
            stats: CacheStats::default(),
        }
    }

    /// Positions the cache can hold.
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Positions it holds.
    #[must_use]
    pub fn len(&self) -> usize {
        self.slots.iter().filter(|s| s.is_some()).count()
    }

    /// Whether it holds none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.slots.iter().all(Option::is_none)
    }

    /// Bytes it occupies: the slot table and every entry's priors. At most
    /// `capacity × (size_of slot + MAX_MOVES × 6)`.
    #[must_use]
    pub fn bytes(&self) -> usize {
        self.slots.len() * size_of::<Option<Entry>>() + self.heap_bytes
    }

    /// Lookups and hits so far.
    #[must_use]
    pub fn stats(&self) -> CacheStats {
        self.stats
    }

    fn slot(&self, key: &Key) -> usize {
        (key.hash() % self.slots.len() as u64) as usize
    }

    /// The cached evaluation of `leaf`, its priors in the leaf's move order (counts a
    /// lookup, and a hit if found).
    pub fn get(&mut self, leaf: &Leaf) -> Option<Evaluation> {
        let (key, sym) = Key::of(leaf);
        self.stats.lookups += 1;
        let found = self.find(&key, sym, leaf);
        if found.is_some() {
            self.stats.hits += 1;
        }
        found
    }

    fn find(&self, key: &Key, sym: Symmetry, leaf: &Leaf) -> Option<Evaluation> {
        match &self.slots[self.slot(key)] {
            Some(entry) if entry.key == *key => entry.evaluation_for(sym, leaf),
            _ => None,
        }
    }

    /// Keeps `evaluation` of `leaf` (its priors in the leaf's move order), replacing what
    /// its slot held.
    pub fn insert(&mut self, leaf: &Leaf, evaluation: &Evaluation) {
        let (key, sym) = Key::of(leaf);
        self.put(Entry::new(key, sym, leaf, evaluation));
    }

    fn put(&mut self, entry: Entry) {
        let slot = self.slot(&entry.key);
        self.heap_bytes += entry.heap_bytes();
        if let Some(old) = self.slots[slot].replace(entry) {
            self.heap_bytes -= old.heap_bytes();
        }
    }
}

/// An [`Evaluator`] that answers from `cache` where it can and asks `inner` for the rest
/// (see the module's documentation).
#[derive(Debug)]
pub struct CachedEvaluator<'a, E: ?Sized> {
    /// The evaluator of the positions not in the cache.
    pub inner: &'a mut E,
    /// The cache, filled with what `inner` says.
    pub cache: &'a mut EvalCache,
}

impl<E: Evaluator + ?Sized> Evaluator for CachedEvaluator<'_, E> {
    fn evaluate(&mut self, leaves: &[Leaf]) -> Vec<Evaluation> {
        let cache = &mut *self.cache;
        let mut out: Vec<Option<Evaluation>> = vec![None; leaves.len()];
        // The leaves to evaluate (one per position), their keys and symmetries, and the
        // later leaves of the same positions.
        let mut asked: Vec<Leaf> = Vec::new();
        let mut keys: Vec<(usize, Key, Symmetry)> = Vec::new();
        let mut first: HashMap<Key, usize> = HashMap::new();
        let mut repeats: Vec<(usize, usize, Symmetry)> = Vec::new();
        for (i, leaf) in leaves.iter().enumerate() {
            let (key, sym) = Key::of(leaf);
            if let Some(found) = cache.find(&key, sym, leaf) {
                out[i] = Some(found);
            } else if let Some(&k) = first.get(&key) {
                repeats.push((i, k, sym));
            } else {
                first.insert(key, asked.len());
                keys.push((i, key, sym));
                asked.push(leaf.clone());
            }
        }
        cache.stats.lookups += leaves.len() as u64;
        cache.stats.hits += (leaves.len() - asked.len()) as u64;
        if !asked.is_empty() {
            let evaluations = self.inner.evaluate(&asked);
            let entries: Vec<Entry> = keys
                .iter()
                .zip(&evaluations)
                .map(|(&(i, key, sym), e)| Entry::new(key, sym, &leaves[i], e))
                .collect();
            for &(i, k, sym) in &repeats {
                out[i] = entries[k].evaluation_for(sym, &leaves[i]);
            }
            for ((&(i, _, _), evaluation), entry) in keys.iter().zip(evaluations).zip(entries) {
                out[i] = Some(evaluation);
                cache.put(entry);
            }
        }
        // A leaf still without an evaluation (a repeat whose moves did not map onto its
        // first leaf's, which the rules' symmetry rules out) is asked for after all.
        let rest: Vec<usize> = (0..leaves.len()).filter(|&i| out[i].is_none()).collect();
        if !rest.is_empty() {
            let again: Vec<Leaf> = rest.iter().map(|&i| leaves[i].clone()).collect();
            for (&i, e) in rest.iter().zip(self.inner.evaluate(&again)) {
                out[i] = Some(e);
            }
            cache.stats.hits -= rest.len() as u64;
        }
        out.into_iter().flatten().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use brandubh_rules::Game;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Leaves of unfinished positions after seeded random play.
    fn leaves(n: usize, seed: u64) -> Vec<Leaf> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut out = Vec::new();
        while out.len() < n {
            let mut game = Game::default();
            let plies = rng.random_range(0..30);
            game.random_playout(plies, |k| rng.random_range(0..k));
            if !game.is_over() {
                out.push(Leaf::from_game(&game));
            }
        }
        out
    }

    /// The leaf of `leaf`'s position under `sym`, its moves in that position's own order.
    fn image(leaf: &Leaf, sym: Symmetry) -> Leaf {
        let position = sym.position(&leaf.position);
        Leaf {
            position,
            repetitions: leaf.repetitions,
            moves: position.legal_moves(),
        }
    }

    /// No symmetry in it: each move's prior grows with its squares' indices, the value
    /// with the King's; counts the leaves it is asked for.
    #[derive(Default)]
    struct Lopsided(Vec<usize>);
    impl Evaluator for Lopsided {
        fn evaluate(&mut self, leaves: &[Leaf]) -> Vec<Evaluation> {
            self.0.push(leaves.len());
            leaves
                .iter()
                .map(|leaf| {
                    let raw: Vec<f32> = leaf
                        .moves
                        .iter()
                        .map(|m| 1.0 + m.from.index() as f32 + 0.01 * m.to.index() as f32)
                        .collect();
                    let sum: f32 = raw.iter().sum();
                    Evaluation {
                        value: leaf.position.king().index() as f32 / 48.0 - 0.5,
                        priors: raw.iter().map(|p| p / sum).collect(),
                    }
                })
                .collect()
        }
    }

    #[test]
    fn every_image_of_a_position_has_the_same_canonical_image() {
        for leaf in leaves(200, 1) {
            let (canon, sym) = canonical(&leaf.position);
            assert_eq!(sym.position(&leaf.position), canon);
            for s in Symmetry::ALL {
                assert_eq!(canonical(&s.position(&leaf.position)).0, canon);
            }
        }
    }

    #[test]
    fn a_position_and_its_mirror_images_hit_one_entry_and_get_the_permuted_policy() {
        let mut cache = EvalCache::new(1 << 12);
        let mut lopsided = Lopsided::default();
        // Positions with eight distinct images (an image of a symmetric position under one
        // of its own symmetries is the same position, and gets the same answer: below).
        let asymmetric = leaves(80, 2).into_iter().filter(|leaf| {
            let images: std::collections::HashSet<Position> = Symmetry::ALL
                .iter()
                .map(|s| s.position(&leaf.position))
                .collect();
            images.len() == 8
        });
        let asymmetric: Vec<Leaf> = asymmetric.take(50).collect();
        assert_eq!(asymmetric.len(), 50);
        for leaf in asymmetric {
            let mut cached = CachedEvaluator {
                inner: &mut lopsided,
                cache: &mut cache,
            };
            let first = cached.evaluate(std::slice::from_ref(&leaf)).remove(0);
            for sym in Symmetry::ALL {
                let mirrored = image(&leaf, sym);
                let got = cached.evaluate(std::slice::from_ref(&mirrored)).remove(0);
                assert_eq!(got.value, first.value);
                // The prior of each move of the image is that of the move it is the image of.
                for (mv, p) in mirrored.moves.iter().zip(&got.priors) {
                    let original = sym.inverse().mv(*mv);
                    let j = leaf.moves.iter().position(|m| *m == original).unwrap();
                    assert_eq!(*p, first.priors[j], "{sym:?} {mv}");
                }
            }
        }
        // 50 positions asked for 9 times each: each evaluated once.
        assert_eq!(lopsided.0.iter().sum::<usize>(), 50);
        assert_eq!(
            cache.stats(),
            CacheStats {
                lookups: 450,
                hits: 400
            }
        );
        assert!((cache.stats().hit_rate() - 400.0 / 450.0).abs() < 1e-12);
    }

    #[test]
    fn a_symmetric_position_s_images_are_itself_and_get_its_own_evaluation() {
        let start = Leaf::from_game(&Game::default());
        let mut cache = EvalCache::new(64);
        let mut lopsided = Lopsided::default();
        let mut cached = CachedEvaluator {
            inner: &mut lopsided,
            cache: &mut cache,
        };
        let first = cached.evaluate(std::slice::from_ref(&start)).remove(0);
        for sym in Symmetry::ALL {
            let mirrored = image(&start, sym);
            assert_eq!(mirrored.position, start.position);
            assert_eq!(
                cached.evaluate(std::slice::from_ref(&mirrored)).remove(0),
                first
            );
        }
        assert_eq!(lopsided.0, vec![1]);
    }

    #[test]
    fn a_different_repetition_count_is_a_different_entry() {
        let mut cache = EvalCache::new(64);
        let leaf = leaves(1, 3).remove(0);
        cache.insert(
            &leaf,
            &Lopsided::default().evaluate(std::slice::from_ref(&leaf))[0],
        );
        assert!(cache.get(&leaf).is_some());
        let again = Leaf {
            repetitions: leaf.repetitions + 1,
            ..leaf.clone()
        };
        assert!(cache.get(&again).is_none());
        assert_eq!(
            cache.stats(),
            CacheStats {
                lookups: 2,
                hits: 1
            }
        );
    }

    #[test]
    fn one_batch_evaluates_each_position_once_and_answers_every_leaf() {
        let distinct = leaves(20, 4);
        // Each position three times, the second time mirrored, interleaved.
        let mut batch = Vec::new();
        for (k, leaf) in distinct.iter().enumerate() {
            batch.push(leaf.clone());
            batch.push(image(leaf, Symmetry::ALL[1 + k % 7]));
        }
        batch.extend(distinct.iter().cloned());
        let mut cache = EvalCache::new(1 << 10);
        let mut lopsided = Lopsided::default();
        let got = CachedEvaluator {
            inner: &mut lopsided,
            cache: &mut cache,
        }
        .evaluate(&batch);
        assert_eq!(lopsided.0, vec![20]);
        assert_eq!(got.len(), batch.len());
        // Unmirrored leaves get exactly what the evaluator says of them.
        let direct = Lopsided::default().evaluate(&batch);
        for (k, (g, d)) in got.iter().zip(&direct).enumerate() {
            if k % 2 == 0 || k >= 40 {
                assert_eq!(g, d, "leaf {k}");
            }
            assert_eq!(g.priors.len(), batch[k].moves.len());
            assert!((g.priors.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        }
        assert_eq!(
            cache.stats(),
            CacheStats {
                lookups: 60,
                hits: 40
            }
        );
    }

    #[test]
    fn the_cache_holds_at_most_its_capacity_and_counts_its_bytes() {
        let mut cache = EvalCache::new(8);
        assert!(cache.is_empty());
        let slot = size_of::<Option<Entry>>();
        assert_eq!(
            slot, 64,
            "the size selfplay.eval_cache's documentation gives"
        );
        assert_eq!(cache.bytes(), 8 * slot);
        let all = leaves(300, 5);
        let mut lopsided = Lopsided::default();
        for leaf in &all {
            let e = lopsided.evaluate(std::slice::from_ref(leaf)).remove(0);
            cache.insert(leaf, &e);
        }
        assert!(cache.len() <= 8 && cache.len() >= 2, "{}", cache.len());
        let held: usize = cache
            .slots
            .iter()
            .flatten()
            .map(|e| e.moves.len() * 6)
            .sum();
        assert_eq!(cache.bytes(), 8 * slot + held);
        assert!(cache.bytes() <= 8 * (slot + brandubh_rules::MAX_MOVES * 6));
        // What it holds is what was put in last for those positions.
        let mut found = 0;
        for leaf in all.iter().rev() {
            if let Some(e) = cache.get(leaf) {
                found += 1;
                assert_eq!(e, lopsided.evaluate(std::slice::from_ref(leaf)).remove(0));
            }
        }
        assert!(found >= cache.len());
        assert_eq!(EvalCache::new(0).capacity(), 1);
    }
}
