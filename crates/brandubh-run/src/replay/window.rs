//! [`ReplayWindow`]: the most recent positions of a run, sampled for training.

use std::collections::{HashSet, VecDeque};
use std::path::{Path, PathBuf};

use brandubh_rules::{Move, Position, Symmetry};
use rand::Rng;

use super::{Chunk, ReplayError, list_chunks, read_chunk};

/// One training position, reconstructed from a chunk.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainingSample {
    /// The position (side to move included).
    pub position: Position,
    /// How many times this position has occurred in its game, this time included (1–4;
    /// the fifth occurrence ends the game, rule 8.4).
    pub repetitions: u32,
    /// Its ply in the game.
    pub ply: u32,
    /// The policy target: legal moves of `position` with probabilities summing to 1; empty
    /// for a value-only sample of a cheap search.
    pub policy: Vec<(Move, f32)>,
    /// The game's final result from the side to move's view: +1 won, −1 lost, 0 unfinished.
    pub result: f32,
    /// Plies from this position to the end of its game: at least 1.
    pub plies_to_end: u32,
    /// The search's root value, from the side to move's view.
    pub root_value: f32,
    /// Whether the move was searched with the full budget (its policy is a training
    /// target).
    pub full_search: bool,
}

impl TrainingSample {
    /// The same sample seen through `symmetry`: the position and every policy move are
    /// transformed; values are unchanged. Legal moves map to legal moves, since the rules
    /// commute with the symmetries of the board.
    #[must_use]
    pub fn transformed(&self, symmetry: Symmetry) -> TrainingSample {
        TrainingSample {
            position: symmetry.position(&self.position),
            policy: self
                .policy
                .iter()
                .map(|&(mv, p)| (symmetry.mv(mv), p))
                .collect(),
            ..self.clone()
        }
    }
}

/// A stored sample; its policy lives in the chunk's shared arena.
#[derive(Clone, Copy, Debug)]
struct Stored {
    position: Position,
    ply: u32,
    plies_to_end: u32,
    repetitions: u8,
    result: i8,
    root_value: f32,
    full_search: bool,
    policy_start: u32,
    policy_len: u8,
}

#[derive(Debug)]
struct WindowChunk {
    path: PathBuf,
    samples: Vec<Stored>,
    policy: Vec<(Move, f32)>,
}

impl WindowChunk {
    fn new(path: PathBuf, chunk: &Chunk) -> Result<WindowChunk, ReplayError> {
        let mut samples = Vec::with_capacity(chunk.position_count());
        let mut policy = Vec::new();
        for (game, record) in chunk.games.iter().enumerate() {
            let decoded = record.samples().map_err(|error| ReplayError::Game {
                file: path.clone(),
                game,
                error,
            })?;
            for s in decoded {
                samples.push(Stored {
                    position: s.position,
                    ply: s.ply,
                    plies_to_end: s.plies_to_end,
                    // At most 4 (the fifth occurrence ends the game).
                    repetitions: s.repetitions.min(255) as u8,
                    result: s.result as i8,
                    root_value: s.root_value,
                    full_search: s.full_search,
                    policy_start: policy.len() as u32,
                    // Validated records list each legal move at most once: at most 96.
                    policy_len: s.policy.len() as u8,
                });
                policy.extend_from_slice(&s.policy);
            }
        }
        Ok(WindowChunk {
            path,
            samples,
            policy,
        })
    }

    fn sample(&self, i: usize) -> TrainingSample {
        let s = &self.samples[i];
        let start = s.policy_start as usize;
        TrainingSample {
            position: s.position,
            repetitions: u32::from(s.repetitions),
            ply: s.ply,
            policy: self.policy[start..start + s.policy_len as usize].to_vec(),
            result: f32::from(s.result),
            plies_to_end: s.plies_to_end,
            root_value: s.root_value,
            full_search: s.full_search,
        }
    }
}

/// What [`ReplayWindow::refresh`] did.
#[derive(Debug, Default)]
pub struct RefreshReport {
    /// Chunks read from disk.
    pub loaded: usize,
    /// Chunks kept from memory.
    pub reused: usize,
    /// Corrupted chunks found and skipped by this refresh (each also logged with
    /// `tracing::warn!`); later refreshes skip them silently.
    pub skipped: Vec<ReplayError>,
}

