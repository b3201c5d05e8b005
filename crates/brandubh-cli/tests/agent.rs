//! The CLI contract of issue 7 (`brandubh export`, `play`, `analyze`, agent specs), through
//! the binary.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests may unwrap: a panic is a failed test"
)]

mod common;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::sync::mpsc;
use std::time::Duration;

use brandubh_net::checkpoint::{self, SaveOptions};
use brandubh_net::{Device, NetConfig};
use common::{s, stderr, stdout, temp_dir};

/// The binary, logging warnings only.
fn bin() -> Command {
    let mut c = common::bin();
    c.env("RUST_LOG", "warn");
    c
}

fn brandubh(args: &[&str]) -> Output {
    bin().args(args).output().expect("the brandubh binary runs")
}

fn brandubh_with_input(args: &[&str], input: &str) -> Output {
    common::run_with_input(bin().args(args), input)
}

/// `brandubh play` against the tiny agent from `position`, with `input` typed.
fn play_from(position: &str, input: &str) -> Output {
    brandubh_with_input(
        &["play", "--agent", s(tiny_agent()), "--position", position],
        input,
    )
}

/// The shipped agent, as `play`'s default names it (relative to the repository root).
const SHIPPED: &str = "models/brandubh-v5.agent";

fn shipped_agent() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(SHIPPED)
}

/// The ONNX model brandubh-net writes for the network of the agent file at `agent`.
fn onnx_of(agent: &Path) -> Vec<u8> {
    let a = brandubh_agent::Agent::load(agent).unwrap();
    let folded = checkpoint::folded_from_bytes(&a.meta().model, a.weights().to_vec()).unwrap();
    brandubh_net::onnx::to_onnx(&folded)
}

