# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A stand-in SGLang unit for the rulebook scenario: /metrics in SGLang 0.5.23's shapes
(tests/unit/plugins/sglang_metrics_text.py), traffic at every scrape, and after --decay-after
seconds the accept length collapses to 1.02 and a third of the requests abort.

    python tests/eda/regressing_metrics_server.py --port 30123 --decay-after 6
"""

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "plugins"))
from sglang_metrics_text import MetricsServer, SglangMetrics  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--decay-after", type=float, default=6.0)
    args = parser.parse_args()
    start = time.monotonic()

    def step(n, state):
        decayed = time.monotonic() - start >= args.decay_after
        state.accept_length = 1.02 if decayed else 3.0
        state.serve(6, aborted=2 if decayed else 0)

    server = MetricsServer(SglangMetrics(accept_length=3.0), step=step, port=args.port)
    print(f"serving SGLang-shaped /metrics on {server.url}, decay after {args.decay_after} s", flush=True)
    server.httpd.serve_forever()


if __name__ == "__main__":
    main()
