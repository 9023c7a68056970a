# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, annotations, division, print_function

DOCUMENTATION = r"""
name: sglang_args
short_description: Render SGLang server options (ServerArgs field names) as launch_server arguments
version_added: 0.1.0
author: ddtree.sglang developers (@ddtree)
description:
  - Turns a dictionary keyed by SGLang C(ServerArgs) field names (C(mem_fraction_static), C(disable_cuda_graph),
    C(speculative_algorithm), ...) into the command line arguments of C(python -m sglang.launch_server).
  - A key becomes its flag by replacing C(_) with C(-) and prefixing C(--), as SGLang derives its flags from the
    field names (C(tp_size) -> C(--tp-size)).
  - C(true) renders a bare flag (C(--disable-cuda-graph)); C(false) and C(null) omit the option (a later layer of
    the merge uses C(null) to remove an option an earlier layer set); a list renders as one flag followed by its
    items (SGLang's C(nargs='+') options); a dictionary renders as compact JSON with sorted keys (for
    C(json_model_override_args) and similar options); numbers and strings render as they are.
  - Options come out sorted by key, so the same settings always render the same unit file and a re-run changes
    nothing.
  - With O(style=unit) (the default) and O(style=list) every argument is quoted for a systemd C(ExecStart=) line
    as systemd.service(5) and systemd.syntax(7) describe it, so a value with spaces, quotes, backslashes, C($) or
    C(%) reaches SGLang unchanged.
  - A key that is not a ServerArgs field name (dashes, a leading C(--), upper case) is an error naming the field
    name to use.
positional: style
options:
  _input:
    description: SGLang options keyed by ServerArgs field name.
    type: dict
    required: true
  style:
    description:
      - V(unit) returns one string, the quoted arguments separated by spaces, to put after the command of an
        C(ExecStart=) line.
      - V(list) returns one quoted string per option (the flag and its values), for a template that puts one option
        per line (join with C(' \\\n    ')).
      - V(argv) returns the flat list of arguments, unquoted, for an argv (the C(argv) of M(ansible.builtin.command),
        a test).
    type: string
    default: unit
    choices: [unit, list, argv]
"""

EXAMPLES = r"""
- name: Render the options of a unit file
  ansible.builtin.debug:
    msg: "ExecStart=/opt/sglang/venv/bin/python -m sglang.launch_server {{ options | ddtree.sglang.sglang_args }}"
  vars:
    options:
      mem_fraction_static: 0.85
      disable_cuda_graph: true
      enable_metrics: false
      served_model_name: Qwen 27B
      speculative_algorithm: NEXTN
  # => ExecStart=/opt/sglang/venv/bin/python -m sglang.launch_server --disable-cuda-graph
  #    --mem-fraction-static 0.85 --served-model-name "Qwen 27B" --speculative-algorithm NEXTN

- name: One option per line in a unit template
  ansible.builtin.copy:
    dest: /etc/systemd/system/sglang-qwen.service
    content: |
      [Service]
      ExecStart=/opt/sglang/venv/bin/python -m sglang.launch_server \
          {{ options | ddtree.sglang.sglang_args('list') | join(' \\\n    ') }}
    mode: "0644"

- name: Start the server directly with an argv
  ansible.builtin.command:
    argv: "{{ ['python3', '-m', 'sglang.launch_server'] + (options | ddtree.sglang.sglang_args('argv')) }}"
"""

RETURN = r"""
_value:
  description:
    - With O(style=unit), one string of quoted arguments; with O(style=list), one quoted string per option; with
      O(style=argv), the flat unquoted argument list.
  type: raw
  sample: --attention-backend flashinfer --disable-cuda-graph --mem-fraction-static 0.85
"""

import json  # noqa: E402
import math  # noqa: E402
import re  # noqa: E402
from collections.abc import Mapping  # noqa: E402

from ansible.errors import AnsibleFilterError  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._values import describe, is_omit  # noqa: E402

