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

use std::sync::Arc;
use std::time::Instant;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::{Service, ServiceError};

/// The slots, one per search worker.
pub struct TreeSlots(Arc<Semaphore>);

impl TreeSlots {
    pub fn new(workers: usize) -> Self {
        TreeSlots(Arc::new(Semaphore::new(workers)))
    }
}

/// A place among the tree evaluations, held (never read) until the evaluation ends.
pub struct TreeSlot {
    _permit: OwnedSemaphorePermit,
}

impl Service {
    /// One of the tree evaluation slots, waited for until `until` at the latest (then an
    /// overload: every slot stayed busy).
    pub async fn tree_slot(&self, until: Instant) -> Result<TreeSlot, ServiceError> {
        let slots = Arc::clone(&self.inner.tree_slots.0);
        match tokio::time::timeout_at(until.into(), slots.acquire_owned()).await {
            Ok(Ok(permit)) => Ok(TreeSlot { _permit: permit }),
            Ok(Err(_)) | Err(_) => Err(ServiceError::TreeSlotsBusy {
                slots: self.workers(),
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
