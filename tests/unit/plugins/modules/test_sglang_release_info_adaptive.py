# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""sglang_release_info argv= with --speculative-adaptive: the unit against the release's own adaptive rules.

The release is the pinned wheel's files with sgl-project/sglang#29907's field (the DDTree build the deploys
run, as tests/sglang_sim/stand_in_release.py makes it for the test hosts), installed as a release venv. The
units are the ones the role's tables render (scripts/check_release_flags.py), so "an adaptive NEXTN candidate
renders flags the pinned release accepts" and "an adaptive DDTREE candidate is refused, quoting the release's
reason" are checked on what a deploy would run.
"""

import json
import sys
from pathlib import Path

import pytest
from sglang_releases import pinned_sglang_version, unpack_sglang
from test_sglang_release_info_flags import run_module

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "scripts"))
from check_release_flags import render  # noqa: E402

VERSION = pinned_sglang_version()


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    root = tmp_path_factory.mktemp("release-ddtree")
    site = root / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    unpack_sglang(VERSION, site, ddtree=True)
    return root


def unit(profile, variants=("adaptive",), class_id="ampere_48g", **extra):
    argv = render(class_id, profile, None, VERSION, variant_list=variants)
    for field, value in extra.items():
        argv += [f"--{field.replace('_', '-')}", str(value)]
    return argv


def test_an_adaptive_nextn_unit_is_accepted_with_the_release_tiers(tmp_path, release):
    argv = unit("nextn")
    assert "--speculative-adaptive" in argv and argv[argv.index("--speculative-algorithm") + 1] == "NEXTN"
    ok, result = run_module(tmp_path, path=str(release), argv=argv)
    assert ok, result.get("msg")
    assert result["flag_problems"] == []
    adaptive = result["adaptive"]
    assert adaptive["adaptive"] is True and adaptive["reason"] is None and adaptive["problems"] == []
    # DEFAULT_ADAPTIVE_CONFIG of 0.5.23 (sglang/srt/speculative/adaptive_spec_params.py:28-53), read from the release.
    assert adaptive["tiers"] == {"1": [1, 3, 5, 7], "8": [0, 1, 3], "32": [0, 1], "64": [0]}
    # The out-of-tree platform's worker cannot be read statically: said, not guessed.
    assert adaptive["not_checked"] == [
        "sglang/srt/speculative/adaptive_spec_params.py:69: platform_worker_cls is not None"
    ]


@pytest.mark.parametrize("profile", ["ddtree", "dflash", "plain"])
def test_an_adaptive_unit_the_release_would_not_adapt_is_refused_with_its_reason(tmp_path, release, profile):
    ok, result = run_module(tmp_path, path=str(release), argv=unit(profile))
    assert not ok
    algorithm = {"ddtree": "DDTREE", "dflash": "DFLASH", "plain": "None"}[profile]
    reason = f"speculative_algorithm={algorithm} (only EAGLE/EAGLE3 are supported)"
    package = release / "lib" / "python3.11" / "site-packages" / "sglang"
    assert result["msg"] == (
        f"SGLang {VERSION} at {package} would not run this unit adaptive: adaptive_unsupported_reason() says "
        f'"{reason}" (sglang/srt/speculative/adaptive_spec_params.py:61), so at start the server logs '
        f'"speculative_adaptive disabled: {reason}. Falling back to static speculative params." '
        "(sglang/srt/arg_groups/speculative_hook.py:1381) and serves static speculation. Drop the adaptive variant "
        "(--speculative-adaptive) from this unit, or change what the reason names (adaptive serves EAGLE, EAGLE3 "
        "and NEXTN)."
    )
    assert result["adaptive"]["adaptive"] is False


def test_the_same_units_without_the_variant_pass(tmp_path, release):
    for profile in ("ddtree", "nextn", "plain"):
        ok, result = run_module(tmp_path, path=str(release), argv=unit(profile, variants=()))
        assert ok, result.get("msg")
        assert result["adaptive"] is None


def test_a_tree_draft_is_a_reason_too(tmp_path, release):
    ok, result = run_module(tmp_path, path=str(release), argv=unit("nextn", speculative_eagle_topk=4))
    assert not ok
    assert result["adaptive"]["reason"] == "speculative_eagle_topk=4 (only topk=1 is supported)"
    assert result["adaptive"]["where"] == "sglang/srt/speculative/adaptive_spec_params.py:75"


def test_num_steps_outside_the_tiers_fails_as_the_server_would_at_start(tmp_path, release):
    argv = unit("nextn")
    argv[argv.index("--speculative-num-steps") + 1] = "4"
    ok, result = run_module(tmp_path, path=str(release), argv=argv)
    assert not ok
    assert result["msg"].endswith(
        "would refuse --speculative-adaptive at start: ValueError: --speculative-num-steps=4 is not in the adaptive "
        "config candidate_steps [0, 1, 3, 5, 7]. Pass one of those values. "
        "(sglang/srt/arg_groups/speculative_hook.py:1416). Give --speculative-num-steps one of the tiers' candidate "
        "steps, or fix the tiers."
    ), result["msg"]


def test_a_tiers_file_is_read_and_judged(tmp_path, release):
    tiers = tmp_path / "tiers.json"
    tiers.write_text(json.dumps({"1": {"candidate_steps": [3]}, "16": {"candidate_steps": [0]}}))
    ok, result = run_module(tmp_path, path=str(release), argv=unit("nextn", speculative_adaptive_config=tiers))
    assert ok, result.get("msg")
    assert result["adaptive"]["tiers"] == {"1": [3], "16": [0]}
    tiers.write_text(json.dumps({"1": {"candidate_steps": [-1]}}))
    ok, result = run_module(tmp_path, path=str(release), argv=unit("nextn", speculative_adaptive_config=tiers))
    assert not ok
    assert "BS 1: candidate_steps must be a list of non-negative ints, got [-1]" in result["msg"]
    missing = tmp_path / "none.json"
    ok, result = run_module(tmp_path, path=str(release), argv=unit("nextn", speculative_adaptive_config=missing))
    assert not ok and f"--speculative-adaptive-config {missing} cannot be read as JSON" in result["msg"]