# SGLang's ServerArgs fields are snake_case identifiers; the flag is derived from them.
_FIELD_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
# Characters that mean nothing to systemd's command line parser; a word made only of them (and
# of % and $, which are escaped by doubling) needs no quotes.
_PLAIN_WORD = re.compile(r"^[A-Za-z0-9_@%$+=:,./-]+$")
_C_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def systemd_quote(word, expand_dollar=True):
    """Quote one word for a systemd unit setting that splits words (ExecStart=, Environment=).

    systemd.service(5): in ExecStart= "$" starts a variable substitution and "$$" is a literal
    dollar sign; systemd.unit(5) specifiers: "%" starts a specifier and "%%" is a literal percent
    sign (specifiers are expanded inside quotes too); systemd.syntax(7): a word in double quotes
    may contain spaces, and C-style escapes (\\\\, \\", \\n, \\xNN) are decoded. Environment= does
    no "$" substitution: pass expand_dollar=False there.
    """
    if "\0" in word:
        raise AnsibleFilterError(f"Cannot pass {word!r} through systemd: it contains a NUL character.")
    escaped = word.replace("%", "%%")
    if expand_dollar:
        escaped = escaped.replace("$", "$$")
    if word and _PLAIN_WORD.match(word):
        return escaped
    out = []
    for char in escaped:
        if char in _C_ESCAPES:
            out.append(_C_ESCAPES[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\x{ord(char):02x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def option_flag(key):
    """The launch_server flag of a ServerArgs field name; a clear error for anything else."""
    if not isinstance(key, str):
        raise AnsibleFilterError(
            f"SGLang option names are ServerArgs field names (strings such as 'mem_fraction_static'), got "
            f"{describe(key)}."
        )
    if not _FIELD_NAME.match(key):
        field = key.strip().lstrip("-").replace("-", "_").lower()
        hint = f" Use the ServerArgs field name '{field}'." if _FIELD_NAME.match(field) else ""
        raise AnsibleFilterError(
            f"SGLang option {key!r} is not a ServerArgs field name: options are keyed by the field name "
            f"(snake_case, no leading dashes, as in server_args.py), and the flag is derived from it "
            f"('mem_fraction_static' renders '--mem-fraction-static').{hint}"
        )
    return "--" + key.replace("_", "-")


def _scalar_text(key, value, in_list=False):
    if isinstance(value, bool):
        raise AnsibleFilterError(
            f"SGLang option {key!r}: a true/false inside a list has no command line form; "
            "use true/false as the whole value for a flag."
        )
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise AnsibleFilterError(f"SGLang option {key!r} is {describe(value)}; expected a finite number.")
        return repr(value)
    if isinstance(value, str) and not is_omit(value):
        return str(value)
    if in_list:
        # null is allowed as the whole value (it leaves the option out), not as an item
        raise AnsibleFilterError(
            f"SGLang option {key!r} has a list item that is {describe(value)}; the items of a list must be "
            "strings or numbers."
        )
    raise AnsibleFilterError(
        f"SGLang option {key!r} is {describe(value)}; expected a string, a number, true/false, null (which leaves "
        "the option out), a list of strings or numbers, or a mapping (rendered as JSON)."
    )


def option_words(key, value):
    """The unquoted words one option renders to ([] when the option is omitted)."""
    flag = option_flag(key)
    if value is None or value is False:
        return []
    if value is True:
        return [flag]
    if isinstance(value, Mapping):
        try:
            return [flag, json.dumps(dict(value), sort_keys=True, separators=(",", ":"))]
        except (TypeError, ValueError) as err:
            raise AnsibleFilterError(f"SGLang option {key!r}: cannot render {describe(value)} as JSON: {err}") from None
    if isinstance(value, (list, tuple)):
        if not value:
            raise AnsibleFilterError(
                f"SGLang option {key!r} is an empty list; SGLang's list options need at least one item. "
                "Use null to leave the option out."
            )
        return [flag] + [_scalar_text(key, item, in_list=True) for item in value]
    return [flag, _scalar_text(key, value)]


def validate_options(options, what="SGLang options"):
    """Check a dict of options (keys and values) without rendering; returns it unchanged."""
    if not isinstance(options, Mapping):
        raise AnsibleFilterError(
            f"{what} must be a dict keyed by SGLang ServerArgs field names, got {describe(options)}."
        )
    for key, value in options.items():
        option_words(key, value)
    return options


def sglang_args(options, style="unit"):
    """Render SGLang options as launch_server arguments (see DOCUMENTATION)."""
    validate_options(options)
    if style not in ("unit", "list", "argv"):
        raise AnsibleFilterError(f"sglang_args: style must be 'unit', 'list' or 'argv', got {describe(style)}.")
    rendered = []
    for key in sorted(options):
        words = option_words(key, options[key])
        if not words:
            continue
        if style == "argv":
            rendered.extend(words)
        else:
            rendered.append(" ".join(systemd_quote(word) for word in words))
    return " ".join(rendered) if style == "unit" else rendered


class FilterModule:
    """SGLang option rendering."""

    def filters(self):
        return {"sglang_args": sglang_args}
