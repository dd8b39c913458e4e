//! The answer cache shared by replicas through Redis, with real processes
//! ([`crate::redis_support`]): a second replica answers from the first one's search (in every
//! game, analysis and renju's forbidden points included), sharing resumes after Redis comes
//! back, a garbage value is ignored, a forged one is refused and counted; Redis with a
//! password, with the ACL of the Kubernetes manifest, and over TLS. The latency tests with
//! Redis killed or hung are in `tests/service_timing.rs`, where nothing runs beside them.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::boards::{board, board15};
use crate::redis_support::*;
use crate::service::common::*;
use kibitz::config::Config;
use kibitz::engine::Side;
use kibitz::service::cache::CacheKey;
use kibitz::service::shared_cache::redis_key;
use redis::Commands;

#[tokio::test]
async fn a_second_replica_answers_the_first_ones_position_from_redis() {
    let redis = Redis::start();
    let a = Replica::start(&redis.url()).await;
    let b = Replica::start(&redis.url()).await;
    let request = connect4_request(&[3, 3, 2]);

    let (status, first, _) = a.post_move(&request).await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(first["cached"], false);
    wait_for_keys(&redis, 1).await;

    let (status, second, _) = b.post_move(&request).await;
    assert_eq!(status, 200, "{second}");
    assert_eq!(second["cached"], true);
    assert_eq!(second["cached_from"], "shared");
    assert_eq!(second["move"], first["move"]);
    assert_eq!(second["nodes"], first["nodes"], "the first search's report");
}

#[tokio::test]
async fn sharing_resumes_by_itself_when_redis_comes_back() {
    let mut redis = Redis::start();
    let a = Replica::start(&redis.url()).await;
    let b = Replica::start(&redis.url()).await;
    redis.kill();
    // Both replicas notice (their calls fail and the breakers open).
    for opening in [[0, 1], [0, 2], [0, 3], [0, 4]] {
        let request = connect4_request(&opening);
        assert_eq!(a.post_move(&request).await.0, 200);
        assert_eq!(b.post_move(&request).await.0, 200);
    }
    redis.restart();

    let started = Instant::now();
    for n in 0..100 {
        // A new position each time (base-7 digits of n), so only Redis can share it.
        let request = connect4_request(&[n % 7, (n / 7) % 7, (n / 49) % 7, 3]);
        let (status, _, _) = a.post_move(&request).await;
        assert_eq!(status, 200);
        tokio::time::sleep(Duration::from_millis(50)).await;
        let (status, body, _) = b.post_move(&request).await;
        assert_eq!(status, 200);
        if body["cached_from"] == "shared" {
            assert!(started.elapsed() < Duration::from_secs(10));
            return;
        }
    }
    panic!("sharing did not resume");
}

