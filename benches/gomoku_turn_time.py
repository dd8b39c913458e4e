#!/usr/bin/env python3
"""Where a gomoku turn's time goes: the yardstick's open positions played through `kibitz pbrain`.

Each open position of tests/data/gomoku/yardstick-15x15.tsv (no forced win in its 5 s label) is
given to one fresh `kibitz pbrain` (an empty table) with `INFO timeout_turn MS`, and its log at
`RUST_LOG=kibitz::gomoku::time=debug` read from stderr: when the root's threat searches, the
main search and the whole turn ended (milliseconds from the start of `think`), each completed
iteration's time, and why the iterations ended (`time`: one was cut short by the hard limit;
`proven`: a decisive score; `predicted`, in builds before 2026-12-06 night: the next was not
predicted to end by the hard limit). Also the
external time, from `DONE` to the move line.

Printed: quartiles and maximum of each time, of the time thrown away in an iteration cut short,
and of the completed depth; how the main search ended; the growth of an iteration's time over
the one before (where that one took 1 ms or more).

    cargo build --release && python3 benches/gomoku_turn_time.py              # 200 ms a move
    python3 benches/gomoku_turn_time.py --ms 1000 --out turns.tsv            # every turn too
    KIBITZ_BIN=/path/to/other/kibitz python3 benches/gomoku_turn_time.py     # another build

Needs `target/release/kibitz` (or the binary `KIBITZ_BIN` names). Standard library only; the
160 positions take about 40 s at 200 ms. A time figure: it moves with the machine's load.
"""

import argparse
import os
import re
import statistics
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests/data/gomoku/yardstick-15x15.tsv")


def open_positions(limit):
    """(id, moves) of the positions whose 5 s label is no forced win (`+Mn` / `-Mn`)."""
    rows = []
    with open(DATA) as data:
        for line in data:
            if line.startswith("#") or not line.strip():
                continue
            fields = line.rstrip("\n").split("\t")
            if "M" in fields[3]:
                continue
            rows.append((fields[0], fields[1].split()))
    return rows[:limit] if limit else rows


def play_turn(binary, moves, ms):
    """One turn of a fresh pbrain on `moves`: the fields of its two time log lines, and the
    external time."""
    env = dict(os.environ, RUST_LOG="kibitz::gomoku::time=debug")
    process = subprocess.Popen(
        [binary, "pbrain"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )

    def send(text):
        process.stdin.write(text + "\n")
        process.stdin.flush()

    send("START 15")
    process.stdout.readline()
    send(f"INFO timeout_turn {ms}")
    send("BOARD")
    # The side to move's stones are 1, the other side's 2; black moved first.
    me = len(moves) % 2
    for i, move in enumerate(moves):
        send(f"{move},{1 if i % 2 == me else 2}")
    start = time.perf_counter()
    send("DONE")
    while True:
        line = process.stdout.readline()
        if not line or re.match(r"^\d+,\d+$", line.strip()):
            break
    wall = (time.perf_counter() - start) * 1e3
    send("END")
    _, err = process.communicate(timeout=30)
    fields = {}
    for line in err.splitlines():
        if "turn timing" in line or "main search time" in line:
            for key, value in re.findall(r"(\w+)=(\S+)", line):
                fields[key] = value.strip('"')
    fields["wall_ms"] = f"{wall:.1f}"
    return fields


def quartiles(values):
    if len(values) < 2:
        return values * 3
    return statistics.quantiles(values, n=4)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ms", type=int, default=200, help="timeout_turn (default 200)")
    parser.add_argument("--limit", type=int, default=0, help="the first N open positions")
    parser.add_argument("--out", help="a TSV file of every turn's fields")
    args = parser.parse_args()
    binary = os.environ.get("KIBITZ_BIN", os.path.join(ROOT, "target/release/kibitz"))

    turns = []
    for position, moves in open_positions(args.limit):
        fields = play_turn(binary, moves, args.ms)
        fields["id"] = position
        turns.append(fields)
    if args.out:
        keys = sorted({key for turn in turns for key in turn})
        with open(args.out, "w") as out:
            out.write("\t".join(keys) + "\n")
            for turn in turns:
                out.write("\t".join(turn.get(key, "") for key in keys) + "\n")

    columns = {}
    ended = {}
    growth = []
    for turn in turns:
        iterations = [float(t) for t in turn.get("iterations_ms", "").split("/") if t]
        threats, main_end = float(turn["threats_ms"]), float(turn["main_end_ms"])
        total = float(turn["total_ms"])
        for name, value in (
            ("root threat searches done", threats),
            ("main search (from the threats' end)", main_end - threats),
            ("cut short and thrown away", float(turn["elapsed_ms"]) - sum(iterations)),
            ("defence check", total - main_end),
            ("whole turn", total),
            ("external (DONE to the move)", float(turn["wall_ms"])),
            ("completed depth", float(turn["depth"])),
        ):
            columns.setdefault(name, []).append(value)
        ended[turn["ended"]] = ended.get(turn["ended"], 0) + 1
        growth += [b / a for a, b in zip(iterations, iterations[1:]) if a >= 1.0]

    print(f"{len(turns)} open positions, {args.ms} ms a turn; the main search ended: {ended}")
    print(f"{'':38} {'q1':>7} {'median':>7} {'q3':>7} {'max':>7}")
    for name, values in columns.items():
        q1, median, q3 = quartiles(values)
        print(f"{name:38} {q1:7.1f} {median:7.1f} {q3:7.1f} {max(values):7.1f}")
    if growth:
        q1, median, q3 = quartiles(growth)
        print(f"growth of an iteration's time ({len(growth)} pairs): q1 {q1:.2f}, median {median:.2f}, q3 {q3:.2f}")


if __name__ == "__main__":
    main()
