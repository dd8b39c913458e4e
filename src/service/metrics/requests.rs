//! Counting what ends by being dropped: a request whose client went away, a stream or a
//! connection that closed.
//!
//! Under tokio a request that its client abandons never returns: its future is dropped where
//! it waits. Code after the `.await` (where the metrics used to be recorded) then never runs,
//! so such requests were missing from the counts. Each guard here records in its `Drop`
//! instead, which runs however the future ends.

use std::sync::Arc;
use std::time::Instant;

use prometheus_client::metrics::gauge::Gauge;

use super::{GameLabel, GameStatusLabels, Metrics};

/// The status a request is counted with when its client went away before the answer
/// (nginx's "client closed request"; no answer was sent, so no real status exists).
pub const ABANDONED: u16 = 499;

/// Which family a [`RequestRecord`] counts in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestKind {
    /// `POST /move`: `kibitz_move_requests_total`, `kibitz_move_duration_seconds`.
    Move,
    /// `POST /review`: `kibitz_review_requests_total`, `kibitz_review_duration_seconds`.
    Review,
}

/// One request, counted exactly once: with its status by [`RequestRecord::finish`], or as
/// [`ABANDONED`] when dropped unfinished. Its latency is observed only when it finished, so
/// the duration histograms stay those of answers.
pub struct RequestRecord {
    metrics: Arc<Metrics>,
    kind: RequestKind,
    game: &'static str,
    arrival: Instant,
    finished: bool,
}

impl RequestRecord {
    /// Starts counting a request for `game` (a label: see [`super::game_label`]) that arrived
    /// at `arrival`.
    pub fn start(
        metrics: &Arc<Metrics>,
        kind: RequestKind,
        game: &'static str,
        arrival: Instant,
    ) -> Self {
        RequestRecord {
            metrics: Arc::clone(metrics),
            kind,
            game,
            arrival,
            finished: false,
        }
    }

    /// Counts the request as answered with `status`, and its latency.
    pub fn finish(mut self, status: u16) {
        self.finished = true;
        self.count(status);
        let label = GameLabel { game: self.game };
        let duration = match self.kind {
            RequestKind::Move => &self.metrics.move_duration,
            RequestKind::Review => &self.metrics.review_duration,
        };
        duration
            .get_or_create(&label)
            .observe(self.arrival.elapsed().as_secs_f64());
    }

    fn count(&self, status: u16) {
        let requests = match self.kind {
            RequestKind::Move => &self.metrics.move_requests,
            RequestKind::Review => &self.metrics.review_requests,
        };
        requests
            .get_or_create(&GameStatusLabels {
                game: self.game,
                status,
            })
            .inc();
    }
}

impl Drop for RequestRecord {
    fn drop(&mut self) {
        if !self.finished {
            self.count(ABANDONED);
        }
    }
}

/// Holds one unit of a gauge (an open connection, a stream being sent) for as long as it
/// lives: up when made, down when dropped.
#[derive(Debug)]
pub struct GaugeGuard(Gauge);

impl GaugeGuard {
    pub fn hold(gauge: &Gauge) -> Self {
        gauge.inc();
        GaugeGuard(gauge.clone())
    }
}

impl Drop for GaugeGuard {
    fn drop(&mut self) {
        self.0.dec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(metrics: &Metrics, status: u16) -> u64 {
        metrics
            .move_requests
            .get_or_create(&GameStatusLabels {
                game: "gomoku",
                status,
            })
            .get()
    }

    #[test]
    fn a_request_dropped_unfinished_is_counted_as_abandoned_and_a_finished_one_once() {
        let metrics = Arc::new(Metrics::new());
        let started =
            || RequestRecord::start(&metrics, RequestKind::Move, "gomoku", Instant::now());
        drop(started());
        started().finish(200);
        assert_eq!(count(&metrics, ABANDONED), 1);
        assert_eq!(count(&metrics, 200), 1);
        let durations = metrics.render();
        assert!(
            durations.contains("kibitz_move_duration_seconds_count{game=\"gomoku\"} 1\n"),
            "only the answer's latency is observed:\n{durations}"
        );
    }

    #[test]
    fn a_gauge_guard_holds_one_unit_while_it_lives() {
        let gauge = Gauge::default();
        let first = GaugeGuard::hold(&gauge);
        let second = GaugeGuard::hold(&gauge);
        assert_eq!(gauge.get(), 2);
        drop(first);
        assert_eq!(gauge.get(), 1);
        drop(second);
        assert_eq!(gauge.get(), 0);
    }
}
