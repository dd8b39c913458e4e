//! When a `/tree` evaluation gets a place: one of as many slots as there are search workers,
//! so that teaching trees (a 100,000-node tree with a trace takes tens of milliseconds) never
//! hold more threads than the searches do, and since each slot holds a body of up to
//! `tree_max_body_bytes` and its tree, their number bounds the memory trees can take. The
//! service decides when this work runs, as it
//! does for moves, reviews and batch items; the API only reads the body and renders the result.
//!
//! The API takes the slot before it reads the body: only as many bodies as slots are ever read
//! at once, so stalled uploads cannot add up; waiting for a slot counts against the body's own
//! deadline.
//!
//! The slots are shared fairly between clients ([`super::fair_slots`]): a slot that frees goes
//! to the waiting client holding the fewest, in turn, so a client keeping many trees in flight
//! cannot make another wait behind all of them; a client alone may use every slot. A tree's
//! evaluation cannot yield half way (unlike a search), so a client that took every slot while
//! alone keeps them until its trees end: another client waits at most for the shortest of them
//! (and for a body being uploaded, at most the body deadline).

use std::sync::Arc;
use std::time::Instant;

use super::caller::ClientId;
use super::fair_slots::{FairSlot, FairSlots, SlotStanding};
use super::{Service, ServiceError};

/// The slots, one per search worker, shared fairly between clients.
pub struct TreeSlots(Arc<FairSlots>);

impl TreeSlots {
    /// `workers` slots, of which a client is sure of `share_percent`
    /// (`KIBITZ_CLIENT_SHARE_PERCENT`, at least one) while another client waits.
    pub fn new(workers: usize, share_percent: u8) -> Self {
        TreeSlots(FairSlots::new(workers, share_percent))
    }
}

/// A place among the tree evaluations, held until the evaluation ends.
pub struct TreeSlot {
    slot: FairSlot,
}

impl TreeSlot {
    /// The client's share of the slots and what was left of it after this one (for the
    /// answer's `RateLimit` headers).
    pub fn standing(&self) -> SlotStanding {
        self.slot.standing()
    }
}

impl Service {
    /// One of the tree evaluation slots for `client`, waited for until `until` at the latest
    /// (then an overload: every slot stayed busy).
    pub async fn tree_slot(
        &self,
        client: &ClientId,
        until: Instant,
    ) -> Result<TreeSlot, ServiceError> {
        let slots = &self.inner.tree_slots.0;
        match slots.acquire(Arc::clone(&client.name), until).await {
            Ok(slot) => Ok(TreeSlot { slot }),
            Err(_) => Err(ServiceError::TreeSlotsBusy {
                slots: slots.total(),
            }),
        }
    }

    /// Runs `work` (a tree's evaluation) off the async threads, holding `slot` until it ends.
    pub async fn evaluate_tree<T, W>(&self, slot: TreeSlot, work: W) -> Result<T, ServiceError>
    where
        T: Send + 'static,
        W: FnOnce() -> T + Send + 'static,
    {
        tokio::task::spawn_blocking(move || {
            let _slot = slot;
            work()
        })
        .await
        .map_err(|error| ServiceError::TreeFailed(error.to_string()))
    }
}
