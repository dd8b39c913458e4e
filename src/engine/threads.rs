//! The Lazy SMP harness both searchers run their helper threads under: helpers run the same
//! iterative deepening on their own copy of the position, depth-staggered (odd helpers start
//! one ply deeper, so the threads fill the table with different subtrees), and share what they
//! find only through the transposition table. The calling thread's report is the answer; its
//! end stops the helpers, and their work is added to its counts. (Stockfish keeps one `Worker`
//! and Rapfi one `searchthread.cpp` under their search algorithms for the same reason: the
//! threads' life cycle is one piece of code, whatever walks the tree.)

use super::limits::{CancelFlag, SearchLimits};
use super::report::SearchReport;
use super::table::TableStats;

/// What a helper thread did, added to the answer's counts.
#[derive(Clone, Copy, Debug, Default)]
pub struct HelperWork {
    pub nodes: u64,
    pub table: TableStats,
}

/// The first iteration's depth of helper `i` (1-based): 2 for odd helpers, 1 for even ones.
pub fn helper_first_depth(i: usize) -> u32 {
    1 + (i % 2) as u32
}

/// Runs `main` on the calling thread with `helpers` helper threads beside it, each running
/// `helper(limits, first_depth)` under [`SearchLimits::for_helper`]: the same deadline and
/// depth, stopped when `main` returns (the caller's own cancellation stops `main`, and so them
/// too). Returns `main`'s report with the helpers' nodes and table counts added.
pub fn lazy_smp<H, M>(limits: &SearchLimits, helpers: usize, helper: H, main: M) -> SearchReport
where
    H: Fn(SearchLimits, u32) -> HelperWork + Sync,
    M: FnOnce() -> SearchReport,
{
    let stop = CancelFlag::new();
    let helper_limits = limits.for_helper(&stop);
    std::thread::scope(|scope| {
        let helper = &helper;
        let threads: Vec<_> = (1..=helpers)
            .map(|i| {
                let limits = helper_limits.clone();
                scope.spawn(move || helper(limits, helper_first_depth(i)))
            })
            .collect();
        let mut report = main();
        stop.cancel();
        for thread in threads {
            // A helper that panicked only loses its counts: the answer is the calling thread's.
            if let Ok(work) = thread.join() {
                report.nodes += work.nodes;
                report.table.probes += work.table.probes;
                report.table.hits += work.table.hits;
            }
        }
        report
    })
}
