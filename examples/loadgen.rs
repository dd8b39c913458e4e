//! An open-loop load generator for `POST /move` that reports latency per status, so the
//! latency promise (no 200 later than budget + 10 ms) can be read off directly.
//!
//! Requests leave at a fixed rate whatever the server does (open loop), and each latency is
//! measured from the moment the request was due, not sent (latency correction, as oha's
//! `--latency-correction`), so a stalled client cannot hide queueing.
//!
//! ```sh
//! cargo run --release --example loadgen -- http://127.0.0.1:18090/move 200 20 \
//!   '{"game":"tictactoe","board":["...","...","..."],"algorithm":"minimax","analysis":true,"budget_ms":20}'
//! ```
//! Arguments: URL, requests per second, seconds, JSON body. Loopback targets only.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use clap::Parser;

/// `loadgen`'s arguments, in order.
#[derive(Parser)]
struct Args {
    /// The `POST /move` URL (loopback only).
    url: String,
    /// Requests a second.
    rate: f64,
    /// How long to send.
    seconds: f64,
    /// The JSON body of every request.
    body: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Args {
        url,
        rate,
        seconds,
        body,
    } = Args::parse();
    if !url.starts_with("http://127.") && !url.starts_with("http://localhost") {
        eprintln!("loadgen only targets the loopback interface");
        std::process::exit(2);
    }
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(1024)
        .build()?;
    let total = (rate * seconds) as usize;
    let interval = Duration::from_secs_f64(1.0 / rate);
    let start = Instant::now();
    let mut tasks = Vec::with_capacity(total);
    for i in 0..total {
        let due = start + interval * i as u32;
        tokio::time::sleep_until(due.into()).await;
        let client = client.clone();
        let url = url.clone();
        let body = body.clone();
        tasks.push(tokio::spawn(async move {
            let result = client
                .post(&url)
                .header("content-type", "application/json")
                .body(body)
                .timeout(Duration::from_secs(10))
                .send()
                .await;
            let status = match result {
                Ok(response) => {
                    let status = response.status().as_u16();
                    let _ = response.bytes().await;
                    status
                }
                Err(_) => 0,
            };
            (status, due.elapsed())
        }));
    }
    let mut by_status: BTreeMap<u16, Vec<Duration>> = BTreeMap::new();
    for task in tasks {
        let (status, latency) = task.await?;
        by_status.entry(status).or_default().push(latency);
    }
    let achieved = total as f64 / start.elapsed().as_secs_f64();
    println!("sent {total} at {rate}/s for {seconds}s ({achieved:.0}/s achieved)");
    for (status, mut latencies) in by_status {
        latencies.sort();
        let pct = |p: f64| {
            let i = ((latencies.len() as f64 * p).ceil() as usize).clamp(1, latencies.len()) - 1;
            latencies[i].as_secs_f64() * 1000.0
        };
        println!(
            "status {status}: {n} ({share:.1} %)  p50 {p50:.1} ms  p99 {p99:.1} ms  max {max:.1} ms",
            n = latencies.len(),
            share = 100.0 * latencies.len() as f64 / total as f64,
            p50 = pct(0.50),
            p99 = pct(0.99),
            max = pct(1.0),
        );
    }
    Ok(())
}
