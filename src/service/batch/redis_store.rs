//! The batch store in Redis, shared by every replica: one stream per priority with one
//! consumer group, and a hash per batch for its state and one for its results.
//!
//! - `kibitz:batch:v1:queue:{high,normal,low}`: one entry per item (`batch`, `index`, `total`,
//!   `budget_ms`, `work_ms`, `item`), read by the group `kibitz` with `XREADGROUP` (each entry goes to one
//!   consumer, a replica), and taken over from a consumer that held it longer than the idle
//!   timeout with `XAUTOCLAIM`, which counts the hand-outs (the attempts, read with
//!   `XPENDING`). A consumer working on an item claims it again (`XCLAIM ... JUSTID`) every
//!   third of the idle timeout, so a long item is never taken over from a live replica.
//! - `kibitz:batch:v1:{id}`: the batch (`total`, `client`, `cancelled`, `started`,
//!   `result_bytes`).
//! - `kibitz:batch:v1:{id}:results`: index → result JSON, written with `HSETNX`, so each
//!   index has one result whoever ran it, and only then the entry acknowledged and deleted
//!   (`XACK`, `XDEL`, in the same script). A cancelled or expired batch takes no more results.
//! - `kibitz:batch:v1:client:{client}`: the ids of a client's batches, for the in-flight limit
//!   (checked and then written in two steps: replicas racing can let a client exceed it by
//!   the batches submitted at the same instant).
//!
//! - `kibitz:batch:v1:usage`: what every client's batches hold together (`items`,
//!   `queued_bytes`, `work_ms` of the queued items, `result_bytes` of the kept results),
//!   checked and raised in one script before a batch is written, lowered by the script that
//!   deletes an entry (only when `XDEL` deleted it, so never twice) and by the sweep.
//! - `kibitz:batch:v1:expiry`: batch id → when it expires (ms since the epoch): created,
//!   and pushed back `KIBITZ_BATCH_RESULT_TTL_S` at each result.
//!
//! **No batch key has a TTL.** The manifest's Redis evicts with `volatile-lru`, which only
//! ever evicts keys with a TTL: the answer cache's. So batch data is never evicted (an
//! accepted batch is never a 404 before its time), and what it takes from the cache is bounded
//! by `KIBITZ_BATCH_MAX_STORED_BYTES`, checked before every batch is written. A replica
//! sweeps expired batches every second (the expiry set, 200 at a time) and, when the
//! streams are empty, resets the queued counts (so a count that drifted, an entry deleted by
//! hand, heals). The scripts name keys they build; this is a single Redis, not a cluster.
//!
//! Consumers
//! block in `XREADGROUP` on a connection of their own, so that the blocking read never holds
//! up the other calls; both connections are the `redis` crate's `ConnectionManager`, which
//! reconnects by itself; a Redis that restarted without its data loses the group, which is
//! then made again (`NOGROUP`).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use redis::Value;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};

use super::verify::{Refusal, Seal, canonical_index};
use super::watchers::Progress;
use super::{
    BatchError, BatchSettings, BatchState, BatchStore, BatchView, Bound, Delivery, Handle,
    NewBatch, Priority, QueueDepth, Usage, stored_bytes,
};
use crate::service::metrics::batch::BatchMetrics;
use crate::service::shared_cache::{Endpoint, SharedCacheError, endpoint};

const PREFIX: &str = "kibitz:batch:v1";
const GROUP: &str = "kibitz";
/// How long a blocking read waits for an item.
const BLOCK_MS: u64 = 250;
/// Results asked for in one `HMGET` by a batch's poller.
const RESULTS_AT_ONCE: usize = 500;
/// Taking over others' items is looked for at most this often per replica.
const RECLAIM_EVERY: Duration = Duration::from_millis(200);

fn stream(priority: Priority) -> String {
    format!("{PREFIX}:queue:{}", priority.as_str())
}

fn meta_key(id: &str) -> String {
    format!("{PREFIX}:{id}")
}

fn results_key(id: &str) -> String {
    format!("{PREFIX}:{id}:results")
}

fn client_key(client: &str) -> String {
    format!("{PREFIX}:client:{client}")
}

fn usage_key() -> String {
    format!("{PREFIX}:usage")
}

fn expiry_key() -> String {
    format!("{PREFIX}:expiry")
}

