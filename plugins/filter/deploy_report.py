# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, annotations, division, print_function

DOCUMENTATION = r"""
name: deploy_report
short_description: The host report of a ddtree_deploy run, from its record, probes and gate
version_added: 0.2.0
author: ddtree.sglang developers (@ddtree)
description:
  - Builds the data of C(<host>.json) (and of the Markdown report, the run summary and C(set_stats)) from the
    run's record (M(ddtree.sglang.deploy_record)), its settings, the probes of the new and the restored
    service, both sides of the gain gate and its verdict. The logic is in
    C(plugins/module_utils/_deploy_record.py), where it is unit-tested.
options:
  _input:
    description: The run's record (C(ddtree_deploy_record)).
    type: dict
    required: true
  run:
    description:
      - The run's settings - host, service, profile, profile_variants, check_mode, gpu_class, gpu_count, promote,
        previous_algorithm, min_gain, gate_prompts (ids), gate_repeats, equivalence_tokens, gate_without_baseline,
        bake_s, bake_interval, bake_inconclusive, snapshot (the store or null), journal (where the journal is
        saved), journal_saved (that path when one was saved, else null).
    type: dict
    required: true
  probes:
    description: The probes by purpose (C(new), C(restored)), each C({results, not_tried, failed_api}).
    type: dict
  baseline:
    description: The gate's summary of the service before the switch.
    type: dict
  gate_new:
    description: The gate's summary of the new service.
    type: dict
  verdict:
    description: P(ddtree.sglang.sglang_gate_verdict#filter)'s verdict.
    type: dict
"""

EXAMPLES = r"""
- name: Report | Gather
  ansible.builtin.set_fact:
    report: "{{ ddtree_deploy_record | ddtree.sglang.deploy_report(run={'host': inventory_hostname}) }}"
"""

RETURN = r"""
_value:
  description: The host report (docs/deploy.md lists its keys); C(outcome), C(failed_step), C(cause), C(fix),
    C(downtime_s) and C(downtime) derive from the record.
  type: dict
  sample: {host: ct129, outcome: rolled_back, failed_step: probe, downtime_s: 21.3}
"""

from ansible.errors import AnsibleFilterError  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils import _deploy_record, _run_record  # noqa: E402


def deploy_report(record, run, probes=None, baseline=None, gate_new=None, verdict=None, bake=None, bake_baseline=None):
    """The host report's data."""
    for name, value in (
        ("run", run),
        ("probes", probes),
        ("baseline", baseline),
        ("verdict", verdict),
        ("bake", bake),
        ("bake_baseline", bake_baseline),
    ):
        if value is not None and not isinstance(value, dict):
            raise AnsibleFilterError(f"deploy_report: {name} must be a mapping")
    try:
        if (record or {}).get("kind", "deploy") != "deploy":
            # rollback.yml's and promote.yml's records: their own report (_run_record.report).
            return _run_record.report(record, run)
        return _deploy_record.report(
            record or {},
            run,
            probes=probes,
            baseline=baseline,
            gate_new=gate_new,
            verdict=verdict,
            bake=bake,
            bake_baseline=bake_baseline,
        )
    except _deploy_record.DeployRecordError as exc:
        raise AnsibleFilterError(f"deploy_report: {exc}") from None


class FilterModule:
    """The deploy report."""

    def filters(self):
        return {"deploy_report": deploy_report}
