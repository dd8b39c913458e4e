#!/usr/bin/env python3
"""The cost of `multipv`: nodes to a fixed depth and the depth reached in a budget, at k = 1, 3, 5.

One kibitz process, one worker, the answer cache off, requests one at a time. For each
position the script asks `max_depth` deterministically (node counts: the same every run) at
k = 1, 3 and 5, then `budget_ms` timed (the depth reached: this machine's and its load's).

    cargo build --release && python3 benches/multipv_cost.py
    python3 benches/multipv_cost.py --budget-ms 1000

Needs `target/release/kibitz` (or the binary `KIBITZ_BIN` names). Loopback only; standard library only.
"""

import argparse
import os

import kibitz_server

GOMOKU_9 = ["........."] * 3 + ["...XO....", "....X....", "...O....."] + ["........."] * 3
POSITIONS = [
    ("Connect-4 after 4453, depth 12", {"game": "connect4", "moves": "4453", "max_depth": 12}),
    ("Connect-4 after 4453362, depth 12", {"game": "connect4", "moves": "4453362", "max_depth": 12}),
    ("gomoku 9x9, depth 4", {"game": "gomoku", "board": GOMOKU_9, "max_depth": 4}),
    ("gomoku 15x15 h8 h9 i9 g7 j10 i8, depth 4", {"game": "gomoku", "moves": "h8 h9 i9 g7 j10 i8", "max_depth": 4}),
]


def ask(url, body):
    # No timeout: a deterministic search to its depth takes what it takes.
    status, answer = kibitz_server.post(url + "/move", body, timeout=None)
    assert status == 200, answer
    return answer


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--budget-ms", type=int, default=200)
    args = parser.parse_args()
    server = kibitz_server.Kibitz(
        {"KIBITZ_WORKERS": "1", "KIBITZ_CACHE_ENTRIES": "0", "RUST_LOG": "warn"},
        binary=os.environ.get("KIBITZ_BIN", kibitz_server.BINARY),
    )
    url = server.url
    try:
        print(f"| position | nodes k=1 | k=3 | k=5 | depth in {args.budget_ms} ms, k=1 / 3 / 5 |")
        print("|---|---|---|---|---|")
        for name, position in POSITIONS:
            nodes = [
                ask(url, dict(position, multipv=k, deterministic=True, budget_ms=10_000))["nodes"]
                for k in (1, 3, 5)
            ]
            timed = {key: value for key, value in position.items() if key != "max_depth"}
            depths = [
                ask(url, dict(timed, multipv=k, budget_ms=args.budget_ms))["depth"]
                for k in (1, 3, 5)
            ]
            print(
                f"| {name} | {nodes[0]:,} | {nodes[1]:,} ({nodes[1] / nodes[0]:.2f}x) "
                f"| {nodes[2]:,} ({nodes[2] / nodes[0]:.2f}x) | {' / '.join(map(str, depths))} |"
            )
    finally:
        server.stop()


if __name__ == "__main__":
    main()