/// Milliseconds since the epoch, `after` from now.
fn epoch_ms(after: Duration) -> u64 {
    (std::time::SystemTime::now() + after)
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Checks a batch against the bounds over every client and, if it keeps them, counts it.
/// `KEYS[1]` usage; `ARGV` the batch's items, bytes and work, then the three limits. Answers
/// 0, or the [`Bound`] code (1 items, 2 bytes, 3 work) it would pass.
const RESERVE: &str = r"
local u = redis.call('HMGET', KEYS[1], 'items', 'queued_bytes', 'result_bytes', 'work_ms')
local items = tonumber(u[1]) or 0
local bytes = (tonumber(u[2]) or 0) + (tonumber(u[3]) or 0)
local work = tonumber(u[4]) or 0
if items + tonumber(ARGV[1]) > tonumber(ARGV[4]) then return 1 end
if bytes + tonumber(ARGV[2]) > tonumber(ARGV[5]) then return 2 end
if work + tonumber(ARGV[3]) > tonumber(ARGV[6]) then return 3 end
redis.call('HINCRBY', KEYS[1], 'items', ARGV[1])
redis.call('HINCRBY', KEYS[1], 'queued_bytes', ARGV[2])
redis.call('HINCRBY', KEYS[1], 'work_ms', ARGV[3])
return 0
";

/// Lowers the usage `KEYS[1]` by `ARGV` (items, queued bytes, work), never below zero.
const LOWER: &str = r"
local fields = {'items', 'queued_bytes', 'work_ms'}
for i, field in ipairs(fields) do
  local n = tonumber(ARGV[i]) or 0
  if n > 0 and redis.call('HINCRBY', KEYS[1], field, -n) < 0 then
    redis.call('HSET', KEYS[1], field, 0)
  end
end
return 0
";

/// Stores an item's result (unless its index has one, or its batch is cancelled or gone),
/// then acknowledges and deletes its entry, lowering the usage if the entry was deleted here.
/// `KEYS`: results, meta, usage, expiry, stream. `ARGV`: index, result ('' for none), expiry
/// (ms), batch id, group, entry id, item bytes, work ms, counted (1/0), result bytes.
/// Answers `{written, results stored}`.
const FINISH: &str = r"
local written = 0
if ARGV[2] ~= '' and redis.call('HGET', KEYS[2], 'total')
   and redis.call('HGET', KEYS[2], 'cancelled') ~= '1' then
  written = redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2])
  if written == 1 then
    redis.call('HINCRBY', KEYS[2], 'result_bytes', ARGV[10])
    redis.call('HINCRBY', KEYS[3], 'result_bytes', ARGV[10])
    redis.call('ZADD', KEYS[4], ARGV[3], ARGV[4])
  end
end
redis.call('XACK', KEYS[5], ARGV[5], ARGV[6])
if redis.call('XDEL', KEYS[5], ARGV[6]) == 1 and ARGV[9] == '1' then
  local lower = {items = 1, queued_bytes = tonumber(ARGV[7]), work_ms = tonumber(ARGV[8])}
  for field, n in pairs(lower) do
    if redis.call('HINCRBY', KEYS[3], field, -n) < 0 then redis.call('HSET', KEYS[3], field, 0) end
  end
end
return {written, redis.call('HLEN', KEYS[1])}
";

/// Deletes a batch and what its results count. `KEYS`: meta, results, usage, expiry. `ARGV`:
/// its id. Answers 1 if it was there.
const DELETE: &str = r"
local bytes = tonumber(redis.call('HGET', KEYS[1], 'result_bytes')) or 0
local existed = redis.call('DEL', KEYS[1])
redis.call('DEL', KEYS[2])
redis.call('ZREM', KEYS[4], ARGV[1])
if bytes > 0 and redis.call('HINCRBY', KEYS[3], 'result_bytes', -bytes) < 0 then
  redis.call('HSET', KEYS[3], 'result_bytes', 0)
end
return existed
";

/// Drops batches past their time. `KEYS`: expiry, usage, the three streams. `ARGV`: now (ms),
/// the key prefix.
const SWEEP: &str = r"
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, 200)
for _, id in ipairs(ids) do
  local meta = ARGV[2] .. ':' .. id
  local bytes = tonumber(redis.call('HGET', meta, 'result_bytes')) or 0
  redis.call('DEL', meta, meta .. ':results')
  if redis.call('HINCRBY', KEYS[2], 'result_bytes', -bytes) < 0 then
    redis.call('HSET', KEYS[2], 'result_bytes', 0)
  end
  redis.call('ZREM', KEYS[1], id)
end
if redis.call('XLEN', KEYS[3]) + redis.call('XLEN', KEYS[4]) + redis.call('XLEN', KEYS[5]) == 0 then
  redis.call('HSET', KEYS[2], 'items', 0, 'queued_bytes', 0, 'work_ms', 0)
end
if redis.call('ZCARD', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[2], 'result_bytes', 0)
end
return #ids
";

/// A batch's `total`, `cancelled` and `started`, as read.
type MetaFlags = (Option<String>, Option<String>, Option<String>);

/// The Redis store (see the module doc).
pub struct RedisStore {
    client: redis::Client,
    /// Made lazily, inside the runtime: the calls' connection and the blocking reads' one.
    calls: Mutex<Option<ConnectionManager>>,
    reads: Mutex<Option<ConnectionManager>>,
    settings: BatchSettings,
    /// When this replica last looked for items to take over.
    last_reclaim: Mutex<Option<Instant>>,
    /// Signs entries and results, and checks what is read back ([`super::verify`]).
    seal: Seal,
    /// Where refusals of what was read back are counted.
    metrics: BatchMetrics,
}

