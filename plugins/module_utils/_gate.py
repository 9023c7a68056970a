# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gain gate and the output-equivalence check. Pure Python.

The ddtree_deploy role measures the baseline (right before the switch) and the candidate the same way:

- the sweep: one ``llm_bench`` call, closed-loop load at each of ``ddtree_deploy_gate_concurrency``'s levels
  from the gate's prompt set (``roles/ddtree_deploy/vars/gate_prompts.yml``), greedy; each level's window is
  split into ``repeats`` measurements, whose median is the level's rate and whose spread its noise. Tokens
  are the server's count (``usage``), so a speculative server that sends several tokens per chunk is
  counted honestly. Speculative decoding wins most at one stream and loses its lead as the batch grows,
  so a gain at one stream says nothing about the batch a server carries: every level is gated.
- equivalence runs: in the same ``llm_bench`` call (``greedy_tokens``), after the levels, every prompt once, at
  one stream, greedy, ``max_tokens`` = the tokens compared, so the server's own tokenizer decides where "the
  first N tokens" end.

``summarise`` turns one side's results into per-level rates and spreads; ``compare`` applies the gate at
every level (``min_gain`` one number, or a mapping level -> gain) and compares the greedy texts.
"""

from __future__ import absolute_import, division, print_function

import math
import statistics
from collections.abc import Mapping

from ansible_collections.ddtree.sglang.plugins.module_utils._goodput import (
    SIDE_ERROR,
    drift,
    gain_interval,
    side_margin,
)
from ansible_collections.ddtree.sglang.plugins.module_utils._goodput import figures as goodput_figures
from ansible_collections.ddtree.sglang.plugins.module_utils._values import show

# Characters of each text kept for the report (the equivalence texts are N tokens, so short).
TEXT_CAP = 600
# The SLO derived from the baseline when the operator gives none (docs/probe.md, "the deploy's gain gate"): each bound
# twice the baseline's p90 at that level, so the baseline meets it (its p90 is itself a tail, and twice it
# covers a slow tenth) and a candidate that doubles the wait does not; the first token at least 0.25 s over
# the baseline's p90, as a first token 50 ms late at one stream is no wait a user notices.
DERIVED_FACTOR = 2.0
DERIVED_TTFT_MARGIN_S = 0.25


def _median_spread(values):
    if not values:
        return None, None
    med = statistics.median(values)
    spread = (max(values) - min(values)) / med if med > 0 else None
    return med, spread


def summarise(bench=None, not_measured=None):
    """One side: {measured, failures, levels, median, spread, ttft_s, greedy, token_sources}.

    ``not_measured``: why the side was not measured at all (no service running); it is the side's
    one failure, and ``bench`` is not read.

    ``bench``: the side's ``llm_bench`` result (None when neither the gain gate nor the equivalence check is
    on): its levels (``concurrency`` [] when the gain gate is off) and its ``greedy`` answers (empty when the
    equivalence check is off). Its ``reasons`` are the side's failures: the role registers the call with
    ``failed_when: false``, which rewrites ``failed``, so they are read instead. Each level gives
    ``tokens_per_second`` (the median of its ``repeats`` measurements, else the level's aggregate), its
    ``rates`` and their ``spread``. ``median``, ``spread`` and ``ttft_s`` are the first level's (one stream by
    default), the figures the report's one-line summary shows.
    """
    failures = []
    levels = []
    sources = set()
    greedy = {}
    if not_measured:
        failures.append(str(not_measured))
        bench = None
    if bench is not None:
        if "reasons" in bench:
            failures.extend(bench["reasons"])
        elif bench.get("failed") or bench.get("msg"):
            # No reasons: the module did not run (not found, the host unreachable, ...); with failed_when
            # false its message is all that says so.
            failures.append(bench.get("msg") or "the call failed")
        for lv in bench.get("levels") or []:
            rates = [r for r in lv.get("rates") or [] if r is not None]
            med, spread = _median_spread(rates)
            if med is None:
                med = lv.get("output_tokens_per_second")
            if lv.get("token_count_source"):
                sources.add(lv["token_count_source"])
            levels.append(
                {
                    "concurrency": lv.get("concurrency"),
                    "tokens_per_second": None if med is None else round(med, 3),
                    "rates": [round(r, 3) for r in rates],
                    "spread": None if spread is None else round(spread, 4),
                    "ttft_s": (lv.get("ttft_s") or {}).get("p50"),
                    "ttft_p90_s": (lv.get("ttft_s") or {}).get("p90"),
                    "request_itl_p90_s": (lv.get("request_itl_s") or {}).get("p90"),
                    "errors": (lv.get("errors") or {}).get("count", 0),
                    # Every counted request, for the gate's goodput under the SLO and its interval (_goodput.py).
                    "samples": list(lv.get("samples") or []),
                }
            )
        # concurrency [] asks for no level (the gain gate is off): no level is then no failure.
        if not failures and not levels and bench.get("concurrency") != []:
            failures.append("the sweep measured no level")
        for answer in bench.get("greedy") or []:
            ok = answer.get("verdict") == "pass"
            text = (answer.get("text") or "") + (answer.get("reasoning_text") or "")
            greedy[answer.get("id", "?")] = {
                "ok": ok,
                "text": text[:TEXT_CAP],
                "text_truncated": len(text) > TEXT_CAP,
                "completion_tokens": answer.get("completion_tokens"),
                "finish_reason": answer.get("finish_reason"),
            }
            if ok:
                sources.add(answer.get("token_count_source") or "unknown")
    first = levels[0] if levels else {}
    return {
        "measured": bool(bench is not None and not failures),
        "failures": failures,
        "levels": levels,
        "median": first.get("tokens_per_second"),
        "spread": first.get("spread"),
        # The unit's first token at one stream: the first level's, else the greedy answers' (one stream, one
        # at a time), so the candidate's probe budget derives from it with the gain gate off too.
        "ttft_s": first.get("ttft_s") if levels else _greedy_ttft(bench),
        "greedy": greedy,
        "token_sources": sorted(sources),
    }


def _greedy_ttft(bench):
    ttfts = sorted(a["ttft_s"] for a in (bench or {}).get("greedy") or [] if a.get("ttft_s") is not None)
    return ttfts[len(ttfts) // 2] if ttfts else None


MIN_GAIN_TAKES = (
    "a fraction above -1 (0.05 is 5 %), a mapping of concurrency levels to such fractions ({1: 0.1, 16: 0.0}), or null"
)


def _fraction(value):
    """A gain as a float above -1 (a number written as text is one), else None; yes/no is no gain (float(True)
    would read +100 %)."""
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) and number > -1 else None


def _level_of(key):
    """A mapping's level as a whole number of streams of 1 or more, else None."""
    if isinstance(key, bool):
        return None
    try:
        level = int(str(key).strip())
    except ValueError:
        return None
    return level if level >= 1 else None


