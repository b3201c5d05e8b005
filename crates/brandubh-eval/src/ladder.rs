//! The ladder: every checkpoint of a run and a few baselines rated on one Elo scale.
//!
//! [`ladder`] plays two-game matches between
//! - every two baselines (so that the baselines are placed relative to `random`),
//! - every checkpoint and every baseline,
//! - every checkpoint and the [`LadderConfig::neighbours`] checkpoints before it,
//!
//! fits maximum-likelihood Bradley–Terry ratings over all their games
//! ([`crate::elo::fit`]: draws as half points, `random` anchored at 0, 95 % intervals from
//! the Fisher information), and writes into the run directory:
//! - `ladder/games.jsonl`: one line per match played (a [`StoredMatch`]), rewritten
//!   atomically after each pairing. A later call reads it and only plays the matches a
//!   pairing is still missing (the same ply cap required), so adding a checkpoint or a
//!   baseline costs only its own pairings;
//! - `ladder/ratings.json`: the table as JSON ([`LadderReport`]);
//! - `elo.png`: Elo against training step, see [`crate::plot`].
//!
//! Agents are named in the stored file by a key: a baseline by its canonical spec
//! (`alphabeta:2`), a checkpoint by its file name and search settings
//! (`iter-000012@sims=64@algo=gumbel`), so games played with other settings are never
//! mixed up with these.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use brandubh_run::RunDir;
use brandubh_search::{Algorithm, SearchSettings};
use serde::{Deserialize, Serialize};

use crate::agent::{Checkpoint, Entrant, list_checkpoints, load_checkpoint, run_search_settings};
use crate::elo::{self, FitConfig, Rating, Results};
use crate::error::EvalError;
use crate::openings::OpeningConfig;
use crate::plot::{self, CurvePoint};
use crate::runner::{DEFAULT_PLY_CAP, MatchConfig, MatchRecord, run_matches};
use crate::scoring::Contestant;
use crate::seeds::{hash_name, mix};
use crate::spec::{AgentSpec, DEFAULT_NET_SIMULATIONS};

/// The anchor of the scale (rated 0); always among the baselines.
pub const ANCHOR: &str = "random";

/// What the ladder plays.
#[derive(Clone, Debug, PartialEq)]
pub struct LadderConfig {
    /// Baselines besides the checkpoints; `random` is added if missing. Default `random`,
    /// `greedy`.
    pub baselines: Vec<AgentSpec>,
    /// Matches per pairing, 1 to 10,000. Default 10.
    pub matches: u32,
    /// How many earlier checkpoints each checkpoint meets. Default 2.
    pub neighbours: u32,
    /// Simulations per move of the checkpoints. Default 64.
    pub simulations: u32,
    /// Search algorithm of the checkpoints; `None` (the default): the run's. The other
    /// search constants are always the run's (its `config.toml`).
    pub algorithm: Option<Algorithm>,
    /// Worker threads (0: all cores). Default 0.
    pub threads: usize,
    /// Seed of every pairing's openings and players (mixed with the two agents' keys).
    /// Default 0: a fixed seed, so the stored games of a run stay one series.
    pub seed: u64,
    /// Ply cap of the games. Default 200.
    pub ply_cap: u32,
    /// Write `elo.png`. Default true.
    pub plot: bool,
}

impl Default for LadderConfig {
    fn default() -> Self {
        LadderConfig {
            baselines: vec![AgentSpec::Random, AgentSpec::Greedy],
            matches: 10,
            neighbours: 2,
            simulations: DEFAULT_NET_SIMULATIONS,
            algorithm: None,
            threads: 0,
            seed: 0,
            ply_cap: DEFAULT_PLY_CAP,
            plot: true,
        }
    }
}

/// One line of `ladder/games.jsonl`: a match between the agents keyed `a` and `b`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredMatch {
    /// Key of agent A.
    pub a: String,
    /// Key of agent B.
    pub b: String,
    /// The pairing's seed.
    pub seed: u64,
    /// The ply cap the games were played with.
    pub ply_cap: u32,
    /// The match.
    #[serde(flatten)]
    pub record: MatchRecord,
}

