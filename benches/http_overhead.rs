//! What kibitz's HTTP path costs: requests a second of the release server answering
//! tic-tac-toe positions from its answer cache, against a bare axum server in this file that
//! parses the same JSON body into a struct and answers a small JSON.
//!
//! `cargo bench --bench http_overhead [-- --rounds 5 --seconds 5]` starts both servers pinned
//! to one core (`taskset -c 0`) and drives them with wrk on the other core (`taskset -c 1`, 8
//! connections, 2 threads), in alternating rounds (kibitz, bare, kibitz, bare, ...) so that
//! both see the same load from whatever else runs on the machine; it prints every round, the
//! medians, their spread and the ratio kibitz / bare. Two workloads: the same position on
//! every request ("same"), and eight positions in turn through a wrk Lua script ("rotated");
//! each is sent once before the rounds, so every measured answer is a cache hit. Any answer
//! that is not a 200 fails the run. Needs `wrk` and `taskset`; without wrk the bench says so
//! and does nothing. `--kibitz PATH` measures another build of the server (e.g. an older one);
//! `--pad-bare 800` makes the bare server's answer as long as kibitz's, a second bar.
//!
//! `--callgrind N` counts instead of timing: both servers run under `valgrind --tool=callgrind`
//! (the instrumentation off while they start), and after a warm-up N requests (8 connections,
//! a small client in this file) are counted and the instructions a request printed. Counts do not
//! move with the machine's load as rates do; the dumps are left for `callgrind_annotate`.

use std::error::Error;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use clap::Parser;

/// Positions of the "rotated" workload (legal, X to move or O to move); the first is "same".
const POSITIONS: [&str; 8] = [
    r#"["X..",".O.","..."]"#,
    r#"["...","...","..."]"#,
    r#"["X..","...","..."]"#,
    r#"[".X.","...","O.."]"#,
    r#"["XO.",".X.","..O"]"#,
    r#"["X.O",".X.","O.."]"#,
    r#"["XOX","...","..."]"#,
    r#"["O..",".X.","..X"]"#,
];

#[derive(Parser)]
#[command(about = "kibitz's requests a second against a bare axum server's, alternating rounds")]
struct Args {
    /// Rounds per server and workload.
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Seconds per round.
    #[arg(long, default_value_t = 5)]
    seconds: u64,
    /// wrk connections.
    #[arg(long, default_value_t = 8)]
    connections: usize,
    /// wrk threads.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// The core both servers are pinned to.
    #[arg(long, default_value_t = 0)]
    server_core: usize,
    /// The core wrk is pinned to.
    #[arg(long, default_value_t = 1)]
    client_core: usize,
    /// `same`, `rotated` or `both`.
    #[arg(long, default_value = "both")]
    workload: String,
    /// The kibitz server binary (default: the one cargo built with this bench).
    #[arg(long)]
    kibitz: Option<PathBuf>,
    /// Instead of wrk: count each server's instructions a request under callgrind, over this
    /// many requests (needs valgrind).
    #[arg(long)]
    callgrind: Option<usize>,
    /// The bare server's answer carries this many bytes more (a `pad` string, copied in, not
    /// serialised): with about 800 it is as long as kibitz's tic-tac-toe answer, which tells
    /// what the longer answer costs (mostly in the kernel) from what kibitz's own work does.
    #[arg(long, default_value_t = 0)]
    pad_bare: usize,
    /// Internal: serve the bare baseline on this port (the bench starts itself this way).
    #[arg(long, hide = true)]
    serve_baseline: Option<u16>,
    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    if let Some(port) = args.serve_baseline {
        return baseline::serve(port, args.pad_bare);
    }
    let kibitz = args
        .kibitz
        .clone()
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_kibitz")));
    let workloads: Vec<Workload> = match args.workload.as_str() {
        "same" => vec![Workload::Same],
        "rotated" => vec![Workload::Rotated],
        "both" => vec![Workload::Same, Workload::Rotated],
        other => return Err(format!("unknown workload {other:?}: same, rotated or both").into()),
    };
    match args.callgrind {
        Some(requests) => count_instructions(&args, &kibitz, &workloads, requests),
        None => compare_rates(&args, &kibitz, &workloads),
    }
}

