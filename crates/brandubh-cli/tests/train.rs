//! `brandubh train` and `brandubh bench` through the binary.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests may unwrap: a panic is a failed test"
)]

mod common;

use common::brandubh_at_root as brandubh;

#[test]
fn train_tiny_runs_and_continues() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let run = dir.to_str().unwrap();
    let o = common::train_tiny(run, &["--iterations", "1"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("iteration 1:"), "{err}");
    let o = common::train_tiny(run, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("iteration 2:") && !err.contains("iteration 1:"),
        "{err}"
    );
    let metrics = std::fs::read_to_string(dir.join("metrics.jsonl")).unwrap();
    assert_eq!(metrics.lines().count(), 2);
    // Per-iteration evaluation through the hook (tiny.toml plays 1 match each).
    assert!(metrics.contains("\"vs_baseline\""), "{metrics}");
}

/// Gating by a sequential test through the binary: the new network plays the previous
/// one until the test decides or reaches its maximum, and the metrics line records the
/// verdict, the matches it took and whether the network was kept.
#[test]
fn train_gates_by_a_sequential_test() {
    let tmp = tempfile::tempdir().unwrap();
    let config = common::tiny_extended(
        tmp.path(),
        "gate.toml",
        "iterations = 1\n[evaluation]\ngating = true\n\
         [evaluation.sprt]\nelo0 = 0\nelo1 = 400\nmax_matches = 3\n",
    );
    let dir = tmp.path().join("run");
    let o = brandubh(&[
        "train",
        "--config",
        config.to_str().unwrap(),
        "--run",
        dir.to_str().unwrap(),
        "--quiet",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("vs previous ") && err.contains(" (SPRT "),
        "{err}"
    );
    let metrics = std::fs::read_to_string(dir.join("metrics.jsonl")).unwrap();
    let line: serde_json::Value = serde_json::from_str(metrics.lines().next().unwrap()).unwrap();
    let vs = &line["vs_previous"];
    let matches = vs["matches"].as_u64().unwrap();
    assert!((1..=3).contains(&matches), "{vs}");
    let verdict = vs["sprt"]["verdict"].as_str().unwrap();
    assert!(["h0", "h1", "inconclusive"].contains(&verdict), "{vs}");
    if verdict == "inconclusive" {
        assert_eq!(matches, 3, "{vs}");
    }
    assert_eq!(line["accepted"], verdict == "h1", "{line}");
    assert_eq!(vs["sprt"]["elo1"], 400.0);
}

#[test]
fn bad_configs_are_named_in_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let cases = [
        (
            "name = \"x\"\n[selfplay]\ngmes_per_iteration = 3\n",
            "unknown key selfplay.gmes_per_iteration",
        ),
        (
            "name = \"x\"\n[search]\nsimulations = 0\n",
            "search.simulations",
        ),
        ("name = \"x\"\n[search\n", "invalid TOML"),
    ];
    for (i, (text, needle)) in cases.iter().enumerate() {
        let path = dir.join(format!("bad{i}.toml"));
        std::fs::write(&path, text).unwrap();
        let o = brandubh(&[
            "train",
            "--config",
            path.to_str().unwrap(),
            "--run",
            dir.join("run").to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success());
        assert!(
            err.contains(needle) && err.contains(&format!("bad{i}.toml")),
            "{err}"
        );
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(
            !dir.join("run").exists(),
            "nothing created for a bad config"
        );
    }
    let o = brandubh(&["train", "--config", "configs/does-not-exist.toml"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("does-not-exist.toml"));
}

/// `brandubh bench` with `config`, `games` and `seconds`, which must succeed; its stdout.
fn bench(config: &str, games: &str, seconds: &str) -> String {
    let o = brandubh(&[
        "bench",
        "--config",
        config,
        "--games",
        games,
        "--seconds",
        seconds,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn bench_reports_the_self_play_ratio() {
    let out = bench("configs/tiny.toml", "4", "0.2");
    assert!(
        out.contains("network evaluations/s") && out.contains("% of the raw rate"),
        "{out}"
    );
    // Both training engines, side by side, and the one the config trains with.
    assert!(
        out.contains("  fast (") && out.contains("  burn (") && out.contains("fast / burn: "),
        "{out}"
    );
    assert!(
        out.contains("training engine of this config: fast"),
        "{out}"
    );
}

#[test]
fn bench_measures_a_network_with_more_input_planes() {
    // The forward pass alone is fed inputs as wide as the network's layout: with the King
    // and threat planes (16 planes) it once got the 9-plane width and panicked.
    let tmp = tempfile::tempdir().unwrap();
    let config = common::tiny_extended(
        tmp.path(),
        "planes.toml",
        "name = \"planes\"\n\n[model]\nking_planes = true\nthreat_planes = true\n",
    );
    let out = bench(config.to_str().unwrap(), "2", "0.05");
    assert!(
        out.contains("batch  256") && out.contains("network evaluations/s"),
        "{out}"
    );
}

/// `--device gpu` on a binary built without the `gpu` feature: one line naming the flag and
/// how to build a binary that has it, a non-zero exit, nothing trained; a malformed device
/// is refused by name.
#[test]
fn device_gpu_without_the_feature_says_how_to_build_it() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let args = |device: &'static str| {
        [
            "train",
            "--config",
            "configs/tiny.toml",
            "--run",
            run.to_str().unwrap(),
            "--quiet",
            "--device",
            device,
        ]
        .map(str::to_owned)
    };
    if !cfg!(feature = "gpu") {
        for (cmd, device) in [("train", "gpu"), ("bench", "gpu:1")] {
            let o = if cmd == "train" {
                brandubh(&args(device).each_ref().map(String::as_str))
            } else {
                brandubh(&["bench", "--config", "configs/tiny.toml", "--device", device])
            };
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(!o.status.success(), "{err}");
            let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error")).collect();
            assert_eq!(errors.len(), 1, "{err}");
            assert!(
                errors[0].contains(&format!("--device {device}"))
                    && errors[0].contains("--features brandubh-cli/gpu"),
                "{err}"
            );
        }
        assert!(!run.join("metrics.jsonl").exists());
    }
    let o = brandubh(&args("tpu").each_ref().map(String::as_str));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("--device") && err.contains("tpu"),
        "{err}"
    );
}