/// A rated player of the ladder.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LadderEntry {
    /// Short name: the spec of a baseline, the file name of a checkpoint.
    pub name: String,
    /// The key of its games in `games.jsonl`.
    pub key: String,
    /// Whether it is a checkpoint of the run (else a baseline).
    pub checkpoint: bool,
    /// Training step of a checkpoint.
    pub step: Option<u64>,
    /// Creation time of a checkpoint, seconds since the Unix epoch.
    pub created_unix_s: Option<u64>,
    /// Games it played in the fit.
    pub games: u32,
    /// Its game score over them (wins + unfinished/2) / games.
    pub score: f64,
    /// Its rating.
    pub rating: Rating,
}

/// What [`ladder`] did and found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LadderReport {
    /// The anchor (rated 0).
    pub anchor: String,
    /// Ply cap of the games.
    pub ply_cap: u32,
    /// Every player, strongest first.
    pub entries: Vec<LadderEntry>,
    /// Matches played by this call.
    pub matches_played: u32,
    /// Stored matches reused.
    pub matches_reused: u32,
    /// The stored matches.
    pub games_file: PathBuf,
    /// The ratings.
    pub ratings_file: PathBuf,
    /// The plot, if drawn.
    pub plot_file: Option<PathBuf>,
    /// The machine this call played its matches on ([`brandubh_fs::cpu_description`]).
    #[serde(default)]
    pub cpu: String,
}

impl LadderReport {
    /// The ratings as a table, strongest first.
    #[must_use]
    pub fn table(&self) -> String {
        let width = self
            .entries
            .iter()
            .map(|e| e.name.len())
            .max()
            .unwrap_or(6)
            .max(6);
        let mut t = String::new();
        let _ = writeln!(
            t,
            "{:>3}  {:<width$}  {:>8}  {:>6}  {:>6}  {:>6}  95% interval",
            "#", "player", "step", "games", "score", "elo"
        );
        for (i, e) in self.entries.iter().enumerate() {
            let step = e.step.map_or_else(|| "-".to_owned(), |s| s.to_string());
            let interval = if e.key == self.anchor {
                "(anchor)".to_owned()
            } else {
                format!(
                    "{} to {}",
                    crate::runner::signed(e.rating.low),
                    crate::runner::signed(e.rating.high)
                )
            };
            let _ = writeln!(
                t,
                "{:>3}  {:<width$}  {:>8}  {:>6}  {:>6.3}  {:>6}  {interval}",
                i + 1,
                e.name,
                step,
                e.games,
                e.score,
                crate::runner::signed(e.rating.elo),
            );
        }
        t
    }
}

/// Progress of [`ladder`], given to its callback after every finished match.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LadderProgress {
    /// The pairing being played, `"A vs B"`.
    pub pairing: String,
    /// Matches finished by this call, over all pairings.
    pub done: u32,
    /// Matches this call has to play.
    pub total: u32,
}

/// A player of the ladder before it is prepared.
#[derive(Clone, Debug)]
struct Rung {
    key: String,
    name: String,
    source: Source,
}

#[derive(Clone, Debug)]
enum Source {
    Baseline(AgentSpec),
    Checkpoint(Box<Checkpoint>),
}

/// Reads `path` (one [`StoredMatch`] per line); a missing file holds none.
pub fn read_games(path: &Path) -> Result<(String, Vec<StoredMatch>), EvalError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok((String::new(), Vec::new()));
        }
        Err(e) => return Err(EvalError::io(path, e)),
    };
    let mut games = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let m: StoredMatch = serde_json::from_str(line).map_err(|e| EvalError::GamesFile {
            path: path.to_path_buf(),
            line: i + 1,
            cause: e.to_string(),
        })?;
        games.push(m);
    }
    Ok((text, games))
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), EvalError> {
    brandubh_fs::write_atomic(path, bytes).map_err(|e| EvalError::Io {
        path: e.path.clone(),
        cause: format!("cannot {}: {}", e.action, e.cause),
    })
}

