//! The pages and their assets, embedded in the binary (no CDN, no build step): plain HTML,
//! CSS and JavaScript; the board and the charts are SVG drawn by the scripts.

use axum::extract::Path;
use axum::http::header;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;

/// Every asset by name: (name, content type, bytes). A request names a key of this table,
/// never a file.
const ASSETS: &[(&str, &str, &[u8])] = &[
    (
        "style.css",
        "text/css; charset=utf-8",
        include_bytes!("../assets/style.css"),
    ),
    (
        "common.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../assets/common.js"),
    ),
    (
        "board.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../assets/board.js"),
    ),
    (
        "play.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../assets/play.js"),
    ),
    (
        "charts.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../assets/charts.js"),
    ),
    (
        "run.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../assets/run.js"),
    ),
];

const PLAY_HTML: &str = include_str!("../assets/play.html");
const RUN_HTML: &str = include_str!("../assets/run.html");

fn html(text: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        text,
    )
        .into_response()
}

/// `GET /`: the Play page.
pub async fn play_page() -> Response {
    html(PLAY_HTML)
}

/// `GET /run`: the Run page.
pub async fn run_page() -> Response {
    html(RUN_HTML)
}

/// `GET /assets/{name}`.
pub async fn asset(Path(name): Path<String>) -> Result<Response, ApiError> {
    let (_, kind, bytes) = ASSETS
        .iter()
        .find(|(n, _, _)| *n == name)
        .ok_or_else(|| ApiError::not_found("no such asset"))?;
    Ok((
        [
            (header::CONTENT_TYPE, *kind),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        *bytes,
    )
        .into_response())
}