/// The most recent positions of a run (at most `capacity`), sampled for training with a
/// random board symmetry, uniformly.
///
/// Positions are kept in chunk order (oldest first). When the window is over capacity the
/// oldest positions leave it. Loading a directory skips corrupted chunks with a warning.
///
/// ```
/// use brandubh_run::replay::ReplayWindow;
/// use rand::SeedableRng;
///
/// let dir = std::env::temp_dir().join("brandubh-run-doc-window");
/// let (window, report) = ReplayWindow::load(&dir, 10_000)?;
/// let mut rng = rand::rngs::StdRng::seed_from_u64(0);
/// let batch = window.sample_batch(256, &mut rng); // empty while the run has no chunks
/// assert_eq!(batch.len(), if window.is_empty() { 0 } else { 256 });
/// # Ok::<(), brandubh_run::replay::ReplayError>(())
/// ```
#[derive(Debug)]
pub struct ReplayWindow {
    capacity: usize,
    chunks: VecDeque<WindowChunk>,
    /// Positions at the front of the oldest chunk that are outside the window.
    skip: usize,
    /// Index of the first window position of each chunk (after `skip`), for sampling.
    starts: Vec<usize>,
    len: usize,
    /// Chunk files found corrupted, not read (nor reported) again.
    corrupted: HashSet<PathBuf>,
}

impl ReplayWindow {
    /// An empty window holding at most `capacity` positions.
    #[must_use]
    pub fn new(capacity: usize) -> ReplayWindow {
        ReplayWindow {
            capacity,
            chunks: VecDeque::new(),
            skip: 0,
            starts: Vec::new(),
            len: 0,
            corrupted: HashSet::new(),
        }
    }

    /// A window of the most recent `capacity` positions of the chunks in `dir` (see
    /// [`ReplayWindow::refresh`]).
    pub fn load(dir: &Path, capacity: usize) -> Result<(ReplayWindow, RefreshReport), ReplayError> {
        let mut window = ReplayWindow::new(capacity);
        let report = window.refresh(dir)?;
        Ok((window, report))
    }

    /// The number of positions in the window.
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the window holds no position.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The most positions the window holds.
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The chunk files (or names given to [`ReplayWindow::push_chunk`]) with positions in
    /// the window, oldest first.
    pub fn chunk_paths(&self) -> impl Iterator<Item = &Path> {
        self.chunks.iter().map(|c| c.path.as_path())
    }

    /// Changes the capacity (e.g. to [`crate::config::TrainingConfig::window_size`] of
    /// the data so far). Shrinking drops the oldest positions at once; growing takes
    /// effect with the next chunks pushed or the next [`ReplayWindow::refresh`], which
    /// reloads older chunks from disk.
    pub fn set_capacity(&mut self, capacity: usize) {
        self.capacity = capacity;
        self.trim();
    }

    /// Adds the positions of a newer chunk, `path` naming it, and drops the oldest
    /// positions beyond capacity. Fails (leaving the window unchanged) if a game does not
    /// replay.
    pub fn push_chunk(&mut self, path: PathBuf, chunk: &Chunk) -> Result<(), ReplayError> {
        let loaded = WindowChunk::new(path, chunk)?;
        self.chunks.push_back(loaded);
        self.trim();
        Ok(())
    }

    /// Brings the window up to date with the chunk files in `dir`: it then holds the most
    /// recent `capacity` positions of the valid chunks there (fewer if there are not
    /// enough). Chunks already in memory are reused, missing ones are read, corrupted ones
    /// are skipped with a `tracing::warn!` and listed in the report (once: the window
    /// remembers them). Only an unreadable directory is an error.
    pub fn refresh(&mut self, dir: &Path) -> Result<RefreshReport, ReplayError> {
        let listed = list_chunks(dir)?;
        let mut report = RefreshReport::default();
        let mut old: Vec<WindowChunk> = self.chunks.drain(..).collect();
        let mut picked: Vec<WindowChunk> = Vec::new();
        let mut total = 0;
        for entry in listed.iter().rev() {
            if total >= self.capacity {
                break;
            }
            if self.corrupted.contains(&entry.path) {
                continue;
            }
            let chunk = if let Some(i) = old.iter().position(|c| c.path == entry.path) {
                report.reused += 1;
                old.swap_remove(i)
            } else {
                match read_chunk(&entry.path).and_then(|c| WindowChunk::new(entry.path.clone(), &c))
                {
                    Ok(chunk) => {
                        report.loaded += 1;
                        chunk
                    }
                    Err(err) => {
                        tracing::warn!("skipping corrupted replay chunk: {err}");
                        self.corrupted.insert(entry.path.clone());
                        report.skipped.push(err);
                        continue;
                    }
                }
            };
            total += chunk.samples.len();
            picked.push(chunk);
        }
        picked.reverse();
        self.chunks = picked.into();
        self.skip = 0;
        self.trim();
        Ok(report)
    }

