# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""sglang_traffic against a real Prometheus (Debian's) whose TSDB holds a week of history made with promtool:
the levels match the history it was fed, the selector must name one unit, and bad options are named."""

import json
import time

import pytest
from ansible_collections.ddtree.sglang.plugins.module_utils._traffic import TrafficError, window_seconds
from ansible_collections.ddtree.sglang.plugins.modules import sglang_traffic
from module_harness import run_main
from playbook_harness import role_vars_play, run_playbook

WEEK_MINUTES = 7 * 24 * 60


def shape(k):
    """The running requests at the k-th of every 100 minutes: half the time 0-9, 40 % 9-22, a tenth up to 40."""
    if k < 50:
        return 9 * k / 49
    if k < 90:
        return 9 + 13 * (k - 50) / 39
    return 22 + 18 * (k - 90) / 9


def inclusive_quantile(values, q):
    """Prometheus' quantile_over_time: linear between ranks, rank q * (n - 1) (promql/functions.go)."""
    data = sorted(values)
    pos = q * (len(data) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(data) - 1)
    return data[lo] + (data[hi] - data[lo]) * (pos - lo)


@pytest.fixture
def week(prometheus, prometheus_backfill):
    """A Prometheus serving a week of one unit's sglang:num_running_reqs (two data-parallel ranks, each half the
    load, to be summed) and a second host's, at one sample a minute, ending a minute ago."""
    end = int(time.time()) // 60 * 60 - 60
    start = end - (WEEK_MINUTES - 1) * 60
    fed = [shape(i % 100) for i in range(WEEK_MINUTES)]
    points = [(start + 60 * i, v) for i, v in enumerate(fed)]
    series = []
    for rank in ("0", "1"):
        labels = {"job": "sglang", "instance": "ct129:30000", "dp_rank": rank}
        series.append(("sglang:num_running_reqs", labels, [(t, v / 2) for t, v in points]))
    other = {"job": "sglang", "instance": "ct200:30000", "dp_rank": "0"}
    series.append(("sglang:num_running_reqs", other, [(t, 60.0) for t, _v in points]))
    server = prometheus(storage=prometheus_backfill(series))
    return server, fed


def run(server, **options):
    args = {"prometheus_url": server.url, "prometheus_selector": 'instance="ct129:30000"'}
    args.update(options)
    return run_main(sglang_traffic.main, args, check_mode=True)


def test_the_levels_are_one_and_the_fed_historys_p50_and_p90(week):
    server, fed = week
    failed, r = run(server, cap=64)
    assert not failed, r["msg"]
    p50, p90 = inclusive_quantile(fed, 0.5), inclusive_quantile(fed, 0.9)
    assert r["quantiles"]["p50"] == pytest.approx(p50, abs=0.05)
    assert r["quantiles"]["p90"] == pytest.approx(p90, abs=0.05)
    assert r["levels"] == [1, round(p50), round(p90)] == [1, 9, 22]
    assert r["msg"] == "your traffic: p50 9, p90 22 running requests over 7 d"
    assert r["unit"] == {"job": "sglang", "instance": "ct129:30000"}
    assert r["minutes"] >= 0.99 * WEEK_MINUTES and r["changed"] is False


def fed_mix(fed, levels):
    """The mix the fed history has: busy minutes (0.5 running requests or more) by the nearest level on a log
    scale (split at the geometric mean of two neighbours)."""
    busy = [v for v in fed if v >= 0.5]
    bounds = [(a * b) ** 0.5 for a, b in zip(levels, levels[1:], strict=False)] + [float("inf")]
    counts = [0] * len(levels)
    for v in busy:
        counts[next(i for i, b in enumerate(bounds) if v <= b)] += 1
    return {level: c / len(busy) for level, c in zip(levels, counts, strict=True)}