#[tokio::test]
async fn a_garbage_value_under_a_key_is_ignored_and_counted() {
    let redis = Redis::start();
    let key = CacheKey::plain("tictactoe", "XX./OO./...", Side::First);
    let mut connection = redis.connection().expect("redis answers");
    let _: () = redis::cmd("SET")
        .arg(redis_key(&key))
        .arg("not an answer")
        .query(&mut connection)
        .expect("SET");
    let server = start_server(Config {
        redis_url: Some(redis.url()),
        // Room for a slow first connection.
        redis_timeout_ms: 1000,
        ..Config::for_tests()
    })
    .await;

    let response = reqwest::Client::new()
        .post(server.url("/move"))
        .json(&json!({"game": "tictactoe", "board": ["XX.", "OO.", "..."]}))
        .send()
        .await
        .expect("an answer");
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.expect("JSON");
    assert_eq!(body["move"], json!({"row": 0, "col": 2, "notation": "c3"}));
    assert_eq!(body["cached"], false);
    let metrics = server.state.service.metrics().render();
    assert!(
        metrics.contains(r#"kibitz_shared_cache_errors_total{op="get",kind="undecodable"} 1"#),
        "{metrics}"
    );
}

/// The key the replicas' one answer is stored under (the only key in Redis).
fn only_key(redis: &Redis) -> String {
    let mut connection = redis.connection().expect("redis answers");
    let keys: Vec<String> = connection.keys(ANSWER_KEYS).expect("KEYS");
    assert_eq!(keys.len(), 1, "{keys:?}");
    keys.into_iter().next().unwrap_or_default()
}

fn stored_value(redis: &Redis, key: &str) -> Value {
    let mut connection = redis.connection().expect("redis answers");
    let bytes: Vec<u8> = connection.get(key).expect("GET");
    serde_json::from_slice(&bytes).expect("a JSON value")
}

#[tokio::test]
async fn a_forged_winning_move_on_an_occupied_cell_is_refused_counted_and_searched_again() {
    let redis = Redis::start();
    let a = Replica::start(&redis.url()).await;
    let b = Replica::start(&redis.url()).await;
    // X on the bottom cell of column 2 (row 5), O beside it in column 3.
    let request = connect4_request(&[2, 3]);
    let (status, first, _) = a.post_move(&request).await;
    assert_eq!(status, 200, "{first}");
    wait_for_keys(&redis, 1).await;
    // A forged value, written as `redis-cli SET` would: the best move on the occupied cell,
    // a win on the next ply, under the exact key a replica wrote.
    let key = only_key(&redis);
    let mut forged = stored_value(&redis, &key);
    forged["best"] = json!([5, 2]);
    forged["score"] = json!(999_999);
    forged["proof"] = json!([1, 1]);
    forged["pv"] = json!([[5, 2]]);
    let mut connection = redis.connection().expect("redis answers");
    let _: () = connection.set(&key, forged.to_string()).expect("SET");

    let (status, second, _) = b.post_move(&request).await;
    assert_eq!(status, 200, "{second}");
    assert_eq!(second["cached"], false, "{second}");
    assert!(second.get("cached_from").is_none(), "{second}");
    assert_ne!(second["move"]["col"], 2);
    assert_eq!(
        second["move"], first["move"],
        "its own search agrees with A's"
    );
    let metrics = b.metrics().await;
    assert!(
        metrics.contains(r#"kibitz_shared_cache_errors_total{op="get",kind="invalid"} 1"#),
        "{metrics}"
    );
    assert!(
        metrics
            .contains(r#"kibitz_shared_cache_refused_total{game="connect4",reason="best_move"} 1"#),
        "{metrics}"
    );
    assert!(!metrics.contains(r#"kibitz_shared_cache_hits_total{game="connect4"}"#));
    // B's search stored its own answer over the forged one.
    for _ in 0..200 {
        if stored_value(&redis, &key)["best"] != json!([5, 2]) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the forged value stayed");
}

/// A 9x9 gomoku board with a few stones of each side.
fn small_gomoku_board() -> Vec<String> {
    board(9, 9, &[(4, 4, 'X'), (4, 5, 'O'), (3, 3, 'X'), (5, 5, 'O')])
}

/// Black (X) to move under renju, where row 7, column 8 would make a double three.
fn renju_board() -> Vec<String> {
    board15(&[
        (5, 8, 'X'),
        (6, 8, 'X'),
        (7, 6, 'X'),
        (7, 7, 'X'),
        (9, 2, 'O'),
        (12, 0, 'O'),
        (14, 0, 'O'),
        (14, 14, 'O'),
    ])
}

#[tokio::test]
async fn answers_of_every_game_are_served_from_redis_as_they_were_searched() {
    let redis = Redis::start();
    let a = Replica::start(&redis.url()).await;
    let b = Replica::start(&redis.url()).await;
    let tictactoe = json!({"game": "tictactoe", "board": ["X..", ".O.", "..."]});
    let requests = [
        tictactoe.clone(),
        json!({"game": "tictactoe", "board": ["X..", "...", "..."], "analysis": true}),
        connect4_request(&[3, 3, 2]),
        json!({"game": "connect4", "board": connect4_request(&[3])["board"], "analysis": true, "max_depth": 6}),
        json!({"game": "gomoku", "board": gomoku_board(5), "max_depth": 3}),
        json!({"game": "gomoku", "board": small_gomoku_board(), "analysis": true, "max_depth": 2}),
        json!({"game": "gomoku", "board": renju_board(), "rules": {"variant": "renju"}, "analysis": true, "max_depth": 1}),
        json!({"game": "connect4", "board": connect4_request(&[3, 4])["board"], "level": 4, "seed": 9, "max_depth": 8}),
    ];
    for (stored, request) in requests.iter().enumerate() {
        let (status, first, _) = a.post_move(request).await;
        assert_eq!(status, 200, "{first}");
        assert_eq!(first["cached"], false, "{request}");
        wait_for_keys(&redis, stored + 1).await;
        let (status, second, _) = b.post_move(request).await;
        assert_eq!(status, 200, "{second}");
        assert_eq!(second["cached_from"], "shared", "{request}\n{second}");
        for field in [
            "move",
            "score",
            "outcome",
            "plies_to_end",
            "depth",
            "nodes",
            "stop_reason",
            "tt",
            "pv",
            "iterations",
            "analysis",
            "forbidden",
            "level",
            "seed",
        ] {
            assert_eq!(second.get(field), first.get(field), "{field} of {request}");
        }
    }
    let renju = &requests[6];
    let (_, answer, _) = b.post_move(renju).await;
    assert_eq!(
        answer["forbidden"],
        json!([{"cell": {"row": 7, "col": 8, "notation": "i8"}, "reason": "double_three"}])
    );
    let metrics = b.metrics().await;
    assert!(
        !metrics.contains("kibitz_shared_cache_refused_total{"),
        "{metrics}"
    );
    assert!(!metrics.contains(r#"kind="invalid""#), "{metrics}");
}

#[tokio::test]
async fn with_a_password_replicas_share_and_without_it_one_still_answers_every_request() {
    let redis = Redis::start_with_password("kibitz-test-password");
    let password = [("KIBITZ_REDIS_PASSWORD", "kibitz-test-password")];
    let a = Replica::start_with(&redis.url(), &password).await;
    let b = Replica::start_with(&redis.url(), &password).await;
    let outsider = Replica::start(&redis.url()).await;
    let request = connect4_request(&[3, 3, 2]);

    let (status, first, _) = a.post_move(&request).await;
    assert_eq!(status, 200, "{first}");
    wait_for_keys(&redis, 1).await;
    let (status, second, _) = b.post_move(&request).await;
    assert_eq!(status, 200, "{second}");
    assert_eq!(second["cached_from"], "shared", "{second}");

    for opening in [[3, 3, 2], [0, 1, 2], [6, 5, 4]] {
        let (status, body, _) = outsider.post_move(&connect4_request(&opening)).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["cached"], false, "{body}");
    }
    let metrics = outsider.metrics().await;
    assert!(
        metrics.contains(r#"kibitz_shared_cache_errors_total{op="get",kind="redis"}"#),
        "{metrics}"
    );
    assert_eq!(redis.keys(), 1, "nothing stored without the password");
}

/// The Redis start script of `deploy/kubernetes/redis.yaml` (the container's `args`).
fn manifest_redis_script() -> String {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/deploy/kubernetes/redis.yaml"
    ))
    .expect("the manifest");
    let deployment = text.split("\n---\n").next().unwrap_or_default();
    let deployment: Value = serde_norway::from_str(deployment).expect("YAML");
    let container = &deployment["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["command"], json!(["sh", "-c"]));
    container["args"][0]
        .as_str()
        .expect("the script")
        .to_owned()
}

#[tokio::test]
async fn the_manifests_acl_lets_kibitz_share_answers_and_do_nothing_else() {
    // Removed when it drops, however the test ends.
    let data = tempfile::Builder::new()
        .prefix("kibitz-acl-")
        .tempdir()
        .expect("a data directory");
    let dir = data.path();
    // The script as the manifest has it, writing its ACL file here instead of /data.
    let script = manifest_redis_script().replace("/data/", &format!("{}/", dir.display()));
    let password = "0123456789abcdef-test";
    let kibitz = Auth {
        username: Some("kibitz".into()),
        password: password.into(),
    };
    let redis = Redis::start_script(&script, &[("REDIS_PASSWORD", password)], kibitz.clone());
    let login = [
        ("KIBITZ_REDIS_USERNAME", "kibitz"),
        ("KIBITZ_REDIS_PASSWORD", password),
    ];
    let a = Replica::start_with(&redis.url(), &login).await;
    let b = Replica::start_with(&redis.url(), &login).await;
    b.until_connected().await;
    let tictactoe = json!({"game": "tictactoe", "board": ["X..", ".O.", "..."]});
    let (status, _, _) = a.post_move(&tictactoe).await;
    assert_eq!(status, 200);
    let key = CacheKey::plain("tictactoe", "X../.O./...", Side::First);
    let mut connection = redis.connection().expect("kibitz logs in");
    for _ in 0..200 {
        let value: Option<Vec<u8>> = connection.get(redis_key(&key)).expect("GET of an answer");
        if value.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let (status, body, _) = b.post_move(&tictactoe).await;
    assert_eq!(status, 200);
    assert_eq!(body["cached_from"], "shared", "{body}");
    // Batches too: their streams, hashes and the scripts that count and expire them.
    let batch = json!({"items": [{"move": tictactoe}], "budget_ms": 20});
    let accepted = reqwest::Client::new()
        .post(a.url("/analyses"))
        .json(&batch)
        .send()
        .await
        .expect("an answer");
    assert_eq!(accepted.status(), 202);
    let location = accepted.headers()["location"].to_str().unwrap().to_owned();
    let mut finished = Value::Null;
    for _ in 0..200 {
        finished = reqwest::get(b.url(&location))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if finished["status"] == "done" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(finished["status"], "done", "{finished}");

    // kibitz's user: its keys, GET and SETEX only.
    let denied = |result: redis::RedisResult<redis::Value>| {
        let error = result.expect_err("refused");
        assert_eq!(error.code(), Some("NOPERM"), "{error}");
    };
    denied(
        redis::cmd("SET")
            .arg("other")
            .arg("1")
            .query(&mut connection),
    );
    denied(redis::cmd("GET").arg("other").query(&mut connection));
    denied(redis::cmd("FLUSHALL").query(&mut connection));
    denied(redis::cmd("KEYS").arg("*").query(&mut connection));
    denied(
        redis::cmd("CONFIG")
            .arg("GET")
            .arg("*")
            .query(&mut connection),
    );
    // Without logging in: PING only (the probes).
    let mut anonymous = redis.connection_as(None).expect("PING without a password");
    denied(redis::cmd("GET").arg(redis_key(&key)).query(&mut anonymous));
}

#[tokio::test]
async fn replicas_share_answers_over_tls_with_the_ca_from_a_file() {
    let ca = TestCa::new();
    let redis = Redis::start_tls(&ca);
    assert!(redis.url().starts_with("rediss://"));
    let ca_file = ca.ca_file().display().to_string();
    let trust = [("KIBITZ_REDIS_CA_FILE", ca_file.as_str())];
    let a = Replica::start_with(&redis.url(), &trust).await;
    let b = Replica::start_with(&redis.url(), &trust).await;
    // Without the CA the certificate is not trusted: answers, but nothing shared.
    let untrusting = Replica::start(&redis.url()).await;
    let request = connect4_request(&[3, 3, 2]);

    // A TLS handshake can take longer than a call's 5 ms: both connections opened first.
    a.until_connected().await;
    b.until_connected().await;
    let stored = redis.keys();
    let (status, _, _) = a.post_move(&request).await;
    assert_eq!(status, 200);
    wait_for_keys(&redis, stored + 1).await;
    let (status, body, _) = b.post_move(&request).await;
    assert_eq!(status, 200);
    assert_eq!(body["cached_from"], "shared", "{body}");
    let (status, body, _) = untrusting.post_move(&request).await;
    assert_eq!(status, 200);
    assert_eq!(body["cached"], false, "{body}");
    let metrics = untrusting.metrics().await;
    assert!(
        metrics.contains(r#"kibitz_shared_cache_errors_total{op="get""#),
        "{metrics}"
    );
}

#[tokio::test]
async fn the_redis_password_shows_neither_in_the_help_nor_in_the_log() {
    let secret = "hunter2-not-for-logs";
    let help = std::process::Command::new(env!("CARGO_BIN_EXE_kibitz"))
        .arg("--help")
        .env("KIBITZ_REDIS_PASSWORD", secret)
        .env(
            "KIBITZ_REDIS_URL",
            format!("redis://:{secret}@127.0.0.1:1/"),
        )
        .output()
        .expect("kibitz --help");
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(text.contains("KIBITZ_REDIS_PASSWORD"), "{text}");
    assert!(!text.contains(secret), "{text}");

    let redis = Redis::start_with_password(secret);
    let port = free_port();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_kibitz"))
        .env("KIBITZ_ADDR", format!("127.0.0.1:{port}"))
        .env(
            "KIBITZ_REDIS_URL",
            format!("redis://kibitz:{secret}@127.0.0.1:{}/", redis.port),
        )
        .env("KIBITZ_TABLE_MB", "1")
        .env("KIBITZ_WORKERS", "1")
        .env("KIBITZ_LOG_FORMAT", "json")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the kibitz binary");
    let stderr = child.stderr.take().expect("its log");
    let process = Process(child);
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(stderr));
    let logged = loop {
        let line = lines.next().expect("a log line").expect("text");
        if line.contains("shared answer cache") {
            break line;
        }
    };
    drop(process);
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    assert!(
        logged.contains(&format!("redis://kibitz:***@127.0.0.1:{}/0", redis.port)),
        "{logged}"
    );
    assert!(!logged.contains(secret), "{logged}");
    assert!(rest.iter().all(|line| !line.contains(secret)), "{rest:?}");
}

/// The fresh-machine path, taken here even where `redis-server` is installed (as it is on
/// CI's machine): Debian's packages fetched into `target/tmp` (once per target directory),
/// and the server they hold speaks TLS with rcgen's certificate.
#[test]
fn with_no_redis_server_installed_the_tests_fetch_debians_and_it_serves_over_tls() {
    use crate::redis_support::redis_server::{fetched_debian, fetched_dir};
    if std::process::Command::new("apt-get")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("no apt-get: not Debian or Ubuntu, nothing to fetch from");
        return;
    }
    let server = fetched_debian().unwrap_or_else(|why| panic!("{why}"));
    assert!(server.program.starts_with(fetched_dir()), "{server:?}");
    let version = server.version().expect("it runs");
    assert!(version.starts_with("Redis server v="), "{version}");
    let ca = TestCa::new();
    let redis = Redis::start_tls_with(server, &ca);
    assert!(redis.url().starts_with("rediss://"));
    assert_eq!(redis.keys(), 0);
}

/// Writes `forged` under `key` as `redis-cli SET` would.
fn forge(redis: &Redis, key: &str, forged: &Value) {
    let mut connection = redis.connection().expect("redis answers");
    let _: () = connection.set(key, forged.to_string()).expect("SET");
}

/// A forgery the seven other checks let through: a tic-tac-toe answer that misses X's win in one, "stopped for
/// time" 22 us into a 1 s window; then the same move with its timing made consistent, which
/// only solving the position refuses. Both refused, counted, and searched again.
#[tokio::test]
async fn a_tictactoe_answer_that_misses_a_win_in_one_is_solved_refused_and_searched_again() {
    let redis = Redis::start();
    let a = Replica::start(&redis.url()).await;
    let b = Replica::start(&redis.url()).await;
    // A third, whose local cache has not seen the position either.
    let c = Replica::start(&redis.url()).await;
    let request = json!({"game": "tictactoe", "board": ["XX.", "OO.", "..."], "budget_ms": 1000});
    let (status, first, _) = a.post_move(&request).await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(first["move"]["col"], 2, "X wins in the top row: {first}");
    wait_for_keys(&redis, 1).await;
    let key = only_key(&redis);
    let honest = stored_value(&redis, &key);
    let mut forged = honest.clone();
    forged["best"] = json!([2, 2]);
    forged["score"] = json!(0);
    forged["proof"] = Value::Null;
    forged["pv"] = json!([[2, 2]]);
    forged["iterations"] = json!([]);
    forged["depth"] = json!(0);
    forged["stop_reason"] = json!("time");
    forged["elapsed_us"] = json!(22);
    forged["window_us"] = json!(1_000_000);
    forge(&redis, &key, &forged);
    let (status, second, _) = b.post_move(&request).await;
    assert_eq!(status, 200, "{second}");
    assert_eq!(second["cached"], false, "{second}");
    assert_eq!(second["move"], first["move"], "{second}");
    let metrics = b.metrics().await;
    assert!(
        metrics
            .contains(r#"kibitz_shared_cache_refused_total{game="tictactoe",reason="counters"} 1"#),
        "{metrics}"
    );

    // The same missed win with a consistent time: refused because the position is solved.
    for _ in 0..200 {
        if stored_value(&redis, &key)["best"] != json!([2, 2]) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    forged["elapsed_us"] = json!(1_000_000);
    forge(&redis, &key, &forged);
    let (status, third, _) = c.post_move(&request).await;
    assert_eq!(status, 200, "{third}");
    assert_eq!(third["cached"], false, "{third}");
    assert_eq!(third["move"], first["move"], "{third}");
    let metrics = c.metrics().await;
    assert!(
        metrics.contains(r#"kibitz_shared_cache_refused_total{game="tictactoe",reason="exact"} 1"#),
        "{metrics}"
    );
    assert!(!metrics.contains(r#"kibitz_shared_cache_hits_total{game="tictactoe"}"#));
}
