#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

DOCUMENTATION = r"""
---
module: sglang_traffic
short_description: The concurrency levels an SGLang unit's own traffic has, from Prometheus
version_added: 0.1.0
description:
  - Reads the unit's running-request distribution over O(window) from Prometheus, C(sglang:num_running_reqs)
    selected by O(prometheus_selector) (summed over the unit's data-parallel ranks at each minute), and returns
    the levels to gate at, 1 and that distribution's p50 and p90, each capped by O(cap) (the unit's
    C(max_running_requests)).
  - The selector must match one unit (one job and instance) that Prometheus has history of; otherwise the
    module fails naming what it matched and the fix.
  - C(ddtree.sglang.ddtree_deploy) runs it when C(ddtree_deploy_prometheus_url) is set and
    C(ddtree_deploy_gate_concurrency) is not, and its report says "your traffic - p50 9, p90 22 running requests
    over 7 d".
author:
  - ddtree.sglang developers (@ddtree)
requirements:
  - requests
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ddtree.sglang.prometheus
attributes:
  check_mode:
    support: full
    details: It only reads Prometheus.
  diff_mode:
    support: none
  platform:
    platforms: posix
options:
  window:
    description:
      - How far back the distribution is read, a Prometheus duration (V(7d), V(36h)).
    type: str
    default: 7d
  cap:
    description:
      - The unit's C(max_running_requests), above which no level is gated (a batch the unit cannot run is a queue).
    type: int
  mix_levels:
    description:
      - The levels the load mix (RV(mix)) is over, e.g. the gate's C(ddtree_deploy_gate_concurrency); default the
        levels the module returns.
    type: list
    elements: int
seealso:
  - module: ddtree.sglang.llm_bench
"""

EXAMPLES = r"""
- name: The levels this host's traffic has had over the last week
  ddtree.sglang.sglang_traffic:
    prometheus_url: https://prom.example.com
    prometheus_bearer_token: "{{ vault_prometheus_token }}"
    prometheus_selector: 'instance="ct129:30000"'
    cap: 64
  register: traffic

- name: Gate at them
  ddtree.sglang.llm_bench:
    base_url: http://127.0.0.1:30000
    concurrency: "{{ traffic.levels }}"
"""

RETURN = r"""
levels:
  description: 1 and the p50 and p90 of the running requests, rounded, capped by O(cap), sorted, each once.
  returned: success
  type: list
  elements: int
  sample: [1, 9, 22]
quantiles:
  description: The p50 and p90 of the unit's running requests over the window, as Prometheus computed them.
  returned: success
  type: dict
  sample: {p50: 9.0, p90: 22.0}
minutes:
  description: Minutes of the window that had a sample (Prometheus' history may be shorter than the window).
  returned: success
  type: int
  sample: 10080
window:
  description: The window, as given.
  returned: always
  type: str
  sample: 7d
mix:
  description:
    - The load mix of the unit's traffic over the levels (O(mix_levels), else RV(levels)) - each level's share of the
      window's busy minutes (at least one running request, summed over its ranks) nearest it, two neighbouring
      levels split at their geometric mean (concurrency on a log scale). A tune chooses by it when
      C(ddtree_deploy_load_mix) is not given (docs/deploy.md, "Tune"). null without a busy minute.
  returned: success
  type: dict
  sample: {"1": 0.1443, "9": 0.5052, "22": 0.3505}
mix_msg:
  description: The mix in words.
  returned: success
  type: str
  sample: "your traffic's busy minutes: 14 % nearest 1, 51 % nearest 9, 35 % nearest 22"
cap:
  description: The cap applied (none when not given).
  returned: always
  type: int
  sample: 64
unit:
  description: The job and instance labels of the unit the selector matched.
  returned: success
  type: dict
  sample: {job: sglang, instance: "ct129:30000"}
queries:
  description: The PromQL queries sent, in order.
  returned: always
  type: list
  elements: str
warnings:
  description: Prometheus' own warnings, as it gave them.
  returned: always
  type: list
  elements: str
msg:
  description: The levels in words, or why they could not be read.
  returned: always
  type: str
  sample: "your traffic: p50 9, p90 22 running requests over 7 d"
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils import _prometheus  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._traffic import TrafficError, read  # noqa: E402

ARGUMENT_SPEC = dict(
    _prometheus.argument_spec(),
    window=dict(type="str", default="7d"),
    cap=dict(type="int"),
    mix_levels=dict(type="list", elements="int"),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    p = module.params
    base = {"changed": False, "window": p["window"], "cap": p["cap"], "queries": [], "warnings": []}
    if not _prometheus.HAS_REQUESTS:
        module.fail_json(msg=missing_required_lib("requests"), exception=_prometheus.REQUESTS_IMPORT_ERROR, **base)
    if not p["prometheus_url"]:
        module.fail_json(msg="prometheus_url is required: the Prometheus server that scrapes the unit", **base)
    if any(level < 1 for level in p["mix_levels"] or []):
        module.fail_json(msg=f"mix_levels must be concurrency levels of 1 or more; got {p['mix_levels']}", **base)
    try:
        client = _prometheus.client_from_params(p)
        result = read(client, p["prometheus_selector"], p["window"], p["cap"], p["mix_levels"])
    except (TrafficError, _prometheus.PrometheusError) as exc:
        module.fail_json(msg=str(exc), **base)
    module.exit_json(changed=False, **result)


if __name__ == "__main__":
    main()
