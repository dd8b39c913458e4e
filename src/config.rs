//! Server configuration: command-line flags, each with a `KIBITZ_*` environment fallback.
//!
//! Every knob that bounds memory or time lives here, so the memory figure in docs/operations.md
//! can be computed from this struct alone: `tables` (one per game, `table_mb` each), the answer
//! cache (`cache_entries` and `cache_mb`), and the in-flight requests (`workers + queue`, each holding
//! at most `max_body_bytes` of body).
//!
//! Table and cache sizes not set explicitly follow the memory limit of the container the
//! process runs in (cgroup v2 `memory.max`, v1 `memory.limit_in_bytes`), as the worker count
//! follows its CPU quota: [`MemorySizing::for_limit`] is the rule, a pure function of the limit,
//! so that a small pod is never OOM-killed by the defaults.

use std::net::SocketAddr;

use clap::{Parser, ValueEnum};

/// How the server is run. Parse with [`Config::parse`] (flags, then `KIBITZ_*` variables).
#[derive(Clone, Debug, Parser)]
#[command(name = "kibitz", version, about)]
pub struct Config {
    /// Address to listen on.
    #[arg(long, env = "KIBITZ_ADDR", default_value = "127.0.0.1:8080")]
    pub addr: SocketAddr,

    /// Search worker threads (0 = one per core). More workers than cores break the latency
    /// promise: each search is CPU-bound for its whole budget, so extra workers only slice the
    /// same cores thinner and every answer comes late; the server warns at start.
    #[arg(long, env = "KIBITZ_WORKERS", default_value_t = 0)]
    pub workers: usize,

    /// Requests allowed to wait for a worker beyond those running; more are shed with 503.
    #[arg(long, env = "KIBITZ_QUEUE", default_value_t = 64)]
    pub queue: usize,

    /// Transposition table size per game, in MiB (tic-tac-toe takes at most 1). Default: 64,
    /// less under a container memory limit below 512 MiB (see docs/operations.md, "Memory").
    #[arg(long, env = "KIBITZ_TABLE_MB")]
    pub table_mb: Option<usize>,

    /// Answers kept in the answer cache (0 disables it).
    #[arg(long, env = "KIBITZ_CACHE_ENTRIES", default_value_t = 10_000)]
    pub cache_entries: usize,

    /// Memory the answer cache may use, in MiB, whatever the number of entries. Default: 16,
    /// less under a container memory limit below 512 MiB (see docs/operations.md, "Memory").
    #[arg(long, env = "KIBITZ_CACHE_MB")]
    pub cache_mb: Option<usize>,

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

    /// Redis URL of the answer cache shared by replicas (`redis://host:6379/`, `rediss://` for
    /// TLS; credentials may be in it, or below); unset: none.
    #[arg(long, env = "KIBITZ_REDIS_URL", hide_env_values = true)]
    pub redis_url: Option<String>,

    /// Redis ACL user, replacing the URL's (default: the URL's, else Redis' `default`).
    #[arg(long, env = "KIBITZ_REDIS_USERNAME")]
    pub redis_username: Option<String>,

    /// Redis password, replacing the URL's. Prefer the environment (a Kubernetes Secret) to
    /// the flag, which other users of the machine can read in the process list.
    #[arg(long, env = "KIBITZ_REDIS_PASSWORD", hide_env_values = true)]
    pub redis_password: Option<Secret>,

    /// PEM file of the certificates to trust for a `rediss://` Redis, instead of the Mozilla
    /// roots built into the binary (a private CA).
    #[arg(long, env = "KIBITZ_REDIS_CA_FILE")]
    pub redis_ca_file: Option<std::path::PathBuf>,

    /// Deadline of every Redis call, in milliseconds; a slower Redis is skipped.
    #[arg(long, env = "KIBITZ_REDIS_TIMEOUT_MS", default_value_t = 5)]
    pub redis_timeout_ms: u64,

    /// Seconds an answer stays in Redis.
    #[arg(long, env = "KIBITZ_REDIS_TTL_S", default_value_t = 3600)]
    pub redis_ttl_s: u64,

    /// Largest answer stored in (or read from) Redis, in bytes.
    #[arg(long, env = "KIBITZ_REDIS_MAX_VALUE_BYTES", default_value_t = 64 * 1024)]
    pub redis_max_value_bytes: usize,

