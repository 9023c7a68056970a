# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Clients that stream through a router and write down every request: what a fleet's users see.

    python3 stream_clients.py URL MODEL OUT.jsonl STOPFILE [streams] [max_tokens] [timeout]

Each of ``streams`` clients sends streamed completions (``stream: true``) one after another until
STOPFILE exists, and appends one JSON line per request to OUT.jsonl: ``{client, start, seconds,
status, chunks, done, error}``. Nothing is retried: a refused connection, an HTTP error, a stream
cut before ``data: [DONE]`` or a request still unfinished at ``timeout`` (wall clock) is written as
it happened, so a test can count the failed requests (deploy_canary's verifier). Standard library
only (the controller's Python or a test host's).
"""

import json
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

PROMPTS = [
    "Explain in two sentences why the sky is blue.",
    "Write a haiku about a server room at night.",
    "List three uses of a hash map.",
]


def one_request(url, model, prompt, max_tokens, timeout):
    """One streamed completion: its record (without client and start)."""
    # The served model's name: sglang-router refuses a body without one (422), SGLang another name (404).
    body = json.dumps(
        {"model": model, "prompt": prompt, "max_tokens": max_tokens, "temperature": 0.7, "stream": True}
    ).encode()
    request = urllib.request.Request(
        url + "/v1/completions", data=body, headers={"Content-Type": "application/json"}, method="POST"
    )
    started = time.monotonic()
    out = {"status": None, "chunks": 0, "done": False, "error": None}
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            out["status"] = answer.status
            for line in answer:
                if line.startswith(b"data:"):
                    out["chunks"] += 1
                    if line.strip() == b"data: [DONE]":
                        out["done"] = True
                if time.monotonic() - started > timeout:
                    out["error"] = f"still streaming after {timeout} s"
                    break
    except urllib.error.HTTPError as exc:
        out["status"] = exc.code
        out["error"] = f"HTTP {exc.code}: {exc.read()[:200].decode(errors='replace')}"
    except (urllib.error.URLError, OSError, ValueError) as exc:  # socket.timeout is an OSError
        out["error"] = f"{type(exc).__name__}: {exc}"
    if out["error"] is None and not out["done"]:
        out["error"] = f"the stream was cut: it ended after {out['chunks']} event(s), without data: [DONE]"
    out["seconds"] = round(time.monotonic() - started, 3)
    return out


def client(index, url, model, out_path, stop, max_tokens, timeout, lock):
    n = index
    while not stop.exists():
        start = time.time()
        record = one_request(url, model, PROMPTS[n % len(PROMPTS)], max_tokens, timeout)
        n += 1
        record.update(client=index, start=round(start, 3))
        with lock, open(out_path, "a") as out:
            out.write(json.dumps(record) + "\n")


def main():
    url, model, out_path, stop = sys.argv[1].rstrip("/"), sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4])
    streams = int(sys.argv[5]) if len(sys.argv) > 5 else 4
    max_tokens = int(sys.argv[6]) if len(sys.argv) > 6 else 64
    timeout = float(sys.argv[7]) if len(sys.argv) > 7 else 10.0
    lock = threading.Lock()
    threads = [
        threading.Thread(target=client, args=(i, url, model, out_path, stop, max_tokens, timeout, lock))
        for i in range(streams)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


if __name__ == "__main__":
    main()
