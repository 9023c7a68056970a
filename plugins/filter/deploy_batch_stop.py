# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, annotations, division, print_function

DOCUMENTATION = r"""
name: deploy_batch_stop
short_description: Why a deploy under the free strategy stops before this batch, or nothing
version_added: 0.2.0
author: ddtree.sglang developers (@ddtree)
description:
  - Under ansible-core's C(free) strategy, which ignores C(max_fail_percentage), C(playbooks/deploy_ddtree.yml)
    judges each batch before the next one starts, at the next batch's first task. Each host notes its batch
    (C(ansible_play_batch)) when its batch starts.
  - Returns why the deploy stops when a batch before this one had more than O(max_fail_percentage) of its hosts
    failed (as linear counts them, so 0 stops at any failed host), else an empty string.
options:
  _input:
    description: The batches noted so far, each a list of host names (one entry per host; duplicates are fine).
    type: list
    elements: list
    required: true
  active:
    description: The play's hosts that have not failed (C(ansible_play_hosts)).
    type: list
    elements: str
    required: true
  current:
    description: This batch (C(ansible_play_batch)); not judged.
    type: list
    elements: str
    required: true
  max_fail_percentage:
    description: The largest share of a batch, in percent, that may fail; null judges nothing.
    type: float
"""

EXAMPLES = r"""
- name: Stop before this batch when a batch before failed over max_fail_percentage
  ansible.builtin.meta: end_play
  when: >-
    ansible_play_hosts_all | map('extract', hostvars, '__ddtree_deploy_batch') | select('defined') | list
    | ddtree.sglang.deploy_batch_stop(ansible_play_hosts, ansible_play_batch, 0) | length > 0
"""

RETURN = r"""
_value:
  description: Why the deploy stops before this batch, or an empty string.
  type: str
  sample: "1 of 2 host(s) of the batch before failed (ct129), over max_fail_percentage 0: ..."
"""

from ansible.errors import AnsibleFilterError  # noqa: E402


def deploy_batch_stop(batches, active, current, max_fail_percentage=None):
    """Why the deploy stops before this batch (the first batch before it over the limit), or ''."""
    if max_fail_percentage in (None, ""):
        return ""
    try:
        limit = float(str(max_fail_percentage).rstrip("%"))
    except ValueError as exc:
        raise AnsibleFilterError(
            f"deploy_batch_stop: max_fail_percentage must be a number, not {max_fail_percentage!r}"
        ) from exc
    if not isinstance(batches, list) or not all(isinstance(batch, list) for batch in batches):
        raise AnsibleFilterError("deploy_batch_stop: the batches must be a list of lists of host names")
    seen = []
    for batch in batches:
        if batch and batch not in seen and sorted(batch) != sorted(current or []):
            seen.append(batch)
    for batch in seen:
        failed = [host for host in batch if host not in (active or [])]
        if len(failed) / len(batch) > limit / 100.0:
            return (
                f"{len(failed)} of {len(batch)} host(s) of a batch before failed ({', '.join(failed)}), over "
                f"max_fail_percentage {limit:g}: this batch and the later ones are not deployed. The failed hosts' "
                "reports say why; the other hosts of that batch ended their own deploy."
            )
    return ""


class FilterModule:
    """A free-strategy deploy's max_fail_percentage, judged between batches."""

    def filters(self):
        return {"deploy_batch_stop": deploy_batch_stop}
