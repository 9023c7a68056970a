"""Benchmark: deploy wall time of a fleet, in one batch and in the default canary batches.

Each host is a simulated 8x RTX PRO 6000 Blackwell (ct200) whose DDTree beats NEXTN by ~24 %.
For each fleet size the hosts are booted and prepared once, then playbooks/deploy_ddtree.yml
runs twice with ddtree_deploy_promote false, a rollback putting NEXTN back between the two:

- canary: the default batches [1, "25%", "100%"] (one host, a quarter, the rest);
- one batch: ddtree_deploy_serial ["100%"].

Both with forks >= the largest batch (--forks), so a batch's hosts run side by side. The
difference between the two, over the extra batches, is the per-batch overhead. Each run's
PLAY RECAP gives the tasks each host ran (ok, changed included, + failed) and skipped, so
the wall time can be read as tasks x per-task cost. --default-forks adds, for the largest
fleet, a one-batch run with Ansible's default of 5 forks.

    python benchmarks/deploy_fleet.py [--sizes 1 4 8 16] [--forks 16] [--default-forks] [--one-batch]
                                      [--gate-levels N ...] [--no-gate]

--one-batch: only the one-batch run of each size (half the time: the figure issue 23 compares).
--no-gate: ddtree_deploy_min_gain null and ddtree_deploy_gate_not_worse false, no gate (its measuring is most of a
one-host deploy here): what the deploy itself costs, issue 23's "one host's own overhead".
--gate-levels 1: the gate's concurrency levels (ddtree_deploy_gate_concurrency; default: the role's,
1 and min(16, max_running_requests)). Sixteen simulated hosts share this machine's CPUs, so a gate at
16 streams per host measures that contention (a host read -10.5 % at 16 streams, spread 49 %, at load
35) rather than the deploy; one level keeps a fleet run about the deploy's own cost.
"""

import argparse
import os
import re
import statistics

from deploy_common import ROOT, deploy, log, playbook, simulated_hosts

HOST_VARS = {
    "sim_gpu_preset": "rtx_pro_6000_bwx8",
    "sim_behaviour": {
        "NEXTN": {"mode": "healthy", "tok_s": 50},
        "DDTREE": {"mode": "healthy", "tok_s": 62, "accept_length": 3.1},
    },
}
CANARY = [1, "25%", "100%"]
RECAP = re.compile(r"^(\S+)\s+: ok=(\d+)\s+changed=\d+\s+unreachable=\d+\s+failed=(\d+)\s+skipped=(\d+)", re.M)


def batches(size, serial):
    """How many batches Ansible makes of `size` hosts with `serial` (the last entry repeats)."""
    count, left, i = 0, size, 0
    while left > 0:
        entry = serial[min(i, len(serial) - 1)]
        n = int(entry) if isinstance(entry, int) else max(1, int(size * int(entry.rstrip("%")) / 100))
        left -= n
        count += 1
        i += 1
    return count


def tasks_per_host(logfile):
    """(median tasks run, median tasks skipped) per host, from the run's PLAY RECAP."""
    rows = RECAP.findall(logfile.read_text())
    if not rows:
        raise SystemExit(f"no PLAY RECAP in {logfile}")
    ran = statistics.median(int(row[1]) + int(row[2]) for row in rows)  # ok (changed included) + failed
    skipped = statistics.median(int(row[3]) for row in rows)
    return ran, skipped