    /// Drops whole chunks and then positions from the front until within capacity, and
    /// recomputes the sampling index.
    fn trim(&mut self) {
        let mut total: usize =
            self.chunks.iter().map(|c| c.samples.len()).sum::<usize>() - self.skip;
        while let Some(front) = self.chunks.front() {
            let in_window = front.samples.len() - self.skip;
            if total - in_window >= self.capacity && total > self.capacity {
                total -= in_window;
                self.chunks.pop_front();
                self.skip = 0;
            } else {
                break;
            }
        }
        if total > self.capacity {
            self.skip += total - self.capacity;
            total = self.capacity;
        }
        self.len = total;
        self.starts.clear();
        let mut at = 0;
        for (i, c) in self.chunks.iter().enumerate() {
            self.starts.push(at);
            at += c.samples.len() - if i == 0 { self.skip } else { 0 };
        }
    }

    /// The `index`-th position of the window (0 = oldest), untransformed.
    #[must_use]
    pub fn get(&self, index: usize) -> Option<TrainingSample> {
        if index >= self.len {
            return None;
        }
        // The last chunk starting at or before `index`.
        let c = self.starts.partition_point(|&s| s <= index) - 1;
        let offset = index - self.starts[c] + if c == 0 { self.skip } else { 0 };
        Some(self.chunks[c].sample(offset))
    }

