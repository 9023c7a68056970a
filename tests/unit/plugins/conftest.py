# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Servers on loopback for the plugin tests.

``sglang_sim``: starts tests/sglang_sim/launch_server.py as a subprocess on a free port, in a
given mode, and stops it after the test. ``scripted_server``: a tiny in-process HTTP server that
answers each request with exactly the bytes a test gives (other servers' stream shapes, broken
bodies, any status), so the reader is tested against what real servers send, not only SGLang.
"""

import json
import os
import socket
import struct
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from hang_guard import hang_guard

REPO = Path(__file__).resolve().parents[3]
SIM_DIR = REPO / "tests" / "sglang_sim"
LAUNCH_SERVER = SIM_DIR / "launch_server.py"
MODEL = "/models/Qwen3.6-27B"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SimServer:
    """One simulator process."""

    def __init__(self, proc, port, log_path):
        self.proc = proc
        self.port = port
        self.log_path = log_path
        self.base_url = f"http://127.0.0.1:{port}"

    def logs(self):
        return self.log_path.read_text(errors="replace")

    def wait_bound(self, timeout=10.0):
        """Until this process listens on its port; False when the process exited first.

        Its own uvicorn line says so (the simulator prints it once bound, as SGLang does). A port that
        merely accepts connections may be another test's server: free_port's pick is free when picked,
        and an xdist peer can bind it before this process does."""
        own_line = f"Uvicorn running on {self.base_url} "
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if own_line in self.logs():
                return True
            if self.proc.poll() is not None:
                return False
            time.sleep(0.02)
        raise AssertionError(f"simulator did not bind 127.0.0.1:{self.port} within {timeout}s:\n{self.logs()}")

    def lost_its_port(self):
        """The process exited because another process had bound its port first."""
        return self.proc.poll() is not None and "error while attempting to bind on address" in self.logs()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=hang_guard(5))
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


# Starts per simulator: free_port's pick can be taken by an xdist peer before the simulator binds it.
PORT_ATTEMPTS = 3


class Launcher:
    """Starts simulators into ``directory`` and remembers them, to stop them all at the end."""

    def __init__(self, directory):
        self.directory = directory
        self.started = []

    def start(self, mode="healthy", algorithm="NEXTN", args=(), env=None, behaviour=None, wait=True, model=MODEL):
        for _attempt in range(PORT_ATTEMPTS):
            sim = self._start(mode, algorithm, args, env, behaviour, wait, model)
            if not (wait and sim.lost_its_port()):
                return sim
        raise AssertionError(f"simulator lost its port {PORT_ATTEMPTS} times in a row:\n{sim.logs()}")

    def _start(self, mode, algorithm, args, env, behaviour, wait, model):
        port = free_port()
        behaviour_file = self.directory / f"behaviour-{port}.json"
        if behaviour is not None:
            behaviour_file.write_text(json.dumps(behaviour))
        run_env = {k: v for k, v in os.environ.items() if not k.startswith(("SGLANG_SIM_", "DDTREE_SIM_"))}
        run_env.update(
            DDTREE_SIM_BEHAVIOUR_FILE=str(behaviour_file),
            SGLANG_SIM_LOAD_SECONDS="0",
            SGLANG_SIM_BIND_DELAY_S="0",
        )
        if mode is not None:
            run_env["SGLANG_SIM_MODE"] = mode
        run_env.update(env or {})
        cmd = [sys.executable, str(LAUNCH_SERVER), "--model-path", model, "--host", "127.0.0.1", "--port", str(port)]
        if algorithm:
            cmd += ["--speculative-algorithm", algorithm]
            if algorithm in ("DFLASH", "DDTREE"):
                cmd += ["--speculative-draft-model-path", "/models/draft"]
        cmd += list(args)
        log_path = self.directory / f"sim-{port}.log"
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(cmd, env=run_env, stdout=log, stderr=subprocess.STDOUT)
        sim = SimServer(proc, port, log_path)
        self.started.append(sim)
        if wait:
            sim.wait_bound()
        return sim

    def stop_all(self):
        for sim in self.started:
            sim.stop()


@pytest.fixture
def sglang_sim(tmp_path):
    """Factory: ``sglang_sim(mode="healthy", algorithm="NEXTN", args=[...], env={...})`` -> SimServer.

    Start-up delays default to 0 so tests do not wait for a fake weight load; pass
    ``env={"SGLANG_SIM_LOAD_SECONDS": "1"}`` to test readiness. ``behaviour`` writes a behaviour
    file; otherwise none is read (the path points to a file that does not exist).
    """
    launcher = Launcher(tmp_path)
    yield launcher.start
    launcher.stop_all()


@pytest.fixture(scope="session")
def shared_sim(tmp_path_factory):
    """Like ``sglang_sim`` for tests that only read from the server: one process per set of arguments."""
    launcher = Launcher(tmp_path_factory.mktemp("shared-sim"))
    cache = {}

    def get(mode="healthy", algorithm="NEXTN", env=None):
        key = (mode, algorithm, tuple(sorted((env or {}).items())))
        if key not in cache or cache[key].proc.poll() is not None:
            cache[key] = launcher.start(mode, algorithm, env=env)
        return cache[key]

    yield get
    launcher.stop_all()


@pytest.fixture
def sglang_router(tmp_path):
    """Factory: ``sglang_router(worker_urls=[...], policy="round_robin", api_key=None)`` -> the real
    sglang-router on loopback (router_harness.RouterServer), stopped after the test."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))  # router_harness, from either test tree
    from router_harness import RouterLauncher

    launcher = RouterLauncher(tmp_path, free_port)
    yield launcher.start
    launcher.stop_all()