    /// Most items (positions and games) in one `POST /analyses` batch; more get 422.
    #[arg(long, env = "KIBITZ_BATCH_MAX_ITEMS", default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..))]
    pub batch_max_items: u64,

    /// Most search time one batch may ask for, in ms: the sum of its items' budgets (a game's
    /// is its whole review's); more gets 422.
    #[arg(
        long,
        env = "KIBITZ_BATCH_MAX_TOTAL_BUDGET_MS",
        default_value_t = 600_000
    )]
    pub batch_max_total_budget_ms: u64,

    /// Batches one client (its identity: its API key, else its address) may have queued or
    /// running at once; one more gets 429.
    #[arg(long, env = "KIBITZ_BATCH_MAX_IN_FLIGHT", default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..))]
    pub batch_max_in_flight: u64,

    /// Seconds a batch's status and results are kept after its last result (then 404).
    #[arg(long, env = "KIBITZ_BATCH_RESULT_TTL_S", default_value_t = 3600, value_parser = clap::value_parser!(u64).range(1..))]
    pub batch_result_ttl_s: u64,

    /// Largest `POST /analyses` body, in bytes (a position is about 300 bytes of JSON).
    #[arg(long, env = "KIBITZ_BATCH_MAX_BODY_BYTES", default_value_t = 4 * 1024 * 1024)]
    pub batch_max_body_bytes: usize,

    /// Most batch items queued at once over the whole deployment (this replica's, or every
    /// replica's together with Redis); a batch that would pass it gets 503 and `Retry-After`.
    #[arg(long, env = "KIBITZ_BATCH_MAX_QUEUED_ITEMS", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub batch_max_queued_items: u64,

    /// Most bytes of batch data stored at once (queued items, re-serialised compactly, and
    /// results kept for `KIBITZ_BATCH_RESULT_TTL_S`), in process or in Redis; a batch that would
    /// pass it gets 503 and `Retry-After`. With Redis, keep it well under `maxmemory` less
    /// the answer cache's share: batch keys are never evicted, so this is what bounds them.
    #[arg(long, env = "KIBITZ_BATCH_MAX_STORED_BYTES", default_value_t = 16 * 1024 * 1024, value_parser = clap::value_parser!(u64).range(1..))]
    pub batch_max_stored_bytes: u64,

    /// Most search time queued at once, in ms: the sum of the queued items' budgets over the
    /// whole deployment; a batch that would pass it gets 503 and `Retry-After`.
    #[arg(long, env = "KIBITZ_BATCH_MAX_QUEUED_WORK_MS", default_value_t = 3_600_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub batch_max_queued_work_ms: u64,

    /// Key of the HMAC that signs batch queue entries and results in Redis (any text, at
    /// least 16 bytes; from a Kubernetes Secret): an entry or result without a valid
    /// signature is refused. Unset, entries are checked for shape only.
    #[arg(long, env = "KIBITZ_BATCH_ENTRY_KEY", hide_env_values = true)]
    pub batch_entry_key: Option<Secret>,

    /// Times a batch item is handed to a worker before it is marked `failed` (a replica that
    /// died holding it, a search that panicked, an entry that does not decode).
    #[arg(long, env = "KIBITZ_BATCH_MAX_ATTEMPTS", default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..))]
    pub batch_max_attempts: u64,

    /// Milliseconds a batch item held by a replica that stopped answering for it (no
    /// heartbeat) waits before another replica takes it over (Redis only).
    #[arg(long, env = "KIBITZ_BATCH_RECLAIM_IDLE_MS", default_value_t = 5_000, value_parser = clap::value_parser!(u64).range(100..))]
    pub batch_reclaim_idle_ms: u64,

    /// Search workers batch items leave idle for `POST /move` and `/review` (at most the
    /// workers less one: a one-worker replica still analyses batches when idle).
    #[arg(long, env = "KIBITZ_BATCH_SPARE_WORKERS", default_value_t = 1)]
    pub batch_spare_workers: usize,

    /// This replica's name in batch results (`replica`) and as a Redis consumer; default:
    /// the host name and the port.
    #[arg(long, env = "KIBITZ_REPLICA_NAME")]
    pub replica_name: Option<String>,

    /// Batch event streams (`GET /analyses/{id}` with `Accept: text/event-stream`) one replica
    /// serves at once; one more gets 503 and `Retry-After`. The watchers of one batch share one
    /// reader of the store, so this bounds connections, not store reads.
    #[arg(long, env = "KIBITZ_BATCH_MAX_WATCHERS", default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..))]
    pub batch_max_watchers: u64,

    /// Origins allowed by CORS, comma-separated; `*` allows any; empty sends no CORS headers.
    #[arg(long, env = "KIBITZ_CORS_ORIGINS", value_delimiter = ',')]
    pub cors_origins: Vec<String>,

    /// A file of API keys, one a line (`<key> [<name> [<class>]]`); when set, every route
    /// that does work needs `Authorization: Bearer <key>` (401 without a valid one), and a
    /// client is its key. Read once at start (a changed file takes a restart).
    #[arg(long, env = "KIBITZ_API_KEYS_FILE")]
    pub api_keys_file: Option<std::path::PathBuf>,

    /// Proxies (CIDRs, comma-separated) whose forwarded client address (`Forwarded`, else
    /// `X-Forwarded-For`) is believed; without keys a client is its address.
    #[arg(long, env = "KIBITZ_TRUSTED_PROXIES", value_delimiter = ',')]
    pub trusted_proxies: Vec<ipnet::IpNet>,

    /// Percent of the search workers one client's searches may hold while another client
    /// may need one (at least one worker); beyond it a search runs only on a worker idle now
    /// and gives it back, answering with what it found, when another client's request needs
    /// it, else 429.
    #[arg(long, env = "KIBITZ_CLIENT_SHARE_PERCENT", default_value_t = 50, value_parser = clap::value_parser!(u8).range(1..=100))]
    pub client_share_percent: u8,
}

