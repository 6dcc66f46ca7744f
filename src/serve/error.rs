//! [`ApiError`]: every failure of the API as an HTTP status and a JSON body
//! `{"error": "…"}` naming the problem.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;

/// A failed request: a status (4xx for anything the client sent, 5xx only for faults of
/// the server itself) and a message naming the problem.
#[derive(Debug)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// What was wrong, for a person.
    pub message: String,
}

impl ApiError {
    /// 400: the request is malformed or asks for something impossible.
    pub fn bad(message: impl Into<String>) -> ApiError {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
        }
    }

    /// 404: the named thing (run, game, file) does not exist.
    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError {
            status: StatusCode::NOT_FOUND,
            message: message.into(),
        }
    }

    /// 403: a path outside the served directories.
    pub fn forbidden(message: impl Into<String>) -> ApiError {
        ApiError {
            status: StatusCode::FORBIDDEN,
            message: message.into(),
        }
    }

    /// 500: a fault of the server (a search that panicked, a run file it cannot read).
    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// The JSON body of an error response.
pub fn error_body(message: &str) -> serde_json::Value {
    serde_json::json!({ "error": message })
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(error_body(&self.message))).into_response()
    }
}

/// The result of an API handler.
pub type ApiResult<T> = Result<T, ApiError>;

/// `s` cut to its first 120 characters (with `…`), for echoing client text in messages.
pub fn shorten(s: &str) -> String {
    if s.chars().count() <= 120 {
        s.to_string()
    } else {
        s.chars().take(120).collect::<String>() + "…"
    }
}
