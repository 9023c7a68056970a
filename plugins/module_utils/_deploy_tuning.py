# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A tune's choice and its record (issue 35): the crossover map, the choice for the load mix, the picture.

Speculative decoding's gain is a curve over concurrency, not a number: a configuration can win at one to four
streams and lose at sixteen (the EAGLE-3 paper's Table 3: SGLang with EAGLE on H100 1.40x at batch 2, 0.93x at
24). So a tune records, for every level the gate measured, each candidate's gain against the baseline (the
fallback's unit, NEXTN), its verdict and the level's winner (the fallback when no candidate beats the baseline
there): the crossover. And it keeps the one configuration that serves the host's traffic best, by this rule:

    The load mix is ddtree_deploy_load_mix (concurrency level -> weight, normalised to sum 1); without it, all
    the weight on the production concurrency (the gate's highest level). A candidate's score is its gain
    weighted by the mix, sum(w_l * gain_l): the relative change of the mix's aggregate tok/s when each level
    carries its share of the time. The fallback's score is 0 (it is the baseline). Among the candidates that
    passed every step and were measured at every level of the mix, the best score wins if it beats the
    fallback by the gate's margin: score > 0 and score >= sum(w_l * min_gain_l) (a level not gated needs 0).
    A tie goes to the earlier candidate. Otherwise the fallback serves the mix best: the host ends on it.

A level's verdict is the gate's figure against the gain it must reach there: ``better`` when the gain minus the
level's noise (the spread of both sides' measurements) reaches it and the gain is above 0, ``worse`` when the
gain plus the noise stays below it, else ``inconclusive``; a verdict the gate gives itself wins. Standard
library only.
"""

from __future__ import absolute_import, annotations, division, print_function

import math
from collections.abc import Mapping

VERDICTS = ("worse", "inconclusive", "better")
RULE = (
    "the best gain weighted by the load mix, sum(w_l * gain_l), among the candidates that passed every step; it must "
    "be above 0 (the fallback's) and reach sum(w_l * min_gain_l), else the fallback serves the mix best"
)
MIX_VAR = "ddtree_deploy_load_mix"
# What the goodput gate adds to a level's figures (_gate.compare with an SLO): the second figure, tok/s, and the
# goodput and SLO attainment of the candidate. Carried into the crossover when present.
GOODPUT_KEYS = ("tokens_per_second_gain", "goodput_new", "goodput_before", "attainment_new", "attainment_before")


def _level(value):
    """A mix's level as an int (YAML keys may be strings), or None."""
    try:
        level = int(value)
    except (TypeError, ValueError):
        return None
    return level if level >= 1 and str(value).strip().lstrip("+").isdigit() else None


def mix_errors(mix):
    """What is wrong with ddtree_deploy_load_mix (null is fine: the production concurrency)."""
    if mix is None:
        return []
    example = "e.g. {1: 0.2, 16: 0.8}"
    if not isinstance(mix, Mapping) or not mix:
        return [f"{MIX_VAR} must be a mapping of concurrency levels to weights, {example}, or null."]
    problems = []
    for key, weight in mix.items():
        if _level(key) is None:
            problems.append(f"{MIX_VAR}: {key!r} is not a concurrency level (a whole number of streams, 1 or more).")
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or weight < 0:
            problems.append(f"{MIX_VAR}[{key}]: the weight {weight!r} must be a number, 0 or more ({example}).")
    if not problems and not sum(mix.values()) > 0:
        problems.append(f"{MIX_VAR}: the weights add up to 0; give the levels your traffic has a share ({example}).")
    return problems


def weights(mix, levels):
    """{level: weight} summing to 1: the mix's, or all of it on the highest level measured."""
    if mix:
        total = float(sum(mix.values()))
        return {_level(k): w / total for k, w in sorted(mix.items(), key=lambda kv: _level(kv[0])) if w}
    return {max(levels): 1.0} if levels else {}