def check_min_gain(min_gain, where="min_gain"):
    """``min_gain`` as the gate reads it: None, a float above -1, or {level: float or None}; else a ValueError
    naming ``where``, what it takes and what it got (issue 38: 'ten' read "could not convert string to float",
    true read +100 %). The role's preflight refuses the same (_deploy_settings); this is the filters' own word."""
    if min_gain is None:  # the filters read a role variable's '' as null (_values.null)
        return None
    got = "yes/no (true would read +100 %)" if isinstance(min_gain, bool) else show(min_gain)
    if isinstance(min_gain, Mapping):
        out = {}
        for key, value in min_gain.items():
            level, gain = _level_of(key), None if value is None else _fraction(value)
            if level is None or (value is not None and gain is None):
                wrong = f"level {show(key)} is not a whole number of streams, 1 or more"
                wrong = f"{show(value)} at {key}" if level else wrong
                raise ValueError(f"{where} must be {MIN_GAIN_TAKES}; got {got}: {wrong}")
            out[level] = gain
        return out
    gain = _fraction(min_gain)
    if gain is None:
        raise ValueError(f"{where} must be {MIN_GAIN_TAKES}; got {got}")
    return gain


def required_gain(min_gain, concurrency):
    """The gain a level must reach: one number for every level, or a mapping level -> gain (None: not gated).
    A min_gain the gate cannot read is a ValueError naming what it takes (check_min_gain)."""
    min_gain = check_min_gain(min_gain)
    if isinstance(min_gain, dict):
        return min_gain.get(int(concurrency))
    return min_gain


