#!/usr/bin/env python3
"""Two kibitz replicas behind a round-robin client, with and without the Redis-shared cache.

The workload repeats positions, as a game site's does: the first N positions of one of Pons'
Connect-4 sets, each asked R times, in a seeded random order, over a closed loop of C clients
that alternate between the two replicas. Run once with two independent replicas, once with both
sharing one `redis-server`; each run starts fresh processes (empty caches and tables). A 503
(answered at once when no worker can start in time) is retried on the other replica, as a load
balancer would; latency is per request, retries included.

    cargo build --release && python3 benches/replicas.py            # defaults below
    python3 benches/replicas.py --positions 200 --repeats 5 --clients 4 --budget-ms 100

Needs `target/release/kibitz` and a `redis-server`, found as the tests find theirs
(tests/it/redis_server.rs): `$KIBITZ_TEST_REDIS_SERVER`, else `redis-server` on the PATH, else
the Debian packages `cargo test --release` unpacked under `target/tmp/redis-server-debian/`.
Loopback only; every loop is bounded. Standard library only.
"""

import argparse
import json
import os
import random
import shutil
import sys
import threading
import time

from kibitz_server import ROOT, Kibitz, Redis, post


def board_of(moves, width=7, height=6):
    """Pons' move string (1-based columns) as kibitz's rows, top to bottom."""
    grid = [["."] * width for _ in range(height)]
    heights = [0] * width
    for i, ch in enumerate(moves):
        col = int(ch) - 1
        grid[height - 1 - heights[col]][col] = "X" if i % 2 == 0 else "O"
        heights[col] += 1
    return ["".join(row) for row in grid]


def find_redis_server():
    """The redis-server to run and the environment it needs, as tests/it/redis_server.rs finds
    it (without fetching: the tests do that once, and this reuses their copy)."""
    program = os.environ.get("KIBITZ_TEST_REDIS_SERVER")
    if program:
        return program, {}
    program = shutil.which("redis-server")
    if program:
        return program, {}
    target = os.path.join(ROOT, os.environ.get("CARGO_TARGET_DIR", "target"))
    fetched = os.path.join(target, "tmp", "redis-server-debian")
    program = os.path.join(fetched, "usr", "bin", "redis-server")
    if os.access(program, os.X_OK):
        # Its libraries are unpacked beside it, not installed: name their directories.
        libraries = sorted({d for d, _, files in os.walk(fetched)
                            if any(f.startswith("lib") and ".so" in f for f in files)})
        return program, {"LD_LIBRARY_PATH": os.pathsep.join(libraries)}
    sys.exit("benches/replicas.py needs a redis-server for its shared-cache run: "
             "KIBITZ_TEST_REDIS_SERVER is not set, there is none on the PATH and none in "
             f"{fetched}. Install one (Debian or Ubuntu: apt-get install redis-server), set "
             "KIBITZ_TEST_REDIS_SERVER to its path, or run `cargo test --release shared_cache` "
             "once, which unpacks Debian's there.")


def start_replica(binary, redis_url):
    env = {"KIBITZ_WORKERS": "1", "KIBITZ_TABLE_MB": "32", "KIBITZ_DRAIN_MS": "0"}
    if redis_url:
        env["KIBITZ_REDIS_URL"] = redis_url
    return Kibitz(env, binary=binary)


def run(binary, bodies, clients, redis_server):
    """One run: `redis_server` is (program, environment) for the shared cache, or None."""
    redis = None
    redis_url = None
    if redis_server:
        program, env = redis_server
        redis = Redis(program, env)
        redis_url = redis.url
    replicas = [start_replica(binary, redis_url) for _ in range(2)]
    results = []
    lock = threading.Lock()
    cursor = [0]

    def client():
        while True:
            with lock:
                i = cursor[0]
                cursor[0] += 1
            if i >= len(bodies):
                return
            # A 503 comes at once; like a load balancer, try the other replica (3 tries).
            started = time.perf_counter()
            for attempt in range(3):
                status, answer = post(replicas[(i + attempt) % 2].url + "/move", bodies[i])
                if status != 503:
                    break
            took = time.perf_counter() - started
            cached = status == 200 and answer.get("cached")
            source = answer.get("cached_from") if cached else "search"
            with lock:
                results.append((status, took, source, attempt + 1))

    started = time.perf_counter()
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - started
    for replica in replicas:
        replica.stop()
    if redis:
        redis.stop()

    ok = sorted(t for s, t, _, _ in results if s == 200)
    pct = lambda p: ok[min(len(ok) - 1, int(p * len(ok)))] * 1000 if ok else float("nan")
    sources = {}
    for s, _, src, _ in results:
        if s == 200:
            sources[src] = sources.get(src, 0) + 1
    statuses = {}
    for s, _, _, _ in results:
        statuses[s] = statuses.get(s, 0) + 1
    retried = sum(1 for *_, tries in results if tries > 1)
    return {
        "requests": len(results), "statuses": statuses, "wall_s": round(wall, 2),
        "answered_per_s": round(len(ok) / wall, 1), "retried_elsewhere": retried,
        "p50_ms": round(pct(0.50), 1), "p90_ms": round(pct(0.90), 1),
        "p99_ms": round(pct(0.99), 1), "max_ms": round(ok[-1] * 1000, 1) if ok else None,
        "answered_by": sources,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, "target/release/kibitz"))
    parser.add_argument("--file", default=os.path.join(ROOT, "tests/data/connect4/Test_L1_R2"))
    parser.add_argument("--positions", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--budget-ms", type=int, default=100)
    parser.add_argument("--seed", type=int, default=20261130)
    args = parser.parse_args()

    with open(args.file) as f:
        moves = [line.split()[0] for line in f if line.strip()][: args.positions]
    bodies = [json.dumps({"game": "connect4", "board": board_of(m),
                          "budget_ms": args.budget_ms}).encode()
              for m in moves for _ in range(args.repeats)]
    random.Random(args.seed).shuffle(bodies)
    redis_server = find_redis_server()
    print(f"{len(bodies)} requests: {len(moves)} Connect-4 positions from "
          f"{os.path.basename(args.file)} x {args.repeats}, budget {args.budget_ms} ms, "
          f"{args.clients} clients round-robin over 2 replicas of 1 worker each")
    for shared in (False, True):
        label = "shared Redis cache" if shared else "independent caches"
        result = run(args.binary, bodies, args.clients, redis_server if shared else None)
        print(f"{label:>20}: {json.dumps(result)}")


if __name__ == "__main__":
    main()
