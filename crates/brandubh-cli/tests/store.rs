//! `brandubh train --role learner|actor` against a real S3-protocol server on 127.0.0.1 and
//! against a directory: the chaos tests of issue 54. moto's server mode (`moto_server`,
//! from PyPI) is found through `BRANDUBH_MOTO_SERVER` (set by `.ci/run`, which installs
//! it); without it the S3 test says it is skipped, unless `CI` is set: then it fails.
//!
//! One learner and three actors run `configs/tiny.toml` for six iterations while the test
//! SIGKILLs an actor with a chunk upload in flight (each actor reaches moto through a slow
//! TCP proxy of this test, which goes on delivering the upload after the kill), drops a
//! stray key into an actor's prefix, copies a consumed chunk under another actor's prefix,
//! puts an object larger than a chunk may be, SIGKILLs the learner and restarts it (refused
//! while the dead learner's lease holds, then taking it over), starts a second learner
//! (refused with one line naming the holder and the expiry) and freezes the store for 6 s
//! (every proxy stops accepting and drops its connections, moto keeping its objects).
//! Afterwards `brandubh status --audit` must show the books balanced: no game lost, none
//! trained twice, the three hostile objects quarantined with their reasons, every upload an
//! actor reported in the store, every checkpoint loadable; the learners' peak memory stays
//! under a bound below the oversized object's size; and a learner restarted on its cache
//! after the store was wiped stops with one line. On a directory the same run, without the
//! proxies' in-flight upload and the freeze.

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
/// dropped) and brought back on the same port. A slow one trickles what clients send
/// (512 bytes every 20 ms), having read it all at once, so that a request is still being
/// delivered after its client died: a killed actor's chunk upload lands after the kill.
/// It notes the path of every chunk PUT it sees.
struct Proxy {
    port: u16,
    up: Arc<AtomicBool>,
    conns: Arc<Mutex<Vec<TcpStream>>>,
    puts: Arc<Mutex<Vec<String>>>,
}

