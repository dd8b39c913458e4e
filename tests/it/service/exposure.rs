//! The release binary facing hostile or careless clients over real sockets: idle connections
//! beyond the descriptor limit, a slowloris, stalled uploads, and SIGTERM with a half-sent
//! request. Each test starts its own server process (default settings unless it says), so the
//! figures are the binary's, and each is bounded in time.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A `kibitz` server process on a free loopback port, killed when dropped.
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    /// Starts the binary with `env` (small tables), under `prlimit` when `descriptors` is set.
    async fn start(env: &[(&str, &str)], descriptors: Option<u64>) -> Server {
        let port = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            listener.local_addr().unwrap().port()
        };
        let binary = env!("CARGO_BIN_EXE_kibitz");
        let mut command = match descriptors {
            Some(n) => {
                let mut c = Command::new("prlimit");
                c.arg(format!("--nofile={n}:{n}")).arg(binary);
                c
            }
            None => Command::new(binary),
        };
        command
            .env("KIBITZ_ADDR", format!("127.0.0.1:{port}"))
            .env("KIBITZ_TABLE_MB", "2")
            .env("KIBITZ_CACHE_MB", "2")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        for (key, value) in env {
            command.env(key, value);
        }
        let child = command
            .spawn()
            .expect("the kibitz binary (and prlimit) start");
        let server = Server { child, port };
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(response) = reqwest::get(server.url("/healthz")).await
                && response.status() == 200
            {
                return server;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("the server did not come up");
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    async fn connect(&self) -> TcpStream {
        TcpStream::connect(("127.0.0.1", self.port))
            .await
            .expect("connect")
    }

    /// Resident memory of the server process, in bytes (Linux).
    fn resident_bytes(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("/proc status");
        let kib: u64 = status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .expect("VmRSS");
        kib * 1024
    }

    fn terminate(&self) {
        kill_process(Pid::from_child(&self.child), Signal::TERM).expect("SIGTERM");
    }

    /// Waits up to `limit` for the process to exit; its exit status if it did.
    fn wait_exit(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits until the server closes `stream` (end of file or reset), reading and discarding what
/// it sends; false if it is still open after `limit`.
async fn closed_within(stream: &mut TcpStream, limit: Duration) -> bool {
    let mut buffer = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buffer)).await {
            Err(_) => return false,
            Ok(Ok(0)) | Ok(Err(_)) => return true,
            Ok(Ok(_)) => {}
        }
    }
}

fn tictactoe_move() -> serde_json::Value {
    json!({"game": "tictactoe", "board": ["X..", "...", "..."], "budget_ms": 500})
}

#[tokio::test]
async fn idle_connections_past_the_descriptor_limit_do_not_lock_out_a_real_request() {
    // This process needs a descriptor per idle connection too.
    let _ = rlimit::increase_nofile_limit(4096);
    let server = Server::start(&[], Some(1024)).await;
    let mut idle = Vec::new();
    for _ in 0..1500 {
        idle.push(server.connect().await);
    }
    let started = Instant::now();
    let reply = reqwest::Client::new()
        .post(server.url("/move"))
        .json(&tictactoe_move())
        .timeout(Duration::from_secs(20))
        .send()
        .await
        .expect("the real request is answered within 20 s");
    assert_eq!(reply.status(), 200);
    assert!(started.elapsed() < Duration::from_secs(20));
    // The server closed the idle connections itself (header timeout, 5 s by default).
    for stream in idle.iter_mut().step_by(50) {
        assert!(closed_within(stream, Duration::from_secs(20)).await);
    }
}

#[tokio::test]
async fn a_slowloris_client_is_closed_within_20_seconds() {
    let server = Server::start(&[], None).await;
    let mut stream = server.connect().await;
    stream
        .write_all(b"POST /move HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        .await
        .unwrap();
    let started = Instant::now();
    let mut closed = false;
    while started.elapsed() < Duration::from_secs(20) {
        if stream.write_all(b"a").await.is_err() {
            closed = true;
            break;
        }
        if closed_within(&mut stream, Duration::from_secs(1)).await {
            closed = true;
            break;
        }
    }
    assert!(closed, "still open after {:?}", started.elapsed());
}

#[tokio::test]
async fn stalled_tree_uploads_take_bounded_memory_and_are_closed() {
    let server = Server::start(&[], None).await;
    let before = server.resident_bytes();
    let size = 4 * 1024 * 1024 - 1;
    let mut uploads = Vec::new();
    for _ in 0..40 {
        let mut stream = server.connect().await;
        let head = format!(
            "POST /tree HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
             Content-Length: {size}\r\n\r\n"
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        uploads.push(tokio::spawn(async move {
            // All but the last byte, as far as the server reads; then stall.
            let body = vec![b' '; size - 1];
            let _ = tokio::time::timeout(Duration::from_secs(3), stream.write_all(&body)).await;
            stream
        }));
    }
    let mut streams = Vec::new();
    for upload in uploads {
        streams.push(upload.await.unwrap());
    }
    let grown = server.resident_bytes().saturating_sub(before);
    assert!(
        grown < 96 * 1024 * 1024,
        "resident memory grew by {} MiB",
        grown >> 20
    );
    let started = Instant::now();
    for stream in &mut streams {
        assert!(
            closed_within(
                stream,
                Duration::from_secs(30).saturating_sub(started.elapsed())
            )
            .await,
            "an upload is still open after {:?}",
            started.elapsed()
        );
    }
}

#[tokio::test]
async fn sigterm_drains_then_exits_within_30_seconds_although_a_request_is_half_sent() {
    let mut server = Server::start(&[], None).await;
    let client = reqwest::Client::new();
    let mut half_sent = server.connect().await;
    half_sent
        .write_all(b"POST /move HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n")
        .await
        .unwrap();
    let signalled = Instant::now();
    server.terminate();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let ready = client.get(server.url("/readyz")).send().await.unwrap();
    assert_eq!(ready.status(), 503, "readiness turns off at once");
    let answer = client
        .post(server.url("/move"))
        .json(&tictactoe_move())
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200, "the drain still answers searches");
    let status = server
        .wait_exit(Duration::from_secs(30).saturating_sub(signalled.elapsed()))
        .expect("the process exits within 30 s of SIGTERM");
    assert!(status.success(), "{status:?}");
    assert!(
        signalled.elapsed() >= Duration::from_secs(4),
        "exited after {:?}, before the 5 s drain",
        signalled.elapsed()
    );
}

#[tokio::test]
async fn a_body_that_arrives_too_slowly_is_a_408_that_says_so() {
    let server = Server::start(&[("KIBITZ_BODY_TIMEOUT_MS", "300")], None).await;
    let mut stream = server.connect().await;
    let body = tictactoe_move().to_string();
    let head = format!(
        "POST /move HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(&body.as_bytes()[..5]).await.unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut answer)).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("KIBITZ_BODY_TIMEOUT_MS"), "{answer}");
}
