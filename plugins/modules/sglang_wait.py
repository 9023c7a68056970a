#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

DOCUMENTATION = r"""
---
module: sglang_wait
short_description: Wait for an SGLang systemd unit to serve, or fail fast with the journal's cause
version_added: 0.1.0
description:
  - Watches one systemd unit running an SGLang server and its HTTP endpoint until the server is
    ready, the unit dies, or O(timeout) passes.
  - Each poll reads C(systemctl show) for the unit (ActiveState, SubState, Result, ExecMainStatus,
    NRestarts, InvocationID, timestamps) and asks the server's C(/health) endpoint what it answers
    (port not bound yet, 503 while loading, ready).
  - When the unit is failed, inactive, waiting for an automatic restart, or was restarted by systemd
    since the watch began, the module stops at once, reads the journal of the invocation that died and
    matches it against a table of known SGLang failures (not enough memory for the KV pool, CUDA out of
    memory, address already in use, missing Python modules, CUDA kernels not built for the GPU, a
    DDTree/DFlash hidden-size mismatch, missing model files). The result names the cause and the fix
    and quotes the last journal lines, instead of waiting out the timeout.
  - Journal lines are returned with secrets redacted, as the P(ddtree.sglang.sglang_redact#filter) filter does
    it. SGLang logs C(api_key) in clear in its C(server_args) line at start; C(--api-key) options,
    C(Authorization) headers and the value of O(api_key) are hidden too.
  - The action plugin of the same name runs the module repeatedly, one window of at most O(window)
    seconds per run, and prints a progress line after each window (elapsed seconds and what the
    server answers), so a model that takes minutes to load never looks like a hang.
author:
  - ddtree.sglang developers (@ddtree)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.flow
attributes:
  check_mode:
    support: full
    details: The module only reads unit state, the journal and the HTTP endpoint.
  diff_mode:
    support: none
  action:
    support: full
    details: The action plugin loops the module and prints progress while it waits.
  async:
    support: none
  bypass_host_loop:
    support: none
  platform:
    platforms: posix
    details: Needs systemd (C(systemctl), C(journalctl)) on the managed host.
options:
  name:
    description:
      - The systemd unit running the server, with or without the C(.service) suffix.
    type: str
    required: true
    aliases: [service]
  url:
    description:
      - Base URL of the server as seen from the managed host.
    type: str
    default: http://127.0.0.1:30000
  api_key:
    description:
      - The server's API key, sent as an C(Authorization) Bearer header when set.
    type: str
  timeout:
    description:
      - Seconds to wait in total for the server to become ready (used by the action plugin).
      - When the unit dies earlier, the task fails as soon as that is seen, not at the timeout.
    type: float
    default: 900
  window:
    description:
      - Longest time one run of the module polls before it returns to the action plugin, which
        prints a progress line and runs it again. Smaller windows mean more frequent progress lines.
    type: float
    default: 10
  interval:
    description:
      - Seconds between two polls inside a window. This bounds how late a crash is seen.
    type: float
    default: 0.5
  request_timeout:
    description:
      - Timeout of one HTTP readiness request, in seconds, on the wall clock (connecting, the status line,
        headers and body together), so a server that trickles its answer cannot stretch a poll.
    type: float
    default: 5
  invocation_id:
    description:
      - The unit invocation (systemd InvocationID) being watched, usually the one started by the restart
        just before this task. When the unit runs a different invocation, systemd restarted it after a crash.
      - The action plugin fills it from the first poll when it is not given.
    type: str
  restarts_baseline:
    description:
      - The unit's NRestarts when the watch began. A higher NRestarts means systemd restarted a crashed
        server (NRestarts is not reset by a manual restart). Filled from the first poll when not given.
    type: int
  journal_lines:
    description:
      - How many journal lines of the failed invocation are read and returned.
    type: int
    default: 40
  collect_journal:
    description:
      - Return the watched invocation's last journal lines (RV(journal_tail)) even when the unit did not
        fail. The action plugin sets it on the last window, so a timeout report quotes the journal too.
    type: bool
    default: false
notes:
  - Readiness is SGLang's C(/health) answering 200; C(/v1/models) answers before the model is loaded and
    proves nothing. Whether generation works is the job of P(ddtree.sglang.llm_probe#module).
seealso:
  - module: ddtree.sglang.llm_probe
  - module: ansible.builtin.systemd_service
"""

