//! The node clock: counts a search's nodes and decides, every [`CHECK_INTERVAL`] of them,
//! whether a limit has been reached. Both searchers (the engine's and gomoku's main search) and
//! every Lazy SMP helper poll their limits through it, so the service's latency promise rests
//! on one piece of code.
//!
//! The count it polls is the search's whole work: its own nodes plus those of any side search
//! it runs inside its nodes (gomoku's horizon VCF), which the caller passes in. A leaf may run
//! dozens of such nodes: polling by the main count alone let a move overshoot its deadline by
//! tens of milliseconds. Time and node limits are armed only from the second iteration, so a
//! search always completes depth 1 and answers a legal move; only cancellation stops depth 1,
//! and the deadline for a caller that has a move already ([`NodeClock::deadline_from_depth_one`]).
//! A search may also hold the deadline off for longer ([`NodeClock::untimed_through`]): the
//! engine does so for positions small enough to solve at once, so that a late start (a queue,
//! a busy machine) never costs a solvable position its exact answer.
//!
//! A node's cost is not a constant: gomoku's nodes cost about a microsecond on 15x15 with five
//! in a row and sixty times that with exactly six, whose patterns are computed, not looked up.
//! 1,024 such nodes between two reads of the clock let answers come up to 60 ms late. So the
//! deadline is also read on a grid of its own between the regular polls, every
//! `time_interval` nodes, which adapts to what the last nodes cost: a read about every
//! `TIME_READ_EVERY`, never more often than every `MIN_TIME_INTERVAL` nodes. Node
//! limits and cancellation keep the fixed grid, so a node budget stops at the same node on any
//! machine.

use std::time::{Duration, Instant};

use super::limits::{CHECK_INTERVAL, SearchLimits, StopReason};

/// How often the deadline is read, in time: well inside the service's few milliseconds of grace.
const TIME_READ_EVERY: Duration = Duration::from_micros(500);
/// The fewest nodes between two reads of the deadline (a read costs tens of nanoseconds, a
/// node of the slowest kind tens of microseconds).
const MIN_TIME_INTERVAL: u64 = 4;
/// The first interval, before any cost is known: small, so that slow nodes are found out in
/// the first iteration, which no deadline stops.
const FIRST_TIME_INTERVAL: u64 = 64;

/// A search's node count and the limits it is polled against.
pub struct NodeClock {
    limits: SearchLimits,
    nodes: u64,
    next_check: u64,
    stopped: Option<StopReason>,
    /// Whether time and node limits apply (not during the depth-1 iteration).
    armed: bool,
    /// The deepest iteration the deadline does not stop (1 unless the search says otherwise).
    untimed_through: u32,
    /// Nodes between two reads of the deadline on its own grid, the next count that reads it,
    /// and when it was last read (see the module's last paragraph).
    time_interval: u64,
    next_time_check: u64,
    last_time_read: Option<Instant>,
    /// Whether the deadline applies in the current iteration.
    timed: bool,
    /// Whether it applies from the first iteration on ([`NodeClock::deadline_from_depth_one`]).
    deadline_from_depth_one: bool,
    /// Whether the search lowered its own node limit ([`NodeClock::cap_nodes`]).
    capped: bool,
}

impl NodeClock {
    pub fn new(limits: SearchLimits) -> Self {
        NodeClock {
            limits,
            nodes: 0,
            next_check: CHECK_INTERVAL,
            stopped: None,
            armed: false,
            untimed_through: 1,
            time_interval: FIRST_TIME_INTERVAL,
            next_time_check: FIRST_TIME_INTERVAL,
            last_time_read: None,
            timed: false,
            deadline_from_depth_one: false,
            capped: false,
        }
    }

    pub fn limits(&self) -> &SearchLimits {
        &self.limits
    }

    /// Nodes this search's own node function has counted.
    pub fn nodes(&self) -> u64 {
        self.nodes
    }

    /// The limit that stopped the search, once one has.
    pub fn stopped(&self) -> Option<StopReason> {
        self.stopped
    }

    pub fn is_stopped(&self) -> bool {
        self.stopped.is_some()
    }

    /// Lowers the node limit to `nodes` (of the whole work) if it is higher: the search's own
    /// decision that more is not worth it, not the caller's limit.
    pub fn cap_nodes(&mut self, nodes: u64) {
        if self.limits.max_nodes.is_none_or(|limit| nodes < limit) {
            self.limits.max_nodes = Some(nodes);
            self.capped = true;
        }
    }

