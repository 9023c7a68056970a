"""Benchmark: from the failing probe to the restored service verified, against the service's own start.

One simulated 2x RTX A6000 host (ct129) with a working NEXTN unit; DDTree answers chat with HTTP
400 (the field report's fourth failure: the server is healthy, the probe fails at once). The deploy
rolls back; its report records the wall time from the rescue's start (right after the failing
probe) to the restored service proved by llm_probe, and from the restart to the proof. The
service's own start time (`systemctl restart` until /health answers 200, timed inside the host)
is measured separately on the same host: the difference is what the rollback itself costs.

    python benchmarks/deploy_rollback.py [--runs N]
"""

import argparse
import json
import statistics

from deploy_common import PREFIX, deploy, log, service_start_seconds, simulated_hosts

HOST = {
    "ct129": {
        "sim_gpu_preset": "rtx_a6000x2",
        "sim_behaviour": {"NEXTN": {"mode": "healthy", "tok_s": 40}, "DDTREE": {"mode": "chat_400"}},
    }
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="deploys to time (default 3)")
    args = parser.parse_args()
    rows = []
    with simulated_hosts(HOST) as (inventory, workdir):
        container = next(iter(json.loads(inventory.read_text())["sglang_servers"]["hosts"].values()))["ansible_host"]
        assert container.startswith(PREFIX)
        for i in range(args.runs):
            own = service_start_seconds(container)
            rc, wall, summary = deploy(inventory, workdir, f"rollback-{i}", expect=(2,))
            report = summary["hosts"][0]
            if report["outcome"] != "rolled_back":
                raise SystemExit(f"run {i}: expected rolled_back, got {report['outcome']}: {report['cause']}")
            t = report["timings"]
            rows.append((own, t["failure_to_verified_s"], t["restart_to_verified_s"], wall))
            log(
                f"run {i}: own start {own:.2f} s; failure -> verified {t['failure_to_verified_s']:.2f} s "
                f"(restart -> verified {t['restart_to_verified_s']:.2f} s); whole deploy {wall:.1f} s"
            )
    med = [statistics.median(col) for col in zip(*rows, strict=True)]
    print()
    print(f"| measure (median of {len(rows)}) | seconds |")
    print("| --- | --- |")
    print(f"| service's own start (restart -> /health 200) | {med[0]:.2f} |")
    print(f"| failing probe -> restored service verified | {med[1]:.2f} |")
    print(f"| restart of the restored unit -> verified | {med[2]:.2f} |")
    print(f"| rollback overhead over the service's own start | {med[1] - med[0]:.2f} |")
    print(f"| whole deploy (preflight to report, rolled back) | {med[3]:.1f} |")


if __name__ == "__main__":
    main()
