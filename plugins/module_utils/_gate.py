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

import statistics

# Characters of each text kept for the report (the equivalence texts are N tokens, so short).
TEXT_CAP = 600


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
                    "errors": (lv.get("errors") or {}).get("count", 0),
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
        "ttft_s": first.get("ttft_s"),
        "greedy": greedy,
        "token_sources": sorted(sources),
    }


def required_gain(min_gain, concurrency):
    """The gain a level must reach: one number for every level, or a mapping level -> gain (None: not gated)."""
    if min_gain is None:
        return None
    if isinstance(min_gain, dict):
        for key, value in min_gain.items():
            if int(key) == int(concurrency):
                return None if value is None else float(value)
        return None
    return float(min_gain)


def _pct(x):
    return f"{x * 100:+.1f} %"


def _first_difference(a, b):
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n if len(a) != len(b) else None


def compare(candidate, baseline, min_gain=None, equivalence_tokens=0, names=("before", "new")):
    """The gate and the equivalence check: {gain, gains, noise, within_noise, gate, gate_msg, equivalence}.

    ``gains`` has one entry per level measured on both sides: {concurrency, before, new, gain, required, ok,
    spread_before, spread_new, noise (their sum), within_noise}. ``gain`` (and noise, within_noise) are the first
    level's. ``gate`` is ``off`` (no min_gain), ``pass``, ``fail`` (a level below its required gain: the message
    names the first such level and both rates) or ``unmeasured`` (a side has no figure: fails closed).
    ``names``: the two services as the message calls them (e.g. NEXTN and DDTREE). ``equivalence.ok`` is None
    when not checked.
    """
    candidate = candidate or {}
    baseline = baseline or {}
    before_name, new_name = names
    out = {"gain": None, "gains": [], "noise": None, "within_noise": None, "gate": "off", "gate_msg": ""}
    new_levels = {lv["concurrency"]: lv for lv in candidate.get("levels") or []}
    for b in baseline.get("levels") or []:
        c = new_levels.get(b["concurrency"])
        if c is None or not b.get("tokens_per_second") or c.get("tokens_per_second") is None:
            continue
        gain = c["tokens_per_second"] / b["tokens_per_second"] - 1
        noise = (b.get("spread") or 0) + (c.get("spread") or 0)
        need = required_gain(min_gain, b["concurrency"])
        out["gains"].append(
            {
                "concurrency": b["concurrency"],
                "before": b["tokens_per_second"],
                "new": c["tokens_per_second"],
                "gain": round(gain, 4),
                "required": need,
                "ok": None if need is None else gain >= need,
                "spread_before": b.get("spread"),
                "spread_new": c.get("spread"),
                "noise": round(noise, 4),
                "within_noise": abs(gain) <= noise,
            }
        )
    if out["gains"]:
        first = out["gains"][0]
        out.update(gain=first["gain"], noise=first["noise"], within_noise=first["within_noise"])
    gated = [g for g in out["gains"] if g["required"] is not None]
    if min_gain is not None:
        measured = {g["concurrency"] for g in out["gains"]}
        missing = [lv["concurrency"] for lv in baseline.get("levels") or [] if lv["concurrency"] not in measured]
        if not out["gains"] or missing:
            side = "baseline" if not baseline.get("measured") else "new service"
            why = "; ".join((baseline if side == "baseline" else candidate).get("failures") or []) or (
                "no figure at concurrency " + ", ".join(str(m) for m in missing) if missing else "no complete run"
            )
            out["gate"] = "unmeasured"
            out["gate_msg"] = f"gain gate not met: the {side} could not be measured ({why})"
        else:
            failed = [g for g in gated if not g["ok"]]
            out["gate"] = "fail" if failed else "pass"
            shown = failed[0] if failed else min(gated, key=lambda g: g["gain"] - g["required"]) if gated else None
            if shown is None:
                out["gate"] = "off"
            else:
                out["gate_msg"] = "gain gate {}: gain {} at concurrency {} ({} {} tok/s, {} {} tok/s), needs {}".format(
                    "not met" if failed else "met",
                    _pct(shown["gain"]),
                    shown["concurrency"],
                    before_name,
                    _num(shown["before"]),
                    new_name,
                    _num(shown["new"]),
                    _pct(shown["required"]),
                )
                others = [g for g in out["gains"] if g is not shown]
                if others:
                    out["gate_msg"] += "; " + ", ".join(
                        "{} at concurrency {}".format(_pct(g["gain"]), g["concurrency"]) for g in others
                    )
                if shown["within_noise"]:
                    out["gate_msg"] += (
                        "; the spread at concurrency {} ({}) is larger than the gain: this verdict is within the "
                        "noise of the measurement (a longer ddtree_deploy_gate_duration narrows it)".format(
                            shown["concurrency"], _pct(shown["noise"]).lstrip("+")
                        )
                    )
    out["equivalence"] = _equivalence(candidate, baseline, equivalence_tokens)
    return out


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


def not_measured_reason(service, unit):
    """Why the baseline was not measured, from the snapshot's view of the unit before the switch."""
    unit = unit or {}
    if unit.get("active"):
        return (
            f"{service} runs, and no check compares with it "
            "(ddtree_deploy_min_gain null, ddtree_deploy_equivalence_tokens 0)"
        )
    if not unit.get("exists"):
        return f"{service} has no unit, so there is nothing to measure"
    return f"{service} is not running (systemd: {unit.get('systemd_state')}), so there is nothing to measure"


def baseline(measured, unit=None, service="", min_gain=None, equivalence_tokens=0, without_baseline=False):
    """The gate's baseline side as the deploy keeps it, with ``stop``: the fail-closed message when a check
    that compares with the baseline (the gain gate, or the output equivalence of a running unit) has none,
    else None. ``measured``: the side's summary, or None when it was not measured (no check needs it, or no
    service runs); ``unit``: the snapshot's view of the unit before the switch."""
    side = dict(measured) if measured is not None else summarise(not_measured=not_measured_reason(service, unit))
    side["stop"] = None
    if side.get("measured") or without_baseline:
        return side
    if min_gain is not None:
        check = f"The gain gate (ddtree_deploy_min_gain {min_gain})"
    elif int(equivalence_tokens or 0) > 0 and (unit or {}).get("active"):
        check = f"The output-equivalence check (ddtree_deploy_equivalence_tokens {equivalence_tokens})"
    else:
        return side
    side["stop"] = (
        f"the baseline cannot be measured: {'; '.join(side.get('failures') or [])}. {check} compares the new "
        "service with it, so the deploy stops before the switch. Make the running service answer, or set "
        "ddtree_deploy_gate_without_baseline: true to deploy without those checks"
    )
    return side
