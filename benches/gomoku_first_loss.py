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
        --player "external:/path/to/kibitz" [--ms 1000] [--core 1] \\
        [--kibitz target/release/kibitz --budgets 200,1000,5000]

`--player` is the start of kibitz's player name in the record. With `--kibitz`, each first
losing move is also put to that kibitz (`kibitz pbrain`) at each of `--budgets` ms: after the
move, does it see the opponent's win (a decisive score)? Before it, which move does it play
now, and does the judge still find a win for the opponent after that one? Standard library
only; each question goes to a fresh engine process, pinned to `--core` when `taskset` exists.
"""

import argparse
import re
import statistics

from kibitz_server import DECISIVE
from piskvork import ask, judge

KIBITZ_SCORE = re.compile(r"^MESSAGE depth \d+ score (-?\d+)")


def kibitz_score(kibitz, moves, ms, core):
    """kibitz's move and last reported score (`MESSAGE depth D score S`) after `moves`."""
    answer, messages = ask([kibitz, "pbrain"], moves, ms, core)
    score = None
    for line in messages:
        found = KIBITZ_SCORE.search(line)
        if found:
            score = int(found.group(1))
    return answer, score


def second_opinions(args, moves, k):
    """kibitz at each budget on the first losing move `moves[k]`: after it, whether it sees the
    opponent's win; before it, what it plays now and whether the judge finds a win after that."""
    sees, plays = [], []
    for ms in args.budgets:
        _, score = kibitz_score(args.kibitz, moves[: k + 1], ms, args.core)
        sees.append(score is not None and score >= DECISIVE)
        answer, _ = kibitz_score(args.kibitz, moves[:k], ms, args.core)
        if answer == moves[k]:
            plays.append("same")
        else:
            _, after = judge(args.judge, moves[:k] + [answer], args.ms, args.core)
            plays.append("lost" if after and after.startswith("+M") else "held")
    return sees, plays


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
    parser.add_argument("--kibitz", help="a kibitz binary to put each first losing move to")
    parser.add_argument("--budgets", default="200,1000,5000", help="its budgets, ms")
    args = parser.parse_args()
    args.budgets = [int(b) for b in args.budgets.split(",")]
    lengths, before_open = [], []
    seen = [0] * len(args.budgets)
    played = [{"same": 0, "lost": 0, "held": 0} for _ in args.budgets]
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
                    f"opponent a win in {plies}; before it the judge said {before} and played {best[0]},{best[1]}",
                    flush=True,
                )
                if args.kibitz:
                    sees, plays = second_opinions(args, moves, k)
                    for i, (saw, play) in enumerate(zip(sees, plays)):
                        seen[i] += saw
                        played[i][play] += 1
                    print(f"  kibitz at {args.budgets} ms: sees the win after it {sees}; before it plays {plays}")
                break
        else:
            print(f"game {number}: the judge found no win for the opponent after a kibitz move")
    if lengths:
        print(
            f"{lost} lost games; the first win found after a kibitz move: median {statistics.median(lengths)} plies "
            f"({min(lengths)}-{max(lengths)}); {len(before_open)} of them from a position the judge did not yet see as "
            f"lost (its scores: {sorted(before_open)})"
        )
    if args.kibitz and lengths:
        for ms, saw, play in zip(args.budgets, seen, played):
            print(
                f"kibitz at {ms} ms: sees the opponent's win after the move in {saw} of {len(lengths)}; "
                f"before it plays the same move {play['same']}, another still lost {play['lost']}, "
                f"another the judge finds no win after {play['held']}"
            )


if __name__ == "__main__":
    main()
