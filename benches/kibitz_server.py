"""What every benchmark script here does to talk to a real kibitz: find a free loopback port,
start the release binary on it (and, for the shared-cache and batch figures, a redis-server),
wait until it answers, and send JSON to it.

The scripts run as `python3 benches/X.py`, so this module is imported as their sibling
(`import kibitz_server`). Loopback only; every wait is bounded; standard library only. What a
script measures, and the server configuration it measures, stays in the script: this module
only starts, waits and asks.
"""

import http.client
import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BINARY = os.path.join(ROOT, "target", "release", "kibitz")
# The least decisive score kibitz answers (over HTTP and in `pbrain`'s MESSAGE lines):
# `engine::MATE_BOUND` is WIN - MAX_PLY = 1,000,000 - 128, and a decisive score the exact engine
# did not confirm is answered one below it (without an `outcome`).
DECISIVE = 1_000_000 - 128 - 1


def free_port():
    """A loopback port nothing listens on now (the kernel's pick)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(url, seconds=20, interval=0.05):
    """Polls `url` until it answers 2xx; a RuntimeError after `seconds` (a server that never
    starts fails the script there, not at its first request)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=1):
                return
        except (OSError, http.client.HTTPException):
            time.sleep(interval)
    raise RuntimeError(f"{url} never answered")


def call(method, url, body=None, timeout=30):
    """One request: `body` is JSON (a value to encode, or bytes already encoded), or None for
    none. Returns (status, the decoded answer); an HTTP error status is an answer too (its
    problem+json body decoded), only a connection error raises."""
    data = body if body is None or isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        request.add_header("content-type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def post(url, body, timeout=30):
    """`call("POST", ...)`."""
    return call("POST", url, body, timeout)


class Kibitz:
    """A kibitz process on a free loopback port, ready (its `ready_path` answered) once built.

    `env` adds to (and overrides) this process's environment; `prefix` runs the binary under
    another command (`["prlimit", "--nofile=1024:1024"]`). Output goes nowhere, the log to
    `stderr` (an open file) when given."""

    def __init__(self, env=None, binary=BINARY, prefix=(), ready_path="/readyz", ready_seconds=20,
                 poll=0.05, stderr=subprocess.DEVNULL):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        environment = dict(os.environ, **(env or {}))
        environment["KIBITZ_ADDR"] = f"127.0.0.1:{self.port}"
        self.process = subprocess.Popen([*prefix, binary], env=environment,
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=stderr)
        try:
            wait_ready(self.url + ready_path, ready_seconds, poll)
        except BaseException:
            self.kill()
            raise

    def stop(self, timeout=30):
        """SIGTERM (the server drains), then waits for the exit."""
        self.process.terminate()
        self.process.wait(timeout=timeout)

    def kill(self):
        """SIGKILL, as a crash: nothing drains."""
        self.process.kill()
        self.process.wait()

    def rss_mib(self):
        """The process's resident memory now, MiB."""
        with open(f"/proc/{self.process.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return 0.0


class Redis:
    """A throwaway redis-server on a free loopback port, nothing saved to disk; `url` is what
    `KIBITZ_REDIS_URL` takes. `env` adds to the environment (the libraries of an unpacked one)."""

    def __init__(self, program="redis-server", env=None):
        self.port = free_port()
        self.process = subprocess.Popen(
            [program, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no"], env=dict(os.environ, **(env or {})),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.url = f"redis://127.0.0.1:{self.port}/"
        # redis-server listens within milliseconds; kibitz reconnects if it is later still.
        time.sleep(0.3)

    def stop(self):
        self.process.kill()
        self.process.wait()