impl Proxy {
    fn start(target: u16, slow: bool) -> Proxy {
        // Bound here, before the next proxy asks for a port: a port only looked up (bound
        // and let go) can be handed to two proxies at once.
        let first = TcpListener::bind("127.0.0.1:0").unwrap();
        let proxy = Proxy {
            port: first.local_addr().unwrap().port(),
            up: Arc::new(AtomicBool::new(true)),
            conns: Arc::new(Mutex::new(Vec::new())),
            puts: Arc::new(Mutex::new(Vec::new())),
        };
        let (port, up, conns) = (proxy.port, Arc::clone(&proxy.up), Arc::clone(&proxy.conns));
        let puts = Arc::clone(&proxy.puts);
        std::thread::spawn(move || {
            let mut first = Some(first);
            loop {
                let listener = first.take().unwrap_or_else(|| rebind(port));
                listener.set_nonblocking(true).unwrap();
                while up.load(Ordering::SeqCst) {
                    match listener.accept() {
                        Ok((client, _)) => forward(client, target, &conns, slow, &puts),
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

    /// Waits for a chunk PUT to start through the proxy; its path.
    fn wait_for_chunk_put(&self, limit: Duration) -> String {
        let t0 = Instant::now();
        loop {
            if let Some(p) = self.puts.lock().unwrap().first() {
                return p.clone();
            }
            assert!(t0.elapsed() < limit, "no chunk upload through the proxy");
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

/// The proxy's own port again after it was down. While it was free, a loopback
/// connection may have taken it as its local port for a moment: tries for 30 s.
fn rebind(port: u16) -> TcpListener {
    let t0 = Instant::now();
    loop {
        match TcpListener::bind(("127.0.0.1", port)) {
            Ok(listener) => return listener,
            Err(_) if t0.elapsed() < Duration::from_secs(30) => {
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => panic!("proxy port {port} taken while the proxy was down: {e}"),
        }
    }
}

/// The path of every `PUT /…/chunks/…` request line in `data`.
fn chunk_puts(data: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(data);
    text.match_indices("PUT /")
        .filter_map(|(at, _)| text[at + 4..].split(' ').next())
        .filter(|path| path.contains("/chunks/"))
        .map(str::to_owned)
        .collect()
}

fn forward(
    client: TcpStream,
    target: u16,
    conns: &Mutex<Vec<TcpStream>>,
    slow: bool,
    puts: &Arc<Mutex<Vec<String>>>,
) {
    client.set_nonblocking(false).unwrap();
    let Ok(server) = TcpStream::connect(("127.0.0.1", target)) else {
        return;
    };
    let mut all = conns.lock().unwrap();
    all.push(client.try_clone().unwrap());
    all.push(server.try_clone().unwrap());
    let (mut down_from, mut down_to) = (server.try_clone().unwrap(), client.try_clone().unwrap());
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut down_from, &mut down_to);
        let _ = down_to.shutdown(Shutdown::Write);
    });
    let (tx, rx) = std::sync::mpsc::channel::<Vec<u8>>();
    let (mut reader, puts) = (client, Arc::clone(puts));
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 1 << 16];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            puts.lock().unwrap().extend(chunk_puts(&buf[..n]));
            if tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let mut writer = server;
    std::thread::spawn(move || {
        for data in rx {
            let pieces: Vec<&[u8]> = if slow {
                data.chunks(512).collect()
            } else {
                vec![&data]
            };
            for piece in pieces {
                if writer.write_all(piece).is_err() {
                    return;
                }
                if slow {
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        }
        let _ = writer.shutdown(Shutdown::Write);
    });
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
    let status = wait_exit(child, log, limit);
    assert!(status.success(), "{} failed:\n{}", log.display(), read(log));
}

/// Waits for `child` to exit within `limit` (checking every 20 ms); its status.
fn wait_exit(child: &mut Child, log: &Path, limit: Duration) -> std::process::ExitStatus {
    let t0 = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            panic!(
                "{} still running after {limit:?}:\n{}",
                log.display(),
                read(log)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
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

const MINUTE: Duration = Duration::from_secs(60);

/// Iterations of a chaos run (`configs/tiny.toml`).
const CHAOS_ITERATIONS: u32 = 6;

/// The lease of a chaos run's learners, in seconds.
const LEASE_S: u64 = 5;

/// Bytes of the oversized object: a learner that read it would hold that much more.
const OVERSIZED: usize = 72 << 20;

/// The learner's peak memory (VmHWM) must stay under this, in MiB.
const LEARNER_MEMORY_BOUND_MIB: u64 = 64;

/// One learner and three actors on one store, and everything done to them.
struct Chaos {
    tmp: tempfile::TempDir,
    url: String,
    /// The environment of the learner and of this test's own store access.
    env: Vec<(String, String)>,
    /// Each actor's environment (its own slow proxy on S3).
    actor_env: Vec<Vec<(String, String)>>,
    config: PathBuf,
    /// The learners' `--lease-s` ([`LEASE_S`] unless a test says otherwise).
    lease_s: u64,
}

impl Chaos {
    fn new(
        url: String,
        env: Vec<(String, String)>,
        actor_env: Vec<Vec<(String, String)>>,
    ) -> Chaos {
        let tmp = tempfile::tempdir().unwrap();
        let tiny = common::tiny_toml();
        let text = std::fs::read_to_string(tiny).unwrap().replace(
            "iterations = 2",
            &format!("iterations = {CHAOS_ITERATIONS}"),
        );
        let config = tmp.path().join("tiny.toml");
        std::fs::write(&config, text).unwrap();
        Chaos {
            tmp,
            url,
            env,
            actor_env,
            config,
            lease_s: LEASE_S,
        }
    }

    fn log(&self, name: &str) -> PathBuf {
        self.tmp.path().join(format!("{name}.log"))
    }

    fn learner_args(&self, cache: &str) -> Vec<String> {
        let cache = self.tmp.path().join(cache);
        [
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
            "--lease-s",
            &self.lease_s.to_string(),
            // Every chunk found is taken, so that the hostile objects, uploaded after
            // hundreds of the actors' chunks, are looked at (the bound on an iteration's
            // games is tested in brandubh-train's tests/store.rs).
            "--max-games",
            "1000000",
        ]
        .map(str::to_owned)
        .to_vec()
    }

    fn learner(&self, log: &str, cache: &str) -> Child {
        let args = self.learner_args(cache);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        spawn(&args, &self.env, &self.log(log))
    }

    /// A learner run to its end: its exit code and the error lines of its stderr (its log
    /// lines left out).
    fn learner_output(&self, cache: &str) -> (Option<i32>, String) {
        let o = bin()
            .args(self.learner_args(cache))
            .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .output()
            .unwrap();
        let errors: Vec<String> = stderr(&o)
            .lines()
            .filter(|l| !l.contains(" INFO ") && !l.contains(" WARN "))
            .map(|l| format!("{l}\n"))
            .collect();
        (o.status.code(), errors.concat())
    }

    fn actor(&self, i: usize, log: &str) -> Child {
        let id = format!("a{}", i + 1);
        let cache = self.tmp.path().join(format!("cache-{id}"));
        let args = [
            "train",
            "--role",
            "actor",
            "--run",
            &self.url,
            "--actor-id",
            &id,
            "--cache",
            cache.to_str().unwrap(),
            "--quiet",
            "--poll-ms",
            "200",
        ];
        spawn(&args, &self.actor_env[i], &self.log(log))
    }

    fn store(&self) -> Store {
        Store::open_with(
            Location::parse(&self.url).unwrap(),
            Retry::default(),
            &self.env,
        )
        .unwrap()
    }

    fn status(&self, audit: bool) -> std::process::Output {
        let mut c = bin();
        c.args(["status", "--run", &self.url]);
        if audit {
            c.arg("--audit");
        }
        c.envs(self.env.iter().map(|(k, v)| (k, v)))
            .output()
            .unwrap()
    }
}

/// The peak resident memory of `pid` (VmHWM), polled until it ends, in KiB.
fn watch_memory(pid: u32) -> Arc<std::sync::atomic::AtomicU64> {
    let peak = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let seen = Arc::clone(&peak);
    std::thread::spawn(move || {
        while let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/status")) {
            let kib = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
            match kib {
                Some(k) => seen.fetch_max(k, Ordering::SeqCst),
                None => break,
            };
            std::thread::sleep(Duration::from_millis(50));
        }
    });
    peak
}

/// Says when a chaos run reached `what`.
fn phase(what: &str) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    eprintln!("chaos {now:.1}: {what}");
}

/// The first key trained on, from the learner's records.
fn first_consumed(store: &Store) -> String {
    let record: ConsumedRecord =
        serde_json::from_slice(&store.get(&RunLayout::consumed(1)).unwrap().unwrap()).unwrap();
    record.chunks[0].key.clone()
}

#[test]
fn chaos_on_s3_one_learner_three_actors_and_everything_done_to_them() {
    let Some(bin) = moto_server() else {
        return;
    };
    let moto = Moto::start(&bin);
    let clean = Proxy::start(moto.port, false);
    let slow: Vec<Proxy> = (0..3).map(|_| Proxy::start(moto.port, true)).collect();
    let chaos = Chaos::new(
        format!("s3://{BUCKET}/chaos"),
        s3_env(clean.port),
        slow.iter().map(|p| s3_env(p.port)).collect(),
    );
    let t0 = Instant::now();
    let freeze = || {
        clean.down();
        slow.iter().for_each(Proxy::down);
        std::thread::sleep(Duration::from_secs(6));
        clean.up();
        slow.iter().for_each(Proxy::up);
    };
    let in_flight = run_chaos(&chaos, &|| slow[0].wait_for_chunk_put(2 * MINUTE), &freeze);
    let key = in_flight
        .split_once("/chaos/")
        .map(|(_, k)| k.to_owned())
        .unwrap();
    eprintln!("chaos on moto: {:.0} s", t0.elapsed().as_secs_f64());
    // The upload in flight when its actor was killed landed after the kill, under its own
    // key, and is in the books like any other chunk.
    let store = chaos.store();
    assert!(
        store.get(&key).unwrap().is_some(),
        "the killed actor's upload in flight ({key}) did not land"
    );
    wiped_store_is_an_error(&chaos, &|| {
        for e in store.list("").unwrap() {
            store.delete(&e.key).unwrap();
        }
    });
}

#[test]
fn chaos_on_a_directory_one_learner_three_actors_and_everything_done_to_them() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("store");
    let url = root.to_str().unwrap().to_owned();
    let chaos = Chaos::new(url, Vec::new(), vec![Vec::new(); 3]);
    let t0 = Instant::now();
    let first_upload = || {
        wait_for_line(&chaos.log("a1-1"), "uploaded ", 2 * MINUTE);
        String::new()
    };
    run_chaos(&chaos, &first_upload, &|| {});
    eprintln!("chaos on a directory: {:.0} s", t0.elapsed().as_secs_f64());
    wiped_store_is_an_error(&chaos, &|| std::fs::remove_dir_all(&root).unwrap());
}

/// A learner stopped with SIGTERM in the middle of a run gives its lease up before it
/// exits (status 143): its successor, started at once, takes the lease without waiting out
/// its two minutes, redoes the iteration under way and finishes the run with the books
/// balanced.
#[test]
fn sigterm_gives_the_learners_lease_up_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let url = tmp.path().join("store").to_str().unwrap().to_owned();
    let mut chaos = Chaos::new(url, Vec::new(), vec![Vec::new()]);
    chaos.lease_s = 120;
    let mut learner = chaos.learner("learner-1", "learner-cache");
    let mut actor = chaos.actor(0, "a1-1");
    wait_for_line(&chaos.log("learner-1"), "iteration 1:", 3 * MINUTE);
    let kill = Command::new("kill")
        .args(["-TERM", &learner.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let t0 = Instant::now();
    let status = wait_exit(
        &mut learner,
        &chaos.log("learner-1"),
        Duration::from_secs(20),
    );
    eprintln!(
        "learner-1 ended {} ms after SIGTERM",
        t0.elapsed().as_millis()
    );
    let log = read(&chaos.log("learner-1"));
    assert_eq!(status.code(), Some(143), "{log}");
    assert!(log.contains("signal 15: gave the lease up"), "{log}");
    // Refused, it would exit 75 at once and never log this.
    let mut learner = chaos.learner("learner-2", "learner-cache");
    wait_for_line(
        &chaos.log("learner-2"),
        "took the lease",
        Duration::from_secs(30),
    );
    wait_ok(&mut learner, &chaos.log("learner-2"), 5 * MINUTE);
    wait_ok(&mut actor, &chaos.log("a1-1"), 2 * MINUTE);
    books_balanced(&chaos);
}

/// The run of a chaos test: actor a1 killed once `kill_a1_when` returns (what it returns
/// is returned), hostile objects after iteration 1, the learner killed after iteration 2
/// and restarted once its lease ran out, a second learner refused, `freeze` after
/// iteration 4; then the books audited.
fn run_chaos(chaos: &Chaos, kill_a1_when: &dyn Fn() -> String, freeze: &dyn Fn()) -> String {
    let mut learner = chaos.learner("learner-1", "learner-cache");
    let peak_1 = watch_memory(learner.id());
    let mut actors: Vec<Child> = (0..3)
        .map(|i| chaos.actor(i, &format!("a{}-1", i + 1)))
        .collect();
    phase("started");
    let in_flight = kill_a1_when();
    actors[0].kill().unwrap();
    phase("a1 killed");
    actors[0].wait().unwrap();
    actors[0] = chaos.actor(0, "a1-2");
    wait_for_line(&chaos.log("learner-1"), "iteration 1:", 3 * MINUTE);
    let store = chaos.store();
    store.put("chunks/a1/99999999.brz", b"junk").unwrap();
    let copied = first_consumed(&store);
    let copy = RunLayout::actor_chunk("a2", 1, 0);
    store
        .put(&copy, &store.get(&copied).unwrap().unwrap())
        .unwrap();
    let big = RunLayout::actor_chunk("a3", 2, 0);
    store.put(&big, &vec![0u8; OVERSIZED]).unwrap();
    phase("hostile objects in place");
    wait_for_line(&chaos.log("learner-1"), "iteration 2:", 3 * MINUTE);
    learner.kill().unwrap();
    learner.wait().unwrap();
    // Restarted at once, the learner finds its predecessor's lease still held.
    let (code, err) = chaos.learner_output("learner-cache");
    assert_eq!(code, Some(75), "{err}");
    assert!(
        err.contains("the run is held by learner") && err.trim_end().lines().count() == 1,
        "{err}"
    );
    std::thread::sleep(Duration::from_secs(LEASE_S + 1));
    let mut learner = chaos.learner("learner-2", "learner-cache");
    let peak_2 = watch_memory(learner.id());
    phase("learner-2 started");
    wait_for_line(&chaos.log("learner-2"), "took the lease", MINUTE);
    // A second learner, while one runs: refused with one line naming holder and expiry.
    let (code, err) = chaos.learner_output("second-learner-cache");
    assert_eq!(code, Some(75), "{err}");
    assert!(
        err.starts_with("error: learner of ")
            && err.contains("the run is held by learner ")
            && err.contains(" until 20")
            && err.trim_end().lines().count() == 1,
        "{err}"
    );
    phase("second learner refused");
    freeze();
    phase("store back");
    wait_ok(&mut learner, &chaos.log("learner-2"), 5 * MINUTE);
    for (i, a) in actors.iter_mut().enumerate() {
        let log = if i == 0 {
            "a1-2".to_owned()
        } else {
            format!("a{}-1", i + 1)
        };
        wait_ok(a, &chaos.log(&log), 2 * MINUTE);
    }
    phase("run finished");
    check_books(chaos, &[&copied, &copy, &big]);
    for (name, peak) in [("learner-1", peak_1), ("learner-2", peak_2)] {
        let mib = peak.load(Ordering::SeqCst) / 1024;
        eprintln!("{name}: peak memory {mib} MiB");
        assert!(
            mib > 0 && mib < LEARNER_MEMORY_BOUND_MIB,
            "{name}: {mib} MiB"
        );
    }
    in_flight
}

/// `status --audit` of a finished chaos run: its output, with the books balanced (nothing
/// lost or trained twice) and every iteration done.
fn books_balanced(chaos: &Chaos) -> String {
    let o = chaos.status(true);
    let text = stdout(&o);
    eprintln!("{text}");
    assert!(o.status.success(), "{text}{}", stderr(&o));
    assert!(text.contains("books: balanced"), "{text}");
    assert!(
        text.contains("games lost: 0 chunks; trained twice: 0"),
        "{text}"
    );
    assert!(
        text.contains(&format!("iteration {CHAOS_ITERATIONS}/{CHAOS_ITERATIONS}")),
        "{text}"
    );
    text
}

/// `status --audit` after a chaos run: balanced, nothing lost or trained twice, every
/// hostile object quarantined with its reason; every upload an actor reported is in the
/// books; no secret printed.
fn check_books(chaos: &Chaos, hostile: &[&str; 3]) {
    let [copied, copy, big] = hostile;
    let text = books_balanced(chaos);
    for needle in [
        "chunks/a1/99999999.brz (4 bytes, iteration".to_owned(),
        "not a chunk key this version writes".to_owned(),
        format!("{copy} ("),
        format!("a copy of a chunk consumed in iteration 1: {copied}"),
        format!("{big} ({OVERSIZED} bytes"),
        format!("{OVERSIZED} bytes, more than the 16777216 a chunk may have"),
    ] {
        assert!(text.contains(&needle), "{needle}: {text}");
    }
    let store = chaos.store();
    let dir = RunDir::new(chaos.tmp.path().join("check"));
    for i in 0..=CHAOS_ITERATIONS {
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
    let audit = brandubh_train::status::audit(&store).unwrap();
    assert!(audit.problems.is_empty(), "{:?}", audit.problems);
    assert_eq!(audit.lost_chunks(), 0);
    assert_eq!(audit.quarantined.len(), 3, "{:?}", audit.quarantined);
    let booked: HashSet<String> = store
        .list(RunLayout::CHUNKS)
        .unwrap()
        .into_iter()
        .map(|e| e.key)
        .collect();
    let logs = ["a1-1", "a1-2", "a2-1", "a3-1"];
    for key in logs.iter().flat_map(|l| uploaded(&chaos.log(l))) {
        assert!(
            booked.contains(&key),
            "{key} reported uploaded but not in the store"
        );
    }
    let all: String = ["learner-1", "learner-2"]
        .iter()
        .chain(&logs)
        .map(|l| read(&chaos.log(l)))
        .collect();
    assert!(
        !all.contains("testing-secret") && !all.contains("panicked"),
        "{all}"
    );
}

/// After `wipe`, the learner restarted on its cache refuses with one line.
fn wiped_store_is_an_error(chaos: &Chaos, wipe: &dyn Fn()) {
    wipe();
    let (code, err) = chaos.learner_output("learner-cache");
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("holds no run (no run.json), but the cache")
            && err.contains("the store was wiped or replaced")
            && err.trim_end().lines().count() == 1,
        "{err}"
    );
    assert!(
        chaos.store().list("").unwrap().is_empty(),
        "the learner wrote to the wiped store"
    );
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
    let o = common::train_tiny(run, &["--iterations", "1"]);
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