def _pct(x):
    return "?" if x is None else f"{x * 100:+.1f} %"


def _first_difference(a, b):
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n if len(a) != len(b) else None


def compare(
    candidate,
    baseline,
    min_gain=None,
    equivalence_tokens=0,
    names=("before", "new"),
    slo=None,
    inconclusive=None,
    judge_default=False,
    extended=None,
):
    """The gate and the equivalence check: {gain, gains, noise, within_noise, gate, gate_msg, extend, equivalence}.

    Each level measured on both sides is judged on goodput (_goodput.py): the candidate's good tokens per
    second under the SLO against the baseline's, with an interval (``verdict``: better, worse or
    inconclusive against the level's required gain). ``slo`` ({ttft_s, itl_s}) is the operator's; without
    one each level derives its own from the baseline's latencies there (``derived_slo``). ``min_gain``: one
    number, a mapping level -> gain, or None: then ``judge_default`` judges "not worse" (gain 0 required)
    and otherwise the gate is off (measured, not judged).

    ``inconclusive`` (fail, pass, extend; None: fail where the level requires a gain above 0, pass where it
    requires none) decides a level whose interval holds the required gain. With extend, ``gate`` is ``extend`` and
    ``extend`` lists the levels to measure once more on the candidate, longer: ``extended`` is that
    measurement (a summary), whose levels replace the candidate's, and a level still inconclusive fails.

    ``gains`` has one entry per level: {concurrency, before, new (tok/s), tokens_per_second_gain, goodput_before,
    goodput_new, gain (goodput's), interval, attainment_before, attainment_new, slo, slo_source, required,
    verdict, ok, spread_before, spread_new, noise, within_noise}. ``gain`` (and noise, within_noise) are the
    first level's. ``gate``: off, pass, fail, extend, or unmeasured (a side has no figure: fails closed).
    """
    min_gain = check_min_gain(min_gain)
    candidate = _with_extension(candidate or {}, extended)
    baseline = baseline or {}
    gated = min_gain is not None or judge_default
    out = {"gain": None, "gains": [], "noise": None, "within_noise": None, "gate": "off", "gate_msg": "", "extend": []}
    new_levels = {lv["concurrency"]: lv for lv in candidate.get("levels") or []}
    again = {lv["concurrency"] for lv in (extended or {}).get("levels") or []}
    for b in baseline.get("levels") or []:
        c = new_levels.get(b["concurrency"])
        if c is None or not b.get("tokens_per_second") or c.get("tokens_per_second") is None:
            continue
        need = (0.0 if judge_default else None) if min_gain is None else required_gain(min_gain, b["concurrency"])
        # Unset, the burden of proof: a gain required must be shown; a level that requires none passes unless
        # the candidate is shown worse.
        policy = inconclusive or ("fail" if need is not None and need > 0 else "pass")
        out["gains"].append(_level(b, c, need, slo, policy, b["concurrency"] in again))
    if out["gains"]:
        first = out["gains"][0]
        out.update(gain=first["gain"], noise=first["noise"], within_noise=first["within_noise"])
    if gated:
        out.update(_outcome(out["gains"], candidate, baseline, names))
    out["equivalence"] = _equivalence(candidate, baseline, equivalence_tokens)
    return out


def _with_extension(candidate, extended):
    """The candidate with the levels measured again (``extended``'s) in place of its first measurement."""
    if not extended:
        return candidate
    again = {lv["concurrency"]: lv for lv in extended.get("levels") or []}
    merged = dict(candidate)
    merged["levels"] = [again.get(lv["concurrency"], lv) for lv in candidate.get("levels") or []]
    merged["failures"] = list(candidate.get("failures") or []) + list(extended.get("failures") or [])
    return merged


