//! The agent file: export → load fidelity, damaged files, analysis and players.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests may unwrap: a panic is a failed test"
)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use brandubh_agent::{
    Agent, AgentError, AgentMeta, Budget, ExportOptions, SourceInfo, TrainingInfo,
    export_checkpoint, format,
};
use brandubh_net::checkpoint::{self, SaveOptions};
use brandubh_net::encoding;
use brandubh_net::{Device, FastNet, NetConfig, NetEvaluator, PolicyValueNet};
use brandubh_rules::{Game, Position};
use brandubh_search::{Algorithm, SearchSettings};
use brandubh_search::{MctsPlayer, Player};

fn tiny_model() -> PolicyValueNet {
    NetConfig::new()
        .with_channels(8)
        .with_blocks(1)
        .init(&Device::flex())
}

/// A checkpoint as a training run writes it (with the run's extras).
fn tiny_checkpoint(dir: &Path) -> (PolicyValueNet, PathBuf) {
    let model = tiny_model();
    let stem = dir.join("iter-000003");
    let mut save = SaveOptions::at_step(42);
    save.extra.insert("iteration".into(), 3.into());
    save.extra.insert("games".into(), 120.into());
    save.extra.insert("positions".into(), 9876.into());
    save.extra.insert("elapsed_s".into(), 12.5.into());
    save.extra.insert("config_name".into(), "tiny".into());
    checkpoint::save(&stem, &model, &save).unwrap();
    (model, stem)
}

fn tiny_agent_bytes() -> Vec<u8> {
    let meta = AgentMeta::new(
        "tiny",
        SearchSettings::new(Algorithm::Gumbel, 8),
        TrainingInfo::default(),
        SourceInfo::default(),
    );
    Agent::from_model(&tiny_model(), meta, "tiny.agent")
        .unwrap()
        .to_bytes()
}

/// Positions from a seeded random game, for comparing networks.
fn some_positions() -> Vec<(Position, u32)> {
    let mut game = Game::default();
    let mut out = vec![(*game.position(), 1)];
    let mut player = brandubh_search::RandomPlayer::new(5);
    while !game.is_over() && out.len() < 30 {
        let mv = player.choose(&game).unwrap();
        game.play(mv).unwrap();
        out.push((*game.position(), game.repetitions()));
    }
    out
}

#[test]
fn export_then_load_gives_identical_outputs_and_moves() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (model, stem) = tiny_checkpoint(dir);
    let out = dir.join("tiny.agent");
    let options = ExportOptions {
        name: "tiny".into(),
        search: SearchSettings::new(Algorithm::Puct, 12),
    };
    let exported = export_checkpoint(&stem, &out, &options).unwrap();
    // Nothing but the file is needed to load it.
    let (weights, meta) = checkpoint::paths(&stem);
    std::fs::remove_file(weights).unwrap();
    std::fs::remove_file(meta).unwrap();
    let agent = Agent::load(&out).unwrap();
    assert_eq!(agent.meta(), exported.meta());

    let meta = agent.meta();
    assert_eq!(meta.name, "tiny");
    assert_eq!(meta.rules, "Brandubh 2.5W");
    assert_eq!(meta.encoding_version, encoding::ENCODING_VERSION);
    assert_eq!(meta.model, model.config());
    assert_eq!(meta.search, options.search);
    let t = &meta.training;
    assert_eq!(t.config_name.as_deref(), Some("tiny"));
    assert_eq!(t.iteration, Some(3));
    assert_eq!(t.games, Some(120));
    assert_eq!(t.positions, Some(9876));
    assert_eq!(t.steps, 42);
    assert_eq!(t.wall_time_s, Some(12.5));
    assert_eq!(t.trained_date.len(), 20);
    assert!(meta.source.checkpoint.ends_with("iter-000003"));
    assert_eq!(meta.source.weights_fnv1a64.len(), 16);

    // Identical network outputs, bit for bit.
    let original = FastNet::from_model(&model);
    let mut inputs = Vec::new();
    for (p, reps) in some_positions() {
        inputs.extend(encoding::encode(&p, reps));
    }
    let a = original.forward(&inputs);
    let b = agent.net().forward(&inputs);
    assert_eq!(a.values, b.values);
    assert_eq!(a.policy_logits, b.policy_logits);

    // Identical moves for a fixed seed: the loaded agent against the original network with
    // the same search, through a whole game between them.
    let config = agent.search_config(None, Some(60)).unwrap();
    let mut reference = MctsPlayer::new(
        NetEvaluator::new(Arc::new(FastNet::from_model(&model))),
        config.clone(),
        9,
    )
    .unwrap();
    let mut loaded = agent.player_with(None, Some(60), 9).unwrap();
    let mut game = Game::default();
    while !game.is_over() && game.ply() < 60 {
        let m1 = reference.choose(&game).unwrap();
        let m2 = loaded.choose(&game).unwrap();
        assert_eq!(m1, m2, "ply {}", game.ply());
        game.play(m1).unwrap();
    }
}