EXAMPLES = r"""
- name: Restart the server
  ansible.builtin.systemd_service:
    name: sglang-qwen.service
    state: restarted
  register: restarted

- name: Wait until it serves; fail fast with the cause when it dies
  ddtree.sglang.sglang_wait:
    name: sglang-qwen.service
    url: http://127.0.0.1:30000
    timeout: 1200
    invocation_id: "{{ restarted.status.InvocationID }}"
    restarts_baseline: "{{ restarted.status.NRestarts | int }}"
  register: waited

- name: Wait with the API key the server requires
  ddtree.sglang.sglang_wait:
    name: sglang-qwen
    api_key: "{{ vault_sglang_api_key }}"
    timeout: 600
"""

RETURN = r"""
state:
  description:
    - C(ready) (C(/health) answered 200), C(starting) (503 while loading), C(loading) (the process runs
      but the port is not bound yet), C(unhealthy) (another HTTP answer), or C(failed) (the unit died).
  returned: always
  type: str
  sample: ready
http:
  description: What the server answered to the last readiness request.
  returned: always
  type: str
  sample: "503 starting"
elapsed:
  description: Seconds this run of the module (or, from the action plugin, the whole wait) took.
  returned: always
  type: float
  sample: 41.5
unit:
  description: The unit's state from C(systemctl show) at the last poll.
  returned: always
  type: dict
  sample:
    active_state: activating
    sub_state: auto-restart
    result: exit-code
    exec_main_status: 1
    n_restarts: 0
    invocation_id: 0d6c1e1c0d3c4a8e9b0f6a7c9e2d1f00
    active_enter_timestamp: Wed 2026-12-02 12:00:01 UTC
    exec_main_start_timestamp: Wed 2026-12-02 12:00:01 UTC
    exec_main_exit_timestamp: Wed 2026-12-02 12:00:07 UTC
    exec_main_exit_monotonic: 595.590662
    load_state: loaded
invocation_id:
  description: The invocation watched (the one whose journal was read on failure).
  returned: always
  type: str
  sample: 0d6c1e1c0d3c4a8e9b0f6a7c9e2d1f00
restarts_baseline:
  description: NRestarts when the watch began.
  returned: always
  type: int
  sample: 0
cause:
  description: Why the unit died, from the journal cause table (plugins/module_utils/_journal_causes.py).
  returned: when state is failed
  type: dict
  contains:
    id:
      description: Cause id (C(mem_fraction_too_low), C(cuda_oom), C(address_in_use), C(import_error),
        C(no_kernel_image), C(hidden_size_mismatch), C(model_not_found), C(no_gpu), C(unit_not_found),
        C(unknown)).
      type: str
    cause:
      description: What went wrong.
      type: str
    fix:
      description: What to change, naming the SGLang option or role variable.
      type: str
    line:
      description: The journal line that matched, or null.
      type: str
    journal_tail:
      description: The last journal lines of the failed invocation.
      type: list
      elements: str
  sample:
    id: mem_fraction_too_low
    cause: SGLang found no GPU memory left for the KV cache pool after loading the weights.
    fix: Raise mem_fraction_static (e.g. the 'balanced' variant sets 0.85).
    line: "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."
    journal_tail: ["2026-12-02T12:00:07+0000 ct129 python3[812]: RuntimeError: Not enough memory. ..."]
journal_tail:
  description: The last journal lines of the watched invocation.
  returned: when O(collect_journal) is true and the unit did not fail
  type: list
  elements: str
  sample: ["2026-12-02T12:00:03+0000 ct129 python3[812]: [2026-12-02 12:00:03] Load weight begin. avail mem=46.82 GB"]
seconds_since_exit:
  description:
    - Seconds between the server process exiting (systemd's ExecMainExitTimestampMonotonic) and the module
      naming the cause. The fail-fast latency.
  returned: when state is failed and systemd recorded the exit
  type: float
  sample: 0.7
"""

