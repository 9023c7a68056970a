# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 35: the crossover in the tuning record, the choice for the load mix, the table and the chart.

The host reports are made as the role makes them: a deploy record of events (_deploy_record), its report."""

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

# At import, not in a test: a test that initialises Ansible's plugin loader (test_prometheus's role selector) puts its
# collection finder first, and a filter imported after it in the same worker fails ("collection metadata was not
# loaded for collection ddtree.sglang"): xdist decided whether they shared one.
from ansible_collections.ddtree.sglang.plugins.filter.deploy_tune_gate import deploy_tune_gate
from ansible_collections.ddtree.sglang.plugins.module_utils import _deploy_candidates as dc
from ansible_collections.ddtree.sglang.plugins.module_utils import _deploy_record as dr
from ansible_collections.ddtree.sglang.plugins.module_utils import _deploy_tuning as dt
from test_deploy_candidates import ROLE, Run, cand

SVG = "{http://www.w3.org/2000/svg}"


def gate(*levels, required=0.1, noise=0.0):
    """A candidate's gate figures: [(concurrency, gain)] against a NEXTN baseline of 40 tok/s per level."""
    return {
        "gains": [
            {
                "concurrency": c,
                "gain": g,
                "before": 40.0,
                "new": round(40.0 * (1 + g), 2),
                "required": required,
                "ok": g >= required,
                "noise": noise,
                "within_noise": abs(g) <= noise,
            }
            for c, g in levels
        ],  # fmt: skip
        "gate": "pass",
    }


def tune_report(host, figures, gpu_class="ampere_48g", levels=(1, 16), min_gain=0.1):
    """The report of a tune over [(name, gate figures or a failed step)], every candidate passing its steps."""
    run = Run()
    for i, (name, figure) in enumerate(figures):
        run.candidate(cand(i + 1, len(figures), name, profile=name.split("+")[0], mode="tune"), 10 + 10 * i)
        if isinstance(figure, str):
            run.fails_at_switch(10 + 10 * i, cause=figure)
        else:
            run.passes(10 + 10 * i, figure)
    info = {"host": host, "gpu_class": gpu_class, "release": "0.5.23", "gate_concurrency": list(levels)}
    return dr.report(run.record, dict(info, min_gain=min_gain, profile="ddtree"))


# The holdout host of issue 35's "Done when": DDTree +32 % at one stream and -31 % at 16, DFLASH +16 % and -6 %.
HOLDOUT = [("ddtree", gate((1, 0.32), (16, -0.31))), ("dflash", gate((1, 0.16), (16, -0.06)))]


def test_production_at_16_keeps_nextn_and_the_crossover_names_ddtree_at_1():
    report = tune_report("holdout", HOLDOUT)
    # The host keeps no candidate: the fallback serves the production level best (switch.yml restores NEXTN).
    assert dc.winner(report["candidates"]) is None
    (entry,) = dt.tuning_records([report], fallback="nextn")
    tuning = entry["record"]["ddtree_deploy_tuning"]
    assert tuning["crossover"] == [
        {"concurrency": 1, "winner": "ddtree", "gains": {"ddtree": 0.32, "dflash": 0.16},
         "verdicts": {"ddtree": "better", "dflash": "better"}},
        {"concurrency": 16, "winner": "nextn", "gains": {"ddtree": -0.31, "dflash": -0.06},
         "verdicts": {"ddtree": "worse", "dflash": "worse"}},
    ]  # fmt: skip
    assert tuning["winner"] == "nextn" and tuning["load_mix"] == {16: 1.0}
    assert tuning["mix_gains"] == {"ddtree": -0.31, "dflash": -0.06, "nextn": 0.0}
    assert "ddtree_deploy_candidates" not in entry["record"]  # the class keeps NEXTN


