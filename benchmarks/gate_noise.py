# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gain gate's noise (results are recorded in docs/probe.md, "Gain gate noise").

The gate runs the role's default prompt set (roles/ddtree_deploy/vars/gate_prompts.yml),
``ddtree_deploy_gate_repeats`` times per side, and compares the medians of the set rate
(plugins/module_utils/_gate.py). Here both sides are the same unchanged server (the simulator as
ct129's NEXTN unit: 40 tok/s, accept length 2.4), so every gain measured is noise:

1. ``--runs`` (10) gate runs, each a baseline and a "new" side against that one server: the spread
   of the measured gain, and the gate's own noise figure (the two spreads summed).
2. The smallest gain the default prompt set tells from noise: the largest |gain| of step 1,
   and, as a check, real gains of 5 % and 10 % (a second server decoding that much faster)
   measured the same way.

llm_probe's measurement is run in-process (``_probe.Probe``, what the module runs on the host);
Ansible's own start-up per run is not inside any measured time. Run from the repository root:
``.venv/bin/python benchmarks/gate_noise.py`` (about 4 minutes; ``--runs 3`` for a quick look).
"""

import argparse
import json
import os
import statistics
import time

import yaml
from probe_bench import REPO, Sim, stats  # also puts the collection on sys.path

# isort: split

from ansible_collections.ddtree.sglang.plugins.module_utils._gate import compare, summarise  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._probe import Probe  # noqa: E402

PROMPTS = yaml.safe_load((REPO / "roles/ddtree_deploy/vars/gate_prompts.yml").read_text())[
    "__ddtree_deploy_gate_prompt_set"
]
DEFAULTS = yaml.safe_load((REPO / "roles/ddtree_deploy/defaults/main.yml").read_text())
REPEATS = DEFAULTS["ddtree_deploy_gate_repeats"]
EQ_TOKENS = DEFAULTS["ddtree_deploy_equivalence_tokens"]


def probe(base_url, prompt, max_tokens):
    """One run as gate_measure.yml makes it: greedy, measured not judged."""
    opts = {"api": prompt["api"], "max_tokens": max_tokens, "temperature": 0.0}
    opts.update(min_tokens_per_second=0.0, max_ttft=0.0, timeout=60.0)
    if prompt["api"] == "chat":
        opts["messages"] = prompt["messages"]
    else:
        opts["prompt"] = prompt["prompt"]
    return Probe(base_url, **opts).run()


def side(base_url, repeats=REPEATS):
    """One side of the gate, in the order the role's loops run it."""
    measure = []
    for p in PROMPTS:
        for r in range(1, repeats + 1):
            res = probe(base_url, p, p["max_tokens"])
            res["item"] = [p, r]
            measure.append(res)
    greedy = []
    for p in PROMPTS:
        if p["max_tokens"] != EQ_TOKENS:
            res = probe(base_url, p, EQ_TOKENS)
            res["item"] = p
            greedy.append(res)
    s = summarise(measure, greedy, EQ_TOKENS)
    assert s["measured"], s["failures"]
    return s


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()
    load_before = os.getloadavg()
    t0 = time.monotonic()
    out = {"repeats": REPEATS, "prompts": [p["id"] for p in PROMPTS], "runs": args.runs}
    with Sim("healthy", "NEXTN", tok_s=40, accept_length=2.4) as sim:
        gains, noises, medians, seconds = [], [], [], []
        for _repeat in range(args.runs):
            t = time.monotonic()
            base = side(sim.base_url)
            new = side(sim.base_url)
            seconds.append(time.monotonic() - t)
            v = compare(new, base, min_gain=0.0, equivalence_tokens=EQ_TOKENS)
            assert v["equivalence"]["ok"], v["equivalence"]
            gains.append(v["gain"])
            noises.append(v["noise"])
            medians.append(base["median"])
    out["unchanged"] = {
        "gain": dict(stats(gains), stdev=statistics.stdev(gains) if len(gains) > 1 else 0.0),
        "gate_noise": stats(noises),
        "baseline_median_tok_s": stats(medians),
        "seconds_per_gate_run": stats(seconds),
    }
    out["smallest_gain_told_from_noise"] = max(abs(g) for g in gains)
    real = {}
    for factor in (1.05, 1.10):
        with (
            Sim("healthy", "NEXTN", tok_s=40, accept_length=2.4) as a,
            Sim("healthy", "NEXTN", tok_s=40 * factor, accept_length=2.4) as b,
        ):
            measured = []
            for _repeat in range(min(3, args.runs)):
                v = compare(side(b.base_url), side(a.base_url), min_gain=0.0, equivalence_tokens=EQ_TOKENS)
                measured.append((v["gain"], v["within_noise"]))
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