def test_the_load_mix_is_the_historys_busy_minutes_by_their_nearest_level(week):
    """Issue 35: the Prometheus history as a tune's load mix, over the levels read or over the gate's."""
    server, fed = week
    failed, r = run(server, cap=64)
    assert not failed, r["msg"]
    expected = fed_mix(fed, [1, 9, 22])
    assert {int(k): v for k, v in r["mix"].items()} == {k: pytest.approx(v, abs=0.003) for k, v in expected.items()}
    # Of every 100 minutes: 3 idle, 14 at 3 or fewer, 49 up to 14.07 (the geometric mean of 9 and 22), 34 above.
    assert expected == {level: pytest.approx(n / 97, abs=0.002) for level, n in ((1, 14), (9, 49), (22, 34))}
    assert r["mix_msg"] == "your traffic's busy minutes: 14 % nearest 1, 51 % nearest 9, 35 % nearest 22"
    failed, r = run(server, mix_levels=[16, 1])
    assert not failed, r["msg"]
    expected = fed_mix(fed, [1, 16])
    assert {int(k): v for k, v in r["mix"].items()} == {k: pytest.approx(v, abs=0.003) for k, v in expected.items()}
    assert r["levels"] == [1, 9, 22]  # the levels read are still the history's


def test_the_unit_s_max_running_requests_caps_the_levels(week):
    server, _fed = week
    failed, r = run(server, cap=16)
    assert not failed, r["msg"]
    assert r["levels"] == [1, 9, 16]
    assert r["msg"].endswith("over 7 d (capped at the unit's max_running_requests, 16)")


def test_a_shorter_history_than_the_window_is_said(week):
    server, _fed = week
    failed, r = run(server, window="14d")
    assert not failed, r["msg"]
    assert r["msg"].endswith("running requests over 7 d of the last 14d")


@pytest.mark.parametrize(
    ("selector", "words"),
    [
        ('job="sglang"', 'matches 2 units (job="sglang", instance="ct129:30000", job="sglang", instance="ct200'),
        ('instance="ct999:30000"', 'no sglang:num_running_reqs series matching {instance="ct999:30000"} over the'),
    ],
)
def test_a_selector_that_does_not_name_one_unit_is_refused_with_the_fix(week, selector, words):
    server, _fed = week
    failed, r = run(server, prometheus_selector=selector)
    assert failed and words in r["msg"], r["msg"]
    assert "ddtree_deploy_prometheus_selector" in r["msg"]


def test_bad_options_are_named():
    with pytest.raises(TrafficError, match="window must be a Prometheus duration such as 7d"):
        window_seconds("a week")
    assert window_seconds("36h") == 36 * 3600
    failed, r = run_main(sglang_traffic.main, {"prometheus_selector": "x"}, check_mode=True)
    assert failed and "prometheus_url is required" in r["msg"]


def test_documentation_matches_argument_spec():
    import yaml

    doc = yaml.safe_load(sglang_traffic.DOCUMENTATION)
    assert {"window", "cap"} <= set(doc["options"]) and doc["attributes"]["check_mode"]["support"] == "full"
    for name in ("window", "cap"):
        assert all(isinstance(line, str) for line in doc["options"][name]["description"]), name
        assert doc["options"][name]["type"] == sglang_traffic.ARGUMENT_SPEC[name]["type"], name
    assert yaml.safe_load(sglang_traffic.RETURN)["levels"]["sample"] == [1, 9, 22]


# --- the role's wiring: ddtree_deploy's baseline stage reads the levels, the gate measures and names them ---------

PLAY = role_vars_play(
    """\
  module_defaults:
    ddtree.sglang.sglang_traffic: "{{ __ddtree_deploy_traffic_defaults }}"
  tasks:
    - name: The baseline stage's task, as baseline.yml runs it
      ddtree.sglang.sglang_traffic:
        cap: "{{ (sglang_server_options | default({})).max_running_requests | default(omit) }}"
      register: __ddtree_deploy_traffic
      when: __ddtree_deploy_traffic_wanted | bool
    - ansible.builtin.copy:
        content: "{{ {'levels': levels, 'msg': traffic_msg, 'levels_msg': levels_msg, 'mix': mix} | to_json }}"
        dest: "{{ playbook_dir }}/levels.json"
      vars:
        levels: "{{ __ddtree_deploy_gate_levels }}"
        traffic_msg: "{{ (__ddtree_deploy_traffic | default({})).msg | default(none) }}"
        mix: "{{ __ddtree_deploy_load_mix }}"
        levels_msg: >-
          {{ (bench | ddtree.sglang.sglang_gate_verdict(baseline=bench, traffic=__ddtree_deploy_traffic,
                levels_given=ddtree_deploy_gate_concurrency, load_mix=__ddtree_deploy_load_mix)).levels_msg }}
"""
)


