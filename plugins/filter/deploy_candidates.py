# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, annotations, division, print_function

DOCUMENTATION = r"""
name: deploy_candidates
short_description: The candidates a ddtree_deploy run tries, checked and expanded, with what is wrong
version_added: 0.4.0
author: ddtree.sglang developers (@ddtree)
description:
  - Expands C(ddtree_deploy_candidates) (a list of C({profile, variants, extra_args}), a C(name) optional), a named
    list (C(ddtree_deploy_candidate_list), from the role's C(vars/candidate_lists.yml)), or, when both are unset,
    one candidate from C(ddtree_deploy_profile) and C(ddtree_deploy_profile_variants).
  - Checks each against the sglang role's profile and variant tables; the messages name the candidate, the
    problem and the fix. The logic is C(plugins/module_utils/_deploy_candidates.py)'s.
  - A candidate that asks for adaptive speculation (the C(adaptive) variant, C(speculative_adaptive)) is judged by the
    pinned release's own rules (SGLang 0.5.23's C(adaptive_unsupported_reason()) and start-up steps check, kept in
    C(plugins/module_utils/_sglang_adaptive_pinned.py) and tested against its wheel). One the release would not run
    adaptive (an adaptive DDTREE unit) or not start is an error quoting the release's reason and where it is.
options:
  _input:
    description: C(ddtree_deploy_candidates), or null for the default.
    type: raw
    required: true
  profile:
    description: C(ddtree_deploy_profile).
    type: str
  variants:
    description: C(ddtree_deploy_profile_variants).
    type: raw
  named:
    description: C(ddtree_deploy_candidate_list), a name of O(lists).
    type: str
  lists:
    description: The named candidate lists.
    type: dict
  profiles:
    description: The sglang role's profile table (its keys are the profiles).
    type: raw
  variant_table:
    description: The sglang role's variant table.
    type: raw
  mode:
    description: C(ddtree_deploy_mode), C(deploy) or C(tune).
    type: str
  min_gain:
    description: C(ddtree_deploy_min_gain); a tune needs the gain gate's figures.
    type: raw
  fallback:
    description: C(ddtree_deploy_fallback_profile), which must be a profile of O(profiles) too.
    type: str
  extra_args:
    description: C(sglang_extra_args), the options under every candidate's own C(extra_args) (for the adaptive check).
    type: dict
"""

EXAMPLES = r"""
- name: Refuse bad candidates before the host changes
  vars:
    checked: >-
      {{ ddtree_deploy_candidates | ddtree.sglang.deploy_candidates(profile='ddtree', profiles=__sglang_profiles) }}
  ansible.builtin.assert:
    that: checked.errors | length == 0
    fail_msg: "{{ checked.errors | join(' ') }}"
"""

RETURN = r"""
_value:
  description: C(candidates) (each C(index), C(of), C(name), C(profile), C(variants), C(extra_args); empty when there
    are errors), C(errors) (one message per problem) and C(source) (which variable gave them).
  type: dict
  sample: {candidates: [{index: 1, of: 1, name: ddtree, profile: ddtree, variants: [], extra_args: {}}], errors: []}
"""

from ansible_collections.ddtree.sglang.plugins.module_utils import _deploy_candidates  # noqa: E402


def deploy_candidates(
    candidates,
    profile="",
    variants=None,
    named="",
    lists=None,
    profiles=None,
    variant_table=None,
    mode="deploy",
    min_gain=0.0,
    fallback=None,
    extra_args=None,
):
    """The candidates, checked and expanded."""
    return _deploy_candidates.expand(
        candidates,
        profile=profile,
        variants=variants,
        named=named,
        lists=lists,
        profiles=profiles,
        variant_table=variant_table,
        mode=mode,
        min_gain=min_gain,
        fallback=fallback,
        extra_args=extra_args,
    )


class FilterModule:
    """ddtree_deploy's candidates."""

    def filters(self):
        return {"deploy_candidates": deploy_candidates}
