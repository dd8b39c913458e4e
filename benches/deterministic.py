#!/usr/bin/env python3
"""The cost of `deterministic: true`: the same request with and without it, per game.

One kibitz process, one worker, the answer cache off (every request is a search), requests one
at a time. For each game, one position is asked R times timed and R times deterministic,
interleaved, and the script prints the median and the 10th-90th percentiles of the latency seen
by the client, of the search's own `elapsed_ms`, and of `nodes`, and how many deterministic
answers were identical (timing fields aside) and how many were 503s.

    cargo build --release && python3 benches/deterministic.py            # defaults below
    python3 benches/deterministic.py --repeats 50 --budget-ms 200

Needs `target/release/kibitz`. Loopback only; standard library only.
"""

import argparse
import json
import statistics
import time

import kibitz_server

GOMOKU = ["." * 15] * 6 + ["......XO.......", ".......X.......", "........O......"] + ["." * 15] * 6
POSITIONS = {
    "tictactoe": {"game": "tictactoe", "board": ["X..", ".O.", "..."]},
    # The empty 8x7 board: no opening book, not solved within these budgets.
    "connect4": {"game": "connect4", "board": ["." * 8] * 7},
    "gomoku": {"game": "gomoku", "board": GOMOKU},
}


def post(url, body):
    """The answer and the latency the client saw, ms."""
    started = time.perf_counter()
    status, answer = kibitz_server.post(url, body)
    return status, answer, (time.perf_counter() - started) * 1000


def percentiles(values):
    values = sorted(values)
    if not values:
        return "-"
    at = lambda q: values[min(len(values) - 1, int(q * len(values)))]
    return f"{statistics.median(values):.1f} ({at(0.1):.1f}-{at(0.9):.1f})"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--budget-ms", type=int, default=100)
    args = parser.parse_args()
    server = kibitz_server.Kibitz(
        {
            "KIBITZ_WORKERS": "1",
            "KIBITZ_CACHE_ENTRIES": "0",
            "KIBITZ_LOG_FORMAT": "json",
            "RUST_LOG": "warn",
        }
    )
    url = server.url
    try:
        print(f"budget_ms {args.budget_ms}, {args.repeats} requests per mode, one worker, no cache")
        print("| game | mode | client latency ms, median (p10-p90) | search elapsed_ms | nodes | 503s | identical |")
        print("|---|---|---|---|---|---|---|")
        for game, position in POSITIONS.items():
            rows = {False: ([], [], [], 0, set()), True: ([], [], [], 0, set())}
            for _ in range(args.repeats):
                for deterministic in (False, True):
                    body = dict(position, budget_ms=args.budget_ms, deterministic=deterministic)
                    status, answer, latency = post(url + "/move", body)
                    latencies, elapsed, nodes, errors, answers = rows[deterministic]
                    if status != 200:
                        rows[deterministic] = (latencies, elapsed, nodes, errors + 1, answers)
                        continue
                    latencies.append(latency)
                    elapsed.append(answer["elapsed_ms"])
                    nodes.append(answer["nodes"])
                    for timing in ("elapsed_ms", "nps", "cached", "cached_from"):
                        answer.pop(timing, None)
                    answers.add(json.dumps(answer, sort_keys=True))
            for deterministic in (False, True):
                latencies, elapsed, nodes, errors, answers = rows[deterministic]
                print(
                    f"| {game} | {'deterministic' if deterministic else 'timed'} | "
                    f"{percentiles(latencies)} | {percentiles(elapsed)} | "
                    f"{int(statistics.median(nodes)) if nodes else '-'} | {errors} | "
                    f"{'yes' if len(answers) == 1 else f'{len(answers)} different'} |"
                )
    finally:
        server.stop(timeout=10)


if __name__ == "__main__":
    main()
