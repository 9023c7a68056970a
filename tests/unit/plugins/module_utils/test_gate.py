# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gain gate and the equivalence check over llm_probe loop results (module_utils/_gate.py)."""

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.ddtree.sglang.plugins.filter.sglang_gate_compare import sglang_gate_compare
from ansible_collections.ddtree.sglang.plugins.filter.sglang_gate_summary import sglang_gate_summary
from ansible_collections.ddtree.sglang.plugins.module_utils._gate import compare, summarise

SHORT = {"id": "short", "api": "completions", "prompt": "The capital of France is", "max_tokens": 8}
LONG = {"id": "long", "api": "chat", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 32}


def run(prompt, repeat, tokens, seconds, text="x", failed=False):
    """One loop result as the role registers it: with failed_when false, `failed` is always
    false and llm_probe's `verdict` says whether the run failed."""
    return {
        "item": [prompt, repeat] if repeat is not None else prompt,
        "failed": False,
        "verdict": "fail" if failed else "pass",
        "msg": "HTTP 503" if failed else "ok",
        "completion_tokens": tokens,
        "total_s": seconds,
        "ttft_s": 0.08,
        "text": text,
        "token_count_source": "usage",
    }


def side(rate_scale, repeats=3, texts=None, jitter=(1.0, 1.0, 1.0)):
    """The two-prompt set at a decode rate scale; jitter per repeat."""
    texts = texts or {"short": "Paris. It lies", "long": "Speculative decoding lets"}
    measure = []
    for r in range(1, repeats + 1):
        measure.append(run(SHORT, r, 8, 0.2 / rate_scale * jitter[r - 1], texts["short"]))
        measure.append(run(LONG, r, 32, 0.8 / rate_scale * jitter[r - 1], texts["long"]))
    greedy = [run(SHORT, None, 32, 0.8 / rate_scale, texts["short"] + " on the Seine")]
    return summarise(measure, greedy, equivalence_tokens=32)


def test_set_rate_is_tokens_over_request_time_and_median_over_repeats():
    s = side(1.0, jitter=(1.0, 1.25, 0.8))
    # 40 tokens per repeat over 1.0 s x jitter
    assert s["rates"] == [40.0, 32.0, 50.0]
    assert s["median"] == 40.0
    assert s["spread"] == pytest.approx((50 - 32) / 40, abs=1e-4)
    assert s["measured"] and s["failures"] == [] and s["token_sources"] == ["usage"]
    # the long prompt's first measurement run (32 tokens) is its greedy answer; the short one was asked apart
    assert s["greedy"]["long"]["text"] == "Speculative decoding lets"
    assert s["greedy"]["short"]["text"] == "Paris. It lies on the Seine"


def test_a_failed_run_leaves_no_rate_for_its_repeat_and_is_named():
    measure = [run(SHORT, 1, 8, 0.2), run(LONG, 1, 32, 0.8), run(SHORT, 2, 0, 0.1, failed=True), run(LONG, 2, 32, 0.8)]
    s = summarise(measure, [])
    assert s["rates"] == [40.0] and not s["measured"]
    assert s["failures"] == ["short (run 2): HTTP 503"]


def test_a_failed_run_is_named_with_its_message():
    # The report must quote the server's answer (an HTTP 400 from NEXTN), not "no completion tokens".
    rejected = run(SHORT, 1, 0, 0.1, failed=True) | {"msg": "HTTP 400 from POST /v1/completions"}
    s = summarise([rejected, run(LONG, 1, 32, 0.8)], [])
    assert not s["measured"]
    assert s["failures"] == ["short (run 1): HTTP 400 from POST /v1/completions"]
    # a module that failed outright (registered without failed_when) reads the same
    outright = rejected | {"failed": True, "verdict": None}
    assert summarise([outright, run(LONG, 1, 32, 0.8)], [])["failures"] == s["failures"]


def test_a_failed_greedy_run_is_no_answer_to_compare():
    # The greedy runs are registered the same way: a failed one must not pass for an answer
    # that merely has a text.
    cut = run(SHORT, None, 3, 0.2, "Paris", failed=True) | {"msg": "stream cut off after 3 tokens"}
    s = summarise([run(SHORT, 1, 8, 0.2), run(LONG, 1, 32, 0.8)], [cut], equivalence_tokens=32)
    assert s["greedy"]["short"]["ok"] is False
    assert s["failures"] == ["short (greedy): stream cut off after 3 tokens"]


def test_gate_passes_on_medians_and_fails_closed_without_a_baseline():
    base, new = side(1.0), side(1.3)
    v = compare(new, base, min_gain=0.1, equivalence_tokens=32)
    assert v["gate"] == "pass" and v["gain"] == pytest.approx(0.3, abs=1e-3)
    assert not v["within_noise"] and v["equivalence"]["ok"] is True
    v = compare(side(1.05), base, min_gain=0.1)
    assert v["gate"] == "fail" and v["gate_msg"].startswith("gain gate not met: median set rate 42.0 tok/s new vs 40.0")
    nothing = summarise([run(SHORT, 1, 0, 0, failed=True)], [])
    v = compare(new, nothing, min_gain=0.1)
    assert v["gate"] == "unmeasured" and "the baseline could not be measured (short (run 1): HTTP 503)" in v["gate_msg"]


def test_the_gate_says_when_the_spread_is_larger_than_the_gain():
    base = side(1.0, jitter=(1.0, 1.1, 0.9))
    v = compare(side(1.12, jitter=(1.0, 1.1, 0.9)), base, min_gain=0.1)
    assert v["gate"] == "pass" and v["within_noise"]
    assert "the spread (" in v["gate_msg"] and "is larger than the gain" in v["gate_msg"]


def test_different_greedy_answers_fail_with_both_texts():
    base = side(1.0)
    wrong = side(1.3, texts={"short": "Paris. It lies", "long": "The capital of France is"})
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
    base = side(1.0)
    assert compare(side(1.3), base, equivalence_tokens=0)["equivalence"]["ok"] is None
    no_answer = summarise([], [run(SHORT, None, 0, 0, failed=True)])
    eq = compare(no_answer, base, equivalence_tokens=32)["equivalence"]
    assert eq["ok"] is False and "short: no answer to compare" in eq["msg"]


def test_filters_check_their_input():
    with pytest.raises(AnsibleFilterError, match="sglang_gate_summary"):
        sglang_gate_summary("not a list")
    with pytest.raises(AnsibleFilterError, match="sglang_gate_compare"):
        sglang_gate_compare({}, baseline=[1])
    assert sglang_gate_compare(side(1.0), baseline=side(1.0), min_gain=0.0)["gate"] == "pass"