def test_a_mix_mostly_at_one_stream_keeps_ddtree():
    report = tune_report("holdout", HOLDOUT)
    mix = {1: 0.9, 16: 0.1}
    assert dc.winner(report["candidates"], mix=mix) == 1
    (entry,) = dt.tuning_records([report], load_mix=mix)
    tuning = entry["record"]["ddtree_deploy_tuning"]
    assert tuning["winner"] == "ddtree" and tuning["mix_source"] == "ddtree_deploy_load_mix"
    # What each candidate would have given the mix: 0.9 x 0.32 + 0.1 x -0.31, 0.9 x 0.16 + 0.1 x -0.06.
    assert tuning["mix_gains"] == {"ddtree": pytest.approx(0.257), "dflash": pytest.approx(0.138), "nextn": 0.0}
    assert entry["record"]["ddtree_deploy_candidates"] == [
        {"name": "ddtree", "profile": "ddtree", "variants": [], "extra_args": {}}
    ]
    # The crossover does not depend on the mix.
    assert tuning["crossover"] == dt.tuning_records([report])[0]["record"]["ddtree_deploy_tuning"]["crossover"]


@pytest.mark.parametrize(
    ("mix", "winner"),
    [
        ({1: 0.2, 16: 0.8}, None),  # the example mix: ddtree 0.2 x 0.32 - 0.8 x 0.31 < 0
        ({1: 0.5, 16: 0.5}, None),  # dflash +5 % is above 0 but below the gate's +10 % margin
        ({1: 1, 16: 0}, 1),
        ({"1": 3, "16": 1}, 1),  # weights are normalised; YAML may give the levels as text
    ],
)
def test_the_mix_rule(mix, winner):
    assert dc.winner(tune_report("h", HOLDOUT)["candidates"], mix=mix) == winner


def test_a_candidate_that_failed_a_step_never_wins_however_fast():
    report = tune_report("h", [("ddtree", "Not enough memory"), ("dflash", gate((1, 0.16), (16, 0.12)))])
    assert dc.winner(report["candidates"]) == 2
    tuning = dt.tuning_records([report])[0]["record"]["ddtree_deploy_tuning"]
    assert tuning["winner"] == "dflash" and tuning["crossover"][1]["winner"] == "dflash"
    assert tuning["candidates"][0]["passed_on_every_host"] is False and tuning["candidates"][0]["gains"] == {}


def test_a_candidate_the_gate_failed_at_another_level_still_wins_its_own_level():
    """A deploy's gate judges every level: ddtree failed it at 16, yet at one stream it is the best there is."""
    run = Run()
    run.candidate(cand(1, 1, "ddtree", mode="tune"), 10).passes(10, gate((1, 0.32), (16, -0.31)), failed_at="gate")
    report = dr.report(run.record, {"host": "h", "gpu_class": "ampere_48g", "gate_concurrency": [1, 16]})
    assert report["candidates"][0]["failed_step"] == "gate" and dc.winner(report["candidates"]) is None
    tuning = dt.tuning_records([report])[0]["record"]["ddtree_deploy_tuning"]
    assert [e["winner"] for e in tuning["crossover"]] == ["ddtree", "nextn"] and tuning["winner"] == "nextn"


def test_with_the_goodput_gate_each_entry_carries_goodput():
    """Issue 33's gate judges goodput (its gains[].gain) and keeps tok/s as the second figure: both reach the map."""
    figures = gate((1, 0.30), (16, -0.50))
    for entry, (tps, good) in zip(figures["gains"], [(0.32, 3.1), (-0.31, 0.4)], strict=True):
        entry.update(tokens_per_second_gain=tps, goodput_new=good, goodput_before=2.4, verdict="better")
    figures["gains"][1]["verdict"] = "worse"
    tuning = dt.tuning_records([tune_report("h", [("ddtree", figures)])])[0]["record"]["ddtree_deploy_tuning"]
    one, sixteen = tuning["crossover"]
    assert one["gains"] == {"ddtree": 0.30} and one["tokens_per_second_gain"] == {"ddtree": 0.32}
    assert one["goodput_new"] == {"ddtree": 3.1} and one["goodput_before"] == {"ddtree": 2.4}
    assert sixteen["verdicts"] == {"ddtree": "worse"} and sixteen["winner"] == "nextn"