def mix_level_errors(mix, gate_levels):
    """A mix level the gate does not measure: no candidate would have a score for the mix, so the fallback would
    win whatever the candidates do. ``gate_levels``: ddtree_deploy_gate_concurrency (None: the default levels,
    judged when they are known)."""
    if not mix or mix_errors(mix) or not gate_levels:
        return []
    gated = {_level(level) for level in gate_levels}
    missing = sorted(_level(key) for key, weight in mix.items() if weight and _level(key) not in gated)
    if not missing:
        return []
    return [
        f"{MIX_VAR} has traffic at concurrency {', '.join(map(str, missing))}, which ddtree_deploy_gate_concurrency "
        f"({', '.join(str(v) for v in gate_levels)}) does not measure: no candidate could be scored for the mix. Add "
        "those levels to ddtree_deploy_gate_concurrency, or give the mix the levels the gate measures."
    ]


def verdict(entry):
    """better / worse / inconclusive of one level's gate figure (see the module doc)."""
    if entry.get("verdict") in VERDICTS:
        return entry["verdict"]
    gain = entry.get("gain")
    if gain is None:
        return "inconclusive"
    need = entry.get("required") or 0.0
    noise = entry.get("noise") or 0.0
    if gain - noise >= need and gain > 0:
        return "better"
    return "worse" if gain + noise < need else "inconclusive"


def levels_of(gains):
    """{level: {gain, verdict, required, tokens_per_second, baseline}} of a candidate's gate figures."""
    out = {}
    for entry in gains or []:
        if isinstance(entry, Mapping) and entry.get("concurrency") and entry.get("gain") is not None:
            out[int(entry["concurrency"])] = {
                "gain": entry["gain"],
                "verdict": verdict(entry),
                "required": entry.get("required"),
                "tokens_per_second": entry.get("new"),
                "baseline": entry.get("before"),
                # The gate's interval of the gain (the goodput gate's), when it gave one.
                "interval": list(entry["interval"]) if entry.get("interval") else None,
                # The goodput gate's figures (issue 33), when it judged the level: gain is then goodput's.
                **{key: entry[key] for key in GOODPUT_KEYS if entry.get(key) is not None},
            }
    return out


def score(levels, mix_weights):
    """The candidate's gain weighted by the mix, or None when a level of the mix was not measured."""
    if not mix_weights or any(level not in levels for level in mix_weights):
        return None
    return round(sum(w * levels[level]["gain"] for level, w in mix_weights.items()), 4)


def needed(levels, mix_weights):
    """The gate's margin over the mix: sum(w_l * min_gain_l), a level not gated needing 0."""
    return sum(w * ((levels.get(level) or {}).get("required") or 0.0) for level, w in mix_weights.items())


def choose(contenders, mix_weights):
    """(the key of the candidate that serves the mix best, or None for the fallback; {key: score}).

    ``contenders``: [(key, eligible, levels)] in the operator's order; ``levels`` as levels_of returns."""
    scores, best = {}, None
    for key, eligible, levels in contenders:
        value = score(levels, mix_weights)
        scores[key] = value
        if not eligible or value is None or value <= 0 or value < needed(levels, mix_weights) - 1e-9:
            continue
        if best is None or value > best[1]:
            best = (key, value)
    return (best[0] if best else None), scores


