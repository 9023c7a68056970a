# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Production-like traffic for a simulated host: a client that is not the deploy's.

    /usr/bin/python3 /opt/sglang-sim/traffic.py http://127.0.0.1:30000 [streams]

Each stream sends non-streamed completions (24 tokens) one after another, as long as it runs,
across unit restarts: a refused or failed request is retried after 0.2 s. Non-streamed, so a
request the scheduler aborts is an HTTP 503 in the server's /metrics
(sglang:http_responses_total{status_code="503"}), as it is for such a client of SGLang 0.5.23.
Standard library only (the test hosts' /usr/bin/python3). Started with systemd-run by the
deploy_failures scenario (host 'bakedecay'), so traffic flows through the bake.
"""

import json
import sys
import threading
import time
import urllib.error
import urllib.request

PROMPTS = [
    "Explain in two sentences why the sky is blue.",
    "Write a haiku about a server room at night.",
    "List three uses of a hash map.",
]


def stream(base, index):
    n = index
    while True:
        body = json.dumps({"prompt": PROMPTS[n % len(PROMPTS)], "max_tokens": 24, "temperature": 0.7}).encode()
        request = urllib.request.Request(
            base + "/v1/completions", data=body, headers={"Content-Type": "application/json"}, method="POST"
        )
        n += 1
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                answer.read()
        except (urllib.error.URLError, OSError, ValueError):
            time.sleep(0.2)  # the unit restarts, or answered an error: keep coming, as clients do


def main():
    base = sys.argv[1].rstrip("/")
    streams = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    threads = [threading.Thread(target=stream, args=(base, i), daemon=True) for i in range(streams)]
    for t in threads:
        t.start()
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