/// The two servers' commands on free ports, each run under `launcher` (e.g. taskset).
fn start_servers(
    launcher: &[String],
    kibitz: &Path,
    pad_bare: usize,
) -> Result<[Server; 2], Box<dyn Error>> {
    let launch = |program: &Path| {
        let mut command = Command::new(&launcher[0]);
        command.args(&launcher[1..]).arg(program);
        command
    };
    let kibitz_port = free_port()?;
    let mut kibitz_command = launch(kibitz);
    kibitz_command.env("KIBITZ_ADDR", format!("127.0.0.1:{kibitz_port}"));
    let kibitz_server = Server::start("kibitz", kibitz_port, &mut kibitz_command)?;
    let bare_port = free_port()?;
    let mut bare_command = launch(&std::env::current_exe()?);
    bare_command.args([
        "--serve-baseline",
        &bare_port.to_string(),
        "--pad-bare",
        &pad_bare.to_string(),
    ]);
    let bare_server = Server::start("bare axum", bare_port, &mut bare_command)?;
    Ok([kibitz_server, bare_server])
}

/// wrk's requests a second of both servers, alternating rounds.
fn compare_rates(args: &Args, kibitz: &Path, workloads: &[Workload]) -> Result<(), Box<dyn Error>> {
    if Command::new("wrk").arg("--version").output().is_err() {
        println!("http_overhead: wrk is not installed (apt-get install wrk); nothing measured");
        return Ok(());
    }
    let scripts = std::env::temp_dir().join(format!("kibitz-http-overhead-{}", std::process::id()));
    std::fs::create_dir_all(&scripts)?;
    let launcher = [
        "taskset".to_owned(),
        "-c".to_owned(),
        args.server_core.to_string(),
    ];
    let servers = start_servers(&launcher, kibitz, args.pad_bare)?;
    println!(
        "servers on core {} ({}; bare answers padded by {} bytes), wrk on core {}: {} connections, \
         {} threads, {} rounds of {} s",
        args.server_core,
        kibitz.display(),
        args.pad_bare,
        args.client_core,
        args.connections,
        args.threads,
        args.rounds,
        args.seconds
    );
    for &workload in workloads {
        let script = workload.write_script(&scripts)?;
        // Every position once, checked: from here on kibitz answers from its cache.
        for server in &servers {
            for position in workload.positions() {
                server.check_answer(position)?;
            }
            wrk(args, server.port, &script, 1)?;
        }
        let mut rates = [Vec::new(), Vec::new()];
        for round in 1..=args.rounds {
            for (rates, server) in rates.iter_mut().zip(&servers) {
                let rate = wrk(args, server.port, &script, args.seconds)?;
                println!(
                    "{} round {round}: {:<9} {rate:>9.0} requests/s",
                    workload.name(),
                    server.name
                );
                rates.push(rate);
            }
        }
        let [kibitz_rates, bare_rates] = rates.map(|rates| Summary::of(&rates));
        println!(
            "{}: kibitz median {:.1} k/s (spread {:.1} %), bare axum median {:.1} k/s (spread {:.1} %), ratio {:.2}",
            workload.name(),
            kibitz_rates.median / 1e3,
            kibitz_rates.spread_percent(),
            bare_rates.median / 1e3,
            bare_rates.spread_percent(),
            kibitz_rates.median / bare_rates.median
        );
    }
    drop(servers);
    std::fs::remove_dir_all(&scripts)?;
    Ok(())
}

/// Instructions a request of both servers under callgrind: `requests` requests counted after a
/// warm-up of 500 (the start-up runs with the instrumentation off). Counts, unlike rates, do
/// not move with the machine's load.
fn count_instructions(
    args: &Args,
    kibitz: &Path,
    workloads: &[Workload],
    requests: usize,
) -> Result<(), Box<dyn Error>> {
    let dumps = std::env::temp_dir().join(format!("kibitz-callgrind-{}", std::process::id()));
    std::fs::create_dir_all(&dumps)?;
    let launcher = [
        "valgrind".to_owned(),
        "--tool=callgrind".to_owned(),
        "--instr-atstart=no".to_owned(),
        format!("--callgrind-out-file={}/%p", dumps.display()),
    ];
    let servers = start_servers(&launcher, kibitz, args.pad_bare)?;
    for server in &servers {
        callgrind_control(&["--instr=on", &server.child.id().to_string()])?;
    }
    for &workload in workloads {
        for server in &servers {
            for position in workload.positions() {
                server.check_answer(position)?;
            }
            send_requests(server.port, workload, 500, args.connections)?;
            let pid = server.child.id().to_string();
            callgrind_control(&["--zero", &pid])?;
            send_requests(server.port, workload, requests, args.connections)?;
            callgrind_control(&["--dump", &pid])?;
            let dump = latest_dump(&dumps, &pid)?;
            let instructions = std::fs::read_to_string(&dump)?
                .lines()
                .find_map(|line| line.strip_prefix("summary:"))
                .and_then(|n| n.trim().parse::<u64>().ok())
                .ok_or_else(|| format!("no summary in {}", dump.display()))?;
            println!(
                "{}: {:<9} {:.1} k instructions a request ({requests} requests, {})",
                workload.name(),
                server.name,
                instructions as f64 / requests as f64 / 1e3,
                dump.display()
            );
        }
    }
    Ok(())
}

