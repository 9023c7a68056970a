# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""_sglang_adaptive: adaptive speculation's rules read from real SGLang releases (the wheels setup downloads)."""

import json
import textwrap

import pytest
from ansible_collections.ddtree.sglang.plugins.module_utils import _sglang_adaptive as adaptive
from sglang_releases import ddtree_base_version, pinned_sglang_version, unpack_sglang


@pytest.fixture(scope="module")
def rules(tmp_path_factory):
    """read_rules of each release, by version."""
    found = {}
    for version in (pinned_sglang_version(), ddtree_base_version()):
        found[version] = adaptive.read_rules(str(unpack_sglang(version, tmp_path_factory.mktemp(version))))
    return found


def test_the_pinned_release_rules_are_its_source(rules):
    r = rules["0.5.23"]
    # sglang/srt/speculative/adaptive_spec_params.py:28-53 of 0.5.23.
    assert {k: v["candidate_steps"] for k, v in r["default_config"].items()} == {
        "1": [1, 3, 5, 7],
        "8": [0, 1, 3],
        "32": [0, 1],
        "64": [0],
    }
    assert r["default_config_where"] == "sglang/srt/speculative/adaptive_spec_params.py:28"
    assert [s["where"] for s in r["reasons"] if "test" in s] == [
        f"sglang/srt/speculative/adaptive_spec_params.py:{line}" for line in (61, 69, 75, 80, 85, 90, 95)
    ]
    # The helper the attention-DP condition calls, followed into its module (runtime_context.py:191-199).
    assert r["helpers"]["attn_dp_enabled_of"]["expr"] == "cfg.attn_dp_size > 1 or ep_scale_joiner_of(cfg)"
    assert r["defaults"]["attn_dp_size"] == 1 and r["defaults"]["enable_pdmux"] is False
    assert r["disabled_warning"]["where"] == "sglang/srt/arg_groups/speculative_hook.py:1381"
    assert r["steps_rule"]["where"] == "sglang/srt/arg_groups/speculative_hook.py:1416"
    json.dumps(r)  # data, for the simulator's table


def test_each_release_speaks_for_itself(rules):
    """0.5.14 (the base of #29907) has other tiers and reads enable_dp_attention itself: what it says, not 0.5.23's."""
    r = rules["0.5.14"]
    assert r["default_config"]["1"]["candidate_steps"] == [1, 3, 7]
    verdict = adaptive.check(
        r, {"speculative_adaptive": True, "speculative_algorithm": "EAGLE", "enable_dp_attention": True}
    )
    assert verdict["adaptive"] is False
    assert verdict["reason"].startswith("enable_dp_attention=True is not supported")
    verdict = adaptive.check(
        rules["0.5.23"], {"speculative_adaptive": True, "speculative_algorithm": "EAGLE", "attn_dp_size": 2}
    )
    assert verdict["reason"].startswith("attention DP is not supported")


@pytest.mark.parametrize(
    ("values", "reason"),
    [
        ({"speculative_algorithm": "DDTREE"}, "speculative_algorithm=DDTREE (only EAGLE/EAGLE3 are supported)"),
        ({"speculative_algorithm": "DFLASH"}, "speculative_algorithm=DFLASH (only EAGLE/EAGLE3 are supported)"),
        ({}, "speculative_algorithm=None (only EAGLE/EAGLE3 are supported)"),
        (
            {"speculative_algorithm": "EAGLE", "speculative_eagle_topk": 8},
            "speculative_eagle_topk=8 (only topk=1 is supported)",
        ),
        (
            {"speculative_algorithm": "EAGLE3", "enable_two_batch_overlap": True},
            "enable_two_batch_overlap=True is not supported "
            "(adaptive state swap would discard the TboAttnBackend wrapper)",
        ),
        (
            {"speculative_algorithm": "EAGLE", "ep_join_mode": "scale"},
            "attention DP is not supported (adaptive tier decisions are not synchronized across DP ranks)",
        ),
        ({"speculative_algorithm": "EAGLE", "speculative_eagle_topk": 1}, None),
    ],
)
def test_reasons(rules, values, reason):
    verdict = adaptive.check(rules["0.5.23"], dict(values, speculative_adaptive=True))
    assert verdict["reason"] == reason
    assert verdict["adaptive"] is (reason is None)
    if reason:
        assert (
            verdict["warning"] == f"speculative_adaptive disabled: {reason}. Falling back to static speculative params."
        )