impl RedisStore {
    pub fn new(
        endpoint: &Endpoint,
        settings: BatchSettings,
        seal: Seal,
        metrics: BatchMetrics,
    ) -> Result<Self, SharedCacheError> {
        let (client, _) = endpoint::client(endpoint)?;
        Ok(RedisStore {
            seal,
            metrics,
            client,
            calls: Mutex::new(None),
            reads: Mutex::new(None),
            settings,
            last_reclaim: Mutex::new(None),
        })
    }

    fn manager(
        &self,
        slot: &Mutex<Option<ConnectionManager>>,
        response: Duration,
    ) -> Result<ConnectionManager, BatchError> {
        let mut slot = slot.lock().unwrap_or_else(PoisonError::into_inner);
        if slot.is_none() {
            let config = ConnectionManagerConfig::new()
                .set_connection_timeout(Some(Duration::from_millis(500)))
                .set_response_timeout(Some(response))
                .set_number_of_retries(2)
                .set_min_delay(Duration::from_millis(50))
                .set_max_delay(Duration::from_millis(500));
            *slot = Some(ConnectionManager::new_lazy_with_config(
                self.client.clone(),
                config,
            )?);
        }
        slot.clone()
            .ok_or_else(|| BatchError::Store("no connection".into()))
    }

    fn calls(&self) -> Result<ConnectionManager, BatchError> {
        self.manager(&self.calls, Duration::from_secs(1))
    }

    fn reads(&self) -> Result<ConnectionManager, BatchError> {
        self.manager(
            &self.reads,
            Duration::from_millis(BLOCK_MS) + Duration::from_secs(1),
        )
    }

    /// Makes the group on every stream (and the streams), if not there.
    async fn ensure_groups(&self) -> Result<(), BatchError> {
        let mut connection = self.calls()?;
        for priority in Priority::ALL {
            let made: Result<(), redis::RedisError> = redis::cmd("XGROUP")
                .arg("CREATE")
                .arg(stream(priority))
                .arg(GROUP)
                .arg("0")
                .arg("MKSTREAM")
                .query_async(&mut connection)
                .await;
            match made {
                Err(error) if error.code() != Some("BUSYGROUP") => return Err(error.into()),
                _ => {}
            }
        }
        Ok(())
    }

    async fn create_now(&self, batch: &NewBatch) -> Result<u64, BatchError> {
        let mut connection = self.calls()?;
        let in_flight = self.in_flight(&mut connection, &batch.client).await?;
        if in_flight >= self.settings.max_in_flight {
            return Err(BatchError::TooManyInFlight {
                limit: self.settings.max_in_flight,
            });
        }
        self.ensure_groups().await?;
        let adds = Usage::of(batch);
        let settings = &self.settings;
        let code: i64 = redis::cmd("EVAL")
            .arg(RESERVE)
            .arg(1)
            .arg(usage_key())
            .arg(adds.items)
            .arg(adds.bytes)
            .arg(adds.work_ms)
            .arg(settings.max_queued_items)
            .arg(settings.max_stored_bytes)
            .arg(settings.max_queued_work_ms)
            .query_async(&mut connection)
            .await?;
        if let Some(bound) = Bound::from_code(code) {
            return Err(BatchError::Full {
                bound,
                limit: settings.limit(bound),
            });
        }
        let written = self.write_batch(&mut connection, batch).await;
        if written.is_err() {
            // Not written: what was counted for it is given back.
            let lowered: Result<(), _> = redis::cmd("EVAL")
                .arg(LOWER)
                .arg(1)
                .arg(usage_key())
                .arg(adds.items)
                .arg(adds.bytes)
                .arg(adds.work_ms)
                .query_async(&mut connection)
                .await;
            if let Err(error) = lowered {
                tracing::warn!(%error, "a refused batch's count not given back (the sweep heals it)");
            }
        }
        written.map(|()| in_flight + 1)
    }

