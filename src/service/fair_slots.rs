//! A semaphore that shares its slots fairly between clients: when a slot frees, it goes to the
//! waiting client that holds the fewest slots (the longest waiting of that client first), not
//! to whoever waited longest. A client alone may hold every slot; once another client waits,
//! each slot that frees goes to it until it holds as many as the first, so no client stays
//! above its share (`share` slots) while another waits below it. With one share for every
//! client, "fewest first" is that cap: a client at its share is never chosen while a waiting
//! client holds less, and a slot never stays idle while anyone waits (the work it guards,
//! a `/tree` evaluation, cannot be stopped half way to hand its slot over, so idling a slot
//! would only delay everyone).
//!
//! Why it is safe: one std mutex guards the counts and the waiters, held for a few map and
//! queue operations, never across an `.await`. A slot is *granted* under the lock (it counts
//! against its client from then on) and the waiter is woken through its own [`Notify`], whose
//! stored permit means a wake-up sent before the waiter sleeps is not lost. A waiter that gives
//! up (its deadline, or its future dropped) removes itself under the lock and, if a slot had
//! been granted to it meanwhile, hands that slot on at once: it leaves no trace.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use tokio::sync::Notify;

/// The slots and who holds or waits for them.
pub struct FairSlots {
    state: Mutex<State>,
    /// Slots in all.
    total: usize,
    /// What one client is sure to get while others wait (at least one).
    share: usize,
}

#[derive(Default)]
struct State {
    free: usize,
    /// Slots held (or granted and not yet claimed) by client; a client holding none is absent,
    /// so the map is bounded by the slots.
    held: HashMap<Arc<str>, usize>,
    /// In arrival order; granted ones stay until their waiter claims the slot.
    waiting: VecDeque<Waiter>,
    next_id: u64,
    /// When each client holding or waiting was last granted a slot (a count of grants), so
    /// that clients holding as many take turns; dropped once a client neither holds nor
    /// waits (it then comes back as one not served for a while, which it was).
    served: HashMap<Arc<str>, u64>,
    grants: u64,
}

struct Waiter {
    id: u64,
    client: Arc<str>,
    granted: bool,
    wake: Arc<Notify>,
}

impl State {
    fn holds(&self, client: &str) -> usize {
        self.held.get(client).copied().unwrap_or(0)
    }

    /// Grants free slots to waiters: the client holding fewest first, among those the one
    /// served least recently (round-robin), and its longest waiting request.
    fn dispatch(&mut self) {
        while self.free > 0 {
            let chosen = self
                .waiting
                .iter()
                .enumerate()
                .filter(|(_, w)| !w.granted)
                .min_by_key(|(_, w)| {
                    let served = self.served.get(&w.client).copied();
                    (self.holds(&w.client), served, w.id)
                })
                .map(|(at, _)| at);
            let Some(at) = chosen else { return };
            self.grants += 1;
            let grant = self.grants;
            let waiter = &mut self.waiting[at];
            waiter.granted = true;
            waiter.wake.notify_one();
            let client = Arc::clone(&waiter.client);
            self.served.insert(Arc::clone(&client), grant);
            *self.held.entry(client).or_insert(0) += 1;
            self.free -= 1;
        }
    }

    /// Forgets when `client` was served if it neither holds nor waits.
    fn forget_if_idle(&mut self, client: &str) {
        if self.holds(client) == 0 && !self.waiting.iter().any(|w| &*w.client == client) {
            self.served.remove(client);
        }
    }

    /// A slot of `client`'s given back.
    fn release(&mut self, client: &str) {
        if let Some(count) = self.held.get_mut(client) {
            *count -= 1;
            if *count == 0 {
                self.held.remove(client);
            }
        }
        self.free += 1;
        self.forget_if_idle(client);
        self.dispatch();
    }
}

/// Where a client stood when it got its slot: its share, and how many more it could take
/// before passing it (what the `RateLimit` headers say).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotStanding {
    pub quota: usize,
    pub remaining: usize,
}

/// A slot, held until dropped.
pub struct FairSlot {
    slots: Arc<FairSlots>,
    client: Arc<str>,
    standing: SlotStanding,
}

impl FairSlot {
    pub fn standing(&self) -> SlotStanding {
        self.standing
    }
}

impl Drop for FairSlot {
    fn drop(&mut self) {
        self.slots.lock().release(&self.client);
    }
}

/// Every slot stayed taken until the deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Busy;