import time  # noqa: E402
import traceback  # noqa: E402

from ansible.module_utils.basic import AnsibleModule, missing_required_lib  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._journal_causes import match_cause  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._redact import redact_lines  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._systemd import (  # noqa: E402
    WAIT_PROPERTIES,
    parse_show,
    show,
    unit_name,
)

try:
    from ansible_collections.ddtree.sglang.plugins.module_utils import _readiness
except ImportError:  # requests (through _http) may be missing on the managed host
    _readiness = None
    READINESS_IMPORT_ERROR = traceback.format_exc()
else:
    READINESS_IMPORT_ERROR = None

# Reading the journal right after the process exits can race journald's flush of the
# process's last stdout lines: read again a few times before settling on "unknown".
JOURNAL_SETTLE_READS = 4
JOURNAL_SETTLE_DELAY = 0.5


def death_reason(unit, invocation_id, restarts_baseline):
    """Return why the unit counts as dead (a short phrase), or None while it may still come up."""
    if unit["load_state"] == "not-found":
        return "the unit does not exist"
    if unit["sub_state"] == "auto-restart":
        return "the server exited ({}, status {}) and systemd is about to restart it".format(
            unit["result"],
            unit["exec_main_status"],
        )
    if unit["active_state"] == "failed":
        return "the unit failed ({}, status {})".format(unit["result"], unit["exec_main_status"])
    if unit["active_state"] in ("inactive", "deactivating"):
        return "the unit is {} ({}, status {})".format(unit["active_state"], unit["result"], unit["exec_main_status"])
    if restarts_baseline is not None and unit["n_restarts"] > restarts_baseline:
        return f"systemd restarted the server {unit['n_restarts'] - restarts_baseline} time(s) since the watch began"
    if invocation_id and unit["invocation_id"] and unit["invocation_id"] != invocation_id:
        return "the unit runs a new invocation: the watched one ended"
    return None


