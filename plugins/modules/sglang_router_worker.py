#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

DOCUMENTATION = r"""
---
module: sglang_router_worker
short_description: Take an SGLang worker out of an sglang-router and drain it, or put it back
version_added: 0.1.0
description:
  - Manages one worker of an SGLang router (PyPI C(sglang-router), sgl-model-gateway) through the router's
    worker management API (C(GET /workers), C(POST /workers), C(DELETE /workers/{id})), so that a deploy
    stops a server only once no client request runs on it, and sends traffic to it again only once the
    router lists it healthy.
  - O(state=drained) removes the worker from the router (new requests go to the other workers; requests
    already running go on to their end), then waits, at most O(drain_timeout) seconds, until the server's
    own in-flight requests have ended. It refuses to remove a worker that would leave the router fewer
    than O(min_healthy_others) healthy workers.
  - O(state=present) adds the worker (with O(worker_api_key), which the router does not pass on by itself)
    unless the router lists it already, and waits at most O(timeout) seconds until the router lists it
    healthy. A worker the router does not take back is a failure that says how to put it back by hand.
  - In-flight requests are counted on the worker itself, C(sglang:num_running_reqs) + C(sglang:num_queue_reqs)
    on its C(/metrics) (SGLang with C(--enable-metrics)); every client reaches the worker, and the router
    shows nothing of a worker once it is removed. A worker without C(/metrics) cannot be watched; see
    O(drain_source).
  - It talks to the router and to the worker over HTTP only. Its action plugin runs it on the controller,
    whatever host the task is for (a router is the fleet's, and its key stays on the controller); the
    controller must reach the router and the worker's C(/metrics).
author:
  - ddtree.sglang developers (@ddtree)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.flow
attributes:
  action:
    support: full
    details: The action plugin runs the module's code in the controller's process; no module runs on the host.
  async:
    support: none
  bypass_host_loop:
    support: none
  check_mode:
    support: full
    details: Reads the router's worker list and the worker's in-flight count, and says whether it would remove
      or add the worker; changes nothing and waits for nothing.
  diff_mode:
    support: none
  platform:
    platforms: posix
options:
  router_url:
    description:
      - Base URL of the router's HTTP port (where clients send their requests and C(/workers) answers).
    type: str
    required: true
  router_api_key:
    description:
      - The router's C(--api-key), or a control-plane key with the C(admin) role, sent as
        C(Authorization) Bearer. Never logged.
    type: str
  router_headers:
    description:
      - More HTTP headers for every request to the router (a gateway in front of it may need its own).
    type: dict
    default: {}
  validate_certs:
    description:
      - Verify the TLS certificates of https router and worker URLs.
    type: bool
    default: true
  url:
    description:
      - The worker's URL as the router knows it (what C(GET /workers) lists, and what the router is given
        on O(state=present)). Compared without a trailing slash and case.
    type: str
    required: true
  state:
    description:
      - V(drained) takes the worker out of the router and waits for its in-flight requests to end.
      - V(present) puts it back and waits until the router lists it healthy.
    type: str
    choices: [drained, present]
    required: true
  worker_api_key:
    description:
      - The worker's own C(--api-key), handed to the router on O(state=present) (a worker added through the
        API does not inherit the router's key; without its key the router lists it healthy but every request
        it sends there answers 401). Also sent to the worker's C(/metrics). Never logged.
    type: str
  config:
    description:
      - More fields of the router's worker configuration sent on O(state=present), for example the
        C(priority) and C(cost) RV(worker) had when the worker was drained.
    type: dict
    default: {}
  metrics_url:
    description:
      - Base URL of the worker's C(/metrics) as the controller reaches it. Default O(url).
    type: str
  drain_source:
    description:
      - What counts the in-flight requests on O(state=drained).
      - V(metrics) the worker's C(sglang:num_running_reqs) + C(sglang:num_queue_reqs), read until they are 0
        twice in a row; a worker without C(/metrics) fails the drain before anything changes.
      - V(router) the router's C(load) for the worker, read right before the removal, then a fixed wait of
        O(drain_unwatched) seconds (the router shows nothing of a removed worker; and C(load) counts only
        under the C(cache_aware) and C(power_of_two) policies, C(round_robin) keeps it at 0).
      - V(auto) V(metrics) when the worker serves C(/metrics), else V(router).
    type: str
    choices: [auto, metrics, router]
    default: auto
  drain_timeout:
    description:
      - Longest wait for the in-flight requests to end (O(drain_source=metrics)); requests still running
        then fail the task, the worker out of the router and the unit untouched.
    type: float
    default: 300
  drain_unwatched:
    description:
      - Seconds to wait after the removal when the in-flight requests cannot be watched
        (O(drain_source=router)), the longest request the service answers.
    type: float
    default: 30
  require_listed:
    description:
      - On O(state=drained), fail before anything changes when the router does not list O(url); the router knows
        the host by another URL, and removing nothing would leave it routing to a server about to stop. V(false)
        where the worker may already be out (a second drain, a rollback after an interrupted deploy).
    type: bool
    default: true
  min_healthy_others:
    description:
      - Healthy workers besides this one that the router must list before this one is taken out.
        V(0) allows taking out the last one (every client request then fails until it is back).
    type: int
    default: 1
  timeout:
    description:
      - Longest wait, on O(state=present), until the router lists the worker healthy. The router checks a
        new worker's C(/health) with growing delays; a ready worker is listed about 2 s after it is added.
    type: float
    default: 120
  interval:
    description:
      - Seconds between two reads of the router's list or the worker's in-flight count.
    type: float
    default: 1
  request_timeout:
    description:
      - Wall-clock bound of one HTTP request to the router or the worker.
    type: float
    default: 10
  course:
    description:
      - A deploy's course so far, as the previous call returned it (RV(course), also the fact C(sglang_router_course));
        this call is added to it. The C(ddtree.sglang.ddtree_deploy) role passes it on, so that its report says how
        long the worker was out of the router and how many of its requests were drained.
      - Omitted, the course starts with this call.
    type: dict
requirements:
  - requests
  - prometheus_client (to read the worker's C(/metrics))
notes:
  - Tested against sglang-router 0.3.2 (PyPI), in front of the SGLang simulator of this collection's tests.
seealso:
  - name: sglang-router on PyPI
    description: The router, its worker management API and its policies.
    link: https://pypi.org/project/sglang-router/
"""