def test_ties_go_to_the_earlier_candidate():
    report = tune_report("h", [("a", gate((16, 0.2))), ("b", gate((16, 0.2))), ("c", gate((16, 0.1)))])
    assert dc.winner(report["candidates"]) == 1
    assert dt.tuning_records([report])[0]["record"]["ddtree_deploy_tuning"]["crossover"][0]["winner"] == "a"


@pytest.mark.parametrize(
    ("entry", "verdict"),
    [
        ({"gain": 0.32, "required": 0.1, "noise": 0.05}, "better"),
        ({"gain": 0.12, "required": 0.1, "noise": 0.05}, "inconclusive"),  # the spread straddles the margin
        ({"gain": -0.31, "required": 0.1, "noise": 0.05}, "worse"),
        ({"gain": -0.03, "required": -0.05, "noise": 0.0}, "inconclusive"),  # allowed, yet not faster
        ({"gain": 0.02, "required": None, "noise": 0.0}, "better"),  # a level not gated needs 0
        ({"gain": 0.4, "required": 0.1, "verdict": "inconclusive"}, "inconclusive"),  # the gate's own verdict
        ({"gain": None}, "inconclusive"),
    ],
)
def test_verdicts(entry, verdict):
    assert dt.verdict(entry) == verdict


def test_several_hosts_of_a_class_count_by_their_mean_and_the_worst_verdict():
    reports = [
        tune_report("a", [("ddtree", gate((1, 0.30), (16, -0.20))), ("dflash", gate((1, 0.10), (16, 0.12)))]),
        tune_report("b", [("ddtree", gate((1, 0.34), (16, -0.40))), ("dflash", gate((1, 0.14), (16, 0.08)))]),
        tune_report("c", [("ddtree", gate((1, 0.5))), ("dflash", gate((1, 0.5)))], gpu_class="hopper_80g", levels=[1]),
    ]
    records = {r["gpu_class"]: r["record"]["ddtree_deploy_tuning"] for r in dt.tuning_records(reports)}
    ampere = records["ampere_48g"]
    assert ampere["tuned_on"] == ["a", "b"]
    assert ampere["crossover"][0]["gains"] == {"ddtree": pytest.approx(0.32), "dflash": pytest.approx(0.12)}
    # dflash is better than +10 % on a, not on b: its verdict at 16 is b's.
    assert ampere["crossover"][1]["verdicts"] == {"ddtree": "worse", "dflash": "worse"}
    assert ampere["crossover"][1]["winner"] == "nextn"
    assert ampere["winner"] == "dflash" and ampere["mix_gains"]["dflash"] == pytest.approx(0.1)
    assert records["hopper_80g"]["load_mix"] == {1: 1.0}


@pytest.mark.parametrize(
    ("mix", "problem"),
    [
        ({}, "must be a mapping of concurrency levels to weights"),
        ([1, 16], "must be a mapping of concurrency levels to weights"),
        ({0: 1}, "0 is not a concurrency level"),
        ({"x": 1}, "'x' is not a concurrency level"),
        ({1: -0.1}, "the weight -0.1 must be a number, 0 or more"),
        ({1: True}, "the weight True must be a number"),
        ({1: 0, 16: 0}, "the weights add up to 0"),
    ],
)
def test_a_bad_mix_is_named(mix, problem):
    assert any(problem in p for p in dt.mix_errors(mix)), dt.mix_errors(mix)


def test_a_good_mix_and_none_are_fine():
    assert dt.mix_errors(None) == [] and dt.mix_errors({1: 0.9, "16": 0.1}) == []


# ---------------------------------------------------------------------------------------- what to look at


