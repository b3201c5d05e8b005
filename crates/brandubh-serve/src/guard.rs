//! Who may ask, and how: every request passes [`check`] before a route sees it, and every
//! response leaves with the security headers of [`secure`].
//!
//! - **Host** (DNS rebinding): the `Host` header must name this server: an IP address it is
//!   reached at (the bound one; any, when bound to all addresses; loopback for loopback),
//!   `localhost` when bound to loopback or all addresses, or a name given with
//!   `--allow-host`. A page on another site whose name was rebound to 127.0.0.1 sends its
//!   own name and is refused (403).
//! - **Origin** (cross-site requests): a request that changes state (any method but GET,
//!   HEAD and OPTIONS) whose `Origin` is not this server's own (`http://HOST` or
//!   `https://HOST`), or, without `Origin`, whose `Sec-Fetch-Site` says another site, is
//!   refused (403). Clients that are not browsers send neither and are let in.
//! - **Content type**: a POST carries `Content-Type: application/json` (415 otherwise), so
//!   a form or a `no-cors` fetch cannot make one; a cross-origin JSON fetch needs a
//!   preflight, and preflights from other origins are refused (403; no
//!   `Access-Control-Allow-*` header is ever sent).
//! - **Bodies**: a `Transfer-Encoding` is refused (400; hyper drops a `Content-Length`
//!   sent with it, so no request carries both past this point); a declared length over
//!   [`MAX_BODY_BYTES`] is refused unread (413); the body must arrive within
//!   [`Limits::body_timeout`] (408). Those answers close the connection.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::{Limits, MAX_BODY_BYTES};

/// The policy of every response: scripts, styles, images and requests from this server
/// only, no plugins, no framing by other pages, forms only to this server.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; \
     form-action 'self'; frame-ancestors 'none'";

/// What the checks need to know: where the server listens and which names it answers to.
#[derive(Clone, Debug)]
pub struct Guard {
    bound: SocketAddr,
    /// `--allow-host` names, lower case, without a trailing dot.
    allowed: Vec<String>,
    body_timeout: Duration,
}

impl Guard {
    /// The guard of a server bound to `bound` that also answers to the names `allowed`.
    #[must_use]
    pub fn new(bound: SocketAddr, allowed: &[String], limits: &Limits) -> Guard {
        Guard {
            bound,
            allowed: allowed.iter().map(|n| normalize(n)).collect(),
            body_timeout: limits.body_timeout,
        }
    }

    /// Whether `host` (a `Host` header's value) names this server.
    #[must_use]
    pub fn host_allowed(&self, host: &str) -> bool {
        let Some(name) = host_name(host) else {
            return false;
        };
        if self.allowed.contains(&name) {
            return true;
        }
        let bound = self.bound.ip();
        let local = bound.is_loopback() || bound.is_unspecified();
        match name.parse::<IpAddr>() {
            Ok(ip) => {
                bound.is_unspecified() || ip == bound || (ip.is_loopback() && bound.is_loopback())
            }
            Err(_) => name == "localhost" && local,
        }
    }

    /// The names a request may use, for the error message.
    fn names(&self) -> String {
        let mut names = vec![self.bound.to_string()];
        if self.bound.ip().is_loopback() || self.bound.ip().is_unspecified() {
            names.push("localhost".into());
        }
        if self.bound.ip().is_unspecified() {
            names.push("any of the machine's IP addresses".into());
        }
        names.extend(self.allowed.iter().cloned());
        names.join(", ")
    }
}

/// The host part of a `Host` value (`name`, `name:port`, `[v6]:port`), lower case, without
/// a trailing dot; `None` when malformed.
fn host_name(host: &str) -> Option<String> {
    let host = host.trim();
    let name = if let Some(rest) = host.strip_prefix('[') {
        let (ip, after) = rest.split_once(']')?;
        if !(after.is_empty() || valid_port(after.strip_prefix(':')?)) {
            return None;
        }
        ip
    } else {
        match host.rsplit_once(':') {
            Some((name, port)) if valid_port(port) => name,
            Some(_) => return None,
            None => host,
        }
    };
    let ok = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b':'));
    ok.then(|| normalize(name))
}

/// Whether `name` may be given as an `--allow-host` name: letters, digits, `-`, `_` and
/// `.`, at most 253 characters.
#[must_use]
pub fn valid_name(name: &str) -> bool {
    let name = name.trim();
    !name.is_empty()
        && name.len() <= 253
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'))
}

fn valid_port(p: &str) -> bool {
    !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit())
}