    /// Whether the node limit is the search's own cap rather than the caller's.
    pub fn capped(&self) -> bool {
        self.capped
    }

    /// Counts a node without polling (a root, which polls before its iteration instead).
    pub fn count(&mut self) {
        self.nodes += 1;
    }

    /// Lets the deadline stop the first iteration too (node limits still wait for the second),
    /// when `yes`: for a search whose caller has a move without it. It overrides
    /// [`NodeClock::untimed_through`].
    pub fn deadline_from_depth_one(mut self, yes: bool) -> Self {
        self.deadline_from_depth_one = yes;
        self
    }

    /// Before the iteration at `depth`: arms the time and node limits from depth 2 on and says
    /// which, if any, is already reached. `outside` is the side searches' node count so far.
    pub fn start_iteration(&mut self, depth: u32, outside: u64) -> Option<StopReason> {
        self.armed = depth > 1;
        self.timed = depth > self.untimed_through || self.deadline_from_depth_one;
        if self.armed {
            self.armed_limit_reached(self.nodes + outside)
        } else if self.timed && self.limits.deadline.is_some_and(|d| d.has_passed()) {
            Some(StopReason::Time)
        } else {
            None
        }
    }

    /// Lets every iteration through `depth` run past the deadline (node limits and
    /// cancellation still apply from depth 2): for a search whose whole tree is small enough
    /// that its exact answer is worth more than the overshoot (see the engine's
    /// `SOLVED_WHATEVER_THE_CLOCK_PLIES`).
    pub fn untimed_through(&mut self, depth: u32) {
        self.untimed_through = depth.max(1);
    }

    fn armed_limit_reached(&self, nodes: u64) -> Option<StopReason> {
        if self.timed {
            self.limits.reached(nodes)
        } else {
            self.limits.reached_but_the_deadline(nodes)
        }
    }

    /// Counts one node and, every [`CHECK_INTERVAL`] nodes of the whole work (`outside`: the
    /// side searches' count so far), polls the limits. False once a limit is reached: the
    /// caller then unwinds at once and its iteration is thrown away.
    #[inline]
    pub fn visit(&mut self, outside: u64) -> bool {
        self.nodes += 1;
        let total = self.nodes + outside;
        if total >= self.next_check {
            self.next_check = total + CHECK_INTERVAL;
            let reached = if self.armed {
                self.armed_limit_reached(total)
            } else {
                self.limits
                    .cancel
                    .as_ref()
                    .filter(|c| c.is_cancelled())
                    .map(|_| StopReason::Cancelled)
            };
            if reached.is_some() {
                self.stopped = reached;
            }
        } else if total >= self.next_time_check {
            self.read_time(total);
        }
        self.stopped.is_none()
    }

