# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, annotations, division, print_function

DOCUMENTATION = r"""
name: sglang_server_env
short_description: The environment of an SGLang server, from its GPU class and the host's overrides
version_added: 0.1.0
author: ddtree.sglang developers (@ddtree)
description:
  - Merges the C(env) of a GPU class (C(roles/sglang/vars/gpu_classes.yml), C({value, why}) entries) with the
    host's O(env) (C(sglang_env)); the host wins, and C(null) in O(env) removes a variable the class sets.
  - Values become strings (C(true) becomes C(1), C(false) becomes C(0), as environment switches read them).
  - Variable names must be shell identifiers (C([A-Za-z_][A-Za-z0-9_]*)); anything else is an error.
  - With O(style=unit), returns the C(Environment=) words quoted for systemd (systemd.exec(5)), sorted by name.
options:
  _input:
    description: The GPU class id, a key of O(gpu_classes).
    type: string
    required: true
  gpu_classes:
    description: The class table (C(__sglang_gpu_classes)).
    type: dict
    required: true
  env:
    description: The host's environment overrides (C(sglang_env)).
    type: dict
    default: {}
  style:
    description:
      - V(dict) returns the merged variables.
      - V(unit) returns a list of C("NAME=value") words quoted for an C(Environment=) line, sorted by name.
    type: string
    default: dict
    choices: [dict, unit]
"""

EXAMPLES = r"""
- name: Environment lines of the unit
  ansible.builtin.debug:
    msg: "{{ __sglang_gpu_class | ddtree.sglang.sglang_server_env(gpu_classes=__sglang_gpu_classes, env=sglang_env) }}"
  # ampere_48g with sglang_env {NCCL_P2P_DISABLE: 1} => {CUDA_DEVICE_ORDER: PCI_BUS_ID, NCCL_P2P_DISABLE: "1"}

- name: As a template line each
  ansible.builtin.copy:
    dest: /etc/systemd/system/sglang-qwen.service.d/env.conf
    content: |
      [Service]
      {% for word in __sglang_gpu_class | ddtree.sglang.sglang_server_env(
                       gpu_classes=__sglang_gpu_classes, env=sglang_env, style='unit') %}
      Environment={{ word }}
      {% endfor %}
    mode: "0644"
"""

RETURN = r"""
_value:
  description: With O(style=dict), variable name -> string value; with O(style=unit), a list of quoted words.
  type: raw
  sample:
    CUDA_DEVICE_ORDER: PCI_BUS_ID
"""

import re  # noqa: E402
from collections.abc import Mapping  # noqa: E402

from ansible.errors import AnsibleFilterError  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.filter.sglang_args import systemd_quote  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.filter.sglang_server_options import _pick, table_values  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._values import describe, is_omit  # noqa: E402

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _env_text(name, value):
    if isinstance(value, bool):
        return "1" if value else "0"
    # omit before ansible-core 2.19 is a placeholder string: it would be written into the unit as it is.
    if isinstance(value, (int, float)) or (isinstance(value, str) and not is_omit(value)):
        return str(value)
    raise AnsibleFilterError(
        f"Environment variable {name!r} is {describe(value)}; expected a string or a number "
        "(true/false is written 1/0)."
    )


def sglang_server_env(gpu_class, gpu_classes=None, env=None, style="dict"):
    """Class env < sglang_env, as strings (see DOCUMENTATION)."""
    entry = _pick(
        gpu_classes,
        gpu_class,
        "GPU class",
        "__sglang_gpu_classes",
        "Set sglang_gpu_class in the inventory to one of them, or leave it empty to detect the class.",
    )
    if env is None:
        env = {}
    if not isinstance(env, Mapping):
        raise AnsibleFilterError(f"sglang_env must be a dict of variable name -> value, got {describe(env)}.")
    merged = table_values(entry.get("env"), f"__sglang_gpu_classes.{gpu_class}.env")
    merged.update(env)
    result = {}
    for name, value in merged.items():
        if not isinstance(name, str) or not _ENV_NAME.match(name):
            raise AnsibleFilterError(
                f"Environment variable name {name!r} is not valid: use letters, digits and '_', not starting "
                "with a digit."
            )
        if value is not None:
            result[name] = _env_text(name, value)
    if style == "dict":
        return result
    if style == "unit":
        # Environment= does no $-substitution, so only % (specifiers) and quoting matter.
        return [systemd_quote(f"{name}={result[name]}", expand_dollar=False) for name in sorted(result)]
    raise AnsibleFilterError(f"sglang_server_env: style must be 'dict' or 'unit', got {describe(style)}.")


class FilterModule:
    """Environment of the SGLang unit."""

    def filters(self):
        return {"sglang_server_env": sglang_server_env}
