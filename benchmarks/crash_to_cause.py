# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Seconds from an SGLang crash to the sglang role naming its cause.

Boots one simulated GPU host (a podman container with systemd, as the molecule scenarios do),
makes it a ct129-like host with extensions/molecule/shared/prepare_gpu_host.yml, then per
trial sets the simulator to die with "Not enough memory ... --mem-fraction-static" some
seconds after it starts, and runs the sglang_crash scenario's converge playbook (the role in a
block/rescue that records sglang_failure). Each trial moves the server to a new port so the
role restarts it.

Measured per trial, all on the host's monotonic clock (the clock systemd's *Monotonic
timestamps use), against the crash as systemd recorded it (ExecMainExitTimestampMonotonic):
  module_s  when the sglang_wait module named the cause (its seconds_since_exit)
  play_s    when the failure had reached the play (the rescue's first task ran)
  wait_s    how long the role's wait ran in total (its timeout is 300 s)

Usage: .venv/bin/python benchmarks/crash_to_cause.py [--trials 3] [--delays 0.5,4] [--json out.json]
Needs: podman + runc, the test host image (scripts/build-test-image.sh), the repository's
.venv (ansible-playbook, containers.podman). Cleans up its container unless --keep.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PLAYBOOK_PREPARE = REPO / "extensions/molecule/shared/prepare_gpu_host.yml"
PLAYBOOK_CRASH = REPO / "extensions/molecule/sglang_crash/converge.yml"
RECORD = "/var/lib/sglang-molecule-failure.json"


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, **kw)


def boot(name, image):
    subprocess.run(["podman", "rm", "-f", name], capture_output=True, check=False)
    run(
        ["podman", "run", "-d", "--name", name, "--runtime", "runc", "--systemd=always"]
        + ["--ulimit", "nofile=1024:4096", "--ulimit", "nproc=4096:4096", image, "/sbin/init"],
        capture_output=True,
    )
    # "degraded" (a unit a container cannot run) is booted too; right after start the bus may not be up yet.
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        state = subprocess.run(
            ["podman", "exec", name, "systemctl", "is-system-running", "--wait"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
        if state in ("running", "degraded"):
            return
        time.sleep(1)
    sys.exit(f"{name} did not finish booting in 120 s (systemctl is-system-running: {state!r})")


def write_inventory(path, name):
    inventory = {
        "all": {
            "children": {
                "sglang_servers": {
                    "hosts": {
                        "ct129": {
                            "ansible_connection": "containers.podman.podman",
                            "ansible_host": name,
                            "ansible_python_interpreter": "/usr/bin/python3",
                            "sim_gpu_preset": "rtx_a6000x2",
                            "sglang_model_path": "/srv/models/Qwen3.6-27B",
                            "sglang_launch_command": "/usr/bin/python3 /opt/sglang-sim/launch_server.py",
                            "sglang_ready_timeout": 300,
                            "sglang_ready_progress_interval": 2,
                            "sglang_profile": "nextn",
                        }
                    }
                }
            }
        }
    }
    path.write_text(json.dumps(inventory))


def playbook(env, inventory, play, *extra):
    return subprocess.run(
        [str(REPO / ".venv/bin/ansible-playbook"), "-i", str(inventory), str(play), *extra],
        env=env,
        text=True,
        capture_output=True,
        check=False,
    )


def trial(env, inventory, name, port, delay):
    behaviour = json.dumps({"NEXTN": {"mode": "oom_start", "bind_delay_s": delay}})
    run(["podman", "exec", name, "sh", "-c", f"echo '{behaviour}' > /etc/ddtree-sim/behaviour.json"])
    run(["podman", "exec", name, "rm", "-f", RECORD])
    start = time.monotonic()
    proc = playbook(env, inventory, PLAYBOOK_CRASH, "-e", f"sglang_port={port}")
    wall = time.monotonic() - start
    if proc.returncode != 0:
        sys.exit(f"trial on port {port} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-2000:]}")
    record = json.loads(run(["podman", "exec", name, "cat", RECORD], capture_output=True).stdout)
    failure = record["failure"]
    return {
        "bind_delay_s": delay,
        "cause_id": failure["cause_id"],
        "module_s": round(float(failure["seconds_since_exit"]), 2),
        "play_s": round(record["reported_monotonic"] - record["exit_monotonic"], 2),
        "wait_s": round(float(failure["elapsed"]), 2),
        "playbook_wall_s": round(wall, 1),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=3, help="trials per crash delay")
    parser.add_argument("--delays", default="0.5,4", help="seconds the server lives before it crashes")
    parser.add_argument(
        "--image", default=os.environ.get("DDTREE_TEST_IMAGE", "localhost/ddtree-sglang-testhost:latest")
    )
    parser.add_argument("--prefix", default=os.environ.get("DDTREE_CONTAINER_PREFIX", "ddtree-"))
    parser.add_argument("--json", help="write the trials here as JSON")
    parser.add_argument("--keep", action="store_true", help="leave the container running")
    args = parser.parse_args()
    delays = [float(d) for d in args.delays.split(",")]

    name = f"{args.prefix}bench-crash-{uuid.uuid4().hex[:8]}"
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(REPO / ".cache/collections"), ANSIBLE_PIPELINING="true")
    # The unit tests' conftest creates the same symlink tree; make it here too.
    link = REPO / ".cache/collections/ansible_collections/ddtree/sglang"
    if not link.exists():
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(REPO, target_is_directory=True)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        inventory = Path(tmp) / "inventory.json"
        write_inventory(inventory, name)
        try:
            boot(name, args.image)
            proc = playbook(env, inventory, PLAYBOOK_PREPARE)
            if proc.returncode != 0:
                sys.exit(f"prepare failed:\n{proc.stdout[-3000:]}")
            port = 30100
            for delay in delays:
                for _trial in range(args.trials):
                    result = trial(env, inventory, name, port, delay)
                    port += 1
                    results.append(result)
                    print(json.dumps(result), flush=True)
        finally:
            if not args.keep:
                subprocess.run(["podman", "rm", "-f", name], capture_output=True, check=False)

    print("\nbind_delay_s  trials  cause                 module_s (median, max)  play_s (median, max)  wait_s median")
    for delay in delays:
        rows = [r for r in results if r["bind_delay_s"] == delay]
        causes = ",".join(sorted({r["cause_id"] for r in rows}))
        mod = [r["module_s"] for r in rows]
        play = [r["play_s"] for r in rows]
        wait = [r["wait_s"] for r in rows]
        print(
            f"{delay:>12}  {len(rows):>6}  {causes:<20}  {statistics.median(mod):>8.2f} {max(mod):>6.2f}"
            f"          {statistics.median(play):>6.2f} {max(play):>6.2f}       {statistics.median(wait):>6.2f}"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
