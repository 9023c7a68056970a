"""Benchmark: deploy wall time for 1 and for 8 simulated hosts (every host deploys).

Each host is a simulated 8x RTX PRO 6000 Blackwell (ct200) whose DDTree beats NEXTN by ~24 %;
playbooks/deploy_ddtree.yml runs with its default canary batches [1, "25%", "100%"] and forks 10,
from the first task to the last report.

    python benchmarks/deploy_fleet.py [--sizes 1 8]
"""

import argparse

from deploy_common import deploy, log, simulated_hosts

HOST_VARS = {
    "sim_gpu_preset": "rtx_pro_6000_bwx8",
    "sim_behaviour": {
        "NEXTN": {"mode": "healthy", "tok_s": 50},
        "DDTREE": {"mode": "healthy", "tok_s": 62, "accept_length": 3.1},
    },
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 8], help="fleet sizes (default 1 8)")
    args = parser.parse_args()
    results = []
    for size in args.sizes:
        hosts = {f"ct{200 + i}": HOST_VARS for i in range(size)}
        with simulated_hosts(hosts) as (inventory, workdir):
            rc, wall, summary = deploy(inventory, workdir, f"fleet-{size}")
            outcomes = summary["counts"]
            if outcomes != {"deployed": size}:
                raise SystemExit(f"{size} hosts: expected all deployed, got {outcomes}")
            gains = [h["gain"] for h in summary["hosts"]]
            results.append((size, wall, min(gains), max(gains)))
            log(f"{size} host(s): {wall:.1f} s, gain {min(gains):+.1%} .. {max(gains):+.1%}")
    print()
    print("| hosts | batches | deploy wall time (s) | per host (s) | gain measured |")
    print("| --- | --- | --- | --- | --- |")
    for size, wall, lo, hi in results:
        batches = "1" if size == 1 else "1, 25 %, rest"
        print(f"| {size} | {batches} | {wall:.1f} | {wall / size:.1f} | {lo:+.1%} .. {hi:+.1%} |")


if __name__ == "__main__":
    main()