#[test]
fn saving_a_loaded_agent_writes_the_same_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let bytes = tiny_agent_bytes();
    let a = dir.join("a.agent");
    std::fs::write(&a, &bytes).unwrap();
    let agent = Agent::load(&a).unwrap();
    assert_eq!(agent.to_bytes(), bytes);
    let b = dir.join("b.agent");
    assert_eq!(agent.save(&b).unwrap(), bytes.len() as u64);
    assert_eq!(std::fs::read(&b).unwrap(), bytes);
    // No temporary file is left behind.
    let names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert_eq!(Agent::read_meta(&b).unwrap(), *agent.meta());
}

/// The message is one line and starts with the file.
fn check_message(e: &AgentError, path: &str) -> String {
    let msg = e.to_string();
    assert!(!msg.contains('\n'), "{msg}");
    assert!(msg.starts_with(&format!("{path}: ")), "{msg}");
    msg
}

#[test]
fn every_truncation_is_an_error() {
    let bytes = tiny_agent_bytes();
    assert!(Agent::from_bytes(&bytes, "t.agent").is_ok());
    for len in 0..bytes.len() {
        match Agent::from_bytes(&bytes[..len], "t.agent") {
            Ok(_) => panic!("truncated to {len} bytes, loaded"),
            Err(e) => {
                let msg = check_message(&e, "t.agent");
                assert!(
                    msg.contains(&format!("{len} bytes, the header says")),
                    "{len}: {msg}"
                );
            }
        }
    }
}