def derived_slo(level):
    """The SLO a level is judged on when the operator gives none: from the baseline's own latencies there,
    each bound DERIVED_FACTOR times its p90 (TTFT at least DERIVED_TTFT_MARGIN_S over it), so the baseline
    meets it and a candidate that multiplies the first-token wait (or the time per token) does not."""
    slo = {}
    ttft = level.get("ttft_p90_s")
    if ttft:
        slo["ttft_s"] = round(max(DERIVED_FACTOR * ttft, ttft + DERIVED_TTFT_MARGIN_S), 4)
    itl = level.get("request_itl_p90_s")
    if itl:
        slo["itl_s"] = round(DERIVED_FACTOR * itl, 5)
    return slo


def _drift(level):
    """One side's error the request bootstrap cannot see: how its server's pace moved across the window's parts
    (_goodput.drift, as many parts as its repeats), at least _goodput.SIDE_ERROR."""
    parts = len(level.get("rates") or []) or 1
    return max(SIDE_ERROR, drift(level.get("samples") or [], parts))


def _level(b, c, need, slo, policy, extended):
    """One level, the baseline ``b`` against the candidate ``c`` (summaries' levels)."""
    source = "given" if slo else "derived"
    level_slo = dict(slo) if slo else derived_slo(b)
    drift = side_margin(_drift(b), _drift(c))
    entry = {
        "concurrency": b["concurrency"],
        "before": b["tokens_per_second"],
        "new": c["tokens_per_second"],
        "tokens_per_second_gain": round(c["tokens_per_second"] / b["tokens_per_second"] - 1, 4),
        "slo": level_slo,
        "slo_source": source,
        "required": need,
        "spread_before": b.get("spread"),
        "spread_new": c.get("spread"),
        "extended": extended,
    }
    bs, cs = b.get("samples") or [], c.get("samples") or []
    if bs and cs:
        fb, fc = goodput_figures(bs, level_slo), goodput_figures(cs, level_slo)
        entry.update(
            goodput_before=fb["goodput_tokens_per_second"],
            goodput_new=fc["goodput_tokens_per_second"],
            attainment_before=fb["slo_attainment"],
            attainment_new=fc["slo_attainment"],
        )
        found = gain_interval(cs, bs, level_slo, drift=drift)
    else:  # a side without samples (an older llm_bench): its tok/s, with the drift as its only interval
        g = entry["tokens_per_second_gain"]
        found = (g, (1 + g) * (1 - drift) - 1, (1 + g) * (1 + drift) - 1)
        entry.update(goodput_before=None, goodput_new=None, attainment_before=None, attainment_new=None)
    if found is None:  # the baseline met the SLO with no request: no gain to speak of
        gain = low = high = None
        verdict = "better" if entry["goodput_new"] else "inconclusive"
    else:
        gain, low, high = (round(x, 4) for x in found)
        verdict = _verdict(low, high, need)
    ok = {"better": True, "worse": False}.get(verdict)
    if verdict == "inconclusive" and need is not None:
        ok = True if policy == "pass" else False if policy == "fail" or extended else None
    entry.update(
        gain=gain,
        interval=None if gain is None else [low, high],
        verdict=verdict if need is not None else "measured",
        ok=None if need is None else ok,
        noise=None if gain is None else round((high - low) / 2, 4),
        within_noise=verdict == "inconclusive",
    )
    return entry


def _verdict(low, high, need):
    target = 0.0 if need is None else need
    if low >= target:
        return "better"
    if high < target:
        return "worse"
    return "inconclusive"


def _outcome(gains, candidate, baseline, names):
    """{gate, gate_msg, extend} of the judged levels."""
    before_name, new_name = names
    measured = {g["concurrency"] for g in gains}
    missing = [lv["concurrency"] for lv in baseline.get("levels") or [] if lv["concurrency"] not in measured]
    if not gains or missing:
        side = "baseline" if not baseline.get("measured") else "new service"
        why = "; ".join((baseline if side == "baseline" else candidate).get("failures") or []) or (
            "no figure at concurrency " + ", ".join(str(m) for m in missing) if missing else "no complete run"
        )
        return {"gate": "unmeasured", "gate_msg": f"gain gate not met: the {side} could not be measured ({why})"}
    gated = [g for g in gains if g["required"] is not None]
    if not gated:
        return {"gate": "off"}
    failed = [g for g in gated if g["ok"] is False]
    extend = [g["concurrency"] for g in gated if g["ok"] is None]
    gate = "fail" if failed else "extend" if extend else "pass"
    shown = (
        failed[0] if failed else min(gated, key=lambda g: (g["gain"] if g["gain"] is not None else 0) - g["required"])
    )
    msg = "gain gate {}: {}".format(
        {"fail": "not met", "pass": "met", "extend": "inconclusive"}[gate], _level_text(shown, before_name, new_name)
    )
    others = [g for g in gains if g is not shown]
    if others:
        msg += "; " + "; ".join(
            "{} at concurrency {} ({})".format(_pct(g["gain"]), g["concurrency"], g["verdict"]) for g in others
        )
    if gate == "extend":
        msg += "; measuring concurrency {} once more, longer (ddtree_deploy_gate_inconclusive: extend)".format(
            ", ".join(str(x) for x in extend)
        )
    return {"gate": gate, "gate_msg": msg, "extend": extend}