/// Rates every checkpoint of `run_dir` and `config.baselines` on one scale; plays only the
/// matches the stored results lack. `progress` is called after every match played.
pub fn ladder(
    run_dir: &Path,
    config: &LadderConfig,
    progress: &(dyn Fn(&LadderProgress) + Sync),
) -> Result<LadderReport, EvalError> {
    if !(1..=10_000).contains(&config.matches) {
        return Err(EvalError::setting("matches", config.matches, "1 to 10000"));
    }
    let run = RunDir::new(run_dir);
    let checkpoints = list_checkpoints(run_dir)?;
    if checkpoints.is_empty() {
        return Err(EvalError::NoCheckpoints {
            run: run_dir.to_path_buf(),
            dir: run.checkpoints(),
        });
    }
    let mut settings = run_search_settings(Some(&run))?.with_simulations(config.simulations);
    if let Some(algorithm) = config.algorithm {
        settings.algorithm = algorithm;
    }
    let (rungs, n_baselines) = rungs(config, checkpoints, &settings);
    let pairings = pairings(n_baselines, rungs.len(), config.neighbours as usize);
    let mut store = GameStore::read(run.ladder_games())?;
    let (todo, reused) = store.missing(&pairings, &rungs, config);
    let played = play_missing(&todo, &rungs, &settings, config, &mut store, progress)?;
    let mut entries = rate(&rungs, &store.stored, config.ply_cap)?;
    let plot_file = if config.plot {
        Some(write_elo_plot(&run, &entries)?)
    } else {
        None
    };
    entries.sort_by(|a, b| b.rating.elo.total_cmp(&a.rating.elo));
    let report = LadderReport {
        anchor: ANCHOR.to_owned(),
        ply_cap: config.ply_cap,
        entries,
        matches_played: played,
        matches_reused: reused,
        games_file: store.file,
        ratings_file: run.ladder_ratings(),
        plot_file,
        cpu: brandubh_fs::cpu_description(),
    };
    let json =
        serde_json::to_vec_pretty(&report).map_err(|e| EvalError::io(&report.ratings_file, e))?;
    write_file(&report.ratings_file, &json)?;
    Ok(report)
}

/// The ladder's players: the baselines first (`random` among them), then the checkpoints by
/// step, keyed by their search. Returns them and the number of baselines.
fn rungs(
    config: &LadderConfig,
    checkpoints: Vec<Checkpoint>,
    settings: &SearchSettings,
) -> (Vec<Rung>, usize) {
    let mut rungs: Vec<Rung> = Vec::new();
    let mut baselines = config.baselines.clone();
    if !baselines.contains(&AgentSpec::Random) {
        baselines.insert(0, AgentSpec::Random);
    }
    for spec in baselines {
        let key = spec.to_string();
        if rungs.iter().all(|e| e.key != key) {
            rungs.push(Rung {
                name: key.clone(),
                key,
                source: Source::Baseline(spec),
            });
        }
    }
    let n_baselines = rungs.len();
    let settings_key = search_key(settings);
    for c in checkpoints {
        rungs.push(Rung {
            key: format!("{}{settings_key}", c.name),
            name: c.name.clone(),
            source: Source::Checkpoint(Box::new(c)),
        });
    }
    (rungs, n_baselines)
}

/// Who meets whom: every pair of baselines, every checkpoint against every baseline and
/// against its `neighbours` predecessors.
fn pairings(n_baselines: usize, n: usize, neighbours: usize) -> Vec<(usize, usize)> {
    let mut pairings: Vec<(usize, usize)> = Vec::new();
    for i in 0..n_baselines {
        for j in i + 1..n_baselines {
            pairings.push((j, i));
        }
    }
    for c in n_baselines..n {
        for b in 0..n_baselines {
            pairings.push((c, b));
        }
        for d in 1..=neighbours {
            if c >= n_baselines + d {
                pairings.push((c, c - d));
            }
        }
    }
    pairings
}

/// Matches still to play for a pairing: `(x, y, how many, index of the first)`.
type Todo = (usize, usize, u32, u32);

/// The stored matches (`ladder/games.jsonl`), as text and parsed.
struct GameStore {
    file: PathBuf,
    text: String,
    stored: Vec<StoredMatch>,
}

impl GameStore {
    fn read(file: PathBuf) -> Result<GameStore, EvalError> {
        let (text, stored) = read_games(&file)?;
        Ok(GameStore { file, text, stored })
    }

