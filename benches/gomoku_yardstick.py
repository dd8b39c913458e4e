#!/usr/bin/env python3
"""The gomoku yardstick: does the search see what a strong engine sees, and how deep does it get?

Two sets of positions from kibitz-Rapfi games, each position labelled by Rapfi at 5 s, 1 s and
200 ms: `--set main` (the default), 420 positions 8 to 23 plies after the opening
(tests/data/gomoku/yardstick-15x15.tsv), and `--set early`, 320 positions 0 to 5 plies after it
(tests/data/gomoku/yardstick-early-15x15.tsv), where kibitz and Rapfi differ most; each
file says where its positions come from. kibitz answers each one with a node budget
(`deterministic: true`, `max_nodes`: the same answer on any machine, whatever its load) or,
with `--budget-ms`, a time budget (this machine's figure). One fresh process per position (an
empty table), one worker, pinned to one core when `taskset` exists.

Printed: on the open positions (no forced win by Rapfi's 5 s label) the share where kibitz
plays Rapfi's 5 s move, beside Rapfi's own share at 200 ms and 1 s; on the decided ones the
share where kibitz gives the same verdict (a decisive score, a win or a loss for the side to
move, proven or not, and how many of them it proved); the
median completed depth; the share of the main search's nodes spent in its horizon VCFs (from
its debug log); the per-iteration growth of main-search nodes (geometric mean of
depths 4 to 9, positions that complete 9); the main-search nodes to complete depths 8 and 10.
Last, how good the moves are, judged by Rapfi at 5 s after each move that differs from the
5 s label's (kibitz's, and Rapfi's own at 200 ms and 1 s): on open positions the share that
leads into a forced loss or loses 150 of Rapfi's points or more, on won ones the share that
keeps the win (a move kibitz proved wins, an `outcome`, is sound whatever the judge says: the
judge misses some of those forced lines). The judged moves are kept in
tests/data/gomoku/yardstick-judged-15x15.tsv; a move it does not have is judged with `--judge`
(Rapfi's piskvork binary, on `--judge-core`) and added to it, or else reported as unjudged.

    cargo build --release && python3 benches/gomoku_yardstick.py               # 200,000 nodes
    python3 benches/gomoku_yardstick.py --nodes 1000000
    python3 benches/gomoku_yardstick.py --budget-ms 200 --limit 100
    python3 benches/gomoku_yardstick.py --set early --budget-ms 200 --judge $R  # R: Rapfi
    python3 benches/gomoku_yardstick.py --out answers.jsonl                     # every answer

Needs `target/release/kibitz` (or the binary `KIBITZ_BIN` names). Loopback only; standard
library only. 420 positions at 200,000 nodes take about two minutes; a judged move up to 5 s.
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
import piskvork

SETS = {
    "main": os.path.join(kibitz_server.ROOT, "tests/data/gomoku/yardstick-15x15.tsv"),
    "early": os.path.join(kibitz_server.ROOT, "tests/data/gomoku/yardstick-early-15x15.tsv"),
}
JUDGED = os.path.join(kibitz_server.ROOT, "tests/data/gomoku/yardstick-judged-15x15.tsv")
# The judge's time a move: the labels' longest budget, so that a judged move and a label say
# as much.
JUDGE_MS = 5000
# A fall in the judge's evaluation (its own units, from the side that moved) this large counts
# as a big mistake even when no forced loss follows.
BIG_DROP = 150
DECISIVE = kibitz_server.DECISIVE


def load(which="main"):
    positions = []
    for line in open(SETS[which]):
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


def cells(moves):
    """A move list as the data files write it: `col,row` pairs, space-separated."""
    return " ".join(f"{x},{y}" for x, y in moves)


def load_judged(path):
    """The judged moves: the position after the move (its move list) -> the judge's reply there
    (`col,row`, or `-`) and its evaluation for the side to move (the move's opponent)."""
    judged = {}
    if os.path.exists(path):
        for line in open(path):
            if line.startswith("#") or not line.strip():
                continue
            moves, reply, evaluation = line.rstrip("\n").split("\t")
            judged[moves] = (reply, evaluation)
    return judged


def punished(best_eval, after):
    """What the judge says of a move on an open position whose 5 s label evaluates `best_eval`,
    from its evaluation `after` the move (for the move's opponent): "lost" (a forced win for
    the opponent), "drop" (`BIG_DROP` or more below the label), else None."""
    opponent = verdict(after)
    if opponent == "win":
        return "lost"
    if opponent is None and int(best_eval) + int(after) >= BIG_DROP:
        return "drop"
    return None


def judge_moves(name, played, judged, args):
    """How good the moves of one player (`played`: (moves, labels, its move, whether it proved
    the move wins) a position) are, by the judge: on open positions, how many lead into a
    forced loss (the judge then finds a win for the opponent) or lose `BIG_DROP` or more of its
    evaluation; on positions the side to move wins, how many keep the win. A move equal to the
    5 s label's is sound by that label, and so is a move kibitz proved wins (an `outcome`: an
    exact proof, a threat solver's or the exact engine's), whatever the judge says: the judge
    at 5 s misses some of those forced lines, which kibitz then wins against Rapfi when played
    out (the gomoku journal, "The search's decisive claims checked after the move"); such
    overruled verdicts are counted. Any other move is looked up in the judged file, or judged
    now with `--judge` (and added to the file), or else counted as unjudged."""
    opened = lost = dropped = won = kept = unjudged = overruled = 0
    for moves, labels, move, proved in played:
        best, best_eval = labels[5000]
        expected = verdict(best_eval)
        if expected == "loss":
            continue
        after = None
        key = cells(moves + [move])
        if proved and move != best:
            said = judged.get(key, ("-", "?"))[1]
            overruled += said != "?" and verdict(said) != "loss"
        elif move != best:
            if key not in judged and args.judge:
                reply, evaluation = piskvork.judge(args.judge, moves + [move], JUDGE_MS, args.judge_core)
                reply = f"{reply[0]},{reply[1]}" if reply else "-"
                judged[key] = (reply, evaluation or "?")
                with open(args.judged, "a") as f:
                    f.write(f"{key}\t{reply}\t{judged[key][1]}\n")
            after = judged.get(key, ("-", "?"))[1]
            if after == "?":
                unjudged += 1
                continue
        # The judge speaks for the move's opponent: its "win" is the mover's loss.
        if expected == "win":
            won += 1
            kept += after is None or verdict(after) == "loss"
        else:
            opened += 1
            if after is not None:
                kind = punished(best_eval, after)
                lost += kind == "lost"
                dropped += kind == "drop"
    print(f"    {name:<12} open: into a forced loss {share(lost, opened)}, a drop of "
          f"{BIG_DROP} or more {share(dropped, opened)}; won: the win kept {share(kept, won)}"
          + (f"; {unjudged} moves unjudged" if unjudged else "")
          + (f"; {overruled} proven wins the judge did not see" if overruled else ""))


def share(n, of):
    return f"{n}/{of} ({100 * n / max(of, 1):.1f} %)"


def verdict(rapfi_eval):
    """'win' / 'loss' for the side to move from a Rapfi evaluation `+Mn` / `-Mn`, else None."""
    if "M" not in rapfi_eval:
        return None
    return "win" if rapfi_eval.startswith("+") else "loss"


# The main search's last debug line: its own nodes and its horizon VCFs', and its null-window
# cuts by node kind (facing a four, facing an open three, quiet) and by the move that cut (the
# first, second, third, a later one).
SEARCH_LOG = re.compile(r"main search finished.*?main_nodes=(\d+) horizon_vcf_nodes=(\d+)")
SEARCH_CUTS = re.compile(r"main search finished.*? cuts=(\[\[[\d, \[\]]*\]\])")


def answer(binary, moves, args):
    """kibitz's answer to one position, from a fresh process (an empty table), with the main
    search's node split (`main_nodes`, `horizon_vcf_nodes`) and its cuts (`cuts`, `SEARCH_CUTS`)
    read from its debug log. The budget is `args`' (`add_answer_arguments`)."""
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
        if args.max_depth:
            body["max_depth"] = args.max_depth
        status, reply = kibitz_server.post(server.url + "/move", body, timeout=120)
        if status != 200:
            raise RuntimeError(f"/move answered {status}: {reply}")
    finally:
        server.stop()
    log.seek(0)
    text = log.read()
    log.close()
    split = SEARCH_LOG.findall(text)
    if split:
        reply["main_nodes"], reply["horizon_vcf_nodes"] = (int(n) for n in split[-1])
    cuts = SEARCH_CUTS.findall(text)
    if cuts:
        reply["cuts"] = json.loads(cuts[-1])
    return reply


def add_answer_arguments(parser):
    """The options `answer` reads: kibitz's budget and its core."""
    parser.add_argument("--nodes", type=int, default=200_000, help="node budget (deterministic)")
    parser.add_argument("--budget-ms", type=int, help="a time budget instead of nodes")
    parser.add_argument("--max-depth", type=int, help="stop at this completed depth too")
    parser.add_argument("--core", type=int, default=0, help="the core taskset pins kibitz to")


def main():
    parser = argparse.ArgumentParser()
    add_answer_arguments(parser)
    parser.add_argument("--limit", type=int, help="only the first N positions")
    parser.add_argument("--out", help="write every answer here, one JSON object a line")
    parser.add_argument("--set", choices=sorted(SETS), default="main", help="which positions")
    parser.add_argument("--judged", default=JUDGED, help="the judged moves (read, and added to)")
    parser.add_argument("--judge", help="a judge engine (Rapfi's pbrain binary) for the moves "
                        "the judged file does not have")
    parser.add_argument("--judge-core", type=int, default=1, help="the core the judge runs on")
    args = parser.parse_args()
    binary = os.environ.get("KIBITZ_BIN", kibitz_server.BINARY)
    positions = load(args.set)[: args.limit]
    played = []
    out = open(args.out, "w") if args.out else None
    agree = {"kibitz": 0, 200: 0, 1000: 0}
    same = {"kibitz": 0, 200: 0, 1000: 0}
    opened = decided = proven = 0
    depths, growth, to8, to10 = [], [], [], []
    main_nodes = horizon_nodes = 0
    for pid, moves, labels in positions:
        a = answer(binary, moves, args)
        move = (a["move"]["col"], a["move"]["row"])
        played.append((moves, labels, move, a.get("outcome") == "win"))
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
    print(f"  the moves judged by Rapfi at {JUDGE_MS // 1000} s ({os.path.relpath(args.judged, kibitz_server.ROOT)}):")
    judged = load_judged(args.judged)
    judge_moves("kibitz", played, judged, args)
    for budget, name in ((200, "Rapfi-200ms"), (1000, "Rapfi-1s")):
        rapfi = [(m, labels, labels[budget][0], False) for m, labels, _, _ in played]
        judge_moves(name, rapfi, judged, args)


if __name__ == "__main__":
    main()
