#!/usr/bin/env python3
"""Does the search see a refutation once it is on the board?

`tests/data/gomoku/yardstick-refutations-15x15.tsv` holds positions of the gomoku yardstick's
early set (`--set early` of `gomoku_yardstick.py`) after a move that differs from Rapfi's 5 s
label there and Rapfi's 5 s reply to it, both from the judged moves
(tests/data/gomoku/yardstick-judged-15x15.tsv). The side to move is the one that played the
move. Each position has the class of the judge's verdict on that move: `lost` (the judge then
found a forced win for the replier), `drop` (the move lost 150 or more of the judge's points)
or `sound` (neither), and beside it Rapfi's own evaluation of the position, for the side to
move, at 5,000, 25,000, 100,000 and 400,000 nodes and at 200 ms (one thread, classical).

kibitz answers each position as the yardstick asks it (one fresh process, one worker, a node
budget, or `--budget-ms`). Printed, per class: how many positions it scores -100 or less (a
forced loss counts), and the median score; how often its main search's null-window cuts came
from the first move searched, per kind of node (from its debug log); then the same from each
of Rapfi's columns. A search that sees the refutation scores the `lost` positions low and the
`sound` ones not.

    cargo build --release && python3 benches/gomoku_refutations.py     # 200,000 nodes
    python3 benches/gomoku_refutations.py --nodes 20000000 --max-depth 12 # nominal depth 12
    python3 benches/gomoku_refutations.py --rapfi $R --rapfi-depth 12      # Rapfi at depth 12
    python3 benches/gomoku_yardstick.py --set early --out ANSWERS.jsonl   # then, to remake the file:
    python3 benches/gomoku_refutations.py --make ANSWERS.jsonl --rapfi $R > NEW.tsv

With `--rapfi` alone, Rapfi answers instead of kibitz, searching to `--rapfi-depth`
(`INFO MAX_DEPTH`), and the nodes it took are printed too: what each engine sees at the same
nominal depth, and what that depth costs it.

`--make` takes the moves of a yardstick run's answers (`--out`) on the early set that the
judged file has a verdict and a reply for, and asks Rapfi (`--rapfi`, its piskvork binary, on
`--rapfi-core`) for its evaluations: about a second a position. Needs `target/release/kibitz`
(or the binary `KIBITZ_BIN` names). Loopback only; standard library only.
"""

import argparse
import json
import os
import re
import statistics

import gomoku_yardstick as yardstick
import kibitz_server
import piskvork

REFUTATIONS = os.path.join(kibitz_server.ROOT, "tests/data/gomoku/yardstick-refutations-15x15.tsv")
CLASSES = ("sound", "drop", "lost")
# Rapfi's columns: a node budget (`INFO MAX_NODE`, with a turn long enough never to end first),
# or a time.
RAPFI_BUDGETS = (("5,000 nodes", 5000, None), ("25,000 nodes", 25000, None),
                 ("100,000 nodes", 100000, None), ("400,000 nodes", 400000, None),
                 ("200 ms", None, 200))
# A score this low says the side to move is in trouble: Rapfi at 200 ms puts the `lost`
# positions' median at -171 and the `sound` ones' at -21 (the file's column).
LOW = -100
# The main search's node kinds, in the order of its `cuts` counters (`gomoku_yardstick.answer`).
NODE_KINDS = ("facing a four", "facing an open three", "quiet")
# Rapfi's mate (`+M<n>`, `-M<n>`) as a number, for the medians.
MATE_SCORE = 10_000
# Rapfi's nodes in its progress line (`Node 3529`, `Node 28K`, `Node 1M`).
RAPFI_NODES = re.compile(r"\| Node (\d+)([KM]?)")
UNITS = {"": 1, "K": 1_000, "M": 1_000_000}


def load(path=REFUTATIONS):
    """The positions: (id, class, moves, Rapfi's evaluations in `RAPFI_BUDGETS` order)."""
    positions = []
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        pid, kind, moves, _judge, *rapfi = line.rstrip("\n").split("\t")
        moves = [tuple(int(v) for v in t.split(",")) for t in moves.split()]
        positions.append((pid, kind, moves, rapfi))
    return positions


def rapfi_score(evaluation):
    """Rapfi's evaluation as a number (a mate as +-`MATE_SCORE`), or None if it gave none."""
    said = yardstick.verdict(evaluation)
    if said:
        return MATE_SCORE if said == "win" else -MATE_SCORE
    try:
        return int(evaluation)
    except ValueError:
        return None


def summary(name, scores):
    """One line: per class, the positions scored `LOW` or less, and the median score."""
    parts = []
    for kind in CLASSES:
        values = [s for k, s in scores if k == kind and s is not None]
        low = sum(s <= LOW for s in values)
        median = statistics.median(values) if values else float("nan")
        parts.append(f"{kind} {low}/{len(values)} (median {median:g})")
    print(f"  {name:<22} " + "   ".join(parts))