    /// The matches each pairing lacks, and how many stored ones are reused.
    fn missing(
        &self,
        pairings: &[(usize, usize)],
        rungs: &[Rung],
        config: &LadderConfig,
    ) -> (Vec<Todo>, u32) {
        let same_pair = |m: &StoredMatch, x: &str, y: &str| {
            m.ply_cap == config.ply_cap && ((m.a == x && m.b == y) || (m.a == y && m.b == x))
        };
        let mut todo = Vec::new();
        let mut reused = 0;
        for &(x, y) in pairings {
            let (kx, ky) = (&rungs[x].key, &rungs[y].key);
            let existing: Vec<&StoredMatch> = self
                .stored
                .iter()
                .filter(|m| same_pair(m, kx, ky))
                .collect();
            reused += existing.len().min(config.matches as usize) as u32;
            let missing = config.matches.saturating_sub(existing.len() as u32);
            if missing > 0 {
                let next = existing
                    .iter()
                    .map(|m| m.record.index + 1)
                    .max()
                    .unwrap_or(0);
                todo.push((x, y, missing, next));
            }
        }
        (todo, reused)
    }

    /// Appends matches and rewrites the file (atomically).
    fn append(&mut self, matches: Vec<StoredMatch>) -> Result<(), EvalError> {
        for m in matches {
            let line = serde_json::to_string(&m).map_err(|e| EvalError::io(&self.file, e))?;
            if !self.text.is_empty() && !self.text.ends_with('\n') {
                self.text.push('\n');
            }
            self.text.push_str(&line);
            self.text.push('\n');
            self.stored.push(m);
        }
        write_file(&self.file, self.text.as_bytes())
    }
}

/// Plays what `todo` lists (loading each player that has games to play once) and stores
/// every match as it is played; returns how many were played.
fn play_missing(
    todo: &[Todo],
    rungs: &[Rung],
    settings: &SearchSettings,
    config: &LadderConfig,
    store: &mut GameStore,
    progress: &(dyn Fn(&LadderProgress) + Sync),
) -> Result<u32, EvalError> {
    let mut agents: HashMap<usize, Entrant> = HashMap::new();
    for &(x, y, _, _) in todo {
        for i in [x, y] {
            if agents.contains_key(&i) {
                continue;
            }
            let e = &rungs[i];
            let agent = match &e.source {
                Source::Baseline(spec) => Entrant::prepare(spec)?,
                Source::Checkpoint(c) => {
                    let (net, _) = load_checkpoint(&c.stem)?;
                    Entrant::from_net(e.key.clone(), net, settings.clone())
                }
            };
            agents.insert(i, agent.named(e.key.clone()));
        }
    }
    let total: u32 = todo.iter().map(|t| t.2).sum();
    let done = AtomicU32::new(0);
    let mut played = 0;
    for &(x, y, missing, next) in todo {
        let (kx, ky) = (rungs[x].key.clone(), rungs[y].key.clone());
        let seed = pair_seed(config.seed, &kx, &ky);
        let match_config = MatchConfig {
            matches: missing,
            threads: config.threads,
            seed,
            ply_cap: config.ply_cap,
            openings: OpeningConfig::default(),
            first_match: next,
        };
        let pairing = format!("{} vs {}", rungs[x].name, rungs[y].name);
        let before = done.load(Ordering::SeqCst);
        let report = run_matches(&agents[&x], &agents[&y], &match_config, &|p| {
            done.store(before + p.done, Ordering::SeqCst);
            progress(&LadderProgress {
                pairing: pairing.clone(),
                done: before + p.done,
                total,
            });
        })?;
        played += report.match_records.len() as u32;
        let matches = report.match_records.into_iter().map(|record| StoredMatch {
            a: kx.clone(),
            b: ky.clone(),
            seed,
            ply_cap: config.ply_cap,
            record,
        });
        store.append(matches.collect())?;
    }
    Ok(played)
}