fn normalize(name: &str) -> String {
    name.trim().trim_end_matches('.').to_ascii_lowercase()
}

fn header_str<'a>(headers: &'a HeaderMap, name: &header::HeaderName) -> Option<&'a str> {
    headers.get(name).map(|v| v.to_str().unwrap_or("\u{fffd}"))
}

/// What the guard answers instead of the route.
#[derive(Debug)]
enum Refusal {
    /// A refused request; `close`: the connection must close (a body left unread).
    Refused(ApiError, bool),
    /// An OPTIONS request from this server's own origin.
    Preflight,
}

/// A refused request: its status and message, and whether the connection must close.
fn refuse(status: StatusCode, message: impl AsRef<str>, close: bool) -> Refusal {
    Refusal::Refused(ApiError::new(status, message), close)
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        match self {
            Refusal::Refused(error, close) => {
                let mut response = error.into_response();
                if close {
                    response
                        .headers_mut()
                        .insert(header::CONNECTION, HeaderValue::from_static("close"));
                }
                response
            }
            Refusal::Preflight => preflight(),
        }
    }
}

/// The middleware: the checks of the module documentation, then the route, then the
/// security headers.
pub async fn check(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    let mut response = match admit(&guard, request).await {
        Ok(request) => next.run(request).await,
        Err(refused) => refused.into_response(),
    };
    secure(response.headers_mut());
    response
}

/// The request with its body read, or the refusal.
async fn admit(guard: &Guard, request: Request) -> Result<Request, Refusal> {
    let (parts, body) = request.into_parts();
    let headers = &parts.headers;
    let Some(host) = header_str(headers, &header::HOST) else {
        return Err(refuse(
            StatusCode::BAD_REQUEST,
            "the request has no Host header",
            false,
        ));
    };
    if !guard.host_allowed(host) {
        return Err(refuse(
            StatusCode::FORBIDDEN,
            format!(
                "Host {:?} is not this server's name: it answers to {} (start it with \
                 --allow-host NAME to add a name)",
                brandubh_fs::one_line(&host.chars().take(80).collect::<String>()),
                guard.names()
            ),
            false,
        ));
    }
    check_origin(headers, &parts.method, host)?;
    if parts.method == Method::OPTIONS {
        return Err(Refusal::Preflight);
    }
    if parts.method == Method::POST || parts.method == Method::PUT || parts.method == Method::PATCH
    {
        check_json(headers)?;
    }
    if headers.contains_key(header::TRANSFER_ENCODING) {
        return Err(refuse(
            StatusCode::BAD_REQUEST,
            "Transfer-Encoding is not accepted (nor with Content-Length): send the body with \
             Content-Length alone",
            true,
        ));
    }
    let declared = header_str(headers, &header::CONTENT_LENGTH)
        .map_or(Some(0), |v| v.trim().parse::<u64>().ok());
    match declared {
        Some(n) if n > MAX_BODY_BYTES as u64 => {
            return Err(refuse(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("request body too large: at most {MAX_BODY_BYTES} bytes"),
                true,
            ));
        }
        Some(0) => return Ok(Request::from_parts(parts, Body::empty())),
        Some(_) => {}
        None => {
            return Err(refuse(StatusCode::BAD_REQUEST, "bad Content-Length", true));
        }
    }
    let read = axum::body::to_bytes(body, MAX_BODY_BYTES);
    match tokio::time::timeout(guard.body_timeout, read).await {
        Ok(Ok(bytes)) => Ok(Request::from_parts(parts, Body::from(bytes))),
        Ok(Err(e)) => Err(refuse(
            StatusCode::BAD_REQUEST,
            format!("reading the request body: {e}"),
            true,
        )),
        Err(_) => Err(refuse(
            StatusCode::REQUEST_TIMEOUT,
            format!(
                "the request body did not arrive within {} s",
                guard.body_timeout.as_secs_f64()
            ),
            true,
        )),
    }
}

