# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 21: candidates expanded and checked, one attempt per candidate in the deploy record, the tune's
winner and the outcome in words (the tuning record per GPU class: test_deploy_tuning.py)."""

from pathlib import Path

import pytest
import yaml
from ansible_collections.ddtree.sglang.plugins.module_utils import _deploy_candidates as dc
from ansible_collections.ddtree.sglang.plugins.module_utils import _deploy_record as dr

ROLE = Path(__file__).resolve().parents[4] / "roles" / "ddtree_deploy"
# The sglang role's tables in their shape (options: {field: {value}}), small: what renders each apart.
PROFILES = {
    "nextn": {"options": {"speculative_algorithm": {"value": "NEXTN"}}},
    "dflash": {"draft_model": True, "options": {"speculative_algorithm": {"value": "DFLASH"}}},
    "ddtree": {"draft_model": True, "options": {"speculative_algorithm": {"value": "DDTREE"}}},
}
VARIANTS = {
    "small": {"options": {"context_length": {"value": 32768}, "cuda_graph_max_bs_decode": {"value": 4}}},
    "nograph": {"options": {"disable_cuda_graph": {"value": True}, "cuda_graph_max_bs_decode": {"value": None}}},
    "balanced": {"options": {"mem_fraction_static": {"value": 0.85}}},
}


def expand(candidates=None, **kw):
    kw.setdefault("profile", "ddtree")
    kw.setdefault("variants", [])
    return dc.expand(candidates, profiles=PROFILES, variant_table=VARIANTS, **kw)


# ---------------------------------------------------------------------------------------- expansion


def test_the_default_is_one_candidate_from_the_profile_and_its_variants():
    out = expand(None, variants=["nograph"])
    assert out["errors"] == []
    assert out["candidates"] == [
        {"index": 1, "of": 1, "name": "ddtree+nograph", "profile": "ddtree", "variants": ["nograph"], "extra_args": {}}
    ]


def test_a_list_is_expanded_in_order_with_derived_names_and_its_own_names():
    out = expand(
        [
            {"profile": "ddtree"},
            {"profile": "ddtree", "variants": ["small", "nograph"], "why": "documentation only"},
            {"name": "dflash+no-overlap", "profile": "dflash", "extra_args": {"disable_overlap_schedule": True}},
        ]
    )
    assert out["errors"] == []
    assert [(c["index"], c["of"], c["name"]) for c in out["candidates"]] == [
        (1, 3, "ddtree"),
        (2, 3, "ddtree+small+nograph"),
        (3, 3, "dflash+no-overlap"),
    ]
    assert out["candidates"][2]["extra_args"] == {"disable_overlap_schedule": True}
    assert "why" not in out["candidates"][1]


@pytest.mark.parametrize(
    "candidates, expected",
    [
        ([], "ddtree_deploy_candidates is empty: list at least one candidate"),
        ("ddtree", "ddtree_deploy_candidates must be a list of candidates"),
        ([{"profile": "eagle"}], "ddtree_deploy_candidates[0]: profile 'eagle' is not a profile of the sglang role"),
        ([{"variants": ["nograph"]}], "ddtree_deploy_candidates[0]: profile (null) is required"),
        ([{"profile": "ddtree", "variants": ["tiny"]}], 'ddtree_deploy_candidates[0]: variant "tiny" is not a variant'),
        ([{"profile": "ddtree", "variants": "nograph"}], 'variants ("nograph") must be a list of variant names'),
        ([{"profile": "ddtree", "extra_args": [1]}], "extra_args ([1]) must be a mapping of ServerArgs fields"),
        ([{"profile": "ddtree", "budget": 7}], "ddtree_deploy_candidates[0] has unknown keys budget"),
        (["ddtree"], "ddtree_deploy_candidates[0] must be a mapping {profile, variants, extra_args}"),
        ([{"profile": "ddtree"}, {"profile": "ddtree"}], "the name 'ddtree' is used twice"),
    ],
)
def test_bad_candidates_are_refused_by_name_with_what_to_do(candidates, expected):
    out = expand(candidates)
    assert out["candidates"] == []
    assert any(expected in e for e in out["errors"]), out["errors"]


def test_a_named_list_is_used_over_the_candidates_and_a_missing_one_is_refused():
    lists = {"ladder": [{"profile": "ddtree"}, {"profile": "ddtree", "variants": ["nograph"]}]}
    assert [c["name"] for c in expand(named="ladder", lists=lists)["candidates"]] == ["ddtree", "ddtree+nograph"]
    missing = expand(named="ladder_x", lists=lists)
    assert (
        'ddtree_deploy_candidate_list ("ladder_x") is not a named candidate list; use one of ladder'
        in missing["errors"][0]
    )
    both = expand([{"profile": "dflash"}], named="ladder", lists=lists)
    assert both["errors"] == [] and [c["name"] for c in both["candidates"]] == ["ddtree", "ddtree+nograph"]


def test_two_candidates_that_render_one_configuration_are_refused_naming_both():
    # issue #38: each costs a model load, and a tune would compare a unit with itself
    out = expand(
        [
            {"profile": "ddtree", "variants": ["small", "nograph"]},
            {"name": "again", "profile": "ddtree", "variants": ["nograph", "small", "nograph"]},
        ]
    )
    assert out["candidates"] == [] and len(out["errors"]) == 1
    assert out["errors"][0].startswith(
        "ddtree_deploy_candidates[1]: 'again' renders the same configuration as ddtree_deploy_candidates[0] "
        "'ddtree+small+nograph' (profile ddtree, variants ['nograph', 'small', 'nograph']"
    )
    assert "Remove one, or make them differ." in out["errors"][0]
    # extra_args that restate a variant's value, or a variant's null that removes nothing, render the same unit
    same = expand(
        [
            {"profile": "ddtree", "variants": ["balanced"]},
            {"profile": "ddtree", "extra_args": {"mem_fraction_static": 0.85}},
        ]
    )
    assert same["candidates"] == [] and "renders the same configuration as" in same["errors"][0]


def test_candidates_that_render_apart_are_kept_even_with_the_same_variants_in_another_order():
    # The variants' order is the layers' order: small's cuda_graph_max_bs_decode 4 then nograph's null removes it;
    # the other way round it stays. The units differ (a table's fact, shown so), so both are tried.
    out = expand(
        [
            {"profile": "ddtree", "variants": ["small", "nograph"]},
            {"name": "other-order", "profile": "ddtree", "variants": ["nograph", "small"]},
            {"profile": "dflash", "variants": ["small", "nograph"]},
        ]
    )
    assert out["errors"] == [] and len(out["candidates"]) == 3
    render = [dc.configuration(c, PROFILES, VARIANTS) for c in out["candidates"]]
    assert '"cuda_graph_max_bs_decode": 4' in render[1] and "cuda_graph_max_bs_decode" not in render[0]


def test_a_tune_needs_the_gain_gate_and_a_known_mode_and_fallback():
    assert any("set ddtree_deploy_min_gain" in e for e in expand(mode="tune", min_gain=None)["errors"])
    assert expand(mode="tune", min_gain=0.0)["errors"] == []
    assert any('ddtree_deploy_mode ("fast")' in e for e in expand(mode="fast")["errors"])
    assert any('ddtree_deploy_fallback_profile ("eagle")' in e for e in expand(fallback="eagle")["errors"])


def test_the_shipped_candidate_lists_are_valid():
    lists = yaml.safe_load((ROLE / "vars" / "candidate_lists.yml").read_text())["__ddtree_deploy_candidate_lists"]
    profiles = yaml.safe_load((ROLE.parent / "sglang" / "vars" / "profiles.yml").read_text())
    for name, entries in lists.items():
        out = dc.expand(
            None,
            named=name,
            lists=lists,
            profiles=profiles["__sglang_profiles"],
            variant_table=profiles["__sglang_profile_variants"],
        )
        assert out["errors"] == [], name
        assert all(e.get("why") for e in entries), f"{name}: every entry says why it is there"


def shipped_tables():
    tables = yaml.safe_load((ROLE.parent / "sglang" / "vars" / "profiles.yml").read_text())
    return {"profiles": tables["__sglang_profiles"], "variant_table": tables["__sglang_profile_variants"]}


def test_an_adaptive_ddtree_candidate_is_refused_with_the_pinned_releases_reason():
    """Issue 35: with the sglang role's own tables, before the host is touched (the preflight's first check)."""
    out = dc.expand(
        [{"profile": "nextn", "variants": ["adaptive"]}, {"profile": "ddtree", "variants": ["adaptive"]}],
        mode="tune",
        **shipped_tables(),
    )
    assert out["candidates"] == []
    [error] = out["errors"]
    assert error.startswith(
        "ddtree_deploy_candidates[1]: 'ddtree+adaptive' asks for adaptive speculation, and SGLang 0.5.23 would not "
        'run it adaptive: adaptive_unsupported_reason() says "speculative_algorithm=DDTREE (only EAGLE/EAGLE3 are '
        'supported)" (sglang/srt/speculative/adaptive_spec_params.py:61)'
    ), error
    # The default candidate (ddtree_deploy_profile and its variants) is named as such.
    out = dc.expand(None, profile="ddtree", variants=["adaptive"], **shipped_tables())
    assert out["errors"][0].startswith("ddtree_deploy_profile and ddtree_deploy_profile_variants: 'ddtree+adaptive'")


def test_adaptive_options_from_extra_args_are_judged_with_the_hosts_sglang_extra_args_under_them():
    # The release's tiers hold steps 0, 1, 3, 5 and 7: a NEXTN unit starting at 4 would not start.
    out = dc.expand(
        [{"profile": "nextn", "extra_args": {"speculative_adaptive": True}}],
        extra_args={"speculative_num_steps": 4},
        **shipped_tables(),
    )
    assert "--speculative-num-steps=4 is not in the adaptive config candidate_steps [0, 1, 3, 5, 7]" in " ".join(
        out["errors"]
    )
    # The candidate's own extra_args win over the host's (the sglang role's layers).
    ok = dc.expand(
        [{"profile": "nextn", "variants": ["adaptive"], "extra_args": {"speculative_num_steps": 5}}],
        extra_args={"speculative_num_steps": 4},
        **shipped_tables(),
    )
    assert ok["errors"] == []
    assert dc.expand(None, profile="nextn", variants=["adaptive"], **shipped_tables())["errors"] == []


@pytest.mark.parametrize(
    "n, text", [(1, "1st"), (2, "2nd"), (3, "3rd"), (4, "4th"), (11, "11th"), (12, "12th"), (22, "22nd")]
)
def test_ordinals(n, text):
    assert dc.ordinal(n) == text


# ------------------------------------------------------------------------------- the record per candidate


def cand(index, of, name, profile="ddtree", variants=(), mode="deploy", final=False):
    return {
        "index": index,
        "of": of,
        "name": name,
        "profile": profile,
        "variants": list(variants),
        "extra_args": {},
        "mode": mode,
        "final": final,
    }


def gains(*pairs):
    return {"gains": [{"concurrency": c, "gain": g, "before": 50.0, "new": 50.0 * (1 + g)} for c, g in pairs]}


class Run:
    """A record built as the role appends it."""

    def __init__(self):
        self.record = dr.new_record("r1")
        for stage, t in (("preflight", 0), ("snapshot", 1), ("install", 2), ("options", 3), ("baseline", 4)):
            self.add(stage, t)

    def add(self, event, t, result=None):
        self.record = dr.append(self.record, event, result=result, at=t)
        return self

    def candidate(self, c, t):
        return self.add("candidate", t, c)

    def fails_at_switch(self, t, cause="Not enough memory"):
        self.add("switch", t).add("stopped", t + 1)
        return self.add("failed", t + 3, {"task": "", "cause": cause, "fix": "lower it", "said": "", "figures": {}})

    def passes(self, t, figures, failed_at=None):
        self.add("switch", t).add("stopped", t + 1).add("ready", t + 4).add("probe", t + 4).add("probed", t + 5)
        self.add("equivalence", t + 5).add("gate", t + 8)
        if failed_at:
            return self.add("failed", t + 9, {"cause": failed_at, "figures": figures})
        return self.add("passed", t + 9, {"figures": figures})

    def restored(self, t):
        return self.add("restart", t).add("restored", t + 5).add("verified", t + 6, {"verified": True})


def test_one_candidate_failing_then_one_passing_is_deployed_second_of_two():
    run = Run().candidate(cand(1, 2, "ddtree"), 10).fails_at_switch(10)
    run.candidate(cand(2, 2, "ddtree+nograph", variants=["nograph"]), 20).passes(20, gains((1, 0.12)))
    run.add("done", 30, {"restarted": True})
    course = dr.summary(run.record, profile="ddtree", journal="/r/ct129.journal.txt")
    assert course["outcome"] == "deployed"
    assert course["outcome_text"] == "deployed ddtree+nograph, 2nd of 2"
    assert course["failure"] is None  # the first candidate's failure is not the host's
    first, second = course["candidates"]
    assert (first["result"], first["failed_step"], first["cause"], first["fix"]) == (
        "failed",
        "switch",
        "Not enough memory",
        "lower it",
    )
    assert first["journal"] == "/r/ct129.1-ddtree.journal.txt"
    assert second["result"] == "passed" and second["gain_at_production"] == 0.12
    assert course["kept"] == 2 == course["winner"] == course["serving"]
    # Down from the first stop (11) until the second candidate is ready (24): load 2 + switching 9 + load 3.
    assert course["downtime_s"] == 13.0
    assert course["downtime"] == {
        "candidate_load_s": 5.0,
        "probing_s": 0.0,
        "restore_s": 0.0,
        "restored_load_s": 0.0,
        "switching_s": 8.0,
    }
    assert sum(course["downtime"].values()) == course["downtime_s"]


def test_with_a_restore_between_the_downtime_is_two_outages_and_one_more_model_load():
    run = Run().candidate(cand(1, 2, "ddtree"), 10).fails_at_switch(10).restored(14)
    run.candidate(cand(2, 2, "ddtree+nograph"), 30).passes(30, gains((1, 0.12)))
    run.add("done", 40, {"restarted": True})
    course = dr.summary(run.record)
    # 11 -> 19 (load 2, restore 1, restored load 5) and 31 -> 34 (load 3).
    assert course["downtime_s"] == 11.0
    assert course["downtime"]["restored_load_s"] == 5.0 and course["downtime"]["switching_s"] == 0.0
    assert sum(course["downtime"].values()) == course["downtime_s"]
    assert course["candidates"][0]["restore"] == {"verified": True}
    assert course["outcome"] == "deployed"


def test_every_candidate_failing_rolls_back_with_each_cause_and_the_run_failure_recorded_once():
    run = Run().candidate(cand(1, 2, "ddtree"), 10).fails_at_switch(10, cause="Not enough memory")
    run.candidate(cand(2, 2, "ddtree+nograph"), 20).passes(20, gains((1, -0.2)), failed_at="gain gate not met")
    # The run's rescue records its failure again: the candidate's cause stays.
    run.add("stopped", 18).add(
        "failed", 31, {"cause": "none of 2 candidates passed", "task": "", "fix": "", "said": ""}
    )
    run.restored(32)
    course = dr.summary(run.record, journal="/r/h.journal.txt")
    assert course["outcome"] == "rolled_back"
    assert course["failure"]["cause"] == "gain gate not met" and course["failure"]["step"] == "gate"
    assert course["journal"] == "/r/h.2-ddtree+nograph.journal.txt"
    assert course["tried_text"] == (
        "none of 2 candidates passed (ddtree at switch: Not enough memory; ddtree+nograph at gate: gain gate not met)"
    )
    assert course["outcome_text"] == "rolled_back: none of 2 candidates passed"
    assert [a["cause"] for a in course["candidates"]] == ["Not enough memory", "gain gate not met"]
    assert sum(course["downtime"].values()) == pytest.approx(course["downtime_s"])
    assert course["downtime_s"] == 37 - 11


def test_a_later_candidate_failing_before_its_switch_leaves_the_unit_touched():
    run = Run().candidate(cand(1, 2, "ddtree"), 10).fails_at_switch(10)
    run.candidate(cand(2, 2, "dflash"), 20).add("options", 20).add("failed", 21, {"cause": "refused"})
    assert dr.touched(run.record) == "unit"
    run.restored(22)
    assert dr.outcome(run.record) == "rolled_back"


def test_a_tune_keeps_the_best_gain_at_the_highest_level_never_a_failed_one():
    run = Run()
    run.candidate(cand(1, 3, "ddtree", mode="tune"), 10).passes(10, gains((1, 0.30), (16, 0.05)))
    run.candidate(cand(2, 3, "ddtree+nograph", mode="tune"), 20).passes(20, gains((1, 0.10), (16, 0.12)))
    run.candidate(cand(3, 3, "dflash", mode="tune"), 30).passes(30, gains((1, 0.5), (16, 0.4)), failed_at="differs")
    course = dr.summary(run.record)
    assert course["winner"] == 2 and course["serving"] is None
    # switch.yml switches back to the winner, proved again, then done.
    run.candidate(cand(2, 3, "ddtree+nograph", mode="tune", final=True), 40).passes(40, gains((1, 0.1), (16, 0.11)))
    run.add("done", 50, {"restarted": True})
    course = dr.summary(run.record)
    assert course["outcome"] == "deployed" and course["kept"] == 2 and course["serving"] == 2
    assert course["outcome_text"] == "deployed ddtree+nograph, the best of 3, +12.0 % at concurrency 16"
    assert [a["final"] for a in course["candidates"]] == [False, False, False, True]


def test_winner_ties_go_to_the_earlier_candidate_and_unmeasured_gains_rank_last():
    attempts = [
        {"index": 1, "result": "passed", "gains": []},
        {"index": 2, "result": "passed", **gains((16, 0.1))},
        {"index": 3, "result": "passed", **gains((16, 0.1))},
        {"index": 4, "result": "failed", **gains((16, 0.9))},
    ]
    assert dc.winner(attempts) == 2
    assert dc.winner([{"index": 1, "result": "failed", **gains((16, 0.5))}]) is None
    # Slower than the baseline is never kept: the fallback serves the load better (issue 35).
    assert dc.winner([{"index": 1, "result": "passed", **gains((16, -0.01))}]) is None


def test_a_single_candidate_says_what_a_single_deploy_always_said():
    run = Run().candidate(cand(1, 1, "ddtree"), 10).passes(10, gains((1, 0.2)))
    run.add("done", 20, {"restarted": True})
    course = dr.summary(run.record)
    assert course["outcome_text"] == "deployed" and course["won"] is None and course["tried_text"] is None
    # The single-candidate downtime is today's: stop to ready.
    assert course["downtime_s"] == 3.0
    assert set(course["downtime"]) == {"candidate_load_s", "probing_s", "restore_s", "restored_load_s"}


def test_figures_of_steps_a_candidate_never_reached_are_not_its_own():
    stale = {"gains": [{"concurrency": 1, "gain": 0.3}], "probe": {"tokens_per_second": 60.0}, "gate": "pass"}
    run = Run().candidate(cand(1, 2, "ddtree"), 10).add("switch", 10).add("stopped", 11)
    run.add("failed", 12, {"cause": "oom", "figures": stale})
    first = dr.summary(run.record)["candidates"][0]
    assert first["gains"] == [] and first["probe"] == {} and first["gate"] == "not run"


def test_the_report_lists_every_candidate_and_the_one_kept():
    run = Run().candidate(cand(1, 2, "ddtree"), 10).fails_at_switch(10)
    run.candidate(cand(2, 2, "ddtree+nograph", variants=["nograph"]), 20).passes(20, gains((1, 0.12)))
    run.add("done", 30, {"restarted": True})
    report = dr.report(
        run.record, {"host": "ct129", "profile": "ddtree", "gate_concurrency": [1, 4], "release": "0.5.23"}
    )
    assert report["profile"] == "ddtree" and report["profile_variants"] == ["nograph"]
    assert report["candidate"] == "ddtree+nograph" and report["kept"] == 2
    assert report["outcome_text"] == "deployed ddtree+nograph, 2nd of 2"
    assert [a["name"] for a in report["candidates"]] == ["ddtree", "ddtree+nograph"]
    assert report["production_concurrency"] == 4 and report["release"] == "0.5.23"
