#!/usr/bin/env python3
"""The latency promise on gomoku positions of every kind: random boards of every size, rule set
and line length, each answered once, and how late the latest answers came.

A node's cost is not a constant: a 15x15 five-in-a-row node costs about a microsecond, a node
of six in a row sixty times that (its patterns are computed, not looked up), and a renju node
may test forbidden points. The promise (an answer within `budget_ms` plus a few milliseconds)
must hold for all of them. Each request is a board of 4 to 90 random stones (alternating, in a
square about the centre) of a random size (7 to 25), rule set (free-style, exactly five, renju,
four, six, exactly six) and budget (50, 200 or 500 ms), posted to one fresh kibitz process (one
worker, the answer cache off), one at a time, timed from before the request is sent to after the
answer is read. Boards already won are answered 422 and counted apart.

    cargo build --release && python3 benches/gomoku_latency.py               # 150 requests
    python3 benches/gomoku_latency.py --requests 400 --seed 7 --core 1

Printed: the answers by status, then the latest answers: how far past its budget each came,
with its size, rules, stones and completed depth. Needs `target/release/kibitz` (or
`KIBITZ_BIN`); standard library only; about a minute for 150 requests.
"""

import argparse
import json
import os
import random
import shutil
import time

import kibitz_server

SIZES = [7, 9, 10, 11, 13, 15, 15, 15, 17, 19, 20, 25]
RULES = [
    {},
    {"overline": "no_win"},
    {"variant": "renju"},
    {"win_length": 4},
    {"win_length": 6},
    {"win_length": 6, "overline": "no_win"},
]
BUDGETS_MS = [50, 200, 500]


def random_request(rng):
    """One request: a random size, rule set, budget and board."""
    size = rng.choice(SIZES)
    rules = rng.choice(RULES)
    stones = rng.randint(4, min(90, size * size // 2))
    grid = [["."] * size for _ in range(size)]
    centre, spread = size // 2, max(2, int(stones**0.5))
    placed = 0
    for _ in range(10_000):
        if placed == stones:
            break
        row = min(size - 1, max(0, centre + rng.randint(-spread, spread)))
        col = min(size - 1, max(0, centre + rng.randint(-spread, spread)))
        if grid[row][col] == ".":
            grid[row][col] = "X" if placed % 2 == 0 else "O"
            placed += 1
    return {
        "game": "gomoku",
        "board": ["".join(r) for r in grid],
        "rules": rules,
        "budget_ms": rng.choice(BUDGETS_MS),
    }, placed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=150)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--core", type=int, default=0, help="the core taskset pins kibitz to")
    parser.add_argument("--show", type=int, default=8, help="how many of the latest to print")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    pin = ["taskset", "-c", str(args.core)] if shutil.which("taskset") else []
    env = {"KIBITZ_WORKERS": "1", "KIBITZ_CACHE_ENTRIES": "0"}
    binary = os.environ.get("KIBITZ_BIN", kibitz_server.BINARY)
    server = kibitz_server.Kibitz(env, binary=binary, prefix=pin)
    statuses, late = {}, []
    try:
        for _ in range(args.requests):
            body, stones = random_request(rng)
            started = time.perf_counter()
            status, reply = kibitz_server.post(server.url + "/move", body, timeout=60)
            took_ms = (time.perf_counter() - started) * 1000
            statuses[status] = statuses.get(status, 0) + 1
            if status == 200:
                late.append((took_ms - body["budget_ms"], took_ms, body, stones, reply.get("depth")))
            elif status != 422:
                print(f"answered {status}: {json.dumps(body)}: {reply}")
    finally:
        server.stop()
    print(f"{args.requests} requests, seed {args.seed}: by status {dict(sorted(statuses.items()))}")
    late.sort(key=lambda entry: -entry[0])
    for over, took, body, stones, depth in late[: args.show]:
        size = len(body["board"])
        print(
            f"  {over:+6.1f} ms past the budget ({took:.1f} of {body['budget_ms']} ms): "
            f"{size}x{size} {json.dumps(body['rules'])}, {stones} stones, depth {depth}"
        )


if __name__ == "__main__":
    main()