/// A setting that must not be printed (a password): `Debug` shows `<redacted>`, and `--help`
/// does not show its environment value (`hide_env_values`).
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// The value itself, for the one place that uses it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::str::FromStr for Secret {
    type Err = std::convert::Infallible;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        Ok(Secret(value.to_owned()))
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
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
            available_cores()
        }
    }

    /// `(workers, cores)` when more workers are configured than the process has cores (its
    /// CPU quota included): the admission arithmetic assumes a worker runs at full speed until
    /// its deadline, which then no longer holds.
    pub fn oversubscribed_workers(&self) -> Option<(usize, usize)> {
        let cores = available_cores();
        (self.worker_count() > cores).then_some((self.worker_count(), cores))
    }

    /// Workers batch items may use: all but the spare ones, at least one.
    pub fn batch_workers(&self) -> usize {
        let workers = self.worker_count();
        workers - self.batch_spare_workers.min(workers - 1)
    }

    /// The replica's name: the configured one, or the host name and the port.
    pub fn replica(&self) -> String {
        self.replica_name.clone().unwrap_or_else(|| {
            let host = std::env::var("HOSTNAME")
                .ok()
                .or_else(|| std::fs::read_to_string("/proc/sys/kernel/hostname").ok())
                .map(|h| h.trim().to_owned())
                .filter(|h| !h.is_empty())
                .unwrap_or_else(|| "kibitz".to_owned());
            format!("{host}:{}", self.addr.port())
        })
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

    /// Table and cache sizes: those set explicitly, the others from the memory limit of the
    /// process's cgroup (the rule of [`MemorySizing::for_limit`]). `full_tables` is the number
    /// of games whose table takes the whole `table_mb`.
    pub fn memory_sizing(&self, full_tables: usize) -> MemorySizing {
        let derived = MemorySizing::for_limit(cgroup_memory_limit(), full_tables);
        MemorySizing {
            table_mb: self.table_mb.unwrap_or(derived.table_mb),
            cache_mb: self.cache_mb.unwrap_or(derived.cache_mb),
            limit_bytes: derived.limit_bytes,
        }
    }

    /// A configuration for tests: a free loopback port, small tables, defaults elsewhere.
    pub fn for_tests() -> Self {
        Config {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            workers: 2,
            queue: 64,
            table_mb: Some(4),
            cache_entries: 1000,
            cache_mb: Some(4),
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
            redis_url: None,
            redis_username: None,
            redis_password: None,
            redis_ca_file: None,
            redis_timeout_ms: 5,
            redis_ttl_s: 3600,
            redis_max_value_bytes: 64 * 1024,
            batch_max_items: 1000,
            batch_max_total_budget_ms: 600_000,
            batch_max_in_flight: 4,
            batch_result_ttl_s: 3600,
            batch_max_body_bytes: 4 * 1024 * 1024,
            batch_max_queued_items: 10_000,
            batch_max_stored_bytes: 16 * 1024 * 1024,
            batch_max_queued_work_ms: 3_600_000,
            batch_entry_key: None,
            batch_max_attempts: 3,
            batch_reclaim_idle_ms: 5_000,
            batch_spare_workers: 1,
            replica_name: None,
            batch_max_watchers: 1024,
            api_keys_file: None,
            trusted_proxies: Vec::new(),
            client_share_percent: 50,
        }
    }
}