/// A tiny agent file (C8xN1, Gumbel with 8 simulations), exported once through the CLI from
/// a checkpoint laid out like a run's.
fn tiny_agent() -> &'static Path {
    static AGENT: OnceLock<PathBuf> = OnceLock::new();
    AGENT.get_or_init(|| {
        // Shared by every test of the process, so kept (in the target directory).
        let dir = temp_dir().keep();
        let ckpts = dir.join("run").join("checkpoints");
        std::fs::create_dir_all(&ckpts).unwrap();
        // Seeded weights: with fresh random weights each run, the scripted game of
        // `play_through_a_pipe_completes_a_whole_game` sometimes ran past its turn limit.
        // This is the only model built in this test binary, so the seed fixes it.
        let device = Device::flex();
        device.seed(7);
        let model = NetConfig::new()
            .with_channels(8)
            .with_blocks(1)
            .init(&device);
        checkpoint::save(ckpts.join("iter-000001"), &model, &SaveOptions::at_step(5)).unwrap();
        let out = dir.join("models").join("tiny.agent");
        let o = brandubh(&[
            "export",
            s(&dir.join("run")),
            "--out",
            s(&out),
            "--sims",
            "8",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        out
    })
}

/// `export --prove` and `--verify` write the exact proofs into the file's search settings,
/// and the summary names them; out of range, the flag is named.
fn export_writes_the_exact_proofs(run: &Path, proving: &Path) {
    // --prove writes exact root proofs into the file's search settings.
    let o = brandubh(&["export", s(run), "--out", s(proving), "--prove", "5"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("gumbel 4 simulations + exact root proofs 5 plies, iteration 2"),
        "{}",
        stdout(&o)
    );
    // --verify writes the exact check of the chosen move there too.
    let o = brandubh(&[
        "export",
        s(run),
        "--out",
        s(proving),
        "--prove",
        "5",
        "--verify",
        "9",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains(
            "gumbel 4 simulations + exact root proofs 5 plies + exact check of the move 9 plies, iteration 2"
        ),
        "{}",
        stdout(&o)
    );
    let o = brandubh(&["export", s(run), "--out", s(proving), "--verify", "16"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--verify"), "{}", stderr(&o));
    // An agent file exported again: the same network and record, other search settings.
    let again = proving.with_file_name("tiny-again.agent");
    let o = brandubh(&[
        "export",
        s(proving),
        "--out",
        s(&again),
        "--verify",
        "0",
        "--sims",
        "9",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains(
            "tiny-again (C8xN1, gumbel 9 simulations + exact root proofs 5 plies, iteration 2"
        ),
        "{}",
        stdout(&o)
    );
    let (a, b) = (
        brandubh_agent::Agent::load(proving).unwrap(),
        brandubh_agent::Agent::load(&again).unwrap(),
    );
    assert_eq!(a.weights(), b.weights());
    assert_eq!(a.meta().training, b.meta().training);
    let o = brandubh(&["export", s(proving), "--out", s(&again), "--average", "2"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).starts_with("error: --average: an agent file holds one network"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn export_from_a_trained_run_then_analyze_and_match() {
    let tmp = temp_dir();
    let dir = tmp.path().to_path_buf();
    let config = common::tiny_toml();
    let run = dir.join("run");
    let o = brandubh(&["train", "--config", s(&config), "--run", s(&run), "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));

    let out = dir.join("m").join("tiny-v1.agent");
    let o = brandubh(&["export", s(&run), "--out", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.starts_with(&format!("wrote {} (", out.display())),
        "{text}"
    );
    // The run's config.toml gives the search settings; the checkpoint the training record.
    assert!(
        text.contains("tiny-v1 (C8xN1, gumbel 4 simulations, iteration 2 of tiny: 8 games"),
        "{text}"
    );
    assert!(text.contains("iter-000002"), "{text}");
    export_writes_the_exact_proofs(&run, &dir.join("m").join("tiny-prove.agent"));

    // The run directory is not needed any more.
    std::fs::remove_dir_all(&run).unwrap();
    let o = brandubh(&["analyze", "--agent", s(&out), "--json", "--sims", "20"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["agent"], "tiny-v1");
    assert_eq!(v["position"], "3A3/3A3/3D3/AADKDAA/3D3/3A3/3A3 w");
    assert_eq!(v["simulations"], 20);
    let moves = v["moves"].as_array().unwrap();
    assert_eq!(moves.len(), 24);
    assert_eq!(moves[0]["move"], v["best_move"]);
    let visits: u64 = moves.iter().map(|m| m["visits"].as_u64().unwrap()).sum();
    assert_eq!(visits, 20);

    // An agent file is an agent spec.
    let o = brandubh(&[
        "match",
        &format!("agent:{}", out.display()),
        "random",
        "--matches",
        "1",
        "--seed",
        "2",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["a"], format!("agent:{}", out.display()));
    assert_eq!(v["games"]["games"], 2);
    let o = brandubh(&[
        "match",
        &format!("{}@sims=2", out.display()),
        "greedy",
        "--matches",
        "1",
        "--seed",
        "2",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// The model config of [`run_of_three_checkpoints`].
fn small_config() -> NetConfig {
    NetConfig::new().with_channels(8).with_blocks(1)
}

/// A run directory `DIR/run` with checkpoints iter-000001..3 of three seeded models, and
/// their weights.
fn run_of_three_checkpoints(dir: &Path) -> (PathBuf, Vec<Vec<u8>>) {
    let run = dir.join("run");
    let ckpts = run.join("checkpoints");
    std::fs::create_dir_all(&ckpts).unwrap();
    let device = Device::flex();
    let mut models = Vec::new();
    for step in 1..=3u64 {
        device.seed(step);
        let model = small_config().init(&device);
        let stem = ckpts.join(format!("iter-{step:06}"));
        checkpoint::save(&stem, &model, &SaveOptions::at_step(step)).unwrap();
        models.push(checkpoint::weights_to_bytes(&model).unwrap());
    }
    (run, models)
}

/// `export --average N` writes the mean of the run's last N checkpoints (or of the N that
/// end at the checkpoint given), says so, and records it in the agent.
#[test]
fn export_average_writes_the_mean_of_the_last_checkpoints() {
    let tmp = temp_dir();
    let (run, models) = run_of_three_checkpoints(tmp.path());
    let ckpts = run.join("checkpoints");
    let config = small_config();
    let out = tmp.path().join("mean.agent");
    let o = brandubh(&["export", s(&run), "--average", "2", "--out", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains(&format!(
            "weights the mean of 2 checkpoints, from {}",
            ckpts.join("iter-000002").display()
        )),
        "{text}"
    );
    // The same network as the mean computed here: the same outputs, to the bit.
    let outputs = |weights: &[u8]| {
        let net = brandubh_net::FastNet::from_safetensors(&config, weights.to_vec()).unwrap();
        let planes = brandubh_net::encoding::encode(&brandubh_rules::Position::start(), 1);
        net.forward(&planes)
    };
    let agent = brandubh_agent::Agent::load(&out).unwrap();
    let want = checkpoint::average_weights(&config, models[1..].to_vec()).unwrap();
    assert_eq!(outputs(agent.weights()), outputs(&want));
    assert_ne!(outputs(agent.weights()), outputs(&models[2]));
    assert_eq!(
        agent.meta().source.weights_fnv1a64,
        format!("{:016x}", brandubh_fs::fnv1a64(agent.weights()))
    );
    assert!(
        agent.meta().source.checkpoint.ends_with(&format!(
            "(the mean of 2 checkpoints, from {})",
            ckpts.join("iter-000002").display()
        )),
        "{}",
        agent.meta().source.checkpoint
    );
    // Ending at a checkpoint given: the first two.
    let o = brandubh(&[
        "export",
        s(&ckpts.join("iter-000002")),
        "--average",
        "2",
        "--out",
        s(&out),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let want = checkpoint::average_weights(&config, models[..2].to_vec()).unwrap();
    let agent = brandubh_agent::Agent::load(&out).unwrap();
    assert_eq!(outputs(agent.weights()), outputs(&want));
}

/// Too few checkpoints, a checkpoint outside a run, a model of another shape among them and
/// ONNX are one-line errors for `export --average`.
#[test]
fn export_average_refuses_what_it_cannot_average() {
    let tmp = temp_dir();
    let (run, _) = run_of_three_checkpoints(tmp.path());
    let ckpts = run.join("checkpoints");
    let out = tmp.path().join("mean.agent");
    let device = Device::flex();
    let refused = |args: &[&str], want: &str| {
        let o = brandubh(args);
        assert!(!o.status.success(), "{args:?}");
        let e = stderr(&o);
        assert!(e.contains(want), "{args:?}: {e}");
        // One error line (a note on the missing run configuration may come before it).
        let errors = e.lines().filter(|l| !l.starts_with("note: ")).count();
        assert_eq!(errors, 1, "{args:?}: {e}");
    };
    refused(
        &["export", s(&run), "--average", "4", "--out", s(&out)],
        "--average 4: ",
    );
    // clap's own message: its first line names the value and the range.
    let o = brandubh(&["export", s(&run), "--average", "0", "--out", s(&out)]);
    assert!(!o.status.success());
    assert!(
        stderr(&o)
            .starts_with("error: invalid value '0' for '--average <N>': 0 is not in 1..=1000"),
        "{}",
        stderr(&o)
    );
    let loose = tmp.path().join("loose");
    checkpoint::save(
        &loose,
        &small_config().init(&device),
        &SaveOptions::at_step(9),
    )
    .unwrap();
    refused(
        &["export", s(&loose), "--average", "2", "--out", s(&out)],
        "is not in a run's checkpoints directory",
    );
    refused(
        &[
            "export",
            s(&run),
            "--average",
            "2",
            "--format",
            "onnx",
            "--out",
            s(&tmp.path().join("m.onnx")),
        ],
        "only an agent file",
    );
    // A checkpoint of another shape among those averaged.
    let other = NetConfig::new()
        .with_channels(4)
        .with_blocks(1)
        .init(&device);
    checkpoint::save(ckpts.join("iter-000004"), &other, &SaveOptions::at_step(4)).unwrap();
    refused(
        &["export", s(&run), "--average", "2", "--out", s(&out)],
        "iter-000003",
    );
}

#[test]
fn export_refuses_bad_arguments() {
    let tmp = temp_dir();
    let dir = tmp.path().to_path_buf();
    let o = brandubh(&["export", s(&dir), "--out", s(&dir.join("x.bin"))]);
    assert!(!o.status.success());
    assert_eq!(
        stderr(&o),
        format!(
            "error: --out {}: an agent file name must end in .agent\n",
            dir.join("x.bin").display()
        )
    );
    let o = brandubh(&["export", s(&dir), "--out", s(&dir.join("x.agent"))]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains(": no checkpoints"), "{}", stderr(&o));
    let o = brandubh(&[
        "export",
        s(&dir.join("nope")),
        "--out",
        s(&dir.join("x.agent")),
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).starts_with(&format!("error: {}", dir.join("nope.json").display())),
        "{}",
        stderr(&o)
    );
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
}

#[test]
fn analyze_with_root_proofs_proves_a_win_in_three() {
    // d2-d1 leaves the King two ways to a corner (rule 8.1): with exact root proofs three
    // plies deep one simulation is enough to play a winning move with its proven value.
    let agent = tiny_agent();
    let args = |prove: &'static str| {
        let mut a = vec!["analyze", "--agent", s(agent), "--sims", "1", "--json"];
        a.extend(["--position", "1AAA3/7/7/7/7/3K3/7 w", "--prove", prove]);
        a
    };
    let o = brandubh(&args("3"));
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["value"], 1.0, "{v}");
    let mut game = brandubh_rules::Game::new("1AAA3/7/7/7/7/3K3/7 w".parse().unwrap());
    game.play(v["best_move"].as_str().unwrap().parse().unwrap())
        .unwrap();
    let defended = game.legal_moves().into_iter().any(|reply| {
        let mut line = game.clone();
        line.play(reply).unwrap();
        line.is_over() || brandubh_search::heuristic::decisive_move(line.position()).is_none()
    });
    assert!(!defended, "{v}");
    let o = brandubh(&args("16"));
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--prove"), "{}", stderr(&o));
    let mut verify = args("0");
    verify.extend(["--verify", "16"]);
    let o = brandubh(&verify);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--verify"), "{}", stderr(&o));
}

#[test]
fn analyze_prints_a_table_of_top_moves() {
    let agent = tiny_agent();
    let o = brandubh(&[
        "analyze",
        "--agent",
        s(agent),
        "--sims",
        "16",
        "--top",
        "3",
        "d5-c5",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.starts_with("agent     tiny (C8xN1, gumbel 8 simulations"),
        "{text}"
    );
    assert!(
        text.contains("position  3A3/3A3/2D4/AADKDAA/3D3/3A3/3A3 b (Black to move)"),
        "{text}"
    );
    assert!(text.contains("last move d5-c5"), "{text}");
    assert!(text.contains("rank  move    visits  policy   prior        q"));
    let rows: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("rank"))
        .skip(1)
        .collect();
    assert_eq!(rows.len(), 4, "{text}");
    assert!(rows[0].trim_start().starts_with("1  "), "{text}");
    assert!(rows[3].starts_with("(3 of "), "{text}");

    // A finished game, a bad move, a bad position: one-line errors.
    for (args, message) in [
        (
            vec!["--position", "3A3/7/7/A6/7/7/K2A3 b"],
            "error: position 3A3/7/7/A6/7/7/K2A3 b: the game is over (White wins: the King escaped to a corner (rule 8.1)); nothing to analyze\n",
        ),
        (
            vec!["d5-d9"],
            "error: move 1: malformed move \"d5-d9\": expected <from>-<to> with squares a1..g7, e.g. d5-f5\n",
        ),
        (
            vec!["d4-d2"],
            "error: move 1: illegal move d4-d2: the path is blocked by the piece on d3 (rule 2)\n",
        ),
    ] {
        let mut full = vec!["analyze", "--agent", s(agent)];
        full.extend(args);
        let o = brandubh(&full);
        assert_eq!(o.status.code(), Some(1));
        assert_eq!(stderr(&o), message);
    }
}

/// Drives `brandubh play` like a person at a keyboard: waits for each prompt, asks for the
/// legal moves and plays the first one, until the game ends.
#[test]
fn play_through_a_pipe_completes_a_whole_game() {
    let agent = tiny_agent();
    let mut child = bin()
        .args(["play", "--agent", s(agent), "--sims", "4", "--seed", "3"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let mut output = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel::<Vec<u8>>();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = output.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let mut transcript = String::new();
    // Reads until a prompt after the first `seen` bytes (true) or the end of the output
    // (false).
    let until_prompt = |transcript: &mut String, seen: usize| -> bool {
        loop {
            if transcript.len() > seen && transcript.ends_with("> ") {
                return true;
            }
            match rx.recv_timeout(Duration::from_secs(60)) {
                Ok(chunk) => transcript.push_str(&String::from_utf8_lossy(&chunk)),
                Err(mpsc::RecvTimeoutError::Disconnected) => return false,
                Err(mpsc::RecvTimeoutError::Timeout) => panic!("no prompt:\n{transcript}"),
            }
        }
    };
    let mut turns = 0;
    while until_prompt(&mut transcript, 0) {
        turns += 1;
        assert!(turns < 2000, "the game does not end");
        let seen = transcript.len();
        writeln!(input, "moves").unwrap();
        assert!(until_prompt(&mut transcript, seen), "{transcript}");
        let line = transcript[seen..]
            .lines()
            .find(|l| l.starts_with("legal moves ("))
            .unwrap_or_else(|| panic!("no legal moves listed:\n{transcript}"));
        let first = line.split_once(": ").unwrap().1.split(' ').next().unwrap();
        let seen = transcript.len();
        writeln!(input, "{first}").unwrap();
        if !until_prompt(&mut transcript, seen) {
            break;
        }
    }
    let status = child.wait().unwrap();
    assert!(status.success());
    let last = transcript.lines().last().unwrap();
    assert!(last.starts_with("Game over after "), "{last}");
    assert!(
        last.contains("White wins: ") || last.contains("Black wins: "),
        "{last}"
    );
    assert!(
        last.ends_with("You win.") || last.ends_with("tiny wins."),
        "{last}"
    );
    assert!(transcript.contains("tiny plays "));
    // Stdout is not a terminal: no escape codes.
    assert!(!transcript.contains('\x1b'));
}

#[test]
fn play_explains_bad_input_and_goes_on() {
    let agent = tiny_agent();
    let script = "foo\nd5-z9\nd4-d2\na4-a3\nd5-d7\n\nhelp\nundo\nd5-c5\nundo\nhint\nmoves\nquit\n";
    let o = brandubh_with_input(&["play", "--agent", s(agent)], script);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    let text = stdout(&o);
    for expected in [
        "you play White against tiny (C8xN1, gumbel 8 simulations)",
        "you (White)> foo\nunknown command \"foo\": type a move such as d5-f5",
        "you (White)> d5-z9\nmalformed move \"d5-z9\": expected <from>-<to> with squares a1..g7, e.g. d5-f5\n",
        "you (White)> d4-d2\nillegal move d4-d2: the path is blocked by the piece on d3 (rule 2)\n",
        "you (White)> a4-a3\nillegal move a4-a3: the piece on a4 is not yours (white to move)\n",
        "you (White)> help\nType a move such as d5-f5",
        "you (White)> undo\nnothing to undo\n",
        "you (White)> d5-c5\ntiny plays ",
        "you (White)> undo\ntook back d5-c5 and ",
        "you (White)> hint\nhint: ",
        "you (White)> moves\nlegal moves (24): c4-c1 c4-c2",
        "you (White)> quit\nGame abandoned after 0 plies.\n",
    ] {
        assert!(text.contains(expected), "{expected:?} not in:\n{text}");
    }
    // The board: labels, restricted squares, the last move.
    assert!(text.contains("     a  b  c  d  e  f  g\n  7  +  .  .  A  .  .  +   7\n"));
    assert!(text.contains("  last move "));

    // Rule 3, from a position with an empty Castle.
    let o = play_from("3A3/7/3D3/7/3K3/7/3A3 w", "d5-d4\n");
    assert!(o.status.success());
    assert!(
        stdout(&o).contains(
            "illegal move d5-d4: only the King may enter or pass through the restricted square d4 (rule 3)\n"
        ),
        "{}",
        stdout(&o)
    );
    assert!(stdout(&o).ends_with("End of input: game abandoned after 0 plies.\n"));
}

#[test]
fn play_ends_with_the_result_and_its_rule() {
    let agent = tiny_agent();
    // The King steps into the corner: White (the human) wins at once.
    let o = play_from("3A3/7/7/A6/7/7/1K1A3 w", "b1-a1\n");
    assert!(o.status.success());
    assert!(
        stdout(&o).ends_with(
            "Game over after 1 plies: White wins: the King escaped to a corner (rule 8.1). You win.\n"
        ),
        "{}",
        stdout(&o)
    );
    // As Black, with a time budget: the agent moves first and the game goes on until the
    // input ends.
    let o = brandubh_with_input(
        &[
            "play",
            "--agent",
            s(agent),
            "--side",
            "black",
            "--time",
            "0.01",
        ],
        "",
    );
    assert!(o.status.success());
    assert!(stdout(&o).contains("tiny plays "), "{}", stdout(&o));
    assert!(stdout(&o).ends_with("End of input: game abandoned after 1 plies.\n"));
}

#[test]
fn damaged_agent_files_give_one_line_errors() {
    let tmp = temp_dir();
    let dir = tmp.path().to_path_buf();
    let good = std::fs::read(tiny_agent()).unwrap();
    let flipped = dir.join("flipped.agent");
    let mut bytes = good.clone();
    let at = bytes.len() - 100;
    bytes[at] ^= 0x10;
    std::fs::write(&flipped, &bytes).unwrap();
    let cut = dir.join("cut.agent");
    std::fs::write(&cut, &good[..1000]).unwrap();
    let text = dir.join("text.agent");
    std::fs::write(&text, "not an agent\n").unwrap();
    let cases = [
        (&flipped, "damaged agent file: payload checksum "),
        (
            &cut,
            &format!(
                "truncated or damaged agent file: 1000 bytes, the header says {}",
                good.len()
            ) as &str,
        ),
        (&text, "not a brandubh agent file"),
    ];
    for (path, message) in cases {
        for command in ["play", "analyze"] {
            let o = brandubh_with_input(&[command, "--agent", s(path)], "quit\n");
            assert_eq!(o.status.code(), Some(1), "{command} {}", path.display());
            let err = stderr(&o);
            assert!(
                err.starts_with(&format!("error: {}: {message}", path.display())),
                "{err}"
            );
            assert_eq!(err.lines().count(), 1, "{err}");
            assert_eq!(stdout(&o), "");
        }
    }
    let o = brandubh(&["analyze", "--agent", s(&dir.join("missing.agent"))]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).starts_with(&format!(
        "error: {}: No such file",
        dir.join("missing.agent").display()
    )));

    // No agent given and none shipped (run from an empty directory).
    if !shipped_agent().exists() {
        let o = bin()
            .arg("play")
            .current_dir(&dir)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1));
        assert!(
            stderr(&o).starts_with(&format!(
                "error: no agent file given and no shipped model at {SHIPPED} yet"
            )),
            "{}",
            stderr(&o)
        );
    }
    // --sims and --time exclude each other (clap's usage error).
    let o = brandubh(&[
        "play",
        "--agent",
        s(tiny_agent()),
        "--sims",
        "2",
        "--time",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn export_onnx_from_an_agent_file_a_run_and_a_checkpoint_writes_the_same_model() {
    let agent = tiny_agent();
    let shared = agent.parent().unwrap().parent().unwrap();
    let run = shared.join("run");
    let tmp = temp_dir();
    let dir = tmp.path();
    let mut models = Vec::new();
    for (i, source) in [
        agent.to_path_buf(),
        run.clone(),
        run.join("checkpoints").join("iter-000001"),
    ]
    .iter()
    .enumerate()
    {
        let out = dir.join(format!("m{i}")).join("net.onnx");
        let o = brandubh(&["export", s(source), "--format", "onnx", "--out", s(&out)]);
        assert!(o.status.success(), "{}: {}", source.display(), stderr(&o));
        let text = stdout(&o);
        assert!(
            text.starts_with(&format!("wrote {} (", out.display())),
            "{text}"
        );
        assert!(
            text.contains("C8xN1") && text.contains("opset 17"),
            "{text}"
        );
        models.push(std::fs::read(&out).unwrap());
    }
    // The agent file holds the checkpoint's weights, so all three are the same model.
    assert_eq!(models[0], models[1]);
    assert_eq!(models[0], models[2]);
    // ... and the one brandubh-net writes for those weights (the writer's own tests decode
    // it and check its outputs against burn).
    assert_eq!(models[0], onnx_of(agent));
    // No temporary file is left beside the output.
    let names: Vec<_> = std::fs::read_dir(dir.join("m0")).unwrap().collect();
    assert_eq!(names.len(), 1);
}

/// The summary names the model's own input width: the shipped agent takes more than the
/// basic nine planes, and its ONNX model says so in its input's shape.
#[test]
fn export_onnx_names_the_input_planes_of_the_network() {
    let shipped = shipped_agent();
    let planes = brandubh_agent::Agent::load(&shipped)
        .unwrap()
        .meta()
        .model
        .planes();
    assert!(planes > 9, "the shipped agent takes {planes} planes");
    let tmp = temp_dir();
    let out = tmp.path().join("shipped.onnx");
    let o = brandubh(&["export", s(&shipped), "--format", "onnx", "--out", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains(&format!("input \"planes\" [batch, {planes}, 7, 7]")),
        "{text}"
    );
    assert_eq!(std::fs::read(&out).unwrap(), onnx_of(&shipped));
}

#[test]
fn export_onnx_refuses_bad_arguments_with_one_line() {
    let agent = tiny_agent();
    let tmp = temp_dir();
    let dir = tmp.path();
    for (args, want) in [
        (vec!["--out", "x.agent"], "must end in .onnx"),
        (
            vec!["--out", "x.onnx", "--sims", "8"],
            "holds only the network",
        ),
    ] {
        let mut all = vec!["export", s(agent), "--format", "onnx"];
        all.extend(args.iter().copied());
        let o = bin().current_dir(dir).args(&all).output().unwrap();
        assert!(!o.status.success(), "{all:?}");
        let err = stderr(&o);
        assert!(err.contains(want), "{all:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
    let missing = dir.join("missing.agent");
    let o = brandubh(&[
        "export",
        s(&missing),
        "--format",
        "onnx",
        "--out",
        s(&dir.join("y.onnx")),
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("missing.agent"), "{}", stderr(&o));
    assert!(!dir.join("y.onnx").exists());
}
