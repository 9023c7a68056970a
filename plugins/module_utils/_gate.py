# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gain gate and the output-equivalence check, over llm_probe results. Pure Python.

The ddtree_deploy role runs one fixed prompt set (``roles/ddtree_deploy/vars/gate_prompts.yml``)
the same way on the baseline (right before the switch) and on the candidate:

- measurement runs: every prompt, ``repeats`` times, greedy. One repeat of the whole set gives
  one *set rate*: the completion tokens of all its prompts over the wall time of their requests
  (first token included, as a user sees it). Tokens are the server's count (``usage``), so a
  speculative server that sends several tokens per chunk is counted honestly.
- equivalence runs: every prompt once, greedy, ``max_tokens`` = the tokens compared, so the
  server's own tokenizer decides where "the first N tokens" end (no tokenizer on the controller).

``summarise`` turns one side's results into medians and spread; ``compare`` applies the gate to
the medians and compares the greedy texts.
"""

from __future__ import absolute_import, division, print_function

import statistics

# Characters of each text kept for the report (the equivalence texts are N tokens, so short).
TEXT_CAP = 600


def _item_prompt(item):
    """The prompt dict of a loop item: a measurement item is [prompt, repeat], an equivalence one the prompt."""
    if isinstance(item, (list, tuple)):
        return item[0], item[1]
    return item, None


def _probe_failure(res):
    """Why one registered llm_probe run failed, or None.

    The role registers its runs with ``failed_when: false`` (every run kept, no wall of
    "...ignoring" in the play's output), which rewrites ``failed`` to false: llm_probe's own
    ``verdict`` (returned always) is what says whether the run failed.
    """
    if res.get("skipped"):
        return "skipped"
    if res.get("failed") or res.get("verdict") == "fail":
        return res.get("msg") or "failed"
    return None


def _run_failure(res):
    """Why a measurement run gives no rate, or None."""
    why = _probe_failure(res)
    if why:
        return why
    if not res.get("completion_tokens"):
        return "no completion tokens"
    if not res.get("total_s"):
        return "no request time"
    return None


def _median_spread(values):
    if not values:
        return None, None
    med = statistics.median(values)
    spread = (max(values) - min(values)) / med if med > 0 else None
    return med, spread


def summarise(measure_results, greedy_results=None, equivalence_tokens=0):
    """One side: {measured, failures, rates, median, spread, prompts, greedy, token_sources}.

    ``measure_results`` / ``greedy_results``: the ``results`` of the two llm_probe loops
    (either may be empty when its check is off). A measurement run of the first repeat that asked
    for exactly ``equivalence_tokens`` tokens is that prompt's greedy run too (the role does not
    ask the same question twice).
    """
    failures = []
    by_repeat = {}
    per_prompt = {}
    sources = set()
    for res in measure_results or []:
        prompt, repeat = _item_prompt(res.get("item"))
        pid = prompt.get("id", "?")
        why = _run_failure(res)
        if why:
            failures.append(f"{pid} (run {repeat}): {why}")
            by_repeat.setdefault(repeat, []).append(None)
            continue
        sources.add(res.get("token_count_source") or "unknown")
        by_repeat.setdefault(repeat, []).append((res["completion_tokens"], float(res["total_s"])))
        p = per_prompt.setdefault(pid, {"rates": [], "ttft": []})
        p["rates"].append(res["completion_tokens"] / float(res["total_s"]))
        if res.get("ttft_s") is not None:
            p["ttft"].append(float(res["ttft_s"]))
    rates = []
    for repeat in sorted(by_repeat, key=lambda r: (r is None, r)):
        runs = by_repeat[repeat]
        if any(r is None for r in runs):
            continue  # an incomplete repeat is no set rate
        rates.append(sum(run[0] for run in runs) / sum(run[1] for run in runs))
    median, spread = _median_spread(rates)
    prompts = {}
    for pid, p in per_prompt.items():
        pm, ps = _median_spread(p["rates"])
        prompts[pid] = {
            "median_tokens_per_second": round(pm, 3),
            "spread": None if ps is None else round(ps, 4),
            "median_ttft_s": round(statistics.median(p["ttft"]), 3) if p["ttft"] else None,
        }
    greedy = {}
    reused = [
        r
        for r in measure_results or []
        if equivalence_tokens
        and _item_prompt(r.get("item"))[1] == 1
        and _item_prompt(r.get("item"))[0].get("max_tokens") == equivalence_tokens
    ]
    for res in reused + list(greedy_results or []):
        prompt = _item_prompt(res.get("item"))[0]
        pid = prompt.get("id", "?")
        why = _probe_failure(res)
        if why and res not in reused:
            failures.append(f"{pid} (greedy): {why}")
        text = (res.get("text") or "") + (res.get("reasoning_text") or "")
        greedy[pid] = {
            "ok": why is None,
            "text": text[:TEXT_CAP],
            "text_truncated": len(text) > TEXT_CAP,
            "completion_tokens": res.get("completion_tokens"),
            "finish_reason": res.get("finish_reason"),
        }
        if why is None:
            sources.add(res.get("token_count_source") or "unknown")
    ran = bool(measure_results) or bool(greedy_results)
    return {
        "measured": ran and not failures and (median is not None or not measure_results),
        "failures": failures,
        "rates": [round(r, 3) for r in rates],
        "median": None if median is None else round(median, 3),
        "spread": None if spread is None else round(spread, 4),
        "prompts": prompts,
        "greedy": greedy,
        "token_sources": sorted(sources),
    }


def _pct(x):
    return f"{x * 100:+.1f} %"


def _first_difference(a, b):
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n if len(a) != len(b) else None


def compare(candidate, baseline, min_gain=None, equivalence_tokens=0):
    """The gate and the equivalence check: {gain, noise, within_noise, gate, gate_msg, equivalence}.

    ``gate`` is ``off`` (no min_gain), ``pass``, ``fail`` or ``unmeasured`` (a side has no median:
    fails closed). ``equivalence.ok`` is None when it was not checked.
    """
    candidate = candidate or {}
    baseline = baseline or {}
    out = {"gain": None, "noise": None, "within_noise": None, "gate": "off", "gate_msg": ""}
    b_med, c_med = baseline.get("median"), candidate.get("median")
    if b_med and c_med is not None:
        gain = c_med / b_med - 1
        noise = (baseline.get("spread") or 0) + (candidate.get("spread") or 0)
        out.update(gain=round(gain, 4), noise=round(noise, 4), within_noise=abs(gain) <= noise)
    if min_gain is not None:
        if out["gain"] is None:
            side = "baseline" if not b_med else "new service"
            why = "; ".join((baseline if not b_med else candidate).get("failures") or []) or "no complete run"
            out["gate"] = "unmeasured"
            out["gate_msg"] = f"gain gate not met: the {side} could not be measured ({why})"
        else:
            ok = out["gain"] >= float(min_gain)
            out["gate"] = "pass" if ok else "fail"
            out["gate_msg"] = (
                "gain gate {}: median set rate {} tok/s new vs {} tok/s before ({}), required {} "
                "(ddtree_deploy_min_gain); spread {} before, {} new".format(
                    "met" if ok else "not met",
                    c_med,
                    b_med,
                    _pct(out["gain"]),
                    _pct(float(min_gain)),
                    _pct(baseline.get("spread") or 0).lstrip("+"),
                    _pct(candidate.get("spread") or 0).lstrip("+"),
                )
            )
            if out["within_noise"]:
                out["gate_msg"] += (
                    "; the spread ({}) is larger than the gain: this verdict is within the noise of the "
                    "measurement (more ddtree_deploy_gate_repeats narrow it)".format(_pct(out["noise"]).lstrip("+"))
                )
    out["equivalence"] = _equivalence(candidate, baseline, equivalence_tokens)
    return out


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
