# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue #12's bound, through the real ansible-playbook: a server that trickles every answer at
1 byte/s and ``llm_probe`` with ``timeout: 8`` end within 11 s, Ansible's start included.

The 11 s is the issue's bound (8 s of probe plus 3 s for Ansible to start the module and report),
not a speed benchmark; before the fix the same run took 29-38 s. On a loaded machine, where
Ansible's own part alone can take longer, the bound is the same probe failing at once plus 10 s.
Measured figures, with and without pipelining, are in docs/probe.md.
"""

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hang_guard import hang_guard

PLAYBOOK = """
- name: Probe a server that trickles
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Probe with an 8 s budget
      ddtree.sglang.llm_probe:
        base_url: "{{ url }}"
        timeout: 8
"""


# The same module failing at once (nothing listens on port 1): what ansible-playbook itself costs
# for an llm_probe that fails, on this machine, now.
REFUSED = """
- name: Probe a port where nothing listens
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Probe with no wait
      ddtree.sglang.llm_probe:
        base_url: http://127.0.0.1:1
        wait_ready: 0
        timeout: 8
"""


@pytest.mark.wallclock
def test_trickling_server_is_judged_within_11s_of_starting_ansible_playbook(trickle_server, tmp_path, ansible_cli_env):
    server = trickle_server(interval=1.0)
    playbook = tmp_path / "probe.yml"
    playbook.write_text(PLAYBOOK)
    env = dict(
        ansible_cli_env,
        # Ansible's own overhead: pipelining runs the module without the temporary-directory round
        # trips (3 extra shells), which on this loaded 2-core machine cost ~3 s (docs/probe.md).
        ANSIBLE_PIPELINING="1",
    )
    command = [
        str(Path(sys.executable).parent / "ansible-playbook"),
        "-i",
        "localhost,",
        "-c",
        "local",
        "-e",
        f"ansible_python_interpreter={sys.executable}",
        "-e",
        f"url={server.base_url}",
        str(playbook),
    ]
    start = time.monotonic()
    proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=hang_guard(120), check=False)
    took = time.monotonic() - start
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2, out
    marker = "fatal: [localhost]: FAILED! => "
    assert marker in proc.stdout, out
    result = json.loads(proc.stdout[proc.stdout.index(marker) + len(marker) :].split("\n\n")[0].strip())
    assert result["verdict"] == "fail" and result["transport_error"] == "timeout", result
    # The request it was waiting on, and the time spent on it.
    assert result["msg"].startswith(
        f"cannot list models (to pick one; or set model): GET {server.base_url}/v1/models timed out: "
        "no complete answer within 8 s ("
    ), result["msg"]
    if took > 11:
        # On a loaded machine Ansible's own part (start-up, forking the module, reporting a failure)
        # can take seconds beyond the 3 s. Then the bound is what the same module failing at
        # once takes now, plus the 8 s budget and 2 s: a probe that outlives its budget (29-38 s
        # before issue #12's fix) still fails it.
        playbook.write_text(REFUSED)
        start = time.monotonic()
        subprocess.run(command, env=env, capture_output=True, timeout=hang_guard(120), check=False)
        refused = time.monotonic() - start
        if took > refused + 10:
            raise AssertionError(
                f"ansible-playbook took {took:.1f} s against a trickling server (bound: 11 s, or {refused:.1f} s "
                f"for the same probe failing at once + 10 s); the module itself {result['elapsed_s']} s"
            )
    assert result["elapsed_s"] <= 8.5, result["elapsed_s"]
