# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A deploy's course in the router (_router.course): how long the worker was out and how many of its requests were
drained, over the calls a deploy makes (check, drain, a return for the bake, a drain before a restore, the return)."""

import pytest
from ansible_collections.ddtree.sglang.plugins.module_utils import _router

WORKER = {"id": "w1", "url": "http://10.0.0.5:30000", "is_healthy": True, "priority": 50, "cost": 1.0}


def drained(at, n, worker=True):
    worker = WORKER if worker is True else worker  # True: the listed worker (a dict default would be shared)
    return {"changed": worker is not None, "worker": worker, "removed_at": at if worker else None,
            "drain": {"source": "metrics", "drained": n, "still_running": 0, "seconds": 1.0}}  # fmt: skip


def back(at, changed=True):
    return {"changed": changed, "worker": WORKER, "healthy_at": at, "returned_at": at - 2 if changed else None}


def test_out_from_the_removal_until_listed_healthy_again_over_every_period():
    c = _router.course(None, "check", drained(None, 0))
    assert c["out"] is False and c["out_s"] == 0 and c["worker"] is None
    c = _router.course(c, "drain", drained(100.0, 3))
    assert c["out"] is True and c["removed_at"] == 100.0 and c["drained"] == 3 and c["worker"] == WORKER
    c = _router.course(c, "return", back(130.0))  # back for the bake
    assert c["out"] is False and c["out_s"] == 30.0 and c["returned"] == 1
    c = _router.course(c, "drain", drained(160.0, 2))  # the bake failed: out again before the restore
    c = _router.course(c, "return", back(175.5))
    assert c["out_s"] == 45.5 and c["drained"] == 5 and c["returned"] == 2
    assert [call["step"] for call in c["calls"]] == ["check", "drain", "return", "drain", "return"]
    # The router's entry from before the first removal, for the priority and cost it goes back with.
    assert c["worker"] == WORKER


def test_a_drain_that_failed_after_the_removal_leaves_it_out_with_the_error():
    failed = dict(
        drained(100.0, 1), failed=True, msg="2 request(s) still running ... Raise ddtree_deploy_router_drain_timeout"
    )
    c = _router.course(_router.new_course(), "drain", failed)
    assert c["out"] is True and c["error"].startswith("2 request(s)")
    assert _router.course_report(c, now=160.0) == {
        "out_s": 60.0, "drained": 1, "still_out": True, "returned": 0, "calls": 1, "error": c["error"],
    }  # fmt: skip


def test_a_worker_not_taken_back_stays_out_and_says_why():
    c = _router.course(None, "drain", drained(100.0, 0))
    c = _router.course(c, "return", {"failed": True, "msg": "WORKER NOT BACK IN THE ROUTER: ..."})
    assert c["out"] is True and c["out_s"] == 0 and c["error"].startswith("WORKER NOT BACK")
    # A later return that works clears the error and counts the whole time out.
    c = _router.course(c, "return", back(190.0))
    assert c["out"] is False and c["out_s"] == 90.0 and c["error"] is None


def test_a_second_drain_of_a_worker_already_out_keeps_the_first_removal():
    c = _router.course(None, "drain", drained(100.0, 2))
    c = _router.course(c, "drain", drained(None, 0, worker=None))
    assert c["removed_at"] == 100.0 and c["drained"] == 2
    assert _router.course(c, "return", back(110.0))["out_s"] == 10.0


def test_a_return_of_a_worker_that_never_left_counts_nothing():
    c = _router.course(None, "return", back(50.0, changed=False))
    assert c["out"] is False and c["out_s"] == 0 and c["returned"] == 0


STEPS = [
    ("drained", False, "drain"),
    ("drained", True, "check"),
    ("present", False, "return"),
    ("present", True, "return"),
]


@pytest.mark.parametrize(("state", "check", "step"), STEPS)
def test_the_step_of_a_call(state, check, step):
    assert _router.step_of({"state": state}, check) == step


def test_no_router_no_report():
    assert _router.course_report(None) is None
