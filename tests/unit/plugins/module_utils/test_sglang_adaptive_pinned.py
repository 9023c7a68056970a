# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""_sglang_adaptive_pinned: the pinned release's adaptive rules the preflight judges candidates by (issue 35) are the
pinned wheel's own, read again here from it (the release and #29907's build of it): the copy cannot drift."""

import pprint

import pytest
from ansible_collections.ddtree.sglang.plugins.module_utils import _sglang_adaptive as adaptive
from ansible_collections.ddtree.sglang.plugins.module_utils import _sglang_adaptive_pinned as pinned
from ansible_collections.ddtree.sglang.plugins.module_utils._sglang_source import read_package
from sglang_releases import pinned_sglang_version, unpack_sglang

SOURCE = "sglang/srt/speculative/adaptive_spec_params.py"


@pytest.mark.parametrize("ddtree", [False, True], ids=["release", "ddtree-build"])
def test_the_rules_kept_are_the_pinned_wheels_own(tmp_path, ddtree):
    assert pinned.VERSION == pinned_sglang_version(), "sglang_install_version moved: read the new wheel's rules"
    package_dir = str(unpack_sglang(pinned.VERSION, tmp_path, ddtree=ddtree))
    read = adaptive.read_rules(package_dir)
    assert read == pinned.RULES, "the pinned wheel's rules changed; RULES = " + pprint.pformat(read, sort_dicts=False)
    assert read_package(package_dir)["aliases"] == pinned.ALIASES


def test_an_adaptive_ddtree_unit_is_refused_with_the_releases_reason_and_line():
    said = pinned.refusal(
        {"speculative_algorithm": "DDTREE", "speculative_ddtree_budget": 15, "speculative_adaptive": True}
    )
    assert said.startswith(
        'SGLang 0.5.23 would not run it adaptive: adaptive_unsupported_reason() says "speculative_algorithm=DDTREE '
        f'(only EAGLE/EAGLE3 are supported)" ({SOURCE}:61), so at start the server logs "speculative_adaptive '
        "disabled: speculative_algorithm=DDTREE (only EAGLE/EAGLE3 are supported). Falling back to static "
        'speculative params." (sglang/srt/arg_groups/speculative_hook.py:1381)'
    ), said
    assert "Drop the adaptive variant (--speculative-adaptive)" in said


@pytest.mark.parametrize(
    ("options", "words"),
    [
        # NEXTN runs as EAGLE (the release's alias): the nextn profile with the adaptive variant runs adaptive.
        ({"speculative_algorithm": "NEXTN", "speculative_num_steps": 3, "speculative_eagle_topk": 1}, None),
        ({"speculative_algorithm": "nextn", "speculative_eagle_topk": 1}, None),
        # No speculation (the plain profile): the release's "speculative_algorithm=None".
        ({}, f'"speculative_algorithm=None (only EAGLE/EAGLE3 are supported)" ({SOURCE}:61)'),
        (
            {"speculative_algorithm": "EAGLE", "speculative_eagle_topk": 4},
            f'"speculative_eagle_topk=4 (only topk=1 is supported)" ({SOURCE}:75)',
        ),
        (
            {"speculative_algorithm": "NEXTN", "enable_two_batch_overlap": True},
            f'(adaptive state swap would discard the TboAttnBackend wrapper)" ({SOURCE}:90)',
        ),
        # A starting step outside every tier's candidate steps: the server would not start (ValueError).
        (
            {"speculative_algorithm": "NEXTN", "speculative_num_steps": 4},
            "would refuse --speculative-adaptive at start: ValueError: --speculative-num-steps=4 is not in the "
            "adaptive config candidate_steps [0, 1, 3, 5, 7]. Pass one of those values. "
            "(sglang/srt/arg_groups/speculative_hook.py:1416)",
        ),
        # Tiers from a file on the host: the steps are checked against them by the options step, not against the
        # release's default tiers here.
        (
            {"speculative_algorithm": "NEXTN", "speculative_num_steps": 4, "speculative_adaptive_config": "/x.json"},
            None,
        ),
    ],
)
def test_what_the_pinned_release_says_of_adaptive_units(options, words):
    said = pinned.refusal(dict(options, speculative_adaptive=True))
    if words is None:
        assert said is None
    else:
        assert words in said, said


def test_a_unit_that_asks_for_no_adaptive_speculation_is_not_judged():
    assert pinned.refusal({"speculative_algorithm": "DDTREE"}) is None
    assert pinned.refusal({"speculative_algorithm": "DDTREE", "speculative_adaptive": False}) is None