/// Table size per game without a memory limit, in MiB.
pub const DEFAULT_TABLE_MB: usize = 64;
/// Answer cache size without a memory limit, in MiB.
pub const DEFAULT_CACHE_MB: usize = 16;
/// What the process takes besides the tables and the cache, in MiB, kept out of the limit
/// first: requests and trees in flight, connections, binary, runtime, stacks (docs/operations.md,
/// "Memory": about 80 MiB with the defaults, rounded up).
pub const RESERVED_MB: u64 = 96;

/// The memory the tables and the answer cache may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemorySizing {
    /// Transposition table per game, MiB.
    pub table_mb: usize,
    /// Answer cache, MiB.
    pub cache_mb: usize,
    /// The cgroup memory limit it was derived from, if any.
    pub limit_bytes: Option<u64>,
}

impl MemorySizing {
    /// The sizing rule. Without a limit: the defaults (64 MiB per table, 16 MiB of cache).
    /// With one: [`RESERVED_MB`] is set aside, and half of what remains goes to the tables and
    /// the cache (the other half is headroom for the allocator and bursts of requests), four
    /// fifths of it to the `full_tables` tables and one fifth to the cache; each size is at
    /// least 1 MiB and never more than its default.
    pub fn for_limit(limit_bytes: Option<u64>, full_tables: usize) -> Self {
        let Some(limit) = limit_bytes else {
            return MemorySizing {
                table_mb: DEFAULT_TABLE_MB,
                cache_mb: DEFAULT_CACHE_MB,
                limit_bytes: None,
            };
        };
        let share_mb = (limit >> 20).saturating_sub(RESERVED_MB) / 2;
        let share_mb = usize::try_from(share_mb).unwrap_or(usize::MAX);
        let tables_mb = share_mb / 5 * 4;
        MemorySizing {
            table_mb: (tables_mb / full_tables.max(1)).clamp(1, DEFAULT_TABLE_MB),
            cache_mb: (share_mb / 5).clamp(1, DEFAULT_CACHE_MB),
            limit_bytes: Some(limit),
        }
    }
}

/// Limits at or above this are "no limit" (cgroup v1 reports an unlimited group as about 2^63).
const UNLIMITED_BYTES: u64 = 1 << 60;

/// Cores this process may use: the machine's, or fewer under a cgroup CPU quota or an
/// affinity mask (the standard library reads both).
fn available_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The memory limit of the process's cgroup, if it has one: the smallest of cgroup v2's
/// `memory.max` and v1's `memory.limit_in_bytes`, read both at the cgroup's own path (a host
/// or a private cgroup namespace) and at the mount's root (a container that sees its group
/// mounted there, as runc does under v1).
pub fn cgroup_memory_limit() -> Option<u64> {
    let membership = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let mut candidates = vec![
        "/sys/fs/cgroup/memory.max".to_owned(),
        "/sys/fs/cgroup/memory/memory.limit_in_bytes".to_owned(),
    ];
    for line in membership.lines() {
        // `hierarchy-id:controllers:path`; v2's line is `0::path`.
        let mut fields = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        if controllers.is_empty() {
            candidates.push(format!("/sys/fs/cgroup{path}/memory.max"));
        } else if controllers.split(',').any(|c| c == "memory") {
            candidates.push(format!("/sys/fs/cgroup/memory{path}/memory.limit_in_bytes"));
        }
    }
    candidates
        .iter()
        .filter_map(|path| parse_memory_limit(&std::fs::read_to_string(path).ok()?))
        .min()
}