#[test]
fn flipped_bytes_are_errors() {
    let bytes = tiny_agent_bytes();
    let meta_len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    // Every byte of the header and the metadata, and 500 spread over the weights.
    let mut positions: Vec<usize> = (0..32 + meta_len).collect();
    let weights = bytes.len() - 32 - meta_len;
    positions.extend((0..500).map(|i| 32 + meta_len + i * weights / 500));
    positions.push(bytes.len() - 1);
    for at in positions {
        for flip in [0x01, 0x80, 0xff] {
            let mut bad = bytes.clone();
            bad[at] ^= flip;
            match Agent::from_bytes(&bad, "f.agent") {
                Ok(_) => panic!("byte {at} ^ {flip:#x} loaded"),
                Err(e) => {
                    check_message(&e, "f.agent");
                }
            }
        }
    }
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "a test: one table of cases or one scenario, read top to bottom"
)]
fn damaged_files_give_clear_messages() {
    let bytes = tiny_agent_bytes();
    let err = |b: &[u8]| Agent::from_bytes(b, "m/x.agent").unwrap_err().to_string();

    let mut magic = bytes.clone();
    magic[0] = b'X';
    assert_eq!(
        err(&magic),
        "m/x.agent: not a brandubh agent file (the first 8 bytes are not \"BZ-AGENT\")"
    );
    assert_eq!(
        err(b"hello world, this is a text file"),
        "m/x.agent: not a brandubh agent file (the first 8 bytes are not \"BZ-AGENT\")"
    );
    let mut version = bytes.clone();
    version[8..12].copy_from_slice(&7u32.to_le_bytes());
    assert_eq!(
        err(&version),
        "m/x.agent: agent file format version 7, this build reads version 1"
    );
    assert_eq!(
        err(&bytes[..100]),
        format!(
            "m/x.agent: truncated or damaged agent file: 100 bytes, the header says {}",
            bytes.len()
        )
    );
    let mut payload = bytes.clone();
    let last = payload.len() - 1;
    payload[last] ^= 1;
    assert!(
        err(&payload).starts_with("m/x.agent: damaged agent file: payload checksum "),
        "{}",
        err(&payload)
    );
    let mut header = bytes.clone();
    header[20] ^= 1;
    assert!(err(&header).starts_with("m/x.agent: damaged agent file: header checksum "));

    // Valid checksums around bad metadata: each check still names the problem.
    let meta_len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let json: serde_json::Value = serde_json::from_slice(&bytes[32..32 + meta_len]).unwrap();
    let weights = &bytes[32 + meta_len..];
    let with = |edit: &dyn Fn(&mut serde_json::Value)| {
        let mut j = json.clone();
        edit(&mut j);
        format::encode(&serde_json::to_vec(&j).unwrap(), weights)
    };
    assert_eq!(
        err(&with(&|j| j["encoding_version"] = 99.into())),
        format!(
            "m/x.agent: encoding version 99, this build uses {}",
            encoding::ENCODING_VERSION
        )
    );
    assert_eq!(
        err(&with(&|j| j["rules"] = "Brandubh 1.0".into())),
        "m/x.agent: invalid agent metadata: the agent plays the rules \"Brandubh 1.0\", this build plays \"Brandubh 2.5W\""
    );
    // A huge model is refused before anything is allocated for it.
    let huge = err(&with(&|j| j["model"]["channels"] = 1000.into()));
    assert!(
        huge.starts_with("m/x.agent: invalid agent metadata: a C1000xN1 model needs at least"),
        "{huge}"
    );
    let msg = err(&with(&|j| j["model"]["channels"] = 9.into()));
    assert!(
        msg.starts_with("m/x.agent: weights do not fit the model: "),
        "{msg}"
    );
    let msg = err(&with(&|j| j["search"]["simulations"] = 0.into()));
    assert_eq!(
        msg,
        "m/x.agent: invalid search setting simulations = 0: expected at least 1"
    );
    let msg = err(&with(&|j| {
        j.as_object_mut().unwrap().remove("model");
    }));
    assert!(
        msg.starts_with("m/x.agent: invalid agent metadata: missing field `model`"),
        "{msg}"
    );
    let msg = err(&with(&|j| j["weights_crc32"] = "00000000".into()));
    assert!(
        msg.starts_with("m/x.agent: invalid agent metadata: weights_crc32 \"00000000\""),
        "{msg}"
    );
    let not_json = format::encode(b"{not json", weights);
    assert!(err(&not_json).starts_with("m/x.agent: invalid agent metadata: "));

    // A missing file names it.
    let missing = Agent::load("no/such/dir/x.agent").unwrap_err().to_string();
    assert!(missing.starts_with("no/such/dir/x.agent: "), "{missing}");
}