class SglangWaiter:
    """One bounded poll window over a unit and its server's readiness endpoint."""

    def __init__(self, module):
        self.module = module
        self.params = module.params
        self.unit_name = unit_name(self.params["name"])
        self.systemctl = module.get_bin_path("systemctl", required=True)
        self.journalctl = module.get_bin_path("journalctl", required=True)

    def unit_state(self):
        return parse_show(show(self.module, self.systemctl, self.unit_name, WAIT_PROPERTIES))

    def journal(self, invocation_id):
        """Journal lines of one invocation: the server's own output and systemd's messages about it."""
        lines = self.params["journal_lines"]
        if invocation_id:
            # _SYSTEMD_INVOCATION_ID tags the process's output, INVOCATION_ID systemd's lines about it.
            match = ["_SYSTEMD_INVOCATION_ID=" + invocation_id, "+", "INVOCATION_ID=" + invocation_id]
        else:
            match = ["--unit", self.unit_name]
        cmd = [self.journalctl, "--no-pager", "--quiet", "--output", "short-iso", "--lines", str(lines)] + match
        rc, out, err = self.module.run_command(cmd)
        if rc != 0:
            return ["(journalctl failed: %s)" % (err.strip() or out.strip())]
        # SGLang logs its api_key in clear at start (module_utils/_redact.py): no line leaves
        # this module, for the play's output or a report, with a secret in it.
        secrets = [self.params["api_key"]] if self.params["api_key"] else []
        return redact_lines([line for line in out.splitlines() if line.strip()], secrets)

    def http_state(self):
        """Ask the server whether it is ready: returns (state, what it answered)."""
        poll = _readiness.poll(
            self.params["url"],
            api_key=self.params["api_key"],
            timeout=self.params["request_timeout"],
        )
        # "refused" while SGLang loads weights: it binds its port only once the model is loaded.
        return ("loading" if poll.state == "refused" else poll.state), poll.detail

    def diagnose(self, unit, invocation_id):
        """Name the cause of a death from the journal of the invocation that died."""
        if unit["load_state"] == "not-found":
            return {
                "id": "unit_not_found",
                "cause": f"systemd has no unit {self.unit_name}.",
                "fix": "Run the ddtree.sglang.sglang role (it installs the unit) or fix sglang_service_name.",
                "line": None,
                "journal_tail": [],
            }
        # A unit that died and is waiting to restart (or failed) still carries the dead invocation's
        # id; after systemd restarted it, the dead one is the invocation the watch began with.
        if unit["sub_state"] == "auto-restart" or unit["active_state"] in ("failed", "inactive", "deactivating"):
            dead = unit["invocation_id"] or invocation_id
        else:
            dead = invocation_id or unit["invocation_id"]
        found = None
        for attempt in range(JOURNAL_SETTLE_READS):
            found = match_cause(self.journal(dead), tail=self.params["journal_lines"])
            if found["id"] != "unknown":
                break
            if attempt < JOURNAL_SETTLE_READS - 1:
                time.sleep(JOURNAL_SETTLE_DELAY)
        return found

    def run(self):
        params = self.params
        start = time.monotonic()
        window = max(0.0, min(params["window"], params["timeout"]))
        invocation_id = params["invocation_id"]
        baseline = params["restarts_baseline"]
        while True:
            unit = self.unit_state()
            if not invocation_id and unit["invocation_id"] and unit["sub_state"] != "auto-restart":
                invocation_id = unit["invocation_id"]
            if baseline is None:
                baseline = unit["n_restarts"]
            result = {
                "changed": False,
                "unit": unit,
                "invocation_id": invocation_id or unit["invocation_id"],
                "restarts_baseline": baseline,
            }
            reason = death_reason(unit, invocation_id, baseline)
            if reason:
                cause = self.diagnose(unit, invocation_id)
                result.update(state="failed", http="not asked: " + reason, cause=cause)
                exited = unit["exec_main_exit_monotonic"]
                if exited is not None:
                    result["seconds_since_exit"] = round(max(0.0, time.monotonic() - exited), 3)
                result["elapsed"] = round(time.monotonic() - start, 3)
                self.module.fail_json(
                    msg="{}: {}.{} Cause: {} Fix: {}".format(
                        self.unit_name,
                        reason,
                        " The server said: " + cause["line"].strip() if cause.get("line") else "",
                        cause["cause"],
                        cause["fix"],
                    ),
                    **result,
                )
            state, detail = self.http_state()
            result.update(state=state, http=detail, elapsed=round(time.monotonic() - start, 3))
            if state == "ready" or time.monotonic() - start + params["interval"] > window:
                if params["collect_journal"]:
                    result["journal_tail"] = self.journal(result["invocation_id"])
                return result
            time.sleep(params["interval"])


def main():
    module = AnsibleModule(
        argument_spec=dict(
            name=dict(type="str", required=True, aliases=["service"]),
            url=dict(type="str", default="http://127.0.0.1:30000"),
            api_key=dict(type="str", no_log=True),
            timeout=dict(type="float", default=900),
            window=dict(type="float", default=10),
            interval=dict(type="float", default=0.5),
            request_timeout=dict(type="float", default=5),
            invocation_id=dict(type="str"),
            restarts_baseline=dict(type="int"),
            journal_lines=dict(type="int", default=40),
            collect_journal=dict(type="bool", default=False),
        ),
        supports_check_mode=True,
    )
    # _readiness imports without requests (ansible-test's import check): ask it, or poll()
    # would fail later with a bare ImportError instead of this message.
    if _readiness is None or not _readiness.HAS_REQUESTS:
        module.fail_json(
            msg=missing_required_lib("requests"),
            exception=READINESS_IMPORT_ERROR or _readiness.REQUESTS_IMPORT_ERROR,
        )
    for option in ("window", "interval", "request_timeout", "timeout"):
        if module.params[option] <= 0:
            module.fail_json(msg=f"{option} must be a positive number of seconds, got {module.params[option]}")
    module.exit_json(**SglangWaiter(module).run())


if __name__ == "__main__":
    main()
