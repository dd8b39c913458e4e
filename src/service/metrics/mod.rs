//! Prometheus metrics, rendered by `GET /metrics` in either exposition format a scraper reads:
//! OpenMetrics 1.0 or the Prometheus text format 0.0.4 (the API picks one from `Accept`).
//!
//! Both renderings come from the one registry through prometheus-client's own two encoders,
//! so the formats cannot drift apart: the 0.0.4 encoder names a counter's family with its
//! `_total` suffix, writes an info metric as a gauge `..._info`, leaves out `# UNIT`, `# EOF`
//! and exemplars, and escapes `HELP` as 0.0.4 wants (only `\` and newline).
//!
//! Every label takes its value from a closed set (route templates, compiled-in game names,
//! status codes, fixed reasons), never from request text, so the number of series, and with it
//! the memory the registry takes, is bounded whatever clients send. Those sets are compiled in,
//! so the labels are `&'static str`: counting a request allocates nothing.
//!
//! - [`requests`]: guards that count a request or an open stream even when its future is
//!   dropped (a client that went away).
//! - [`shared_cache`]: the shared answer cache's (Redis) metrics.
//! - [`batch`]: batch analyses' metrics (queue depth, reclaimed items, outcomes).
//! - `process`: the `process_*` figures, read from `/proc/self` at each scrape (Linux).

pub mod batch;
pub mod requests;
pub mod shared_cache;

#[cfg(target_os = "linux")]
mod process;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::{Registry, Unit};

pub use requests::{ABANDONED, GaugeGuard, RequestKind, RequestRecord};

/// Labels of an HTTP request: the route template and the status code.
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

/// Labels of a move or review request: the game (a served game's name or `unknown`) and the
/// status it was answered with ([`ABANDONED`] when the client went away first).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct GameStatusLabels {
    pub game: &'static str,
    pub status: u16,
}

/// The game a search or cache lookup was for.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct GameLabel {
    pub game: &'static str,
}

/// Why a request was shed.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ReasonLabel {
    pub reason: &'static str,
}

/// A client class (an API key's configured class, or `address`: never a key or an address)
/// and where its search stood against the client's fair share.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ClientShareLabels {
    pub class: String,
    pub share: &'static str,
}

/// The two text formats `/metrics` speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exposition {
    /// OpenMetrics 1.0, ending `# EOF`.
    OpenMetrics,
    /// The Prometheus text format 0.0.4, which every scraper and parser reads.
    PrometheusText,
}

impl Exposition {
    /// The `Content-Type` of a body in this format.
    pub fn content_type(self) -> &'static str {
        match self {
            Exposition::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
            Exposition::PrometheusText => {
                prometheus_client::encoding::prometheus_text::CONTENT_TYPE
            }
        }
    }
}

/// The game label of a request for `name`: the served game's name, or `unknown` (request
/// text never becomes a label).
pub fn game_label(name: &str) -> &'static str {
    super::games::GAME_NAMES
        .iter()
        .find(|&&known| known == name)
        .copied()
        .unwrap_or("unknown")
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

/// Labels of `kibitz_build_info`: what was built, for telling replicas' versions apart.
fn build_labels() -> Vec<(&'static str, &'static str)> {
    vec![
        ("version", env!("CARGO_PKG_VERSION")),
        (
            "profile",
            if cfg!(debug_assertions) {
                "debug"
            } else {
                "release"
            },
        ),
        ("target_arch", std::env::consts::ARCH),
        ("target_os", std::env::consts::OS),
    ]
}