    /// Writes the batch's keys and queues its items, all or nothing.
    async fn write_batch(
        &self,
        connection: &mut ConnectionManager,
        batch: &NewBatch,
    ) -> Result<(), BatchError> {
        let ttl = self.settings.ttl.as_secs().max(1);
        let meta = meta_key(&batch.id);
        let total = batch.items.len();
        let budget = batch.budget_ms.map_or_else(String::new, |b| b.to_string());
        let mut pipe = redis::pipe();
        pipe.atomic()
            .cmd("HSET")
            .arg(&meta)
            .arg("total")
            .arg(total)
            .arg("client")
            .arg(&batch.client)
            .arg("priority")
            .arg(batch.priority.as_str())
            .arg("cancelled")
            .arg(0)
            .ignore()
            .cmd("ZADD")
            .arg(expiry_key())
            .arg(epoch_ms(self.settings.ttl))
            .arg(&batch.id)
            .ignore();
        let queue = stream(batch.priority);
        let total_text = total.to_string();
        for (index, item) in batch.items.iter().enumerate() {
            let work = item.work_ms.to_string();
            let index_text = index.to_string();
            let mac = self.seal.sign(&[
                &batch.id,
                &index_text,
                &total_text,
                &budget,
                &work,
                &item.json,
            ]);
            pipe.cmd("XADD")
                .arg(&queue)
                .arg("*")
                .arg("batch")
                .arg(&batch.id)
                .arg("index")
                .arg(index)
                .arg("total")
                .arg(total)
                .arg("budget_ms")
                .arg(&budget)
                .arg("work_ms")
                .arg(&work)
                .arg("item")
                .arg(&item.json)
                .arg("mac")
                .arg(mac.unwrap_or_default())
                .ignore();
        }
        let client = client_key(&batch.client);
        pipe.cmd("SADD")
            .arg(&client)
            .arg(&batch.id)
            .ignore()
            .cmd("EXPIRE")
            .arg(&client)
            .arg(ttl)
            .ignore();
        pipe.query_async::<()>(connection).await?;
        Ok(())
    }

    /// The client's batches still queued or running; the others leave its set.
    async fn in_flight(
        &self,
        connection: &mut ConnectionManager,
        client: &str,
    ) -> Result<u64, BatchError> {
        let key = client_key(client);
        let ids: Vec<String> = redis::cmd("SMEMBERS")
            .arg(&key)
            .query_async(connection)
            .await?;
        let mut count = 0;
        for id in ids {
            match self.view_now(connection, &id).await? {
                Some(view) if matches!(view.state, BatchState::Queued | BatchState::Running) => {
                    count += 1;
                }
                _ => {
                    redis::cmd("SREM")
                        .arg(&key)
                        .arg(&id)
                        .query_async::<()>(connection)
                        .await?;
                }
            }
        }
        Ok(count)
    }

    async fn view_now(
        &self,
        connection: &mut ConnectionManager,
        id: &str,
    ) -> Result<Option<BatchView>, BatchError> {
        let (meta, raw_results): (HashMap<String, String>, HashMap<String, String>) = redis::pipe()
            .cmd("HGETALL")
            .arg(meta_key(id))
            .cmd("HGETALL")
            .arg(results_key(id))
            .query_async(connection)
            .await?;
        let Some(total) = meta.get("total").and_then(|t| t.parse::<usize>().ok()) else {
            return Ok(None);
        };
        let flag = |name: &str| meta.get(name).is_some_and(|v| v == "1");
        // Each field checked: a canonical index in range (so no index twice), the value a
        // result's shape, sealed with the key when there is one.
        let mut results: Vec<(usize, String)> = Vec::with_capacity(raw_results.len());
        for (field, stored) in &raw_results {
            match self.seal.open_result(id, total, field, stored) {
                Ok((index, json)) => results.push((index, json.to_owned())),
                Err(refusal) => self.refused("result", refusal, id),
            }
        }
        results.sort_unstable_by_key(|(index, _)| *index);
        Ok(Some(BatchView {
            id: id.to_owned(),
            state: BatchState::of(flag("cancelled"), flag("started"), results.len(), total),
            total,
            results,
        }))
    }

    async fn cancel_now(&self, id: &str) -> Result<Option<BatchView>, BatchError> {
        let mut connection = self.calls()?;
        let Some(view) = self.view_now(&mut connection, id).await? else {
            return Ok(None);
        };
        if view.state == BatchState::Done {
            return Ok(Some(view));
        }
        redis::cmd("HSET")
            .arg(meta_key(id))
            .arg("cancelled")
            .arg(1)
            .query_async::<()>(&mut connection)
            .await?;
        self.view_now(&mut connection, id).await
    }

    async fn take_now(&self, consumer: &str) -> Result<Option<Delivery>, BatchError> {
        match self.take_once(consumer).await {
            Err(BatchError::Store(error)) if error.contains("NOGROUP") => {
                self.ensure_groups().await?;
                self.take_once(consumer).await
            }
            other => other,
        }
    }

    async fn take_once(&self, consumer: &str) -> Result<Option<Delivery>, BatchError> {
        if self.reclaim_due() {
            for priority in Priority::ALL {
                if let Some(delivery) = self.reclaim(consumer, priority).await? {
                    return Ok(Some(delivery));
                }
            }
        }
        let mut reads = self.reads()?;
        // Highest priority first, without waiting; then wait on all three.
        for priority in Priority::ALL {
            let reply: Value = read_group(consumer, &[priority], None)
                .query_async(&mut reads)
                .await?;
            if let Some(delivery) = self.first_entry(&reply) {
                return Ok(Some(delivery));
            }
        }
        let reply: Value = read_group(consumer, &Priority::ALL, Some(BLOCK_MS))
            .query_async(&mut reads)
            .await?;
        Ok(self.first_entry(&reply))
    }

