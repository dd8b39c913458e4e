//! Prometheus metrics, rendered as OpenMetrics text by `GET /metrics`.
//!
//! Every label takes its value from a closed set (route templates, compiled-in game names,
//! status codes, fixed reasons), never from request text, so the number of series, and with it
//! the memory the registry takes, is bounded whatever clients send.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// Labels of an HTTP request: the route template and the status code. A `&'static str`, as
/// the route templates are, so that counting a request allocates nothing.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RouteLabels {
    pub route: &'static str,
    pub status: u16,
}

/// The route template of an HTTP request.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RouteLabel {
    pub route: &'static str,
}

/// Labels of a move request: the game (a served game's name or `unknown`) and the status.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct MoveLabels {
    pub game: String,
    pub status: u16,
}

/// The game a search or cache lookup was for.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct GameLabel {
    pub game: String,
}

/// Why a request was shed.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ReasonLabel {
    pub reason: String,
}

fn latency_histogram() -> Histogram {
    // Fine around common budgets, so "budget + 10 ms" can be read off the buckets.
    Histogram::new([
        0.001, 0.002, 0.005, 0.010, 0.015, 0.020, 0.025, 0.030, 0.040, 0.050, 0.075, 0.100, 0.150,
        0.200, 0.250, 0.300, 0.500, 0.750, 1.0, 1.25, 1.5, 2.0, 3.0, 5.0, 10.0, 30.0, 60.0, 120.0,
    ])
}

fn depth_histogram() -> Histogram {
    Histogram::new([
        1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 16.0, 20.0, 24.0, 32.0, 48.0, 64.0,
    ])
}

fn nodes_histogram() -> Histogram {
    // 10 .. 10^10 nodes.
    Histogram::new(exponential_buckets(10.0, 10.0, 10))
}

/// Every metric the service keeps. All members are atomics inside (prometheus-client), so a
/// shared `Arc<Metrics>` is updated from handlers and worker threads without locks of ours.
pub struct Metrics {
    /// The registry all metrics below are registered in; only read by [`Metrics::render`].
    registry: Registry,
    pub http_requests: Family<RouteLabels, Counter>,
    pub http_duration: Family<RouteLabel, Histogram>,
    pub move_requests: Family<MoveLabels, Counter>,
    pub move_duration: Family<GameLabel, Histogram>,
    pub search_depth: Family<GameLabel, Histogram>,
    pub search_nodes: Family<GameLabel, Histogram>,
    pub cache_hits: Family<GameLabel, Counter>,
    pub cache_misses: Family<GameLabel, Counter>,
    pub searches_in_flight: Gauge,
    pub searches_cancelled: Counter,
    pub rejections: Family<ReasonLabel, Counter>,
    pub search_panics: Counter,
    /// The shared cache's (Redis) metrics, `kibitz_shared_cache_*`.
    pub shared_cache: super::shared_cache::SharedCacheMetrics,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("kibitz");
        let http_requests = Family::<RouteLabels, Counter>::default();
        registry.register(
            "http_requests",
            "HTTP requests answered, by route template and status",
            http_requests.clone(),
        );
        let http_duration =
            Family::<RouteLabel, Histogram>::new_with_constructor(latency_histogram as fn() -> _);
        registry.register(
            "http_request_duration_seconds",
            "HTTP request latency, by route template",
            http_duration.clone(),
        );
        let move_requests = Family::<MoveLabels, Counter>::default();
        registry.register(
            "move_requests",
            "POST /move requests answered, by game and status",
            move_requests.clone(),
        );
        let move_duration =
            Family::<GameLabel, Histogram>::new_with_constructor(latency_histogram as fn() -> _);
        registry.register(
            "move_duration_seconds",
            "POST /move latency from arrival to answer, by game",
            move_duration.clone(),
        );
        let search_depth =
            Family::<GameLabel, Histogram>::new_with_constructor(depth_histogram as fn() -> _);
        registry.register(
            "search_depth",
            "Deepest completed iteration of each search, by game",
            search_depth.clone(),
        );
        let search_nodes =
            Family::<GameLabel, Histogram>::new_with_constructor(nodes_histogram as fn() -> _);
        registry.register(
            "search_nodes",
            "Nodes visited by each search, by game",
            search_nodes.clone(),
        );
        let cache_hits = Family::<GameLabel, Counter>::default();
        registry.register(
            "cache_hits",
            "Answers served from the answer cache, by game",
            cache_hits.clone(),
        );
        let cache_misses = Family::<GameLabel, Counter>::default();
        registry.register(
            "cache_misses",
            "Requests the answer cache could not serve, by game",
            cache_misses.clone(),
        );
        let searches_in_flight = Gauge::default();
        registry.register(
            "searches_in_flight",
            "Searches running on a worker now",
            searches_in_flight.clone(),
        );
        let searches_cancelled = Counter::default();
        registry.register(
            "searches_cancelled",
            "Searches stopped because their client went away",
            searches_cancelled.clone(),
        );
        let rejections = Family::<ReasonLabel, Counter>::default();
        registry.register(
            "rejections",
            "Requests shed with 503, by reason (queue_full, no_time, late)",
            rejections.clone(),
        );
        let search_panics = Counter::default();
        registry.register(
            "search_panics",
            "Searches that panicked (answered 500; the worker survives)",
            search_panics.clone(),
        );
        let shared_cache = super::shared_cache::SharedCacheMetrics::register(
            registry.sub_registry_with_prefix("shared_cache"),
        );
        Metrics {
            registry,
            http_requests,
            http_duration,
            move_requests,
            move_duration,
            search_depth,
            search_nodes,
            cache_hits,
            cache_misses,
            searches_in_flight,
            searches_cancelled,
            rejections,
            search_panics,
            shared_cache,
        }
    }

    /// Counts a request shed for `reason`.
    pub fn rejection(&self, reason: &str) {
        self.rejections
            .get_or_create(&ReasonLabel {
                reason: reason.to_owned(),
            })
            .inc();
    }

    /// The OpenMetrics text of every metric.
    pub fn render(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}
