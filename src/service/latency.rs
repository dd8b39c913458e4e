//! The latency contract: a `200` arrives within its `budget_ms`, queueing included, plus a few
//! milliseconds; a request that cannot get a worker in time gets its `503` at once. These are
//! its times and margins, in one place, with the argument for each.
//!
//! A request arrives at `arrival`; its answer is due at `deadline = arrival + budget`
//! ([`JobTimes`]). Its search must start by `latest_start` (a quarter of the budget left), or
//! it would answer with too shallow a search: the pool admits a job only if a worker is sure
//! (or, with patience, likely) to be free by then, and sheds it with a 503 otherwise.
//!
//! - The search stops [`HAND_BACK`] before the deadline, the time to hand the answer back from
//!   the worker and write the response, so the answer leaves by the deadline.
//! - A search stops at most [`OVERSHOOT`] after the deadline it was given (the engine checks
//!   the clock every 1024 nodes, well under a millisecond, then the answer goes back), so the
//!   pool adds it to each admitted job's deadline when it bounds when a worker frees up.
//! - A search started at once gets a window [`FRESH_START`] shorter than its budget (the hand
//!   back, and parsing and dispatch before it), so the answer cache counts a stored answer whose
//!   window is within that of a budget as good as a fresh search under that budget.
//!
//! Together they are the "few milliseconds": every admitted job ends by its deadline plus
//! [`OVERSHOOT`], and the promise, tested at budget + 10 ms, leaves the rest to the machine.

use std::time::{Duration, Instant};

/// Kept between a search's own deadline and the request's: handing the answer back from the
/// worker and writing the response.
pub const HAND_BACK: Duration = Duration::from_millis(1);

/// How much later than its deadline a search may end (the clock is checked every 1024 nodes,
/// then the answer is sent back): added to each admitted job's deadline when the pool bounds
/// when a worker frees up.
pub const OVERSHOOT: Duration = Duration::from_millis(2);

/// What a search started at once loses of its budget before its window opens: the
/// [`HAND_BACK`], and parsing and dispatch. A window within this of a budget is as much as a
/// fresh search under that budget would have had.
pub const FRESH_START: Duration = Duration::from_millis(2);

/// When a job must end and until when it is worth starting.
#[derive(Clone, Copy, Debug)]
pub struct JobTimes {
    /// When the request arrived.
    pub arrival: Instant,
    /// When the answer is due (arrival + budget).
    pub deadline: Instant,
    /// Starting later than this leaves the job too little time to think.
    pub latest_start: Instant,
}

impl JobTimes {
    /// Times for a request that arrived at `arrival` with `budget`: it must start with at least a
    /// quarter of its budget left.
    pub fn for_budget(arrival: Instant, budget: Duration) -> Self {
        JobTimes {
            arrival,
            deadline: arrival + budget,
            latest_start: arrival + budget - budget / 4,
        }
    }

    /// When the search itself must stop: [`HAND_BACK`] before the answer is due.
    pub fn search_deadline(&self) -> Instant {
        self.deadline
            .checked_sub(HAND_BACK)
            .unwrap_or(self.deadline)
    }
}
