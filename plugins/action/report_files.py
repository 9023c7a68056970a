# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for ddtree.sglang.report_files: render templates into files on the controller, in one task.

A deploy's reports (the host report, the run summary, a tune's records) are the controller's files. Written with
ansible.builtin.template delegated to localhost, each file cost a task loop item and two module runs on the
controller (stat, copy); here they are rendered with the template lookup (the role's templates/, every variable
of the task) and written atomically in the controller's process: no module start (issue 37, item 8).
"""

from __future__ import absolute_import, division, print_function

import grp
import os

from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.text.converters import to_bytes, to_text
from ansible.plugins.action import ActionBase
from ansible.plugins.loader import lookup_loader
from ansible_collections.ddtree.sglang.plugins.module_utils import _files

ARGUMENT_SPEC = {
    "dir": {"type": "path", "required": True},
    # Each {src, dest, ...}: the template sees the whole entry as `item`, as a loop of ansible.builtin.template did.
    "files": {"type": "list", "elements": "dict", "required": True},
    "mode": {"type": "raw", "default": "0600"},
    "group": {"type": "str", "default": ""},
}


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        del tmp
        params = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)[0].validated_parameters
        directory = params["dir"]
        try:
            mode = params["mode"] if isinstance(params["mode"], int) else int(str(params["mode"]), 8)
            gid = grp.getgrnam(params["group"]).gr_gid if params["group"] else None
        except (KeyError, ValueError) as exc:
            raise AnsibleActionFail(f"report_files: bad mode or group: {exc}") from None
        lookup = lookup_loader.get("ansible.builtin.template", loader=self._loader, templar=self._templar)
        written = []
        for item in params["files"]:
            if not isinstance(item.get("src"), str) or not isinstance(item.get("dest"), str):
                raise AnsibleActionFail(f"report_files: each of files needs src and dest (got {sorted(item)})")
            path = os.path.join(directory, item["dest"])
            text = to_text(lookup.run([item["src"]], variables=task_vars, template_vars={"item": item})[0])
            try:
                if not os.path.isdir(directory):
                    # As deploy_record makes it: the files' modes allow (0600 -> 0700, 0640 -> 0750).
                    os.makedirs(directory, mode=mode | (mode & 0o444) >> 2, exist_ok=True)
                    if gid is not None:
                        os.chown(directory, -1, gid)
                _files.atomic_write(path, to_bytes(text), mode, uid=None if gid is None else -1, gid=gid)
            except OSError as exc:
                raise AnsibleActionFail(f"report_files: cannot write {path}: {exc}") from None
            written.append(path)
        # A record of the run, not a change to the host (as the reports were with changed_when false).
        result.update(changed=False, written=written)
        return result
