//! Server configuration: command-line flags, each with a `KIBITZ_*` environment fallback.
//!
//! Every knob that bounds memory or time lives here, so the README's memory figure can be
//! computed from this struct alone: `tables` (one per game, `table_mb` each), the answer cache
//! (`cache_entries` and `cache_mb`), and the in-flight requests (`workers + queue`, each holding
//! at most `max_body_bytes` of body).

use std::net::SocketAddr;

use clap::{Parser, ValueEnum};

/// How the server is run. Parse with [`Config::parse`] (flags, then `KIBITZ_*` variables).
#[derive(Clone, Debug, Parser)]
#[command(name = "kibitz", version, about)]
pub struct Config {
    /// Address to listen on.
    #[arg(long, env = "KIBITZ_ADDR", default_value = "127.0.0.1:8080")]
    pub addr: SocketAddr,

    /// Search worker threads (0 = one per core).
    #[arg(long, env = "KIBITZ_WORKERS", default_value_t = 0)]
    pub workers: usize,

    /// Requests allowed to wait for a worker beyond those running; more are shed with 503.
    #[arg(long, env = "KIBITZ_QUEUE", default_value_t = 64)]
    pub queue: usize,

    /// Transposition table size per game, in MiB (tic-tac-toe takes at most 1).
    #[arg(long, env = "KIBITZ_TABLE_MB", default_value_t = 64)]
    pub table_mb: usize,

    /// Answers kept in the answer cache (0 disables it).
    #[arg(long, env = "KIBITZ_CACHE_ENTRIES", default_value_t = 10_000)]
    pub cache_entries: usize,

    /// Memory the answer cache may use, in MiB, whatever the number of entries.
    #[arg(long, env = "KIBITZ_CACHE_MB", default_value_t = 16)]
    pub cache_mb: usize,

    /// Largest `budget_ms` a request may ask for.
    #[arg(long, env = "KIBITZ_MAX_BUDGET_MS", default_value_t = 60_000)]
    pub max_budget_ms: u64,

    /// Largest request body, in bytes; larger bodies get 413 before they are read.
    #[arg(long, env = "KIBITZ_MAX_BODY_BYTES", default_value_t = 64 * 1024)]
    pub max_body_bytes: usize,

    /// Largest `POST /tree` body, in bytes (a 100,000-node tree is about 0.6 MB as bracket
    /// text, 3 MB as JSON). At most one tree per search worker is evaluated at a time.
    #[arg(long, env = "KIBITZ_TREE_MAX_BODY_BYTES", default_value_t = 4 * 1024 * 1024)]
    pub tree_max_body_bytes: usize,

    /// Most bytes of request bodies being received at once, over all requests; a body that
    /// would cross it gets 503 at once instead of being read.
    #[arg(long, env = "KIBITZ_MAX_BODY_BYTES_IN_FLIGHT", default_value_t = 8 * 1024 * 1024)]
    pub max_body_bytes_in_flight: usize,

    /// Open connections served at once (0 = the descriptor limit less 64, at most 4096);
    /// beyond it the server stops accepting until one closes (the kernel's backlog waits).
    #[arg(long, env = "KIBITZ_MAX_CONNECTIONS", default_value_t = 0)]
    pub max_connections: usize,

    /// Milliseconds a connection may take to send a request's headers, counted from when it
    /// opened or its previous answer was written: also the keep-alive idle timeout.
    #[arg(long, env = "KIBITZ_HEADER_TIMEOUT_MS", default_value_t = 5_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub header_timeout_ms: u64,

    /// Milliseconds a request body may take to arrive once its headers are in (a `/move`
    /// body must also arrive within its budget to be searched).
    #[arg(long, env = "KIBITZ_BODY_TIMEOUT_MS", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub body_timeout_ms: u64,

    /// After SIGTERM: milliseconds the server keeps accepting and answering while `/readyz`
    /// says 503, so load balancers stop sending (0 stops accepting at once).
    #[arg(long, env = "KIBITZ_DRAIN_MS", default_value_t = 5_000)]
    pub drain_ms: u64,