def records(mix=None):
    return dt.tuning_records([tune_report("holdout", HOLDOUT)], load_mix=mix)[0]


def test_the_markdown_table_is_levels_by_candidates():
    table = [line for line in records({1: 0.9, 16: 0.1})["markdown"].splitlines() if line.startswith("|")]
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in table]
    assert cells[0] == ["concurrency", "`ddtree`", "`dflash`", "winner"]
    assert cells[2] == ["1", "+32.0 % better", "+16.0 % better", "`ddtree`"]
    assert cells[3] == ["16", "-31.0 % worse", "-6.0 % worse", "`nextn`"]
    assert cells[4] == ["load mix (1: 90 %, 16: 10 %)", "+25.7 %", "+13.8 %", "**`ddtree`** (kept)"]
    assert "![Gain against concurrency per candidate, ampere_48g](tuning-ampere_48g.svg)" in records()["markdown"]


@pytest.mark.parametrize("mix", [None, {1: 0.9, 16: 0.1}])
def test_the_chart_shows_each_candidates_curve_against_the_zero_line_and_the_mix(mix):
    entry = records(mix)
    root = ET.fromstring(entry["chart"])
    assert root.tag == SVG + "svg" and root.get("viewBox") == "0 0 720 400"
    zero = root.find(f"{SVG}line[@class='zero']")
    y0 = float(zero.get("y1"))
    curves = {p.get("data-name"): p.get("points").split() for p in root.iter(SVG + "polyline")}
    assert set(curves) == {"ddtree", "dflash"}
    for name, (at1, at16) in curves.items():
        (x1, y1), (x16, y16) = (tuple(map(float, at1.split(","))), tuple(map(float, at16.split(","))))
        assert x1 < x16 and y1 < y0 < y16, name  # above the zero line alone, below it at 16 (SVG's y grows down)
    # ddtree's curve is the steeper one: higher at 1, lower at 16.
    assert float(curves["ddtree"][0].split(",")[1]) < float(curves["dflash"][0].split(",")[1])
    assert float(curves["ddtree"][1].split(",")[1]) > float(curves["dflash"][1].split(",")[1])
    marks = {int(m.get("data-concurrency")): float(m.get("data-weight")) for m in root.iter(SVG + "line")
             if m.get("class") == "mix"}  # fmt: skip
    assert marks == ({16: 1.0} if mix is None else {1: 0.9, 16: 0.1})
    texts = " ".join(t.text or "" for t in root.iter(SVG + "text"))
    assert (
        "ddtree" in texts
        and "dflash" in texts
        and "kept: " + entry["record"]["ddtree_deploy_tuning"]["winner"] in texts
    )


def test_a_candidate_name_is_escaped_in_the_chart():
    report = tune_report("h", [("a<b>&c", gate((1, 0.2), (16, 0.1)))])
    root = ET.fromstring(dt.tuning_records([report])[0]["chart"])
    assert [p.get("data-name") for p in root.iter(SVG + "polyline")] == ["a<b>&c"]


