# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Measure llm_probe against the SGLang simulator (results are recorded in docs/probe.md).

1. Time to verdict on the field report's failure (first token after 17.6 s, then one '!'
   every 17.6 s) with the module's defaults: in-process, and through ``ansible localhost -m``.
2. Measured decode rate against the simulator's true rate: 40 tok/s over 32 tokens, without
   speculation and with NEXTN-like bursts (accept length 2.4). Goal: within 5 %.
3. The probe's own overhead against a bare HTTP request to a server that answers at once.
4. TTFT against the simulator's 80 ms: the probe's ``ttft_s`` (counted from the moment the
   request is written), what counting from before the client's set-up would add
   (``request_setup_s``), and a raw-socket client's TTFT (the floor any client sees: the
   simulator's own late wake-ups on a loaded host are in it). ``--ttft-only`` runs just this.

Run from the repository root with the dev venv: ``.venv/bin/python benchmarks/probe_bench.py``
(about a minute; ``--quick`` for fewer runs, ``--no-ansible`` to skip the CLI runs).
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import requests

REPO = Path(__file__).resolve().parents[1]
COLLECTIONS = REPO / ".cache" / "collections"
LINK = COLLECTIONS / "ansible_collections" / "ddtree" / "sglang"
if not LINK.exists():
    LINK.parent.mkdir(parents=True, exist_ok=True)
    LINK.symlink_to(REPO, target_is_directory=True)
sys.path.insert(0, str(COLLECTIONS))

from ansible_collections.ddtree.sglang.plugins.module_utils._probe import Probe  # noqa: E402

SIM = REPO / "tests" / "sglang_sim" / "launch_server.py"
REPORT_SECONDS = 140.9  # the field report's hand-written probe: 8 tokens in 141 s


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Sim:
    def __init__(self, mode, algorithm=None, **env):
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        run_env = {k: v for k, v in os.environ.items() if not k.startswith(("SGLANG_SIM_", "DDTREE_SIM_"))}
        run_env.update(
            DDTREE_SIM_BEHAVIOUR_FILE="/nonexistent",
            SGLANG_SIM_MODE=mode,
            SGLANG_SIM_LOAD_SECONDS="0",
            SGLANG_SIM_BIND_DELAY_S="0",
        )
        run_env.update({f"SGLANG_SIM_{k.upper()}": str(v) for k, v in env.items()})
        cmd = [sys.executable, str(SIM), "--model-path", "/models/Qwen3.6-27B", "--port", str(self.port)]
        if algorithm:
            cmd += ["--speculative-algorithm", algorithm, "--speculative-draft-model-path", "/models/draft"]
        self.proc = subprocess.Popen(cmd, env=run_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        end = time.monotonic() + 10
        while time.monotonic() < end:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.02)
        raise SystemExit("simulator did not start")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.proc.terminate()
        self.proc.wait(timeout=10)


def stats(values):
    return {
        "n": len(values),
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "mean": statistics.fmean(values),
    }


def bench_time_to_verdict(runs, with_ansible):
    out = {}
    with Sim("degenerate", "DDTREE") as sim:
        times, msgs = [], set()
        for _attempt in range(runs):
            t = time.monotonic()
            r = Probe(sim.base_url).run()
            times.append(time.monotonic() - t)
            assert r["failed"], r
            msgs.add(r["msg"])
        out["in_process"] = dict(stats(times), msgs=sorted(msgs))
        if with_ansible:
            env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(COLLECTIONS), ANSIBLE_NOCOLOR="1")
            ansible = str(Path(sys.executable).parent / "ansible")
            times = []
            for _attempt in range(runs):
                t = time.monotonic()
                p = subprocess.run(
                    [ansible, "localhost", "-m", "ddtree.sglang.llm_probe", "-a", f"base_url={sim.base_url}"],
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=120,
                    check=False,
                )
                times.append(time.monotonic() - t)
                assert p.returncode == 2, p.stdout + p.stderr
            out["ansible_cli"] = stats(times)
    return out


def bench_rate(runs):
    out = {}
    for label, algorithm, accept in (("no speculation", None, 1.0), ("NEXTN bursts, accept 2.4", "NEXTN", 2.4)):
        with Sim("healthy", algorithm, tok_s=40, accept_length=accept) as sim:
            rates = []
            for _attempt in range(runs):
                r = Probe(sim.base_url, max_tokens=32).run()
                assert not r["failed"] and r["completion_tokens"] == 32, r
                rates.append(r["tokens_per_second"])
        s = stats(rates)
        s["worst_error_pct"] = max(abs(x - 40) for x in rates) / 40 * 100
        s["median_error_pct"] = abs(s["median"] - 40) / 40 * 100
        out[label] = s
    return out


