//! The web app's files (`web/`), compiled into the binary: no file is read at run time,
//! and the page loads nothing from elsewhere.

use axum::http::header;
use axum::response::IntoResponse;

/// `web/index.html`.
pub const INDEX_HTML: &str = include_str!("../../web/index.html");
/// `web/app.js`.
pub const APP_JS: &str = include_str!("../../web/app.js");
/// `web/style.css`.
pub const STYLE_CSS: &str = include_str!("../../web/style.css");

/// Headers every asset carries: its type, no caching across server versions, and a
/// content security policy that keeps the page to this server.
fn asset(content_type: &'static str, body: &'static str) -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'",
            ),
        ],
        body,
    )
}

/// `GET /`: the app's page.
pub async fn index() -> impl IntoResponse {
    asset("text/html; charset=utf-8", INDEX_HTML)
}

/// `GET /app.js`.
pub async fn app_js() -> impl IntoResponse {
    asset("text/javascript; charset=utf-8", APP_JS)
}

/// `GET /style.css`.
pub async fn style_css() -> impl IntoResponse {
    asset("text/css; charset=utf-8", STYLE_CSS)
}
