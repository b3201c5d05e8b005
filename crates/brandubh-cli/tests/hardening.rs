//! Hardening (issue 9): bad invocations of every subcommand and damaged files give a
//! one-line error and a non-zero exit, never a panic.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests may unwrap: a panic is a failed test"
)]

mod common;

use std::path::Path;

use common::{brandubh, error_lines, s, stderr, temp_dir};

/// Library errors that print their source and also return it as `source()` used to show
/// it twice (`cannot read: No such file …: No such file …`).
#[test]
fn an_error_shows_its_cause_once() {
    let tmp = temp_dir();
    let missing = tmp.path().join("missing.toml");
    let bad = tmp.path().join("bad.toml");
    std::fs::write(&bad, "name = \"a b\"\n").unwrap();
    for (config, cause) in [
        (&missing, "No such file or directory"),
        (&bad, "must be 1-64 characters"),
    ] {
        let o = brandubh(&[
            "train",
            "--config",
            s(config),
            "--run",
            s(&tmp.path().join("run")),
        ]);
        assert!(!o.status.success());
        let errors = error_lines(&o);
        assert_eq!(errors.len(), 1, "{}", stderr(&o));
        assert!(errors[0].starts_with(&format!("error: {}: ", config.display())));
        assert_eq!(errors[0].matches(cause).count(), 1, "{}", errors[0]);
    }
}

/// One bad invocation and a piece of the message it must give.
struct Bad {
    args: Vec<String>,
    says: String,
}

/// Bad invocations written one a line, `ARGS => SAYS` (`#` starts a comment line): ARGS
/// split at spaces, `'…'` quoting one argument (`''` an empty one, `\t` a tab in it); SAYS
/// a piece of the message. `{NAME}` in either stands for the value `vars` gives NAME.
fn parse_cases(text: &str, vars: &[(&str, &str)]) -> Vec<Bad> {
    let fill = |t: &str| {
        vars.iter().fold(t.to_owned(), |t, (name, value)| {
            t.replace(&format!("{{{name}}}"), value)
        })
    };
    let mut cases = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (args, says) = line.split_once("=>").expect("a case line has =>");
        let mut words = Vec::new();
        let mut rest = args.trim();
        while !rest.is_empty() {
            let (word, tail) = match rest.strip_prefix('\'') {
                Some(quoted) => quoted.split_once('\'').expect("a closing quote"),
                None => rest.split_once(' ').unwrap_or((rest, "")),
            };
            words.push(fill(word).replace("\\t", "\t"));
            rest = tail.trim_start();
        }
        cases.push(Bad {
            args: words,
            says: fill(says.trim()),
        });
    }
    cases
}

