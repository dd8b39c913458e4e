#!/usr/bin/env python3
"""The gomoku yardstick: does the search see what a strong engine sees, and how deep does it get?

420 positions from kibitz-Rapfi games (tests/data/gomoku/yardstick-15x15.tsv, which says where
they come from), each labelled by Rapfi at 5 s, 1 s and 200 ms. kibitz answers each one with
a node budget (`deterministic: true`, `max_nodes`: the same answer on any machine, whatever its
load) or, with `--budget-ms`, a time budget (this machine's figure). One fresh process per
position (an empty table), one worker, pinned to one core when `taskset` exists.

Printed: on the open positions (no forced win by Rapfi's 5 s label) the share where kibitz
plays Rapfi's 5 s move, beside Rapfi's own share at 200 ms and 1 s; on the decided ones the
share where kibitz gives the same verdict (a decisive score, a win or a loss for the side to
move, proven or not, and how many of them it proved); the
median completed depth; the share of the main search's nodes spent in its horizon VCFs (from
its debug log); the per-iteration growth of main-search nodes (geometric mean of
depths 4 to 9, positions that complete 9); the main-search nodes to complete depths 8 and 10.

    cargo build --release && python3 benches/gomoku_yardstick.py               # 200,000 nodes
    python3 benches/gomoku_yardstick.py --nodes 1000000
    python3 benches/gomoku_yardstick.py --budget-ms 200 --limit 100
    python3 benches/gomoku_yardstick.py --out answers.jsonl                     # every answer

Needs `target/release/kibitz` (or the binary `KIBITZ_BIN` names). Loopback only; standard
library only. 420 positions at 200,000 nodes take about two minutes.
"""

import argparse
import json
import math
import os
import re
import shutil
import statistics
import tempfile

import kibitz_server

DATA = os.path.join(kibitz_server.ROOT, "tests/data/gomoku/yardstick-15x15.tsv")
DECISIVE = kibitz_server.DECISIVE


def load():
    positions = []
    for line in open(DATA):
        if line.startswith("#") or not line.strip():
            continue
        cols = line.rstrip("\n").split("\t")
        moves = [tuple(int(v) for v in t.split(",")) for t in cols[1].split()]
        labels = {
            budget: (tuple(int(v) for v in cols[i].split(",")), cols[i + 1])
            for budget, i in ((5000, 2), (1000, 4), (200, 6))
        }
        positions.append((cols[0], moves, labels))
    return positions


def verdict(rapfi_eval):
    """'win' / 'loss' for the side to move from a Rapfi evaluation `+Mn` / `-Mn`, else None."""
    if "M" not in rapfi_eval:
        return None
    return "win" if rapfi_eval.startswith("+") else "loss"


# The main search's last debug line: its own nodes and its horizon VCFs'.
SEARCH_LOG = re.compile(r"main search finished.*?main_nodes=(\d+) horizon_vcf_nodes=(\d+)")


