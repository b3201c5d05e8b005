//! Hostile clients against a real server on 127.0.0.1, over raw TCP: forged `Host` headers
//! (DNS rebinding), requests from other origins, bodies that are not JSON, preflights, a
//! `Content-Length` with a `Transfer-Encoding`, headers and bodies sent slowly or not at
//! all, and more connections than the server takes, while a normal client is served.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests may unwrap: a panic is a failed test"
)]

mod common;

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use brandubh_serve::{Limits, Running, ServeConfig};
use common::http::{exchange, head_of};
use common::{get, tiny_agent};
use serde_json::Value;

fn server(limits: Limits, allow_hosts: &[&str]) -> Running {
    Running::start(
        ServeConfig {
            agents: vec![tiny_agent().to_path_buf()],
            runs: vec![],
            allow_hosts: allow_hosts.iter().map(|s| (*s).to_owned()).collect(),
            limits: Limits {
                min_move_ms: 1,
                default_move_ms: 5,
                ..limits
            },
        },
        "127.0.0.1:0".parse().unwrap(),
    )
    .unwrap()
}

/// A reply: status, headers, body.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    fn error(&self) -> String {
        serde_json::from_str::<Value>(&self.body).unwrap()["error"]
            .as_str()
            .unwrap_or_else(|| panic!("no error: {}", self.body))
            .to_owned()
    }
}

/// `method path` with `headers` (a `Host` naming the server's address unless given) and
/// `body` (with its Content-Length).
fn send(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Answer {
    let mut text = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        text.push_str(&format!("Host: {addr}\r\n"));
    }
    for (k, v) in headers {
        text.push_str(&format!("{k}: {v}\r\n"));
    }
    text.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    let (reply, _) = exchange(addr, text.as_bytes(), Duration::from_secs(30));
    let (status, headers) = head_of(&reply);
    let body = reply
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_owned();
    Answer {
        status,
        headers,
        body,
    }
}

const JSON: (&str, &str) = ("Content-Type", "application/json");

fn open_games(addr: SocketAddr) -> u64 {
    get(addr, "/api/info").json()["open_games"]
        .as_u64()
        .unwrap()
}

#[test]
fn requests_naming_another_host_are_refused_as_dns_rebinding() {
    let s = server(Limits::default(), &["Tafl.Example"]);
    let addr = s.addr;
    let port = addr.port();
    for (method, path, body) in [
        ("GET", "/", ""),
        ("GET", "/api/info", ""),
        ("POST", "/api/games", "{}"),
    ] {
        for host in [
            "evil.example",
            &format!("evil.example:{port}"),
            "127.0.0.1.evil.example",
        ] {
            let r = send(addr, method, path, &[("Host", host), JSON], body);
            assert_eq!(r.status, 403, "{method} {path} Host {host}: {}", r.body);
            assert!(
                r.error()
                    .starts_with(&format!("Host \"{host}\" is not this server's name")),
                "{}",
                r.error()
            );
        }
    }
    let localhost = format!("localhost:{port}");
    for host in [
        addr.to_string().as_str(),
        &localhost,
        "tafl.example",
        "TAFL.example:1",
    ] {
        assert_eq!(
            send(addr, "GET", "/api/info", &[("Host", host)], "").status,
            200,
            "{host}"
        );
    }
    assert_eq!(open_games(addr), 0);
}

/// A refused POST: status, headers, body, the error's start.
type Refused<'a> = (u16, Vec<(&'a str, &'a str)>, &'a str, &'a str);

#[test]
fn cross_origin_and_non_json_posts_are_refused_and_open_no_game() {
    let s = server(Limits::default(), &[]);
    let addr = s.addr;
    let own = format!("http://{addr}");
    let evil = ("Origin", "http://evil.example");
    let refused: Vec<Refused<'_>> = vec![
        (
            403,
            vec![evil, JSON],
            "{}",
            "cross-origin request refused: Origin \"http://evil.example\"",
        ),
        (
            403,
            vec![("Origin", "null"), JSON],
            "{}",
            "cross-origin request refused: Origin \"null\"",
        ),
        // Another port of the same machine is another origin.
        (
            403,
            vec![("Origin", "http://127.0.0.1:1"), JSON],
            "{}",
            "cross-origin request refused",
        ),
        (
            403,
            vec![("Sec-Fetch-Site", "cross-site"), JSON],
            "{}",
            "cross-origin request refused: the browser says",
        ),
        (
            415,
            vec![("Content-Type", "text/plain")],
            "{}",
            "a POST must have Content-Type: application/json, not \"text/plain\"",
        ),
        (
            415,
            vec![("Content-Type", "application/x-www-form-urlencoded")],
            "a=1",
            "a POST must have Content-Type",
        ),
        (
            415,
            vec![("Content-Type", "multipart/form-data; boundary=x")],
            "",
            "a POST must have Content-Type",
        ),
        (
            415,
            vec![],
            "",
            "a POST must have Content-Type: application/json, not \"\"",
        ),
        (
            415,
            vec![("Origin", own.as_str())],
            "",
            "a POST must have Content-Type",
        ),
    ];
    for (status, headers, body, message) in refused {
        let r = send(addr, "POST", "/api/games", &headers, body);
        assert_eq!(r.status, status, "{headers:?}: {}", r.body);
        assert!(r.error().starts_with(message), "{headers:?}: {}", r.error());
    }
    assert_eq!(open_games(addr), 0, "a refused request opened a game");
}