/// Refuses a request that changes state from another origin (see the module
/// documentation); preflights (OPTIONS) are judged the same way.
fn check_origin(headers: &HeaderMap, method: &Method, host: &str) -> Result<(), Refusal> {
    if matches!(*method, Method::GET | Method::HEAD) {
        return Ok(());
    }
    if let Some(origin) = header_str(headers, &header::ORIGIN) {
        let origin = origin.trim().to_ascii_lowercase();
        let host = host.trim().to_ascii_lowercase();
        if origin == format!("http://{host}") || origin == format!("https://{host}") {
            return Ok(());
        }
        return Err(refuse(
            StatusCode::FORBIDDEN,
            format!(
                "cross-origin request refused: Origin {:?} is not this server's (http://{host})",
                brandubh_fs::one_line(&origin.chars().take(80).collect::<String>())
            ),
            true,
        ));
    }
    let site = headers
        .get("sec-fetch-site")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("none");
    if site == "same-origin" || site == "none" {
        Ok(())
    } else {
        Err(refuse(
            StatusCode::FORBIDDEN,
            format!(
                "cross-origin request refused: the browser says it comes from another site \
                 (Sec-Fetch-Site: {})",
                brandubh_fs::one_line(site)
            ),
            true,
        ))
    }
}

/// A POST must say its body is JSON.
fn check_json(headers: &HeaderMap) -> Result<(), Refusal> {
    let kind = header_str(headers, &header::CONTENT_TYPE).unwrap_or("");
    let media = kind.split(';').next().unwrap_or("").trim();
    if media.eq_ignore_ascii_case("application/json") {
        return Ok(());
    }
    Err(refuse(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        format!(
            "a POST must have Content-Type: application/json, not {:?}",
            brandubh_fs::one_line(&kind.chars().take(80).collect::<String>())
        ),
        true,
    ))
}

/// The answer to an OPTIONS request from this server's own origin (a browser sends none:
/// same-origin requests are never preflighted): the methods, and no CORS grant.
fn preflight() -> Response {
    (
        StatusCode::NO_CONTENT,
        [(header::ALLOW, "GET, HEAD, POST, DELETE, OPTIONS")],
    )
        .into_response()
}

/// The security headers of every response: the [`CONTENT_SECURITY_POLICY`], no MIME
/// sniffing, no framing, no referrer, resources for this origin only; API answers are
/// never cached.
pub fn secure(headers: &mut HeaderMap) {
    let set = |h: &mut HeaderMap, name: &'static str, value: &'static str| {
        h.insert(name, HeaderValue::from_static(value));
    };
    set(headers, "content-security-policy", CONTENT_SECURITY_POLICY);
    set(headers, "x-content-type-options", "nosniff");
    set(headers, "x-frame-options", "DENY");
    set(headers, "referrer-policy", "no-referrer");
    set(headers, "cross-origin-resource-policy", "same-origin");
    set(headers, "cross-origin-opener-policy", "same-origin");
    let json = headers
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if json && !headers.contains_key(header::CACHE_CONTROL) {
        set(headers, "cache-control", "no-store");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard(bound: &str, allowed: &[&str]) -> Guard {
        let allowed: Vec<String> = allowed.iter().map(|s| (*s).to_owned()).collect();
        Guard::new(bound.parse().unwrap(), &allowed, &Limits::default())
    }

    #[test]
    fn a_loopback_server_answers_to_loopback_addresses_localhost_and_allowed_names() {
        let g = guard("127.0.0.1:8080", &["Tafl.Example."]);
        for ok in [
            "127.0.0.1:8080",
            "127.0.0.1",
            "127.0.0.2:9",
            "[::1]:8080",
            "localhost:8080",
            "LOCALHOST",
            "localhost.:8080",
            "tafl.example:8080",
            "tafl.example",
        ] {
            assert!(g.host_allowed(ok), "{ok}");
        }
        for bad in [
            "evil.example",
            "evil.example:8080",
            "192.168.1.5:8080",
            "localhost.evil.example",
            "127.0.0.1.nip.io:8080",
            "",
            ":8080",
            "localhost:80x",
            "[::1",
            "[::1]x",
            "a b",
        ] {
            assert!(!g.host_allowed(bad), "{bad:?}");
        }
    }

    #[test]
    fn a_server_bound_to_all_addresses_answers_to_any_ip_but_names_only_when_allowed() {
        let g = guard("0.0.0.0:8080", &[]);
        assert!(g.host_allowed("192.168.1.5:8080"));
        assert!(g.host_allowed("[fe80::1]:8080"));
        assert!(g.host_allowed("localhost:8080"));
        assert!(!g.host_allowed("mybox.lan:8080"));
        let g = guard("192.168.1.5:8080", &["mybox.lan"]);
        assert!(g.host_allowed("192.168.1.5:8080"));
        assert!(!g.host_allowed("127.0.0.1:8080"));
        assert!(!g.host_allowed("localhost:8080"));
        assert!(g.host_allowed("mybox.lan:8080"));
    }
}