def bench_overhead(runs):
    out = {}
    with Sim("healthy", None, ttft_s=0, tok_s=1000000) as sim:
        url = sim.base_url + "/v1/completions"
        body = {"model": "/models/Qwen3.6-27B", "prompt": "Hello", "max_tokens": 8, "temperature": 0}
        session = requests.Session()
        session.trust_env = False

        def bare():
            session.post(url, json=body, timeout=10).json()

        def bare_stream():
            with session.post(url, json=dict(body, stream=True), timeout=10, stream=True) as r:
                for _line in r.iter_lines():
                    pass

        cases = {
            "bare POST (requests, kept-alive session)": bare,
            "bare streamed POST": bare_stream,
            "probe, model given": lambda: Probe(sim.base_url, model="/models/Qwen3.6-27B").run(),
            "probe, defaults (also GET /v1/models, /server_info)": lambda: Probe(sim.base_url).run(),
        }
        for name, fn in cases.items():
            fn()  # warm up
            times = []
            for _attempt in range(runs):
                t = time.perf_counter()
                fn()
                times.append((time.perf_counter() - t) * 1000)
            out[name] = stats(times)
    return out


def _raw_ttft(host, port, body):
    """TTFT of a raw-socket streamed POST: from sendall() to the first chunk holding text."""
    payload = json.dumps(body).encode()
    head = (
        f"POST /v1/completions HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n"
    ).encode()
    with socket.create_connection((host, port), timeout=10) as sock:
        t0 = time.monotonic()
        sock.sendall(head + payload)
        got = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return None
            got += chunk
            if b'"text": "' in got or b'"text":"' in got:
                return time.monotonic() - t0


def bench_ttft(runs, ttft_s=0.08):
    with Sim("healthy", None, ttft_s=ttft_s, tok_s=40) as sim:
        body = {"model": "/models/Qwen3.6-27B", "prompt": "Hello", "max_tokens": 8, "temperature": 0, "stream": True}
        probe_ttft, setup, raw = [], [], []
        for attempt in range(runs + 1):
            probe = Probe(sim.base_url, model="/models/Qwen3.6-27B")
            r = probe.run()
            assert not r["failed"], r
            rt = _raw_ttft("127.0.0.1", sim.port, body)
            if attempt == 0:
                continue  # warm-up
            probe_ttft.append(r["ttft_s"] * 1000)
            setup.append((probe.request_setup_s or 0) * 1000)
            raw.append(rt * 1000)
    out = {
        "true_ms": ttft_s * 1000,
        "probe_ttft_ms": stats(probe_ttft),
        "request_setup_ms": stats(setup),
        "old_t0_ttft_ms": stats([a + b for a, b in zip(probe_ttft, setup, strict=True)]),
        "raw_socket_ttft_ms": stats(raw),
    }
    for key in ("probe_ttft_ms", "old_t0_ttft_ms", "raw_socket_ttft_ms"):
        out[key]["median_error_pct"] = (out[key]["median"] - out["true_ms"]) / out["true_ms"] * 100
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer runs")
    ap.add_argument("--no-ansible", action="store_true", help="skip the ansible CLI runs")
    ap.add_argument("--json", action="store_true", help="print JSON instead of text")
    ap.add_argument("--ttft-only", action="store_true", help="only the TTFT measurement")
    args = ap.parse_args()
    runs = 3 if args.quick else 10
    if args.ttft_only:
        res = {"ttft": bench_ttft(runs * 3), "load": os.getloadavg()}
        print(json.dumps(res, indent=1))
        return
    res = {
        "time_to_verdict_s": bench_time_to_verdict(2 if args.quick else 3, not args.no_ansible),
        "decode_rate_tok_s_true_40": bench_rate(runs),
        "overhead_ms": bench_overhead(runs * 3),
        "ttft": bench_ttft(runs * 3),
        "host": {"cpus": os.cpu_count(), "load": os.getloadavg()[0], "python": sys.version.split()[0]},
    }
    if args.json:
        print(json.dumps(res, indent=1))
        return
    print(f"## Time to verdict, field report's failure, defaults (report: {REPORT_SECONDS:.0f} s)")
    for k, s in res["time_to_verdict_s"].items():
        print(
            f"- {k}: median {s['median']:.2f} s (min {s['min']:.2f}, max {s['max']:.2f}, n={s['n']}), "
            f"{REPORT_SECONDS / s['median']:.0f}x faster" + (f"; msg: {s['msgs'][0]}" if "msgs" in s else "")
        )
    print("## Decode rate vs the true 40 tok/s over 32 tokens")
    for k, s in res["decode_rate_tok_s_true_40"].items():
        print(
            f"- {k}: median {s['median']:.2f} tok/s ({s['median_error_pct']:.1f} %), range {s['min']:.2f}-"
            f"{s['max']:.2f}, worst {s['worst_error_pct']:.1f} % (n={s['n']})"
        )
    t = res["ttft"]
    print(f"## TTFT against the simulator's {t['true_ms']:.0f} ms (median, error vs true)")
    for key in ("probe_ttft_ms", "old_t0_ttft_ms", "raw_socket_ttft_ms", "request_setup_ms"):
        s = t[key]
        err = f" ({s['median_error_pct']:+.1f} %)" if "median_error_pct" in s else ""
        print(f"- {key}: median {s['median']:.1f} ms{err} (min {s['min']:.1f}, max {s['max']:.1f}, n={s['n']})")
    print("## Overhead (server answers at once), milliseconds")
    for k, s in res["overhead_ms"].items():
        print(f"- {k}: median {s['median']:.1f} ms (min {s['min']:.1f}, max {s['max']:.1f}, n={s['n']})")
    h = res["host"]
    print(f"## Host: {h['cpus']} CPUs, load {h['load']:.1f}, Python {h['python']}")


if __name__ == "__main__":
    main()