    /// Counts and logs something refused when read back.
    fn refused(&self, what: &'static str, refusal: Refusal, batch: &str) {
        self.metrics.forged(refusal.as_str());
        tracing::warn!(
            what,
            batch,
            reason = refusal.as_str(),
            "refused what Redis gave back (not written by kibitz, or changed since)"
        );
    }

    /// The first entry of an `XREADGROUP` reply (`[[stream, [[id, fields]]], ...]`), or
    /// `None` when it timed out or was empty.
    fn first_entry(&self, reply: &Value) -> Option<Delivery> {
        let Value::Array(streams) = reply else {
            return None;
        };
        for read in streams {
            let Value::Array(parts) = read else { continue };
            let (Some(name), Some(Value::Array(entries))) =
                (parts.first().and_then(text), parts.get(1))
            else {
                continue;
            };
            let Some(priority) = Priority::ALL.into_iter().find(|p| stream(*p) == name) else {
                continue;
            };
            if let Some(entry) = entries.first() {
                return Some(self.checked_entry(priority, entry).unwrap_or_else(|| {
                    // Not an item: skipped unrun and dropped (its batch, "", is never there).
                    undecodable(priority, entry)
                }));
            }
        }
        None
    }

    /// The entry as an item if it is one kibitz wrote (see [`super::verify`]); else counted.
    fn checked_entry(&self, priority: Priority, entry: &Value) -> Option<Delivery> {
        match parse_entry(priority, entry, &self.seal) {
            Ok(delivery) => Some(delivery),
            Err((refusal, batch)) => {
                self.refused("queue entry", refusal, &batch);
                None
            }
        }
    }

    fn reclaim_due(&self) -> bool {
        let mut last = self
            .last_reclaim
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let due = last.is_none_or(|at| at.elapsed() >= RECLAIM_EVERY);
        if due {
            *last = Some(Instant::now());
        }
        due
    }

    /// An item of `priority` held longer than the idle timeout, now `consumer`'s, with its
    /// hand-outs counted.
    async fn reclaim(
        &self,
        consumer: &str,
        priority: Priority,
    ) -> Result<Option<Delivery>, BatchError> {
        let mut connection = self.calls()?;
        let queue = stream(priority);
        let reply: Value = redis::cmd("XAUTOCLAIM")
            .arg(&queue)
            .arg(GROUP)
            .arg(consumer)
            .arg(self.settings.reclaim_idle.as_millis() as u64)
            .arg("0-0")
            .arg("COUNT")
            .arg(1)
            .query_async(&mut connection)
            .await?;
        let Value::Array(parts) = reply else {
            return Ok(None);
        };
        let Some(Value::Array(entries)) = parts.get(1) else {
            return Ok(None);
        };
        let Some(entry) = entries.first() else {
            return Ok(None);
        };
        let Some(mut delivery) = self.checked_entry(priority, entry) else {
            self.drop_entry(priority, entry).await?;
            return Ok(None);
        };
        let Handle::Stream { id, .. } = &delivery.handle else {
            return Ok(None);
        };
        let pending: Value = redis::cmd("XPENDING")
            .arg(&queue)
            .arg(GROUP)
            .arg(id)
            .arg(id)
            .arg(1)
            .query_async(&mut connection)
            .await?;
        delivery.attempts = pending_count(&pending).unwrap_or(1);
        delivery.reclaimed = true;
        Ok(Some(delivery))
    }

    /// Acknowledges and deletes an entry that is not an item (not written by kibitz).
    async fn drop_entry(&self, priority: Priority, entry: &Value) -> Result<(), BatchError> {
        let Some(id) = entry_id(entry) else {
            return Ok(());
        };
        tracing::warn!(id = %id, "a batch queue entry that is not an item was dropped");
        let mut connection = self.calls()?;
        ack(priority, &id)
            .query_async::<()>(&mut connection)
            .await?;
        Ok(())
    }