#[test]
fn analysis_reports_every_root_move() {
    let agent = Agent::from_bytes(&tiny_agent_bytes(), "tiny.agent").unwrap();
    let game = Game::default();
    let a = agent.analyze(&game, Budget::Simulations(40), 3).unwrap();
    assert_eq!(a.moves.len(), 24);
    assert_eq!(a.moves[0].mv, a.best_move);
    assert_eq!(a.simulations, 40);
    assert_eq!(a.moves.iter().map(|m| m.visits).sum::<u32>(), 40);
    let prior_sum: f32 = a.moves.iter().map(|m| m.prior).sum();
    assert!((prior_sum - 1.0).abs() < 1e-4, "{prior_sum}");
    let policy_sum: f32 = a.moves.iter().map(|m| m.policy).sum();
    assert!((policy_sum - 1.0).abs() < 1e-4, "{policy_sum}");
    assert!(a.value.abs() <= 1.0 && a.net_value.abs() <= 1.0);
    for m in &a.moves {
        assert_eq!(m.q.is_some(), m.visits > 0);
        assert!(m.q.is_none_or(|q| q.abs() <= 1.0));
    }
    // After the best move, by visits.
    assert!(a.moves[1..].windows(2).all(|w| w[0].visits >= w[1].visits));
    // Deterministic for a seed.
    assert_eq!(
        agent
            .analyze(&game, Budget::Simulations(40), 3)
            .unwrap()
            .moves,
        a.moves
    );

    // A one-move win is seen: the King on b1 steps into the corner.
    let game = Game::new("3A3/7/7/A6/7/7/1K1A3 w".parse().unwrap());
    let a = agent.analyze(&game, Budget::Simulations(32), 1).unwrap();
    assert_eq!(a.best_move.to_string(), "b1-a1");
    // Its value is a certain win; the root's mean also counts the other moves' visits.
    assert_eq!(a.moves[0].q, Some(1.0));

    // A time budget runs at least one simulation.
    let a = agent
        .analyze(
            &Game::default(),
            Budget::Time(std::time::Duration::from_millis(20)),
            1,
        )
        .unwrap();
    assert!(a.simulations >= 1);

    // A finished game has nothing to analyze.
    let over = Game::new("3A3/7/7/A6/7/7/K2A3 b".parse().unwrap());
    assert!(over.is_over());
    let e = agent.analyze(&over, Budget::Simulations(8), 1).unwrap_err();
    assert_eq!(
        e.to_string(),
        "tiny.agent: search: the game is over: there is no move to search"
    );
    assert!(agent.evaluate(&over).is_none());
}

#[test]
fn players_play_whole_games() {
    let agent = Agent::from_bytes(&tiny_agent_bytes(), "tiny.agent").unwrap();
    let mut white = agent.player(1).unwrap();
    let mut black = agent.player_with(Some(4), Some(80), 2).unwrap();
    let mut game = Game::default();
    while !game.is_over() && game.ply() < 80 {
        let mv = if game.ply() % 2 == 0 {
            white.choose(&game)
        } else {
            black.choose(&game)
        }
        .unwrap();
        game.play(mv).unwrap();
    }
    assert!(white.name().contains("gumbel"));
    assert!(agent.player_with(Some(0), None, 1).is_err());
    assert!(agent.player_with(Some(2_000_000), None, 1).is_err());
}