def tune_gate(verdict, mix=None):
    """A tune's gain gate (ddtree_deploy_mode tune): the candidate passes when its gain weighted by the load mix
    clears the tune's rule (RULE: above 0 and the gate's margin weighted by the mix), whatever one level says: a
    configuration that loses at 16 streams can still serve a mix that is mostly at one. The gate's guard against
    noise holds over the mix: where the gate gave each level's interval, the low ends weighted by the mix must reach
    the margin too (else "within the noise", not met). Each level keeps its own figures and verdict (the
    crossover). Only a gate that measured every level (pass or fail) is judged again;
    unmeasured, off and extend stay as the gate gave them. Returns the verdict with ``gate`` and ``gate_msg``
    replaced and ``tune``: {load_mix, score, needed, level_gate, level_msg}."""
    if not isinstance(verdict, Mapping) or verdict.get("gate") not in ("pass", "fail"):
        return verdict
    levels = levels_of(verdict.get("gains"))
    mix_weights = weights(mix, sorted(levels))
    value, need = score(levels, mix_weights), needed(levels, mix_weights)
    # The gate's guard against noise, over the mix: the low ends of the levels' intervals weighted alike.
    low = (
        None
        if value is None
        else sum(w * (levels[lv]["interval"] or [levels[lv]["gain"]])[0] for lv, w in mix_weights.items())
    )
    passed = value is not None and value > 0 and low >= need - 1e-9
    shown = mix_text(mix_weights) + ("" if mix else ", all at the production concurrency")
    if value is None:
        missing = ", ".join(str(level) for level in sorted(mix_weights) if level not in levels)
        head = f"tune gate not met: the load mix ({shown}) has concurrency {missing}, which the gate did not measure"
    else:
        head = (
            f"tune gate {'met' if passed else 'not met'}: {_pct(value)} over the load mix ({shown}); it must be "
            f"above 0 and reach {_pct(round(need, 4))}"
        )
        if value > 0 and value >= need - 1e-9 and not passed:
            head += f", which the low end of its interval ({_pct(round(low, 4))}) does not: within the noise"
    per_level = "; ".join(
        f"{_pct(fig['gain'])} at concurrency {level} ({fig['verdict']})" for level, fig in sorted(levels.items())
    )
    tune = {
        "load_mix": mix_weights,
        "score": value,
        "low": None if low is None else round(low, 4),
        "needed": round(need, 4),
        "level_gate": verdict.get("gate"),
        "level_msg": verdict.get("gate_msg"),
    }
    return dict(verdict, gate="pass" if passed else "fail", gate_msg=f"{head} (per level: {per_level})", tune=tune)


def crossover(rows, fallback):
    """One entry per level measured: every candidate's gain and verdict there, and the level's winner (the best
    gain among the candidates judged better that failed no step but the gate, whose margin may have failed them at
    another level; the fallback's name when none is). ``rows``: [{name, judged, levels}]."""
    levels = sorted({level for row in rows for level in row["levels"]})
    out = []
    for level in levels:
        here = [(row, row["levels"][level]) for row in rows if level in row["levels"]]
        better = [
            (fig["gain"], -i, row["name"])
            for i, (row, fig) in enumerate(here)
            if row["judged"] and fig["verdict"] == "better"
        ]
        entry = {
            "concurrency": level,
            "winner": max(better)[2] if better else fallback,
            "gains": {row["name"]: fig["gain"] for row, fig in here},
            "verdicts": {row["name"]: fig["verdict"] for row, fig in here},
        }
        for key in GOODPUT_KEYS:
            figures = {row["name"]: fig[key] for row, fig in here if fig.get(key) is not None}
            if figures:
                entry[key] = figures
        out.append(entry)
    return out


# ------------------------------------------------------------------------------------------ the record


def _tuned(reports):
    """{gpu_class: [the tune's host reports, by host]} (check-mode runs and deploys left out)."""
    classes = {}
    for report in reports or []:
        if isinstance(report, Mapping) and report.get("mode") == "tune" and not report.get("check_mode"):
            classes.setdefault(report.get("gpu_class") or "unknown", []).append(report)
    return {c: sorted(hosts, key=lambda r: str(r.get("host"))) for c, hosts in sorted(classes.items())}


def _tried(report):
    """{name: attempt} of a host's candidates (the final switch back to the winner is not one)."""
    return {a.get("name"): a for a in report.get("candidates") or [] if not a.get("final")}


def _host_entry(host, attempt):
    figures = levels_of(attempt.get("gains"))
    return {
        "host": host,
        "result": attempt.get("result"),
        "failed_step": attempt.get("failed_step"),
        "cause": attempt.get("cause"),
        "gain_at_production": attempt.get("gain_at_production"),
        "gains": {str(level): fig["gain"] for level, fig in figures.items()},
        "tokens_per_second": {str(level): fig["tokens_per_second"] for level, fig in figures.items()},
        "downtime_s": attempt.get("downtime_s"),
    }


def _class_levels(attempts):
    """The levels measured on every host: the mean gain, the worst verdict, the required gain."""
    per_host = [levels_of(a.get("gains")) for a in attempts]
    shared = set.intersection(*[set(levels) for levels in per_host]) if per_host else set()
    out = {}
    for level in sorted(shared):
        figs = [levels[level] for levels in per_host]
        out[level] = {
            "gain": round(sum(f["gain"] for f in figs) / len(figs), 4),
            "verdict": min((f["verdict"] for f in figs), key=VERDICTS.index),
            "required": figs[0]["required"],
        }
        for key in GOODPUT_KEYS:
            if all(f.get(key) is not None for f in figs):
                out[level][key] = round(sum(f[key] for f in figs) / len(figs), 4)
    return out


