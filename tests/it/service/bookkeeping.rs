//! What every request gets on its way through (`kibitz::api::bookkeeping`): the log lines of
//! the release binary at the default level and with the access log on, the metrics of a route
//! that panics, and the request id in an internal error's log line.

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::http::Request;
use axum::routing::get as get_route;
use rustix::process::{Pid, Signal, kill_process};
use serde_json::json;

use crate::service::common::*;
use kibitz::api::{AppState, with_layers};

/// Runs the binary with `rust_log` (none: the default level), sends each of `request_ids` as a
/// `/move`, stops it with SIGTERM, and returns what it wrote to stderr.
async fn log_of_requests(rust_log: Option<&str>, request_ids: &[&str]) -> String {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    // Removed when it drops, however the test ends.
    let log_file = tempfile::Builder::new()
        .prefix("kibitz-log-")
        .tempfile()
        .unwrap();
    let log = log_file.reopen().unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_kibitz"));
    command
        .env("KIBITZ_ADDR", format!("127.0.0.1:{port}"))
        .env("KIBITZ_TABLE_MB", "1")
        .env("KIBITZ_DRAIN_MS", "0")
        .env_remove("RUST_LOG")
        .stdout(Stdio::null())
        .stderr(Stdio::from(log));
    if let Some(filter) = rust_log {
        command.env("RUST_LOG", filter);
    }
    let mut child = command.spawn().unwrap();
    let client = reqwest::Client::new();
    let url = format!("http://127.0.0.1:{port}/move");
    let deadline = Instant::now() + Duration::from_secs(20);
    while client
        .get(format!("http://127.0.0.1:{port}/readyz"))
        .send()
        .await
        .is_err()
    {
        assert!(Instant::now() < deadline, "the server did not come up");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for id in request_ids {
        let response = client
            .post(&url)
            .header("x-request-id", *id)
            .json(&json!({"game": "tictactoe", "board": ["X..", ".O.", "..."]}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
    }
    kill_process(Pid::from_child(&child), Signal::TERM).expect("SIGTERM");
    assert!(child.wait().unwrap().success());
    std::fs::read_to_string(log_file.path()).unwrap()
}

#[tokio::test]
async fn at_the_default_level_answering_requests_writes_nothing_to_the_log() {
    let ids: Vec<String> = (0..20).map(|i| format!("quiet-{i}")).collect();
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    let log = log_of_requests(None, &ids).await;
    assert!(log.contains("kibitz listening"), "{log}");
    assert!(
        !log.contains("quiet-") && !log.contains("/move"),
        "a line per request at the default level:\n{log}"
    );
}

#[tokio::test]
async fn the_access_log_at_debug_is_one_line_per_request_with_its_id_and_status() {
    let log = log_of_requests(Some("info,kibitz::access=debug"), &["seen-1", "seen-2"]).await;
    for id in ["seen-1", "seen-2"] {
        let lines: Vec<&str> = log
            .lines()
            .filter(|line| line.contains(id) && line.contains("answered"))
            .collect();
        assert_eq!(lines.len(), 1, "{id}:\n{log}");
        assert!(lines[0].contains("status=200"), "{}", lines[0]);
        assert!(lines[0].contains("uri=/move"), "{}", lines[0]);
    }
}

async fn boom() -> &'static str {
    panic!("secret cause")
}

/// The app's layers around a route that panics.
fn panicking_app(state: &AppState) -> Router {
    with_layers(
        Router::new().route("/boom", get_route(boom)),
        Arc::from(["/boom"]),
        state.clone(),
    )
}

#[tokio::test]
async fn a_route_that_panics_is_counted_as_a_500() {
    let state = state();
    let reply = send(
        panicking_app(&state),
        Request::get("/boom").body(Body::empty()).unwrap(),
    )
    .await;
    assert_eq!(reply.status, 500);
    assert!(!reply.text.contains("secret"));
    let metrics = get(&state, "/metrics").await.text;
    assert!(
        metrics.contains(r#"route="/boom",status="500"} 1"#),
        "{metrics}"
    );
}

/// A `MakeWriter` into a shared buffer, to read what was logged.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Captured {
    type Writer = Captured;

    fn make_writer(&'a self) -> Captured {
        self.clone()
    }
}

/// What the test binary logs at error level. A global subscriber, set once: a scoped one
/// (`set_default`) misses events while other tests' threads reach the same callsites, since
/// tracing caches each callsite's interest for the whole process.
fn error_log() -> &'static Captured {
    static CAPTURED: OnceLock<Captured> = OnceLock::new();
    CAPTURED.get_or_init(|| {
        let captured = Captured::default();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(captured.clone())
            .with_ansi(false)
            .with_max_level(tracing::Level::ERROR)
            .finish();
        tracing::subscriber::set_global_default(subscriber).expect("the only global subscriber");
        captured
    })
}

#[tokio::test]
async fn an_internal_error_is_logged_with_its_request_id() {
    let log = error_log();
    let reply = send(
        panicking_app(&state()),
        Request::get("/boom")
            .header("x-request-id", "blame-me-7")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(reply.status, 500);
    assert_eq!(reply.headers["x-request-id"], "blame-me-7");
    let text = String::from_utf8(log.0.lock().unwrap().clone()).unwrap();
    let line = text
        .lines()
        .find(|line| line.contains("internal error") && line.contains("blame-me-7"))
        .unwrap_or_else(|| panic!("no internal error logged with the request id:\n{text}"));
    assert!(line.contains("request_id=blame-me-7"), "{line}");
    assert!(line.contains("a handler panicked"), "{line}");
}