    async fn wanted_now(&self, delivery: &Delivery) -> Result<bool, BatchError> {
        let mut connection = self.calls()?;
        let meta = meta_key(&delivery.batch);
        let results = results_key(&delivery.batch);
        let (flags, stored): (MetaFlags, Option<String>) = redis::pipe()
            .cmd("HMGET")
            .arg(&meta)
            .arg("total")
            .arg("cancelled")
            .arg("started")
            .cmd("HGET")
            .arg(&results)
            .arg(delivery.index)
            .query_async(&mut connection)
            .await?;
        let (total, cancelled, started) = flags;
        // An entry naming a batch of another size is not that batch's item.
        if total.as_deref() != Some(delivery.total.to_string().as_str())
            || cancelled.as_deref() == Some("1")
        {
            return Ok(false);
        }
        if let Some(stored) = stored {
            let field = delivery.index.to_string();
            match self
                .seal
                .open_result(&delivery.batch, delivery.total, &field, &stored)
            {
                Ok(_) => return Ok(false),
                // A forged result holds the index: it goes, and the item is run.
                Err(refusal) => {
                    self.refused("result", refusal, &delivery.batch);
                    redis::cmd("HDEL")
                        .arg(&results)
                        .arg(&field)
                        .query_async::<()>(&mut connection)
                        .await?;
                }
            }
        }
        if started.is_none() {
            redis::cmd("HSET")
                .arg(&meta)
                .arg("started")
                .arg(1)
                .query_async::<()>(&mut connection)
                .await?;
        }
        Ok(true)
    }

    async fn finish_now(
        &self,
        delivery: &Delivery,
        result: Option<&str>,
    ) -> Result<bool, BatchError> {
        let (priority, id) = stream_handle(delivery)?;
        let mut connection = self.calls()?;
        let sealed =
            result.map(|json| self.seal.seal_result(&delivery.batch, delivery.index, json));
        let (written, stored): (i64, usize) = redis::cmd("EVAL")
            .arg(FINISH)
            .arg(5)
            .arg(results_key(&delivery.batch))
            .arg(meta_key(&delivery.batch))
            .arg(usage_key())
            .arg(expiry_key())
            .arg(stream(priority))
            .arg(delivery.index)
            .arg(sealed.as_deref().unwrap_or(""))
            .arg(epoch_ms(self.settings.ttl))
            .arg(&delivery.batch)
            .arg(GROUP)
            .arg(id)
            .arg(stored_bytes(&delivery.item))
            .arg(delivery.work_ms)
            .arg(if delivery.counted { 1 } else { 0 })
            .arg(sealed.as_deref().map_or(0, stored_bytes))
            .query_async(&mut connection)
            .await?;
        Ok(written == 1 && stored == delivery.total)
    }

    /// Makes the item idle for longer than the timeout: the next look for items to take over
    /// (any replica's) takes it. Claimed with `JUSTID`, which does not count a hand-out; the
    /// taking over does.
    async fn give_back_now(&self, delivery: &Delivery) -> Result<(), BatchError> {
        let (priority, id) = stream_handle(delivery)?;
        let mut connection = self.calls()?;
        let idle = self.settings.reclaim_idle.as_millis() as u64 * 2;
        redis::cmd("XCLAIM")
            .arg(stream(priority))
            .arg(GROUP)
            .arg(&self.settings.replica)
            .arg(0)
            .arg(id)
            .arg("IDLE")
            .arg(idle)
            .arg("JUSTID")
            .query_async::<()>(&mut connection)
            .await?;
        Ok(())
    }

    async fn heartbeat_now(&self, consumer: &str, delivery: &Delivery) -> Result<(), BatchError> {
        let (priority, id) = stream_handle(delivery)?;
        let mut connection = self.calls()?;
        redis::cmd("XCLAIM")
            .arg(stream(priority))
            .arg(GROUP)
            .arg(consumer)
            .arg(0)
            .arg(id)
            .arg("JUSTID")
            .query_async::<()>(&mut connection)
            .await?;
        Ok(())
    }

    async fn sweep_now(&self) -> Result<(), BatchError> {
        let mut connection = self.calls()?;
        let mut sweep = redis::cmd("EVAL");
        sweep.arg(SWEEP).arg(5).arg(expiry_key()).arg(usage_key());
        for priority in Priority::ALL {
            sweep.arg(stream(priority));
        }
        let swept: u64 = sweep
            .arg(epoch_ms(Duration::ZERO))
            .arg(PREFIX)
            .query_async(&mut connection)
            .await?;
        if swept > 0 {
            tracing::debug!(swept, "expired batches dropped");
        }
        Ok(())
    }

    /// One round trip, no result read: `HMGET` of the batch's flags and `HLEN` of its results.
    async fn progress_now(&self, id: &str) -> Result<Option<Progress>, BatchError> {
        let mut connection = self.calls()?;
        let (flags, stored): (MetaFlags, usize) = redis::pipe()
            .cmd("HMGET")
            .arg(meta_key(id))
            .arg("total")
            .arg("cancelled")
            .arg("started")
            .cmd("HLEN")
            .arg(results_key(id))
            .query_async(&mut connection)
            .await?;
        let (total, cancelled, started) = flags;
        let Some(total) = total.and_then(|t| t.parse::<usize>().ok()) else {
            return Ok(None);
        };
        Ok(Some(Progress {
            total,
            stored,
            cancelled: cancelled.as_deref() == Some("1"),
            started: started.as_deref() == Some("1"),
        }))
    }