def _candidate_row(name, hosts):
    """A candidate over the hosts of its class: passed on every one, its gains, each host's figures."""
    seen = [(report.get("host"), _tried(report).get(name)) for report in hosts]
    attempts = [attempt for _host, attempt in seen if attempt is not None]
    everywhere = len(attempts) == len(seen)
    eligible = everywhere and all(a.get("result") in ("passed", "kept") for a in attempts)
    # A level's winner may be a candidate the gate failed at another level (a deploy's gate judges every level).
    judged = everywhere and all(
        a.get("result") in ("passed", "kept") or a.get("failed_step") == "gate" for a in attempts
    )
    levels = _class_levels(attempts) if everywhere else {}
    production = hosts[0].get("production_concurrency")
    first = attempts[0]
    return {
        "name": name,
        "profile": first.get("profile"),
        "variants": list(first.get("variants") or []),
        "extra_args": dict(first.get("extra_args") or {}),
        "passed_on_every_host": eligible,
        "gain_at_production": (levels.get(production) or {}).get("gain") if eligible else None,
        "gains": {str(level): fig["gain"] for level, fig in levels.items()},
        "levels": levels,
        "eligible": eligible,
        "judged": judged,
        "hosts": [_host_entry(host, attempt) for host, attempt in seen if attempt is not None],
    }


def _record(gpu_class, hosts, fallback, mix, mix_source):
    names = []
    for report in hosts:
        names.extend(name for name in _tried(report) if name not in names)
    rows = [_candidate_row(name, hosts) for name in names]
    levels = sorted({level for row in rows for level in row["levels"]}) or sorted(
        {int(level) for report in hosts for level in report.get("gate_concurrency") or []}
    )
    mix_weights = weights(mix, levels)
    chosen, scores = choose([(row["name"], row["eligible"], row["levels"]) for row in rows], mix_weights)
    winner = next((row for row in rows if row["name"] == chosen), None)
    tuning = {
        "gpu_class": gpu_class,
        "release": hosts[0].get("release"),
        "run_id": hosts[0].get("run_id"),
        "tuned_on": [r.get("host") for r in hosts],
        "production_concurrency": hosts[0].get("production_concurrency"),
        "min_gain": hosts[0].get("min_gain"),
        "fallback": fallback,
        "load_mix": mix_weights,
        "mix_source": mix_source or (MIX_VAR if mix else "production concurrency (the gate's highest level)"),
        "rule": RULE,
        "winner": chosen or fallback,
        "crossover": crossover(rows, fallback),
        "mix_gains": dict(scores, **{fallback: 0.0}),
        "candidates": [{k: v for k, v in row.items() if k not in ("levels", "eligible", "judged")} for row in rows],
    }
    record = {"ddtree_deploy_tuning": tuning}
    if winner is not None:
        keys = ("name", "profile", "variants", "extra_args")
        record["ddtree_deploy_candidates"] = [{key: winner[key] for key in keys}]
    return record


def tuning_records(reports, fallback="nextn", load_mix=None, mix_source=None):
    """One tuning record per GPU class from the host reports of a tune run: [{gpu_class, dest, record, markdown,
    chart, chart_dest}]. The record is what group_vars/<class>.yml takes as is: ddtree_deploy_tuning (the
    crossover, the mix and what each candidate gives it, the winner, every candidate with its figures per host)
    and, when a candidate serves the mix better than the fallback, ddtree_deploy_candidates (that one alone, so
    the class's next deploy tries it first). With several hosts of one class a candidate counts only if it
    passed on every one of them, by its mean gains."""
    out = []
    for gpu_class, hosts in _tuned(reports).items():
        record = _record(gpu_class, hosts, fallback, load_mix, mix_source)
        tuning = record["ddtree_deploy_tuning"]
        entry = {
            "gpu_class": gpu_class,
            "dest": f"tuning-{gpu_class}.yml",
            "record": record,
            "chart_dest": f"tuning-{gpu_class}.svg",
            "markdown_dest": f"tuning-{gpu_class}.md",
            "markdown": markdown(tuning, f"tuning-{gpu_class}.svg"),
            "chart": svg(tuning),
        }
        # What the role writes beside the run summary (report.yml's loop: each a template of the role and its dest).
        entry["files"] = [
            dict(entry, src=src, dest=dest)
            for src, dest in (
                ("tuning_record.yml.j2", entry["dest"]),
                ("tuning_chart.svg.j2", entry["chart_dest"]),
                ("tuning_crossover.md.j2", entry["markdown_dest"]),
            )
        ]
        out.append(entry)
    return out


