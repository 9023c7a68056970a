# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A few lines a person can follow while scripts/demo runs (not part of the collection).

scripts/demo sends ansible-playbook's full output to a log file and enables this callback beside
the default one. It writes to the file named by DDTREE_PROGRESS_FILE (the demo's terminal):
- one line per play, and one per host each time the deploy role enters a stage (each stage
  begins with a ddtree.sglang.deploy_record event, whose result names the stage: preflight,
  snapshot, install, options, baseline, switch, probe, ...), and "done" or "restored" at the end;
- each failure once per host, when it happens (issue 38: one line per failure). A failure whose words
  were said already is not said again: a nested role's rescue raising it once more, the candidates'
  end naming the last one's cause, the host's final failure message repeating cause and fix (the
  outcome line and the run summary say those). An ignored failure is not the host's: the task that
  judges it fails next, if it matters. A loop names the failed item;
- the one-line outcome each host ends with (tasks named "... | Say how it went") and the probe's
  report ("Probe | Report").
"""

import os
import time

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
name: ddtree_progress
type: aggregate
short_description: progress lines for scripts/demo
description: Writes one line per play, per host and deploy stage, per failure and per outcome to DDTREE_PROGRESS_FILE.
requirements: [DDTREE_PROGRESS_FILE set in the environment]
"""

# Debug tasks whose message is the answer a person waits for.
_SAY_TASKS = ("| Say how it went", "Probe | Report")
# A failure message inside another (or holding it) is the same failure said again, when the shorter has
# this many characters at least: "failed" inside a longer message is no repetition.
_SAME_WORDS = 16


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "ddtree_progress"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super().__init__()
        self._out = self._open(os.environ.get("DDTREE_PROGRESS_FILE"))
        self._stage = {}
        self._said = {}

    @staticmethod
    def _open(path):
        """The progress file, for the run (closed at the stats).

        /dev/fd/N is the caller's open descriptor (the demo's stderr as fd 3): write through a
        duplicate of it, which shares the caller's file offset. Opening the path anew would make a
        second open file with an offset of its own when stderr is a regular file, and the caller's
        next lines would overwrite these (issue 24). Any other path is opened to append.
        """
        if not path:
            return None
        if path.startswith("/dev/fd/") and path[len("/dev/fd/") :].isdigit():
            return os.fdopen(os.dup(int(path[len("/dev/fd/") :])), "a", buffering=1)
        return open(path, "a", buffering=1)  # noqa: SIM115 (open for the run)

    def _line(self, text):
        if self._out:
            self._out.write("[ddtree] {} {}\n".format(time.strftime("%H:%M:%S"), text))

    def v2_playbook_on_play_start(self, play):
        self._line(f"play: {play.get_name().strip()}")

    def v2_runner_on_ok(self, result):
        host = result._host.get_name()
        stage = None
        if result._task.action in ("ddtree.sglang.deploy_record", "deploy_record"):
            event = (result._result.get("event") or {}).get("event")
            verified = ((result._result.get("event") or {}).get("result") or {}).get("verified")
            stage = {"done": "done", "verified": "restored" if verified else None}.get(
                event, result._result.get("stage")
            )
        if stage and self._stage.get(host) != stage:
            self._stage[host] = stage
            self._line(f"{host:<12} {stage}")
        name = result._task.get_name()
        if name.endswith(_SAY_TASKS) and result._result.get("msg"):
            self._line("{:<12} {}".format(host, " ".join(str(result._result["msg"]).split())))

    def _failed(self, host, msg):
        msg = " ".join(str(msg).split())
        seen = self._said.setdefault(host, [])
        # Said already: the same words, or words of a failure said before (a cause inside the host's final
        # message), or a part of one (an item's message after its loop's own).
        repeated = any(
            msg == said or (min(len(msg), len(said)) >= _SAME_WORDS and (said in msg or msg in said)) for said in seen
        )
        seen.append(msg)
        if not repeated:
            self._line(f"{host:<12} FAILED: {msg}")

    def v2_runner_on_failed(self, result, ignore_errors=False):
        if ignore_errors or result._result.get("results"):
            return  # ignored: not the host's failure; a loop: its failed items were named one by one
        self._failed(result._host.get_name(), result._result.get("msg", "failed"))

    def v2_runner_item_on_failed(self, result):
        if result._task.ignore_errors:
            return
        item = result._result.get("item")
        label = item if isinstance(item, (str, int, float)) else ""
        msg = result._result.get("msg", "failed")
        self._failed(result._host.get_name(), f"{label}: {msg}" if label else msg)

    def v2_runner_on_unreachable(self, result):
        self._failed(result._host.get_name(), "UNREACHABLE: {}".format(result._result.get("msg", "")))

    def v2_playbook_on_stats(self, stats):
        if self._out:
            self._out.close()
            self._out = None