    /// `HMGET` of `indices` (at most [`RESULTS_AT_ONCE`] a call), each result there checked
    /// as [`Self::view_now`] checks it.
    async fn results_now(
        &self,
        id: &str,
        total: usize,
        indices: &[usize],
    ) -> Result<Vec<(usize, String)>, BatchError> {
        let mut connection = self.calls()?;
        let key = results_key(id);
        let mut results = Vec::new();
        for chunk in indices.chunks(RESULTS_AT_ONCE) {
            let stored: Vec<Option<String>> = redis::cmd("HMGET")
                .arg(&key)
                .arg(chunk)
                .query_async(&mut connection)
                .await?;
            for (index, stored) in chunk.iter().zip(stored) {
                let Some(stored) = stored else { continue };
                match self
                    .seal
                    .open_result(id, total, &index.to_string(), &stored)
                {
                    Ok((index, json)) => results.push((index, json.to_owned())),
                    Err(refusal) => self.refused("result", refusal, id),
                }
            }
        }
        Ok(results)
    }

    async fn depth_now(&self) -> Result<QueueDepth, BatchError> {
        let mut connection = self.calls()?;
        let mut depth = QueueDepth::default();
        for priority in Priority::ALL {
            let (length, pending): (u64, Value) = redis::pipe()
                .cmd("XLEN")
                .arg(stream(priority))
                .cmd("XPENDING")
                .arg(stream(priority))
                .arg(GROUP)
                .query_async(&mut connection)
                .await
                .or_else(|error| {
                    // No group yet: nothing was ever queued.
                    if error.code() == Some("NOGROUP") {
                        Ok((0, Value::Nil))
                    } else {
                        Err(error)
                    }
                })?;
            let held = match &pending {
                Value::Array(summary) => summary.first().and_then(int).unwrap_or(0),
                _ => 0,
            };
            depth.pending += held;
            depth.queued += length.saturating_sub(held);
        }
        Ok(depth)
    }
}

/// `XREADGROUP` of one new entry from `priorities`' streams, waiting `block` ms if given.
fn read_group(consumer: &str, priorities: &[Priority], block: Option<u64>) -> redis::Cmd {
    let mut command = redis::cmd("XREADGROUP");
    command
        .arg("GROUP")
        .arg(GROUP)
        .arg(consumer)
        .arg("COUNT")
        .arg(1);
    if let Some(ms) = block {
        command.arg("BLOCK").arg(ms);
    }
    command.arg("STREAMS");
    for priority in priorities {
        command.arg(stream(*priority));
    }
    for _ in priorities {
        command.arg(">");
    }
    command
}

/// `XACK` and `XDEL` of entry `id`, together.
fn ack(priority: Priority, id: &str) -> redis::Pipeline {
    let mut pipe = redis::pipe();
    pipe.atomic();
    push_ack(&mut pipe, priority, id);
    pipe
}

/// Adds the `XACK` and `XDEL` of entry `id` to `pipe` (their replies ignored).
fn push_ack(pipe: &mut redis::Pipeline, priority: Priority, id: &str) {
    pipe.cmd("XACK")
        .arg(stream(priority))
        .arg(GROUP)
        .arg(id)
        .ignore()
        .cmd("XDEL")
        .arg(stream(priority))
        .arg(id)
        .ignore();
}

fn stream_handle(delivery: &Delivery) -> Result<(Priority, &str), BatchError> {
    match &delivery.handle {
        Handle::Stream { priority, id } => Ok((*priority, id)),
        Handle::Local(_) => Err(BatchError::Store("not a stream entry".into())),
    }
}

fn text(value: &Value) -> Option<String> {
    match value {
        Value::BulkString(bytes) => String::from_utf8(bytes.clone()).ok(),
        Value::SimpleString(text) => Some(text.clone()),
        _ => None,
    }
}

fn int(value: &Value) -> Option<u64> {
    match value {
        Value::Int(n) => u64::try_from(*n).ok(),
        other => text(other)?.parse().ok(),
    }
}

fn entry_id(entry: &Value) -> Option<String> {
    match entry {
        Value::Array(parts) => parts.first().and_then(text),
        _ => None,
    }
}

