"""Benchmark: the downtime of two candidates, with and without NEXTN restored between them (issue 21).

Two simulated 2x RTX A6000 hosts with a working NEXTN unit, as in the deploy_failures scenario:

- nograph: DDTree dies at start with SGLang 0.5.23's "Not enough memory" unless CUDA graphs are off,
  so with candidates [ddtree, ddtree+nograph] the second is kept;
- allfail: the second candidate also fails (it crashes before it binds), so NEXTN is restored.

Each host is deployed alone (-l), so no other host's tasks hold it (docs/deploy.md, the lockstep
wait), with ddtree_deploy_restore_between_candidates false and then true, --runs times each. The
report's downtime_s covers every candidate; the candidates' own shares say how long each outage
was. Model loads are counted from the report: one per candidate switched, one per restore.
With ddtree_deploy_promote false, playbooks/rollback.yml puts NEXTN back after a kept candidate.

    python benchmarks/deploy_candidates.py [--runs N]
"""

import argparse
import os
import statistics

from deploy_common import ROOT, deploy, log, playbook, simulated_hosts

NEXTN = {"mode": "healthy", "tok_s": 40}
OOM_WITH_GRAPHS = {"when": {"disable_cuda_graph": False}, "mode": "oom_start"}
CANDIDATES = [{"profile": "ddtree"}, {"profile": "ddtree", "variants": ["nograph"]}]
HOSTS = {
    "nograph": {
        "sim_gpu_preset": "rtx_a6000x2",
        "sim_behaviour": {"NEXTN": NEXTN, "DDTREE": [OOM_WITH_GRAPHS, {"mode": "healthy", "tok_s": 52}]},
        "ddtree_deploy_candidates": CANDIDATES,
    },
    "allfail": {
        "sim_gpu_preset": "rtx_a6000x2",
        "sim_behaviour": {"NEXTN": NEXTN, "DDTREE": [OOM_WITH_GRAPHS, {"mode": "crash_before_bind"}]},
        "ddtree_deploy_candidates": CANDIDATES,
    },
}
EXPECTED = {"nograph": "deployed", "allfail": "rolled_back"}


def model_loads(report):
    """One load per candidate that was switched (its unit started), one per restore of NEXTN."""
    switched = sum(1 for c in report["candidates"] if c["downtime"]["candidate_load_s"])
    restores = sum(1 for c in report["candidates"] if c.get("restore"))
    return switched + restores


def one_run(inventory, workdir, host, between, tag):
    """One deploy of host alone; NEXTN put back after a kept candidate. Returns the host's report and wall."""
    extra = {"ddtree_deploy_restore_between_candidates": between, "ddtree_deploy_promote": False}
    _rc, wall, summary = deploy(inventory, workdir, tag, expect=(0, 2), limit=host, extra_vars=extra)
    report = summary["hosts"][0]
    if report["outcome"] != EXPECTED[host]:
        raise SystemExit(f"{tag}: expected {EXPECTED[host]}, got {report['outcome']}: {report['cause']}")
    if report["outcome"] == "deployed":
        playbook(inventory, ROOT / "playbooks/rollback.yml", workdir / f"{tag}-rollback.log", limit=host)
    return report, wall


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2, help="deploys per host and setting (default 2)")
    args = parser.parse_args()
    rows = {}
    loads = [os.getloadavg()[0]]
    with simulated_hosts(HOSTS) as (inventory, workdir):
        for host in HOSTS:
            for between in (False, True):
                for i in range(args.runs):
                    tag = f"{host}-{'between' if between else 'straight'}-{i}"
                    report, wall = one_run(inventory, workdir, host, between, tag)
                    shares = [c["downtime_s"] for c in report["candidates"]]
                    d = report["downtime"]
                    # NEXTN between: one outage per candidate (its share); else one outage, the whole downtime.
                    longest = max(s or 0 for s in shares) if between else report["downtime_s"]
                    rows.setdefault((host, between), []).append(
                        (report["downtime_s"], longest, model_loads(report), d, wall)
                    )
                    loads.append(os.getloadavg()[0])
                    log(
                        f"{tag}: {report['outcome_text']}; downtime {report['downtime_s']:.2f} s "
                        f"(candidates' shares {shares}; {d}); {model_loads(report)} model loads; "
                        f"whole deploy {wall:.1f} s; load average {loads[-1]:.1f}"
                    )
    print()
    print(f"load average (1 min) {min(loads):.1f} .. {max(loads):.1f} while measuring")
    print()
    print(
        f"| host | NEXTN between | model loads | downtime s (median of {args.runs}) | longest outage s "
        "| switching s | restore + restored load s | whole deploy s |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for (host, between), runs in rows.items():
        med = statistics.median
        restore = med(r[3]["restore_s"] + r[3]["restored_load_s"] for r in runs)
        print(
            f"| {host} | {'yes' if between else 'no'} | {runs[0][2]} | {med(r[0] for r in runs):.2f} "
            f"| {med(r[1] for r in runs):.2f} | {med(r[3]['switching_s'] for r in runs):.2f} | {restore:.2f} "
            f"| {med(r[4] for r in runs):.1f} |"
        )


if __name__ == "__main__":
    main()