/// Every metric the service keeps. All members are atomics inside (prometheus-client), so a
/// shared `Arc<Metrics>` is updated from handlers and worker threads without locks of ours.
pub struct Metrics {
    /// The registry all metrics below are registered in; only read by [`Metrics::render_in`].
    /// Its root holds the `process_*` collector, its `kibitz` sub-registry the rest.
    registry: Registry,
    pub http_requests: Family<RouteLabels, Counter>,
    pub http_duration: Family<RouteLabel, Histogram>,
    /// Connections open now (accepted and not yet closed).
    pub http_connections_open: Gauge,
    /// Server-Sent Event streams whose body is being sent, by route.
    pub event_streams_open: Family<RouteLabel, Gauge>,
    pub move_requests: Family<GameStatusLabels, Counter>,
    pub move_duration: Family<GameLabel, Histogram>,
    pub review_requests: Family<GameStatusLabels, Counter>,
    pub review_duration: Family<GameLabel, Histogram>,
    /// Plies judged by reviews, abandoned reviews' included (the work was done).
    pub review_plies: Family<GameLabel, Counter>,
    pub search_depth: Family<GameLabel, Histogram>,
    pub search_nodes: Family<GameLabel, Histogram>,
    pub cache_hits: Family<GameLabel, Counter>,
    pub cache_misses: Family<GameLabel, Counter>,
    pub searches_in_flight: Gauge,
    /// Searches admitted to the pool that no worker has taken yet.
    pub searches_queued: Gauge,
    pub searches_cancelled: Counter,
    pub rejections: Family<ReasonLabel, Counter>,
    pub search_panics: Counter,
    /// Background searches (batch items) stopped to give their worker to an interactive request.
    pub searches_preempted: Counter,
    /// Interactive searches admitted by client class: `within` or `beyond` the client's fair
    /// share, and `yielded` (one beyond it stopped for another client's request).
    pub client_searches: Family<ClientShareLabels, Counter>,
    /// The shared cache's (Redis) metrics, `kibitz_shared_cache_*`.
    pub shared_cache: shared_cache::SharedCacheMetrics,
    /// Batch analyses' metrics, `kibitz_batch_*`.
    pub batch: batch::BatchMetrics,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        let mut root = Registry::default();
        let registry = root.sub_registry_with_prefix("kibitz");
        let http_requests = Family::<RouteLabels, Counter>::default();
        registry.register(
            "http_requests",
            "HTTP requests answered, by route template and status",
            http_requests.clone(),
        );
        let http_duration =
            Family::<RouteLabel, Histogram>::new_with_constructor(latency_histogram as fn() -> _);
        registry.register_with_unit(
            "http_request_duration",
            "HTTP request latency, by route template",
            Unit::Seconds,
            http_duration.clone(),
        );
        let http_connections_open = Gauge::default();
        registry.register(
            "http_connections_open",
            "HTTP connections open now",
            http_connections_open.clone(),
        );
        let event_streams_open = Family::<RouteLabel, Gauge>::default();
        registry.register(
            "event_streams_open",
            "Server-Sent Event streams being sent now, by route template",
            event_streams_open.clone(),
        );
        let move_requests = Family::<GameStatusLabels, Counter>::default();
        registry.register(
            "move_requests",
            "POST /move requests answered, by game and status (499: the client went away first)",
            move_requests.clone(),
        );
        let move_duration =
            Family::<GameLabel, Histogram>::new_with_constructor(latency_histogram as fn() -> _);
        registry.register_with_unit(
            "move_duration",
            "POST /move latency from arrival to answer, by game",
            Unit::Seconds,
            move_duration.clone(),
        );
        let review_requests = Family::<GameStatusLabels, Counter>::default();
        registry.register(
            "review_requests",
            "POST /review requests answered, by game and status (499: the client went away first)",
            review_requests.clone(),
        );
        let review_duration =
            Family::<GameLabel, Histogram>::new_with_constructor(latency_histogram as fn() -> _);
        registry.register_with_unit(
            "review_duration",
            "POST /review latency from arrival to answer, by game",
            Unit::Seconds,
            review_duration.clone(),
        );
        let review_plies = Family::<GameLabel, Counter>::default();
        registry.register(
            "review_plies",
            "Plies judged by POST /review, by game",
            review_plies.clone(),
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
        let searches_queued = Gauge::default();
        registry.register(
            "searches_queued",
            "Searches admitted to the pool that no worker has taken yet",
            searches_queued.clone(),
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
            "Requests refused for want of time or of a worker, by reason (queue_full, no_time, \
             late, budget_spent, deterministic_overrun)",
            rejections.clone(),
        );
        let client_searches = Family::<ClientShareLabels, Counter>::default();
        registry.register(
            "client_searches",
            "Interactive searches by client class (an API key's class, or address): admitted \
             within or beyond the client's fair share of the workers, or yielded (one beyond \
             it stopped for another client's request)",
            client_searches.clone(),
        );
        let searches_preempted = Counter::default();
        registry.register(
            "searches_preempted",
            "Background searches (batch items) stopped to free their worker for an interactive \
             request; each item is run again later",
            searches_preempted.clone(),
        );
        let search_panics = Counter::default();
        registry.register(
            "search_panics",
            "Searches that panicked (answered 500; the worker survives)",
            search_panics.clone(),
        );
        registry.register(
            "build",
            "The build serving: crate version, profile and target",
            Info::new(build_labels()),
        );
        let shared_cache = shared_cache::SharedCacheMetrics::register(
            registry.sub_registry_with_prefix("shared_cache"),
        );
        let batch = batch::BatchMetrics::register(registry.sub_registry_with_prefix("batch"));
        // The standard unprefixed names, which dashboards for any process already chart.
        #[cfg(target_os = "linux")]
        root.register_collector(Box::new(process::ProcessCollector::new()));
        Metrics {
            registry: root,
            http_requests,
            http_duration,
            http_connections_open,
            event_streams_open,
            move_requests,
            move_duration,
            review_requests,
            review_duration,
            review_plies,
            search_depth,
            search_nodes,
            cache_hits,
            cache_misses,
            searches_in_flight,
            searches_queued,
            searches_cancelled,
            rejections,
            search_panics,
            searches_preempted,
            client_searches,
            shared_cache,
            batch,
        }
    }

