"""Asking a Gomocup (piskvork protocol) engine about one position: its move and what it printed
before it, and, for a judge such as Rapfi, its evaluation (`Eval +M<n>` is a forced win in n
plies for the side to move, as Rapfi's `MESSAGE` lines print it).

Used by `gomoku_first_loss.py` and `gomoku_yardstick.py` (its `--judge`). A fresh engine process a
question (an empty table), pinned to one core when `taskset` exists, 15x15 free-style. Standard
library only.
"""

import os
import re
import shutil
import subprocess

MOVE = re.compile(r"^\d+,\d+$")
EVAL = re.compile(r"Eval (\S+)")


def ask(command, moves, ms, core, info=()):
    """A piskvork engine's move after `moves` (each `(x, y)` as the record writes it) and the
    `MESSAGE` lines it printed before it. `info`: more `INFO` settings, such as Rapfi's
    `MAX_NODE 25000` (a node budget; give a long `ms` with it)."""
    # The engine's own folder: Rapfi reads its configuration from there.
    cwd = os.path.dirname(os.path.abspath(command[0]))
    if core is not None and shutil.which("taskset"):
        command = ["taskset", "-c", str(core)] + command
    lines = ["START 15", f"INFO timeout_turn {ms}", "INFO timeout_match 1000000000", "INFO rule 0"]
    lines += [f"INFO {setting}" for setting in info] + ["BOARD"]
    # BOARD lists stones oldest first: 1 the side to move's, 2 the opponent's.
    for i, (x, y) in enumerate(moves):
        lines.append(f"{x},{y},{1 if (len(moves) - i) % 2 == 0 else 2}")
    # Nothing is sent after DONE until the move is read: the engine polls its input while it
    # thinks, and a command waiting there (END, say) stops the search at once.
    lines.append("DONE")
    process = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=cwd,
    )
    process.stdin.write("\n".join(lines) + "\n")
    process.stdin.flush()
    messages = []
    answer = None
    for line in process.stdout:
        line = line.strip()
        if MOVE.match(line):
            answer = tuple(int(v) for v in line.split(","))
            break
        messages.append(line)
    process.kill()
    process.wait()
    return answer, messages


def evaluation(messages):
    """The last evaluation an engine reported among its `MESSAGE` lines, or None."""
    found = None
    for line in messages:
        match = EVAL.search(line)
        if match:
            found = match.group(1)
    return found


def judge(engine, moves, ms, core, info=()):
    """The judge's move and its last reported evaluation for the side to move after `moves`."""
    answer, messages = ask([engine], moves, ms, core, info)
    return answer, evaluation(messages)