# ------------------------------------------------------------------------------------------ the pictures


def _pct(value):
    return "not measured" if value is None else f"{value * 100:+.1f} %"


def mix_text(mix_weights):
    return ", ".join(f"{level}: {w * 100:.0f} %" for level, w in sorted(mix_weights.items()))


def _mix_label(tuning):
    return mix_text(tuning["load_mix"])


def markdown(tuning, chart=None):
    """The crossover as a Markdown table, levels x candidates, with the mix's row and the chart beside it."""
    names = [c["name"] for c in tuning["candidates"]]
    fallback = tuning["fallback"]
    lines = [
        f"### Crossover of {tuning['gpu_class']} (tuned on {', '.join(str(h) for h in tuning['tuned_on'])})",
        "",
        f"Gain over the baseline ({fallback}) per concurrency level, with its verdict against the gate's margin; a "
        f"level's winner is {fallback} where no candidate is better. The load mix ({tuning['mix_source']}) decides "
        "what the class keeps: " + tuning["rule"] + ".",
        "",
        "| concurrency | " + " | ".join(f"`{n}`" for n in names) + " | winner |",
        "| ---: | " + " | ".join(["---"] * len(names)) + " | --- |",
    ]
    for entry in tuning["crossover"]:
        cells = [
            f"{_pct(entry['gains'][n])} {entry['verdicts'][n]}" if n in entry["gains"] else "not measured"
            for n in names
        ]
        lines.append(f"| {entry['concurrency']} | " + " | ".join(cells) + f" | `{entry['winner']}` |")
    mix = [_pct(tuning["mix_gains"].get(n)) for n in names]
    lines.append(f"| load mix ({_mix_label(tuning)}) | " + " | ".join(mix) + f" | **`{tuning['winner']}`** (kept) |")
    if chart:
        lines += ["", f"![Gain against concurrency per candidate, {tuning['gpu_class']}]({chart})"]
    return "\n".join(lines) + "\n"


# Colours that stay apart for the common kinds of colour blindness (Okabe and Ito, 2008).
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000")
WIDTH, HEIGHT = 720, 400
LEFT, RIGHT, TOP, BOTTOM, PAD = 70, 180, 56, 60, 30


def _ticks(low, high):
    """Round tick values (1, 2 or 5 times a power of ten) covering [low, high], about five of them."""
    raw = max(high - low, 1e-9) / 5
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    return [round(v * step, 6) for v in range(math.floor(low / step), math.ceil(high / step) + 1)]


def _esc(text):
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


class _Axes:
    """Concurrency (log2) across, gain (%) up."""

    def __init__(self, levels, gains):
        self.levels = sorted(levels)
        low, high = min(gains + [0.0]) * 100, max(gains + [0.0]) * 100
        pad = max((high - low) * 0.1, 1.0)
        self.ticks = _ticks(low - pad, high + pad)
        self.low, self.high = min(self.ticks[0], low - pad), max(self.ticks[-1], high + pad)

    def x(self, level):
        lo, hi = math.log2(self.levels[0]), math.log2(self.levels[-1])
        inner = WIDTH - LEFT - RIGHT - 2 * PAD  # the first and the last level off the frame
        return round(LEFT + PAD + (inner / 2 if hi == lo else (math.log2(level) - lo) / (hi - lo) * inner), 1)

    def y(self, gain):
        inner = HEIGHT - TOP - BOTTOM
        return round(TOP + (self.high - gain * 100) / (self.high - self.low) * inner, 1)


