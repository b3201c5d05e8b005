//! A minimal HTTP/1.1 client over `std::net::TcpStream`, one request per connection
//! (`Connection: close`): enough for the API tests and the load test, no dependency.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use serde_json::Value;

/// A response: status and body.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub content_type: String,
    pub body: String,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", self.body))
    }

    /// The `error` field of a JSON error.
    pub fn error(&self) -> String {
        assert!(
            self.content_type.starts_with("application/json"),
            "error without JSON: {self:?}"
        );
        self.json()["error"]
            .as_str()
            .unwrap_or_else(|| panic!("no error field: {:?}", self.body))
            .to_owned()
    }
}

/// Sends `method path` with the raw `body` (as JSON content) and reads the whole reply.
pub fn request_raw(addr: SocketAddr, method: &str, path: &str, body: &[u8]) -> Reply {
    try_request(addr, method, path, body).unwrap_or_else(|e| panic!("{method} {path}: {e}"))
}

/// [`request_raw`] with transport errors returned.
pub fn try_request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: &[u8],
) -> Result<Reply, String> {
    let mut s = TcpStream::connect(addr).map_err(|e| format!("connect: {e}"))?;
    s.set_read_timeout(Some(Duration::from_secs(120)))
        .map_err(|e| e.to_string())?;
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes())
        .map_err(|e| format!("write: {e}"))?;
    // A server may answer (413) and close before taking the whole body.
    let _ = s.write_all(body);
    let mut raw = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            // A reset after the whole reply arrived (the server closed with body unread).
            Err(_) if !raw.is_empty() => break,
            Err(e) => return Err(format!("read: {e}")),
        }
    }
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| format!("no HTTP reply: {text:?}"))?;
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("no status: {head:?}"))?;
    if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        return Err("chunked reply".into());
    }
    let content_type = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-type:")
                .map(|v| v.trim().to_owned())
        })
        .unwrap_or_default();
    Ok(Reply {
        status,
        content_type,
        body: body.to_owned(),
    })
}

pub fn get(addr: SocketAddr, path: &str) -> Reply {
    request_raw(addr, "GET", path, b"")
}

pub fn post(addr: SocketAddr, path: &str, body: &Value) -> Reply {
    request_raw(addr, "POST", path, body.to_string().as_bytes())
}

/// Sends `request` as raw bytes and reads until the server closes the connection or
/// `wait` passes; returns what came back and whether the server closed it.
pub fn exchange(addr: SocketAddr, request: &[u8], wait: Duration) -> (String, bool) {
    let mut s = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect: {e}"));
    s.set_read_timeout(Some(wait)).unwrap();
    s.write_all(request).unwrap();
    let mut raw = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    let closed = loop {
        match s.read(&mut buf) {
            Ok(0) => break true,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break true,
            Err(_) => break false,
        }
    };
    (String::from_utf8_lossy(&raw).into_owned(), closed)
}

/// The status code and the headers (names lower case) of a raw reply.
pub fn head_of(reply: &str) -> (u16, Vec<(String, String)>) {
    let head = reply.split("\r\n\r\n").next().unwrap_or("");
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    (status, headers)
}
