//! `brandubh train --role learner|actor` against a real S3-protocol server on 127.0.0.1:
//! moto's server mode (`moto_server`, from PyPI), found through `BRANDUBH_MOTO_SERVER`
//! (set by `.ci/run`, which installs it). Without it the test says it is skipped, unless
//! `CI` is set: then it fails.
//!
//! Between the processes and moto sits a TCP proxy of this test, so that "the store goes
//! away" can be played without losing moto's in-memory objects: the proxy stops accepting
//! and drops every connection (clients see connection refused, as with a stopped server),
//! then listens again on the same port.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests may unwrap: a panic is a failed test"
)]

use std::collections::HashSet;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use brandubh_net::{Device, checkpoint};
use brandubh_run::{RunDir, RunLayout};
use brandubh_store::{Location, Retry, Store};
use brandubh_train::remote::ConsumedRecord;

mod common;
use common::{bin, stderr, stdout};

const BUCKET: &str = "brandubh";

fn moto_server() -> Option<PathBuf> {
    match std::env::var_os("BRANDUBH_MOTO_SERVER") {
        Some(path) => Some(PathBuf::from(path)),
        None if std::env::var_os("CI").is_some() => {
            panic!("CI is set but BRANDUBH_MOTO_SERVER is not: .ci/run installs moto_server")
        }
        None => {
            eprintln!(
                "skipped: set BRANDUBH_MOTO_SERVER to a moto_server binary (pip install 'moto[server]')"
            );
            None
        }
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// moto on a free loopback port, with the test's bucket; killed on drop.
struct Moto {
    child: Child,
    port: u16,
}

impl Moto {
    fn start(bin: &Path) -> Moto {
        let port = free_port();
        let child = Command::new(bin)
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("moto_server starts");
        let moto = Moto { child, port };
        let t0 = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                t0.elapsed() < Duration::from_secs(60),
                "moto_server did not listen"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        // CreateBucket: moto takes unsigned requests.
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        write!(
            s,
            "PUT /{BUCKET} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut answer = String::new();
        s.read_to_string(&mut answer).unwrap();
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        moto
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A TCP proxy to moto that can be taken down (connection refused, live connections
/// dropped) and brought back on the same port.
struct Proxy {
    port: u16,
    up: Arc<AtomicBool>,
    conns: Arc<Mutex<Vec<TcpStream>>>,
}

impl Proxy {
    fn start(target: u16) -> Proxy {
        let proxy = Proxy {
            port: free_port(),
            up: Arc::new(AtomicBool::new(true)),
            conns: Arc::new(Mutex::new(Vec::new())),
        };
        let (port, up, conns) = (proxy.port, Arc::clone(&proxy.up), Arc::clone(&proxy.conns));
        std::thread::spawn(move || {
            loop {
                let listener = TcpListener::bind(("127.0.0.1", port)).unwrap();
                listener.set_nonblocking(true).unwrap();
                while up.load(Ordering::SeqCst) {
                    match listener.accept() {
                        Ok((client, _)) => forward(client, target, &conns),
                        Err(_) => std::thread::sleep(Duration::from_millis(5)),
                    }
                }
                drop(listener);
                for c in conns.lock().unwrap().drain(..) {
                    let _ = c.shutdown(Shutdown::Both);
                }
                while !up.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
        });
        proxy
    }

    fn down(&self) {
        self.up.store(false, Ordering::SeqCst);
    }

    fn up(&self) {
        self.up.store(true, Ordering::SeqCst);
    }
}

fn forward(client: TcpStream, target: u16, conns: &Mutex<Vec<TcpStream>>) {
    client.set_nonblocking(false).unwrap();
    let Ok(server) = TcpStream::connect(("127.0.0.1", target)) else {
        return;
    };
    let mut all = conns.lock().unwrap();
    all.push(client.try_clone().unwrap());
    all.push(server.try_clone().unwrap());
    for (mut from, mut to) in [
        (client.try_clone().unwrap(), server.try_clone().unwrap()),
        (server, client),
    ] {
        std::thread::spawn(move || {
            let _ = std::io::copy(&mut from, &mut to);
            let _ = to.shutdown(Shutdown::Write);
        });
    }
}

/// The environment of every process: moto's endpoint (through the proxy), dummy keys.
fn s3_env(port: u16) -> Vec<(String, String)> {
    [
        ("AWS_ENDPOINT_URL", format!("http://127.0.0.1:{port}")),
        ("AWS_ALLOW_HTTP", "true".into()),
        ("AWS_ACCESS_KEY_ID", "testing".into()),
        ("AWS_SECRET_ACCESS_KEY", "testing-secret".into()),
        ("AWS_REGION", "us-east-1".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

/// A `brandubh` process with its stderr in `log`.
fn spawn(args: &[&str], env: &[(String, String)], log: &Path) -> Child {
    bin()
        .args(args)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap()
}

fn read(log: &Path) -> String {
    std::fs::read_to_string(log).unwrap_or_default()
}

/// Waits for `child` to exit successfully within `limit`.
fn wait_ok(child: &mut Child, log: &Path, limit: Duration) {
    let t0 = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "{} failed:\n{}", log.display(), read(log));
            return;
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            panic!(
                "{} still running after {limit:?}:\n{}",
                log.display(),
                read(log)
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Waits until `log` contains `needle`.
fn wait_for_line(log: &Path, needle: &str, limit: Duration) {
    let t0 = Instant::now();
    while !read(log).contains(needle) {
        assert!(
            t0.elapsed() < limit,
            "no {needle:?} in {}:\n{}",
            log.display(),
            read(log)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The chunk keys an actor's log reports uploaded.
fn uploaded(log: &Path) -> Vec<String> {
    read(log)
        .lines()
        .filter_map(|l| l.split("uploaded ").nth(1))
        .filter_map(|rest| rest.split(':').next())
        .filter(|key| key.starts_with("chunks/"))
        .map(str::to_owned)
        .collect()
}

struct Run {
    tmp: tempfile::TempDir,
    env: Vec<(String, String)>,
    url: String,
    config: PathBuf,
}

impl Run {
    fn new(port: u16, prefix: &str, iterations: u32) -> Run {
        let tmp = tempfile::tempdir().unwrap();
        let tiny = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/tiny.toml");
        let text = std::fs::read_to_string(tiny)
            .unwrap()
            .replace("iterations = 2", &format!("iterations = {iterations}"));
        let config = tmp.path().join("tiny.toml");
        std::fs::write(&config, text).unwrap();
        Run {
            tmp,
            env: s3_env(port),
            url: format!("s3://{BUCKET}/{prefix}"),
            config,
        }
    }

    fn log(&self, name: &str) -> PathBuf {
        self.tmp.path().join(format!("{name}.log"))
    }

    fn learner(&self, name: &str) -> Child {
        let cache = self.tmp.path().join(name);
        let args = [
            "train",
            "--role",
            "learner",
            "--config",
            self.config.to_str().unwrap(),
            "--run",
            &self.url,
            "--cache",
            cache.to_str().unwrap(),
            "--quiet",
            "--poll-ms",
            "200",
        ];
        spawn(&args, &self.env, &self.log(name))
    }

    fn actor(&self, id: &str, log: &str) -> Child {
        let cache = self.tmp.path().join(format!("cache-{id}"));
        let args = [
            "train",
            "--role",
            "actor",
            "--run",
            &self.url,
            "--actor-id",
            id,
            "--cache",
            cache.to_str().unwrap(),
            "--quiet",
            "--poll-ms",
            "200",
        ];
        spawn(&args, &self.env, &self.log(log))
    }

    fn store(&self) -> Store {
        Store::open_with(
            Location::parse(&self.url).unwrap(),
            Retry::default(),
            &self.env,
        )
        .unwrap()
    }

    /// Every chunk an actor reported is consumed exactly once or still waiting in the
    /// store; nothing else is consumed (but a killed actor's last put); every checkpoint
    /// loads.
    /// `unreported_ok`: chunks a killed actor may have put without living to report.
    fn check(&self, actor_logs: &[&str], iterations: u32, unreported_ok: &dyn Fn(&str) -> bool) {
        let store = self.store();
        let reported: HashSet<String> = actor_logs
            .iter()
            .flat_map(|l| uploaded(&self.log(l)))
            .collect();
        assert!(reported.len() >= 4, "{reported:?}");
        let mut consumed = Vec::new();
        for entry in store.list(RunLayout::LEARNER).unwrap() {
            if RunLayout::parse_consumed(&entry.key).is_none() {
                continue;
            }
            let r: ConsumedRecord =
                serde_json::from_slice(&store.get(&entry.key).unwrap().unwrap()).unwrap();
            consumed.extend(r.chunks.into_iter().map(|c| c.key));
        }
        let once: HashSet<&String> = consumed.iter().collect();
        assert_eq!(
            once.len(),
            consumed.len(),
            "a chunk consumed twice: {consumed:?}"
        );
        for key in &consumed {
            assert!(
                reported.contains(key) || unreported_ok(key),
                "{key} consumed but never reported uploaded"
            );
        }
        for key in &reported {
            assert!(
                store.get(key).unwrap().is_some(),
                "{key} reported uploaded but lost"
            );
        }
        let dir = RunDir::new(self.tmp.path().join("check"));
        for i in 0..=iterations {
            for ext in ["json", "safetensors"] {
                let key = format!("{}.{ext}", RunLayout::checkpoint(i));
                let bytes = store
                    .get(&key)
                    .unwrap()
                    .unwrap_or_else(|| panic!("{key} missing"));
                brandubh_fs::write_atomic(&dir.root().join(&key), &bytes).unwrap();
            }
            checkpoint::load(dir.checkpoint(i), &Device::flex(), None).unwrap();
        }
    }
}

#[test]
fn a_learner_and_two_actors_train_through_s3_and_survive_faults() {
    let Some(bin) = moto_server() else {
        return;
    };
    let moto = Moto::start(&bin);
    let proxy = Proxy::start(moto.port);
    clean_run(&proxy);
    run_with_faults(&proxy);
}

const MINUTE: Duration = Duration::from_secs(60);

/// One learner and two actors, three iterations.
fn clean_run(proxy: &Proxy) {
    let minute = MINUTE;
    let run = Run::new(proxy.port, "clean", 3);
    let mut learner = run.learner("learner");
    let mut actors = [run.actor("a1", "a1"), run.actor("a2", "a2")];
    wait_ok(&mut learner, &run.log("learner"), 5 * minute);
    for (a, log) in actors.iter_mut().zip(["a1", "a2"]) {
        wait_ok(a, &run.log(log), 2 * minute);
    }
    assert!(read(&run.log("learner")).contains("iteration 3:"));
    run.check(&["a1", "a2"], 3, &|_| false);
    let status = bin()
        .args(["status", "--run", &run.url])
        .envs(run.env.iter().map(|(k, v)| (k, v)))
        .output()
        .unwrap();
    let text = stdout(&status);
    assert!(status.status.success(), "{}", stderr(&status));
    assert!(
        text.contains("iteration 3/3") && text.contains("a1  ") && text.contains("a2  "),
        "{text}"
    );
    assert!(!text.contains("testing-secret"));
}

/// An actor killed mid-chunk and restarted with its id, the learner killed and restarted
/// on an empty cache, the store away for 6 s.
fn run_with_faults(proxy: &Proxy) {
    let minute = MINUTE;
    let run = Run::new(proxy.port, "faults", 4);
    let mut learner = run.learner("learner-1");
    let mut x1 = run.actor("x1", "x1-first");
    let mut x2 = run.actor("x2", "x2");
    wait_for_line(&run.log("x1-first"), "uploaded ", 2 * minute);
    x1.kill().unwrap();
    x1.wait().unwrap();
    let mut x1 = run.actor("x1", "x1-again");
    wait_for_line(&run.log("learner-1"), "iteration 1:", 3 * minute);
    learner.kill().unwrap();
    learner.wait().unwrap();
    let mut learner = run.learner("learner-2");
    wait_for_line(&run.log("learner-2"), "iteration 2:", 3 * minute);
    proxy.down();
    std::thread::sleep(Duration::from_secs(6));
    proxy.up();
    wait_ok(&mut learner, &run.log("learner-2"), 5 * minute);
    wait_ok(&mut x1, &run.log("x1-again"), 2 * minute);
    wait_ok(&mut x2, &run.log("x2"), 2 * minute);
    let learner_log = read(&run.log("learner-2"));
    assert!(learner_log.contains("iteration 4:"), "{learner_log}");
    assert!(
        !learner_log.contains("iteration 1:"),
        "iteration 1 redone:\n{learner_log}"
    );
    let all_logs: String = ["learner-2", "x1-again", "x2"]
        .iter()
        .map(|l| read(&run.log(l)))
        .collect();
    assert!(
        all_logs.contains("unreachable") && all_logs.contains("retrying in"),
        "{all_logs}"
    );
    assert!(!all_logs.contains("testing-secret"));
    // The restarted actor continued its numbering instead of overwriting its chunks.
    let first = uploaded(&run.log("x1-first"));
    let again = uploaded(&run.log("x1-again"));
    assert!(
        first.iter().all(|k| !again.contains(k)),
        "{first:?} {again:?}"
    );
    // The kill may fall between a chunk's put and its log line: that chunk (the next
    // number after the last reported one of the killed session) is the only one allowed
    // unreported.
    let last = first
        .iter()
        .filter_map(|k| RunLayout::parse_actor_chunk(k))
        .max_by_key(|c| c.seq)
        .unwrap();
    let next = RunLayout::actor_chunk("x1", last.session, last.seq + 1);
    run.check(&["x1-first", "x1-again", "x2"], 4, &|k| k == next);
}

/// Arguments, environment, and what the error says.
type Case = (
    Vec<&'static str>,
    Vec<(&'static str, &'static str)>,
    &'static str,
);

/// `brandubh ARGS` with `env` and no AWS credentials of the caller's.
fn without_credentials(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut c = bin();
    c.args(args)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."));
    for v in [
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AWS_SKIP_SIGNATURE",
        "AWS_IMDS",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    ] {
        c.env_remove(v);
    }
    c.envs(env.iter().copied());
    c.output().unwrap()
}

#[test]
fn bad_store_locations_are_one_line_errors() {
    let learner = |url: &'static str| {
        vec![
            "train",
            "--role",
            "learner",
            "--config",
            "configs/tiny.toml",
            "--run",
            url,
        ]
    };
    let keys = vec![("AWS_ACCESS_KEY_ID", "k"), ("AWS_SECRET_ACCESS_KEY", "s")];
    let cases: Vec<Case> = vec![
        (learner("ftp://host/run"), vec![], "unknown scheme \"ftp\""),
        (learner("s3://"), vec![], "no bucket"),
        (learner("s3://bucket/run"), vec![], "no credentials"),
        (
            learner("s3://KEY:hunter2@bucket/run"),
            vec![],
            "credentials in the URL are not accepted",
        ),
        (
            vec!["train", "--role", "actor"],
            vec![],
            "--role actor needs --run LOCATION",
        ),
        (
            vec![
                "train",
                "--config",
                "configs/tiny.toml",
                "--run",
                "s3://b/r",
            ],
            keys,
            "--role all trains in one process on a directory",
        ),
        (
            vec!["status", "--run", "gopher://x"],
            vec![],
            "unknown scheme",
        ),
    ];
    for (args, env, needle) in cases {
        let o = without_credentials(&args, &env);
        let err = stderr(&o);
        assert!(!o.status.success(), "{args:?}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(
            !err.contains("hunter2") && !err.contains("panicked"),
            "{err}"
        );
    }
}

/// Every file under `dir` with its length and modification time.
fn snapshot(dir: &Path) -> Vec<(PathBuf, u64, std::time::SystemTime)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let m = e.metadata().unwrap();
            if m.is_dir() {
                todo.push(e.path());
            } else {
                out.push((e.path(), m.len(), m.modified().unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn status_reads_a_directory_run_without_writing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let run = dir.to_str().unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let o = bin()
        .args([
            "train",
            "--config",
            "configs/tiny.toml",
            "--run",
            run,
            "--quiet",
            "--iterations",
            "1",
        ])
        .current_dir(&repo)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let before = snapshot(&dir);
    let o = bin().args(["status", "--run", run]).output().unwrap();
    let text = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(text.starts_with("run tiny at "), "{text}");
    assert!(text.contains("iteration 1/2: 4 games"), "{text}");
    assert!(text.contains("networks: 2 (0..1)"), "{text}");
    assert!(text.contains("chunks of in-process self-play: "), "{text}");
    assert_eq!(snapshot(&dir), before, "status changed the run directory");
    // A closed pipe ends it quietly; a missing directory is one line, and is not created.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let o = bin()
        .args(["status", "--run", run])
        .stdout(writer)
        .output()
        .unwrap();
    assert!(o.status.success() && o.stderr.is_empty(), "{}", stderr(&o));
    let missing = tmp.path().join("nothing");
    let o = bin()
        .args(["status", "--run", missing.to_str().unwrap()])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(
        !o.status.success() && err.contains("no such directory"),
        "{err}"
    );
    assert!(!missing.exists());
}
