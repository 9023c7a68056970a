# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Secrets out of text the collection saves or prints (journals, messages, reports).

The one redaction of the collection: the ``sglang_wait`` module applies it to every journal line
it returns, the ``sglang_redact`` filter to what the roles save (the failed unit's journal in
the report directory). API::

    redact(text, secrets=())        # str -> str
    redact_lines(lines, secrets=()) # list of str -> list of str

What it hides, and why (SGLang 0.5.23, read from the wheel):

- SGLang's start line ``[2026-12-03 09:00:00] server_args={'model_path': ..., 'api_key': 'sk-1',
  'admin_api_key': None, ...}`` (``sglang/srt/entrypoints/engine.py:1185``, also ``:311``;
  ``logger.info(f"server_args={_server_args_for_logging(server_args)}")``): a ``dict`` repr of
  ``ServerArgs.resolved_dict()`` (``engine.py:173-174``), which redacts only the watermark secrets
  (``sampling/watermarking/core.py:25-27``), so ``api_key`` (``arg_groups/fields/serving.py:160``),
  ``admin_api_key`` (``:164``) and ``ssl_keyfile_password`` (``:148``) are printed in clear.
- ``ServerArgs.__repr__`` (``server_args.py:307-312``): ``api_key='sk-1'`` inside ``ServerArgs(...)``,
  as a traceback or an error message may show it; JSON (``"api_key": "sk-1"``, the ``/server_info``
  answer, ``utils/common.py:3584-3590``) and environment assignments (``DDTREE_SGLANG_API_KEY=sk-1``).
- Command lines: ``--api-key sk-1``, ``--api-key=sk-1`` and ``'--api-key', 'sk-1'`` (a list repr);
  the ``launch_command`` SGLang records (``server_args.py:717``) redacts only ``--watermark-config``
  (``sampling/watermarking/core.py:110-134``).
- HTTP: ``Authorization: Bearer sk-1`` (how clients send the key), ``'Authorization': 'Bearer sk-1'``
  (a headers dict), a bare ``Bearer sk-1``.
- Any exact value given in ``secrets`` (the key the role knows), whatever text it is in.

Names are matched case-insensitively by their ending (``api_key``/``apikey``, ``password``,
``secret``, ``watermark_key``, ``watermark_key_b``; flags ``--*api-key``, ``--*password``,
``--*secret``): ServerArgs has no other field with such an ending (``arg_groups/fields/*.py``),
so no number or path a report needs is hidden. ``None``/``null`` and empty values stay as they
are: that a key is not set is no secret and tells an operator something. The mark is
``<redacted>``, the word SGLang's own redaction uses (``sampling/watermarking/core.py:43``).
"""

from __future__ import absolute_import, division, print_function

import re

REDACTED = "<redacted>"

_NAME = r"[A-Za-z0-9_]*(?:api_?key|password|passwd|secret|watermark_key(?:_b)?)"
_FLAG = r"--[A-Za-z0-9-]*(?:api-key|password|secret)"
# A value: quoted (with escapes) or one bare word up to a separator.
_QUOTED = r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\""
_BARE = r"[^\s'\",)}\]]+"

_PATTERNS = (
    # 'api_key': 'x' | "api_key": "x" | api_key='x' | API_KEY=x | api_key: x
    re.compile(
        r"(?i)(?<![A-Za-z0-9_])(?P<head>(?P<q>['\"]?)"
        + _NAME
        + r"(?P=q)\s*[:=]\s*)(?P<value>"
        + _QUOTED
        + "|"
        + _BARE
        + ")"
    ),
    # --api-key x | --api-key=x | '--api-key', 'x'
    re.compile(r"(?i)(?P<head>" + _FLAG + r"(?:=|['\"]?,\s*|\s+))(?P<value>" + _QUOTED + "|" + _BARE + ")"),
    # Authorization: Bearer x | 'Authorization': 'Bearer x' | authorization=x
    re.compile(
        r"(?i)(?P<head>authorization['\"]?\s*[:=]\s*['\"]?(?:(?:bearer|basic|token)\s+)?)(?P<value>[^\s'\",}]+)"
    ),
    # a bare "Bearer x" (curl lines, proxies' logs)
    re.compile(r"(?P<head>\bBearer\s+)(?P<value>[A-Za-z0-9._~+/=-]+)"),
)

_KEEP = ("none", "null", "''", '""', REDACTED.lower(), f"'{REDACTED}'", f'"{REDACTED}"')


def _hide(match):
    value = match.group("value")
    if value.lower() in _KEEP or value.startswith("<redacted"):
        return match.group(0)
    if value[:1] in ("'", '"') and len(value) >= 2:
        value = value[0] + REDACTED + value[-1]
    else:
        value = REDACTED
    return match.group("head") + value


def redact(text, secrets=()):
    """``text`` with every secret it holds replaced by ``<redacted>`` (see the module docstring)."""
    if text is None:
        return text
    if not isinstance(text, str):
        text = str(text)
    # Exact values first, longest first, so a key that contains another is hidden whole.
    for secret in sorted((s for s in secrets or () if s), key=len, reverse=True):
        text = text.replace(str(secret), REDACTED)
    for pattern in _PATTERNS:
        text = pattern.sub(_hide, text)
    return text


def redact_lines(lines, secrets=()):
    """Each line redacted (a list of str)."""
    return [redact(line, secrets) for line in lines]
