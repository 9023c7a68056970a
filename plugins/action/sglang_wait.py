# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for ddtree.sglang.sglang_wait: loop the module, print progress, fail fast.

A 27B model takes minutes to load. A single module run would keep the play silent for all
that time, so this plugin runs the module in windows of a few seconds and prints one line
after each (elapsed seconds and what the server answers). The module itself returns at once
when the unit dies, so the task fails within a poll interval of the crash, naming the cause.
"""

from __future__ import absolute_import, division, print_function

import time

from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.text.converters import to_text
from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

display = Display()

MODULE = "ddtree.sglang.sglang_wait"

# What each module state means to an operator watching the play.
STATE_WORDS = {
    "loading": "loading (process up, port not bound yet)",
    "starting": "503 starting (port bound, model loading/warming up)",
    "unhealthy": "unhealthy",
    "ready": "ready",
}


def describe(result):
    """One progress phrase for a module result."""
    state = result.get("state")
    words = STATE_WORDS.get(state, state or "unknown")
    detail = result.get("http")
    if state == "unhealthy" and detail:
        words = f"{words}: {detail}"
    return words


def timeout_cause(timeout, last):
    """The failure reported when the server never became ready but did not die either."""
    return {
        "id": "timeout",
        "cause": f"The server did not become ready within {int(timeout)}s; the unit is still running and the server "
        f"last answered: {describe(last)}.",
        "fix": "If the model needs longer to load, raise sglang_ready_timeout. A server stuck at 'loading' "
        "never bound its port (hung while loading weights or capturing CUDA graphs: read the journal below); "
        "one stuck at '503 starting' never finished warming up.",
        "line": None,
        "journal_tail": last.get("journal_tail", []),
    }


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = True

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        del tmp  # tmp no longer has any effect

        args = dict(self._task.args)
        try:
            timeout = float(args.get("timeout", 900))
            window = float(args.get("window", 10))
        except (TypeError, ValueError) as e:
            raise AnsibleActionFail(f"timeout and window must be numbers of seconds: {to_text(e)}") from None
        if timeout <= 0 or window <= 0:
            raise AnsibleActionFail(f"timeout and window must be positive, got timeout={timeout} window={window}")

        host = task_vars.get("inventory_hostname", "") if task_vars else ""
        unit = to_text(args.get("name") or args.get("service") or "")
        start = time.monotonic()
        last = {}
        while True:
            elapsed = time.monotonic() - start
            remaining = timeout - elapsed
            module_args = dict(args)
            module_args["window"] = max(0.1, min(window, remaining))
            module_args["timeout"] = timeout
            # Ask for the journal on the last window, so a timeout report quotes it too.
            module_args["collect_journal"] = remaining <= window
            if last.get("invocation_id") and not args.get("invocation_id"):
                module_args["invocation_id"] = last["invocation_id"]
            if last.get("restarts_baseline") is not None and args.get("restarts_baseline") is None:
                module_args["restarts_baseline"] = last["restarts_baseline"]
            res = self._execute_module(module_name=MODULE, module_args=module_args, task_vars=task_vars)
            elapsed = time.monotonic() - start

            if res.get("failed") and res.get("state") != "failed":
                # The module itself could not run (bad option, no systemctl): pass its error on as is.
                result.update(res)
                return result
            last = res
            display.display(f"sglang_wait [{host}] {unit}: {elapsed:5.1f}s {describe(res)}")

            if res["state"] == "failed":
                return self._failed(result, res, unit, elapsed)
            if res["state"] == "ready":
                result.update(res)
                result.update(changed=False, elapsed=round(elapsed, 3), msg=f"{unit} is ready after {elapsed:.1f}s")
                return result
            if elapsed >= timeout:
                res["cause"] = timeout_cause(timeout, res)
                res["state"] = "timeout"
                return self._failed(result, res, unit, elapsed)

    def _failed(self, result, res, unit, elapsed):
        cause = res["cause"]
        for line in cause.get("journal_tail", []):
            display.display(f"sglang_wait journal | {line}", color="red")
        latency = res.get("seconds_since_exit")
        when = f" (reported {latency:.1f}s after the process exited)" if latency is not None else ""
        result.update(res)
        # The module's own failure text would shadow this summary in the task's error line.
        result.pop("exception", None)
        # The server's own words first (the journal line the cause was recognised by), then ours.
        said = f" The server said: {cause['line'].strip()}" if cause.get("line") else ""
        result.update(
            failed=True,
            changed=False,
            elapsed=round(elapsed, 3),
            msg=f"{unit} did not come up after {elapsed:.1f}s{when}.{said} Cause: {cause['cause']} Fix: {cause['fix']}",
        )
        return result
