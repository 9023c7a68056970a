# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""sglang_router_worker against the real sglang-router (PyPI 0.3.2) on loopback, simulators as its workers.

What a user checks: streams running on a drained worker end with [DONE]; the router sends it nothing
after the removal; it serves through the router again once returned (its own key handed over); a
worker that cannot come back, a router that refuses the key, the last healthy worker: each fails with
what to do, before anything changes where it can.
"""

import socket
import threading
import time

import pytest
from ansible_collections.ddtree.sglang.plugins.module_utils import _router
from ansible_collections.ddtree.sglang.plugins.modules import sglang_router_worker
from module_harness import run_main
from playbook_harness import run_playbook
from router_harness import requests_served, stream, to_json

# Streams of 12 tokens at 4 tok/s: about 3 s, long enough to be running when the drain starts.
SLOW = {"SGLANG_SIM_TOK_S": "4"}


def call(router, url, state, **args):
    base = {"router_url": router.url, "url": url, "state": state, "interval": 0.2}
    return run_main(sglang_router_worker.main, dict(base, **args))


@pytest.fixture
def two_workers(sglang_sim, sglang_router):
    """Two simulators serving /metrics behind one round-robin router: (router, a, b)."""
    a = sglang_sim(args=["--enable-metrics"], env=SLOW)
    b = sglang_sim(args=["--enable-metrics"], env=SLOW)
    router = sglang_router([a.base_url, b.base_url])
    return router, a, b


def running(sim):
    """Requests the simulator has running or queued (its /metrics)."""
    from ansible_collections.ddtree.sglang.plugins.module_utils._http import HttpClient

    return _router.InFlight(HttpClient(sim.base_url)).count()


def wait_until(predicate, timeout=20.0, what="condition"):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"{what} not reached within {timeout}s")


def start_streams(url, n, max_tokens=12):
    results = [None] * n

    def one(i):
        results[i] = stream(url, max_tokens=max_tokens)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    return threads, results


def test_drain_waits_for_the_streams_on_the_worker_and_routes_nothing_new_to_it(two_workers):
    router, a, b = two_workers
    threads, results = start_streams(router.url, 4)
    wait_until(lambda: running(a) == 2 and running(b) == 2, what="two streams on each worker")

    failed, result = call(router, a.base_url, "drained")

    assert not failed, result["msg"]
    assert result["changed"] is True
    assert result["worker"]["url"] == a.base_url and result["worker"]["is_healthy"] is True
    assert result["others_healthy"] == 1
    drain = result["drain"]
    assert drain["source"] == "metrics" and drain["watched"] is True, to_json(result)
    assert drain["in_flight_at_removal"] == 2 and drain["drained"] == 2 and drain["still_running"] == 0
    # The drain ended when its streams did, not before: they had seconds left at the removal.
    assert running(a) == 0
    assert result["removed_at"] is not None
    assert router.listed(a.base_url) is None
    for t in threads:
        t.join(30)
    assert all(r["ok"] for r in results), to_json(results)
    # Every request sent after the removal goes to the other worker.
    served_a = requests_served(a)
    after = [stream(router.url, max_tokens=2) for _n in range(4)]
    assert all(r["ok"] for r in after), to_json(after)
    assert requests_served(a) == served_a

    # Drained again (the worker may be out already): nothing to remove, nothing running.
    failed, again = call(router, a.base_url, "drained", require_listed=False)
    assert not failed and again["changed"] is False and again["drain"]["in_flight_at_removal"] == 0


def test_a_worker_out_already_is_not_waited_for(two_workers):
    """A second drain (before a restore) finds the worker out: what still runs there is the deploy's own (a probe the
    restore ends), not the router's, so it is not waited for (a degenerate candidate's probe would hold it for
    minutes)."""
    router, a, b = two_workers
    failed, result = call(router, a.base_url, "drained")
    assert not failed, result["msg"]
    threads, _results = start_streams(a.base_url, 1, max_tokens=40)  # 10 s at 4 tok/s, straight to the worker
    wait_until(lambda: running(a) == 1, what="a request on the worker out of the router")

    failed, again = call(router, a.base_url, "drained", require_listed=False)

    assert not failed and again["changed"] is False, to_json(again)
    assert again["drain"]["note"] == "not in the router: nothing to drain"
    # Not waited for: the request (10 s) still runs when the drain has returned.
    assert running(a) == 1
    for t in threads:
        t.join(30)


def test_present_puts_it_back_with_its_own_key_and_it_serves_through_the_router(sglang_sim, sglang_router):
    keyed = sglang_sim(args=["--enable-metrics", "--api-key", "worker-key-51"])
    # A start-up worker (--worker-urls) inherits the router's key; one added through the API does not.
    other = sglang_sim(args=["--api-key", "router-key-7"])
    router = sglang_router([other.base_url], api_key="router-key-7")
    headers = {"Authorization": "Bearer router-key-7"}

    failed, result = call(router, keyed.base_url, "present", router_api_key="router-key-7",
                          worker_api_key="worker-key-51", config={"priority": 60}, timeout=30)  # fmt: skip

    assert not failed, result["msg"]
    assert result["changed"] is True and result["worker"]["is_healthy"] is True
    assert result["worker"]["priority"] == 60
    assert result["healthy_at"] >= result["returned_at"]
    served = requests_served(keyed)
    answers = [stream(router.url, max_tokens=2, headers=headers) for _n in range(4)]
    assert all(r["ok"] for r in answers), to_json(answers)  # a 401 from the worker would fail them
    assert requests_served(keyed) > served
    assert "worker-key-51" not in to_json(result) and "router-key-7" not in to_json(result)

    failed, again = call(router, keyed.base_url, "present", router_api_key="router-key-7")
    assert not failed and again["changed"] is False


def test_a_worker_the_router_cannot_take_back_is_a_loud_failure_with_the_fix(sglang_sim, sglang_router):
    live = sglang_sim()
    router = sglang_router([live.base_url])
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"

    failed, result = call(router, dead, "present", worker_api_key="secret-worker-key", timeout=3)

    assert failed
    assert result["msg"].startswith(
        f"WORKER NOT BACK IN THE ROUTER: {dead} is not serving traffic through {router.url}"
    )
    assert f"curl -X POST {router.url}/workers" in result["msg"] and f'"url": "{dead}"' in result["msg"]
    assert f"curl {dead}/health" in result["msg"]
    assert "secret-worker-key" not in to_json(result) and "<the worker's --api-key>" in result["msg"]


def test_a_worker_the_router_does_not_list_is_refused_before_anything_changes(two_workers):
    router, a, b = two_workers
    other_name = a.base_url.replace("127.0.0.1", "localhost")  # the same server, not the URL the router knows

    failed, result = call(router, other_name, "drained")

    assert failed
    assert f"does not list {other_name}" in result["msg"] and "ddtree_deploy_router_worker_url" in result["msg"]
    assert router.listed(a.base_url) is not None and router.listed(b.base_url) is not None


def test_the_last_healthy_worker_is_not_taken_out_unless_allowed(sglang_sim, sglang_router):
    only = sglang_sim(args=["--enable-metrics"])
    router = sglang_router([only.base_url])

    failed, result = call(router, only.base_url, "drained")

    assert failed
    assert "refusing to take" in result["msg"] and "ddtree_deploy_router_min_healthy_others: 0" in result["msg"]
    assert router.listed(only.base_url) is not None  # nothing changed

    failed, result = call(router, only.base_url, "drained", min_healthy_others=0)
    assert not failed, result["msg"]
    assert router.listed(only.base_url) is None


def test_a_router_with_a_key_refuses_without_it_and_the_message_names_the_variable(sglang_sim, sglang_router):
    worker = sglang_sim()
    router = sglang_router([worker.base_url], api_key="router-key-7")

    failed, result = call(router, worker.base_url, "drained", router_api_key="wrong-key")

    assert failed
    assert "HTTP 401" in result["msg"] and "ddtree_deploy_router_api_key" in result["msg"]
    assert router.listed(worker.base_url) is not None


def test_metrics_source_without_metrics_fails_before_the_removal(sglang_sim, sglang_router):
    bare = sglang_sim()  # no --enable-metrics: /metrics answers 404
    other = sglang_sim()
    router = sglang_router([bare.base_url, other.base_url])

    failed, result = call(router, bare.base_url, "drained", drain_source="metrics")

    assert failed
    assert "--enable-metrics" in result["msg"] and "sglang_enable_metrics: true" in result["msg"]
    assert router.listed(bare.base_url) is not None

    # auto: the router's load is the count, then the fixed wait.
    started = time.monotonic()
    failed, result = call(router, bare.base_url, "drained", drain_unwatched=1.5)
    assert not failed, result["msg"]
    assert result["drain"]["source"] == "router" and result["drain"]["watched"] is False
    assert "404" in result["drain"]["note"]
    assert result["drain"]["in_flight_at_removal"] == 0  # round_robin keeps no load
    assert time.monotonic() - started >= 1.5
    assert router.listed(bare.base_url) is None


def test_requests_still_running_at_the_timeout_fail_the_drain_and_say_it_was_removed(two_workers):
    router, a, b = two_workers
    threads, results = start_streams(router.url, 2, max_tokens=24)  # about 6 s each, one per worker
    wait_until(lambda: running(a) == 1, what="a stream on the drained worker")

    failed, result = call(router, a.base_url, "drained", drain_timeout=1)

    assert failed
    assert "1 request(s) still running on " + a.base_url in result["msg"]
    assert "ddtree_deploy_router_drain_timeout" in result["msg"]
    assert result["removed_at"] is not None and result["changed"] is True
    assert result["drain"]["in_flight_at_removal"] == 1 and result["drain"]["still_running"] == 1
    for t in threads:
        t.join(30)
    assert all(r["ok"] for r in results), to_json(results)


def test_check_mode_changes_nothing(two_workers):
    router, a, b = two_workers

    failed, result = run_main(
        sglang_router_worker.main, {"router_url": router.url, "url": a.base_url, "state": "drained"}, check_mode=True
    )
    assert not failed and result["changed"] is True and result["removed_at"] is None
    assert router.listed(a.base_url) is not None

    failed, result = run_main(
        sglang_router_worker.main,
        {"router_url": router.url, "url": "http://127.0.0.1:9/", "state": "present"},
        check_mode=True,
    )
    assert not failed and result["changed"] is True
    assert router.listed("http://127.0.0.1:9") is None


@pytest.mark.parametrize(
    "args, words",
    [
        ({"router_url": "router:30000"}, "router_url must be an http:// or https:// URL"),
        ({"drain_timeout": 0}, "drain_timeout must be a positive number"),
        ({"min_healthy_others": -1}, "must not be negative"),
    ],
)
def test_bad_options_are_named(args, words):
    base = {"router_url": "http://127.0.0.1:9", "url": "http://127.0.0.1:8", "state": "drained"}
    failed, result = run_main(sglang_router_worker.main, dict(base, **args))
    assert failed and words in result["msg"]


def test_an_unreachable_router_names_the_variable():
    failed, result = run_main(
        sglang_router_worker.main,
        {"router_url": "http://127.0.0.1:9", "url": "http://127.0.0.1:8", "state": "drained", "request_timeout": 2},
    )
    assert failed
    assert (
        "cannot reach the router at http://127.0.0.1:9" in result["msg"] and "ddtree_deploy_router_url" in result["msg"]
    )


def test_same_url_ignores_a_trailing_slash_and_case():
    assert _router.same_url("http://10.0.0.5:30000/", "HTTP://10.0.0.5:30000")
    assert not _router.same_url("http://10.0.0.5:30000", "http://10.0.0.5:30001")


PLAY = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Out of the router, through the action plugin (on the controller)
      ddtree.sglang.sglang_router_worker: {{router_url: "{router}", url: "{worker}", state: drained, interval: 0.2}}
      register: out
    - name: Back in, the course so far passed on (the fact the first call set)
      ddtree.sglang.sglang_router_worker:
        {{router_url: "{router}", url: "{worker}", state: present, interval: 0.2,
          course: "{{{{ sglang_router_course }}}}"}}
      register: back
    - name: Keep both for the test
      ansible.builtin.copy:
        content: "{{{{ {{'out': out, 'back': back}} | to_json }}}}"
        dest: results.json
        mode: "0600"
      check_mode: false
"""


@pytest.mark.parametrize("check", [False, True])
def test_the_action_plugin_runs_it_on_the_controller(two_workers, tmp_path, ansible_cli_env, check):
    import json

    router, a, b = two_workers
    play = PLAY.format(router=router.url, worker=a.base_url)
    rc, out = run_playbook(tmp_path, ansible_cli_env, play, inventory="localhost,", check=check)
    assert rc == 0, out
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["out"]["changed"] is True and results["out"]["worker"]["url"] == a.base_url
    assert (results["out"]["removed_at"] is None) is check
    # Back in the router, whether it ever left it.
    assert router.listed(a.base_url)["is_healthy"] is True
    assert results["back"]["changed"] is not check
    # The course: out from the removal until listed healthy again, both calls in it.
    course = results["back"]["course"]
    assert [c["step"] for c in course["calls"]] == (["check", "return"] if check else ["drain", "return"])
    assert course["out"] is False and course["error"] is None
    if check:
        assert course["out_s"] == 0 and course["returned"] == 0
    else:
        assert course["returned"] == 1
        assert course["out_s"] == pytest.approx(results["back"]["healthy_at"] - results["out"]["removed_at"], abs=0.01)
        assert course["worker"]["url"] == a.base_url