#[test]
fn another_origin_cannot_drive_a_game_and_its_preflights_get_no_grant() {
    let s = server(Limits::default(), &[]);
    let addr = s.addr;
    let own = format!("http://{addr}");
    // The page's own requests: its Origin, JSON.
    let r = send(
        addr,
        "POST",
        "/api/games",
        &[("Origin", &own), JSON, ("Sec-Fetch-Site", "same-origin")],
        "{}",
    );
    assert_eq!(r.status, 201, "{}", r.body);
    let id = serde_json::from_str::<Value>(&r.body).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let game = format!("/api/games/{id}");
    // Another origin can neither play in it nor close it.
    let evil = ("Origin", "http://evil.example");
    let r = send(
        addr,
        "POST",
        &format!("{game}/move"),
        &[evil, JSON],
        r#"{"move": "d5-c5"}"#,
    );
    assert_eq!(r.status, 403);
    let r = send(addr, "DELETE", &game, &[evil], "");
    assert_eq!(r.status, 403);
    assert_eq!(get(addr, &game).json()["ply"], 0);

    // Preflights: another origin's is refused with no CORS grant; the server's own is told
    // the methods.
    let preflight = [
        evil,
        ("Access-Control-Request-Method", "POST"),
        ("Access-Control-Request-Headers", "content-type"),
    ];
    let r = send(addr, "OPTIONS", "/api/games", &preflight, "");
    assert_eq!(r.status, 403, "{}", r.body);
    assert!(
        r.headers
            .iter()
            .all(|(k, _)| !k.starts_with("access-control-")),
        "{:?}",
        r.headers
    );
    let r = send(addr, "OPTIONS", "/api/games", &[("Origin", &own)], "");
    assert_eq!(r.status, 204);
    assert_eq!(r.header("allow"), Some("GET, HEAD, POST, DELETE, OPTIONS"));
    assert!(
        r.headers
            .iter()
            .all(|(k, _)| !k.starts_with("access-control-"))
    );
    // GETs from anywhere are answered, but never with a CORS grant: another origin's
    // script cannot read them.
    let r = send(addr, "GET", &game, &[evil], "");
    assert_eq!(r.status, 200);
    assert!(
        r.headers
            .iter()
            .all(|(k, _)| !k.starts_with("access-control-"))
    );
    assert_eq!(open_games(addr), 1);
}

#[test]
fn every_answer_carries_the_security_headers() {
    let s = server(Limits::default(), &[]);
    let addr = s.addr;
    for (method, path, headers) in [
        ("GET", "/", vec![]),
        ("GET", "/run", vec![]),
        ("GET", "/assets/play.js", vec![]),
        ("GET", "/api/info", vec![]),
        ("GET", "/api/nothing", vec![]),
        ("GET", "/", vec![("Host", "evil.example")]),
        ("POST", "/api/games", vec![("Content-Type", "text/plain")]),
    ] {
        let r = send(addr, method, path, &headers, "");
        let csp = r
            .header("content-security-policy")
            .unwrap_or_else(|| panic!("{path}: no CSP"));
        for part in [
            "default-src 'none'",
            "script-src 'self'",
            "frame-ancestors 'none'",
            "connect-src 'self'",
        ] {
            assert!(csp.contains(part), "{path}: {csp}");
        }
        assert_eq!(
            r.header("x-content-type-options"),
            Some("nosniff"),
            "{path}"
        );
        assert_eq!(r.header("x-frame-options"), Some("DENY"), "{path}");
        assert_eq!(
            r.header("cross-origin-resource-policy"),
            Some("same-origin"),
            "{path}"
        );
        if r.header("content-type")
            .is_some_and(|t| t.starts_with("application/json"))
        {
            assert_eq!(r.header("cache-control"), Some("no-store"), "{path}");
        }
    }
}

