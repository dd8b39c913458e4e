#!/usr/bin/env python3
"""The release binary under hostile clients: resident memory and timings, as docs/figures.md
("The service") and docs/journal/service.md ("Memory") quote them.

    cargo build --release && python3 benches/exposure.py target/release/kibitz

Measures, each on the server's default configuration: resident memory after start; with 300
connections each holding 300 KB of unfinished headers; with 50 connections each sending
4 MiB - 1 bytes to /tree and stalling (and when the server closed them); the time to a 503 for
a 2,000 ms request while both workers run 6 s gomoku searches; after SIGTERM, when /readyz
turns 503, whether /move still answers, and when the process exits with a half-sent request
open; and 1,500 idle connections against a server limited to 1,024 descriptors (needs
`prlimit`). Loopback only, every loop bounded; standard library only. The pass/fail versions
of these checks are the tests in tests/it/service/exposure.rs.
"""
import socket, sys, time, threading, urllib.error, urllib.request, resource

import kibitz_server

BIN = sys.argv[1]
resource.setrlimit(resource.RLIMIT_NOFILE, (8000, 8000))

def start(nofile=None):
    prefix = () if nofile is None else ("prlimit", f"--nofile={nofile}:{nofile}")
    server = kibitz_server.Kibitz(binary=BIN, prefix=prefix, ready_path="/healthz")
    return server, server.port

def rss(server):
    return server.rss_mib()

def post(port, body, timeout=30):
    """Status, seconds taken, the decoded answer."""
    t = time.time()
    status, answer = kibitz_server.post(f"http://127.0.0.1:{port}/move", body, timeout)
    return status, time.time() - t, answer

p, port = start()
print(f"start: rss {rss(p):.0f} MiB")
# 1. 300 connections each with 300 KB of unfinished headers
socks = []
for i in range(300):
    s = socket.create_connection(("127.0.0.1", port)); s.setblocking(False)
    s.send(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
    data = b"X-Pad: " + b"a" * 300_000
    try: s.send(data)
    except BlockingIOError: pass
    socks.append(s)
time.sleep(1)
print(f"300 x 300 KB header floods: rss {rss(p):.0f} MiB")
for s in socks: s.close()
# 2. 50 stalled /tree uploads of 4 MiB - 1
socks = []
def upload():
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"POST /tree HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 4194303\r\n\r\n")
    s.settimeout(3)
    try: s.sendall(b" " * 4194302)
    except Exception: pass
    socks.append(s)
ts = [threading.Thread(target=upload) for _ in range(50)]
t0 = time.time()
for t in ts: t.start()
for t in ts: t.join()
print(f"50 stalled 4 MiB /tree uploads: rss {rss(p):.0f} MiB")
closed = 0
for s in socks:
    s.settimeout(max(0.1, 30 - (time.time() - t0)))
    try:
        while s.recv(65536): pass
        closed += 1
    except Exception: pass
print(f"  closed by the server: {closed}/50, last after {time.time()-t0:.1f} s; rss now {rss(p):.0f} MiB")
for s in socks: s.close()
time.sleep(1)
print(f"  after they left: rss {rss(p):.0f} MiB")
# 3. time to first 503: both workers busy on 6 s gomoku searches
def busy(i):
    board = ["." * 15] * 15
    row = list(board[7]); row[i] = "X"; board = board[:7] + ["".join(row)] + board[8:]
    post(port, {"game": "gomoku", "board": board, "budget_ms": 6000})
bs = [threading.Thread(target=busy, args=(i,)) for i in (3, 9)]
for b in bs: b.start()
time.sleep(0.5)
times = []
for i in range(5):
    code, took, body = post(port, {"game": "connect4", "board": [".......", ".......", ".......", ".......", ".......", f"{'.'*i}X{'.'*(6-i)}"], "budget_ms": 2000})
    times.append((code, round(took * 1000, 1)))
print("2000 ms requests with both workers busy for 6 s:", times, body.get("detail"))
for b in bs: b.join()
# 4. drain: SIGTERM, readyz, /move during drain, exit time with a half-sent request open
half = socket.create_connection(("127.0.0.1", port)); half.send(b"POST /move HTTP/1.1\r\nHost: x\r\n")
t0 = time.time(); p.process.terminate()
time.sleep(0.05)
try: urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2); rz = 200
except urllib.error.HTTPError as e: rz = e.code
rz_t = time.time() - t0
code, took, _ = post(port, {"game": "tictactoe", "board": ["X..", "...", "..."]})
mv_t = time.time() - t0
p.process.wait(timeout=40)
print(f"SIGTERM: /readyz {rz} at {rz_t*1000:.0f} ms; /move {code} at {mv_t*1000:.0f} ms; exit {p.process.returncode} after {time.time()-t0:.1f} s")
# 5. 1500 idle connections against a 1024-descriptor server
p, port = start(nofile=1024)
idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(1500)]
print(f"1500 idle connections (server at 1024 descriptors): rss {rss(p):.0f} MiB")
t0 = time.time(); code, took, _ = post(port, {"game": "tictactoe", "board": ["X..", "...", "..."]}, timeout=30)
print(f"  a real request: {code} after {took:.1f} s")
p.kill()