    /// Counts an interactive search of a client of `class` by where it stood against the
    /// client's share (`within`, `beyond`, `yielded`).
    pub fn client_search(&self, class: &str, share: &'static str) {
        self.client_searches
            .get_or_create(&ClientShareLabels {
                class: class.to_owned(),
                share,
            })
            .inc();
    }

    /// Counts a request shed for `reason`.
    pub fn rejection(&self, reason: &'static str) {
        self.rejections.get_or_create(&ReasonLabel { reason }).inc();
    }

    /// The plies-judged counter of `game`, to keep across `.await`s (a family's lookup guard
    /// may not be).
    pub fn review_plies_of(&self, game: &'static str) -> Counter {
        self.review_plies.get_or_create(&GameLabel { game }).clone()
    }

    /// A unit of `kibitz_event_streams_open{route}`, for a stream's body to hold.
    pub fn event_stream_opened(&self, route: &'static str) -> GaugeGuard {
        GaugeGuard::hold(&self.event_streams_open.get_or_create(&RouteLabel { route }))
    }

    /// The OpenMetrics text of every metric.
    pub fn render(&self) -> String {
        self.render_in(Exposition::OpenMetrics)
    }

    /// The text of every metric in `format`.
    pub fn render_in(&self, format: Exposition) -> String {
        use prometheus_client::encoding::{prometheus_text, text};
        let mut out = String::new();
        // Writing to a String cannot fail, and no metric of ours fails to encode.
        let _ = match format {
            Exposition::OpenMetrics => text::encode(&mut out, &self.registry),
            Exposition::PrometheusText => prometheus_text::encode(&mut out, &self.registry),
        };
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A registry with one metric of each type the service uses, rendered in `format`.
    fn one_of_each(format: Exposition) -> String {
        let metrics = Metrics::new();
        metrics
            .move_requests
            .get_or_create(&GameStatusLabels {
                game: "tictactoe",
                status: 200,
            })
            .inc();
        metrics
            .move_duration
            .get_or_create(&GameLabel { game: "tictactoe" })
            .observe(0.004);
        metrics.searches_in_flight.set(3);
        metrics.render_in(format)
    }

    fn lines_starting<'a>(text: &'a str, start: &str) -> Vec<&'a str> {
        text.lines().filter(|l| l.starts_with(start)).collect()
    }

    #[test]
    fn a_counter_family_is_named_with_its_total_in_the_prometheus_text_format() {
        let text = one_of_each(Exposition::PrometheusText);
        assert!(
            text.contains("# TYPE kibitz_move_requests_total counter\n"),
            "{text}"
        );
        assert!(text.contains("# HELP kibitz_move_requests_total POST /move"));
        assert!(text.contains("kibitz_move_requests_total{game=\"tictactoe\",status=\"200\"} 1\n"));
        // OpenMetrics names the family without the suffix, its sample with it.
        let open = one_of_each(Exposition::OpenMetrics);
        assert!(
            open.contains("# TYPE kibitz_move_requests counter\n"),
            "{open}"
        );
        assert!(open.contains("kibitz_move_requests_total{game=\"tictactoe\",status=\"200\"} 1\n"));
    }

    #[test]
    fn every_family_of_the_prometheus_text_format_is_typed_under_its_sample_names() {
        let text = one_of_each(Exposition::PrometheusText);
        for typed in lines_starting(&text, "# TYPE ") {
            let mut words = typed.split(' ').skip(2);
            let (name, kind) = (words.next().unwrap(), words.next().unwrap());
            assert!(
                ["counter", "gauge", "histogram"].contains(&kind),
                "{typed}: 0.0.4 has no type {kind}"
            );
            assert_eq!(kind == "counter", name.ends_with("_total"), "{typed}");
        }
        for sample in text.lines().filter(|l| !l.starts_with('#')) {
            // Every sample belongs to the family typed last before it: its name, or the name
            // with a histogram's suffix.
            let name = sample.split(['{', ' ']).next().unwrap();
            let family = text[..text.find(sample).unwrap()]
                .lines()
                .rev()
                .find_map(|l| l.strip_prefix("# TYPE "))
                .and_then(|l| l.split(' ').next())
                .unwrap();
            let base = ["_bucket", "_sum", "_count"]
                .iter()
                .find_map(|s| name.strip_suffix(s))
                .unwrap_or(name);
            assert!(name == family || base == family, "{sample} under {family}");
        }
    }

    #[test]
    fn the_prometheus_text_format_has_no_openmetrics_only_lines() {
        let text = one_of_each(Exposition::PrometheusText);
        assert!(!text.contains("# EOF"), "{text}");
        assert!(!text.contains("# UNIT"), "{text}");
        let open = one_of_each(Exposition::OpenMetrics);
        assert!(open.ends_with("# EOF\n"), "{open}");
        assert!(open.contains("# UNIT kibitz_move_duration_seconds seconds\n"));
    }

    #[test]
    fn a_histogram_and_a_gauge_read_the_same_in_both_formats() {
        let text = one_of_each(Exposition::PrometheusText);
        let open = one_of_each(Exposition::OpenMetrics);
        for format in [&text, &open] {
            assert!(format.contains("# TYPE kibitz_move_duration_seconds histogram\n"));
            assert!(format.contains("kibitz_move_duration_seconds_count{game=\"tictactoe\"} 1\n"));
            // The encoders order the labels differently (`le` first in OpenMetrics).
            let last_bucket = format
                .lines()
                .find(|l| {
                    l.starts_with("kibitz_move_duration_seconds_bucket{")
                        && l.contains("le=\"+Inf\"")
                })
                .unwrap_or_else(|| panic!("no +Inf bucket in\n{format}"));
            assert!(last_bucket.contains("game=\"tictactoe\""), "{last_bucket}");
            assert!(last_bucket.ends_with("} 1"), "{last_bucket}");
            assert!(format.contains("# TYPE kibitz_searches_in_flight gauge\n"));
            assert!(format.contains("kibitz_searches_in_flight 3\n"));
        }
    }

    #[test]
    fn build_info_is_an_info_metric_in_openmetrics_and_a_gauge_in_the_text_format() {
        let labels = format!(
            "{{version=\"{}\",profile=\"{}\",target_arch=\"{}\",target_os=\"{}\"}} 1\n",
            env!("CARGO_PKG_VERSION"),
            if cfg!(debug_assertions) {
                "debug"
            } else {
                "release"
            },
            std::env::consts::ARCH,
            std::env::consts::OS,
        );
        let text = one_of_each(Exposition::PrometheusText);
        assert!(text.contains("# TYPE kibitz_build_info gauge\n"), "{text}");
        assert!(
            text.contains(&format!("kibitz_build_info{labels}")),
            "{text}"
        );
        let open = one_of_each(Exposition::OpenMetrics);
        assert!(open.contains("# TYPE kibitz_build info\n"), "{open}");
        assert!(
            open.contains(&format!("kibitz_build_info{labels}")),
            "{open}"
        );
    }

    #[test]
    fn no_help_text_needs_escaping() {
        // The OpenMetrics encoder writes HELP as given: a backslash, quote or newline in it
        // would be read differently by the two formats' parsers.
        let open = one_of_each(Exposition::OpenMetrics);
        for help in lines_starting(&open, "# HELP ") {
            assert!(!help.contains(['\\', '"']), "{help}");
        }
    }

    #[test]
    fn a_request_game_outside_the_served_ones_is_labelled_unknown() {
        assert_eq!(game_label("connect4"), "connect4");
        assert_eq!(game_label("Connect4"), "unknown");
        assert_eq!(game_label("rm -rf"), "unknown");
    }
}