fn callgrind_control(args: &[&str]) -> Result<(), String> {
    let status = Command::new("callgrind_control")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| format!("running callgrind_control (valgrind): {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("callgrind_control {args:?} failed"))
    }
}

/// The newest dump callgrind wrote for process `pid` (`<pid>.<n>`).
fn latest_dump(dir: &Path, pid: &str) -> Result<PathBuf, Box<dyn Error>> {
    let mut parts: Vec<(u32, PathBuf)> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let part = name.strip_prefix(pid)?.strip_prefix('.')?.parse().ok()?;
            Some((part, entry.path()))
        })
        .collect();
    parts.sort();
    parts
        .pop()
        .map(|(_, path)| path)
        .ok_or_else(|| format!("callgrind wrote no dump for {pid} in {}", dir.display()).into())
}

/// Sends `requests` `/move`s of `workload` over `connections` keep-alive connections, one in
/// flight on each, and insists on 200s.
fn send_requests(
    port: u16,
    workload: Workload,
    requests: usize,
    connections: usize,
) -> Result<(), Box<dyn Error>> {
    let positions = workload.positions();
    let request = |i: usize| {
        let body = body(positions[i % positions.len()]);
        format!(
            "POST /move HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\n\r\n{body}",
            body.len()
        )
    };
    let mut streams = (0..connections.min(requests))
        .map(|_| Ok(BufReader::new(TcpStream::connect(("127.0.0.1", port))?)))
        .collect::<std::io::Result<Vec<_>>>()?;
    let mut sent = 0;
    for stream in &mut streams {
        stream.get_mut().write_all(request(sent).as_bytes())?;
        sent += 1;
    }
    let mut answered = 0;
    while answered < requests {
        for stream in &mut streams {
            if answered == sent {
                break;
            }
            read_answer(stream)?;
            answered += 1;
            if sent < requests {
                stream.get_mut().write_all(request(sent).as_bytes())?;
                sent += 1;
            }
        }
    }
    Ok(())
}

/// Reads one response (a 200 with `Content-Length`) off a keep-alive connection.
fn read_answer(stream: &mut BufReader<TcpStream>) -> Result<(), Box<dyn Error>> {
    let mut line = String::new();
    stream.read_line(&mut line)?;
    if !line.starts_with("HTTP/1.1 200") {
        return Err(format!("not a 200: {line}").into());
    }
    let mut length = None;
    loop {
        line.clear();
        stream.read_line(&mut line)?;
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse::<usize>().ok();
        }
    }
    let length = length.ok_or("an answer without Content-Length")?;
    stream.read_exact(&mut vec![0; length])?;
    Ok(())
}

#[derive(Clone, Copy)]
enum Workload {
    Same,
    Rotated,
}

impl Workload {
    fn name(self) -> &'static str {
        match self {
            Workload::Same => "same",
            Workload::Rotated => "rotated",
        }
    }

    fn positions(self) -> &'static [&'static str] {
        match self {
            Workload::Same => &POSITIONS[..1],
            Workload::Rotated => &POSITIONS,
        }
    }

    /// The wrk script: one fixed request (wrk then builds it once), or the positions in turn.
    fn write_script(self, dir: &Path) -> std::io::Result<PathBuf> {
        let mut lua = String::from(
            "wrk.method = \"POST\"\nwrk.headers[\"Content-Type\"] = \"application/json\"\n",
        );
        match self {
            Workload::Same => lua.push_str(&format!("wrk.body = [[{}]]\n", body(POSITIONS[0]))),
            Workload::Rotated => {
                lua.push_str("local bodies = {\n");
                for position in POSITIONS {
                    lua.push_str(&format!("  [[{}]],\n", body(position)));
                }
                lua.push_str(
                    "}\nlocal i = 0\nrequest = function()\n  i = i % #bodies + 1\n  \
                     return wrk.format(nil, \"/move\", nil, bodies[i])\nend\n",
                );
            }
        }
        let path = dir.join(format!("{}.lua", self.name()));
        std::fs::write(&path, lua)?;
        Ok(path)
    }
}