def _level_text(g, before_name, new_name):
    """ "goodput -100.0 % at concurrency 16 (interval ...), needs +0.0 %: 0 % of requests met TTFT <= 1 s (NEXTN
    100 %); tok/s ...": the level, its verdict, the SLO and both attainments."""
    if g["gain"] is None:
        head = f"no goodput to compare at concurrency {g['concurrency']}: no request of {before_name} met the SLO"
    else:
        low, high = g["interval"]
        head = "goodput {} at concurrency {} ({}, interval {} to {}), needs {}".format(
            _pct(g["gain"]), g["concurrency"], g["verdict"], _pct(low), _pct(high), _pct(g["required"])
        )
    if g.get("attainment_new") is not None:
        head += ": {} of requests met {} ({} {})".format(
            _share(g["attainment_new"]), _slo_text(g), before_name, _share(g["attainment_before"])
        )
    return head + "; tok/s {} ({} {} tok/s, {} {} tok/s)".format(
        _pct(g["tokens_per_second_gain"]), before_name, _num(g["before"]), new_name, _num(g["new"])
    )


def _slo_text(g):
    slo = g.get("slo") or {}
    parts = []
    if "ttft_s" in slo:
        parts.append(f"TTFT <= {_sec(slo['ttft_s'])}")
    if "itl_s" in slo:
        parts.append(f"ITL <= {_sec(slo['itl_s'])}")
    text = " and ".join(parts) or "no bound"
    if g.get("slo_source") == "derived":
        text += " (derived from the baseline's p90)"
    return text


def _share(x):
    return "?" if x is None else f"{x * 100:.0f} %"


def _sec(x):
    return f"{x:g} s" if x >= 0.1 else f"{x * 1000:g} ms"


def _num(x):
    return f"{x:.0f}" if abs(x) >= 100 else f"{x:.1f}"


def _equivalence(candidate, baseline, tokens):
    eq = {"tokens": int(tokens or 0), "ok": None, "checked": [], "mismatches": [], "msg": ""}
    if not eq["tokens"]:
        eq["msg"] = "off (ddtree_deploy_equivalence_tokens: 0)"
        return eq
    b_greedy, c_greedy = baseline.get("greedy") or {}, candidate.get("greedy") or {}
    if not b_greedy:
        eq["msg"] = "not checked: no baseline answers"
        return eq
    problems = []
    for pid, b in b_greedy.items():
        c = c_greedy.get(pid)
        if c is None or not c.get("ok") or not b.get("ok"):
            problems.append(f"{pid}: no answer to compare")
            continue
        eq["checked"].append(pid)
        if b["text"] != c["text"]:
            eq["mismatches"].append(
                {
                    "prompt": pid,
                    "baseline": b["text"],
                    "new": c["text"],
                    "baseline_tokens": b.get("completion_tokens"),
                    "new_tokens": c.get("completion_tokens"),
                    "first_difference_char": _first_difference(b["text"], c["text"]),
                }
            )
    if problems:
        eq["ok"] = False
        eq["msg"] = "output equivalence not checked: " + "; ".join(problems)
    elif eq["mismatches"]:
        eq["ok"] = False
        eq["msg"] = "output differs from the baseline at temperature 0 within the first {} tokens: {}".format(
            eq["tokens"],
            "; ".join(
                "{}: before {!r}, new {!r}".format(m["prompt"], m["baseline"][:80], m["new"][:80])
                for m in eq["mismatches"]
            ),
        )
    else:
        eq["ok"] = True
        eq["msg"] = "the first {} tokens match on {} prompt(s)".format(eq["tokens"], len(eq["checked"]))
    return eq


