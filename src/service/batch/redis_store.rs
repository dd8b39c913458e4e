//! The batch store in Redis, shared by every replica: [`LANES`] streams per priority with one
//! consumer group each, and a hash per batch for its state and one for its results.
//!
//! - `kibitz:batch:v1:queue:{high,normal,low}` (lane 0) and `...:queue:{priority}:{1..15}`:
//!   one entry per item (`batch`, `index`, `total`, `budget_ms`, `work_ms`, `item`), in the
//!   lane of its batch's client ([`lane_of`]: a hash of the client's identity), read by the
//!   group `kibitz` with `XREADGROUP` (each entry goes to one consumer, a replica), and taken
//!   over from a consumer that held it longer than the idle timeout with `XAUTOCLAIM`, which
//!   counts the hand-outs (the attempts, read with `XPENDING`). A consumer working on an item
//!   claims it again (`XCLAIM ... JUSTID`) every third of the idle timeout, so a long item is
//!   never taken over from a live replica. Lane 0 keeps the name the one stream of a priority
//!   had before there were lanes, so what an older replica queued is still taken.
//! - `kibitz:batch:v1:cursor`: priority → the lane whose turn it is. A take (one script)
//!   reads one entry from the first lane from the cursor on that has one and moves the cursor
//!   past it, so the lanes, and with them the clients, take turns across every replica: a
//!   client's thousand items queued first delay another client's batch by one item a turn,
//!   not by the thousand (two clients that hash to the same lane are served in queue order).
//!   Priorities stay strict: a lower one is read only when every lane of the higher is empty.
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
//! Consumers with nothing to take wait in `XREAD BLOCK` on every lane (on a connection of
//! their own, so that the blocking read never holds up the other calls), which consumes
//! nothing: woken, they take through the turn script again, so no entry is ever handed to a
//! consumer by a wake-up and left pending until an idle timeout; both connections are the `redis` crate's `ConnectionManager`, which
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

/// Streams a priority's items are spread over, by client (see the module doc).
pub const LANES: u8 = 16;

/// The stream of `priority`'s `lane`; lane 0 has the name of the stream before lanes.
fn stream(priority: Priority, lane: u8) -> String {
    if lane == 0 {
        format!("{PREFIX}:queue:{}", priority.as_str())
    } else {
        format!("{PREFIX}:queue:{}:{lane}", priority.as_str())
    }
}

/// Every lane's stream of `priority`, lane 0 first.
fn lanes(priority: Priority) -> impl Iterator<Item = String> {
    (0..LANES).map(move |lane| stream(priority, lane))
}

/// Every stream, the highest priority's lanes first.
fn all_streams() -> Vec<String> {
    Priority::ALL.into_iter().flat_map(lanes).collect()
}

/// The priority and lane of stream `name`, if it is one of the queue's.
fn lane_of_stream(name: &str) -> Option<(Priority, u8)> {
    Priority::ALL
        .into_iter()
        .flat_map(|priority| (0..LANES).map(move |lane| (priority, lane)))
        .find(|&(priority, lane)| stream(priority, lane) == name)
}

/// The lane a client's items are queued in: the first byte of the SHA-256 of its identity,
/// modulo [`LANES`]. Stable across replicas and restarts (unlike std's hasher, seeded per
/// process), so that every replica puts one client's items in one lane.
pub fn lane_of(client: &str) -> u8 {
    let digest = ring::digest::digest(&ring::digest::SHA256, client.as_bytes());
    digest.as_ref()[0] % LANES
}