def test_the_record_drops_into_group_vars_as_it_is(tmp_path, ansible_cli_env):
    """The role's template renders the record; as group_vars/<class>.yml an inventory gives its host the crossover,
    the winner and the candidate list, and the candidate list expands as candidates again."""
    import subprocess

    import jinja2
    from ansible.plugins.filter.core import to_nice_yaml

    item = records({1: 0.9, 16: 0.1})
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(ROLE / "templates")), keep_trailing_newline=True)
    env.filters["to_nice_yaml"] = to_nice_yaml
    text = env.get_template("tuning_record.yml.j2").render(item=item, __ddtree_deploy_run_id="r1")
    (tmp_path / "group_vars").mkdir()
    (tmp_path / "group_vars" / "ampere_48g.yml").write_text(text)
    (tmp_path / "hosts.yml").write_text("ampere_48g:\n  hosts:\n    holdout:\n")
    proc = subprocess.run(
        # the ansible-core under test (the matrix runs this on each), not whichever is first on PATH
        [Path(sys.executable).parent / "ansible-inventory", "-i", tmp_path / "hosts.yml", "--host", "holdout"],
        env=ansible_cli_env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    host = json.loads(proc.stdout)
    tuning = host["ddtree_deploy_tuning"]
    assert tuning["crossover"] == json.loads(json.dumps(item["record"]["ddtree_deploy_tuning"]["crossover"]))
    assert tuning["winner"] == "ddtree" and host["ddtree_deploy_candidates"][0]["name"] == "ddtree"
    assert dc.expand(host["ddtree_deploy_candidates"], profiles={"ddtree": {}}, variant_table={})["errors"] == []


# ------------------------------------------------------------------ the tune as the role runs it (issue 35)


def gate_verdict(*levels, required=0.1):
    """The gate's verdict as _gate.compare gives it: every level judged on its own (ddtree fails at 16)."""
    figures = gate(*levels, required=required)
    for entry in figures["gains"]:
        entry["verdict"] = "better" if entry["gain"] >= required else "worse"
    failed = [e for e in figures["gains"] if not e["ok"]]
    return dict(figures, gate="fail" if failed else "pass", gate_msg="gain gate not met" if failed else "met")


def tune_run(figures, mix=None, host="holdout"):
    """A tune of the role's course: each candidate switched, probed and gated by deploy_tune_gate (the gain gate of
    vars/main.yml's __ddtree_deploy_gate_compared), failed at the gate or passed; then, as switch.yml does, the
    winner switched to once more (final) when a later candidate replaced it, or the last-known-good restored (rescue)
    when none serves the mix. Returns (the host's report, each candidate's gate verdict)."""

    run, verdicts, t = Run(), {}, 10
    for i, (name, verdict) in enumerate(figures):
        judged = deploy_tune_gate(verdict, mode="tune", load_mix=mix)
        verdicts[name] = judged
        run.candidate(dict(cand(i + 1, len(figures), name, profile=name, mode="tune"), load_mix=mix), t)
        run.passes(t, judged, failed_at=None if judged["gate"] == "pass" else judged["gate_msg"])
        t += 10
    course = dr.summary(run.record)
    if course["winner"] is None:
        run.add("failed", t, {"cause": course["outcome_text"], "figures": {}}).restored(t + 1)
    else:
        if course["winner"] != course["serving"]:
            name, verdict = figures[course["winner"] - 1]
            final = cand(course["winner"], len(figures), name, profile=name, mode="tune", final=True)
            final["load_mix"] = mix
            run.candidate(final, t).passes(t, deploy_tune_gate(verdict, mode="tune", load_mix=mix))
        run.add("done", t + 20, {"restarted": True})
    info = {"host": host, "gpu_class": "ampere_48g", "release": "0.5.23", "gate_concurrency": [1, 16]}
    return dr.report(run.record, dict(info, min_gain=0.1, profile="ddtree")), verdicts


HOLDOUT_GATE = [("ddtree", gate_verdict((1, 0.32), (16, -0.31))), ("dflash", gate_verdict((1, 0.16), (16, -0.06)))]


def test_done_when_production_at_16_ends_on_nextn_with_the_crossover_of_both():
    """Issue 35: tune a holdout host with [ddtree, dflash] gated at [1, 16]; production at 16 (no mix)."""
    report, verdicts = tune_run(HOLDOUT_GATE)
    assert verdicts["ddtree"]["gate"] == "fail" and verdicts["dflash"]["gate"] == "fail"
    assert verdicts["ddtree"]["gate_msg"].startswith(
        "tune gate not met: -31.0 % over the load mix (16: 100 %, all at the production concurrency); it must be "
        "above 0 and reach +10.0 %"
    ), verdicts["ddtree"]["gate_msg"]
    # The host ends on the fallback: restored (rescue.yml puts the snapshot back byte for byte and proves it).
    assert report["outcome"] == "rolled_back" and report["kept"] is None
    assert [(c["name"], c["failed_step"]) for c in report["candidates"]] == [("ddtree", "gate"), ("dflash", "gate")]
    tuning = dt.tuning_records([report])[0]["record"]["ddtree_deploy_tuning"]
    assert [(e["concurrency"], e["winner"]) for e in tuning["crossover"]] == [(1, "ddtree"), (16, "nextn")]
    assert tuning["crossover"][0]["gains"] == {"ddtree": 0.32, "dflash": 0.16}
    assert tuning["crossover"][1]["gains"] == {"ddtree": -0.31, "dflash": -0.06}
    assert tuning["winner"] == "nextn"


def test_done_when_a_mix_mostly_at_one_stream_keeps_ddtree_on_the_host():
    """The same tune with ddtree_deploy_load_mix {1: 0.9, 16: 0.1}: ddtree fails its level at 16, yet serves the
    mix best (+25.7 % against dflash's +13.8 %); the host serves it (switched back to after dflash)."""
    mix = {1: 0.9, 16: 0.1}
    report, verdicts = tune_run(HOLDOUT_GATE, mix=mix)
    assert verdicts["ddtree"]["gate"] == "pass" and verdicts["ddtree"]["tune"]["level_gate"] == "fail"
    assert verdicts["ddtree"]["gate_msg"] == (
        "tune gate met: +25.7 % over the load mix (1: 90 %, 16: 10 %); it must be above 0 "
        "and reach +10.0 % (per level: +32.0 % at concurrency 1 (better); -31.0 % at concurrency 16 (worse))"
    )
    assert report["outcome"] == "deployed" and report["candidate"] == "ddtree" and report["kept"] == 1
    assert report["outcome_text"] == "deployed ddtree, the best of 2, +25.7 % over the load mix (1: 90 %, 16: 10 %)"
    tuning = dt.tuning_records([report], load_mix=mix)[0]["record"]["ddtree_deploy_tuning"]
    assert tuning["winner"] == "ddtree" and [e["winner"] for e in tuning["crossover"]] == ["ddtree", "nextn"]


def test_the_host_keeps_what_the_mix_chose_from_the_record_alone():
    """The record's summary (the host's course) judges the tune by the mix its candidate events carry."""
    run = Run()
    mix = {"1": 0.9, "16": 0.1}  # as JSON gives it back
    for i, name in enumerate(("dflash", "ddtree")):
        figures = dict(HOLDOUT_GATE)[name]
        run.candidate(dict(cand(i + 1, 2, name, profile=name, mode="tune"), load_mix=mix), 10 + 10 * i)
        run.passes(10 + 10 * i, dict(figures, gate="pass"))
    assert dr.summary(run.record)["winner"] == 2
    without = Run()
    for i, name in enumerate(("dflash", "ddtree")):
        without.candidate(cand(i + 1, 2, name, profile=name, mode="tune"), 10 + 10 * i)
        without.passes(10 + 10 * i, dict(dict(HOLDOUT_GATE)[name], gate="pass"))
    assert dr.summary(without.record)["winner"] is None  # all at 16: neither beats NEXTN


@pytest.mark.parametrize("gate_state", ["unmeasured", "off", "extend"])
def test_the_tune_gate_leaves_a_gate_that_did_not_judge_every_level_as_it_is(gate_state):
    verdict = dict(gate_verdict((1, 0.32)), gate=gate_state, gate_msg="as the gate said")
    assert dt.tune_gate(verdict, {1: 1}) == verdict


def test_the_tune_gate_outside_a_tune_is_the_gate():

    verdict = gate_verdict((1, 0.32), (16, -0.31))
    assert deploy_tune_gate(verdict, mode="deploy", load_mix={1: 1}) is verdict
    assert deploy_tune_gate(verdict, mode="tune", load_mix="")["gate"] == "fail"  # '' is no mix (older ansible-core)


def test_the_tune_gate_names_a_mix_level_the_gate_did_not_measure():
    judged = dt.tune_gate(gate_verdict((1, 0.32), (16, -0.31)), {1: 0.5, 8: 0.5})
    assert judged["gate"] == "fail" and judged["gate_msg"].startswith(
        "tune gate not met: the load mix (1: 50 %, 8: 50 %) has concurrency 8, which the gate did not measure"
    )


def test_the_tune_gate_keeps_the_gates_guard_against_noise_over_the_mix():
    """With the goodput gate's intervals, the mix's low end (the levels' low ends weighted alike) must reach the
    margin: +12 % at one stream within [+5 %, +19 %] is not +10 % for sure."""
    noisy = gate_verdict((1, 0.12))
    noisy["gains"][0]["interval"] = [0.05, 0.19]
    judged = dt.tune_gate(noisy, None)
    assert judged["gate"] == "fail" and judged["tune"]["low"] == 0.05
    assert "which the low end of its interval (+5.0 %) does not: within the noise" in judged["gate_msg"]
    holdout = gate_verdict((1, 0.32), (16, -0.31))
    for entry, interval in zip(holdout["gains"], ([0.28, 0.36], [-0.35, -0.27]), strict=True):
        entry["interval"] = interval
    judged = dt.tune_gate(holdout, {1: 0.9, 16: 0.1})
    assert judged["gate"] == "pass" and judged["tune"]["low"] == pytest.approx(0.9 * 0.28 - 0.1 * 0.35)


def test_a_candidate_without_speculation_can_serve_the_load_past_the_crossover():
    """Issue 35: no speculation at all can be the best choice past the crossover (the EAGLE-3 paper: 0.93x at 24).
    The plain profile, and NEXTN adaptive (the fallback that turns speculation off by tiers), as tune candidates:
    with production at 16, plain is kept where it beats NEXTN there; the record drops it into group_vars as a
    candidate list the role's own tables accept."""
    import yaml

    tables = yaml.safe_load((ROLE.parent / "sglang" / "vars" / "profiles.yml").read_text())
    wanted = [{"profile": "ddtree"}, {"profile": "nextn", "variants": ["adaptive"]}, {"profile": "plain"}]
    expanded = dc.expand(
        wanted, profiles=tables["__sglang_profiles"], variant_table=tables["__sglang_profile_variants"],
        mode="tune", min_gain=0.1, fallback="nextn",
    )  # fmt: skip
    assert expanded["errors"] == [] and [c["name"] for c in expanded["candidates"]] == [
        "ddtree",
        "nextn+adaptive",
        "plain",
    ]
    assert tables["__sglang_profiles"]["plain"]["options"] == {}  # no --speculative-algorithm: the target alone
    figures = [
        ("ddtree", gate_verdict((1, 0.32), (16, -0.31))),
        ("nextn+adaptive", gate_verdict((1, 0.01), (16, 0.06))),
        ("plain", gate_verdict((1, -0.38), (16, 0.12))),
    ]
    report, verdicts = tune_run(figures)
    assert [verdicts[name]["gate"] for name, _verdict in figures] == ["fail", "fail", "pass"]
    assert report["outcome"] == "deployed" and report["candidate"] == "plain"
    (entry,) = dt.tuning_records([report])
    tuning = entry["record"]["ddtree_deploy_tuning"]
    assert [(e["concurrency"], e["winner"]) for e in tuning["crossover"]] == [(1, "ddtree"), (16, "plain")]
    assert tuning["winner"] == "plain"
    (kept,) = entry["record"]["ddtree_deploy_candidates"]
    again = dc.expand([kept], profiles=tables["__sglang_profiles"], variant_table=tables["__sglang_profile_variants"])
    assert again["errors"] == [] and again["candidates"][0]["profile"] == "plain"