/// The Bradley–Terry fit over every stored game among `rungs` at this ply cap.
fn rate(
    rungs: &[Rung],
    stored: &[StoredMatch],
    ply_cap: u32,
) -> Result<Vec<LadderEntry>, EvalError> {
    let index: HashMap<&str, usize> = rungs
        .iter()
        .enumerate()
        .map(|(i, e)| (e.key.as_str(), i))
        .collect();
    let mut results = Results::new();
    let mut games = vec![0u32; rungs.len()];
    let mut points = vec![0.0f64; rungs.len()];
    for m in stored {
        let (Some(&ia), Some(&ib)) = (index.get(m.a.as_str()), index.get(m.b.as_str())) else {
            continue;
        };
        if m.ply_cap != ply_cap || ia == ib {
            continue;
        }
        for g in &m.record.games {
            let pa = g.points(Contestant::A);
            results.add_game(ia, ib, pa);
            games[ia] += 1;
            games[ib] += 1;
            points[ia] += pa;
            points[ib] += 1.0 - pa;
        }
    }
    let names: Vec<String> = rungs.iter().map(|e| e.name.clone()).collect();
    let anchor = rungs.iter().position(|e| e.key == ANCHOR).unwrap_or(0);
    let ratings = elo::fit(&names, &results, anchor, FitConfig::default())?;
    Ok(rungs
        .iter()
        .zip(&ratings)
        .enumerate()
        .map(|(i, (e, r))| {
            let (step, created) = match &e.source {
                Source::Checkpoint(c) => (Some(c.meta.step), Some(c.meta.created_unix_s)),
                Source::Baseline(_) => (None, None),
            };
            LadderEntry {
                name: e.name.clone(),
                key: e.key.clone(),
                checkpoint: matches!(e.source, Source::Checkpoint(_)),
                step,
                created_unix_s: created,
                games: games[i],
                score: if games[i] == 0 {
                    0.5
                } else {
                    points[i] / f64::from(games[i])
                },
                rating: *r,
            }
        })
        .collect())
}

/// `elo.png`: the checkpoints' ratings by step, the baselines as lines.
fn write_elo_plot(run: &RunDir, entries: &[LadderEntry]) -> Result<PathBuf, EvalError> {
    let curve: Vec<CurvePoint> = entries
        .iter()
        .filter(|e| e.checkpoint)
        .map(|e| CurvePoint {
            step: e.step.unwrap_or(0) as f64,
            elo: e.rating.elo,
            low: e.rating.low,
            high: e.rating.high,
        })
        .collect();
    let lines: Vec<(String, f64)> = entries
        .iter()
        .filter(|e| !e.checkpoint)
        .map(|e| (e.name.clone(), e.rating.elo))
        .collect();
    let root = run.root();
    let run_name = root.file_name().map_or_else(
        || root.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let path = run.elo_plot();
    plot::write_plot(
        &path,
        &format!("Elo of run {run_name} by training step"),
        &curve,
        &lines,
    )?;
    Ok(path)
}

/// The seed of the pairing of the agents keyed `x` and `y` (in either order).
fn pair_seed(seed: u64, x: &str, y: &str) -> u64 {
    let (lo, hi) = if x <= y { (x, y) } else { (y, x) };
    mix(seed, &[hash_name(lo), hash_name(hi)])
}

/// How a checkpoint's search is named in the ladder's keys: `@sims=N@algo=A`, then every
/// constant of that algorithm that differs from the default (`@gumbel_c_scale=0.1`), so
/// that games played with other settings are never counted together.
fn search_key(settings: &SearchSettings) -> String {
    let mut key = format!("@sims={}@algo={}", settings.simulations, settings.algorithm);
    let d = SearchSettings::default();
    let mut differs = |name: &str, value: f64, default: f64| {
        if value != default {
            key.push_str(&format!("@{name}={value}"));
        }
    };
    differs("c_puct", settings.c_puct, d.c_puct);
    match settings.algorithm {
        Algorithm::Puct => differs("fpu_reduction", settings.fpu_reduction, d.fpu_reduction),
        Algorithm::Gumbel => {
            let m = f64::from(settings.gumbel_candidates);
            differs("gumbel_candidates", m, f64::from(d.gumbel_candidates));
            differs("gumbel_c_visit", settings.gumbel_c_visit, d.gumbel_c_visit);
            differs("gumbel_c_scale", settings.gumbel_c_scale, d.gumbel_c_scale);
        }
    }
    differs("value_discount", settings.value_discount, d.value_discount);
    key
}
