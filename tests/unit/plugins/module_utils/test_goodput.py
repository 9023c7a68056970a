# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Goodput from per-request samples (module_utils/_goodput.py): the SLO check, the figures, the bootstrap
interval against known distributions, and llm_bench's goodput against the simulator's own per-request records."""

import glob
import json
import math
import random

import pytest
from ansible_collections.ddtree.sglang.plugins.module_utils import _goodput
from ansible_collections.ddtree.sglang.plugins.module_utils._bench import Bench, BenchError
from ansible_collections.ddtree.sglang.plugins.module_utils._goodput import (
    check_slo,
    figures,
    gain_interval,
    meets,
    rate_interval,
)

# --- the SLO and one request ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("slo", "words"),
    [
        ({"ttft": 1}, "unknown key(s) ttft: it takes ttft_s (time to first token) and itl_s"),
        ({"ttft_s": 0}, "slo.ttft_s must be a positive number of seconds; got 0"),
        ({"itl_s": "fast"}, "slo.itl_s must be a number of seconds, e.g. 1.0; got 'fast'"),
        ({"ttft_s": True}, "slo.ttft_s is a number of seconds, not yes/no"),
        ([1.0], "slo must be a mapping such as {ttft_s: 1.0, itl_s: 0.05}"),
    ],
)
def test_a_bad_slo_is_named_with_the_fix(slo, words):
    with pytest.raises(ValueError) as err:
        check_slo(slo)
    assert words in str(err.value)
    # llm_bench refuses it before any request, in the same words
    with pytest.raises(BenchError) as err:
        Bench("http://127.0.0.1:1", slo=slo)
    assert words in str(err.value)


def test_a_request_meets_the_slo_when_it_completed_within_every_bound_given():
    fast = {"stream": 0, "start_s": 0, "end_s": 1, "tokens": 10, "ttft_s": 0.2, "itl_s": 0.04}
    assert meets(fast, {"ttft_s": 1.0, "itl_s": 0.05}) and meets(fast, {}) and meets(fast, None)
    assert not meets(fast, {"ttft_s": 0.1})
    assert not meets(fast, {"itl_s": 0.03})
    assert meets(dict(fast, ttft_s=1.0), {"ttft_s": 1.0})  # at the bound meets it
    assert meets(dict(fast, itl_s=None), {"itl_s": 0.01})  # one token: no wait between tokens to judge
    assert not meets(dict(fast, error=True, tokens=0), {})  # a failed request is no completed request


def _back_to_back(stream, durations, tokens, ttfts, itls=None):
    out, t = [], 0.0
    for i, d in enumerate(durations):
        itl = itls[i] if itls else 0.01
        out.append({"stream": stream, "start_s": t, "end_s": t + d, "tokens": tokens, "ttft_s": ttfts[i], "itl_s": itl})
        t += d
    return out


def test_figures_count_good_requests_per_stream_over_its_span():
    # stream 0: 4 requests of 1 s, 10 tokens, two of them late; stream 1: 2 requests of 2 s, 20 tokens, one late.
    samples = _back_to_back(0, [1, 1, 1, 1], 10, [0.1, 2.0, 0.1, 2.0]) + _back_to_back(1, [2, 2], 20, [0.1, 2.0])
    f = figures(samples, {"ttft_s": 1.0})
    assert f["slo_attainment"] == pytest.approx(3 / 6, abs=1e-4)
    assert f["goodput_requests_per_second"] == pytest.approx(2 / 4 + 1 / 4)
    assert f["goodput_tokens_per_second"] == pytest.approx(20 / 4 + 20 / 4)
    # no bound: every completed request is good, goodput is the throughput
    assert figures(samples, {})["goodput_tokens_per_second"] == pytest.approx(40 / 4 + 40 / 4)
    assert figures([], {"ttft_s": 1})["slo_attainment"] is None


# --- the interval against known distributions --------------------------------------------------------

TOKENS, BOUND = 32, 0.3
# durations 0.2 + Exp(mean 0.3) s, first tokens Exp(mean 0.2) s, independent: a request is good with
# probability 1 - exp(-0.3 / 0.2), and a back-to-back stream's goodput is TOKENS * that / E[duration].
P_GOOD = 1 - math.exp(-BOUND / 0.2)
TRUE_PER_STREAM = TOKENS * P_GOOD / 0.5


def _side(rng, streams, n, speed=1.0):
    out = []
    for k in range(streams):
        durations = [(0.2 + rng.expovariate(1 / 0.3)) / speed for _i in range(n)]
        out += _back_to_back(k, durations, TOKENS, [rng.expovariate(1 / 0.2) for _i in range(n)])
    return out


def test_the_rate_interval_covers_the_true_goodput_about_95_percent_of_the_time():
    rng = random.Random(11)
    trials, covered = 120, 0
    for t in range(trials):
        samples = _side(rng, 2, 40)
        low, high = rate_interval(samples, {"ttft_s": BOUND}, resamples=300, seed=t)
        covered += low <= 2 * TRUE_PER_STREAM <= high
    # 95 % nominal; 120 trials have a standard error of 2 points, and a ratio estimator's percentile
    # bootstrap on 40 requests a stream runs slightly below nominal.
    assert 0.88 <= covered / trials <= 0.995, covered


@pytest.mark.parametrize("speed", [1.0, 1.25])
def test_the_gain_interval_covers_the_true_gain_about_95_percent_of_the_time(speed):
    # Two units with the same distributions (gain 0), and one whose requests take 1/1.25 as long (+25 %).
    rng = random.Random(int(speed * 100))
    trials, covered = 100, 0
    for t in range(trials):
        before, new = _side(rng, 2, 40), _side(rng, 2, 40, speed)
        gain, low, high = gain_interval(new, before, {"ttft_s": BOUND * 10}, resamples=300, seed=t)
        assert low <= gain <= high
        covered += low <= speed - 1 <= high
    assert 0.88 <= covered / trials <= 1.0, covered


def test_identical_sides_give_an_interval_around_zero_as_wide_as_the_drift():
    rng = random.Random(5)
    side = _side(rng, 4, 30)
    gain, low, high = gain_interval(side, [dict(s) for s in side], {}, drift=0.02)
    assert gain == pytest.approx(0.0)
    assert low < -0.02 and high > 0.02  # the sampling spread, then the drift on each side
    # no baseline goodput: no gain to speak of
    late = [dict(s, ttft_s=9.0) for s in side]
    assert gain_interval(side, late, {"ttft_s": 1.0}) is None


# --- against the simulator's own per-request records -------------------------------------------------


@pytest.mark.wallclock
def test_llm_bench_goodput_matches_a_count_of_the_simulators_own_request_records(sglang_sim, tmp_path):
    """Two streams, one admitted at a time (--max-running-requests 1), answers of 4 and 40 tokens in turn:
    a request waits in the queue behind the other stream's short or long answer, so its first token comes
    after about 0.13 s or 0.49 s, half of them each side of a 0.3 s bound. The simulator writes each request's
    own timings (--export-metrics-to-file, as SGLang 0.5.23 does); the requests llm_bench counted are found
    there by their id and judged on the server's figures."""
    export = tmp_path / "request-metrics"
    sim = sglang_sim(
        mode="healthy",
        algorithm=None,
        args=["--max-running-requests", "1", "--enable-metrics", "--export-metrics-to-file"]
        + ["--export-metrics-to-file-dir", str(export)],
        env={"SGLANG_SIM_TOK_S": "100", "SGLANG_SIM_TTFT_S": "0.05", "SGLANG_SIM_ACCEPT_LENGTH": "1"},
    )
    slo = {"ttft_s": 0.3, "itl_s": 0.05}
    prompts = [{"prompt": "Tell me a short thing.", "max_tokens": 4}, {"prompt": "Tell me more.", "max_tokens": 40}]
    r = Bench(sim.base_url, concurrency=2, duration=5.0, warmup=0.5, prompts=prompts, slo=slo).run()
    assert not r["failed"], r["msg"]
    level = r["levels"][0]
    records = {}
    for path in glob.glob(str(export / "sglang-request-metrics-*.log")):
        with open(path, encoding="utf-8") as f:
            for line in f:
                rec = json.loads(line)
                records[rec["id"]] = rec
    samples = [s for s in level["samples"] if not s.get("error")]
    assert samples and all(s["id"] in records for s in samples)

    def server_meets(s):
        rec = records[s["id"]]
        tpot = 1 / rec["decode_throughput"] if rec.get("decode_throughput") else None
        return rec["first_token_latency"] <= slo["ttft_s"] and (tpot is None or tpot <= slo["itl_s"])

    server_good = sum(1 for s in samples if server_meets(s))
    client_good = sum(1 for s in samples if meets(s, slo))
    assert 0.2 * len(samples) < server_good < 0.8 * len(samples)  # a mix: the bound matters
    assert client_good == pytest.approx(server_good, rel=0.02)
    assert level["slo_attainment"] == pytest.approx(server_good / len(samples), rel=0.02)
    server_rate = _goodput.stream_rate(level["samples"], lambda s: not s.get("error") and server_meets(s))
    assert level["goodput_requests_per_second"] == pytest.approx(server_rate, rel=0.02)
    assert level["goodput_tokens_per_second"] < level["output_tokens_per_second"]
    assert r["slo"] == slo and level["slo"] == slo
    assert "goodput" in r["msg"] and "met the SLO" in r["msg"]