    /// The deadline's own poll: reads the clock, stops the search if the deadline applies and
    /// has passed, and sets the next read so that reads come about every [`TIME_READ_EVERY`]:
    /// fewer nodes apart when the last ones took longer, more (up to the regular grid's)
    /// when they took less. Read in the untimed first iteration too, to learn the cost.
    #[cold]
    fn read_time(&mut self, total: u64) {
        let now = Instant::now();
        if let Some(last) = self.last_time_read {
            let gap = now.saturating_duration_since(last);
            if gap > TIME_READ_EVERY {
                self.time_interval = (self.time_interval / 4).max(MIN_TIME_INTERVAL);
            } else if gap < TIME_READ_EVERY / 4 {
                self.time_interval = (self.time_interval * 2).min(CHECK_INTERVAL);
            }
        }
        self.last_time_read = Some(now);
        self.next_time_check = total + self.time_interval;
        if self.timed && self.limits.deadline.is_some_and(|d| now >= d.0) {
            self.stopped = Some(StopReason::Time);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::CancelFlag;
    use crate::engine::limits::Deadline;
    use std::time::{Duration, Instant};

    #[test]
    fn a_node_limit_stops_only_once_armed_and_counts_outside_nodes() {
        let limits = SearchLimits {
            max_nodes: Some(CHECK_INTERVAL),
            ..Default::default()
        };
        let mut clock = NodeClock::new(limits);
        assert_eq!(clock.start_iteration(1, 0), None);
        for _ in 0..3 * CHECK_INTERVAL {
            assert!(clock.visit(0), "depth 1 ignores the node limit");
        }
        assert_eq!(
            clock.start_iteration(2, 0),
            Some(StopReason::Nodes),
            "armed at depth 2, the limit is already past"
        );

        let mut clock = NodeClock::new(SearchLimits {
            max_nodes: Some(2 * CHECK_INTERVAL),
            ..Default::default()
        });
        assert_eq!(clock.start_iteration(2, 0), None);
        // Half the nodes are the side searches': the clock stops at the whole count.
        let mut visited = 0;
        while clock.visit(CHECK_INTERVAL) {
            visited += 1;
        }
        assert_eq!(clock.stopped(), Some(StopReason::Nodes));
        assert!(visited < 2 * CHECK_INTERVAL, "{visited}");
    }

    #[test]
    fn an_untimed_iteration_runs_past_the_deadline_but_not_the_node_limit() {
        let past = SearchLimits {
            deadline: Some(Deadline(Instant::now() - Duration::from_millis(1))),
            ..Default::default()
        };
        let mut clock = NodeClock::new(past.clone());
        clock.untimed_through(3);
        for depth in 1..=3 {
            assert_eq!(clock.start_iteration(depth, 0), None, "depth {depth}");
            for _ in 0..2 * CHECK_INTERVAL {
                assert!(clock.visit(0), "depth {depth} ignores the deadline");
            }
        }
        assert_eq!(clock.start_iteration(4, 0), Some(StopReason::Time));

        let mut clock = NodeClock::new(SearchLimits {
            max_nodes: Some(CHECK_INTERVAL),
            ..past
        });
        clock.untimed_through(3);
        assert_eq!(clock.start_iteration(2, 0), None);
        while clock.visit(0) {}
        assert_eq!(clock.stopped(), Some(StopReason::Nodes));
    }

    #[test]
    fn slow_nodes_stop_soon_after_the_deadline() {
        // Nodes of 200 microseconds (gomoku's exactly six costs about 60): read every 1,024
        // nodes, the deadline was seen 200 ms late.
        let deadline = Instant::now() + Duration::from_millis(20);
        let mut clock = NodeClock::new(SearchLimits {
            deadline: Some(Deadline(deadline)),
            ..Default::default()
        });
        let slow_node = || std::thread::sleep(Duration::from_micros(200));
        clock.start_iteration(1, 0);
        for _ in 0..20 {
            slow_node();
            assert!(clock.visit(0), "depth 1 ignores the deadline");
        }
        assert_eq!(clock.start_iteration(2, 0), None);
        let mut late = 0;
        while clock.visit(0) {
            slow_node();
            if Instant::now() >= deadline {
                late += 1;
            }
            assert!(late < 64, "still searching {late} nodes after the deadline");
        }
        assert_eq!(clock.stopped(), Some(StopReason::Time));
    }

    #[test]
    fn a_deadline_from_depth_one_stops_the_first_iteration() {
        let soon = Instant::now() + Duration::from_millis(5);
        let limits = SearchLimits {
            deadline: Some(Deadline(soon)),
            ..Default::default()
        };
        let mut clock = NodeClock::new(limits.clone()).deadline_from_depth_one(true);
        assert_eq!(clock.start_iteration(1, 0), None);
        let mut visited = 0u64;
        while clock.visit(0) {
            std::thread::sleep(Duration::from_micros(200));
            visited += 1;
            assert!(visited < 1_000, "depth 1 ran on past its deadline");
        }
        assert_eq!(clock.stopped(), Some(StopReason::Time));
        let mut passed = NodeClock::new(limits).deadline_from_depth_one(true);
        std::thread::sleep(Duration::from_millis(6));
        assert_eq!(passed.start_iteration(1, 0), Some(StopReason::Time));
    }

    #[test]
    fn cancellation_stops_even_depth_one() {
        let cancel = CancelFlag::new();
        let mut clock = NodeClock::new(SearchLimits {
            cancel: Some(cancel.clone()),
            ..Default::default()
        });
        clock.start_iteration(1, 0);
        cancel.cancel();
        let mut visited = 0u64;
        while clock.visit(0) {
            visited += 1;
        }
        assert!(visited < CHECK_INTERVAL);
        assert_eq!(clock.stopped(), Some(StopReason::Cancelled));
    }
}
