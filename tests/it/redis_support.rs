//! Real processes for the shared-cache tests: a `redis-server` (the machine's, or Debian's
//! package fetched by `redis_server.rs` when there is none) on a free loopback port (plain,
//! with a password or an ACL, or TLS with a CA and certificate made here by rcgen), and
//! kibitz binaries pointed at it. Used by `shared_cache` here and by the latency
//! tests in `tests/service_timing.rs`.
#![allow(dead_code)]

#[path = "redis_server.rs"]
pub mod redis_server;

use std::ffi::OsString;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process};
use serde_json::{Value, json};

use redis_server::{RedisServer, redis_server};

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

/// A `redis-server` on a loopback port, memory only: plain, with a password, over TLS, or
/// started by a shell script (the Kubernetes manifest's).
pub struct Redis {
    pub port: u16,
    process: Option<Process>,
    launch: Launch,
    /// How the tests' own connections log in.
    auth: Option<Auth>,
    /// The CA of a TLS server's certificate (PEM), for the tests' own connections.
    ca: Option<Vec<u8>>,
}

/// How the server process is started: the program and its arguments (the port's included).
#[derive(Clone)]
struct Launch {
    program: PathBuf,
    args: Vec<String>,
    env: Vec<(OsString, OsString)>,
}

impl Launch {
    /// `server` (usually the tests' one, see `redis_server.rs`) with `args`.
    fn redis_server(server: &RedisServer, args: Vec<String>) -> Self {
        Launch {
            program: server.program.clone(),
            args,
            env: server.library_env().into_iter().collect(),
        }
    }
}

/// An ACL user (none: `default`) and its password.
#[derive(Clone)]
pub struct Auth {
    pub username: Option<String>,
    pub password: String,
}

