//! `brandubh serve` through the binary: it prints the URL, says it is bound to loopback,
//! answers on it; a bad agent file stops it with a one-line error.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests may unwrap: a panic is a failed test"
)]

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::Stdio;

use brandubh_search::SearchSettings;
use common::{bin, save_tiny_agent, temp_dir};

#[test]
fn serve_prints_its_loopback_url_and_answers_there() {
    let tmp = temp_dir();
    let agent = tmp.path().join("tiny.agent");
    save_tiny_agent(&agent, 3, SearchSettings::default());
    let mut child = bin()
        .args([
            "serve",
            "--agent",
            agent.to_str().unwrap(),
            "--addr",
            "127.0.0.1:0",
        ])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let result = std::panic::catch_unwind(|| {
        assert!(
            line.starts_with("brandubh serve: open http://127.0.0.1:"),
            "{line}"
        );
        assert!(
            line.contains("bound to loopback: only this machine can connect"),
            "{line}"
        );
        let addr = line
            .trim_start_matches("brandubh serve: open http://")
            .split('/')
            .next()
            .unwrap()
            .to_owned();
        let mut s = TcpStream::connect(&addr).unwrap();
        write!(
            s,
            "GET /api/info HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut reply = String::new();
        s.read_to_string(&mut reply).unwrap();
        assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
        assert!(reply.contains(r#""name":"tiny""#), "{reply}");
    });
    let _ = child.kill();
    let _ = child.wait();
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
}

#[test]
fn serve_with_a_bad_agent_file_fails_with_one_line() {
    let tmp = temp_dir();
    let bad = tmp.path().join("bad.agent");
    std::fs::write(&bad, b"nope").unwrap();
    let out = bin()
        .args([
            "serve",
            "--agent",
            bad.to_str().unwrap(),
            "--addr",
            "127.0.0.1:0",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: ") && err.contains("bad.agent"),
        "{err}"
    );
}