impl FairSlots {
    /// `total` slots (at least one), of which a client is sure of `share_percent` (rounded
    /// up, at least one) while other clients wait.
    pub fn new(total: usize, share_percent: u8) -> Arc<Self> {
        let total = total.max(1);
        let share = (total * usize::from(share_percent.clamp(1, 100)))
            .div_ceil(100)
            .max(1);
        Arc::new(FairSlots {
            state: Mutex::new(State {
                free: total,
                ..State::default()
            }),
            total,
            share,
        })
    }

    pub fn total(&self) -> usize {
        self.total
    }

    pub fn share(&self) -> usize {
        self.share
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A slot for `client`, waited for until `until` at the latest.
    pub async fn acquire(
        self: &Arc<Self>,
        client: Arc<str>,
        until: Instant,
    ) -> Result<FairSlot, Busy> {
        let wake = Arc::new(Notify::new());
        let id = {
            let mut state = self.lock();
            let id = state.next_id;
            state.next_id += 1;
            state.waiting.push_back(Waiter {
                id,
                client: Arc::clone(&client),
                granted: false,
                wake: Arc::clone(&wake),
            });
            state.dispatch();
            id
        };
        let mut waiting = Waiting {
            slots: self,
            id,
            client: Arc::clone(&client),
            claimed: false,
        };
        loop {
            if let Some(standing) = waiting.claim() {
                return Ok(FairSlot {
                    slots: Arc::clone(self),
                    client,
                    standing,
                });
            }
            if tokio::time::timeout_at(until.into(), wake.notified())
                .await
                .is_err()
            {
                // One last look: a grant that came with the deadline is taken, not wasted.
                if let Some(standing) = waiting.claim() {
                    return Ok(FairSlot {
                        slots: Arc::clone(self),
                        client,
                        standing,
                    });
                }
                return Err(Busy);
            }
        }
    }

    /// Slots free now and waiters not yet granted one (for tests and gauges).
    pub fn counts(&self) -> (usize, usize) {
        let state = self.lock();
        let waiting = state.waiting.iter().filter(|w| !w.granted).count();
        (state.free, waiting)
    }
}

/// A waiter's place in the queue, removed when dropped unless its slot was claimed; a slot
/// granted to it and not claimed is handed on.
struct Waiting<'a> {
    slots: &'a Arc<FairSlots>,
    id: u64,
    client: Arc<str>,
    claimed: bool,
}

