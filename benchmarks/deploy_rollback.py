"""Benchmark: the downtime of a failed deploy, against the service's own start.

One simulated 2x RTX A6000 host (ct129) with a working NEXTN unit; DDTree is degenerate (the
field report's ct129: it answers, with garbage) or, with --mode chat_400, answers chat with HTTP
400. The deploy rolls back; its report records downtime_s (NEXTN stopped -> the restored unit
answering) and its parts: candidate load, probing, restore, restored load. The two loads are the
model's; probing + restore is the collection's share, which issue 13 bounds by the probe's TTFT
budget + 3 s. It also records the rescue's start (right after the failing probe) to the restored
service proved by llm_probe. The service's own start time (`systemctl restart` until /health
answers 200, timed inside the host) is measured separately on the same host. The load average
is printed with the figures: the machine may be shared.

    python benchmarks/deploy_rollback.py [--runs N] [--mode degenerate|chat_400] [--minimal-su]

--minimal-su: the host is the minimal Debian image (no sudo; DDTREE_TEST_IMAGE_MINIMAL) reached
with become_method su, as a Proxmox container is (issue 23's bound holds there too).
"""

import argparse
import json
import os
import statistics

from deploy_common import PREFIX, deploy, log, service_start_seconds, simulated_hosts

# llm_probe's default max_ttft (plugins/module_utils/_probe_options.py): the probe's TTFT budget.
TTFT_BUDGET_S = 4.0


def host(mode):
    return {
        "ct129": {
            "sim_gpu_preset": "rtx_a6000x2",
            "sim_behaviour": {"NEXTN": {"mode": "healthy", "tok_s": 40}, "DDTREE": {"mode": mode}},
        }
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="deploys to time (default 3)")
    parser.add_argument("--mode", default="degenerate", help="the simulated DDTree failure (default degenerate)")
    parser.add_argument("--minimal-su", action="store_true", help="a minimal host reached with become_method su")
    args = parser.parse_args()
    rows = []
    loads = [os.getloadavg()[0]]
    image, group_vars = None, None
    if args.minimal_su:
        image = os.environ.get("DDTREE_TEST_IMAGE_MINIMAL", "localhost/ddtree-sglang-testhost-minimal:latest")
        group_vars = {"ansible_become": True, "ansible_become_method": "su"}
    with simulated_hosts(host(args.mode), group_vars=group_vars, image=image) as (inventory, workdir):
        container = next(iter(json.loads(inventory.read_text())["sglang_servers"]["hosts"].values()))["ansible_host"]
        assert container.startswith(PREFIX)
        for i in range(args.runs):
            own = service_start_seconds(container)
            rc, wall, summary = deploy(inventory, workdir, f"rollback-{i}", expect=(2,))
            report = summary["hosts"][0]
            if report["outcome"] != "rolled_back":
                raise SystemExit(f"run {i}: expected rolled_back, got {report['outcome']}: {report['cause']}")
            t, d = report["timings"], report["downtime"]
            beyond = d["probing_s"] + d["restore_s"]
            rows.append(
                (
                    own,
                    report["downtime_s"],
                    d["candidate_load_s"],
                    d["probing_s"],
                    d["restore_s"],
                    d["restored_load_s"],
                    beyond,
                    t["failure_to_verified_s"],
                    wall,
                )
            )
            loads.append(os.getloadavg()[0])
            log(
                f"run {i}: own start {own:.2f} s; downtime {report['downtime_s']:.2f} s = candidate load "
                f"{d['candidate_load_s']:.2f} + probing {d['probing_s']:.2f} + restore {d['restore_s']:.2f} "
                f"+ restored load {d['restored_load_s']:.2f}; failure -> verified {t['failure_to_verified_s']:.2f} s; "
                f"whole deploy {wall:.1f} s; load average {loads[-1]:.1f}"
            )
    med = [statistics.median(col) for col in zip(*rows, strict=True)]
    print()
    host_kind = "; minimal host, become_method su" if args.minimal_su else ""
    print(
        f"DDTree mode {args.mode}{host_kind}; load average (1 min) {min(loads):.1f} .. {max(loads):.1f} while measuring"
    )
    print()
    print(f"| measure (median of {len(rows)}) | seconds |")
    print("| --- | --- |")
    print(f"| service's own start (restart -> /health 200) | {med[0]:.2f} |")
    print(f"| downtime (NEXTN stopped -> restored unit answering) | {med[1]:.2f} |")
    print(f"| of which candidate load | {med[2]:.2f} |")
    print(f"| of which probing | {med[3]:.2f} |")
    print(f"| of which restore (probe failed -> restored unit restarted) | {med[4]:.2f} |")
    print(f"| of which restored load | {med[5]:.2f} |")
    verdict = "within" if med[6] <= TTFT_BUDGET_S + 3 else "OVER"
    print(f"| beyond the two loads (probing + restore; bound {TTFT_BUDGET_S + 3:.0f}: {verdict}) | {med[6]:.2f} |")
    print(f"| failing probe -> restored service verified | {med[7]:.2f} |")
    print(f"| whole deploy (preflight to report, rolled back) | {med[8]:.1f} |")


if __name__ == "__main__":
    main()