/// A hash: priority → the lane whose turn it is (a hash, not a string key: the manifest's
/// ACL grants kibitz `HSET`, never `SET`).
fn cursor_key() -> String {
    format!("{PREFIX}:cursor")
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

/// One new entry of a priority, from the first lane from the cursor on that has one; the
/// cursor moves past that lane. `KEYS`: the cursors' hash, then the priority's lanes in
/// order. `ARGV`: group, consumer, the priority. Answers `XREADGROUP`'s reply
/// (`[[stream, [entry]]]`), or nil.
const TAKE: &str = r"
local lanes = #KEYS - 1
local start = tonumber(redis.call('HGET', KEYS[1], ARGV[3])) or 0
for k = 0, lanes - 1 do
  local lane = (start + k) % lanes
  local reply = redis.call('XREADGROUP', 'GROUP', ARGV[1], ARGV[2], 'COUNT', 1,
    'STREAMS', KEYS[lane + 2], '>')
  if reply and reply[1] and #reply[1][2] > 0 then
    redis.call('HSET', KEYS[1], ARGV[3], (lane + 1) % lanes)
    return reply
  end
end
return nil
";

/// An entry of any of `KEYS` (a priority's lanes) held longer than `ARGV[3]` ms, now consumer
/// `ARGV[2]`'s (`XAUTOCLAIM`, which counts the hand-out). `ARGV[1]` the group. Answers
/// `{lane index (0-based), entry}`, or nil.
const RECLAIM: &str = r"
for i, key in ipairs(KEYS) do
  local reply = redis.call('XAUTOCLAIM', key, ARGV[1], ARGV[2], ARGV[3], '0-0', 'COUNT', 1)
  if reply[2] and reply[2][1] then
    return {i - 1, reply[2][1]}
  end
end
return nil
";

/// Makes group `ARGV[1]` on every stream of `KEYS` (and the streams), where not there.
const ENSURE_GROUPS: &str = r"
for _, key in ipairs(KEYS) do
  redis.pcall('XGROUP', 'CREATE', key, ARGV[1], '0', 'MKSTREAM')
end
return 0
";

/// Entries in `KEYS` (every lane) and how many of them are handed out to group `ARGV[1]`.
/// Answers `{entries, pending}`.
const DEPTH: &str = r"
local entries, pending = 0, 0
for _, key in ipairs(KEYS) do
  entries = entries + redis.call('XLEN', key)
  local summary = redis.pcall('XPENDING', key, ARGV[1])
  if type(summary) == 'table' and tonumber(summary[1]) then
    pending = pending + tonumber(summary[1])
  end
end
return {entries, pending}
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

/// Drops batches past their time. `KEYS`: expiry, usage, then every stream. `ARGV`: now (ms),
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
local queued = 0
for i = 3, #KEYS do
  queued = queued + redis.call('XLEN', KEYS[i])
end
if queued == 0 then
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

    /// Makes the group on every stream (and the streams), if not there: one script.
    async fn ensure_groups(&self) -> Result<(), BatchError> {
        let mut connection = self.calls()?;
        let streams = all_streams();
        redis::cmd("EVAL")
            .arg(ENSURE_GROUPS)
            .arg(streams.len())
            .arg(&streams)
            .arg(GROUP)
            .query_async::<()>(&mut connection)
            .await?;
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
        let queue = stream(batch.priority, lane_of(&batch.client));
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
        if let Some(delivery) = self.take_in_turn(consumer).await? {
            return Ok(Some(delivery));
        }
        // Nothing queued: wait on every lane for a new entry without taking it (XREAD, not
        // XREADGROUP: a wake-up hands nothing out), then take in turn.
        let streams = all_streams();
        let mut wait = redis::cmd("XREAD");
        wait.arg("COUNT")
            .arg(1)
            .arg("BLOCK")
            .arg(BLOCK_MS)
            .arg("STREAMS")
            .arg(&streams);
        for _ in &streams {
            wait.arg("$");
        }
        let woken: Value = wait.query_async(&mut self.reads()?).await?;
        if matches!(woken, Value::Nil) {
            return Ok(None);
        }
        self.take_in_turn(consumer).await
    }

    /// The next entry by priority, each priority's lanes taking turns (the `TAKE` script).
    async fn take_in_turn(&self, consumer: &str) -> Result<Option<Delivery>, BatchError> {
        let mut connection = self.calls()?;
        for priority in Priority::ALL {
            let reply: Value = redis::cmd("EVAL")
                .arg(TAKE)
                .arg(1 + usize::from(LANES))
                .arg(cursor_key())
                .arg(lanes(priority).collect::<Vec<_>>())
                .arg(GROUP)
                .arg(consumer)
                .arg(priority.as_str())
                .query_async(&mut connection)
                .await?;
            if let Some(delivery) = self.first_entry(&reply) {
                return Ok(Some(delivery));
            }
        }
        Ok(None)
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
            let Some((priority, lane)) = lane_of_stream(&name) else {
                continue;
            };
            if let Some(entry) = entries.first() {
                return Some(
                    self.checked_entry(priority, lane, entry)
                        .unwrap_or_else(|| {
                            // Not an item: skipped unrun and dropped (its batch, "", is never there).
                            undecodable(priority, lane, entry)
                        }),
                );
            }
        }
        None
    }

    /// The entry as an item if it is one kibitz wrote (see [`super::verify`]); else counted.
    fn checked_entry(&self, priority: Priority, lane: u8, entry: &Value) -> Option<Delivery> {
        match parse_entry(priority, lane, entry, &self.seal) {
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

    /// An item of `priority` (any lane) held longer than the idle timeout, now `consumer`'s,
    /// with its hand-outs counted.
    async fn reclaim(
        &self,
        consumer: &str,
        priority: Priority,
    ) -> Result<Option<Delivery>, BatchError> {
        let mut connection = self.calls()?;
        let reply: Value = redis::cmd("EVAL")
            .arg(RECLAIM)
            .arg(usize::from(LANES))
            .arg(lanes(priority).collect::<Vec<_>>())
            .arg(GROUP)
            .arg(consumer)
            .arg(self.settings.reclaim_idle.as_millis() as u64)
            .query_async(&mut connection)
            .await?;
        let Value::Array(parts) = reply else {
            return Ok(None);
        };
        let (Some(lane), Some(entry)) = (
            parts
                .first()
                .and_then(int)
                .and_then(|l| u8::try_from(l).ok()),
            parts.get(1),
        ) else {
            return Ok(None);
        };
        if lane >= LANES {
            return Ok(None);
        }
        let queue = stream(priority, lane);
        let Some(mut delivery) = self.checked_entry(priority, lane, entry) else {
            self.drop_entry(&queue, entry).await?;
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
    async fn drop_entry(&self, queue: &str, entry: &Value) -> Result<(), BatchError> {
        let Some(id) = entry_id(entry) else {
            return Ok(());
        };
        tracing::warn!(id = %id, "a batch queue entry that is not an item was dropped");
        let mut connection = self.calls()?;
        ack(queue, &id).query_async::<()>(&mut connection).await?;
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
        let (queue, id) = stream_handle(delivery)?;
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
            .arg(queue)
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
        let (queue, id) = stream_handle(delivery)?;
        let mut connection = self.calls()?;
        let idle = self.settings.reclaim_idle.as_millis() as u64 * 2;
        redis::cmd("XCLAIM")
            .arg(queue)
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
        let (queue, id) = stream_handle(delivery)?;
        let mut connection = self.calls()?;
        redis::cmd("XCLAIM")
            .arg(queue)
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
        let streams = all_streams();
        let mut sweep = redis::cmd("EVAL");
        sweep
            .arg(SWEEP)
            .arg(2 + streams.len())
            .arg(expiry_key())
            .arg(usage_key())
            .arg(&streams);
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
        let streams = all_streams();
        let (entries, held): (u64, u64) = redis::cmd("EVAL")
            .arg(DEPTH)
            .arg(streams.len())
            .arg(&streams)
            .arg(GROUP)
            .query_async(&mut connection)
            .await?;
        Ok(QueueDepth {
            queued: entries.saturating_sub(held),
            pending: held,
        })
    }
}

/// `XACK` and `XDEL` of entry `id` of stream `queue`, together.
fn ack(queue: &str, id: &str) -> redis::Pipeline {
    let mut pipe = redis::pipe();
    pipe.atomic();
    push_ack(&mut pipe, queue, id);
    pipe
}

/// Adds the `XACK` and `XDEL` of entry `id` to `pipe` (their replies ignored).
fn push_ack(pipe: &mut redis::Pipeline, queue: &str, id: &str) {
    pipe.cmd("XACK")
        .arg(queue)
        .arg(GROUP)
        .arg(id)
        .ignore()
        .cmd("XDEL")
        .arg(queue)
        .arg(id)
        .ignore();
}

/// The stream and entry id of a delivery from Redis.
fn stream_handle(delivery: &Delivery) -> Result<(String, &str), BatchError> {
    match &delivery.handle {
        Handle::Stream { priority, lane, id } => Ok((stream(*priority, *lane), id)),
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
    lane: u8,
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
        handle: Handle::Stream { priority, lane, id },
    })
}

/// An entry that is not an item, as a delivery whose item never decodes: its attempts run
/// out and its "result" (under an index no batch has) is dropped with it.
fn undecodable(priority: Priority, lane: u8, entry: &Value) -> Delivery {
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
            lane,
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
