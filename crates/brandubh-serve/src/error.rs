//! [`ApiError`]: every failed request, answered as JSON `{"error": "..."}` with a status
//! code and a one-line message.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// A request that failed: the status code and a one-line message for the person at the
/// browser.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{status}: {message}")]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// What went wrong, in words (one line).
    pub message: String,
}

impl ApiError {
    /// An error with `status` and `message` (made one line, at most 300 characters).
    pub fn new(status: StatusCode, message: impl AsRef<str>) -> ApiError {
        ApiError {
            status,
            message: brandubh_fs::one_line(message.as_ref()),
        }
    }

    /// 400: the request is malformed or names something impossible.
    pub fn bad_request(message: impl AsRef<str>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }

    /// 404: no such game, agent, run or page.
    pub fn not_found(message: impl AsRef<str>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, message)
    }

    /// 409: the request does not fit the game's state (not your turn, game over, …).
    pub fn conflict(message: impl AsRef<str>) -> ApiError {
        ApiError::new(StatusCode::CONFLICT, message)
    }

    /// 503: a limit is reached (too many games, every search slot busy).
    pub fn busy(message: impl AsRef<str>) -> ApiError {
        ApiError::new(StatusCode::SERVICE_UNAVAILABLE, message)
    }

    /// 500: the server failed (a file that no longer reads, a search that failed).
    pub fn internal(message: impl AsRef<str>) -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({ "error": self.message });
        (self.status, axum::Json(body)).into_response()
    }
}