EXAMPLES = r"""
- name: Take the worker out of the router and wait for its requests to end
  ddtree.sglang.sglang_router_worker:
    router_url: http://router.example:30000
    router_api_key: "{{ vault_router_key }}"
    url: http://10.0.0.129:30000
    state: drained
  register: drained

- name: Put it back as it was, once its unit is proved
  ddtree.sglang.sglang_router_worker:
    router_url: http://router.example:30000
    router_api_key: "{{ vault_router_key }}"
    url: http://10.0.0.129:30000
    worker_api_key: "{{ sglang_api_key }}"
    config: {priority: "{{ drained.worker.priority }}", cost: "{{ drained.worker.cost }}"}
    state: present
"""

RETURN = r"""
worker:
  description: The router's entry for the worker, as listed before the removal (drained) or once healthy
    (present); null when the router did not list it.
  returned: always
  type: dict
  sample: {id: 27fc9ee3-e699-4eb1-91d5-fd7e3922e67a, url: "http://10.0.0.129:30000", is_healthy: true, load: 0,
           priority: 50, cost: 1.0, worker_type: regular, model_id: /models/Qwen3.6-27B}
others_healthy:
  description: Healthy workers the router listed besides this one, before the removal.
  returned: state=drained
  type: int
  sample: 1
removed_at:
  description: When the router accepted the removal (seconds since the epoch); null when nothing was removed.
  returned: state=drained
  type: float
  sample: 1796617460.12
drain:
  description: How the in-flight requests were waited for.
  returned: state=drained
  type: dict
  contains:
    source:
      description: C(metrics) (the worker's gauges, watched) or C(router) (the router's C(load), a fixed wait).
      type: str
      sample: metrics
    watched:
      description: Whether the requests were seen to end (C(metrics)), rather than waited for.
      type: bool
    in_flight_at_removal:
      description: Requests running or queued on the worker when it left the router.
      type: int
      sample: 2
    drained:
      description: Of those, the ones that ended during the wait (all of them; a drain that times out fails).
      type: int
      sample: 2
    still_running:
      description: Requests still running at the end of the wait (0).
      type: int
    seconds:
      description: Seconds from the removal to the end of the wait.
      type: float
      sample: 3.6
    note:
      description: Why the worker's C(/metrics) was not used, when it was not.
      type: str
returned_at:
  description: When the worker was added to the router (seconds since the epoch); null when it was listed already.
  returned: state=present
  type: float
healthy_at:
  description: When the router listed it healthy (seconds since the epoch).
  returned: state=present
  type: float
seconds:
  description: Seconds the module took.
  returned: always
  type: float
course:
  description:
    - O(course) with this call added, a failed one too; also set as the fact C(sglang_router_course).
    - C(out) whether the worker is out of the router now; C(out_s) seconds it was out, from the removal the router
      accepted until it listed the worker healthy again, over the periods that ended; C(removed_at) the start of
      the current one; C(drained) requests that ended on the worker while it was out; C(returned) times it was put
      back; C(worker) the router's entry before the first removal; C(error) the last call's failure, else null;
      C(calls) one entry per call (C(step) check, drain or return; C(failed), C(changed), C(seconds), and a drain's
      C(drained), C(still_running), C(source)).
  returned: always
  type: dict
  sample: {out: false, removed_at: null, out_s: 41.7, drained: 2, returned: 1, error: null, calls: []}
"""

