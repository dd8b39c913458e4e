//! SIGTERM with a batch's event stream open, over a real socket to the release binary, with
//! and without Redis: the stream ends with a last event (`error`, 503: the server is shutting
//! down) when the drain ends, and the process exits within the documented 26 s, well before
//! the shutdown timeout it used to wait out.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process};
use serde_json::json;

use super::batch_client::*;
use crate::redis_support::{Process, Redis, free_port};
use crate::sse_client::{SseEvent, get_events};

/// The binary with the default drain and shutdown timeout, one worker, on a free port.
async fn start(redis_url: Option<&str>) -> (Process, String) {
    let port = free_port();
    let mut command = Command::new(env!("CARGO_BIN_EXE_kibitz"));
    command
        .env("KIBITZ_ADDR", format!("127.0.0.1:{port}"))
        .env("KIBITZ_TABLE_MB", "4")
        .env("KIBITZ_CACHE_MB", "2")
        .env("KIBITZ_WORKERS", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if let Some(url) = redis_url {
        command.env("KIBITZ_REDIS_URL", url);
    }
    let process = Process(command.spawn().expect("the kibitz binary"));
    let base = format!("http://127.0.0.1:{port}");
    for _ in 0..400 {
        if let Ok(response) = reqwest::get(format!("{base}/readyz")).await
            && response.status() == 200
        {
            return (process, base);
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("kibitz did not become ready");
}

/// Opens a stream on an unfinished batch, sends SIGTERM, and checks the stream's end and
/// the exit; the time from SIGTERM to exit.
async fn stream_ends_on_sigterm(redis_url: Option<&str>) -> Duration {
    let (mut process, base) = start(redis_url).await;
    // 20 gomoku items of 2 s on one worker: 40 s of work, far from done at the exit.
    let body = json!({"items": gomoku_items(20), "budget_ms": 2000});
    let (status, accepted, location) = submit(&base, &body, None).await;
    assert_eq!(status, 202, "{accepted}");
    let mut stream = get_events(&format!("{base}{location}")).await;
    assert_eq!(stream.status(), 200);
    let signalled = Instant::now();
    kill_process(Pid::from_child(&process.0), Signal::TERM).expect("SIGTERM");
    let mut events: Vec<SseEvent> = Vec::new();
    let ended = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(event) = stream.next().await {
            events.push(event);
        }
    })
    .await;
    assert!(
        ended.is_ok(),
        "the stream was still open 30 s after SIGTERM"
    );
    let last = events.last().expect("at least the last event");
    assert_eq!(last.name, "error", "the last event: {last:?}");
    assert_eq!(last.data["status"], 503, "{last:?}");
    assert_eq!(
        last.data["type"], "urn:kibitz:problem:not-ready",
        "{last:?}"
    );
    assert!(
        events[..events.len() - 1]
            .iter()
            .all(|e| e.name == "result"),
        "only results before it: {events:?}"
    );
    let ended_after = signalled.elapsed();
    // The stream stays open through the 5 s drain (the server still serves), no longer.
    assert!(
        ended_after >= Duration::from_secs(4) && ended_after < Duration::from_secs(10),
        "the stream ended {ended_after:?} after SIGTERM"
    );
    let deadline = signalled + Duration::from_secs(26);
    let status = loop {
        if let Some(status) = process.0.try_wait().expect("the process") {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "still running 26 s after SIGTERM (docs/operations.md: at most 26 s)"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(status.success(), "{status:?}");
    signalled.elapsed()
}

#[tokio::test]
async fn sigterm_ends_a_batch_stream_with_a_last_event_and_exits_in_time_without_redis() {
    let exited = stream_ends_on_sigterm(None).await;
    eprintln!("exited {exited:?} after SIGTERM");
}

#[tokio::test]
async fn sigterm_ends_a_batch_stream_with_a_last_event_and_exits_in_time_with_redis() {
    let redis = Redis::start();
    let exited = stream_ends_on_sigterm(Some(&redis.url())).await;
    eprintln!("exited {exited:?} after SIGTERM");
}
