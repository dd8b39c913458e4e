//! Real processes for the shared-cache tests: a `redis-server` (Debian's `redis-server`
//! package; `.ci/run` installs it, and the tests fail when it is missing) on a free loopback
//! port, and kibitz binaries pointed at it. Used by `shared_cache` here and by the latency
//! tests in `tests/service_timing.rs`.
#![allow(dead_code)]

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("its address").port()
}

/// A child process killed when dropped.
pub struct Process(pub Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A `redis-server` on a loopback port, memory only.
pub struct Redis {
    pub port: u16,
    process: Option<Process>,
}

impl Redis {
    pub fn start() -> Self {
        let mut redis = Redis {
            port: free_port(),
            process: None,
        };
        redis.restart();
        redis
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Starts it (again) on the same port and waits until it answers.
    pub fn restart(&mut self) {
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server must be installed (Debian: apt-get install redis-server)");
        self.process = Some(Process(child));
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.connection().is_none() {
            assert!(Instant::now() < deadline, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn kill(&mut self) {
        self.process = None;
    }

    /// Stops the process without closing its sockets (SIGSTOP): a Redis that hangs.
    pub fn freeze(&self) {
        let process = self.process.as_ref().expect("running");
        let status = Command::new("kill")
            .args(["-STOP", &process.0.id().to_string()])
            .status()
            .expect("kill");
        assert!(status.success());
    }

    pub fn connection(&self) -> Option<redis::Connection> {
        let client = redis::Client::open(self.url()).ok()?;
        let mut connection = client
            .get_connection_with_timeout(Duration::from_millis(200))
            .ok()?;
        redis::cmd("PING").query::<String>(&mut connection).ok()?;
        Some(connection)
    }

    pub fn keys(&self) -> usize {
        let mut connection = self.connection().expect("redis answers");
        redis::cmd("DBSIZE").query(&mut connection).expect("DBSIZE")
    }
}

/// The kibitz binary on a loopback port, sharing answers through `redis_url`.
pub struct Replica {
    pub port: u16,
    _process: Process,
}

impl Replica {
    pub async fn start(redis_url: &str) -> Self {
        let port = free_port();
        let child = Command::new(env!("CARGO_BIN_EXE_kibitz"))
            .env("KIBITZ_ADDR", format!("127.0.0.1:{port}"))
            .env("KIBITZ_REDIS_URL", redis_url)
            .env("KIBITZ_TABLE_MB", "4")
            .env("KIBITZ_WORKERS", "1")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the kibitz binary");
        let replica = Replica {
            port,
            _process: Process(child),
        };
        for _ in 0..200 {
            if let Ok(response) = reqwest::get(replica.url("/readyz")).await
                && response.status() == 200
            {
                return replica;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("kibitz did not become ready");
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// The status, the answer, and the time from sending to the whole answer read.
    pub async fn post_move(&self, body: &Value) -> (u16, Value, Duration) {
        let started = Instant::now();
        let response = reqwest::Client::new()
            .post(self.url("/move"))
            .json(body)
            .send()
            .await
            .expect("an answer");
        let status = response.status().as_u16();
        let body = response.json().await.unwrap_or(Value::Null);
        (status, body, started.elapsed())
    }
}

/// A Connect-4 position after `opening` (columns, 0-based), searched to depth 8: an answer
/// that is not proven, so the serving rule (same `max_depth`) decides.
pub fn connect4_request(opening: &[usize]) -> Value {
    let mut rows = vec![vec!['.'; 7]; 6];
    let mut heights = [0usize; 7];
    for (ply, &col) in opening.iter().enumerate() {
        rows[5 - heights[col]][col] = if ply % 2 == 0 { 'X' } else { 'O' };
        heights[col] += 1;
    }
    let board: Vec<String> = rows.into_iter().map(String::from_iter).collect();
    json!({"game": "connect4", "board": board, "max_depth": 8})
}

/// Waits until Redis holds `keys` answers (stores run after the answer is sent).
pub async fn wait_for_keys(redis: &Redis, keys: usize) {
    for _ in 0..200 {
        if redis.keys() >= keys {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("Redis never held {keys} answers");
}

/// A 15x15 gomoku board with one X stone, placed by `i` (distinct for `i` < 28).
pub fn gomoku_board(i: usize) -> Vec<String> {
    let mut rows = vec![vec!['.'; 15]; 15];
    rows[4 + i / 4][3 + 2 * (i % 4)] = 'X';
    rows.into_iter().map(String::from_iter).collect()
}