#[test]
fn a_content_length_with_a_transfer_encoding_is_refused_and_the_connection_closed() {
    let s = server(Limits::default(), &[]);
    let addr = s.addr;
    let body = "2\r\n{}\r\n0\r\n\r\n";
    for (first, second) in [
        ("Content-Length: 2", "Transfer-Encoding: chunked"),
        ("Transfer-Encoding: chunked", "Content-Length: 2"),
        ("Transfer-Encoding: chunked", "X-Nothing: 1"),
    ] {
        // Keep-alive asked for: the server must close all the same, so that nothing after
        // the refused head is read as a request.
        let request = format!(
            "POST /api/games HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             {first}\r\n{second}\r\n\r\n{body}GET /api/info HTTP/1.1\r\nHost: {addr}\r\n\r\n"
        );
        let t0 = Instant::now();
        let (reply, closed) = exchange(addr, request.as_bytes(), Duration::from_secs(20));
        let (status, _) = head_of(&reply);
        assert_eq!(status, 400, "{first} + {second}: {reply}");
        assert!(
            reply.contains("Transfer-Encoding is not accepted"),
            "{reply}"
        );
        assert!(
            closed && t0.elapsed() < Duration::from_secs(5),
            "{first}: not closed"
        );
        assert_eq!(
            reply.matches("HTTP/1.1 ").count(),
            1,
            "a second request was answered: {reply}"
        );
    }
    assert_eq!(open_games(addr), 0);
}

/// Opens a connection and sends `bytes`, then nothing more.
fn stall(addr: SocketAddr, bytes: &[u8]) -> TcpStream {
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(bytes).unwrap();
    s
}

/// Seconds until the server closes `s` (or `None` after `limit`), and what it sent.
fn closed_after(mut s: TcpStream, limit: Duration) -> (Option<f64>, String) {
    use std::io::Read;
    let t0 = Instant::now();
    s.set_read_timeout(Some(limit)).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => {
                return (
                    Some(t0.elapsed().as_secs_f64()),
                    String::from_utf8_lossy(&got).into(),
                );
            }
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                return (
                    Some(t0.elapsed().as_secs_f64()),
                    String::from_utf8_lossy(&got).into(),
                );
            }
            Err(_) => return (None, String::from_utf8_lossy(&got).into()),
        }
    }
}

#[test]
fn half_a_header_or_a_body_is_cut_off_in_time_while_other_clients_are_served() {
    // The default limits: 10 s for a header, 10 s for a body.
    let s = server(Limits::default(), &[]);
    let addr = s.addr;
    let half = stall(
        addr,
        format!("GET /api/info HTTP/1.1\r\nHost: {addr}\r\nAcc").as_bytes(),
    );
    let silent = stall(addr, b"");
    let body = stall(
        addr,
        format!(
            "POST /api/games HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Content-Length: 100\r\n\r\n{{\"side\":"
        )
        .as_bytes(),
    );
    let waits: Vec<_> = [half, silent, body]
        .into_iter()
        .map(|s| std::thread::spawn(move || closed_after(s, Duration::from_secs(40))))
        .collect();
    // Meanwhile a normal client plays.
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(3) {
        let g = common::post(addr, "/api/games", &serde_json::json!({}));
        assert_eq!(g.status, 201, "{}", g.body);
        let id = g.json()["id"].as_str().unwrap().to_owned();
        assert_eq!(
            common::request_raw(addr, "DELETE", &format!("/api/games/{id}"), b"").status,
            200
        );
    }
    let results: Vec<_> = waits.into_iter().map(|w| w.join().unwrap()).collect();
    for (what, (after, _)) in ["half a header", "silence"].iter().zip(&results) {
        let after = after.unwrap_or_else(|| panic!("{what}: still open after 40 s"));
        assert!(
            (9.0..=12.0).contains(&after),
            "{what}: closed after {after:.1} s"
        );
    }
    let (after, reply) = &results[2];
    let after = after.expect("a slow body: still open after 40 s");
    assert!(
        (9.0..=12.0).contains(&after),
        "a slow body: closed after {after:.1} s"
    );
    assert!(reply.starts_with("HTTP/1.1 408"), "{reply}");
    assert!(
        reply.contains("the request body did not arrive within 10 s"),
        "{reply}"
    );
}

#[test]
fn connections_beyond_the_cap_close_the_oldest_idle_ones_so_a_normal_client_gets_in() {
    let s = server(
        Limits {
            max_connections: 8,
            ..Limits::default()
        },
        &[],
    );
    let addr = s.addr;
    // Forty connections that never finish a header: far more than the cap.
    let idle: Vec<TcpStream> = (0..40)
        .map(|i| {
            stall(
                addr,
                if i % 2 == 0 {
                    b"GET / HTTP/1.1\r\n"
                } else {
                    b""
                },
            )
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    for _ in 0..5 {
        let t0 = Instant::now();
        let r = common::http::try_request(addr, "GET", "/api/info", b"").unwrap();
        assert_eq!(r.status, 200);
        assert!(
            t0.elapsed() < Duration::from_secs(3),
            "served after {:?}",
            t0.elapsed()
        );
    }
    // The oldest were closed to make room: at most the cap are still open.
    let open = idle
        .into_iter()
        .map(|s| closed_after(s, Duration::from_millis(200)).0.is_none())
        .filter(|&open| open)
        .count();
    assert!(
        open <= 8,
        "{open} idle connections still open with a cap of 8"
    );
}