/// An entry `[id, [field, value, ...]]` as an item, once handed out, if its shape is an
/// item's and `seal` verifies it; else why not, and the batch it names.
fn parse_entry(
    priority: Priority,
    entry: &Value,
    seal: &Seal,
) -> Result<Delivery, (Refusal, String)> {
    let shape = |batch: &str| (Refusal::Shape, batch.to_owned());
    let Value::Array(parts) = entry else {
        return Err(shape(""));
    };
    let id = parts.first().and_then(text).ok_or_else(|| shape(""))?;
    let Some(Value::Array(fields)) = parts.get(1) else {
        return Err(shape(""));
    };
    let mut map = HashMap::new();
    for pair in fields.chunks(2) {
        if let [field, value] = pair {
            map.insert(
                text(field).ok_or_else(|| shape(""))?,
                text(value).ok_or_else(|| shape(""))?,
            );
        }
    }
    let batch = map.get("batch").cloned().unwrap_or_default();
    let field = |name: &str| map.get(name).map(String::as_str);
    let (Some(index), Some(total), Some(item)) = (field("index"), field("total"), field("item"))
    else {
        return Err(shape(&batch));
    };
    let total_n: usize = total.parse().map_err(|_| shape(&batch))?;
    let index_n = canonical_index(index, total_n).map_err(|r| (r, batch.clone()))?;
    let budget = field("budget_ms").unwrap_or("");
    let work = field("work_ms").unwrap_or("");
    if !seal.verify(&[&batch, index, total, budget, work, item], field("mac")) {
        return Err((Refusal::Signature, batch));
    }
    Ok(Delivery {
        index: index_n,
        total: total_n,
        item: map.remove("item").unwrap_or_default(),
        budget_ms: map.get("budget_ms").and_then(|b| b.parse().ok()),
        work_ms: map.get("work_ms").and_then(|w| w.parse().ok()).unwrap_or(0),
        // Only entries kibitz wrote (with their work) were counted in the usage.
        counted: map.contains_key("work_ms"),
        attempts: 1,
        reclaimed: false,
        priority,
        batch,
        handle: Handle::Stream { priority, id },
    })
}

/// An entry that is not an item, as a delivery whose item never decodes: its attempts run
/// out and its "result" (under an index no batch has) is dropped with it.
fn undecodable(priority: Priority, entry: &Value) -> Delivery {
    Delivery {
        batch: String::new(),
        index: usize::MAX,
        total: 0,
        item: String::new(),
        budget_ms: None,
        work_ms: 0,
        counted: false,
        attempts: 1,
        reclaimed: false,
        priority,
        handle: Handle::Stream {
            priority,
            id: entry_id(entry).unwrap_or_default(),
        },
    }
}

/// The hand-outs of the one entry of an `XPENDING key group id id 1` reply.
fn pending_count(reply: &Value) -> Option<u64> {
    let Value::Array(rows) = reply else {
        return None;
    };
    let Value::Array(row) = rows.first()? else {
        return None;
    };
    row.get(3).and_then(int)
}

impl BatchStore for RedisStore {
    fn create<'a>(&'a self, batch: &'a NewBatch) -> BoxFuture<'a, Result<u64, BatchError>> {
        self.create_now(batch).boxed()
    }

    fn view<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<BatchView>, BatchError>> {
        async move {
            let mut connection = self.calls()?;
            self.view_now(&mut connection, id).await
        }
        .boxed()
    }

    fn delete<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, BatchError>> {
        async move {
            let mut connection = self.calls()?;
            let existed: i64 = redis::cmd("EVAL")
                .arg(DELETE)
                .arg(4)
                .arg(meta_key(id))
                .arg(results_key(id))
                .arg(usage_key())
                .arg(expiry_key())
                .arg(id)
                .query_async(&mut connection)
                .await?;
            Ok(existed == 1)
        }
        .boxed()
    }

    fn cancel<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<BatchView>, BatchError>> {
        self.cancel_now(id).boxed()
    }

    fn take<'a>(
        &'a self,
        consumer: &'a str,
    ) -> BoxFuture<'a, Result<Option<Delivery>, BatchError>> {
        self.take_now(consumer).boxed()
    }

    fn wanted<'a>(&'a self, delivery: &'a Delivery) -> BoxFuture<'a, Result<bool, BatchError>> {
        self.wanted_now(delivery).boxed()
    }

    fn finish<'a>(
        &'a self,
        delivery: &'a Delivery,
        result: Option<&'a str>,
    ) -> BoxFuture<'a, Result<bool, BatchError>> {
        self.finish_now(delivery, result).boxed()
    }

    fn give_back<'a>(
        &'a self,
        delivery: &'a Delivery,
        _failed: bool,
    ) -> BoxFuture<'a, Result<(), BatchError>> {
        self.give_back_now(delivery).boxed()
    }

    fn heartbeat<'a>(
        &'a self,
        consumer: &'a str,
        delivery: &'a Delivery,
    ) -> BoxFuture<'a, Result<(), BatchError>> {
        self.heartbeat_now(consumer, delivery).boxed()
    }

    fn depth(&self) -> BoxFuture<'_, Result<QueueDepth, BatchError>> {
        self.depth_now().boxed()
    }

    fn sweep(&self) -> BoxFuture<'_, Result<(), BatchError>> {
        self.sweep_now().boxed()
    }

    fn progress<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Progress>, BatchError>> {
        self.progress_now(id).boxed()
    }

    fn results<'a>(
        &'a self,
        id: &'a str,
        total: usize,
        indices: &'a [usize],
    ) -> BoxFuture<'a, Result<Vec<(usize, String)>, BatchError>> {
        self.results_now(id, total, indices).boxed()
    }
}