@pytest.mark.wallclock
def test_the_simulators_first_token_grows_with_the_streams_in_flight_as_its_ttft_table_says(sglang_sim):
    # {"1": 0.05, "4": 0.45}: 0.05 s alone, 0.45 s with four in flight; the decode rate is the same at both.
    env = {"SGLANG_SIM_TOK_S": "100", "SGLANG_SIM_TTFT": '{"1": 0.05, "4": 0.45}', "SGLANG_SIM_ACCEPT_LENGTH": "1"}
    sim = sglang_sim("healthy", None, env=env)
    r = Bench(sim.base_url, concurrency=[1, 4], duration=1.5, warmup=0.3, max_tokens=16, slo={"ttft_s": 0.25}).run()
    assert not r["failed"], r["msg"]
    one, four = r["levels"]
    assert 0.05 <= one["ttft_s"]["p50"] < 0.05 + 0.04
    assert 0.45 <= four["ttft_s"]["p50"] < 0.45 + 0.06
    assert one["decode_tokens_per_second"]["p50"] == pytest.approx(four["decode_tokens_per_second"]["p50"], rel=0.1)
    assert one["slo_attainment"] == 1.0 and four["slo_attainment"] == 0.0 and four["goodput_tokens_per_second"] == 0


def test_drift_sees_a_pace_that_moved_not_a_prompt_mix():
    def loop(slow_after=None, factor=1.0):
        out, t = [], 0.0
        for k in range(30):
            tokens = 8 if k % 2 else 32  # two prompts in turn: parts hold different mixes
            d = 0.08 + (tokens - 1) / 40
            if slow_after is not None and t >= slow_after:
                d *= factor
            out.append({"stream": 0, "prompt": k % 2, "start_s": t, "end_s": t + d, "tokens": tokens, "ttft_s": 0.08})
            t += d
        return out

    assert _goodput.drift(loop(), 3) == pytest.approx(0.0, abs=1e-9)
    # the server a fifth slower for the last third of the window: a deviation of several percent
    assert _goodput.drift(loop(slow_after=11.0, factor=1.2), 3) > 0.03
    assert _goodput.drift(loop(), 1) == 0.0
