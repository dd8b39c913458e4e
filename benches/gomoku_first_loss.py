#!/usr/bin/env python3
"""Where kibitz's lost games were lost: the first kibitz move after which a judge engine finds a
forced win for the opponent, how long that win is, and how the judge rated the position before
the move.

For every game of an arena record (`kibitz arena --record F`) that kibitz lost, each position
after one of kibitz's moves (from the first move after the opening) is given to the judge, a
Gomocup (piskvork) engine such as Rapfi, with `--ms` a position, until the judge reports a win
for the side to move (`Eval +M<plies>` in its `MESSAGE` lines, as Rapfi prints them). Then the
position before that move is judged too: a number there means the judge did not yet see it as
lost, so that move is where the game was thrown away; `-M` means it was lost already and the
judge saw it only now.

    python3 benches/gomoku_first_loss.py RECORD --judge /path/to/pbrain-rapfi \\
        --player "external:/path/to/kibitz" [--ms 1000] [--core 1]

`--player` is the start of kibitz's player name in the record. Standard library only; each
position is judged by a fresh judge process, pinned to `--core` when `taskset` exists.
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess

MOVE = re.compile(r"^\d+,\d+$")
EVAL = re.compile(r"Eval (\S+)")


def judge(engine, moves, ms, core):
    """The judge's move and its last reported evaluation for the side to move after `moves`
    (each `(x, y)` as the record writes it)."""
    command = [engine]
    if core is not None and shutil.which("taskset"):
        command = ["taskset", "-c", str(core), engine]
    lines = ["START 15", f"INFO timeout_turn {ms}", "INFO timeout_match 1000000000", "INFO rule 0", "BOARD"]
    # BOARD lists stones oldest first: 1 the side to move's, 2 the opponent's.
    for i, (x, y) in enumerate(moves):
        lines.append(f"{x},{y},{1 if (len(moves) - i) % 2 == 0 else 2}")
    lines.append("DONE")
    process = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=os.path.dirname(os.path.abspath(engine)),
    )
    process.stdin.write("\n".join(lines) + "\n")
    process.stdin.flush()
    evaluation = None
    answer = None
    for line in process.stdout:
        line = line.strip()
        if MOVE.match(line):
            answer = line
            break
        found = EVAL.search(line)
        if found:
            evaluation = found.group(1)
    process.kill()
    process.wait()
    return answer, evaluation


def games(path):
    """(number, kibitz plays black, replay moves, winner) for each game of a record."""
    text = open(path).read()
    for chunk in text.split("[game ")[1:]:
        number = chunk.split("]")[0]
        black = re.search(r"^black: (.*)$", chunk, re.M).group(1)
        white = re.search(r"^white: (.*)$", chunk, re.M).group(1)
        result = re.search(r"^result: (\w+)", chunk, re.M).group(1)
        replay = re.search(r"^replay: (.*)$", chunk, re.M).group(1).split()
        opening = re.search(r"^opening: (.*)$", chunk, re.M).group(1).split()
        moves = [tuple(int(v) for v in m.split(",")) for m in replay]
        yield number, black, white, len(opening), moves, result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("record")
    parser.add_argument("--judge", required=True)
    parser.add_argument("--player", required=True, help="start of kibitz's player name")
    parser.add_argument("--ms", type=int, default=1000)
    parser.add_argument("--core", type=int, default=1)
    args = parser.parse_args()
    lengths, before_open = [], []
    lost = 0
    for number, black, white, opening, moves, result in games(args.record):
        kibitz_black = black.startswith(args.player)
        if not kibitz_black and not white.startswith(args.player):
            continue
        if result not in ("black", "white") or (result == "black") == kibitz_black:
            continue
        lost += 1
        parity = 0 if kibitz_black else 1
        for k in range(opening, len(moves)):
            if k % 2 != parity:
                continue
            _, after = judge(args.judge, moves[: k + 1], args.ms, args.core)
            if after and after.startswith("+M"):
                plies = int(after[2:])
                best, before = judge(args.judge, moves[:k], args.ms, args.core)
                lengths.append(plies)
                if before and "M" not in before:
                    before_open.append(int(before))
                print(
                    f"game {number}: kibitz's move {k + 1} ({moves[k][0]},{moves[k][1]}) leaves the "
                    f"opponent a win in {plies}; before it the judge said {before} and played {best}",
                    flush=True,
                )
                break
        else:
            print(f"game {number}: the judge found no win for the opponent after a kibitz move")
    if lengths:
        print(
            f"{lost} lost games; the first win found after a kibitz move: median {statistics.median(lengths)} plies "
            f"({min(lengths)}-{max(lengths)}); {len(before_open)} of them from a position the judge did not yet see as "
            f"lost (its scores: {sorted(before_open)})"
        )


if __name__ == "__main__":
    main()