def test_not_asked_is_not_judged(rules):
    assert adaptive.check(rules["0.5.23"], {"speculative_algorithm": "DDTREE"}) == {
        "asked": False, "adaptive": False, "reason": None, "where": None, "warning": None,
        "problems": [], "not_checked": [], "tiers": None,
    }  # fmt: skip


def test_steps_and_tiers(rules):
    r = rules["0.5.23"]
    ok = adaptive.check(r, {"speculative_adaptive": True, "speculative_algorithm": "EAGLE", "speculative_num_steps": 3})
    assert ok["tiers"] == {1: [1, 3, 5, 7], 8: [0, 1, 3], 32: [0, 1], 64: [0]} and ok["problems"] == []
    own = {"1": {"candidate_steps": [3]}, "16": {"candidate_steps": [0]}, "note": "ignored: not a batch size"}
    verdict = adaptive.check(
        r, {"speculative_adaptive": True, "speculative_algorithm": "EAGLE", "speculative_num_steps": 5}, own
    )
    assert verdict["problems"] == [
        "ValueError: --speculative-num-steps=5 is not in the adaptive config candidate_steps [0, 3]. Pass one of "
        "those values. (sglang/srt/arg_groups/speculative_hook.py:1416)"
    ]
    assert adaptive.candidate_steps(own) == [0, 3]
    assert adaptive.config_problems({"1": {"candidate_steps": []}, "8": {"candidate_steps": [True]}}, r) == [
        "BS 1: candidate_steps must be a list of non-negative ints, got [] "
        "(sglang/srt/speculative/adaptive_spec_params.py:103-139)",
        "BS 8: candidate_steps must be a list of non-negative ints, got [True] "
        "(sglang/srt/speculative/adaptive_spec_params.py:103-139)",
    ]


def test_what_cannot_be_read_statically_is_said_not_guessed(tmp_path):
    """A condition on a method call or an unknown field is reported as not checked, and the next rules still apply."""
    package = tmp_path / "sglang"
    source = package / "srt" / "speculative" / "adaptive_spec_params.py"
    source.parent.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    source.write_text(
        textwrap.dedent(
            '''
            DEFAULT_ADAPTIVE_CONFIG = {"1": {"candidate_steps": [1, 3]}}

            def adaptive_unsupported_reason(server_args):
                """Why not."""
                cfg = server_args
                if cfg.platform.is_special():
                    return "special platform"
                if cfg.unheard_of_field:
                    return "unheard of"
                if not (cfg.speculative_algorithm in ("EAGLE",) and cfg.speculative_eagle_topk == 1):
                    return f"algorithm={cfg.speculative_algorithm!r}"
                return None
            '''
        )
    )
    r = adaptive.read_rules(str(package))
    verdict = adaptive.check(r, {"speculative_adaptive": True, "speculative_algorithm": "DDTREE"})
    assert verdict["reason"] == "algorithm='DDTREE'"
    assert verdict["not_checked"] == [
        "sglang/srt/speculative/adaptive_spec_params.py:7: cfg.platform.is_special()",
        "sglang/srt/speculative/adaptive_spec_params.py:9: cfg.unheard_of_field",
    ]
    assert r["disabled_warning"] is None and r["steps_rule"] is None
    verdict = adaptive.check(
        r, {"speculative_adaptive": True, "speculative_algorithm": "EAGLE", "speculative_eagle_topk": 1}
    )
    assert verdict["adaptive"] is True and verdict["tiers"] == {1: [1, 3]}


def test_a_release_without_adaptive_says_so(tmp_path):
    (tmp_path / "sglang").mkdir()
    with pytest.raises(adaptive.AdaptiveSourceError, match="has no srt/speculative/adaptive_spec_params.py"):
        adaptive.read_rules(str(tmp_path / "sglang"))