fn body(position: &str) -> String {
    format!(r#"{{"game":"tictactoe","board":{position}}}"#)
}

/// Runs wrk for `seconds` against `/move` on `port`; its requests a second. Fails on any answer
/// other than a 200 and on socket errors, so a server cannot look fast by refusing.
fn wrk(args: &Args, port: u16, script: &Path, seconds: u64) -> Result<f64, String> {
    let output = Command::new("taskset")
        .args(["-c", &args.client_core.to_string(), "wrk"])
        .arg(format!("-t{}", args.threads))
        .arg(format!("-c{}", args.connections))
        .arg(format!("-d{seconds}s"))
        .arg("-s")
        .arg(script)
        .arg(format!("http://127.0.0.1:{port}/move"))
        .output()
        .map_err(|e| format!("running wrk: {e}"))?;
    let text = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() || text.contains("Non-2xx") || text.contains("Socket errors") {
        return Err(format!(
            "wrk against port {port} did not get only 200s:\n{text}"
        ));
    }
    text.lines()
        .find_map(|line| line.strip_prefix("Requests/sec:"))
        .and_then(|rate| rate.trim().parse().ok())
        .ok_or_else(|| format!("no Requests/sec in wrk's output:\n{text}"))
}

struct Summary {
    median: f64,
    min: f64,
    max: f64,
}

impl Summary {
    fn of(rates: &[f64]) -> Summary {
        let mut sorted = rates.to_vec();
        sorted.sort_by(f64::total_cmp);
        Summary {
            median: sorted[sorted.len() / 2],
            min: sorted[0],
            max: sorted[sorted.len() - 1],
        }
    }

    /// (max - min) / median.
    fn spread_percent(&self) -> f64 {
        (self.max - self.min) / self.median * 100.0
    }
}

fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// A server process, killed when dropped.
struct Server {
    name: &'static str,
    port: u16,
    child: Child,
}

impl Server {
    fn start(name: &'static str, port: u16, command: &mut Command) -> Result<Server, String> {
        let child = command
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("starting {name}: {e}"))?;
        let server = Server { name, port, child };
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            // Valgrind takes a while.
            if started.elapsed() > Duration::from_secs(60) {
                return Err(format!("{name} did not listen on port {port} within 60 s"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(server)
    }

    /// Posts `position` once and insists on a 200.
    fn check_answer(&self, position: &str) -> Result<(), String> {
        let body = body(position);
        let request = format!(
            "POST /move HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let mut answer = String::new();
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).map_err(|e| e.to_string())?;
        stream
            .write_all(request.as_bytes())
            .and_then(|()| stream.read_to_string(&mut answer))
            .map_err(|e| e.to_string())?;
        if answer.starts_with("HTTP/1.1 200") {
            Ok(())
        } else {
            Err(format!("{} answered {position} with:\n{answer}", self.name))
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The bar: axum as its guide shows it, parsing the body kibitz parses.
mod baseline {
    use std::sync::OnceLock;

    use axum::Json;
    use axum::Router;
    use axum::http::{StatusCode, header};
    use axum::response::{IntoResponse, Response};
    use axum::routing::post;
    use serde::{Deserialize, Serialize};

    /// The fields of kibitz's `MoveRequest` (all but `game` and `board` optional).
    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct MoveRequest {
        game: String,
        board: Vec<String>,
        to_move: Option<String>,
        budget_ms: Option<u64>,
        max_depth: Option<u32>,
        max_nodes: Option<u64>,
        algorithm: Option<String>,
        #[serde(default)]
        analysis: bool,
        level: Option<u32>,
        seed: Option<u64>,
        #[serde(default)]
        deterministic: bool,
    }

    #[derive(Serialize)]
    struct Cell {
        row: usize,
        col: usize,
    }

    #[derive(Serialize)]
    struct MoveResponse {
        game: String,
        #[serde(rename = "move")]
        mv: Cell,
        score: i32,
        cached: bool,
    }

    /// `--pad-bare`'s bytes.
    static PAD: OnceLock<String> = OnceLock::new();

    async fn suggest_move(Json(request): Json<MoveRequest>) -> Response {
        let free = request
            .board
            .iter()
            .enumerate()
            .find_map(|(row, line)| line.find('.').map(|col| Cell { row, col }))
            .unwrap_or(Cell { row: 0, col: 0 });
        let answer = MoveResponse {
            game: request.game,
            mv: free,
            score: 0,
            cached: true,
        };
        let pad = PAD.get().map_or("", String::as_str);
        if pad.is_empty() {
            return Json(answer).into_response();
        }
        // The pad is copied in as it is, not serialised: it stands for bytes on the wire only.
        let Ok(mut body) = serde_json::to_vec(&answer) else {
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        };
        body.pop();
        body.extend_from_slice(br#","pad":""#);
        body.extend_from_slice(pad.as_bytes());
        body.extend_from_slice(br#""}"#);
        ([(header::CONTENT_TYPE, "application/json")], body).into_response()
    }

    pub fn serve(port: u16, pad: usize) -> Result<(), Box<dyn std::error::Error>> {
        PAD.get_or_init(|| "x".repeat(pad));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?;
        runtime.block_on(async {
            let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
            let app = Router::new().route("/move", post(suggest_move));
            axum::serve(listener, app).await
        })?;
        Ok(())
    }
}