def answer(binary, moves, args):
    """kibitz's answer to one position, from a fresh process (an empty table), with the main
    search's node split (`main_nodes`, `horizon_vcf_nodes`) read from its debug log."""
    env = {
        "KIBITZ_WORKERS": "1",
        "KIBITZ_CACHE_ENTRIES": "0",
        "KIBITZ_DRAIN_MS": "0",
        "RUST_LOG": "warn,kibitz::gomoku::search=debug",
    }
    pin = ["taskset", "-c", str(args.core)] if shutil.which("taskset") else []
    log = tempfile.TemporaryFile(mode="w+")
    server = kibitz_server.Kibitz(env, binary=binary, prefix=pin, stderr=log)
    try:
        grid = [["."] * 15 for _ in range(15)]
        for k, (col, row) in enumerate(moves):
            grid[row][col] = "X" if k % 2 == 0 else "O"
        body = {"game": "gomoku", "board": ["".join(r) for r in grid]}
        if args.budget_ms:
            body["budget_ms"] = args.budget_ms
        else:
            body.update({"budget_ms": 60_000, "max_nodes": args.nodes, "deterministic": True})
        status, reply = kibitz_server.post(server.url + "/move", body, timeout=120)
        if status != 200:
            raise RuntimeError(f"/move answered {status}: {reply}")
    finally:
        server.stop()
    log.seek(0)
    split = SEARCH_LOG.findall(log.read())
    log.close()
    if split:
        reply["main_nodes"], reply["horizon_vcf_nodes"] = (int(n) for n in split[-1])
    return reply


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=200_000, help="node budget (deterministic)")
    parser.add_argument("--budget-ms", type=int, help="a time budget instead of nodes")
    parser.add_argument("--limit", type=int, help="only the first N positions")
    parser.add_argument("--core", type=int, default=0, help="the core taskset pins to")
    parser.add_argument("--out", help="write every answer here, one JSON object a line")
    args = parser.parse_args()
    binary = os.environ.get("KIBITZ_BIN", kibitz_server.BINARY)
    positions = load()[: args.limit]
    out = open(args.out, "w") if args.out else None
    agree = {"kibitz": 0, 200: 0, 1000: 0}
    same = {"kibitz": 0, 200: 0, 1000: 0}
    opened = decided = proven = 0
    depths, growth, to8, to10 = [], [], [], []
    main_nodes = horizon_nodes = 0
    for pid, moves, labels in positions:
        a = answer(binary, moves, args)
        move = (a["move"]["col"], a["move"]["row"])
        best, best_eval = labels[5000]
        expected = verdict(best_eval)
        if expected is None:
            opened += 1
            agree["kibitz"] += move == best
            for budget in (200, 1000):
                agree[budget] += labels[budget][0] == best
            depths.append(a["depth"])
            main_nodes += a.get("main_nodes", 0)
            horizon_nodes += a.get("horizon_vcf_nodes", 0)
            nodes = [i["nodes"] for i in a.get("iterations", [])]
            if len(nodes) >= 9 and nodes[3] > 0:
                growth.append(math.log(nodes[8] / nodes[3]) / 5)
            if len(nodes) >= 8:
                to8.append(sum(nodes[:8]))
            if len(nodes) >= 10:
                to10.append(sum(nodes[:10]))
        else:
            decided += 1
            score = a["score"]
            said = "win" if score >= DECISIVE else "loss" if score <= -DECISIVE else None
            same["kibitz"] += said == expected
            proven += said == expected and a.get("outcome") == expected
            for budget in (200, 1000):
                same[budget] += verdict(labels[budget][1]) == expected
        if out:
            a["id"] = pid
            out.write(json.dumps(a) + "\n")

    def share(n, of):
        return f"{n}/{of} ({100 * n / max(of, 1):.1f} %)"

    budget = f"{args.budget_ms} ms" if args.budget_ms else f"{args.nodes:,} nodes"
    print(f"kibitz at {budget}, {len(positions)} positions ({opened} open, {decided} decided)")
    print(f"  open: plays Rapfi-5s's move  kibitz {share(agree['kibitz'], opened)}"
          f"   Rapfi-200ms {share(agree[200], opened)}   Rapfi-1s {share(agree[1000], opened)}")
    print(f"  decided: the same verdict      kibitz {share(same['kibitz'], decided)}"
          f"   Rapfi-200ms {share(same[200], decided)}   Rapfi-1s {share(same[1000], decided)}")
    print(f"  decided: kibitz's verdict proven (an `outcome`) in {share(proven, decided)}")
    if depths:
        print(f"  open: median completed depth {statistics.median(depths)}")
    if growth:
        print(f"  open: main-search growth a ply, depths 4-9 (geometric mean, {len(growth)} "
              f"positions) {math.exp(statistics.mean(growth)):.2f}")
    if main_nodes + horizon_nodes:
        print(f"  open: horizon-VCF share of the main search's nodes "
              f"{100 * horizon_nodes / (main_nodes + horizon_nodes):.1f} %")
    for depth, counts in ((8, to8), (10, to10)):
        if counts:
            print(f"  open: main-search nodes to complete depth {depth}: median "
                  f"{statistics.median(counts):,.0f} ({len(counts)} positions that completed it)")


if __name__ == "__main__":
    main()