import traceback  # noqa: E402

from ansible.module_utils.basic import AnsibleModule, missing_required_lib  # noqa: E402

try:
    from ansible_collections.ddtree.sglang.plugins.module_utils import _metrics, _router
    from ansible_collections.ddtree.sglang.plugins.module_utils._http import HAS_REQUESTS
except ImportError:  # requests or prometheus_client may be missing where the module runs
    _router = None
    IMPORT_ERROR = traceback.format_exc()
else:
    IMPORT_ERROR = None


def main():
    # The module's logic is _router.run's; the action plugin of the same name runs it on the controller.
    module = AnsibleModule(argument_spec=_router.ARGUMENT_SPEC if _router else {}, supports_check_mode=True)
    if _router is None or not HAS_REQUESTS:
        module.fail_json(msg=missing_required_lib("requests"), exception=IMPORT_ERROR)
    if module.params["drain_source"] != "router" and not _metrics.HAS_PROMETHEUS:
        module.fail_json(
            msg=missing_required_lib("prometheus-client (or drain_source=router)"),
            exception=_metrics.PROMETHEUS_IMPORT_ERROR,
        )
    problem = _router.option_problem(module.params)
    if problem:
        module.fail_json(msg=problem)
    step = _router.step_of(module.params, module.check_mode)
    try:
        result = _router.run(module.params, check_mode=module.check_mode)
    except _router.RouterError as exc:
        # What was done before the failure (a drain that removed the worker says when): the caller puts it back.
        failed = dict(exc.details, failed=True, msg=str(exc))
        course = _router.course(module.params["course"], step, failed)
        module.fail_json(msg=str(exc), course=course, ansible_facts={"sglang_router_course": course}, **exc.details)
    course = _router.course(module.params["course"], step, result)
    module.exit_json(course=course, ansible_facts={"sglang_router_course": course}, **result)


if __name__ == "__main__":
    main()
