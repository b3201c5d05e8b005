//! End-to-end tests of the training loop on `configs/tiny.toml`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests may unwrap: a panic is a failed test"
)]

use std::path::{Path, PathBuf};

use brandubh_net::checkpoint;
use brandubh_net::{Device, NetConfig};
use brandubh_run::config::{RunConfig, SprtConfig};
use brandubh_run::metrics::{self, MatchSummary, SprtSummary, SprtVerdict};
use brandubh_run::replay;
use brandubh_run::{RunDir, RunState};
use brandubh_train::run::{self, NoEvaluation, Quiet, RunError, RunOptions};

mod common;

use common::{options, tiny};

/// A run directory that does not exist yet, inside a scratch directory removed on drop.
fn scratch_run() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    (tmp, run)
}

/// Trains `config` in `run_dir` (at most `max_new` more iterations), quietly and without
/// evaluation.
fn train(config: &RunConfig, run_dir: &Path, max_new: Option<u32>) -> Result<RunState, RunError> {
    run::train(
        config,
        &options(run_dir, max_new),
        &mut Quiet,
        &mut NoEvaluation,
    )
}

fn games_in_chunks(dir: &RunDir) -> usize {
    replay::list_chunks(&dir.chunks())
        .unwrap()
        .iter()
        .map(|c| replay::read_chunk(&c.path).unwrap().games.len())
        .sum()
}