/// A cgroup memory limit file's value: bytes, or `None` for `max` and v1's "unlimited".
fn parse_memory_limit(text: &str) -> Option<u64> {
    let bytes: u64 = text.trim().parse().ok()?;
    (bytes < UNLIMITED_BYTES).then_some(bytes)
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
        assert_eq!(config.table_mb, None, "derived from the memory limit");
        assert_eq!(config.cache_mb, None, "derived from the memory limit");
    }

    const MIB: u64 = 1 << 20;

    fn sized(limit_mib: u64) -> (usize, usize) {
        let sizing = MemorySizing::for_limit(Some(limit_mib * MIB), 2);
        (sizing.table_mb, sizing.cache_mb)
    }

    #[test]
    fn no_memory_limit_gives_the_default_sizes() {
        let sizing = MemorySizing::for_limit(None, 2);
        assert_eq!((sizing.table_mb, sizing.cache_mb), (64, 16));
    }

    #[test]
    fn memory_limit_of_512_mib_or_more_keeps_the_defaults() {
        assert_eq!(sized(512), (64, 16));
        assert_eq!(sized(64 * 1024), (64, 16));
    }

    #[test]
    fn smaller_memory_limits_shrink_tables_and_cache() {
        assert_eq!(sized(256), (32, 16));
        assert_eq!(sized(128), (6, 3));
    }

    #[test]
    fn a_memory_limit_below_the_reserve_gives_one_mib_each() {
        assert_eq!(sized(64), (1, 1));
        assert_eq!(sized(0), (1, 1));
    }

    #[test]
    fn derived_sizes_fit_the_limit_with_the_reserve_to_spare() {
        for limit_mib in (100..=2048).step_by(4) {
            let (table_mb, cache_mb) = sized(limit_mib);
            let used = 2 * table_mb as u64 + 1 + cache_mb as u64 + RESERVED_MB;
            assert!(used <= limit_mib, "{limit_mib} MiB: {used} MiB used");
        }
    }

    #[test]
    fn explicit_sizes_win_over_the_memory_limit() {
        let config =
            Config::try_parse_from(["kibitz", "--table-mb", "200", "--cache-mb", "300"]).unwrap();
        let sizing = config.memory_sizing(2);
        assert_eq!((sizing.table_mb, sizing.cache_mb), (200, 300));
    }

    #[test]
    fn cgroup_limit_files_read_max_and_v1_unlimited_as_no_limit() {
        assert_eq!(parse_memory_limit("max\n"), None);
        assert_eq!(parse_memory_limit("9223372036854771712\n"), None);
        assert_eq!(parse_memory_limit("536870912\n"), Some(512 * MIB));
        assert_eq!(parse_memory_limit("garbage"), None);
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
    fn the_redis_password_is_read_from_its_own_setting_and_never_printed() {
        let config = Config::try_parse_from([
            "kibitz",
            "--redis-url",
            "redis://cache:6379/",
            "--redis-username",
            "kibitz",
            "--redis-password",
            "hunter2",
        ])
        .unwrap();
        assert_eq!(config.redis_username.as_deref(), Some("kibitz"));
        assert_eq!(
            config.redis_password.as_ref().map(Secret::expose),
            Some("hunter2")
        );
        let printed = format!("{config:?}");
        assert!(!printed.contains("hunter2"), "{printed}");
    }

    #[test]
    fn client_identity_settings_are_parsed_and_bad_values_refused() {
        let config = Config::try_parse_from([
            "kibitz",
            "--trusted-proxies",
            "10.0.0.0/8,2001:db8::/32",
            "--client-share-percent",
            "25",
            "--api-keys-file",
            "/run/secrets/kibitz/api-keys",
        ])
        .unwrap();
        assert_eq!(config.trusted_proxies.len(), 2);
        assert_eq!(config.client_share_percent, 25);
        assert!(config.api_keys_file.is_some());
        assert_eq!(Config::for_tests().client_share_percent, 50);
        for bad in [
            ["--client-share-percent", "0"],
            ["--client-share-percent", "101"],
            ["--trusted-proxies", "10.0.0.0/33"],
            ["--trusted-proxies", "proxy.example"],
        ] {
            let parsed = Config::try_parse_from(["kibitz", bad[0], bad[1]]);
            assert!(parsed.is_err(), "{bad:?} accepted");
        }
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