def bench(levels):
    """One side's llm_bench result at these levels (what the verdict reads its levels from)."""
    return {"concurrency": levels, "levels": [{"concurrency": c} for c in levels], "greedy": []}


def _role_levels(tmp_path, ansible_cli_env, variables):
    # What the snapshot saw (a running unit) and one side's llm_bench result at the levels the verdict names.
    variables = {
        "__ddtree_deploy_snapshot": {"unit": {"exists": True, "active": True}},
        "bench": bench([1, 9, 22]),
        **variables,
    }
    rc, out = run_playbook(tmp_path, ansible_cli_env, PLAY, variables, inventory="ct129,")
    assert rc == 0, out
    return json.loads((tmp_path / "levels.json").read_text())


def test_the_deploy_gates_at_the_levels_its_hosts_traffic_has_and_says_so(week, tmp_path, ansible_cli_env):
    server, _fed = week
    # The role's default selector: instance=~`(ct129|ct129):<sglang_port>`, the instance a scrape gives ct129.
    found = _role_levels(tmp_path, ansible_cli_env, {"ddtree_deploy_prometheus_url": server.url, "sglang_port": 30000})
    assert found["levels"] == [1, 9, 22]
    assert found["levels_msg"] == "your traffic: p50 9, p90 22 running requests over 7 d: levels 1, 9, 22"


def test_without_prometheus_or_with_levels_given_the_deploy_says_where_its_levels_came_from(tmp_path, ansible_cli_env):
    default = _role_levels(tmp_path, ansible_cli_env, {})
    # No traffic message: null, or '' where ansible-core before 2.19 renders a template's none (the matrix).
    assert default["levels"] == [1, 16] and not default["msg"]
    assert "the default" in default["levels_msg"] and "ddtree_deploy_prometheus_url" in default["levels_msg"]
    given = _role_levels(tmp_path, ansible_cli_env, {"ddtree_deploy_gate_concurrency": [1, 4]})
    assert given["levels"] == [1, 4] and not given["msg"]


def test_with_a_load_mix_and_no_levels_the_gate_measures_the_mixs_levels(week, tmp_path, ansible_cli_env):
    """Issue 35: the tune scores the candidates over the operator's mix, so the gate measures its levels; the
    host's Prometheus history is not read for levels the operator's mix already names."""
    mix = {"1": 0.2, "8": 0.8}
    alone = _role_levels(tmp_path, ansible_cli_env, {"ddtree_deploy_load_mix": mix, "bench": bench([1, 8])})
    assert alone["levels"] == [1, 8] and not alone["msg"]
    assert alone["levels_msg"] == "levels 1, 8: the levels of ddtree_deploy_load_mix"
    server, _fed = week
    with_prometheus = {
        "ddtree_deploy_load_mix": mix,
        "bench": bench([1, 8]),
        "ddtree_deploy_prometheus_url": server.url,
    }
    found = _role_levels(tmp_path, ansible_cli_env, dict(with_prometheus, ddtree_deploy_mode="tune"))
    assert found == alone


def test_a_tune_with_levels_given_and_no_mix_takes_its_mix_from_prometheus_over_those_levels(
    week, tmp_path, ansible_cli_env
):
    """Issue 35: the Prometheus history as the tune's load mix, over the gate's levels the operator gave."""
    server, fed = week
    variables = {
        "ddtree_deploy_prometheus_url": server.url,
        "sglang_port": 30000,
        "ddtree_deploy_gate_concurrency": [1, 16],
        "ddtree_deploy_mode": "tune",
        "bench": bench([1, 16]),
    }
    found = _role_levels(tmp_path, ansible_cli_env, variables)
    assert found["levels"] == [1, 16]
    assert found["levels_msg"] == "levels 1, 16: ddtree_deploy_gate_concurrency"
    expected = fed_mix(fed, [1, 16])
    assert {int(k): v for k, v in found["mix"].items()} == {k: pytest.approx(v, abs=0.003) for k, v in expected.items()}
    # A deploy with levels given reads no traffic (its gate needs no mix), as before.
    deploy = _role_levels(tmp_path, ansible_cli_env, dict(variables, ddtree_deploy_mode="deploy"))
    assert deploy["levels"] == [1, 16] and not deploy["msg"] and not deploy["mix"]
