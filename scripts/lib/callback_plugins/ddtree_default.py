# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Ansible's default screen output, with each failure said once (the clone's stdout callback).

ansible.cfg in the clone selects it (not part of the collection: galaxy.yml's build_ignore
leaves scripts/ out). It is ansible-core's own default callback with two things left out of a
failed task's `fatal:` line, below -vvv:
- `argument_spec_data`, the whole argument spec a role's validate_argument_spec failure carries
  (`-e ddtree_deploy_profile=bogus` printed a 9,140-character line of it after the one-line
  message naming the bad value; `argument_errors` and `msg` stay);
- `msg`, when ansible-core 2.19 has just printed that same message as `[ERROR]: Task failed:
  Action failed: <msg>` with the task's origin: a rolled-back host's message was printed twice.
  The [ERROR] is kept because it is the one with the origin and real line breaks; the `fatal:`
  line still names the host and the rest of the result. An error with a traceback, or whose
  message is not the result's `msg`, is printed as the default callback prints it.
Everything else (options, colours, result_format) is the default callback's.
"""

from ansible.plugins.callback.default import CallbackModule as DefaultCallbackModule

DOCUMENTATION = """
name: ddtree_default
type: stdout
short_description: Ansible's default output, each failure said once, no argument spec dump
description:
  - The default stdout callback, except that below -vvv a failed task's result is printed without
    C(argument_spec_data) and without a C(msg) that the C([ERROR]) line above it already printed.
extends_documentation_fragment:
  - default_callback
  - result_format_callback
requirements:
  - set as stdout_callback in ansible.cfg
"""

# Verbosity from which a failure is printed exactly as the default callback prints it.
_FULL_VERBOSITY = 3


def _events(summary):
    """The events of an ErrorSummary (ansible-core 2.19+), outermost first, following its chain."""
    event = getattr(summary, "event", None)
    while event is not None:
        yield event
        chain = getattr(event, "chain", None)
        event = getattr(chain, "event", None)


def _error_repeats_msg(result, data):
    """Whether the [ERROR] the default callback prints for this result says only data's msg."""
    msg = data.get("msg")
    events = list(_events(getattr(result, "exception", None)))
    if not msg or not events or any(getattr(e, "formatted_traceback", None) for e in events):
        return False
    return events[-1].msg == msg


class CallbackModule(DefaultCallbackModule):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "stdout"
    CALLBACK_NAME = "ddtree_default"

    def _trim(self, result):
        if self._display.verbosity >= _FULL_VERBOSITY:
            return
        # ansible-core 2.19 hands callbacks a CallbackTaskResult (.result); older ones a TaskResult.
        data = result.result if hasattr(result, "result") else result._result
        data.pop("argument_spec_data", None)
        if _error_repeats_msg(result, data):
            data.pop("msg")

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._trim(result)
        super().v2_runner_on_failed(result, ignore_errors)

    def v2_runner_item_on_failed(self, result):
        self._trim(result)
        super().v2_runner_item_on_failed(result)
