//! Batch analyses (`/analyses`): in process on one replica without Redis (`in_process`), and
//! across replica binaries sharing a real `redis-server` (`replicas`): every item answered
//! once, spread, taken over from a killed replica, resumed after a Redis restart, poison items
//! failed. `fair_share`: items are shared between clients round-robin, in process and
//! through Redis. `bounds` floods both with batches under ever new client ids. `move_first`: a
//! `/move` beside batch items that hold every worker is answered in time (pre-emption). `batch_client` holds
//! what they send and check.

mod batch_client;
mod bounds;
mod fair_share;
mod forgeries;
mod in_process;
mod move_first;
mod replicas;
mod shutdown;
mod watchers;
