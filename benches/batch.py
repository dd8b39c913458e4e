#!/usr/bin/env python3
"""Batch analysis figures: throughput of 1, 2 and 3 replicas sharing one Redis, the time to
finish a batch after one replica is killed (its items taken over), `/move` latency with and
without a batch running, and memory. Real processes: the release binary
(`cargo build --release`) and `redis-server` on loopback; nothing else is needed.

    python3 benches/batch.py            # all figures (about a minute)

Every replica runs on the same machine: on a 2-core machine three replicas share two cores,
so throughput cannot grow past what two cores search. Items are gomoku positions, whose
searches use their whole budget (20 ms), so an item costs a worker its budget.

Measured 2026-12-02 on the 2-core build machine, shared with other builds (load average 8),
one worker per replica: 1 replica 50 items/s, 2 replicas 67, 3 replicas 111 (each replica
answered 70 to 131 of the 240); after SIGKILL of one of two replicas the batch finished in
the time the survivor needed for what was left (3.5 s) plus the 1 s reclaim timeout, within
noise; `/move` at 100 ms on a 2-worker replica: p50 79 ms, p99 97 ms alone, p50 88 ms, p99
107 ms with a batch running; RSS 40 MiB idle, 43 MiB with a 1000-item batch queued in process.
"""

import os
import statistics
import sys
import time

from kibitz_server import BINARY, Kibitz, Redis, call


def gomoku(i):
    rows = [["."] * 15 for _ in range(15)]
    rows[2 + i % 11][2 + (i // 11) % 11] = "X"
    rows[13][12 - (i // 121) % 10] = "O"
    return {"game": "gomoku", "board": ["".join(r) for r in rows]}


class Replica(Kibitz):
    """A replica as these figures run it: 16 MiB tables, no drain, a 1 s reclaim timeout."""

    def __init__(self, name, redis_url=None, workers=1, extra=None):
        env = dict(KIBITZ_WORKERS=str(workers), KIBITZ_TABLE_MB="16", KIBITZ_REPLICA_NAME=name,
                   KIBITZ_DRAIN_MS="0", KIBITZ_BATCH_RECLAIM_IDLE_MS="1000", **(extra or {}))
        if redis_url:
            env["KIBITZ_REDIS_URL"] = redis_url
        super().__init__(env, poll=0.025)
        self.base = self.url


def submit(base, items, budget_ms=20):
    status, body = call("POST", base + "/analyses", {"items": items, "budget_ms": budget_ms})
    assert status == 202, body
    return "/analyses/" + body["id"]


def wait_done(bases, location, poll=0.02):
    turn = 0
    while True:
        try:
            status, body = call("GET", bases[turn % len(bases)] + location)
        except OSError:
            status, body = 0, None
        turn += 1
        if status == 200 and body["status"] == "done":
            return body
        time.sleep(poll)


def throughput(replica_count, n=240):
    redis = Redis()
    replicas = [Replica(f"r{i}", redis.url) for i in range(replica_count)]
    items = [{"move": gomoku(1000 * replica_count + i)} for i in range(n)]
    started = time.monotonic()
    location = submit(replicas[0].base, items)
    done = wait_done([r.base for r in replicas], location)
    took = time.monotonic() - started
    spread = {}
    for result in done["results"]:
        spread[result["replica"]] = spread.get(result["replica"], 0) + 1
    for replica in replicas:
        replica.kill()
    redis.stop()
    return n / took, spread


def reclaim(n=120):
    redis = Redis()
    replicas = [Replica(f"k{i}", redis.url) for i in range(2)]
    location = submit(replicas[0].base, [{"move": gomoku(5000 + i)} for i in range(n)], 40)
    while call("GET", replicas[1].base + location)[1]["done"] < n // 4:
        time.sleep(0.01)
    replicas[0].kill()
    killed = time.monotonic()
    done_at_kill = call("GET", replicas[1].base + location)[1]["done"]
    wait_done([replicas[1].base], location)
    after = time.monotonic() - killed
    # What the survivor alone needs for the items left, at 40 ms an item, one worker.
    alone = (n - done_at_kill) * 0.040
    replicas[1].kill()
    redis.stop()
    return after, alone


def latencies(replica, first, n=50):
    took = []
    for i in range(first, first + n):
        started = time.monotonic()
        status, body = call("POST", replica.base + "/move", dict(gomoku(i), budget_ms=100))
        assert status == 200, body
        took.append((time.monotonic() - started) * 1000)
    took.sort()
    return statistics.median(took), took[max(0, -(-len(took) * 99 // 100) - 1)]


def move_latency():
    redis = Redis()
    replica = Replica("m0", redis.url, workers=2)
    quiet = latencies(replica, 0)
    location = submit(replica.base, [{"move": gomoku(2000 + i)} for i in range(600)])
    busy = latencies(replica, 100)
    done = call("GET", replica.base + location)[1]["done"]
    replica.kill()
    redis.stop()
    return quiet, busy, done


def memory(n=1000):
    replica = Replica("solo", workers=1, extra={"KIBITZ_BATCH_MAX_TOTAL_BUDGET_MS": "10000000"})
    idle = replica.rss_mib()
    location = submit(replica.base, [{"move": gomoku(i)} for i in range(n)], 1000)
    queued = replica.rss_mib()
    call("DELETE", replica.base + location)
    replica.kill()
    return idle, queued


def main():
    if not os.path.exists(BINARY):
        sys.exit("build the release binary first: cargo build --release")
    for count in (1, 2, 3):
        rate, spread = throughput(count)
        print(f"{count} replica(s): {rate:.0f} items/s (240 gomoku items at 20 ms), spread {spread}")
    after, alone = reclaim()
    print(f"after SIGKILL of one of two replicas: batch done {after:.2f} s later "
          f"(the survivor alone needs {alone:.2f} s for what was left; the rest is the "
          f"1 s reclaim idle timeout and the items the dead one held)")
    (q50, q99), (b50, b99), done = move_latency()
    print(f"/move at 100 ms, 2 workers: p50 {q50:.1f} ms p99 {q99:.1f} ms alone; "
          f"p50 {b50:.1f} ms p99 {b99:.1f} ms with a batch running ({done} items done meanwhile)")
    idle, queued = memory()
    print(f"RSS: {idle:.1f} MiB idle, {queued:.1f} MiB with a 1000-item batch queued in process")


if __name__ == "__main__":
    main()
