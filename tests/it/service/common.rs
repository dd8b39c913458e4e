//! Helpers shared by the HTTP tests: building the app in process, sending JSON through
//! `oneshot`, starting a real server on port 0, and a slow test game for timing tests.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::Value;
use tokio::sync::oneshot;
use tower::ServiceExt;

use kibitz::api::{AppState, app};
use kibitz::config::Config;
use kibitz::engine::{Game, Move, Score, Side, Status};
use kibitz::games::{BoardGame, Cell, Grid, PositionError};
use kibitz::server::{build_state, serve};
use kibitz::service::games::{GameInfo, RulesError, ServedGame, Thresholds, no_rules};
use kibitz::service::{MoveQuery, Service};

pub fn state_with(config: Config) -> AppState {
    build_state(config).expect("state")
}

pub fn state() -> AppState {
    state_with(Config::for_tests())
}

pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Value,
    pub text: String,
}

pub async fn send(router: Router, request: Request<Body>) -> Reply {
    let response = router.oneshot(request).await.expect("infallible");
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    Reply {
        status,
        headers,
        body,
        text,
    }
}

pub fn post_json_request(path: &str, body: &Value) -> Request<Body> {
    Request::post(path)
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

pub async fn post_move(state: &AppState, body: Value) -> Reply {
    send(app(state.clone()), post_json_request("/move", &body)).await
}

pub async fn get(state: &AppState, path: &str) -> Reply {
    send(
        app(state.clone()),
        Request::get(path).body(Body::empty()).unwrap(),
    )
    .await
}

pub fn content_type(reply: &Reply) -> &str {
    reply
        .headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

/// A server on a free loopback port; dropping `stop` shuts it down gracefully.
pub struct Running {
    pub addr: SocketAddr,
    pub state: AppState,
    pub stop: Option<oneshot::Sender<()>>,
    pub task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Running {
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

pub async fn start_server(config: Config) -> Running {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let state = state_with(config);
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(serve(listener, state.clone(), 256, async {
        let _ = stopped.await;
    }));
    Running {
        addr,
        state,
        stop: Some(stop),
        task,
    }
}

/// A query for `game` with `board` and budget, arriving now.
pub fn query(game: &str, board: &[&str], budget_ms: u64) -> MoveQuery {
    MoveQuery {
        game: game.to_owned(),
        board: board.iter().map(|s| s.to_string()).collect(),
        moves: None,
        to_move: None,
        budget_ms: Some(budget_ms),
        max_depth: None,
        max_nodes: None,
        algorithm: Default::default(),
        analysis: false,
        rules: None,
        style: Default::default(),
        arrival: Instant::now(),
        progress: None,
        caller: Default::default(),
        root: Default::default(),
        multipv: None,
    }
}

pub fn service(workers: usize, queue: usize) -> Service {
    let config = Config {
        workers,
        queue,
        ..Config::for_tests()
    };
    state_with(config).service
}

/// A game that never ends within a search: 8 moves a ply for 60 plies, evaluated by a hash
/// so alpha-beta cannot prune it all. Every search on it runs until a limit stops it.
#[derive(Clone, Debug, Default)]
pub struct SlowGame {
    hashes: Vec<u64>,
}

impl SlowGame {
    fn current(&self) -> u64 {
        self.hashes.last().copied().unwrap_or(0x1234_5678)
    }
}

impl Game for SlowGame {
    fn move_space(&self) -> usize {
        8
    }
    fn hash(&self) -> u64 {
        self.current()
    }
    fn side_to_move(&self) -> Side {
        if self.hashes.len().is_multiple_of(2) {
            Side::First
        } else {
            Side::Second
        }
    }
    fn plies_played(&self) -> u32 {
        self.hashes.len() as u32
    }
    fn legal_moves(&self, out: &mut Vec<Move>) {
        if self.hashes.len() < 60 {
            out.extend((0..8).map(Move));
        }
    }
    fn make(&mut self, mv: Move) {
        let next = (self.current() ^ (u64::from(mv.0) + 1)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.hashes.push(next);
    }
    fn unmake(&mut self, _mv: Move) {
        self.hashes.pop();
    }
    fn status(&self) -> Status {
        if self.hashes.len() >= 60 {
            Status::Draw
        } else {
            Status::Ongoing
        }
    }
    fn evaluate(&self) -> Score {
        (self.current() >> 40) as Score % 100
    }
    fn max_remaining_plies(&self) -> u32 {
        60 - self.hashes.len() as u32
    }
}

impl BoardGame for SlowGame {
    type Rules = ();
    const NAME: &'static str = "slow";
    const MAX_SIDE: usize = 3;

    fn from_grid(_grid: &Grid, _to_move: Option<Side>, _rules: &()) -> Result<Self, PositionError> {
        Ok(SlowGame::default())
    }

    fn cell_of(&self, mv: Move) -> Cell {
        Cell {
            row: 0,
            col: mv.index(),
        }
    }
}

impl ServedGame for SlowGame {
    const TABLE_MB_CAP: usize = 1;
    const REVIEW_THRESHOLDS: Thresholds =
        <kibitz::games::tictactoe::TicTacToe as ServedGame>::REVIEW_THRESHOLDS;
    const WDL_MODEL: kibitz::service::wdl::WdlModel = kibitz::service::wdl::TICTACTOE;

    fn parse_rules(rules: Option<&Value>) -> Result<(), RulesError> {
        no_rules(Self::NAME, rules)
    }
    fn rules_key(_rules: &()) -> String {
        String::new()
    }
    fn info() -> GameInfo {
        <kibitz::games::tictactoe::TicTacToe as ServedGame>::info()
    }
}

/// A distinct board for the slow game (its cache key), from an index.
pub fn slow_board(i: usize) -> Vec<String> {
    let mut cells: Vec<char> = ".........".chars().collect();
    for (bit, cell) in cells.iter_mut().enumerate() {
        if i >> bit & 1 == 1 {
            *cell = 'X';
        }
    }
    cells.chunks(3).map(|c| c.iter().collect()).collect()
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// openapi.yaml, parsed once: the contract the responses are checked against.
pub fn spec() -> &'static Value {
    static SPEC: OnceLock<Value> = OnceLock::new();
    SPEC.get_or_init(|| {
        let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/openapi.yaml"))
            .expect("openapi.yaml");
        serde_norway::from_str(&text).expect("openapi.yaml parses")
    })
}
