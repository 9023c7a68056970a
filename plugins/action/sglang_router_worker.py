# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for ddtree.sglang.sglang_router_worker: the router's API called from the controller.

A router is a fleet's, not a host's: its API is reached from where the deploy is run, as the
deploy's records are written there. So this plugin runs the module's logic
(plugins/module_utils/_router.py) in the controller's process, whatever host the task is for:
no module start and no host round trip per call, and nothing of the router's key on the host.
"""

from __future__ import absolute_import, division, print_function

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase
from ansible_collections.ddtree.sglang.plugins.module_utils import _metrics, _router
from ansible_collections.ddtree.sglang.plugins.module_utils._http import HAS_REQUESTS


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        validation, args = self.validate_argument_spec(argument_spec=_router.ARGUMENT_SPEC)
        params = validation.validated_parameters
        if not HAS_REQUESTS:
            raise AnsibleActionFail("sglang_router_worker needs the Python library requests on the controller")
        if params["drain_source"] != "router" and not _metrics.HAS_PROMETHEUS:
            raise AnsibleActionFail(
                "sglang_router_worker needs the Python library prometheus-client on the controller to read the "
                "worker's /metrics (or drain_source=router)"
            )
        problem = _router.option_problem(params)
        if problem:
            raise AnsibleActionFail(problem)
        check_mode = bool(self._play_context.check_mode)
        try:
            result.update(_router.run(params, check_mode=check_mode))
        except _router.RouterError as exc:
            # What was done before the failure (a drain that removed the worker says when): the caller puts it back.
            result.update(exc.details, failed=True, msg=str(exc))
        # The deploy's course with this call added (a failed one too), back as a fact for the next call's course.
        course = _router.course(params["course"], _router.step_of(params, check_mode), result)
        result["course"] = course
        result["ansible_facts"] = {"sglang_router_course": course}
        return result