#[test]
fn a_thinker_keeps_its_tree_over_both_sides_moves_and_keeps_to_a_deadline() {
    use std::time::{Duration, Instant};
    let agent = Agent::from_bytes(&tiny_agent_bytes(), "tiny.agent").unwrap();
    let mut thinker = agent.thinker(5).unwrap();
    let mut game = Game::default();
    let first = thinker.think(&game, Budget::Simulations(64)).unwrap();
    assert_eq!((first.simulations, first.reused), (64, 0));
    // Our move, then the opponent's reply: the tree is carried over both.
    game.play(first.best_move).unwrap();
    let reply = thinker.think(&game, Budget::Simulations(64)).unwrap();
    assert!(reply.reused > 0, "the subtree of our move was kept");
    game.play(reply.best_move).unwrap();
    let again = thinker.think(&game, Budget::Simulations(64)).unwrap();
    assert!(again.reused > 0);
    // The root's visits are the kept ones plus this search's.
    assert_eq!(
        again.moves.iter().map(|m| m.visits).sum::<u32>(),
        again.reused - 1 + 64,
        "the root's own first visit is its evaluation"
    );
    // A game that does not continue the last one starts afresh.
    let other = thinker
        .think(&Game::default(), Budget::Simulations(8))
        .unwrap();
    assert_eq!(other.reused, 0);
    // Without reuse nothing is kept.
    thinker.set_reuse(false);
    let mut g = Game::default();
    let a = thinker.think(&g, Budget::Simulations(16)).unwrap();
    g.play(a.best_move).unwrap();
    assert_eq!(
        thinker.think(&g, Budget::Simulations(16)).unwrap().reused,
        0
    );
    // A time budget stops at its deadline (generous bound: the machine may be busy).
    thinker.set_reuse(true);
    let t0 = Instant::now();
    let timed = thinker
        .think(&g, Budget::Time(Duration::from_millis(50)))
        .unwrap();
    assert!(timed.simulations > 0);
    assert!(
        t0.elapsed() < Duration::from_millis(1_000),
        "{:?}",
        t0.elapsed()
    );
    // The principal line starts with the move asked for and is legal.
    let line = thinker.principal_line(timed.best_move, 6);
    assert_eq!(line[0], timed.best_move);
    let mut replay = g.clone();
    for mv in line {
        replay.play(mv).unwrap();
    }
}

/// A network with the King planes (`model.king_planes`) exports and loads with its layout
/// recorded, and plays: the agent's search encodes twelve planes for it (sixteen with the
/// threat planes).
#[test]
fn a_network_with_king_planes_exports_and_plays() {
    let config = NetConfig::new()
        .with_channels(8)
        .with_blocks(1)
        .with_planes(12);
    let agent = exports_and_plays(&config, "king");
    assert_eq!(agent.net().input_size(), 12 * 49);
    // With the threat planes too (`model.threat_planes`): sixteen.
    let agent = exports_and_plays(&config.with_planes(16), "threats");
    assert_eq!(agent.net().input_size(), 16 * 49);
}

/// Exports a fresh network of `config` as an agent named `name`, loads it, and checks that
/// its meta names the config, that it gives the model's outputs on positions encoded in the
/// network's layout, and that it plays a move.
fn exports_and_plays(config: &NetConfig, name: &str) -> Agent {
    let tmp = tempfile::tempdir().unwrap();
    let model = config.init(&Device::flex());
    let stem = tmp.path().join("iter-000001");
    checkpoint::save(&stem, &model, &SaveOptions::at_step(1)).unwrap();
    let out = tmp.path().join(format!("{name}.agent"));
    let options = ExportOptions {
        name: name.into(),
        search: SearchSettings::new(Algorithm::Puct, 8),
    };
    export_checkpoint(&stem, &out, &options).unwrap();
    let agent = Agent::load(&out).unwrap();
    assert_eq!(&agent.meta().model, config);
    let mut inputs = Vec::new();
    for (p, reps) in some_positions() {
        inputs.extend(encoding::encode_planes(&p, reps, config.planes()));
    }
    let a = FastNet::from_model(&model).forward(&inputs);
    let b = agent.net().forward(&inputs);
    assert_eq!(a.values, b.values);
    assert_eq!(a.policy_logits, b.policy_logits);
    let mut player = agent.player_with(None, Some(8), 1).unwrap();
    assert!(player.choose(&Game::default()).is_ok());
    agent
}

/// A network trained with a moves-left head (`training.moves_left_loss_weight`) exports and
/// loads like any other; the head travels in the file and the meta, and play reads only the
/// policy and the value.
#[test]
fn a_network_with_a_moves_left_head_exports_and_plays() {
    let config = NetConfig::new()
        .with_channels(8)
        .with_blocks(1)
        .with_moves_left_hidden(Some(16));
    exports_and_plays(&config, "headed");
}