/// Missing, malformed and out-of-range arguments of every subcommand: a non-zero exit, a
/// message on stderr (clap's usage errors, or one `error:` line naming the argument or
/// file), nothing on stdout, no panic.
#[test]
#[expect(
    clippy::too_many_lines,
    reason = "a test: one table of cases or one scenario, read top to bottom"
)]
fn bad_invocations_of_every_subcommand_fail_with_a_usage_message() {
    let tmp = temp_dir();
    let tiny = common::tiny_toml();
    let tiny = s(&tiny);
    let dir = s(tmp.path());
    let file = tmp.path().join("plain-file");
    std::fs::write(&file, "not a directory").unwrap();
    let under_file = file.join("run");
    let binary = tmp.path().join("binary.toml");
    std::fs::write(&binary, [0xff, 0xfe, 0x00, 0x9f]).unwrap();
    let out_of_range = tmp.path().join("range.toml");
    std::fs::write(&out_of_range, "[search]\nsimulations = 0\n").unwrap();
    let unknown_key = tmp.path().join("key.toml");
    std::fs::write(&unknown_key, "[selfplay]\ngmes_per_iteration = 4\n").unwrap();
    let (file, under_file, binary) = (s(&file), s(&under_file), s(&binary));
    let (out_of_range, unknown_key) = (s(&out_of_range), s(&unknown_key));
    let run = s(&tmp.path().join("run")).to_owned();
    let out = s(&tmp.path().join("out.agent")).to_owned();
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/brandubh-v1.agent");
    let shipped = s(&shipped);
    let vars = [
        ("tiny", tiny),
        ("dir", dir),
        ("file", file),
        ("under_file", under_file),
        ("binary", binary),
        ("out_of_range", out_of_range),
        ("unknown_key", unknown_key),
        ("run", &run),
        ("out", &out),
        ("shipped", shipped),
    ];
    let cases = parse_cases(
        r"
        # The command itself.
        frobnicate => unrecognized subcommand
        --bogus => unexpected argument
         => Usage
        # perft
        perft => <DEPTH>
        perft x => invalid value 'x'
        perft -1 => unexpected argument '-1'
        perft 13 => not in 0..=12
        perft 99999999999999999999 => too large
        perft 1 2 => unexpected argument '2'
        perft 2 --position => a value is required
        perft 2 --position '' => --position: invalid position
        perft 2 --position '7/7/7/7/7/7/7 w' => --position
        perft 2 --position '3K3/7/7/7/7/7/3A3 x' => --position
        perft 1 --divide=yes => unexpected value
        # replay
        replay --position => a value is required
        replay --position 'K6/7/7/7/7/7/7/7 w' => --position
        replay --bogus => unexpected argument
        # train
        train => --config <FILE>
        train --config => a value is required
        train --config /nonexistent/x.toml --run {run} => cannot read
        train --config {dir} --run {run} => cannot read
        train --config {binary} --run {run} => {binary}
        train --config {out_of_range} --run {run} => search.simulations
        train --config {unknown_key} --run {run} => did you mean
        train --config {tiny} --iterations 0 => --iterations
        train --config {tiny} --iterations x => --iterations
        train --config {tiny} --iterations -3 => unexpected argument
        train --config {tiny} --iterations 4294967296 => --iterations
        train --config {tiny} --run => a value is required
        train --config {tiny} --run {file} => {file}
        train --config {tiny} --run {under_file} => {under_file}
        train --config {tiny} --quiet=no => unexpected value
        # bench
        bench --config /nonexistent/x.toml => cannot read
        bench --config {out_of_range} => search.simulations
        bench --config {tiny} --games 0 => --games
        bench --config {tiny} --games 100001 => --games
        bench --config {tiny} --games many => --games
        bench --config {tiny} --seconds 0 => --seconds
        bench --config {tiny} --seconds -1 => unexpected argument
        bench --config {tiny} --seconds=-1 => --seconds
        bench --config {tiny} --seconds NaN => --seconds
        bench --config {tiny} --seconds inf => --seconds
        bench --config {tiny} --seconds 601 => --seconds
        bench --config {tiny} --seconds soon => --seconds
        # match
        match => <A>
        match random => <B>
        match random greedy extra => unexpected argument
        match '' random => empty spec
        match random mcts:0 => simulations must be
        match random mcts:99999999999999 => simulations must be
        match alphabeta:0 random => depth must be
        match alphabeta:2h random => alphabeta
        match random greedy:3 => takes no argument
        match random mcts:8@sims=4@sims=4 => mcts
        match random ckpt: => ckpt
        match random run: => run
        match random ckpt:/nonexistent/iter-000001 => no such checkpoint
        match random run:{file} => {file}
        match random greedy --matches 0 => --matches
        match random greedy --matches 1000001 => --matches
        match random greedy --threads 5000 => --threads
        match random greedy --seed -1 => unexpected argument
        match random greedy --seed 1.5 => --seed
        match random greedy --ply-cap 0 => --ply-cap
        match random greedy --ply-cap 10001 => --ply-cap
        # ladder
        ladder => <RUN>
        ladder /nonexistent/run => not a directory
        ladder {file} => not a directory
        ladder {dir} => no checkpoints
        ladder {dir} --baselines random,mcts: => --baselines
        ladder {dir} --baselines random,bogus => bogus
        ladder {dir} --matches 0 => --matches
        ladder {dir} --neighbours 101 => --neighbours
        ladder {dir} --sims 0 => --sims
        ladder {dir} --algo bogus => --algo
        ladder {dir} --threads -1 => unexpected argument
        ladder {dir} --seed x => --seed
        ladder {dir} --ply-cap 0 => --ply-cap
        # export
        export => RUN_DIR|CHECKPOINT
        export {dir} => --out <FILE>
        export /nonexistent/run --out {out} => /nonexistent/run
        export {dir} --out {out} => no checkpoints
        export {dir} --out {file} => must end in .agent
        export {dir} --out {out} --sims 0 => --sims
        export {dir} --out {out} --algo bogus => --algo
        export {dir} --out {out} --name '' => --name
        export {dir} --out {out} --name 'a\tb' => --name
        # play (stdin is empty: a game that starts ends at once)
        play --agent => a value is required
        play --agent /nonexistent/x.agent => /nonexistent/x.agent
        play --agent {file} => not a brandubh agent file
        play --agent {dir} => {dir}
        play --agent {shipped} --side red => --side
        play --agent {shipped} --sims 0 => --sims
        play --agent {shipped} --time 0 => --time
        play --agent {shipped} --time NaN => --time
        play --agent {shipped} --time 3601 => --time
        play --agent {shipped} --sims 1 --time 1 => cannot be used
        play --agent {shipped} --seed x => --seed
        play --agent {shipped} --position 'K/7 w' => --position
        play --agent {shipped} extra => unexpected argument
        # analyze
        analyze --agent /nonexistent/x.agent => /nonexistent/x.agent
        analyze --agent {file} => not a brandubh agent file
        analyze --agent {shipped} --top 0 => --top
        analyze --agent {shipped} --top 201 => --top
        analyze --agent {shipped} --sims 0 => --sims
        analyze --agent {shipped} --sims 1000001 => --sims
        analyze --agent {shipped} --position '7/7 b' => --position
        analyze --agent {shipped} zz => zz
        analyze --agent {shipped} d4-d5 => d4-d5
        analyze --agent {shipped} --position '3K3/7/7/7/7/7/3A3 w' d7-a7 => over
        # report
        report => Usage
        report opponents => REPORT.json
        report tables {file} => unrecognized subcommand
        report opponents /nonexistent/r.json => /nonexistent/r.json
        report colours {file} => not a `brandubh match --json` report
        report openings {dir} => {dir}
        report compare {binary} => {binary}
        ",
        &vars,
    );
    assert!(cases.len() > 100, "{} cases parsed", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let args: Vec<&str> = case.args.iter().map(String::as_str).collect();
        let o = brandubh(&args);
        let err = stderr(&o);
        let problem = if o.status.success() {
            Some("exit status 0")
        } else if err.trim().is_empty() {
            Some("nothing on stderr")
        } else if err.contains("panicked") {
            Some("a panic")
        } else if !o.stdout.is_empty() {
            Some("output on stdout")
        } else if !err.contains(&case.says) {
            Some("not the expected message")
        } else if !err.contains("Usage") && error_lines(&o).len() != 1 {
            Some("neither a usage message nor one error line")
        } else {
            None
        };
        if let Some(p) = problem {
            failures.push(format!(
                "{:?}: {p} (wanted {:?}): {err}",
                case.args, case.says
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        !tmp.path().join("run").exists(),
        "no run directory was created"
    );
    assert!(
        !tmp.path().join("out.agent").exists(),
        "no agent file was written"
    );
}

/// How a file is damaged.
#[derive(Clone, Copy, Debug)]
enum Damage {
    /// Cut to half its length.
    Truncate,
    /// Cut to nothing.
    Empty,
    /// One byte in the middle flipped.
    FlipMiddle,
    /// One byte near the start (in the header) flipped.
    FlipHeader,
}

const DAMAGES: [Damage; 4] = [
    Damage::Truncate,
    Damage::Empty,
    Damage::FlipMiddle,
    Damage::FlipHeader,
];

fn damage(path: &Path, how: Damage) {
    let mut bytes = std::fs::read(path).unwrap();
    match how {
        Damage::Truncate => bytes.truncate(bytes.len() / 2),
        Damage::Empty => bytes.clear(),
        Damage::FlipMiddle => {
            let mid = bytes.len() / 2;
            bytes[mid] ^= 0x55;
        }
        Damage::FlipHeader => bytes[10] ^= 0x55,
    }
    std::fs::write(path, bytes).unwrap();
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// What a command must do with a damaged file.
#[derive(Clone, Copy, PartialEq)]
enum Expect {
    /// Fail with one error line naming the file.
    Error,
    /// Succeed with a warning naming the file.
    Warning,
    /// Succeed (the command does not read the file).
    Success,
}

/// Runs `args` and checks the outcome against `expect` for a damaged `file`; returns the
/// row of the report (the message), or the problem.
fn check_damaged(args: &[&str], file: &str, expect: Expect) -> Result<String, String> {
    let o = brandubh(args);
    let err = stderr(&o);
    if err.contains("panicked") {
        return Err(format!("a panic: {err}"));
    }
    let errors = error_lines(&o);
    let warnings: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("WARN") && l.contains(file))
        .collect();
    match expect {
        Expect::Error => {
            if o.status.success() {
                return Err(format!("exit status 0: {err}"));
            }
            if errors.len() != 1 || !errors[0].contains(file) {
                return Err(format!("not one error line naming {file}: {err}"));
            }
            Ok(errors[0].clone())
        }
        Expect::Warning => {
            if !o.status.success() || warnings.is_empty() {
                return Err(format!("no success with a warning naming {file}: {err}"));
            }
            let w = warnings[0];
            Ok(w[w.find("WARN").unwrap_or(0)..].to_owned())
        }
        Expect::Success => {
            if !o.status.success() {
                return Err(format!("failed: {err}"));
            }
            Ok("(not read: success)".to_owned())
        }
    }
}

/// A quick ladder of `run`'s checkpoints against random: one match each, no plot.
fn ladder_args(run: &str) -> Vec<&str> {
    vec![
        "ladder",
        run,
        "--matches",
        "1",
        "--sims",
        "2",
        "--ply-cap",
        "8",
        "--neighbours",
        "0",
        "--no-plot",
        "--baselines",
        "random",
    ]
}

/// The rows of the damaged-files report, and the problems found.
#[derive(Default)]
struct Findings {
    report: Vec<String>,
    failures: Vec<String>,
}

impl Findings {
    /// Checks `args` against the damaged `file` (see [`check_damaged`]): the message joins
    /// the report after `row`, or the problem joins the failures after `case`.
    fn check(&mut self, args: &[&str], file: &str, expect: Expect, row: String, case: String) {
        match check_damaged(args, file, expect) {
            Ok(message) => self.report.push(format!("{row} | {message}")),
            Err(problem) => self.failures.push(format!("{case}: {problem}")),
        }
    }
}

/// Damaged chunks, checkpoints, configurations and run files: every command that reads
/// one names the file and the problem in one line and exits non-zero; a damaged replay
/// chunk during training is skipped with a warning.
#[test]
#[expect(
    clippy::too_many_lines,
    reason = "a test: one table of cases or one scenario, read top to bottom"
)]
fn damaged_files_are_reported_in_one_line() {
    let tmp = temp_dir();
    let tiny = common::tiny_toml();
    let text = std::fs::read_to_string(&tiny).unwrap();
    // Two complete iterations; the resumed run asks for a third.
    let base = tmp.path().join("base");
    let o = brandubh(&["train", "--quiet", "--config", s(&tiny), "--run", s(&base)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let three = tmp.path().join("three.toml");
    std::fs::write(&three, text.replace("iterations = 2", "iterations = 3")).unwrap();
    let three = s(&three);
    let mut found = Findings::default();
    let mut case = 0;
    // A fresh copy of the base run to damage.
    let mut copy_of_base = || {
        case += 1;
        let run = tmp.path().join(format!("case{case}"));
        copy_dir(&base, &run);
        run
    };

    let run_files = [
        (
            "chunks/chunk-000002-000001.brz",
            Expect::Warning,
            Expect::Success,
        ),
        ("checkpoints/iter-000002.json", Expect::Error, Expect::Error),
        (
            "checkpoints/iter-000002.safetensors",
            Expect::Error,
            Expect::Error,
        ),
        (
            "checkpoints/iter-000002.optim.bpk",
            Expect::Error,
            Expect::Success,
        ),
        ("state.json", Expect::Error, Expect::Success),
        ("config.toml", Expect::Error, Expect::Success),
    ];
    for (file, on_train, on_eval) in run_files {
        for how in DAMAGES {
            let run = copy_of_base();
            damage(&run.join(file), how);
            let r = s(&run);
            let ckpt = format!("ckpt:{r}/checkpoints/iter-000002@sims=2");
            let latest = format!("run:{r}@sims=2");
            let fast = ["--matches", "1", "--ply-cap", "8", "--seed", "1"];
            let mut commands: Vec<(Vec<&str>, Expect)> = vec![(
                vec!["train", "--quiet", "--config", three, "--run", r],
                on_train,
            )];
            if file.starts_with("checkpoints/") {
                let mut m = vec!["match", ckpt.as_str(), "random"];
                m.extend(fast);
                commands.push((m, on_eval));
                let mut m = vec!["match", latest.as_str(), "random"];
                m.extend(fast);
                commands.push((m, on_eval));
                commands.push((ladder_args(r), on_eval));
            }
            // export reads the latest checkpoint's weights and the run's configuration.
            let exported = format!("{r}.agent");
            if file.starts_with("checkpoints/") || file == "config.toml" {
                // An empty config.toml is a configuration of defaults (see below).
                let expect = match (file, how) {
                    ("config.toml", Damage::Empty) => Expect::Success,
                    ("config.toml", _) => Expect::Error,
                    _ => on_eval,
                };
                commands.push((vec!["export", r, "--out", exported.as_str()], expect));
            }
            // An empty config.toml is a valid configuration of defaults (by design): it is
            // refused as a changed configuration, which names the run, not the file.
            let named = if file == "config.toml" && matches!(how, Damage::Empty) {
                r
            } else {
                file
            };
            for (args, expect) in commands {
                let row = format!("{} | {file} | {how:?}", args[0]);
                found.check(
                    &args,
                    named,
                    expect,
                    row,
                    format!("{args:?} {file} {how:?}"),
                );
            }
        }
    }

    // The --config file itself: a truncation inside a value and flipped bytes in a key and
    // in a section header (an empty file is a valid configuration of defaults).
    let cut = text.find("channels = ").unwrap() + "channels = ".len();
    let key = text.find("\nseed").unwrap() + 2;
    let header = text.find("[model]").unwrap() + 2;
    let mut configs = vec![("truncated", text.as_bytes()[..cut].to_vec())];
    for (name, at) in [("flipped key", key), ("flipped header", header)] {
        let mut bytes = text.as_bytes().to_vec();
        bytes[at] ^= 0x55;
        configs.push((name, bytes));
    }
    for (name, bytes) in configs {
        let path = tmp.path().join(format!("{}.toml", name.replace(' ', "-")));
        std::fs::write(&path, bytes).unwrap();
        let p = s(&path);
        let fresh = tmp.path().join("fresh");
        for args in [
            vec!["train", "--quiet", "--config", p, "--run", s(&fresh)],
            vec!["bench", "--config", p, "--games", "1", "--seconds", "0.01"],
        ] {
            let row = format!("{} | --config | {name}", args[0]);
            found.check(&args, p, Expect::Error, row, format!("{args:?} {name}"));
        }
        assert!(!fresh.exists(), "a damaged configuration started a run");
    }

    // metrics.jsonl: a cut last line is an interrupted write (warned about and replaced);
    // damage inside is an error. (A cut exactly at a line break drops the last iteration's
    // line without notice: JSON Lines cannot tell.)
    let cut_last_line = |bytes: &mut Vec<u8>| bytes.truncate(bytes.len() - 10);
    let flip_first_line = |bytes: &mut Vec<u8>| bytes[10] ^= 0x55;
    type Hurt<'a> = &'a dyn Fn(&mut Vec<u8>);
    let metrics_damages: [(&str, Hurt, Expect); 2] = [
        ("last line cut", &cut_last_line, Expect::Warning),
        ("FlipHeader", &flip_first_line, Expect::Error),
    ];
    for (how, hurt, expect) in metrics_damages {
        let run = copy_of_base();
        let path = run.join("metrics.jsonl");
        let mut bytes = std::fs::read(&path).unwrap();
        hurt(&mut bytes);
        std::fs::write(&path, bytes).unwrap();
        let args = ["train", "--quiet", "--config", three, "--run", s(&run)];
        let row = format!("train | metrics.jsonl | {how}");
        found.check(
            &args,
            "metrics.jsonl",
            expect,
            row,
            format!("metrics.jsonl {how}"),
        );
    }

    // The ladder's stored games.
    let o = brandubh(&ladder_args(s(&base)));
    assert!(o.status.success(), "{}", stderr(&o));
    // (A flip inside a string can give another valid line: stored results of an agent
    // that is not in the ladder are kept and ignored.)
    {
        let how = Damage::Truncate;
        let run = copy_of_base();
        damage(&run.join("ladder/games.jsonl"), how);
        let row = format!("ladder | ladder/games.jsonl | {how:?}");
        let args = ladder_args(s(&run));
        found.check(
            &args,
            "games.jsonl",
            Expect::Error,
            row,
            format!("games.jsonl {how:?}"),
        );
    }

    // An agent file: play, analyze and match read it.
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/brandubh-v1.agent");
    for how in DAMAGES {
        let name = format!("damaged-{how:?}.agent");
        let path = tmp.path().join(&name);
        std::fs::copy(&shipped, &path).unwrap();
        damage(&path, how);
        let p = s(&path);
        let spec = format!("agent:{p}");
        for args in [
            vec!["play", "--agent", p],
            vec!["analyze", "--agent", p, "--sims", "2"],
            vec!["match", &spec, "random", "--matches", "1", "--ply-cap", "8"],
        ] {
            let row = format!("{} | .agent | {how:?}", args[0]);
            found.check(
                &args,
                &name,
                Expect::Error,
                row,
                format!("{args:?} {how:?}"),
            );
        }
    }

    eprintln!(
        "command | file | damage | message\n{}",
        found.report.join("\n")
    );
    assert!(found.failures.is_empty(), "{}", found.failures.join("\n"));
}