#[test]
fn two_iterations_leave_a_complete_run_directory() {
    let (_tmp, run_dir) = scratch_run();
    let config = tiny();
    let state = train(&config, &run_dir, None).unwrap();
    assert_eq!(state.iteration, 2);
    assert_eq!(state.total_games, 8);
    let dir = RunDir::new(&run_dir);
    // Every chunk decodes (replaying its games through the rules) and holds all games.
    assert_eq!(games_in_chunks(&dir), 8);
    let positions: u64 = replay::list_chunks(&dir.chunks())
        .unwrap()
        .iter()
        .map(|c| replay::read_chunk(&c.path).unwrap().position_count() as u64)
        .sum();
    assert_eq!(positions, state.total_positions);
    // Checkpoints 0..=2 load with the run's network shape.
    let expected = run::net_config(&config);
    for i in 0..=2 {
        let (_, meta) =
            checkpoint::load(dir.checkpoint(i), &Device::flex(), Some(&expected)).unwrap();
        assert_eq!(meta.config, expected);
    }
    assert!(checkpoint::load(dir.checkpoint(2), &Device::flex(), Some(&NetConfig::new())).is_err());
    // One metrics line per iteration, and the plot.
    let lines = metrics::read_metrics(&dir.metrics()).unwrap();
    assert_eq!(
        lines.iter().map(|m| m.iteration).collect::<Vec<_>>(),
        vec![1, 2]
    );
    assert!(
        lines
            .iter()
            .all(|m| m.selfplay_games == 4 && m.training_steps == 3)
    );
    assert!(
        lines
            .iter()
            .all(|m| m.policy_loss.is_finite() && m.value_loss.is_finite())
    );
    let png = std::fs::read(run_dir.join("learning_curves.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    // Nothing left half-written.
    for d in [run_dir.clone(), dir.chunks(), dir.checkpoints()] {
        for e in std::fs::read_dir(d).unwrap() {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            assert!(!name.ends_with(".tmp"), "{name}");
        }
    }
    // A finished run does nothing more.
    let again = train(&config, &run_dir, None).unwrap();
    assert_eq!(again, state);
}

/// `selfplay.fork_fraction = 1`: the games of iteration 2 continue games of iteration 1
/// part-way through. With 4 random opening plies, two games that start afresh share their
/// first 5 moves only by a chance of about 1 in 10^6.
#[test]
fn forked_games_continue_the_previous_iterations_games() {
    let (_tmp, run_dir) = scratch_run();
    let mut config = tiny();
    config.selfplay.fork_fraction = 1.0;
    config.selfplay.opening_random_plies = Some(4);
    config.selfplay.games_per_iteration = 6;
    train(&config, &run_dir, None).unwrap();
    let dir = RunDir::new(&run_dir);
    let games = |iteration: u32| -> Vec<replay::GameRecord> {
        replay::list_chunks(&dir.chunks())
            .unwrap()
            .iter()
            .filter(|c| c.iteration == iteration)
            .flat_map(|c| replay::read_chunk(&c.path).unwrap().games)
            .collect()
    };
    let (first, second) = (games(1), games(2));
    assert_eq!((first.len(), second.len()), (6, 6));
    let shared = |g: &replay::GameRecord, pool: &[replay::GameRecord]| {
        pool.iter()
            .map(|f| {
                f.moves
                    .iter()
                    .zip(&g.moves)
                    .take_while(|(a, b)| a == b)
                    .count()
            })
            .max()
            .unwrap()
    };
    // Iteration 1 had nothing to fork from: its games share no 5-move line.
    for (i, g) in first.iter().enumerate() {
        let others: Vec<_> = first
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != i)
            .map(|(_, f)| f.clone())
            .collect();
        assert!(shared(g, &others) < 5, "{:?}", g.moves);
    }
    // A fork is drawn uniformly from the plies 1..len of 20-40-ply games, so most start
    // past the random opening.
    let deep = second.iter().filter(|g| shared(g, &first) >= 5).count();
    assert!(
        deep >= 4,
        "only {deep} of 6 games continue a game of iteration 1"
    );
}

/// The self-play path a GPU build uses (burn's forward pass on the training device), run
/// here on the CPU device: it plays and records the games of an iteration like the fast
/// path does.
#[test]
fn selfplay_can_run_on_the_training_device() {
    let (_tmp, run_dir) = scratch_run();
    let config = tiny();
    let options = RunOptions {
        selfplay_on_device: true,
        ..options(&run_dir, Some(1))
    };
    let state = run::train(&config, &options, &mut Quiet, &mut NoEvaluation).unwrap();
    assert_eq!(state.iteration, 1);
    assert_eq!(state.total_games, 4);
    assert_eq!(games_in_chunks(&RunDir::new(&run_dir)), 4);
}

#[test]
fn a_stopped_run_resumes_where_it_stopped() {
    let (_tmp, run_dir) = scratch_run();
    let config = tiny();
    let first = train(&config, &run_dir, Some(1)).unwrap();
    assert_eq!(first.iteration, 1);
    let second = train(&config, &run_dir, Some(1)).unwrap();
    assert_eq!(second.iteration, 2);
    assert_eq!(second.total_games, 8);
    assert!(second.total_steps > first.total_steps);
    let dir = RunDir::new(&run_dir);
    assert_eq!(games_in_chunks(&dir), 8);
    let lines = metrics::read_metrics(&dir.metrics()).unwrap();
    assert_eq!(lines.len(), 2);
}

#[test]
fn games_written_before_a_crash_are_kept_and_not_replayed() {
    let (_tmp, run_dir) = scratch_run();
    let config = tiny();
    train(&config, &run_dir, Some(1)).unwrap();
    let dir = RunDir::new(&run_dir);
    let state_after_1 = std::fs::read(dir.state()).unwrap();
    train(&config, &run_dir, Some(1)).unwrap();
    // Simulate a kill after iteration 2's self-play (its chunks are on disk) but before
    // its state was written, with a half-written temporary file lying around.
    std::fs::write(dir.state(), &state_after_1).unwrap();
    std::fs::write(dir.chunks().join("chunk-000002-000009.brz.tmp"), b"partial").unwrap();
    let state = train(&config, &run_dir, None).unwrap();
    assert_eq!(state.iteration, 2);
    assert_eq!(
        state.total_games, 8,
        "iteration 2's games were reused, none replayed"
    );
    assert_eq!(games_in_chunks(&dir), 8);
    assert!(!dir.chunks().join("chunk-000002-000009.brz.tmp").exists());
    let lines = metrics::read_metrics(&dir.metrics()).unwrap();
    assert_eq!(
        lines.iter().map(|m| m.iteration).collect::<Vec<_>>(),
        vec![1, 2]
    );
    // Iteration 2's games were all on disk: the resumed process played none, so it
    // reports no self-play rate (null) rather than 0 evaluations/s.
    assert!(lines[0].evaluations_per_s > 0.0);
    assert!(
        lines[1].evaluations_per_s.is_nan(),
        "{}",
        lines[1].evaluations_per_s
    );
    let text = std::fs::read_to_string(dir.metrics()).unwrap();
    assert!(
        text.lines()
            .nth(1)
            .unwrap()
            .contains("\"evaluations_per_s\":null")
    );
}

/// The opening plies (played at random from each game's seed) of every game of
/// `iteration`, in chunk order.
fn openings_of(dir: &RunDir, iteration: u32, plies: usize) -> Vec<Vec<brandubh_rules::Move>> {
    games_of(dir, iteration)
        .into_iter()
        .map(|g| g.moves[..plies].to_vec())
        .collect()
}

/// A run of `config` in a scratch directory, killed during iteration 2's self-play after
/// the chunks of its first two games (one game a chunk in `tiny`) were written.
fn cut_short_in_iteration_2(config: &RunConfig) -> (tempfile::TempDir, PathBuf) {
    let (tmp, run_dir) = scratch_run();
    train(config, &run_dir, Some(1)).unwrap();
    let dir = RunDir::new(&run_dir);
    let state_after_1 = std::fs::read(dir.state()).unwrap();
    train(config, &run_dir, Some(1)).unwrap();
    std::fs::write(dir.state(), &state_after_1).unwrap();
    for entry in replay::list_chunks(&dir.chunks()).unwrap() {
        if entry.iteration == 2 && entry.seq >= 2 {
            std::fs::remove_file(&entry.path).unwrap();
        }
    }
    (tmp, run_dir)
}

/// The games of `iteration` in the run's chunks, in chunk order.
fn games_of(dir: &RunDir, iteration: u32) -> Vec<replay::GameRecord> {
    let mut entries = replay::list_chunks(&dir.chunks()).unwrap();
    entries.retain(|e| e.iteration == iteration);
    entries.sort_by_key(|e| e.seq);
    entries
        .iter()
        .flat_map(|e| replay::read_chunk(&e.path).unwrap().games)
        .collect()
}

#[test]
fn an_iteration_cut_short_is_completed_with_the_game_seeds_not_yet_on_disk() {
    let mut config = tiny();
    // Random opening plies, drawn from each game's seed, tell the games' seeds apart.
    let plies = 3;
    config.selfplay.opening_random_plies = Some(plies as u32);
    let (_full_tmp, full_run) = scratch_run();
    train(&config, &full_run, None).unwrap();
    let full = openings_of(&RunDir::new(&full_run), 2, plies);
    assert_eq!(full.len(), 4);

    let (_tmp, run_dir) = cut_short_in_iteration_2(&config);
    let dir = RunDir::new(&run_dir);
    assert_eq!(openings_of(&dir, 2, plies), full[..2]);
    let state = train(&config, &run_dir, None).unwrap();
    assert_eq!(state.total_games, 8);
    // The games on disk were the first two seeds, so the resumed session played the
    // other two: no seed twice, none skipped, in the uninterrupted run's order.
    assert_eq!(openings_of(&dir, 2, plies), full);
}

#[test]
fn a_resumed_iteration_counts_the_sparring_games_already_on_disk_as_sparring_games() {
    // The chunks record which games sparred (format version 3), so an iteration cut short
    // reports the games and rates of the uninterrupted run.
    let mut config = tiny();
    config.selfplay.sparring_fraction = 0.75;
    config.selfplay.sparring_depth = 1;
    let (_full_tmp, full_run) = scratch_run();
    train(&config, &full_run, None).unwrap();
    let full = metrics::read_metrics(&RunDir::new(&full_run).metrics()).unwrap();

    let (_tmp, run_dir) = cut_short_in_iteration_2(&config);
    let dir = RunDir::new(&run_dir);
    let on_disk = games_of(&dir, 2).iter().filter(|g| g.sparring).count();
    assert!(on_disk > 0, "no sparring game among the games kept on disk");
    train(&config, &run_dir, None).unwrap();
    let resumed = metrics::read_metrics(&dir.metrics()).unwrap();
    let (a, b) = (&full[1], &resumed[1]);
    assert_eq!((a.iteration, b.iteration), (2, 2));
    // Which games spar is drawn from the games' seeds: the same games as without the cut.
    assert_eq!(
        (a.selfplay_games, a.sparring_games),
        (b.selfplay_games, b.sparring_games)
    );
    // And the metrics count exactly the iteration's chunks: sparring games apart, the
    // rates over the others. (The games after the cut may differ from the uninterrupted
    // run's move for move: the resumed workers search them alongside other games.)
    let games = games_of(&dir, 2);
    let black = Some(brandubh_rules::Side::Black);
    let (sparring, others): (Vec<_>, Vec<_>) = games.iter().partition(|g| g.sparring);
    assert!(sparring.len() >= on_disk);
    assert_eq!(b.sparring_games as usize, sparring.len());
    let sparring_black = sparring
        .iter()
        .filter(|g| g.result.winner() == black)
        .count();
    assert_eq!(b.sparring_black_wins as usize, sparring_black);
    let others_black = others.iter().filter(|g| g.result.winner() == black).count();
    let rate = others_black as f64 / others.len().max(1) as f64;
    assert!((b.black_win_rate - rate).abs() < 1e-9, "{b:?}");
}

#[test]
fn a_changed_configuration_is_refused_unless_forced() {
    let (_tmp, run_dir) = scratch_run();
    let config = tiny();
    train(&config, &run_dir, Some(1)).unwrap();
    let mut changed = config.clone();
    changed.training.learning_rate = 0.01;
    let err = train(&changed, &run_dir, Some(1)).unwrap_err();
    assert!(matches!(err, RunError::ConfigChanged { .. }), "{err}");
    assert!(err.to_string().contains("training.learning_rate"), "{err}");
    let mut forced = options(&run_dir, Some(1));
    forced.force_config = true;
    let state = run::train(&changed, &forced, &mut Quiet, &mut NoEvaluation).unwrap();
    assert_eq!(state.iteration, 2);
}

#[test]
fn a_corrupted_chunk_is_skipped_and_a_corrupted_checkpoint_is_named() {
    let (_tmp, run_dir) = scratch_run();
    let config = tiny();
    train(&config, &run_dir, Some(1)).unwrap();
    let dir = RunDir::new(&run_dir);
    // Flip a byte in the middle of the first chunk: training skips it with a warning.
    let chunk = replay::list_chunks(&dir.chunks()).unwrap()[0].path.clone();
    let mut bytes = std::fs::read(&chunk).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x55;
    std::fs::write(&chunk, &bytes).unwrap();
    let state = train(&config, &run_dir, Some(1)).unwrap();
    assert_eq!(state.iteration, 2);
    // Truncate the latest checkpoint's weights: the next run names the file.
    let (weights, _) = checkpoint::paths(dir.checkpoint(2));
    let bytes = std::fs::read(&weights).unwrap();
    std::fs::write(&weights, &bytes[..bytes.len() / 3]).unwrap();
    // Raising `iterations` extends a run without --force-config.
    let mut more = config.clone();
    more.iterations = 3;
    let err = train(&more, &run_dir, Some(1)).unwrap_err().to_string();
    assert!(err.contains("iter-000002"), "{err}");
    assert!(!err.contains('\n'), "{err}");
}

/// Records what the loop asks the evaluator for.
#[derive(Default)]
struct Recording(Vec<(u32, brandubh_search::SearchSettings, u32)>);

impl run::Evaluate for Recording {
    fn evaluate(
        &mut self,
        request: &run::EvaluationRequest<'_>,
    ) -> Result<Option<run::EvaluationReport>, run::EvaluationError> {
        self.0.push((
            request.iteration,
            request.search.clone(),
            request.config.sims,
        ));
        Ok(None)
    }
}

/// In-training evaluation used to play with the search crate's default Gumbel settings
/// whatever the run searched with; the loop must hand the evaluator the run's own.
#[test]
fn evaluation_is_asked_to_search_with_the_runs_settings() {
    let (_tmp, run_dir) = scratch_run();
    let mut config = tiny();
    config.evaluation.matches = 1;
    config.search.algorithm = brandubh_search::Algorithm::Puct;
    config.search.c_puct = 2.0;
    config.search.gumbel_c_scale = 0.1;
    let mut recording = Recording::default();
    run::train(
        &config,
        &options(&run_dir, None),
        &mut Quiet,
        &mut recording,
    )
    .unwrap();
    let expected: Vec<_> = (1..=2)
        .map(|n| (n, config.search.clone(), config.evaluation.sims))
        .collect();
    assert_eq!(recording.0, expected);
}

/// Answers each iteration's evaluation with a sequential test's verdict against the
/// previous network.
struct Verdicts(Vec<SprtVerdict>);

impl run::Evaluate for Verdicts {
    fn evaluate(
        &mut self,
        request: &run::EvaluationRequest<'_>,
    ) -> Result<Option<run::EvaluationReport>, run::EvaluationError> {
        let verdict = self.0[request.iteration as usize - 1];
        // A lopsided record, so that a threshold gate would decide otherwise than the test.
        let (wins, losses) = if verdict == SprtVerdict::H1 {
            (3, 7)
        } else {
            (9, 1)
        };
        Ok(Some(run::EvaluationReport {
            vs_previous: Some(MatchSummary {
                opponent: "previous".into(),
                matches: wins + losses,
                wins,
                draws: 0,
                losses,
                sprt: Some(SprtSummary {
                    verdict,
                    elo0: 0.0,
                    elo1: 30.0,
                    llr: 0.0,
                    lower: -2.94,
                    upper: 2.94,
                }),
            }),
            vs_baseline: None,
        }))
    }
}

/// Gating by a sequential test: the new network replaces the self-play one only when the
/// test accepts H1, whatever its match score; the metrics line keeps the verdict.
#[test]
fn a_sequential_gate_keeps_the_new_network_only_on_h1() {
    let (_tmp, run_dir) = scratch_run();
    let mut config = tiny();
    config.iterations = 3;
    config.evaluation.matches = 1;
    config.evaluation.gating = true;
    config.evaluation.sprt = Some(SprtConfig::default());
    let mut verdicts = Verdicts(vec![
        SprtVerdict::H0,
        SprtVerdict::H1,
        SprtVerdict::Inconclusive,
    ]);
    let opts = options(&run_dir, Some(1));
    let state = run::train(&config, &opts, &mut Quiet, &mut verdicts).unwrap();
    assert!(
        state.selfplay_checkpoint.ends_with("iter-000000"),
        "{state:?}"
    );
    let state = run::train(&config, &opts, &mut Quiet, &mut verdicts).unwrap();
    assert!(
        state.selfplay_checkpoint.ends_with("iter-000002"),
        "{state:?}"
    );
    let state = run::train(&config, &opts, &mut Quiet, &mut verdicts).unwrap();
    assert!(
        state.selfplay_checkpoint.ends_with("iter-000002"),
        "{state:?}"
    );
    let lines = metrics::read_metrics(&RunDir::new(&run_dir).metrics()).unwrap();
    let gates: Vec<_> = lines
        .iter()
        .map(|m| {
            (
                m.accepted,
                m.vs_previous
                    .as_ref()
                    .and_then(|v| v.sprt)
                    .map(|t| t.verdict),
            )
        })
        .collect();
    assert_eq!(
        gates,
        vec![
            (Some(false), Some(SprtVerdict::H0)),
            (Some(true), Some(SprtVerdict::H1)),
            (Some(false), Some(SprtVerdict::Inconclusive)),
        ]
    );
}

/// `model.king_planes`: the run's networks take the King planes from iteration 0 on, train
/// on batches encoded with them (the stem's weights move), and a run continued with the
/// key removed is refused by name, and even when forced is not loaded into the wrong layout.
#[test]
fn king_planes_train_a_twelve_plane_network() {
    let (_tmp, run_dir) = scratch_run();
    let mut config = tiny();
    config.model.king_planes = true;
    train(&config, &run_dir, None).unwrap();
    let dir = RunDir::new(&run_dir);
    let expected = run::net_config(&config);
    assert_eq!(expected.planes(), 12);
    let (first, _) = checkpoint::load(dir.checkpoint(0), &Device::flex(), Some(&expected)).unwrap();
    let (last, meta) =
        checkpoint::load(dir.checkpoint(2), &Device::flex(), Some(&expected)).unwrap();
    assert_eq!(meta.config.input_planes, Some(12));
    let stem = |m: &brandubh_net::PolicyValueNet| {
        m.stem
            .conv
            .weight
            .val()
            .into_data()
            .try_to_vec::<f32>()
            .unwrap()
    };
    assert_ne!(stem(&first), stem(&last));
    let mut plain = config.clone();
    plain.model.king_planes = false;
    plain.iterations += 1;
    let err = train(&plain, &run_dir, Some(1)).unwrap_err().to_string();
    assert!(err.contains("model.king_planes"), "{err}");
    // Forced, the checkpoint still does not load into the other layout.
    let mut forced = options(&run_dir, Some(1));
    forced.force_config = true;
    let err = run::train(&plain, &forced, &mut Quiet, &mut NoEvaluation)
        .unwrap_err()
        .to_string();
    assert!(err.contains("input planes: found 12, expected 9"), "{err}");
}

/// `model.threat_planes` (with the King planes): the run trains a 16-plane network, and a
/// run continued without the key is refused by name.
#[test]
fn threat_planes_train_a_sixteen_plane_network() {
    let (_tmp, run_dir) = scratch_run();
    let mut config = tiny();
    config.model.king_planes = true;
    config.model.threat_planes = true;
    config.iterations = 1;
    train(&config, &run_dir, None).unwrap();
    let expected = run::net_config(&config);
    assert_eq!(expected.planes(), 16);
    let (_, meta) = checkpoint::load(
        RunDir::new(&run_dir).checkpoint(1),
        &Device::flex(),
        Some(&expected),
    )
    .unwrap();
    assert_eq!(meta.config.input_planes, Some(16));
    let mut fewer = config.clone();
    fewer.model.threat_planes = false;
    fewer.iterations += 1;
    let err = train(&fewer, &run_dir, Some(1)).unwrap_err().to_string();
    assert!(err.contains("model.threat_planes"), "{err}");
}

/// `training.moves_left_loss_weight`: the run's network has a moves-left head, trained on
/// the plies to the end of the window's games, and each metrics line reports its loss.
#[test]
fn a_moves_left_weight_trains_a_head_and_reports_its_loss() {
    let (_tmp, run_dir) = scratch_run();
    let mut config = tiny();
    config.training.moves_left_loss_weight = Some(1.0);
    train(&config, &run_dir, None).unwrap();
    let dir = RunDir::new(&run_dir);
    let expected = run::net_config(&config);
    assert!(expected.moves_left_hidden.is_some());
    let (first, _) = checkpoint::load(dir.checkpoint(0), &Device::flex(), Some(&expected)).unwrap();
    let (last, _) = checkpoint::load(dir.checkpoint(2), &Device::flex(), Some(&expected)).unwrap();
    // The head's weights moved: it was trained, not only carried along.
    let weights = |m: &brandubh_net::PolicyValueNet| {
        m.moves_left
            .as_ref()
            .unwrap()
            .fc2
            .weight
            .val()
            .into_data()
            .try_to_vec::<f32>()
            .unwrap()
    };
    assert_ne!(weights(&first), weights(&last));
    let lines = metrics::read_metrics(&dir.metrics()).unwrap();
    assert_eq!(lines.len(), 2);
    for m in &lines {
        let loss = m.moves_left_loss.expect("reported with a head");
        assert!(loss.is_finite() && loss > 0.0, "{loss}");
    }
    // Without the weight, the same run has no head and no such loss.
    let (_tmp2, plain_dir) = scratch_run();
    train(&tiny(), &plain_dir, Some(1)).unwrap();
    let plain = metrics::read_metrics(&RunDir::new(&plain_dir).metrics()).unwrap();
    assert!(plain.iter().all(|m| m.moves_left_loss.is_none()));
}