def print_cuts(cuts):
    """How well kibitz ordered its moves: of the null-window nodes that failed high (all the
    positions' together), the share cut by the first move, per node kind."""
    parts = []
    for name, (first, *later) in zip(NODE_KINDS, cuts):
        total = first + sum(later)
        if total:
            parts.append(f"{name} {100 * first / total:.1f} % of {total:,}")
    if parts:
        print("  kibitz's cuts by the first move searched: " + ", ".join(parts))


def rapfi_at_depth(args, positions):
    """Rapfi's line at a nominal depth, asked now, and the median nodes it took."""
    scores, nodes = [], []
    for _, kind, moves, _ in positions:
        info = [f"MAX_DEPTH {args.rapfi_depth}"]
        _, messages = piskvork.ask([args.rapfi], moves, 1_000_000, args.rapfi_core, info)
        evaluation = piskvork.evaluation(messages)
        scores.append((kind, rapfi_score(evaluation) if evaluation else None))
        counts = [found for line in messages if (found := RAPFI_NODES.search(line))]
        if counts:
            count, unit = counts[-1].groups()
            nodes.append(int(count) * UNITS[unit])
    summary(f"Rapfi depth {args.rapfi_depth}", scores)
    print(f"  Rapfi's median nodes to depth {args.rapfi_depth}: {statistics.median(nodes):,.0f}")


def make(args):
    """The file's rows, from a yardstick run's answers on the early set, on stdout."""
    positions = {pid: (moves, labels) for pid, moves, labels in yardstick.load("early")}
    judged = yardstick.load_judged(yardstick.JUDGED)
    print("# id\tclass\tmoves (after the move and the judge's reply)\tthe judge's evaluation "
          "after the move (for the replier)\tRapfi, for the side to move, at "
          + ", ".join(name for name, _, _ in RAPFI_BUDGETS))
    for line in open(args.make):
        answer = json.loads(line)
        moves, labels = positions[answer["id"]]
        best, best_eval = labels[5000]
        move = (answer["move"]["col"], answer["move"]["row"])
        if yardstick.verdict(best_eval) or move == best:
            continue
        reply, after = judged.get(yardstick.cells(moves + [move]), ("-", "?"))
        if reply == "-" or after == "?":
            continue
        kind = yardstick.punished(best_eval, after) or "sound"
        position = moves + [move, tuple(int(v) for v in reply.split(","))]
        evaluations = []
        for _, nodes, ms in RAPFI_BUDGETS:
            info = [f"MAX_NODE {nodes}"] if nodes else []
            _, evaluation = piskvork.judge(args.rapfi, position, ms or 1_000_000, args.rapfi_core, info)
            evaluations.append(evaluation or "?")
        print("\t".join([answer["id"], kind, yardstick.cells(position), after] + evaluations), flush=True)


def main():
    parser = argparse.ArgumentParser()
    yardstick.add_answer_arguments(parser)
    parser.add_argument("--make", help="write the file's rows from these yardstick answers")
    parser.add_argument("--rapfi", help="Rapfi's piskvork binary: for --make, or to ask it "
                        "instead of kibitz")
    parser.add_argument("--rapfi-depth", type=int, default=12, help="Rapfi's nominal depth")
    parser.add_argument("--rapfi-core", type=int, default=1, help="the core Rapfi runs on")
    args = parser.parse_args()
    if args.make:
        if not args.rapfi:
            parser.error("--make needs --rapfi")
        make(args)
        return
    positions = load()
    if args.rapfi:
        rapfi_at_depth(args, positions)
        return
    binary = os.environ.get("KIBITZ_BIN", kibitz_server.BINARY)
    scores, nodes, depths = [], [], []
    cuts = [[0] * 4 for _ in NODE_KINDS]
    for _, kind, moves, _ in positions:
        answer = yardstick.answer(binary, moves, args)
        scores.append((kind, answer["score"]))
        nodes.append(answer["nodes"])
        depths.append(answer["depth"])
        for total, found in zip(cuts, answer.get("cuts", [])):
            total[:] = [a + b for a, b in zip(total, found)]
    counts = ", ".join(f"{sum(k == kind for _, k, _, _ in positions)} {kind}" for kind in CLASSES)
    budget = f"{args.budget_ms} ms" if args.budget_ms else f"{args.nodes:,} nodes"
    if args.max_depth:
        budget += f", depth {args.max_depth}"
    print(f"{len(positions)} positions after a move and Rapfi's refutation ({counts}); "
          f"scored {LOW} or less by the side to move, and the median score:")
    summary(f"kibitz {budget}", scores)
    print(f"  kibitz's median completed depth {statistics.median(depths)}, median nodes "
          f"{statistics.median(nodes):,.0f} (its horizon's VCFs included)")
    print_cuts(cuts)
    for i, (name, _, _) in enumerate(RAPFI_BUDGETS):
        summary(f"Rapfi {name}", [(kind, rapfi_score(rapfi[i])) for _, kind, _, rapfi in positions])


if __name__ == "__main__":
    main()
