# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, annotations, division, print_function

DOCUMENTATION = r"""
name: sglang_url
short_description: The URL a client on the host uses to reach a server bound to sglang_host and sglang_port
version_added: 0.2.0
author: ddtree.sglang developers (@ddtree)
description:
  - The one place the server's URL is built, for the sglang role's readiness wait and the probes of
    ddtree_deploy alike.
  - A wildcard bind (C(0.0.0.0), C(::), empty) is reached through loopback (C(127.0.0.1), C([::1])); an IPv6
    address is bracketed; a specific address or name is used as given (a server bound to C(10.1.230.172)
    listens nowhere else).
options:
  _input:
    description: The address the server binds (SGLang's C(--host), C(sglang_host)).
    type: str
    required: true
  port:
    description: The server's port (C(sglang_port)).
    type: int
    required: true
  scheme:
    description: C(http) or C(https).
    type: str
    default: http
"""

EXAMPLES = r"""
- name: The probe's URL
  ansible.builtin.debug:
    msg: "{{ sglang_host | ddtree.sglang.sglang_url(sglang_port) }}"
"""

RETURN = r"""
_value:
  description: The URL, without a trailing slash.
  type: str
  sample: http://10.1.230.172:30000
"""

from ansible.errors import AnsibleFilterError  # noqa: E402

WILDCARDS = {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1", "[::]": "::1"}


def sglang_url(host, port, scheme="http"):
    """http://<host>:<port> as a client on the server's host reaches it."""
    if host is None:
        host = ""
    if not isinstance(host, str):
        raise AnsibleFilterError(f"sglang_url: sglang_host must be a string (an address or a name), got {host!r}")
    try:
        port = int(port)
    except (TypeError, ValueError):
        raise AnsibleFilterError(f"sglang_url: sglang_port must be a number, got {port!r}") from None
    if not 0 < port < 65536:
        raise AnsibleFilterError(f"sglang_url: sglang_port must be 1-65535, got {port}")
    if scheme not in ("http", "https"):
        raise AnsibleFilterError(f"sglang_url: scheme must be http or https, got {scheme!r}")
    address = WILDCARDS.get(host.strip(), host.strip().strip("[]"))
    if ":" in address:
        address = f"[{address}]"
    return f"{scheme}://{address}:{port}"


class FilterModule:
    """The server's URL."""

    def filters(self):
        return {"sglang_url": sglang_url}
