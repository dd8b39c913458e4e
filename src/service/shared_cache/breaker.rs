//! The shared cache's circuit breaker: Redis is skipped for [`BREAKER_OPEN`] after
//! [`BREAKER_FAILURES`] failures in a row, so that a dead or hung Redis costs a request
//! nothing; then one call goes through (the others still skip) and its outcome closes or
//! reopens the breaker. Lock-free: two atomics, read and written by every request task.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Failures in a row that open the circuit breaker.
pub const BREAKER_FAILURES: u32 = 3;
/// How long an open breaker skips Redis before letting one call through.
pub const BREAKER_OPEN: Duration = Duration::from_secs(1);

#[derive(Debug)]
pub struct Breaker {
    /// Failures since the last success.
    failures: AtomicU32,
    /// Milliseconds since `epoch` until which Redis is skipped; 0 = closed.
    open_until_ms: AtomicU64,
    epoch: Instant,
}

impl Breaker {
    pub fn new() -> Self {
        Breaker {
            failures: AtomicU32::new(0),
            open_until_ms: AtomicU64::new(0),
            epoch: Instant::now(),
        }
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Whether a call may go to Redis now.
    pub fn allow(&self) -> bool {
        let until = self.open_until_ms.load(Ordering::Acquire);
        if until == 0 {
            return true;
        }
        let now = self.now_ms();
        if now < until {
            return false;
        }
        // Half-open: the one caller that moves the deadline on makes the trial call.
        let reopened = now + BREAKER_OPEN.as_millis() as u64;
        self.open_until_ms
            .compare_exchange(until, reopened, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    pub fn success(&self) {
        self.failures.store(0, Ordering::Relaxed);
        self.open_until_ms.store(0, Ordering::Release);
    }

    pub fn failure(&self) {
        if self.failures.fetch_add(1, Ordering::Relaxed) + 1 >= BREAKER_FAILURES {
            self.failures.store(0, Ordering::Relaxed);
            let until = self.now_ms() + BREAKER_OPEN.as_millis() as u64;
            self.open_until_ms.store(until.max(1), Ordering::Release);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_breaker_opens_after_failures_in_a_row_and_a_success_closes_it() {
        let breaker = Breaker::new();
        for _ in 0..BREAKER_FAILURES - 1 {
            breaker.failure();
        }
        assert!(breaker.allow(), "closed below the threshold");
        breaker.failure();
        assert!(!breaker.allow(), "open at the threshold");
        breaker.success();
        assert!(breaker.allow());
    }

    #[test]
    fn an_open_breaker_lets_one_trial_call_through_after_its_pause() {
        let breaker = Breaker::new();
        // Opened long enough ago for the pause to be over.
        breaker.open_until_ms.store(1, Ordering::Release);
        let breaker = Breaker {
            epoch: Instant::now() - Duration::from_secs(5),
            ..breaker
        };
        assert!(breaker.allow(), "the trial call");
        assert!(!breaker.allow(), "others skip while the trial runs");
    }
}