def timed_deploy(inventory, workdir, tag, size, serial, forks, gate_levels=None, gate=True):
    settings = {"ddtree_deploy_serial": serial, "ddtree_deploy_promote": False}
    if gate_levels:
        settings["ddtree_deploy_gate_concurrency"] = gate_levels
    if not gate:
        # Since issue 33 a null min_gain is still judged "not worse" unless that is turned off too.
        settings.update(ddtree_deploy_min_gain=None, ddtree_deploy_gate_not_worse=False)
    wall, summary = deploy(inventory, workdir, tag, forks=forks, extra_vars=settings)[1:]
    if summary["counts"] != {"deployed": size}:
        raise SystemExit(f"{tag}: expected all {size} deployed, got {summary['counts']} (see {workdir / tag}.log)")
    ran, skipped = tasks_per_host(workdir / f"{tag}.log")
    gains = [h["gain"] for h in summary["hosts"] if h["gain"] is not None]
    row = {
        "hosts": size,
        "batches": batches(size, serial),
        "forks": forks,
        "wall": wall,
        "tasks": ran,
        "skipped": skipped,
        "gain": (min(gains), max(gains)) if gains else None,
        "load": os.getloadavg()[0],
    }
    log(
        f"{tag}: {size} host(s), {row['batches']} batch(es), forks {forks}: {wall:.1f} s, "
        f"{ran:.0f} tasks per host ({skipped:.0f} skipped), load {row['load']:.1f}"
    )
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 4, 8, 16], help="fleet sizes (default 1 4 8 16)")
    parser.add_argument("--forks", type=int, default=16, help="forks (default 16: every host of a batch at once)")
    parser.add_argument(
        "--default-forks", action="store_true", help="also one batch of the largest fleet with Ansible's 5 forks"
    )
    parser.add_argument("--one-batch", action="store_true", help="only the one-batch run of each size")
    parser.add_argument(
        "--gate-levels", type=int, nargs="+", help="ddtree_deploy_gate_concurrency (default: the role's)"
    )
    parser.add_argument(
        "--no-gate",
        action="store_true",
        help="ddtree_deploy_min_gain null, ddtree_deploy_gate_not_worse false: no gate measuring",
    )
    args = parser.parse_args()
    gate = {"gate_levels": args.gate_levels, "gate": not args.no_gate}
    rows = []
    loads = [os.getloadavg()[0]]
    for size in args.sizes:
        hosts = {f"ct{200 + i}": HOST_VARS for i in range(size)}
        with simulated_hosts(hosts) as (inventory, workdir):
            if not args.one_batch:
                rows.append(timed_deploy(inventory, workdir, f"canary-{size}", size, CANARY, args.forks, **gate))
                playbook(inventory, ROOT / "playbooks/rollback.yml", workdir / f"rollback-{size}.log", forks=args.forks)
            rows.append(timed_deploy(inventory, workdir, f"one-{size}", size, ["100%"], args.forks, **gate))
            if args.default_forks and size == max(args.sizes):
                playbook(inventory, ROOT / "playbooks/rollback.yml", workdir / f"rollback5-{size}.log", forks=5)
                rows.append(timed_deploy(inventory, workdir, f"one-forks5-{size}", size, ["100%"], 5, **gate))
        loads.append(os.getloadavg()[0])
    print()
    print(f"load average (1 min) {min(loads + [r['load'] for r in rows]):.1f} .. "
          f"{max(loads + [r['load'] for r in rows]):.1f} while measuring; {os.cpu_count()} CPUs")  # fmt: skip
    print()
    print(
        "| hosts | batches | forks | deploy wall time (s) | per host (s) | tasks per host (skipped) "
        "| s per task | gain measured |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        gain = f"{r['gain'][0]:+.1%} .. {r['gain'][1]:+.1%}" if r["gain"] else "not gated"
        print(
            f"| {r['hosts']} | {r['batches']} | {r['forks']} | {r['wall']:.1f} | {r['wall'] / r['hosts']:.1f} "
            f"| {r['tasks']:.0f} ({r['skipped']:.0f}) | {r['wall'] / r['batches'] / r['tasks']:.2f} "
            f"| {gain} |"
        )
    print()
    for size in [] if args.one_batch else args.sizes:
        canary, one = (next(r for r in rows if r["hosts"] == size and r["forks"] == args.forks and r["batches"] == b)
                       for b in (batches(size, CANARY), 1))  # fmt: skip
        if canary["batches"] > 1:
            extra = canary["batches"] - 1
            print(
                f"{size} hosts: the canary batches cost {canary['wall'] - one['wall']:+.1f} s over one batch, "
                f"{(canary['wall'] - one['wall']) / extra:+.1f} s per extra batch ({extra})"
            )


if __name__ == "__main__":
    main()
