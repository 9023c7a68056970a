# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gain gate at every concurrency level and the equivalence check (module_utils/_gate.py), over one side's
llm_bench call (its sweep and its greedy answers) as the role registers it."""

import random

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.ddtree.sglang.plugins.filter.deploy_baseline import deploy_baseline
from ansible_collections.ddtree.sglang.plugins.filter.sglang_gate_summary import sglang_gate_summary
from ansible_collections.ddtree.sglang.plugins.filter.sglang_gate_verdict import sglang_gate_verdict
from ansible_collections.ddtree.sglang.plugins.module_utils._bench import Bench
from ansible_collections.ddtree.sglang.plugins.module_utils._gate import compare, required_gain, summarise

SHORT = {"id": "short", "api": "completions", "prompt": "The capital of France is", "max_tokens": 8}
LONG = {"id": "long", "api": "chat", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 32}
TEXTS = {"short": "Paris. It lies on the Seine", "long": "Speculative decoding lets"}


def greedy(prompt, text, failed=False, msg="ok"):
    """One greedy answer of an llm_bench result (its `greedy` list)."""
    return {
        "id": prompt["id"],
        "api": prompt["api"],
        "verdict": "fail" if failed else "pass",
        "msg": msg,
        "completion_tokens": 32,
        "text": text,
        "token_count_source": "usage",
    }


TOKENS = 64


def samples(level, rate, ttft, duration=6.0, jitter=0.0, seed=0):
    """llm_bench's per-request samples of a closed loop at ``level`` streams delivering ``rate`` tok/s in all,
    each request's first token after ``ttft`` s: back-to-back requests of TOKENS tokens per stream, each time
    multiplied by 1 + a uniform draw within +-``jitter``."""
    rng = random.Random(seed)
    per_request = TOKENS / (rate / level)
    out = []
    for stream in range(level):
        t = 0.0
        while t < duration:
            scale = 1 + rng.uniform(-jitter, jitter)
            d, first = per_request * scale, ttft * scale
            itl = (d - first) / (TOKENS - 1)
            out.append(
                {"stream": stream, "start_s": t, "end_s": t + d, "tokens": TOKENS, "ttft_s": first, "itl_s": itl}
            )
            t += d
    return out


def sweep(rates, failed=False, msg="ok", answers=(), levels=None, ttft=None, jitter=0.0, seed=0):
    """An llm_bench result as the role registers it (failed_when false: `failed` is always false, and
    `reasons` says why the call failed): {level: [the repeats' rates]}, and the greedy answers. Each level's
    samples deliver the mean of its rates, their first token after ``ttft[level]`` s (0.05 s per stream)."""
    reasons = [msg] if failed else []
    reasons += [f"{a['id']} (greedy): {a['msg']}" for a in answers if a["verdict"] == "fail"]
    out = []
    for level, parts in rates.items():
        first = (ttft or {}).get(level, 0.05 * level)
        mine = samples(level, sum(parts) / len(parts), first, jitter=jitter, seed=seed + level)
        out.append(
            {
                "concurrency": level,
                "output_tokens_per_second": sum(parts) / len(parts),
                "rates": parts,
                "ttft_s": {"p50": first, "p90": max(s["ttft_s"] for s in mine)},
                "request_itl_s": {"p90": max(s["itl_s"] for s in mine)},
                "errors": {"count": 0, "messages": []},
                "token_count_source": "usage",
                "samples": mine,
            }
        )
    return {
        "failed": False,
        "reasons": reasons,
        "msg": "; ".join(reasons) or msg,
        "concurrency": list(rates) if levels is None else levels,
        "greedy": list(answers),
        "levels": out,
    }


def side(rates, texts=None, **kw):
    texts = texts or TEXTS
    return summarise(sweep(rates, answers=[greedy(SHORT, texts["short"]), greedy(LONG, texts["long"])], **kw))


def test_each_level_is_the_median_of_its_measurements_with_their_spread():
    s = side({1: [40.0, 32.0, 50.0], 16: [600.0, 610.0, 590.0]})
    assert [lv["concurrency"] for lv in s["levels"]] == [1, 16]
    assert s["levels"][0]["tokens_per_second"] == 40.0
    assert s["levels"][0]["spread"] == pytest.approx((50 - 32) / 40, abs=1e-4)
    assert s["levels"][1]["tokens_per_second"] == 600.0
    # the first level is the one-line figure: its median, spread and first token
    assert (s["median"], s["ttft_s"]) == (40.0, 0.05)
    assert s["measured"] and s["failures"] == [] and s["token_sources"] == ["usage"]
    assert s["greedy"]["long"]["text"] == "Speculative decoding lets"


def test_a_failed_sweep_or_greedy_run_is_named_and_the_side_not_measured():
    s = summarise(sweep({1: [40.0]}, failed=True, msg="no request completed at concurrency 16"))
    assert not s["measured"] and s["failures"] == ["no request completed at concurrency 16"]
    cut = greedy(SHORT, "Paris", failed=True, msg="stream cut off after 3 tokens")
    s = summarise(sweep({1: [40.0]}, answers=[cut]))
    assert s["greedy"]["short"]["ok"] is False
    assert s["failures"] == ["short (greedy): stream cut off after 3 tokens"]


def test_a_gain_at_one_stream_that_turns_into_a_loss_at_sixteen_fails_at_sixteen():
    # issue 20: +32 % for one user, -31 % at the sixteen a server carries
    nextn = side({1: [38.0, 38.0, 38.0], 16: [500.0, 500.0, 500.0]})
    ddtree = side({1: [50.2, 50.2, 50.2], 16: [345.0, 345.0, 345.0]})
    v = compare(ddtree, nextn, min_gain=0.1, equivalence_tokens=32, names=("NEXTN", "DDTREE"))
    assert v["gate"] == "fail"
    # the same figures as ever (no first token grew), so goodput moves as tok/s does, with its interval
    assert v["gate_msg"].startswith(
        "gain gate not met: goodput -31.0 % at concurrency 16 (worse, interval -33.9 % to -28.1 %), needs +10.0 %: "
        "100 % of requests met TTFT <= 1.6 s and ITL <= 39.62 ms (derived from the baseline's "
        "p90) (NEXTN 100 %); tok/s -31.0 % (NEXTN 500 tok/s, DDTREE 345 tok/s)"
    )
    assert "+32.1 % at concurrency 1 (better)" in v["gate_msg"]
    assert [g["ok"] for g in v["gains"]] == [True, False] and v["gain"] == pytest.approx(0.3211, abs=1e-4)
    assert [g["verdict"] for g in v["gains"]] == ["better", "worse"]
    # gated at one stream only, the same host passes
    only_one = compare(side({1: [50.2] * 3}), side({1: [38.0] * 3}), min_gain=0.1, names=("NEXTN", "DDTREE"))
    assert only_one["gate"] == "pass" and "goodput +32.1 % at concurrency 1 (better" in only_one["gate_msg"]


def test_min_gain_per_level():
    assert required_gain(0.1, 16) == 0.1
    assert required_gain({1: 0.1, "16": 0.0}, 16) == 0.0
    assert required_gain({1: 0.1}, 16) is None
    nextn = side({1: [38.0] * 3, 16: [500.0] * 3})
    ddtree = side({1: [50.2] * 3, 16: [490.0] * 3})
    v = compare(ddtree, nextn, min_gain={1: 0.1, 16: -0.05})
    assert v["gate"] == "pass" and [g["required"] for g in v["gains"]] == [0.1, -0.05]
    # a level the mapping does not name is measured, not gated
    v = compare(ddtree, nextn, min_gain={"1": 0.1})
    assert v["gate"] == "pass" and v["gains"][1]["ok"] is None


def test_the_gate_fails_closed_without_a_baseline_or_a_level():
    new = side({1: [50.0] * 3, 16: [600.0] * 3})
    nothing = summarise(sweep({}, failed=True, msg="GET /v1/models: connection refused", levels=[1]))
    v = compare(new, nothing, min_gain=0.1)
    assert v["gate"] == "unmeasured"
    assert "the baseline could not be measured (GET /v1/models: connection refused)" in v["gate_msg"]
    half = side({1: [50.0] * 3})
    v = compare(half, side({1: [40.0] * 3, 16: [500.0] * 3}), min_gain=0.1)
    assert v["gate"] == "unmeasured" and "concurrency 16" in v["gate_msg"]


def test_a_gain_within_the_noise_is_inconclusive_and_the_operator_says_what_that_means():
    # About +12 % against a required +10 %, from four requests a side whose times jitter by up to 10 %: neither
    # proven nor disproven
    base = side({1: [40.0] * 3}, jitter=0.1)
    new = side({1: [44.8] * 3}, jitter=0.1, seed=5)
    v = compare(new, base, min_gain=0.1)
    g = v["gains"][0]
    assert g["verdict"] == "inconclusive" and v["within_noise"]
    low, high = g["interval"]
    assert low < 0.1 < high and low < g["gain"] < high
    # unset: a required gain must be shown, so inconclusive fails; pass and extend as asked
    assert v["gate"] == "fail" and v["gate_msg"].startswith(
        "gain gate not met: goodput +12.6 % at concurrency 1 (inconclusive"
    )
    assert compare(new, base, min_gain=0.1, inconclusive="pass")["gate"] == "pass"
    ext = compare(new, base, min_gain=0.1, inconclusive="extend")
    assert ext["gate"] == "extend" and ext["extend"] == [1] and ext["gains"][0]["ok"] is None
    assert "measuring concurrency 1 once more, longer (ddtree_deploy_gate_inconclusive: extend)" in ext["gate_msg"]
    # measured again, longer, with a steady +25 %: decided (a steady +20 % against this jittery baseline reads
    # +8 % to +33 %: still not shown); still inconclusive: fails (the burden of proof)
    steady = compare(new, base, min_gain=0.1, inconclusive="extend", extended=side({1: [50.0] * 3}))
    assert steady["gate"] == "pass" and steady["gains"][0]["extended"] and steady["gains"][0]["verdict"] == "better"
    again = compare(new, base, min_gain=0.1, inconclusive="extend", extended=new)
    assert again["gate"] == "fail" and again["gains"][0]["verdict"] == "inconclusive"
    # a level that requires no gain passes unless shown worse
    assert compare(side({1: [39.0] * 3}, jitter=0.1, seed=8), base, min_gain=0.0)["gate"] == "pass"


# --- issue 33: the SLO decides ----------------------------------------------------------------------------

# A host's DDTree unit has more throughput than NEXTN at 16 streams (120 against 32 tok/s per stream), but its
# first token takes 1.5 s there (NEXTN 0.3 s). At one stream both answer their first token in 0.05 s.
NEXTN_TTFT = {1: 0.05, 16: 0.3}
DDTREE_TTFT = {1: 0.05, 16: 1.5}


def _slo_case(**kw):
    nextn = side({1: [40.0] * 3, 16: [32.0 * 16] * 3}, ttft=NEXTN_TTFT)
    ddtree = side({1: [52.0] * 3, 16: [120.0 * 16] * 3}, ttft=DDTREE_TTFT)
    return compare(ddtree, nextn, names=("NEXTN", "DDTREE"), **kw)


def test_a_faster_unit_whose_first_token_misses_the_slo_fails_naming_the_level_the_slo_and_both_attainments():
    v = _slo_case(slo={"ttft_s": 1.0}, judge_default=True)
    assert v["gate"] == "fail"
    assert v["gate_msg"].startswith(
        "gain gate not met: goodput -100.0 % at concurrency 16 (worse, interval -100.0 % to -100.0 %), needs +0.0 %: "
        "0 % of requests met TTFT <= 1 s (NEXTN 100 %); tok/s +275.0 % (NEXTN 512 tok/s, DDTREE 1920 tok/s)"
    )
    sixteen = v["gains"][1]
    assert (sixteen["attainment_before"], sixteen["attainment_new"], sixteen["slo_source"]) == (1.0, 0.0, "given")
    # tok/s stays in the report, the second figure
    assert sixteen["tokens_per_second_gain"] == pytest.approx(2.75)


def test_without_an_slo_one_is_derived_from_the_baseline_and_the_longer_wait_fails_too():
    v = _slo_case(judge_default=True)
    assert v["gate"] == "fail"
    sixteen = v["gains"][1]
    assert sixteen["slo_source"] == "derived" and sixteen["slo"]["ttft_s"] == pytest.approx(0.6)  # 2 x NEXTN's p90
    assert sixteen["attainment_new"] == 0.0 and sixteen["verdict"] == "worse"
    assert "0 % of requests met TTFT <= 0.6 s and ITL <= " in v["gate_msg"]
    assert "(derived from the baseline's p90) (NEXTN 100 %)" in v["gate_msg"]
    # one stream: the first token 0.05 s, NEXTN's p90 0.05 s: the bound is 0.3 s (0.25 s over it), and met
    assert v["gains"][0]["slo"]["ttft_s"] == pytest.approx(0.3) and v["gains"][0]["verdict"] == "better"


def test_an_slo_the_longer_wait_meets_deploys_the_faster_unit():
    v = _slo_case(slo={"ttft_s": 5.0}, judge_default=True)
    assert v["gate"] == "pass" and [g["verdict"] for g in v["gains"]] == ["better", "better"]
    assert v["gains"][1]["gain"] == pytest.approx(2.75, abs=1e-3)
    # and min_gain applies to goodput
    assert _slo_case(slo={"ttft_s": 5.0}, min_gain=3.0)["gate"] == "fail"


def test_two_identical_units_are_never_judged_worse():
    # Ten gate runs of two units with the same rates: each request's time jitters by up to 5 %, and each side's
    # whole figure is off by up to 1 % (a machine's load while one side was measured).
    for run in range(10):
        rng = random.Random(run)
        before = side({1: [40.0] * 3, 16: [500.0] * 3}, jitter=0.05, seed=100 * run)
        off = 1 + rng.uniform(-0.01, 0.01)
        new = side({1: [40.0 * off] * 3, 16: [500.0 * off] * 3}, jitter=0.05, seed=100 * run + 50)
        v = compare(new, before, judge_default=True)
        assert all(g["verdict"] in ("inconclusive", "better") for g in v["gains"]), (run, v["gate_msg"])
        assert v["gate"] == "pass", (run, v["gate_msg"])


def test_a_unit_slower_at_every_level_is_worse_under_the_default_judgement():
    before = side({1: [40.0] * 3, 16: [500.0] * 3}, jitter=0.05)
    slower = side({1: [34.0] * 3, 16: [425.0] * 3}, jitter=0.05, seed=7)
    v = compare(slower, before, judge_default=True, names=("NEXTN", "DDTREE"))
    assert v["gate"] == "fail" and [g["verdict"] for g in v["gains"]] == ["worse", "worse"]
    assert v["gate_msg"].startswith("gain gate not met: goodput -15.0 % at concurrency 1 (worse")
    # the gate off (no min_gain, no default judgement): measured, not judged
    off = compare(slower, before)
    assert off["gate"] == "off" and off["gains"][0]["verdict"] == "measured" and off["gains"][0]["ok"] is None


def test_different_greedy_answers_fail_with_both_texts():
    base = side({1: [40.0] * 3})
    wrong = side({1: [52.0] * 3}, texts={"short": TEXTS["short"], "long": "The capital of France is"})
    eq = compare(wrong, base, min_gain=0.1, equivalence_tokens=32)["equivalence"]
    assert eq["ok"] is False and [m["prompt"] for m in eq["mismatches"]] == ["long"]
    m = eq["mismatches"][0]
    assert (m["baseline"], m["new"], m["first_difference_char"]) == (
        "Speculative decoding lets",
        "The capital of France is",
        0,
    )
    assert "long: before 'Speculative decoding lets', new 'The capital of France is'" in eq["msg"]


def test_equivalence_off_and_without_answers():
    base = side({1: [40.0] * 3})
    assert compare(side({1: [52.0] * 3}), base, equivalence_tokens=0)["equivalence"]["ok"] is None
    no_answer = summarise(sweep({}, answers=[greedy(SHORT, "", failed=True, msg="HTTP 503")]))
    assert no_answer["failures"] == ["short (greedy): HTTP 503"]
    eq = compare(no_answer, base, equivalence_tokens=32)["equivalence"]
    assert eq["ok"] is False and "short: no answer to compare" in eq["msg"]


def test_filters_check_their_input():
    with pytest.raises(AnsibleFilterError, match="sglang_gate_summary"):
        sglang_gate_summary("not a mapping")
    with pytest.raises(AnsibleFilterError, match="the llm_bench result's greedy must be a list, got a mapping"):
        sglang_gate_summary({"levels": [], "greedy": {"short": "Paris"}})
    # the gain gate off: no level asked, only the greedy answers, and that is no failure
    off = sglang_gate_summary(sweep({}, answers=[greedy(SHORT, "Paris")]))
    assert off["levels"] == [] and off["measured"] and off["greedy"]["short"]["text"] == "Paris"
    # a level asked and none measured is one
    assert sglang_gate_summary(sweep({}, levels=[1]))["failures"] == ["the sweep measured no level"]
    # neither check on: the task was skipped, and the side is not measured
    assert sglang_gate_summary({"skipped": True, "changed": False})["measured"] is False
    # a call that failed before any figure (a bad option), registered with failed_when false
    why = "prompts[0] needs exactly one of prompt"
    bad = {"failed": False, "msg": why, "reasons": [why], "levels": [], "greedy": []}
    assert sglang_gate_summary(bad)["failures"] == [why]
    # a call that did not run at all (Ansible's own result), registered with failed_when false: never an
    # empty answer that passes (issue 11's minimal host: the greedy llm_probe loop read as answered)
    gone = {"failed": False, "msg": "Failed to import the required Python library (requests) on minimal's Python"}
    assert sglang_gate_summary(gone)["failures"] == [gone["msg"]] and not sglang_gate_summary(gone)["measured"]
    base = side({1: [40.0] * 3})
    assert compare(base, base, min_gain=0.0)["gate"] == "pass"


# --- the deploy's baseline side and its fail-closed verdict (baseline.yml) ----------------------------

RUNNING = {"exists": True, "active": True, "systemd_state": "active (running)"}


def test_a_measured_baseline_never_stops_the_deploy():
    side = deploy_baseline({"measured": True, "failures": [], "median": 40.0}, unit=RUNNING, min_gain=0.1)
    assert side["measured"] and side["stop"] is None and side["median"] == 40.0


def test_a_baseline_the_gate_needs_and_cannot_measure_stops_the_deploy_with_the_cause():
    side = deploy_baseline(
        {"measured": False, "failures": ["completions: HTTP 400"]}, unit=RUNNING, service="sglang-qwen", min_gain=0.1
    )
    assert side["stop"] == (
        "the baseline cannot be measured: completions: HTTP 400. The gain gate (ddtree_deploy_min_gain 0.1) "
        "compares the new service with it, so the deploy stops before the switch. Make the running service "
        "answer, or set ddtree_deploy_gate_without_baseline: true to deploy without those checks"
    )
    assert (
        deploy_baseline({"measured": False, "failures": ["x"]}, unit=RUNNING, min_gain=0.1, without_baseline=True)[
            "stop"
        ]
        is None
    )


@pytest.mark.parametrize(
    ("unit", "equivalence", "reason", "stops"),
    [
        (RUNNING, 0, "sglang-qwen runs, and no check compares with it", False),
        ({"exists": False}, 32, "sglang-qwen has no unit, so there is nothing to measure", False),
        ({"exists": True, "active": False, "systemd_state": "failed"}, 32, "is not running (systemd: failed)", False),
        (RUNNING, 32, "sglang-qwen runs", True),  # equivalence on a running unit needs the baseline
    ],
)
def test_a_side_not_measured_says_why_and_stops_only_when_a_check_needs_it(unit, equivalence, reason, stops):
    side = deploy_baseline(None, unit=unit, service="sglang-qwen", min_gain=None, equivalence_tokens=equivalence)
    assert side["measured"] is False and reason in side["failures"][0]
    assert (side["stop"] is not None) is stops
    if stops:
        assert "The output-equivalence check (ddtree_deploy_equivalence_tokens 32)" in side["stop"]


@pytest.mark.wallclock
def test_two_identical_simulated_units_measured_ten_times_are_never_judged_worse(sglang_sim):
    """Issue 33's noise criterion on real HTTP: two simulator processes with the same rates, each side measured
    by llm_bench as the deploy measures it (its parts, its samples), judged "not worse" ten times."""
    env = {"SGLANG_SIM_TOK_S": "100", "SGLANG_SIM_TTFT_S": "0.05", "SGLANG_SIM_ACCEPT_LENGTH": "1"}
    one, two = sglang_sim("healthy", None, env=env), sglang_sim("healthy", None, env=env)
    options = {"concurrency": [4], "duration": 1.0, "warmup": 0.2, "max_tokens": 16, "repeats": 3}
    verdicts = []
    for run in range(10):
        before = summarise(Bench(one.base_url, **options).run())
        new = summarise(Bench(two.base_url, **options).run())
        assert before["measured"] and new["measured"], (before["failures"], new["failures"])
        v = compare(new, before, judge_default=True)
        verdicts.append((v["gains"][0]["verdict"], v["gains"][0]["interval"]))
        assert v["gate"] == "pass", (run, v["gate_msg"])
    assert all(verdict in ("inconclusive", "better") for verdict, _interval in verdicts), verdicts


def test_without_levels_the_sides_first_token_is_the_greedy_answers():
    # The gain gate off: no level, and the probe's first-token budget still derives from the old unit's first token.
    answers = [dict(greedy(SHORT, "Paris"), ttft_s=0.09), dict(greedy(LONG, "Spec"), ttft_s=0.07)]
    answers.append(dict(greedy(dict(SHORT, id="third"), "x"), ttft_s=0.30))
    assert summarise(sweep({}, answers=answers))["ttft_s"] == 0.09
    assert summarise(sweep({}, answers=[greedy(SHORT, "Paris")]))["ttft_s"] is None


# --- issue 37 item 1: the verdict in one step from both sides' llm_bench results (sglang_gate_verdict) --------


def _bench(rates, ttft, texts=None):
    texts = texts or TEXTS
    return sweep(rates, answers=[greedy(SHORT, texts["short"]), greedy(LONG, texts["long"])], ttft=ttft)


NEXTN_BENCH = _bench({1: [40.0] * 3, 16: [32.0 * 16] * 3}, NEXTN_TTFT)
DDTREE_BENCH = _bench({1: [52.0] * 3, 16: [120.0 * 16] * 3}, DDTREE_TTFT)


def test_the_verdict_is_one_step_from_both_sides_llm_bench_results():
    v = sglang_gate_verdict(DDTREE_BENCH, baseline=NEXTN_BENCH, not_worse=True, equivalence_tokens=32, names=NAMES)
    # the same verdict as the summaries compared, with both sides beside it for the report
    assert {k: v[k] for k in ("gate", "gate_msg", "gains", "equivalence")} == {
        k: _slo_case(judge_default=True, equivalence_tokens=32)[k] for k in ("gate", "gate_msg", "gains", "equivalence")
    }
    assert v["baseline"] == summarise(NEXTN_BENCH) and v["new"] == summarise(DDTREE_BENCH)
    # the default deploy (no min_gain): "not worse", the derived SLO catches the 1.5 s first token at 16 streams
    assert v["gate"] == "fail" and v["gains"][1]["verdict"] == "worse"
    assert v["gate_msg"].startswith("gain gate not met: goodput -100.0 % at concurrency 16 (worse")
    assert "0 % of requests met TTFT <= 0.6 s" in v["gate_msg"] and "(NEXTN 100 %)" in v["gate_msg"]
    assert v["equivalence"]["ok"] is True
    # an SLO the longer wait meets deploys it; the default judgement turned off measures without judging
    assert (
        sglang_gate_verdict(DDTREE_BENCH, baseline=NEXTN_BENCH, not_worse=True, slo={"ttft_s": 5.0})["gate"] == "pass"
    )
    off = sglang_gate_verdict(DDTREE_BENCH, baseline=NEXTN_BENCH)
    assert off["gate"] == "off" and off["gains"][1]["verdict"] == "measured"
    # a role variable templated as null by an older ansible-core arrives as ""
    assert (
        sglang_gate_verdict(DDTREE_BENCH, baseline=NEXTN_BENCH, min_gain="", slo="", inconclusive="")["gate"] == "off"
    )


NAMES = ["NEXTN", "DDTREE"]


def test_the_verdict_extends_an_inconclusive_level_with_the_new_services_second_measurement():
    base = sweep({1: [40.0] * 3}, jitter=0.1)
    new = sweep({1: [44.8] * 3}, jitter=0.1, seed=5)
    first = sglang_gate_verdict(new, baseline=base, min_gain=0.1, inconclusive="extend")
    assert first["gate"] == "extend" and first["extend"] == [1]
    # measured again with a steady +25 % (the jittery baseline keeps a +20 % inconclusive): decided
    steady = sglang_gate_verdict(
        new, baseline=base, min_gain=0.1, inconclusive="extend", extended=sweep({1: [50.0] * 3})
    )
    assert steady["gate"] == "pass" and steady["gains"][0]["extended"]
    # the extension's call skipped (no level inconclusive): the first measurement decides
    skipped = {"skipped": True, "changed": False}
    assert sglang_gate_verdict(new, baseline=base, min_gain=0.1, extended=skipped)["gate"] == "fail"


def test_the_verdict_says_where_its_levels_came_from():
    traffic = {"levels": [1, 9, 22], "msg": "your traffic: p50 9, p90 22 running requests over 7 d"}
    bench = _bench({1: [40.0] * 3, 9: [300.0] * 3, 22: [600.0] * 3}, None)
    v = sglang_gate_verdict(bench, baseline=bench, not_worse=True, traffic=traffic)
    assert v["levels_msg"] == "your traffic: p50 9, p90 22 running requests over 7 d: levels 1, 9, 22"
    given = sglang_gate_verdict(bench, baseline=bench, levels_given=[1, 9, 22])["levels_msg"]
    assert given == "levels 1, 9, 22: ddtree_deploy_gate_concurrency"
    skipped = sglang_gate_verdict(bench, baseline=bench, traffic={"skipped": True})["levels_msg"]
    assert skipped.startswith("levels 1, 9, 22: the default") and "ddtree_deploy_prometheus_url" in skipped
    # Issue 35: the operator's load mix gives the levels when no list is given (the role's order: list, traffic, mix).
    mix = {"1": 0.5, "9": 0.3, "22": 0.2}
    assert sglang_gate_verdict(bench, baseline=bench, load_mix=mix)["levels_msg"] == (
        "levels 1, 9, 22: the levels of ddtree_deploy_load_mix"
    )
    assert sglang_gate_verdict(bench, baseline=bench, levels_given=[1, 9, 22], load_mix=mix, traffic=traffic)[
        "levels_msg"
    ] == ("levels 1, 9, 22: ddtree_deploy_gate_concurrency")


def test_the_verdict_filter_checks_its_input():
    with pytest.raises(AnsibleFilterError, match="sglang_gate_verdict: baseline must be an llm_bench result"):
        sglang_gate_verdict(NEXTN_BENCH, baseline=[1])
    with pytest.raises(AnsibleFilterError, match="inconclusive must be fail, pass or extend"):
        sglang_gate_verdict(NEXTN_BENCH, baseline=NEXTN_BENCH, inconclusive="retry")
    with pytest.raises(AnsibleFilterError, match="ddtree_deploy_slo has unknown key"):
        sglang_gate_verdict(NEXTN_BENCH, baseline=NEXTN_BENCH, slo={"ttft_ms": 1000})


# issue 38 item 6: min_gain 'ten' read "could not convert string to float"; true read +100 %.
MIN_GAIN_TAKES = (
    "min_gain must be a fraction above -1 (0.05 is 5 %), a mapping of concurrency levels to such fractions "
    "({1: 0.1, 16: 0.0}), or null; got "
)


@pytest.mark.parametrize(
    ("min_gain", "got"),
    [
        ("ten", '"ten"'),
        (True, "yes/no (true would read +100 %)"),
        (False, "yes/no (true would read +100 %)"),
        (-1, "-1"),
        (float("nan"), "NaN"),
        ([0.1], "[0.1]"),
        ({1: "ten"}, '{"1": "ten"}: "ten" at 1'),
        ({1: True}, '{"1": true}: true at 1'),
        ({"all": 0.1}, '{"all": 0.1}: level "all" is not a whole number of streams, 1 or more'),
        ({0: 0.1}, '{"0": 0.1}: level 0 is not a whole number of streams, 1 or more'),
    ],
)
def test_the_gate_filters_name_min_gain_and_what_it_takes(min_gain, got):
    with pytest.raises(AnsibleFilterError) as verdict_error:
        sglang_gate_verdict(NEXTN_BENCH, baseline=NEXTN_BENCH, min_gain=min_gain)
    assert str(verdict_error.value) == "sglang_gate_verdict: " + MIN_GAIN_TAKES + got
    # and the module_utils' own callers get the same words, never Python's
    with pytest.raises(ValueError, match=r"^min_gain must be a fraction above -1"):
        required_gain(min_gain, 1)


def test_min_gain_written_as_text_is_read_as_the_role_reads_it():
    # -e ddtree_deploy_min_gain=0.1 gives text; the role's preflight takes a number written as text
    assert required_gain("0.1", 16) == 0.1 and required_gain({"16": "0.05", 1: None}, 16) == 0.05
    assert required_gain({"16": "0.05", 1: None}, 1) is None
    v = sglang_gate_verdict(DDTREE_BENCH, baseline=NEXTN_BENCH, min_gain="0.1")
    assert v["gate"] in ("pass", "fail") and {g["required"] for g in v["gains"]} == {0.1}


def test_the_not_worse_judgement_needs_the_running_units_baseline_as_the_gain_gate_does():
    failed = {"measured": False, "failures": ["completions: HTTP 400"]}
    side = deploy_baseline(failed, unit=RUNNING, service="sglang-qwen", not_worse=True)
    assert "The not-worse judgement (ddtree_deploy_gate_not_worse true" in side["stop"]
    # no unit to compare with (a first deploy): nothing stops it; a gain required speaks for itself
    assert deploy_baseline(None, unit={"exists": False}, service="sglang-qwen", not_worse=True)["stop"] is None
    assert "The gain gate" in deploy_baseline(failed, unit=RUNNING, min_gain=0.1, not_worse=True)["stop"]