/// The options every test server shares: loopback only, nothing written to disk.
fn common_args(port: u16) -> Vec<String> {
    ["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        .into_iter()
        .map(String::from)
        .chain(["--port".to_owned(), port.to_string()])
        .collect()
}

impl Redis {
    pub fn start() -> Self {
        Self::launch(Vec::new(), None)
    }

    /// A server that keeps its data in an append-only file in `dir`, written before each
    /// write is acknowledged (`appendfsync always`): restarted, it has every acknowledged write.
    pub fn start_persistent(dir: &std::path::Path) -> Self {
        let dir = dir.display().to_string();
        let args = [
            "--appendonly",
            "yes",
            "--appendfsync",
            "always",
            "--dir",
            &dir,
        ];
        Self::launch(args.into_iter().map(String::from).collect(), None)
    }

    /// A server started with more `redis-server` options (`--maxmemory 8mb`, ...).
    pub fn start_with_args(args: &[&str]) -> Self {
        Self::launch(args.iter().map(|a| (*a).to_owned()).collect(), None)
    }

    /// A server that requires `password` (`--requirepass`) of the default user.
    pub fn start_with_password(password: &str) -> Self {
        let auth = Auth {
            username: None,
            password: password.to_owned(),
        };
        Self::launch(vec!["--requirepass".into(), password.into()], Some(auth))
    }

    fn launch(extra: Vec<String>, auth: Option<Auth>) -> Self {
        let port = free_port();
        let mut args = common_args(port);
        args.extend(extra);
        Self::spawn(port, Launch::redis_server(redis_server(), args), auth, None)
    }

    /// A server started by `script` under `sh -c`, as a container would start it, with
    /// `env_vars`, the tests' `redis-server` first on the `PATH`, and the test's port and bind
    /// address as the script's arguments (`"$@"`); the tests' connections log in as `auth`.
    pub fn start_script(script: &str, env_vars: &[(&str, &str)], auth: Auth) -> Self {
        let port = free_port();
        let mut args = vec!["-c".to_owned(), script.to_owned(), "sh".to_owned()];
        args.extend(common_args(port));
        let mut env = redis_server().script_env();
        env.extend(env_vars.iter().map(|(k, v)| (k.into(), v.into())));
        let launch = Launch {
            program: "sh".into(),
            args,
            env,
        };
        Self::spawn(port, launch, Some(auth), None)
    }

    /// A server that speaks TLS only, with a certificate for 127.0.0.1 signed by a CA made for
    /// the test; the CA's PEM is at [`TestCa::ca_file`].
    pub fn start_tls(ca: &TestCa) -> Self {
        Self::start_tls_with(redis_server(), ca)
    }

    /// [`Redis::start_tls`], running `server` rather than the tests' usual one.
    pub fn start_tls_with(server: &RedisServer, ca: &TestCa) -> Self {
        let port = free_port();
        let mut args = common_args(0);
        let path = |name: &str| ca.dir.path().join(name).display().to_string();
        args.extend([
            "--tls-port".to_owned(),
            port.to_string(),
            "--tls-cert-file".to_owned(),
            path("server.pem"),
            "--tls-key-file".to_owned(),
            path("server.key"),
            "--tls-ca-cert-file".to_owned(),
            path("ca.pem"),
            "--tls-auth-clients".to_owned(),
            "no".to_owned(),
        ]);
        let launch = Launch::redis_server(server, args);
        let pem = std::fs::read(ca.ca_file()).expect("the CA");
        Self::spawn(port, launch, None, Some(pem))
    }

    fn spawn(port: u16, launch: Launch, auth: Option<Auth>, ca: Option<Vec<u8>>) -> Self {
        let mut redis = Redis {
            port,
            process: None,
            launch,
            auth,
            ca,
        };
        redis.restart();
        redis
    }

    /// The URL kibitz is given: no credentials (they are the test's to pass, or not).
    pub fn url(&self) -> String {
        let scheme = if self.ca.is_some() { "rediss" } else { "redis" };
        format!("{scheme}://127.0.0.1:{}/", self.port)
    }

    /// Starts it (again) on the same port and waits until it answers.
    pub fn restart(&mut self) {
        let child = Command::new(&self.launch.program)
            .args(&self.launch.args)
            .envs(self.launch.env.iter().map(|(k, v)| (k, v)))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{:?} does not start: {e}", self.launch.program));
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
        kill_process(Pid::from_child(&process.0), Signal::STOP).expect("SIGSTOP");
    }

    /// A connection logged in as the test's user (see [`Redis::start_script`]).
    pub fn connection(&self) -> Option<redis::Connection> {
        self.connection_as(self.auth.as_ref())
    }

    /// A connection logged in as `auth` (`None`: not logged in), once it answers `PING`.
    pub fn connection_as(&self, auth: Option<&Auth>) -> Option<redis::Connection> {
        let client = match &self.ca {
            Some(pem) => redis::Client::build_with_tls(
                self.url(),
                redis::TlsCertificates {
                    client_tls: None,
                    root_cert: Some(pem.clone()),
                },
            ),
            None => redis::Client::open(self.url()),
        }
        .ok()?;
        let mut connection = client
            .get_connection_with_timeout(Duration::from_millis(200))
            .ok()?;
        if let Some(auth) = auth {
            let mut login = redis::cmd("AUTH");
            if let Some(user) = &auth.username {
                login.arg(user);
            }
            login
                .arg(&auth.password)
                .query::<()>(&mut connection)
                .ok()?;
        }
        redis::cmd("PING").query::<String>(&mut connection).ok()?;
        Some(connection)
    }

    /// How many answers the shared cache holds: its `kibitz:v{FORMAT_VERSION}:` keys, not the
    /// batch queue's streams (`kibitz:batch:...`), which every replica creates when it starts.
    pub fn keys(&self) -> usize {
        let mut connection = self.connection().expect("redis answers");
        let keys: Vec<String> = redis::cmd("KEYS")
            .arg(ANSWER_KEYS)
            .query(&mut connection)
            .expect("KEYS");
        keys.len()
    }
}

/// A certificate authority and a server certificate for 127.0.0.1 and localhost it signed,
/// made with rcgen (ECDSA P-256) as PEM files in a fresh directory, where
/// `redis-server --tls-*-file` reads them. The directory is removed when this drops, and also
/// when making the certificates fails part-way (a `Drop` of our own never ran then, and the
/// directory stayed in the temp dir).
pub struct TestCa {
    pub dir: tempfile::TempDir,
}

impl TestCa {
    pub fn new() -> Self {
        use rcgen::{
            BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer,
            KeyPair, KeyUsagePurpose,
        };
        let dir = tempfile::Builder::new()
            .prefix("kibitz-test-ca-")
            .tempdir()
            .expect("a directory for the certificates");

        let mut ca = CertificateParams::new(Vec::<String>::new()).expect("no names");
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.distinguished_name
            .push(DnType::CommonName, "kibitz test CA");
        ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let ca_key = KeyPair::generate().expect("a CA key");
        let ca_cert = ca.self_signed(&ca_key).expect("the CA certificate");
        let issuer = Issuer::new(ca, ca_key);

        // "127.0.0.1" becomes an IP address name, as the URL kibitz is given names the server.
        let mut server = CertificateParams::new(["127.0.0.1".to_owned(), "localhost".to_owned()])
            .expect("valid names");
        server
            .distinguished_name
            .push(DnType::CommonName, "localhost");
        server.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let server_key = KeyPair::generate().expect("a server key");
        let server_cert = server
            .signed_by(&server_key, &issuer)
            .expect("the server certificate");

        for (name, pem) in [
            ("ca.pem", ca_cert.pem()),
            ("server.pem", server_cert.pem()),
            ("server.key", server_key.serialize_pem()),
        ] {
            std::fs::write(dir.path().join(name), pem).expect("a PEM file");
        }
        TestCa { dir }
    }

    pub fn ca_file(&self) -> std::path::PathBuf {
        self.dir.path().join("ca.pem")
    }
}

/// The kibitz binary on a loopback port, sharing answers through `redis_url`.
pub struct Replica {
    pub port: u16,
    _process: Process,
}

impl Replica {
    pub async fn start(redis_url: &str) -> Self {
        Self::start_with(redis_url, &[]).await
    }

    /// A replica with more `KIBITZ_*` settings (credentials, a CA file, ...).
    pub async fn start_with(redis_url: &str, env: &[(&str, &str)]) -> Self {
        let port = free_port();
        let child = Command::new(env!("CARGO_BIN_EXE_kibitz"))
            .env("KIBITZ_ADDR", format!("127.0.0.1:{port}"))
            .env("KIBITZ_REDIS_URL", redis_url)
            .env("KIBITZ_TABLE_MB", "4")
            .env("KIBITZ_WORKERS", "1")
            .envs(env.iter().copied())
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

    /// `/metrics` as text.
    pub async fn metrics(&self) -> String {
        reqwest::get(self.url("/metrics"))
            .await
            .expect("an answer")
            .text()
            .await
            .expect("text")
    }

    /// Sends throwaway Connect-4 positions (stones in columns 6 and 5 only) until one of its
    /// stores in Redis has answered: its connection is open. Opening it (a TLS handshake, an
    /// ACL login) can take longer than a call's 5 ms on a busy machine, and the calls before
    /// then fail: a test that counts on sharing waits for this first.
    pub async fn until_connected(&self) {
        let stored = r#"kibitz_shared_cache_duration_seconds_count{op="set"}"#;
        for n in 0..12 {
            let opening = vec![6 - n / 6; n % 6 + 1];
            let (status, body, _) = self.post_move(&connect4_request(&opening)).await;
            assert_eq!(status, 200, "{body}");
            for _ in 0..25 {
                if self.metrics().await.contains(stored) {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        panic!("kibitz never stored an answer in Redis");
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
/// The pattern of the shared cache's answer keys (every format version).
pub const ANSWER_KEYS: &str = "kibitz:v*";

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
