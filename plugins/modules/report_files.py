#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

DOCUMENTATION = r"""
module: report_files
short_description: Render templates into report files on the controller, in one task
version_added: 0.2.0
author: ddtree.sglang developers (@ddtree)
description:
  - Renders each template of O(files) with every variable of the task (as the template lookup does, from the
    role's C(templates/)) and writes it to O(dir) on the controller, atomically (a temporary file renamed into
    place), with O(mode) and O(group).
  - The role ddtree.sglang.ddtree_deploy writes its host report, run summary and a tune's records with it, in one
    task and no module run (C(ansible.builtin.template) delegated to localhost ran two modules per file).
  - Runs on the controller (an action plugin); nothing on the host is read or changed. It writes in check mode
    too (a check-mode run reports what it checked).
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.flow
attributes:
  action:
    support: full
  async:
    support: none
  bypass_host_loop:
    support: none
  check_mode:
    support: full
  diff_mode:
    support: none
  platform:
    platforms: all
options:
  dir:
    description: The directory on the controller the files go to; made (with O(mode) plus search bits) if missing.
    type: path
    required: true
  files:
    description:
      - The files to write, in order, each a mapping with C(src) (the template, found as the template lookup
        finds it, in the role's C(templates/)) and C(dest) (the file's name in O(dir)).
      - The template sees the whole mapping as C(item), as a loop of C(ansible.builtin.template) over O(files)
        did (other keys carry what it renders, e.g. a tune's record).
    type: list
    elements: dict
    required: true
  mode:
    description: The files' permission bits (octal, as text or a number).
    type: raw
    default: "0600"
  group:
    description: The files' group (by name); empty keeps the controller user's.
    type: str
    default: ""
"""

EXAMPLES = r"""
- name: Report | Write the host report on the controller
  ddtree.sglang.report_files:
    dir: /var/log/ddtree/20261207T120000Z
    files:
      - {src: host_report.json.j2, dest: ct129.json}
      - {src: host_report.md.j2, dest: ct129.md}
    mode: "0640"
    group: ops
"""

RETURN = r"""
written:
  description: The paths written, in the order of O(files).
  returned: success
  type: list
  elements: str
  sample: [/var/log/ddtree/20261207T120000Z/ct129.json]
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402


def main():
    module = AnsibleModule(
        argument_spec=dict(
            dir=dict(type="path", required=True),
            files=dict(type="list", elements="dict", required=True),
            mode=dict(type="raw", default="0600"),
            group=dict(type="str", default=""),
        ),
        supports_check_mode=True,
    )
    module.fail_json(msg="ddtree.sglang.report_files runs on the controller through its action plugin")


if __name__ == "__main__":
    main()
