# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Goodput from per-request samples, and the interval of a gain between two sides. Pure Python.

One sample per counted request of a closed-loop level (llm_bench's ``levels[].samples``):

    {"stream": 3, "prompt": 1, "start_s": 0.412, "end_s": 0.951, "tokens": 32, "ttft_s": 0.051, "itl_s": 0.0101}

``start_s``/``end_s`` are seconds from the window start; ``ttft_s`` the time to the first content chunk;
``itl_s`` the request's mean time per output token after the first, (last chunk - first chunk) / (tokens - 1),
SGLang's ``sglang:request_time_per_output_token_seconds`` (metrics_collector.py:2056-2063 of 0.5.23) and vLLM's
TPOT (None for a one-token answer: it had no wait between tokens); a failed request has ``"error": true`` and 0
tokens (it occupied its stream; it is no completed request).

A request *meets* an SLO ({ttft_s, itl_s}, either may be absent) when it completed and each figure given is
at or under its bound. Rates are per stream, then summed (docs/bench.md): a stream's counted requests follow
each other, so its rate is its tokens (or requests) over the time from the start of its first to the end of
its last; ``goodput_*`` count only the requests that meet the SLO, over the same time.

The interval of a gain (``gain_interval``): a percentile bootstrap over the per-request samples of both
sides, resampled within each stream and prompt (a stratified bootstrap: each stream keeps its number of
requests of each prompt and its share of busy time), ``RESAMPLES`` times with a fixed seed, so the same
samples give the same verdict.
It sees the request-to-request spread, not what moves a whole side (the machine's load while one side was
measured, a server's warm state), so the interval is then widened by each side's ``drift`` (how the
server's pace moved across the window's parts, one standard deviation), at least ``SIDE_ERROR``: the two sides'
deviations, independent, add in quadrature, and the interval is widened by that many standard deviations as its
confidence asks (``side_margin``: 1.96 of them at 95 %).
"""

from __future__ import absolute_import, division, print_function

import random
import statistics

# The bootstrap: 1000 resamples put the 2.5/97.5 % percentiles within about 1 % of the interval's width of
# where 10,000 would (the tests check coverage against known distributions); the seed makes a verdict
# reproducible from its samples.
RESAMPLES = 1000
SEED = 20261207
CONFIDENCE = 0.95
# One standard deviation of a side's figure that neither the request bootstrap nor its drift can see, at least:
# the machine's load moving between the two sides' windows. Measured (docs/bench.md, "Two identical units"):
# two identical simulated units, each measured as the gate measures it, one after the other, 20 pairs: the
# gains' deviation was 0.6 % on a quiet machine and 1.3 % with one core busy (0.43 % and 0.9 % a side); CI read
# -2.0 % once on a fresh machine. A deviation from three parts' paces can read half its true value, so the
# floor is 1.5 % a side, not 0.9 %.
SIDE_ERROR = 0.015
SLO_KEYS = ("ttft_s", "itl_s")


def as_number(name, value, what="a number", example=None):
    """``value`` as a float, or a ValueError naming ``name``: yes/no is no number (YAML's true would read as 1)."""
    if isinstance(value, bool):
        raise ValueError(f"{name} is {what}, not yes/no; got {str(value).lower()}")
    try:
        return float(value)
    except (TypeError, ValueError):
        eg = f", e.g. {example}" if example else ""
        raise ValueError(f"{name} must be {what}{eg}; got {value!r}") from None


def check_slo(slo, where="slo"):
    """The SLO as {ttft_s, itl_s} of positive floats (absent keys dropped), or a ValueError naming the fix."""
    if slo is None:
        return {}
    if not isinstance(slo, dict):
        raise ValueError(f"{where} must be a mapping such as {{ttft_s: 1.0, itl_s: 0.05}}; got {slo!r}")
    unknown = set(slo) - set(SLO_KEYS)
    if unknown:
        raise ValueError(
            "{} has unknown key(s) {}: it takes ttft_s (time to first token) and itl_s (mean time per output "
            "token after the first), in seconds".format(where, ", ".join(sorted(map(str, unknown))))
        )
    out = {}
    for key in SLO_KEYS:
        value = slo.get(key)
        if value is None:
            continue
        value = as_number(f"{where}.{key}", value, "a number of seconds", "1.0")
        if value <= 0:
            raise ValueError(f"{where}.{key} must be a positive number of seconds; got {value:g}")
        out[key] = value
    return out


def completed(sample):
    return not sample.get("error")


def meets(sample, slo):
    """Whether one request completed and met every bound the SLO gives."""
    if not completed(sample):
        return False
    for key in SLO_KEYS:
        bound = (slo or {}).get(key)
        value = sample.get(key)
        if bound is not None and value is not None and value > bound:
            return False
        if bound is not None and value is None and key == "ttft_s":
            return False  # no first token seen: it cannot have met a first-token bound
    return True


def _streams(samples):
    by = {}
    for s in samples:
        by.setdefault(s["stream"], []).append(s)
    return by


def _span(mine):
    return max(s["end_s"] for s in mine) - min(s["start_s"] for s in mine)


def stream_rate(samples, count):
    """Sum over the streams of count(sample) over the stream's span (seconds): the closed loop's rate."""
    total = 0.0
    for mine in _streams(samples).values():
        span = _span(mine)
        if span > 0:
            total += sum(count(s) for s in mine) / span
    return total


def figures(samples, slo):
    """{slo_attainment, goodput_requests_per_second, goodput_tokens_per_second} of one level's samples.

    ``slo_attainment`` is the share of completed requests that met every bound (None when none completed);
    with no bound given every completed request counts, and goodput is the level's throughput."""
    done = [s for s in samples if completed(s)]
    good = [s for s in done if meets(s, slo)]
    return {
        "slo_attainment": round(len(good) / len(done), 4) if done else None,
        "goodput_requests_per_second": round(stream_rate(samples, lambda s: meets(s, slo)), 3) if done else None,
        "goodput_tokens_per_second": round(stream_rate(samples, lambda s: s["tokens"] if meets(s, slo) else 0), 2)
        if done
        else None,
    }


def goodput(samples, slo):
    """Goodput tok/s (unrounded) of one level's samples under ``slo``."""
    return stream_rate(samples, lambda s: s["tokens"] if meets(s, slo) else 0)


class _Resampler:
    """Stratified bootstrap of one side's goodput: within each stream, each prompt's requests drawn again with
    replacement (a closed-loop stream walks the prompt set in turn, so how many requests of each prompt it sent is
    by design, not chance: only the requests of one prompt stand in for each other).

    A stream's resampled rate is its resampled good tokens over its resampled busy time, times the stream's
    span per busy second (the gaps between its requests), so the original sample gives the point estimate."""

    def __init__(self, samples, slo):
        self.streams = []
        for mine in _streams(samples).values():
            span = _span(mine)
            busy = sum(s["end_s"] - s["start_s"] for s in mine)
            if span <= 0 or busy <= 0:
                continue
            cells = {}
            for s in mine:
                pair = (s["tokens"] if meets(s, slo) else 0, s["end_s"] - s["start_s"])
                cells.setdefault(s.get("prompt"), []).append(pair)
            self.streams.append((list(cells.values()), busy / span))

    def draw(self, rng):
        total = 0.0
        for cells, busy_share in self.streams:
            tokens = busy = 0.0
            for pairs in cells:
                n = len(pairs)
                for _i in range(n):
                    t, d = pairs[int(rng.random() * n)]
                    tokens += t
                    busy += d
            if busy > 0:
                total += tokens / busy * busy_share
        return total


def side_margin(*deviations, confidence=CONFIDENCE):
    """How far, as a fraction, the sides' own errors (one standard deviation each, independent) can move a gain
    at ``confidence``: z * sqrt(sum of squares), z the normal quantile (1.96 at 95 %)."""
    z = statistics.NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    return z * sum(d * d for d in deviations) ** 0.5


def drift(samples, parts):
    """One standard deviation of a side's figure from how its server's pace moved during the window: the window
    (by the requests' starts) cut into ``parts``, each part's slowness the time its requests took over what the
    same prompts took on average, and the deviation of those over sqrt(parts). Each part is weighed against
    the same prompts, so the prompt mix of a part (by design in a closed loop) is no drift; a load that
    rose half-way through is. 0 with fewer than two parts or two requests a part."""
    done = [s for s in samples if completed(s)]
    if parts < 2 or len(done) < 2 * parts:
        return 0.0
    by_prompt = {}
    for s in done:
        by_prompt.setdefault(_key(s), []).append(s["end_s"] - s["start_s"])
    mean = {k: sum(v) / len(v) for k, v in by_prompt.items()}
    last = max(s["start_s"] for s in done)
    width = last / parts if last > 0 else 0
    took = [[0.0, 0.0] for _p in range(parts)]
    for s in done:
        k = min(parts - 1, int(s["start_s"] / width)) if width > 0 else 0
        took[k][0] += s["end_s"] - s["start_s"]
        took[k][1] += mean[_key(s)]
    factors = [t / m for t, m in took if m > 0]
    if len(factors) < 2:
        return 0.0
    return statistics.stdev(factors) / len(factors) ** 0.5


def _key(sample):
    return sample.get("prompt") if sample.get("prompt") is not None else sample.get("tokens")


def percentile_of_sorted(data, q):
    """The q-th fraction (0-1) of sorted ``data``, linear between ranks."""
    pos = (len(data) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(data) - 1)
    return data[lo] + (data[hi] - data[lo]) * (pos - lo)


def bootstrap(samples, slo, resamples=RESAMPLES, seed=SEED):
    """The sorted bootstrap distribution of one side's goodput tok/s."""
    rng = random.Random(seed)
    side = _Resampler(samples, slo)
    return sorted(side.draw(rng) for _i in range(resamples))


def rate_interval(samples, slo, confidence=CONFIDENCE, resamples=RESAMPLES, seed=SEED):
    """(low, high) of one side's goodput tok/s: the bootstrap percentile interval."""
    dist = bootstrap(samples, slo, resamples, seed)
    tail = (1 - confidence) / 2
    return percentile_of_sorted(dist, tail), percentile_of_sorted(dist, 1 - tail)


def gain_interval(new, before, slo, drift=0.0, confidence=CONFIDENCE, resamples=RESAMPLES, seed=SEED):
    """(gain, low, high) of new's goodput over before's, as fractions (0.1 = +10 %), or None when before's is 0.

    The bootstrap resamples both sides independently; the percentile interval of new*/before* - 1 is then
    widened by ``drift`` (the two sides' share of error that resampling cannot see, as a fraction) on each
    side, multiplicatively: (1 + low) * (1 - drift) - 1 and (1 + high) * (1 + drift) - 1."""
    point_new, point_before = goodput(new, slo), goodput(before, slo)
    if point_before <= 0:
        return None
    rng = random.Random(seed)
    a, b = _Resampler(new, slo), _Resampler(before, slo)
    ratios = []
    for _i in range(resamples):
        x, y = a.draw(rng), b.draw(rng)
        if y > 0:
            ratios.append(x / y - 1)
    if not ratios:
        return None
    ratios.sort()
    tail = (1 - confidence) / 2
    low, high = percentile_of_sorted(ratios, tail), percentile_of_sorted(ratios, 1 - tail)
    gain = point_new / point_before - 1
    low, high = min(low, gain), max(high, gain)
    return gain, (1 + low) * (1 - drift) - 1, (1 + high) * (1 + drift) - 1
