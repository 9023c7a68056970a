"""Shared helpers of the deploy benchmarks: simulated GPU hosts, an inventory, timed playbook runs.

The hosts are podman containers from the test host image (scripts/build-test-image.sh), made
simulated GPU hosts with a working NEXTN unit by extensions/molecule/shared/deploy_prepare.yml,
exactly as the demo does. Run the benchmarks from a shell where scripts/lib/setup.sh's
``ddtree_setup`` has run (the virtualenv active, DDTREE_TEST_IMAGE and DDTREE_COLLECTIONS_PATH
exported); they only add their own containers and remove them at the end.
"""

import contextlib
import json
import os
import secrets
import subprocess
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
IMAGE = os.environ.get("DDTREE_TEST_IMAGE", "localhost/ddtree-sglang-testhost:latest")
PREFIX = os.environ.get("DDTREE_BENCH_PREFIX", "ddtree-bench-")

# The simulated hosts' settings are the demo's (one copy): the simulator as SGLang, the release
# it stands in for, the probe's waits. Each host's ansible_host is its container's name.
GROUP_VARS = dict(
    yaml.safe_load((ROOT / "inventories/demo/group_vars/sglang_servers.yml").read_text()),
    # The test harness's podman connection (extensions/molecule/shared/connection_plugins),
    # containers.podman.podman with pipelining, as molecule runs: real hosts are reached over
    # SSH with pipelining (ansible.cfg), which costs one round trip per task, as this does.
    ansible_connection="podman",
)
del GROUP_VARS["ansible_host"]
CONNECTION_PLUGINS = ROOT / "extensions/molecule/shared/connection_plugins"


def log(msg):
    print(f"[bench] {msg}", flush=True)


def run(argv, **kw):
    return subprocess.run(argv, check=True, text=True, **kw)


@contextlib.contextmanager
def simulated_hosts(hosts, group_vars=None, image=None):
    """Boot one container per host ({name: host vars}), prepare them, yield the inventory path.

    image: another test host image, e.g. the minimal host's (DDTREE_TEST_IMAGE_MINIMAL: no
    python3-requests, no sudo), which is lent python3-requests to set up its NEXTN unit, as the
    deploy_minimal_host scenario does (the deploy's preflight would install it anyway)."""
    suffix = secrets.token_hex(3)
    names = {h: f"{PREFIX}{h}-{suffix}" for h in hosts}
    workdir = Path(tempfile.mkdtemp(prefix="ddtree-bench-"))
    inventory = {
        "sglang_servers": {
            "hosts": {h: dict(v, ansible_host=names[h]) for h, v in hosts.items()},
            "vars": dict(GROUP_VARS, **(group_vars or {})),
        }
    }
    inv_path = workdir / "inventory.json"
    inv_path.write_text(json.dumps(inventory, indent=2))
    try:
        for host, name in names.items():
            run(["podman", "rm", "-f", "-t", "0", name], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            run(
                [
                    "podman", "run", "-d", "--name", name, "--hostname", host, "--runtime", "runc",
                    "--systemd=always", "--ulimit", "nofile=1024:4096", "--ulimit", "nproc=4096:4096",
                    "--label", "ddtree.bench=1", image or IMAGE, "/sbin/init",
                ],
                stdout=subprocess.DEVNULL,
            )  # fmt: skip
        if image:
            for name in names.values():
                run(
                    ["podman", "exec", name, "/bin/sh", "-c", "apt-get update -qq && DEBIAN_FRONTEND=noninteractive "
                     "apt-get install -y -qq --no-install-recommends python3-requests"],
                    stdout=subprocess.DEVNULL,
                )  # fmt: skip
        log(f"preparing {len(hosts)} simulated host(s) with a NEXTN unit")
        playbook(inv_path, ROOT / "extensions/molecule/shared/deploy_prepare.yml", workdir / "prepare.log")
        yield inv_path, workdir
    finally:
        for name in names.values():
            subprocess.run(["podman", "rm", "-f", "-t", "0", name], stdout=subprocess.DEVNULL, check=False)


def playbook(inventory, path, logfile, extra_vars=None, env=None, expect=(0,), forks=10, limit=None):
    """Run ansible-playbook (on the hosts of limit, else all); return (exit status, wall seconds).
    Output goes to logfile."""
    argv = ["ansible-playbook", "-i", str(inventory), str(path)]
    if limit:
        argv += ["-l", limit]
    if extra_vars:
        argv += ["-e", json.dumps(extra_vars)]
    full_env = dict(
        os.environ,
        ANSIBLE_FORKS=str(forks),
        ANSIBLE_PIPELINING="true",
        ANSIBLE_CONNECTION_PLUGINS=str(CONNECTION_PLUGINS),
        **(env or {}),
    )
    # The collection under test: set-up's DDTREE_COLLECTIONS_PATH, else ansible.cfg's path.
    if os.environ.get("DDTREE_COLLECTIONS_PATH"):
        full_env.setdefault("ANSIBLE_COLLECTIONS_PATH", os.environ["DDTREE_COLLECTIONS_PATH"])
    t0 = time.monotonic()
    with open(logfile, "w") as out:
        rc = subprocess.run(argv, cwd=ROOT, env=full_env, stdout=out, stderr=subprocess.STDOUT, check=False).returncode
    wall = time.monotonic() - t0
    if rc not in expect:
        raise SystemExit(f"{path.name} exited {rc} (expected {expect}); see {logfile}")
    return rc, wall


def deploy(inventory, workdir, tag, **kw):
    """Run playbooks/deploy_ddtree.yml into its own report directory; return (rc, wall, reports)."""
    reports = workdir / "reports"
    env = {"DDTREE_DEPLOY_REPORT_DIR": str(reports), "DDTREE_DEPLOY_RUN_ID": tag}
    rc, wall = playbook(inventory, ROOT / "playbooks/deploy_ddtree.yml", workdir / f"{tag}.log", env=env, **kw)
    summary = json.loads((reports / tag / "summary.json").read_text())
    return rc, wall, summary


def service_start_seconds(container, service="sglang-qwen", port=30000, timeout=120):
    """Wall time of `systemctl restart` until /health answers 200, measured inside the host."""
    script = (
        "import subprocess, time, urllib.request\n"
        "t0 = time.monotonic()\n"
        f"subprocess.run(['systemctl', 'restart', '{service}.service'], check=True)\n"
        f"while time.monotonic() - t0 < {timeout}:\n"
        "    try:\n"
        f"        if urllib.request.urlopen('http://127.0.0.1:{port}/health', timeout=2).status == 200:\n"
        "            break\n"
        "    except Exception:\n"
        "        pass\n"
        "    time.sleep(0.1)\n"
        "print(round(time.monotonic() - t0, 3))\n"
    )
    out = run(["podman", "exec", container, "/usr/bin/python3", "-c", script], capture_output=True).stdout
    return float(out.strip())