    /// After the drain: milliseconds requests in flight may take to finish; searches still
    /// running then are stopped and answer with their best move so far, and the process exits.
    #[arg(long, env = "KIBITZ_SHUTDOWN_TIMEOUT_MS", default_value_t = 20_000)]
    pub shutdown_timeout_ms: u64,

    /// Percent of its budget a request that is not guaranteed a worker in time may wait,
    /// hoping a running search ends early, before its 503 (0 = 503 at once, the default:
    /// behind a load balancer the client retries elsewhere with its budget nearly whole).
    #[arg(long, env = "KIBITZ_ADMISSION_PATIENCE_PERCENT", default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=75))]
    pub admission_patience_percent: u8,

    /// Log format.
    #[arg(long, env = "KIBITZ_LOG_FORMAT", value_enum, default_value_t = LogFormat::Pretty)]
    pub log_format: LogFormat,

    /// Origins allowed by CORS, comma-separated; `*` allows any; empty sends no CORS headers.
    #[arg(long, env = "KIBITZ_CORS_ORIGINS", value_delimiter = ',')]
    pub cors_origins: Vec<String>,
}

/// How log lines are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable, coloured when on a terminal.
    Pretty,
    /// One JSON object per line, for log collectors.
    Json,
}

impl Config {
    /// Worker threads to start: the configured number, or one per core.
    pub fn worker_count(&self) -> usize {
        if self.workers > 0 {
            self.workers
        } else {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        }
    }

    /// Connections to serve at once for a process allowed `descriptors` open files: the
    /// configured number, or all but 64 descriptors (kept for the listener, logs and the
    /// like), at most 4096, at least 1.
    pub fn connection_limit(&self, descriptors: u64) -> usize {
        if self.max_connections > 0 {
            return self.max_connections;
        }
        let spare = descriptors.saturating_sub(64).clamp(1, 4096);
        usize::try_from(spare).unwrap_or(4096)
    }

    /// A configuration for tests: a free loopback port, small tables, defaults elsewhere.
    pub fn for_tests() -> Self {
        Config {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            workers: 2,
            queue: 64,
            table_mb: 4,
            cache_entries: 1000,
            cache_mb: 4,
            max_budget_ms: 60_000,
            max_body_bytes: 64 * 1024,
            tree_max_body_bytes: 4 * 1024 * 1024,
            max_body_bytes_in_flight: 8 * 1024 * 1024,
            max_connections: 0,
            header_timeout_ms: 5_000,
            body_timeout_ms: 10_000,
            drain_ms: 100,
            shutdown_timeout_ms: 2_000,
            admission_patience_percent: 0,
            log_format: LogFormat::Pretty,
            cors_origins: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_readme() {
        let config = Config::try_parse_from(["kibitz"]).unwrap();
        assert_eq!(config.addr.to_string(), "127.0.0.1:8080");
        assert_eq!(config.max_budget_ms, 60_000);
        assert_eq!(config.max_body_bytes, 65_536);
        assert!(config.worker_count() >= 1);
    }

    #[test]
    fn the_connection_limit_leaves_descriptors_spare_and_is_capped() {
        let config = Config::try_parse_from(["kibitz"]).unwrap();
        assert_eq!(config.connection_limit(1024), 960);
        assert_eq!(config.connection_limit(1_000_000), 4096);
        assert_eq!(config.connection_limit(10), 1);
        let config = Config::try_parse_from(["kibitz", "--max-connections", "50"]).unwrap();
        assert_eq!(config.connection_limit(1024), 50);
    }

    #[test]
    fn cors_origins_split_on_commas() {
        let config = Config::try_parse_from([
            "kibitz",
            "--cors-origins",
            "https://a.example,https://b.example",
        ])
        .unwrap();
        assert_eq!(config.cors_origins.len(), 2);
    }
}
