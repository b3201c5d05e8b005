//! Writes the seed inputs of every fuzz target into `corpus/TARGET/seed-*` (seeded: the
//! same inputs every time, but for save times; existing seeds are kept). Run from the
//! repository root:
//!
//! ```sh
//! cargo run --manifest-path fuzz/Cargo.toml --release --example seeds
//! ```

use std::path::{Path, PathBuf};

use brandubh_agent::{Agent, AgentMeta, SourceInfo, TrainingInfo};
use brandubh_search::SearchSettings;
use brandubh_net::checkpoint::{self, SaveOptions};
use brandubh_net::{Device, NetConfig};
use brandubh_rules::{Game, Position};
use brandubh_run::replay::{self, Chunk, ChunkInfo, GameRecord, GameResult, PositionRecord};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let corpus = root.join("corpus");
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let write = |target: &str, name: &str, bytes: &[u8]| {
        let dir = corpus.join(target);
        std::fs::create_dir_all(&dir).expect("create the corpus directory");
        let path = dir.join(format!("seed-{name}"));
        // Seeds already there are kept (checkpoints and agents record their save time).
        if !path.exists() {
            std::fs::write(path, bytes).expect("write a seed");
        }
    };

    // Positions: the start, positions of random games, and near misses.
    let games: Vec<Game> = (0..4).map(|_| random_game(&mut rng, 60)).collect();
    write(
        "position",
        "start",
        Position::start().to_string().as_bytes(),
    );
    for (i, g) in games.iter().enumerate() {
        let p = g.positions()[g.positions().len() / 2];
        write("position", &format!("game{i}"), p.to_string().as_bytes());
    }
    for (name, text) in [
        ("bad-width", "3A3/3A3/3D3/AADKDAA/3D3/3A3/3A4 w"),
        ("two-kings", "3A3/3A3/3D3/AADKDAA/3K3/3A3/3A3 b"),
        ("no-side", "3A3/3A3/3D3/AADKDAA/3D3/3A3/3A3"),
        ("restricted", "A2A3/3A3/3D3/1ADKDAA/3D3/3A3/3A3 w"),
    ] {
        write("position", name, text.as_bytes());
    }

    // Moves and squares.
    for (i, text) in [
        "d5-f5", "d5f5", "a1-g7", "g7-a1", "h1-a1", "d5--f5", "d5", "a0-a1",
    ]
    .iter()
    .enumerate()
    {
        write("moves", &i.to_string(), text.as_bytes());
    }

    // Play: the start position as raw parts, then move indices; a constructed position.
    let start = Position::start();
    let mut raw = vec![1u8];
    raw.extend_from_slice(&start.attackers().0.to_le_bytes());
    raw.extend_from_slice(&start.defenders().0.to_le_bytes());
    raw.push(start.king().index() as u8);
    raw.push(0);
    raw.extend((0..40).map(|_| rng.random_range(0..0xF0u8)));
    raw.extend_from_slice(&[0xF0, 24, 25]);
    write("play", "start", &raw);
    let mut built = vec![0u8, 24, 1 | 4 << 1 | 2 << 5, 3, 45, 21, 27, 17, 31];
    built.extend((0..40).map(|_| rng.random_range(0..0xF0u8)));
    write("play", "built", &built);

    // Chunks: a whole file, and its body (the target also frames the input as a body).
    let records: Vec<GameRecord> = (0..2).map(|_| random_record(&mut rng, 30)).collect();
    let chunk = Chunk {
        info: ChunkInfo::new("seed", 1),
        games: records,
    };
    let bytes = replay::encode_chunk(&chunk).expect("encode the seed chunk");
    write("chunk", "file", &bytes);
    write("chunk", "body", &bytes[replay::HEADER_LEN..]);
    let one = Chunk {
        info: ChunkInfo::new("s", 2),
        games: vec![random_record(&mut rng, 6)],
    };
    let bytes = replay::encode_chunk(&one).expect("encode the seed chunk");
    write("chunk", "small-body", &bytes[replay::HEADER_LEN..]);

    // Checkpoints: a saved tiny network's metadata and weights.
    let tmp = tempfile::tempdir().expect("create a temporary directory");
    let dir = tmp.path();
    for (c, b) in [(0u8, 0u8), (1, 1)] {
        let config: NetConfig = brandubh_fuzz::checkpoint::weights_config(c, b);
        let device = Device::flex();
        device.seed(7);
        let model = config.init(&device);
        let stem = dir.join(format!("ck{c}{b}"));
        checkpoint::save(&stem, &model, &SaveOptions::at_step(12)).expect("save");
        let (weights, meta) = checkpoint::paths(&stem);
        let mut input = vec![c, b];
        input.extend(std::fs::read(&weights).expect("read the weights"));
        write("checkpoint_weights", &format!("c{c}b{b}"), &input);
        let text = std::fs::read(&meta).expect("read the metadata");
        write("checkpoint_meta", &format!("c{c}b{b}"), &text);
    }
    // Agent files: a whole file, and its two blocks as the target's framed input.
    for (c, b) in [(0u8, 0u8), (1, 1)] {
        let config = brandubh_fuzz::checkpoint::weights_config(c, b);
        let device = Device::flex();
        device.seed(8);
        let model = config.init(&device);
        let meta = AgentMeta::new(
            "seed",
            SearchSettings::default(),
            TrainingInfo::default(),
            SourceInfo::default(),
        );
        let path = dir.join("seed.agent");
        let file = Agent::from_model(&model, meta, &path)
            .expect("an agent from a fresh model")
            .to_bytes();
        write("agent_file", &format!("c{c}b{b}"), &file);
        let mut len = [0u8; 4];
        len.copy_from_slice(&file[12..16]);
        let meta_len = u32::from_le_bytes(len) as usize;
        let mut framed = u16::try_from(meta_len)
            .expect("metadata under 64 KiB")
            .to_le_bytes()
            .to_vec();
        framed.extend_from_slice(&file[32..]);
        write("agent_file", &format!("blocks-c{c}b{b}"), &framed);
    }
    drop(tmp);

    // Configurations: the shipped ones.
    let configs = root.join("../configs");
    for entry in std::fs::read_dir(&configs).expect("list configs/") {
        let path: PathBuf = entry.expect("a configs/ entry").path();
        if path.extension().is_some_and(|e| e == "toml") {
            let name = path.file_stem().expect("a file name").to_string_lossy();
            write(
                "config",
                &name,
                &std::fs::read(&path).expect("read a config"),
            );
        }
    }

    // Agent specs.
    for (i, text) in [
        "random",
        "greedy",
        "mcts:100@algo=gumbel@rollout=5",
        "alphabeta:3",
        "alphabeta:1.5s",
        "run:runs/quick@sims=32",
        "ckpt:x/iter-000001@algo=puct@sims=200",
        "random,greedy,mcts:8",
    ]
    .iter()
    .enumerate()
    {
        write("agent_spec", &i.to_string(), text.as_bytes());
    }
    println!("seeds written under {}", corpus.display());
}

/// A random legal game of at most `cap` plies.
fn random_game(rng: &mut impl Rng, cap: usize) -> Game {
    let mut g = Game::default();
    g.random_playout(cap, |n| rng.random_range(0..n));
    g
}

/// A random game recorded as self-play records it: every other ply with a policy over
/// some legal moves.
fn random_record(rng: &mut impl Rng, cap: usize) -> GameRecord {
    let g = random_game(rng, cap);
    let mut replayed = Game::default();
    let mut positions = Vec::new();
    for (ply, &mv) in g.moves().iter().enumerate() {
        if ply % 2 == 0 {
            let legal = replayed.legal_moves();
            let n = legal.len().min(5);
            let policy = legal[..n].iter().map(|&m| (m, 1.0 / n as f32)).collect();
            positions.push(PositionRecord {
                ply: ply as u32,
                policy,
                root_value: rng.random_range(-1.0..=1.0),
                full_search: ply % 4 == 0,
            });
        }
        replayed.play_unchecked(mv);
    }
    GameRecord {
        start: Position::start(),
        moves: g.moves().to_vec(),
        result: g
            .outcome()
            .map_or(GameResult::Unfinished, GameResult::Finished),
        positions,
    }
}
