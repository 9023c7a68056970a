# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Describe a value for a user, in an error message: "a list ([1, 2])", "a number (42)", "omit".

ansible-core 2.19 hands filters lazy containers (``_AnsibleLazyTemplateList``), tagged scalars
(``_AnsibleTaggedInt``, ``_AnsibleTaggedStr``) and omit as ``_OmitType``; ``type(value).__name__``
and ``repr(value)`` show those names, which say nothing to someone writing YAML. Every error
of the collection's filters and modules names a value's type with ``type_name`` or ``describe``:
one way to do it. Standard library only (module_utils run on managed hosts too).
"""

from __future__ import absolute_import, division, print_function

import datetime
import json
from collections.abc import Mapping

# How omit reaches a plugin: an _OmitType object (ansible-core 2.19+), or before 2.19 a string
# that starts with this placeholder (the omit variable's value).
_OMIT_TYPE_NAME = "_OmitType"
_OMIT_PLACEHOLDER = "__omit_place_holder__"


def null(value):
    """A role variable's value as a filter takes it, null where it is ``''``: before ansible-core 2.19 a template whose
    value is null renders as ``''`` (a role variable written "{{ x }}" with x null, a mapping of such), 2.19 keeps
    it null. The collection's filters read the arguments a role variable may leave null through this, where they
    enter Python, so nothing behind them tells the two apart; none of those arguments means anything by ``''``."""
    return None if isinstance(value, str) and value == "" else value


def is_omit(value):
    return type(value).__name__ == _OMIT_TYPE_NAME or (isinstance(value, str) and value.startswith(_OMIT_PLACEHOLDER))


def type_name(value):
    """The kind of ``value`` as a user writes it: a string, a number, true/false, null, a list,
    a mapping, omit, ...; never a Python or Ansible class name."""
    if value is None:
        return "null"
    if is_omit(value):
        return "omit"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (bytes, bytearray)):
        return "bytes"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, (set, frozenset)):
        return "a set"
    if isinstance(value, (datetime.date, datetime.datetime)):
        return "a date"
    if "Undefined" in type(value).__name__:
        return "an undefined variable"
    return "a value of an unsupported kind"


def _plain(value):
    """``value`` as plain Python data (lazy containers and tagged scalars unwrapped)."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k) if not isinstance(k, (int, float, bool)) else k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_plain(v) for v in value]
    return str(value)


def show(value, limit=120):
    """``value`` as a user would write it (JSON: null, true, "text", [1, 2]), cut to ``limit``."""
    if is_omit(value):
        return "omit"
    if isinstance(value, (bytes, bytearray)):
        text = repr(bytes(value))
        return text if len(text) <= limit else text[: limit - 3] + "..."
    try:
        text = json.dumps(_plain(value), ensure_ascii=False, sort_keys=False, default=str)
    except (TypeError, ValueError):
        text = str(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def describe(value, limit=120):
    """Kind and value for an error message: "a list ([1, 2])", "a number (42)", "null", "omit"."""
    kind = type_name(value)
    if kind in ("null", "omit", "an undefined variable"):
        return kind
    return f"{kind} ({show(value, limit)})"
