//! How long a store operation is retried, and which errors can pass.

use std::time::Duration;

/// Backoff for store errors that can pass: `first`, doubling up to `max`, for at most
/// `give_up_after` in all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retry {
    /// The first wait.
    pub first: Duration,
    /// The longest wait.
    pub max: Duration,
    /// After this long the operation fails.
    pub give_up_after: Duration,
}

impl Default for Retry {
    /// 1 s, 2 s, 4 s, … 30 s, for up to 30 minutes: a restarted server or a network cut
    /// of that long is ridden out; a wrong endpoint says so every few seconds.
    fn default() -> Retry {
        Retry {
            first: Duration::from_secs(1),
            max: Duration::from_secs(30),
            give_up_after: Duration::from_secs(30 * 60),
        }
    }
}

impl Retry {
    /// The wait before retry `attempt` (0: the first retry).
    #[must_use]
    pub fn delay(&self, attempt: u32) -> Duration {
        let factor = 1u32 << attempt.min(16);
        self.first.saturating_mul(factor).min(self.max)
    }
}

/// Whether `error` can pass with time: the connection, a timeout or the server's own
/// trouble (5xx, 429), not an answer about the request (not found, denied, bad input).
pub(crate) fn transient(error: &object_store::Error) -> bool {
    match error {
        object_store::Error::Generic { .. } | object_store::Error::JoinError { .. } => {}
        _ => return false,
    }
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(s) = source {
        if let Some(http) = s.downcast_ref::<object_store::client::HttpError>() {
            use object_store::client::HttpErrorKind as H;
            // `Unknown` covers refusals before sending (a bad URL, http without
            // AWS_ALLOW_HTTP): retrying them cannot help.
            return matches!(
                http.kind(),
                H::Connect | H::Request | H::Timeout | H::Interrupted
            );
        }
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind as K;
            return matches!(
                io.kind(),
                K::ConnectionRefused
                    | K::ConnectionReset
                    | K::ConnectionAborted
                    | K::TimedOut
                    | K::Interrupted
                    | K::BrokenPipe
                    | K::UnexpectedEof
            );
        }
        source = s.source();
    }
    // A server's status arrives as text only: retry its own trouble, not a refusal.
    let text = error.to_string();
    ["status code: 5", "status code: 429"]
        .iter()
        .any(|needle| text.contains(needle))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_maximum() {
        let r = Retry::default();
        let secs: Vec<u64> = (0..7).map(|a| r.delay(a).as_secs()).collect();
        assert_eq!(secs, [1, 2, 4, 8, 16, 30, 30]);
        assert_eq!(r.delay(u32::MAX).as_secs(), 30);
    }

    #[test]
    fn answers_about_the_request_are_not_retried() {
        let not_found = object_store::Error::NotFound {
            path: "x".into(),
            source: "gone".into(),
        };
        assert!(!transient(&not_found));
        let server = object_store::Error::Generic {
            store: "S3",
            source: "Server returned non-2xx status code: 503 Service Unavailable".into(),
        };
        assert!(transient(&server));
        let denied = object_store::Error::Generic {
            store: "S3",
            source: "Server returned non-2xx status code: 403 Forbidden".into(),
        };
        assert!(!transient(&denied));
    }
}