def verdict(candidate, baseline, extended=None, traffic=None, levels_given=None, mix=None, **options):
    """The gate's verdict in one step from both sides' ``llm_bench`` results (as the role registers them), the
    extension's (``extended``, the candidate measured again at the levels an inconclusive verdict named), and
    where the levels came from: compare()'s verdict, with ``baseline`` and ``new`` (both sides' summaries) and
    ``levels_msg`` (levels_note). ``options``: compare()'s (min_gain, equivalence_tokens, names, slo,
    inconclusive, judge_default)."""
    new, before = summarise(candidate), summarise(baseline)
    again = summarise(extended) if extended is not None else None
    out = compare(new, before, extended=again, **options)
    levels = [lv["concurrency"] for lv in before["levels"]]
    out.update(baseline=before, new=new, levels_msg=levels_note(levels, traffic, levels_given, mix))
    return out


def levels_note(levels, traffic=None, given=None, mix=None):
    """Where the gate's levels came from, in one line of the report, in the role's order
    (__ddtree_deploy_gate_levels): the operator's list, the host's own traffic (sglang_traffic's "your traffic:
    ..."), the operator's load mix (``mix`` without traffic: ddtree_deploy_load_mix), or the default, saying that
    Prometheus would give them."""
    shown = ", ".join(str(x) for x in levels)
    if given:
        return f"levels {shown}: ddtree_deploy_gate_concurrency"
    if traffic and traffic.get("levels"):
        return f"{traffic.get('msg')}: levels {shown}"
    if mix:
        return f"levels {shown}: the levels of ddtree_deploy_load_mix"
    return (
        f"levels {shown}: the default, one stream and the unit's max_running_requests up to 16 (no Prometheus: "
        "ddtree_deploy_prometheus_url gives the levels your traffic has)"
    )


def not_measured_reason(service, unit):
    """Why the baseline was not measured, from the snapshot's view of the unit before the switch."""
    unit = unit or {}
    if unit.get("active"):
        return (
            f"{service} runs, and no check compares with it "
            "(ddtree_deploy_min_gain null, ddtree_deploy_gate_not_worse false, ddtree_deploy_equivalence_tokens 0)"
        )
    if not unit.get("exists"):
        return f"{service} has no unit, so there is nothing to measure"
    return f"{service} is not running (systemd: {unit.get('systemd_state')}), so there is nothing to measure"


def baseline(
    measured, unit=None, service="", min_gain=None, equivalence_tokens=0, without_baseline=False, not_worse=False
):
    """The gate's baseline side as the deploy keeps it, with ``stop``: the fail-closed message when a check
    that compares with the baseline (the gain gate, or the output equivalence of a running unit) has none,
    else None. ``measured``: the side's summary, or None when it was not measured (no check needs it, or no
    service runs); ``unit``: the snapshot's view of the unit before the switch; ``not_worse``: the default
    judgement (no min_gain) is on, and needs the running unit's figures as the gain gate does."""
    side = dict(measured) if measured is not None else summarise(not_measured=not_measured_reason(service, unit))
    side["stop"] = None
    if side.get("measured") or without_baseline:
        return side
    if min_gain is not None:
        check = f"The gain gate (ddtree_deploy_min_gain {min_gain})"
    elif int(equivalence_tokens or 0) > 0 and (unit or {}).get("active"):
        check = f"The output-equivalence check (ddtree_deploy_equivalence_tokens {equivalence_tokens})"
    elif not_worse and (unit or {}).get("active"):
        check = "The not-worse judgement (ddtree_deploy_gate_not_worse true, ddtree_deploy_min_gain null)"
    else:
        return side
    side["stop"] = (
        f"the baseline cannot be measured: {'; '.join(side.get('failures') or [])}. {check} compares the new "
        "service with it, so the deploy stops before the switch. Make the running service answer, or set "
        "ddtree_deploy_gate_without_baseline: true to deploy without those checks"
    )
    return side
