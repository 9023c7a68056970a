# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one harness of the module tests: run a module's main() in-process, return its result.

AnsibleModule.exit_json and fail_json end the process; here they raise, so a test gets the
result dict the controller would get. conftest.py installs the patch for every module test.
"""

import contextlib
import json

import pytest
from ansible.module_utils import basic

try:
    from ansible.module_utils.testing import patch_module_args
except ImportError:  # ansible-core < 2.19 (the matrix): no testing helper; modules read _ANSIBLE_ARGS

    @contextlib.contextmanager
    def patch_module_args(args=None):
        """Give AnsibleModule ``args`` the way ansible-core 2.16-2.18 read their input."""
        saved = basic._ANSIBLE_ARGS
        basic._ANSIBLE_ARGS = json.dumps({"ANSIBLE_MODULE_ARGS": args or {}}).encode()
        try:
            yield
        finally:
            basic._ANSIBLE_ARGS = saved


class ExitJson(Exception):
    """The module exited with exit_json; args[0] is its result."""


class FailJson(Exception):
    """The module exited with fail_json; args[0] is its result, msg included."""


def _exit_json(self, **kwargs):
    raise ExitJson(kwargs)


def _fail_json(self, msg, **kwargs):
    kwargs["msg"] = msg
    raise FailJson(kwargs)


def patch_ansible_module(monkeypatch):
    """Make exit_json/fail_json raise and collect warn() calls; returns the warnings list."""
    warnings = []
    monkeypatch.setattr(basic.AnsibleModule, "exit_json", _exit_json)
    monkeypatch.setattr(basic.AnsibleModule, "fail_json", _fail_json)
    monkeypatch.setattr(basic.AnsibleModule, "warn", lambda self, text: warnings.append(text))
    return warnings


def run_main(main, args, check_mode=False):
    """Run ``main()`` with ``args`` as the module's parameters; returns ``(failed, result)``."""
    if check_mode:
        args = dict(args, _ansible_check_mode=True)
    with patch_module_args(args):
        with pytest.raises((ExitJson, FailJson)) as caught:
            main()
    return caught.type is FailJson, caught.value.args[0]