class Script:
    """What the scripted server answers: status, headers and body pieces with delays, or a reset."""

    def __init__(
        self, status=200, body=b"", headers=None, pieces=None, reset=False, chunked=None, delay=0.0, reset_after=False
    ):
        self.delay = delay  # seconds before the status line
        self.reset_after = reset_after  # after the pieces, reset the connection (no chunked terminator)
        self.status = status
        self.headers = headers or {"content-type": "application/json"}
        self.pieces = pieces if pieces is not None else [(0.0, body if isinstance(body, bytes) else body.encode())]
        self.reset = reset
        self.chunked = chunked if chunked is not None else pieces is not None


def sse(*events):
    """Body pieces of an SSE stream: each event a dict (JSON), a str (sent as is after 'data: ') or bytes."""
    out = []
    for ev in events:
        delay = 0.0
        if isinstance(ev, tuple):
            delay, ev = ev
        if isinstance(ev, bytes):
            out.append((delay, ev))
        elif isinstance(ev, dict):
            out.append((delay, b"data: " + json.dumps(ev).encode() + b"\n\n"))
        else:
            out.append((delay, b"data: " + ev.encode() + b"\n\n"))
    return out


@pytest.fixture
def scripted_server():
    """Factory: ``scripted_server({"/v1/models": Script(...), ...})`` -> (base_url, requests seen)."""
    servers = []

    def start(routes, tls_context=None):
        seen = []

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def _answer(self):
                n = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(n) if n else b""
                seen.append({"method": self.command, "path": self.path, "headers": dict(self.headers), "body": body})
                script = routes.get(self.path)
                if callable(script):
                    script = script(body)
                if script is None:
                    script = Script(404, b'{"detail":"Not Found"}')
                if script.delay:
                    time.sleep(script.delay)
                if script.reset:
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.connection.close()
                    self.close_connection = True
                    return
                self.send_response(script.status)
                for k, v in script.headers.items():
                    self.send_header(k, v)
                if script.chunked:
                    self.send_header("transfer-encoding", "chunked")
                else:
                    self.send_header("content-length", str(sum(len(p) for _delay, p in script.pieces)))
                self.end_headers()
                try:
                    for delay, piece in script.pieces:
                        if delay:
                            time.sleep(delay)
                        if script.chunked:
                            if piece:
                                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                        else:
                            self.wfile.write(piece)
                        self.wfile.flush()
                    if script.reset_after:
                        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                        self.connection.close()
                        self.close_connection = True
                        return
                    if script.chunked:
                        self.wfile.write(b"0\r\n\r\n")
                except OSError:
                    self.close_connection = True

            do_GET = do_POST = _answer

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        httpd.daemon_threads = True
        if tls_context is not None:
            httpd.socket = tls_context.wrap_socket(httpd.socket, server_side=True)
        thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()
        servers.append(httpd)
        scheme = "https" if tls_context is not None else "http"
        return f"{scheme}://127.0.0.1:{httpd.server_address[1]}", seen

    yield start
    for httpd in servers:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture(scope="session")
def self_signed_cert(tmp_path_factory):
    """A self-signed certificate for 127.0.0.1 made with the openssl CLI: (certfile, keyfile)."""
    d = tmp_path_factory.mktemp("tls")
    cert, key = d / "cert.pem", d / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    return str(cert), str(key)


def raw_response(status, body=b"", headers=None):
    """The bytes of a whole HTTP/1.1 answer with a Content-Length, for the trickle server."""
    body = body if isinstance(body, bytes) else body.encode()
    head = [f"HTTP/1.1 {status} X"] + [f"{k}: {v}" for k, v in (headers or {}).items()]
    head += [f"Content-Length: {len(body)}", "Connection: close"]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


class TrickleServer:
    """A loopback server on plain sockets that answers every request one byte per ``interval``.

    A wedged proxy or a swapping host does this: every read of the client gets a byte, so a
    per-read timeout never fires. ``answers`` maps a path to the full answer bytes (status line
    included, see ``raw_response``), or to ``(bytes, interval)`` for a path answered at its own
    pace (0: at once); others get a 200 JSON answer. ``requests`` lists the request lines seen.
    """

    def __init__(self, answers=None, interval=1.0):
        self.answers = answers or {}
        self.interval = interval
        self.requests = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.base_url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.stopped = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.stopped.is_set():
            try:
                conn, _addr = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                got = conn.recv(65536)
                if not got:
                    return
                data += got
            line = data.split(b"\r\n", 1)[0].decode()
            self.requests.append(line)
            path = line.split(" ")[1]
            answer = self.answers.get(path, raw_response(200, b'{"ok": true, "data": [{"id": "m"}]}'))
            answer, interval = answer if isinstance(answer, tuple) else (answer, self.interval)
            if not interval:
                conn.sendall(answer)
                return
            for i in range(len(answer)):
                if self.stopped.wait(interval):
                    return
                try:
                    conn.sendall(answer[i : i + 1])
                except OSError:
                    return  # the client gave up: what a deadline should make it do

    def stop(self):
        self.stopped.set()
        self.sock.close()


@pytest.fixture
def trickle_server():
    """Factory: ``trickle_server(answers=None, interval=1.0)`` -> TrickleServer (stopped after the test)."""
    servers = []

    def start(answers=None, interval=1.0):
        server = TrickleServer(answers, interval)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


class _Helpers:
    """Helpers for test modules (conftest is not importable as a module under pytest)."""

    Script = Script
    sse = staticmethod(sse)
    free_port = staticmethod(free_port)
    raw_response = staticmethod(raw_response)


@pytest.fixture
def h():
    return _Helpers