impl Waiting<'_> {
    /// The slot, if it was granted: the waiter leaves the queue.
    fn claim(&mut self) -> Option<SlotStanding> {
        let mut state = self.slots.lock();
        let at = state
            .waiting
            .iter()
            .position(|w| w.id == self.id && w.granted)?;
        let waiter = state.waiting.remove(at)?;
        self.claimed = true;
        let quota = self.slots.share;
        Some(SlotStanding {
            quota,
            remaining: quota.saturating_sub(state.holds(&waiter.client)),
        })
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if self.claimed {
            return;
        }
        let mut state = self.slots.lock();
        if let Some(at) = state.waiting.iter().position(|w| w.id == self.id)
            && let Some(waiter) = state.waiting.remove(at)
            && waiter.granted
        {
            state.release(&waiter.client);
        } else {
            let client = Arc::clone(&self.client);
            state.forget_if_idle(&client);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn client(name: &str) -> Arc<str> {
        Arc::from(name)
    }

    fn soon(ms: u64) -> Instant {
        Instant::now() + Duration::from_millis(ms)
    }

    /// Lets spawned waiters run up to their first await.
    async fn settle() {
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test]
    async fn a_lone_client_takes_every_slot() {
        let slots = FairSlots::new(3, 50);
        assert_eq!(slots.share(), 2);
        let mut held = Vec::new();
        for expected_left in [1, 0, 0] {
            let slot = slots.acquire(client("a"), soon(10)).await.unwrap();
            assert_eq!(slot.standing().remaining, expected_left);
            held.push(slot);
        }
        assert_eq!(slots.counts(), (0, 0));
        assert_eq!(slots.acquire(client("a"), soon(20)).await.err(), Some(Busy));
        drop(held);
        assert_eq!(slots.counts(), (3, 0));
    }

    /// With a plain FIFO semaphore the flood's earlier waiters would get both freed slots
    /// and the polite client would wait behind all of them.
    #[tokio::test]
    async fn a_freed_slot_goes_to_the_waiting_client_holding_fewest_not_the_first_waiter() {
        let slots = FairSlots::new(2, 50);
        let first = slots.acquire(client("flood"), soon(10)).await.unwrap();
        let second = slots.acquire(client("flood"), soon(10)).await.unwrap();
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut waiters = Vec::new();
        let spawn = |name: &'static str, tag: &'static str| {
            let (slots, order) = (Arc::clone(&slots), Arc::clone(&order));
            tokio::spawn(async move {
                let slot = slots.acquire(client(name), soon(5_000)).await.unwrap();
                order.lock().unwrap().push(tag);
                slot
            })
        };
        for tag in ["flood-1", "flood-2", "flood-3"] {
            waiters.push(spawn("flood", tag));
            settle().await;
        }
        waiters.push(spawn("polite", "polite"));
        settle().await;
        assert_eq!(slots.counts(), (0, 4));
        drop(first);
        settle().await;
        assert_eq!(*order.lock().unwrap(), ["polite"]);
        // Now each holds one: the flood's longest waiter is next.
        drop(second);
        settle().await;
        assert_eq!(*order.lock().unwrap(), ["polite", "flood-1"]);
        let polite = waiters.pop().unwrap().await.unwrap();
        assert_eq!(
            polite.standing(),
            SlotStanding {
                quota: 1,
                remaining: 0
            }
        );
        drop(polite);
        settle().await;
        assert_eq!(*order.lock().unwrap(), ["polite", "flood-1", "flood-2"]);
        drop(waiters);
    }

    #[tokio::test]
    async fn clients_take_turns_whatever_the_order_they_queued_in() {
        let slots = FairSlots::new(1, 50);
        let holder = slots.acquire(client("a"), soon(10)).await.unwrap();
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut tasks = Vec::new();
        for (name, n) in [("a", 4), ("b", 2), ("c", 2)] {
            for _ in 0..n {
                let (slots, order) = (Arc::clone(&slots), Arc::clone(&order));
                tasks.push(tokio::spawn(async move {
                    let slot = slots.acquire(client(name), soon(5_000)).await.unwrap();
                    order.lock().unwrap().push(name);
                    // Held a moment, so the next grant sees every waiter.
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    drop(slot);
                }));
                settle().await;
            }
        }
        drop(holder);
        for task in tasks {
            task.await.unwrap();
        }
        // One slot: each grant goes to the client served least recently (`a` had the slot
        // when they queued), whatever order their requests came in; FIFO would be a,a,a,a,b,b,c,c.
        assert_eq!(
            *order.lock().unwrap(),
            ["b", "c", "a", "b", "c", "a", "a", "a"]
        );
    }

    #[tokio::test]
    async fn a_waiter_that_gives_up_leaves_no_trace() {
        let slots = FairSlots::new(1, 50);
        let holder = slots.acquire(client("a"), soon(10)).await.unwrap();
        // Its deadline passes.
        assert_eq!(slots.acquire(client("b"), soon(20)).await.err(), Some(Busy));
        assert_eq!(slots.counts(), (0, 0));
        // Its future is dropped while it waits.
        let dropped = tokio::spawn({
            let slots = Arc::clone(&slots);
            async move { slots.acquire(client("c"), soon(5_000)).await.is_ok() }
        });
        settle().await;
        assert_eq!(slots.counts(), (0, 1));
        dropped.abort();
        let _ = dropped.await;
        assert_eq!(slots.counts(), (0, 0));
        drop(holder);
        assert_eq!(slots.counts(), (1, 0));
        let again = slots.acquire(client("d"), soon(10)).await.unwrap();
        assert_eq!(
            again.standing(),
            SlotStanding {
                quota: 1,
                remaining: 0
            }
        );
    }

    #[tokio::test]
    async fn a_slot_granted_to_a_waiter_that_then_gives_up_is_handed_on() {
        let slots = FairSlots::new(1, 50);
        let holder = slots.acquire(client("a"), soon(10)).await.unwrap();
        // Granted (on the release below) but never polled again: dropped unclaimed.
        let mut gone = Box::pin(slots.acquire(client("b"), soon(5_000)));
        assert!(futures_util::FutureExt::now_or_never(gone.as_mut()).is_none());
        let next = tokio::spawn({
            let slots = Arc::clone(&slots);
            async move { slots.acquire(client("c"), soon(5_000)).await.map(|_| ()) }
        });
        settle().await;
        drop(holder);
        assert_eq!(slots.counts(), (0, 1), "granted to b, c waits");
        drop(gone);
        assert_eq!(next.await.unwrap(), Ok(()));
        assert_eq!(slots.counts(), (1, 0));
    }
}