    /// A position drawn uniformly from the window, under a symmetry drawn uniformly from
    /// the 8; `None` if the window is empty.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> Option<TrainingSample> {
        if self.len == 0 {
            return None;
        }
        let index = rng.random_range(0..self.len);
        let symmetry = Symmetry::ALL[rng.random_range(0..Symmetry::ALL.len())];
        self.get(index).map(|s| s.transformed(symmetry))
    }

    /// `n` samples drawn independently with [`ReplayWindow::sample`] (with replacement);
    /// empty if the window is.
    pub fn sample_batch<R: Rng + ?Sized>(&self, n: usize, rng: &mut R) -> Vec<TrainingSample> {
        if self.len == 0 {
            return Vec::new();
        }
        (0..n).filter_map(|_| self.sample(rng)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::testutil::random_chunk;
    use crate::replay::{chunk_file_name, write_chunk};
    use brandubh_rules::Game;
    use proptest::prelude::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    /// All samples of the chunks, oldest first.
    fn all_samples(chunks: &[Chunk]) -> Vec<TrainingSample> {
        chunks
            .iter()
            .flat_map(|c| &c.games)
            .flat_map(|g| g.samples().unwrap())
            .collect()
    }

    fn window_samples(w: &ReplayWindow) -> Vec<TrainingSample> {
        (0..w.len()).map(|i| w.get(i).unwrap()).collect()
    }

    #[test]
    fn push_keeps_the_most_recent_positions() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let chunks: Vec<Chunk> = (0..5).map(|i| random_chunk(&mut rng, 3, i + 1)).collect();
        let all = all_samples(&chunks);
        for capacity in [0, 1, 7, 50, 100, all.len() - 1, all.len(), all.len() + 10] {
            let mut w = ReplayWindow::new(capacity);
            for (i, c) in chunks.iter().enumerate() {
                w.push_chunk(PathBuf::from(format!("c{i}")), c).unwrap();
            }
            let expected = &all[all.len() - capacity.min(all.len())..];
            assert_eq!(window_samples(&w), expected, "capacity {capacity}");
            assert_eq!(w.get(w.len()), None);
        }
        let mut w = ReplayWindow::new(all.len());
        for (i, c) in chunks.iter().enumerate() {
            w.push_chunk(PathBuf::from(format!("c{i}")), c).unwrap();
        }
        w.set_capacity(10);
        assert_eq!(window_samples(&w), &all[all.len() - 10..]);
    }

    #[test]
    fn refresh_loads_newest_chunks_skips_corrupt_and_grows() {
        let dir = tempfile::tempdir().unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let chunks: Vec<Chunk> = (0..4).map(|i| random_chunk(&mut rng, 2, i + 1)).collect();
        for (i, c) in chunks.iter().enumerate() {
            write_chunk(&dir.path().join(chunk_file_name(i as u32 + 1, 0)), c).unwrap();
        }
        // Corrupt the third chunk.
        let bad = dir.path().join(chunk_file_name(3, 0));
        let mut bytes = std::fs::read(&bad).unwrap();
        let n = bytes.len();
        bytes[n / 2] ^= 0x55;
        std::fs::write(&bad, bytes).unwrap();
        let good: Vec<Chunk> = [0, 1, 3].iter().map(|&i| chunks[i].clone()).collect();
        let all = all_samples(&good);

        let last = chunks[3].position_count();
        let (mut w, report) = ReplayWindow::load(dir.path(), last).unwrap();
        assert_eq!((report.loaded, report.skipped.len()), (1, 0));
        assert_eq!(window_samples(&w), &all[all.len() - last..]);

        w.set_capacity(all.len() + 100);
        let report = w.refresh(dir.path()).unwrap();
        assert_eq!((report.loaded, report.reused), (2, 1));
        assert_eq!(report.skipped.len(), 1);
        let msg = report.skipped[0].to_string();
        assert!(msg.contains("chunk-000003-000000.brz"), "{msg}");
        assert_eq!(window_samples(&w), all);
        let paths: Vec<_> = w.chunk_paths().collect();
        assert_eq!(paths.len(), 3);
        // The corrupted chunk is reported once.
        let report = w.refresh(dir.path()).unwrap();
        assert_eq!(
            (report.loaded, report.reused, report.skipped.len()),
            (0, 3, 0)
        );
        assert_eq!(window_samples(&w), all);
    }

    #[test]
    fn sampling_is_seeded_and_covers_symmetries() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut w = ReplayWindow::new(1000);
        w.push_chunk("a".into(), &random_chunk(&mut rng, 4, 1))
            .unwrap();
        let a = w.sample_batch(64, &mut ChaCha8Rng::seed_from_u64(9));
        let b = w.sample_batch(64, &mut ChaCha8Rng::seed_from_u64(9));
        assert_eq!(a, b);
        assert_eq!(a.len(), 64);
        assert!(ReplayWindow::new(5).sample(&mut rng).is_none());
        // The newest position alone: sampling shows each of its symmetric images.
        w.set_capacity(1);
        let only = w.get(0).unwrap().position;
        let images: std::collections::HashSet<_> =
            Symmetry::ALL.iter().map(|s| s.position(&only)).collect();
        let seen: std::collections::HashSet<_> = (0..200)
            .filter_map(|_| w.sample(&mut rng))
            .map(|s| s.position)
            .collect();
        assert_eq!(seen, images);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

        /// Every symmetry maps policy targets to legal moves of the transformed position,
        /// and the mapped position is the replay of the mapped moves.
        #[test]
        fn symmetric_samples_keep_targets_legal(seed in any::<u64>()) {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut w = ReplayWindow::new(10_000);
            w.push_chunk("p".into(), &random_chunk(&mut rng, 2, 1)).unwrap();
            for _ in 0..50 {
                let Some(s) = w.sample(&mut rng) else { break };
                let legal = s.position.legal_moves();
                for (mv, p) in &s.policy {
                    prop_assert!(legal.contains(mv), "{mv} not legal in {}", s.position);
                    prop_assert!((0.0..=1.0).contains(p));
                }
                let sum: f32 = s.policy.iter().map(|e| e.1).sum();
                prop_assert!(s.policy.is_empty() || (sum - 1.0).abs() < 0.01);
            }
            // And for every symmetry explicitly, with the game still playable.
            let s = w.get(w.len() / 2).unwrap();
            for sym in Symmetry::ALL {
                let t = s.transformed(sym);
                let legal = t.position.legal_moves();
                prop_assert!(t.policy.iter().all(|(m, _)| legal.contains(m)));
                prop_assert_eq!(legal.len(), s.position.legal_moves().len());
                if let Some(&(mv, _)) = t.policy.first() {
                    prop_assert!(Game::new(t.position).play(mv).is_ok());
                }
            }
        }
    }
}