def _frame(axes, tuning):
    right, bottom = WIDTH - RIGHT, HEIGHT - BOTTOM
    title = f"Gain over {tuning['fallback']} by concurrency, {tuning['gpu_class']}"
    out = [
        f'<text x="{LEFT}" y="26" font-size="16" font-weight="bold">{_esc(title)}</text>',
        f'<rect class="plot" x="{LEFT}" y="{TOP}" width="{right - LEFT}" height="{bottom - TOP}" fill="none" '
        'stroke="#999"/>',
    ]
    for tick in axes.ticks:
        y = axes.y(tick / 100)
        out.append(f'<line x1="{LEFT}" y1="{y}" x2="{right}" y2="{y}" stroke="#eee"/>')
        out.append(f'<text x="{LEFT - 8}" y="{y + 4}" font-size="11" text-anchor="end">{tick:+g} %</text>')
    for level in axes.levels:
        out.append(f'<text x="{axes.x(level)}" y="{bottom + 18}" font-size="11" text-anchor="middle">{level}</text>')
    out.append(
        f'<text x="{(LEFT + right) / 2}" y="{HEIGHT - 18}" font-size="12" text-anchor="middle">'
        "concurrency (streams in flight)</text>"
    )
    out.append(
        f'<text x="18" y="{(TOP + bottom) / 2}" font-size="12" text-anchor="middle" '
        f'transform="rotate(-90 18 {(TOP + bottom) / 2})">gain over {_esc(tuning["fallback"])} (%)</text>'
    )
    zero = axes.y(0.0)
    out.append(
        f'<line class="zero" x1="{LEFT}" y1="{zero}" x2="{right}" y2="{zero}" stroke="#333" stroke-dasharray="6 4"/>'
    )
    return out


def svg(tuning):
    """The chart beside the table: each candidate's gain against concurrency, the zero line (the fallback), the
    load mix's levels marked with their weights. Plain SVG text, no dependency."""
    levels = [entry["concurrency"] for entry in tuning["crossover"]] or sorted(tuning["load_mix"]) or [1]
    gains = [g for entry in tuning["crossover"] for g in entry["gains"].values() if g is not None]
    axes = _Axes(sorted(set(levels) | set(tuning["load_mix"])), gains)
    body = _frame(axes, tuning)
    for level, weight in sorted(tuning["load_mix"].items()):
        x = axes.x(level)
        body.append(
            f'<line class="mix" data-concurrency="{level}" data-weight="{weight:.4g}" x1="{x}" y1="{TOP}" x2="{x}" '
            f'y2="{HEIGHT - BOTTOM}" stroke="#888" stroke-width="{1 + 6 * weight:.1f}" stroke-opacity="0.35"/>'
        )
        body.append(
            f'<text x="{x}" y="{TOP - 6}" font-size="11" fill="#555" text-anchor="middle">'
            f"mix {weight * 100:.0f} %</text>"
        )
    for i, row in enumerate(tuning["candidates"]):
        colour = PALETTE[i % len(PALETTE)]
        points = [
            (axes.x(entry["concurrency"]), axes.y(entry["gains"][row["name"]]))
            for entry in tuning["crossover"]
            if entry["gains"].get(row["name"]) is not None
        ]
        name = _esc(row["name"])
        body.append(
            f'<polyline class="candidate" data-name="{name}" fill="none" stroke="{colour}" stroke-width="2.5" '
            f'points="{" ".join(f"{x},{y}" for x, y in points)}"/>'
        )
        body += [f'<circle cx="{x}" cy="{y}" r="4" fill="{colour}"/>' for x, y in points]
        legend_y = TOP + 16 + 20 * i
        body.append(
            f'<line x1="{WIDTH - RIGHT + 16}" y1="{legend_y}" x2="{WIDTH - RIGHT + 40}" y2="{legend_y}" '
            f'stroke="{colour}" stroke-width="2.5"/>'
        )
        body.append(f'<text x="{WIDTH - RIGHT + 46}" y="{legend_y + 4}" font-size="12">{name}</text>')
    legend_y = TOP + 16 + 20 * len(tuning["candidates"])
    body.append(
        f'<text x="{WIDTH - RIGHT + 16}" y="{legend_y + 4}" font-size="12">kept: {_esc(tuning["winner"])}</text>'
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif">\n' + "\n".join(body) + "\n</svg>\n"
    )
