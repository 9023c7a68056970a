# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gain gate's noise (results are recorded in docs/probe.md, "Gain gate noise").

The gate runs the role's default prompt set (roles/ddtree_deploy/vars/gate_prompts.yml) as a
closed-loop sweep at each of its levels (ddtree.sglang.llm_bench), each level's window split into
``ddtree_deploy_gate_repeats`` measurements, and compares the medians level by level
(plugins/module_utils/_gate.py), then asks each prompt once for the equivalence check. Here both
sides are the same unchanged server (the simulator as the ct200-like NEXTN unit, with its batching
curve), so every gain measured is noise:

1. ``--runs`` (10) gate runs, each a baseline and a "new" side against that one server: the spread
   of the measured gain at each level, and the gate's own noise figure (the two spreads summed).
2. As a check, real gains of 5 % and 10 % (a second server decoding that much faster at every
   batch size) measured the same way.

The sweep and the probes run in-process (``_bench.Bench``, with ``_probe.Probe`` inside it: what the module runs on
the host); Ansible's own start-up per call is not inside any measured time. Run from the
repository root: ``.venv/bin/python benchmarks/gate_noise.py`` (about 8 minutes at the role's
defaults; ``--runs 3`` for a quick look).
"""

import argparse
import json
import os
import statistics
import time

import yaml
from probe_bench import REPO, Sim, stats  # also puts the collection on sys.path

# isort: split

from ansible_collections.ddtree.sglang.plugins.module_utils._bench import Bench  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._gate import compare, summarise  # noqa: E402

PROMPTS = yaml.safe_load((REPO / "roles/ddtree_deploy/vars/gate_prompts.yml").read_text())[
    "__ddtree_deploy_gate_prompt_set"
]
DEFAULTS = yaml.safe_load((REPO / "roles/ddtree_deploy/defaults/main.yml").read_text())
REPEATS = DEFAULTS["ddtree_deploy_gate_repeats"]
EQ_TOKENS = DEFAULTS["ddtree_deploy_equivalence_tokens"]
DURATION = DEFAULTS["ddtree_deploy_gate_duration"]
WARMUP = DEFAULTS["ddtree_deploy_gate_warmup"]
# The default levels on a unit of max_running_requests 16 or more: one stream and 16.
LEVELS = [1, 16]
# The ct200-like NEXTN unit's per-stream rate by streams in flight (inventories/demo/host_vars/ct200-sim.yml).
NEXTN_RATES = {"1": 50, "2": 49.5, "8": 46, "16": 42, "24": 38, "32": 35, "64": 26}


def side(base_url):
    """One side of the gate, as gate_measure.yml runs it: one llm_bench call, the sweep and then each prompt
    once, greedy."""
    bench = Bench(
        base_url,
        concurrency=LEVELS,
        prompts=PROMPTS,
        duration=DURATION,
        warmup=WARMUP,
        repeats=REPEATS,
        greedy_tokens=EQ_TOKENS,
        timeout=60.0,
    )
    s = summarise(bench.run())
    assert s["measured"], s["failures"]
    return s


def sim(factor=1.0):
    rates = {k: v * factor for k, v in NEXTN_RATES.items()}
    return Sim("healthy", "NEXTN", rates=json.dumps(rates), accept_length=2.4)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()
    load_before = os.getloadavg()
    t0 = time.monotonic()
    out = {"repeats": REPEATS, "levels": LEVELS, "duration": DURATION, "warmup": WARMUP, "runs": args.runs}
    out["prompts"] = [p["id"] for p in PROMPTS]
    per_level = {n: {"gains": [], "noises": [], "before": []} for n in LEVELS}
    seconds = []
    with sim() as server:
        for _repeat in range(args.runs):
            t = time.monotonic()
            base = side(server.base_url)
            new = side(server.base_url)
            seconds.append((time.monotonic() - t) / 2)
            v = compare(new, base, min_gain=0.0, equivalence_tokens=EQ_TOKENS)
            assert v["equivalence"]["ok"], v["equivalence"]
            for g in v["gains"]:
                per_level[g["concurrency"]]["gains"].append(g["gain"])
                per_level[g["concurrency"]]["noises"].append(g["noise"])
                per_level[g["concurrency"]]["before"].append(g["before"])
    out["unchanged"] = {
        str(n): {
            "gain": dict(stats(d["gains"]), stdev=statistics.stdev(d["gains"]) if len(d["gains"]) > 1 else 0.0),
            "gate_noise": stats(d["noises"]),
            "baseline_tok_s": stats(d["before"]),
            "largest_gain_of_noise": max(abs(g) for g in d["gains"]),
        }
        for n, d in per_level.items()
    }
    out["seconds_per_side"] = stats(seconds)
    real = {}
    for factor in (1.05, 1.10):
        with sim() as a, sim(factor) as b:
            measured = []
            for _repeat in range(min(3, args.runs)):
                v = compare(side(b.base_url), side(a.base_url), min_gain=0.0, equivalence_tokens=EQ_TOKENS)
                measured.append({g["concurrency"]: (g["gain"], g["within_noise"]) for g in v["gains"]})
        real[f"decode +{(factor - 1) * 100:.0f} %"] = measured
    out["real_gains"] = real
    out["load_average_before"] = load_before
    out["load_average_after"] = os.getloadavg()
    out["cpus"] = os.cpu_count()
    out["seconds"] = round(time.monotonic() - t0, 1)
    text = json.dumps(out, indent=2, default=lambda x: round(x, 4))
    print(text)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
