# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""_sglang_source: reading SpeculativeAlgorithm from an installed SGLang without importing it.

The base texts are SGLang 0.5.23's own files (tests/fixtures/patches/*.orig: spec_info.py
whole, excerpts of arg_groups/fields/spec.py and arg_groups/speculative_hook.py); the DDTree
patch (#29907's wiring) is the one the molecule scenarios apply to the real wheel.
"""

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml
from ansible_collections.ddtree.sglang.plugins.module_utils import _sglang_source as src

PATCHES = Path(__file__).resolve().parents[3] / "fixtures" / "patches"
SPEC_INFO_0_5_23 = (PATCHES / "sglang-0.5.23-spec_info.py.orig").read_text()
# The other 0.5.23 files #29907's wiring touches, by their path in the package.
EXCERPTS_0_5_23 = {
    "srt/arg_groups/fields/spec.py": PATCHES / "sglang-0.5.23-fields-spec.py.orig",
    "srt/arg_groups/speculative_hook.py": PATCHES / "sglang-0.5.23-speculative_hook.py.orig",
}
PR_PATCH = "sglang-0.5.23-ddtree-pr29907.patch"
# spec_registry.py of 0.5.23 holds the alias; spec_info's from_string resolves it to EAGLE.
REGISTRY_0_5_23 = '_RESERVED_ALIASES = frozenset({"NEXTN"})\n'
MEMBERS_0_5_23 = ["DFLASH", "UNO", "DSPARK", "EAGLE", "EAGLE3", "FROZEN_KV_MTP", "STANDALONE", "NGRAM", "NONE"]


def make_site(root, spec_info=SPEC_INFO_0_5_23, registry=REGISTRY_0_5_23, version="0.5.23"):
    """site-packages of a release venv: sglang/srt/speculative/{spec_info,spec_registry}.py + dist-info."""
    site = Path(root) / "lib" / "python3.11" / "site-packages"
    spec_dir = site / "sglang" / "srt" / "speculative"
    spec_dir.mkdir(parents=True)
    (site / "sglang" / "__init__.py").write_text(f"__version__ = {version!r}\n")
    (spec_dir / "spec_info.py").write_text(spec_info)
    for relative, excerpt in EXCERPTS_0_5_23.items():
        (site / "sglang" / relative).parent.mkdir(parents=True, exist_ok=True)
        (site / "sglang" / relative).write_text(excerpt.read_text())
    if registry is not None:
        (spec_dir / "spec_registry.py").write_text(registry)
    dist_info = site / f"sglang-{version}.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: sglang\nVersion: {version}\n\nVersion: 9.9\n")
    return site


def gnu_patch(site, patch_name):
    """Apply a fixture patch as the role does: base directory site-packages, strip 1, forward only."""
    return subprocess.run(
        ["patch", "--forward", "--batch", "--strip=1", f"--directory={site}", f"--input={PATCHES / patch_name}"],
        capture_output=True,
        text=True,
        check=False,
    )


def analyze(text, **extra):
    return src.analyze_spec_info(text, "spec_info.py", extra_sources=extra or None)


def wiring(site):
    package = src.find_package_dir(str(site))
    return src.read_ddtree_wiring(package, src.find_spec_info(package))


def test_released_0_5_23_has_no_ddtree_and_nextn_is_an_alias(tmp_path):
    site = make_site(tmp_path)
    result = src.read_package(src.find_package_dir(tmp_path))
    assert result["algorithms"] == MEMBERS_0_5_23
    assert result["aliases"] == {"NEXTN": "EAGLE"}
    assert result["is_dflash"] == ["DFLASH"]
    assert result["spec_info_path"] == str(site / "sglang" / "srt" / "speculative" / "spec_info.py")
    assert src.check_requirements(result, ["NEXTN"]) == []
    assert src.check_requirements(result, ["dflash"]) == []
    problems = src.check_requirements(result, ["DDTREE"])
    assert len(problems) == 1
    assert "no DDTREE" in problems[0] and "#29907" in problems[0] and "sglang_install_patches" in problems[0]
    assert wiring(site) == {
        "registered": False,
        "worker": None,
        "budget_field": None,
        "hook": None,
        "constraints": {},
    }
    assert src.check_ddtree_wiring(wiring(site)) == []  # the missing member is check_requirements' to name


def test_pr_29907_wiring_on_0_5_23_is_read_as_the_pr_defines_it(tmp_path):
    site = make_site(tmp_path)
    applied = gnu_patch(site, PR_PATCH)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    result = src.read_package(src.find_package_dir(tmp_path))
    assert result["algorithms"] == ["DFLASH", "DDTREE"] + MEMBERS_0_5_23[1:]
    # DDTREE has its own worker: is_dflash() stays DFLASH only, as in the PR.
    assert result["is_dflash"] == ["DFLASH"]
    assert src.check_requirements(result, ["DDTREE", "DFLASH", "NEXTN"]) == []
    found = wiring(site)
    package = site / "sglang"
    assert found["registered"] is True
    assert found["worker"]["class"] == "DDTreeWorker"
    assert found["worker"]["module"] == "sglang.srt.speculative.ddtree_worker"
    assert found["worker"]["file"] == str(package / "srt" / "speculative" / "ddtree_worker.py")
    assert found["worker"]["defined"] is True
    assert found["budget_field"].startswith(str(package / "srt" / "arg_groups" / "fields" / "spec.py") + ":")
    assert found["hook"].startswith(str(package / "srt" / "arg_groups" / "speculative_hook.py") + ":")
    assert found["constraints"] == {"page_size": 1, "disable_overlap_schedule": True}
    assert src.check_ddtree_wiring(found) == []


def test_field_report_is_dflash_patch_routes_ddtree_to_the_dflash_worker(tmp_path):
    # The field report's fix: DDTREE a member, is_dflash() true for it. On the real 0.5.23
    # create_worker() that sends DDTREE down the DFLASH branch: linear DFlash, not a tree.
    site = make_site(tmp_path)
    applied = gnu_patch(site, "sglang-ddtree-algorithm.patch")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    result = src.read_package(src.find_package_dir(tmp_path))
    assert result["is_dflash"] == ["DFLASH", "DDTREE"]
    assert src.check_requirements(result, ["DDTREE"]) == []  # the member is there...
    found = wiring(site)
    assert found["worker"]["class"] == "DFlashWorkerV2"  # ...but it runs DFlash
    problems = src.check_ddtree_wiring(found)
    assert len(problems) == 2
    assert "gives DDTREE the DFlashWorkerV2 worker, not DDTreeWorker" in problems[0]
    assert "is_dflash() patch" in problems[0] and "refs/pull/29907/head" in problems[0]
    assert "no field speculative_ddtree_budget" in problems[1] and "--speculative-ddtree-budget" in problems[1]


def test_is_dflash_patch_on_top_of_the_pr_still_misroutes(tmp_path):
    # The is_dflash() patch is optional, not the gate; with #29907's wiring it is harmful,
    # because create_worker() tests is_dflash() before is_ddtree().
    site = make_site(tmp_path)
    assert gnu_patch(site, PR_PATCH).returncode == 0
    spec_info = site / "sglang" / "srt" / "speculative" / "spec_info.py"
    text = spec_info.read_text()
    old = "return self == SpeculativeAlgorithm.DFLASH\n"
    new = "return self in (SpeculativeAlgorithm.DFLASH, SpeculativeAlgorithm.DDTREE)\n"
    spec_info.write_text(text.replace(old, new))
    problems = src.check_ddtree_wiring(wiring(site))
    assert len(problems) == 1 and "DFlashWorkerV2 worker, not DDTreeWorker" in problems[0]


def test_wiring_without_the_worker_module_or_class_is_an_import_error(tmp_path):
    site = make_site(tmp_path)
    assert gnu_patch(site, PR_PATCH).returncode == 0
    worker = site / "sglang" / "srt" / "speculative" / "ddtree_worker.py"
    worker.write_text("class DFlashTreeWorker:\n    pass\n")
    problems = src.check_ddtree_wiring(wiring(site))
    assert len(problems) == 1 and "which does not define it" in problems[0] and "ImportError" in problems[0]
    worker.unlink()
    problems = src.check_ddtree_wiring(wiring(site))
    assert len(problems) == 1 and "is not in the installed package" in problems[0]


CREATE_WORKER = """
from enum import Enum, auto


class SpeculativeAlgorithm(Enum):
    DFLASH = auto()
    DDTREE = auto()
    EAGLE = auto()
    NONE = auto()

    def is_dflash(self):
        return self == SpeculativeAlgorithm.DFLASH

    def is_ddtree(self):
        return self == SpeculativeAlgorithm.DDTREE

    def is_eagle(self):
        return self == SpeculativeAlgorithm.EAGLE

    def create_worker(self, server_args):
{body}
"""


@pytest.mark.parametrize(
    "body, expected",
    [
        # the PR's shape: an early return per algorithm, the import inside the branch
        (
            "if self.is_dflash():\n    from x.dflash import DFlashWorkerV2\n\n    return DFlashWorkerV2\n"
            "if self.is_ddtree():\n    from x.ddtree import DDTreeWorker\n\n    return DDTreeWorker\n"
            "raise ValueError('unreachable')",
            {"class": "DDTreeWorker", "module": "x.ddtree"},
        ),
        # elif chains, conditions mixing the algorithm with server args, an override that ignores self
        (
            "override = server_args.platform_worker\nif override is not None:\n    return override\n"
            "if self.is_eagle() and server_args.multi_layer:\n    return MultiLayer\n"
            "elif self.is_dflash() or self == SpeculativeAlgorithm.EAGLE:\n    return Other\n"
            "elif not self.is_dflash():\n    return DDTreeWorker",
            {"class": "DDTreeWorker", "module": "x.ddtree"},
        ),
        ("if self.is_dflash():\n    return DFlashWorker\nraise ValueError('unreachable')", None),
        ("if server_args.flag and self.is_ddtree() or server_args.other:\n    return DDTreeWorker", "unknown"),
    ],
)
def test_selected_worker_follows_create_worker(body, expected):
    text = "from x.ddtree import DDTreeWorker\n" + CREATE_WORKER.format(
        body="\n".join("        " + line if line else "" for line in body.split("\n"))
    )
    tree = src._parse(text, "spec_info.py")
    class_node = src._find_class(tree, "SpeculativeAlgorithm")
    found = src.selected_worker(tree, class_node, src._enum_members(class_node))
    if expected == "unknown":
        assert set(found) == {"unknown"}
    elif expected is None:
        assert found is None
    else:
        assert {key: found[key] for key in expected} == expected


def test_stale_patch_fails_on_its_second_hunk(tmp_path):
    site = make_site(tmp_path)
    applied = gnu_patch(site, "sglang-ddtree-stale.patch")
    assert applied.returncode == 1
    assert "Hunk #2 FAILED" in applied.stdout


ENUM = """
from enum import Enum, auto


class SpeculativeAlgorithm(Enum):
    DFLASH = auto()
    DDTREE = auto()
    EAGLE = auto()
    NONE = auto()

    def is_none(self):
        return self == SpeculativeAlgorithm.NONE

    def is_ddtree(self):
        return self is SpeculativeAlgorithm.DDTREE

    def is_dflash(self):
        {body}
"""


@pytest.mark.parametrize(
    "body, expected",
    [
        ("return self == SpeculativeAlgorithm.DFLASH", ["DFLASH"]),
        ("return SpeculativeAlgorithm.DFLASH == self", ["DFLASH"]),
        ("return self in (SpeculativeAlgorithm.DFLASH, SpeculativeAlgorithm.DDTREE)", ["DFLASH", "DDTREE"]),
        ("return self in [SpeculativeAlgorithm.DDTREE]", ["DDTREE"]),
        ("return self in {SpeculativeAlgorithm.DFLASH, SpeculativeAlgorithm.DDTREE}", ["DFLASH", "DDTREE"]),
        ("return self in frozenset((SpeculativeAlgorithm.DDTREE, SpeculativeAlgorithm.DFLASH))", ["DFLASH", "DDTREE"]),
        ("return self == SpeculativeAlgorithm.DFLASH or self.is_ddtree()", ["DFLASH", "DDTREE"]),
        ('"""Docstring first."""\n        return self.is_ddtree()', ["DDTREE"]),
        ("return not self.is_none() and self != SpeculativeAlgorithm.EAGLE", ["DFLASH", "DDTREE"]),
        ("return self not in (SpeculativeAlgorithm.EAGLE, SpeculativeAlgorithm.NONE)", ["DFLASH", "DDTREE"]),
        ("return False", []),
        ("return self.is_dflash()", None),  # recursion: unknown, not a guess
        ('return self.name.startswith("D")', None),
        ("x = 1\n        return x == 1", None),
        ("return self in _DFLASH_FAMILY", None),
    ],
)
def test_is_dflash_forms(body, expected):
    result = analyze(ENUM.format(body=body))
    assert result["is_dflash"] == expected


def test_unknown_worker_selection_asks_for_the_import_check():
    problems = src.check_ddtree_wiring(
        {"registered": True, "worker": {"unknown": 12}, "budget_field": "x.py:1", "hook": None, "constraints": {}}
    )
    assert problems == [
        "which worker SpeculativeAlgorithm.create_worker() selects for DDTREE cannot be read statically (line 12): "
        "enable the runtime import check on a host with the full stack"
    ]


def test_no_is_dflash_method_is_unknown():
    text = ENUM.format(body="return True").replace("def is_dflash", "def is_other")
    assert analyze(text)["is_dflash"] is None


# SGLang before the Enum rework: IntEnum, a name_map in from_string (older: NEXTN rewritten in ServerArgs).
OLD_INT_ENUM = """
from enum import IntEnum, auto


class SpeculativeAlgorithm(IntEnum):
    NONE = auto()
    EAGLE = auto()
    EAGLE3 = auto()

    def is_eagle(self):
        return self == SpeculativeAlgorithm.EAGLE or self == SpeculativeAlgorithm.EAGLE3

    @staticmethod
    def from_string(name: str):
        name_map = {
            "EAGLE": SpeculativeAlgorithm.EAGLE,
            "EAGLE3": SpeculativeAlgorithm.EAGLE3,
            "MTP": SpeculativeAlgorithm.EAGLE,
            None: SpeculativeAlgorithm.NONE,
        }
        return name_map[name.upper() if name else None]
"""
OLD_SERVER_ARGS = """
class ServerArgs:
    def __post_init__(self):
        if self.speculative_algorithm == "NEXTN":
            self.speculative_algorithm = "EAGLE"
"""


def test_old_layout_aliases_from_name_map_and_server_args():
    result = analyze(OLD_INT_ENUM, **{"srt/server_args.py": OLD_SERVER_ARGS})
    assert result["algorithms"] == ["NONE", "EAGLE", "EAGLE3"]
    assert result["aliases"] == {"MTP": "EAGLE", "NEXTN": "EAGLE"}
    assert result["is_dflash"] is None
    assert src.check_requirements(result, ["NEXTN", "EAGLE3"]) == []
    assert "no DFLASH" in src.check_requirements(result, ["DFLASH"])[0]


def test_nextn_rewritten_in_a_speculative_hook_is_an_alias():
    # PR 29907's base has no alias in from_string: a server-args hook turns the name into EAGLE
    # (with a Gemma4 draft into FROZEN_KV_MTP, in a nested branch that does not test the name).
    hook = (
        "def _resolve(speculative_algorithm, draft_is_gemma4):\n"
        '    if speculative_algorithm == "EAGLE3" and draft_is_gemma4:\n'
        '        raise ValueError("EAGLE3 is not supported for this draft")\n'
        '    if speculative_algorithm == "NEXTN" or speculative_algorithm == "EAGLE":\n'
        "        if draft_is_gemma4:\n"
        '            return "FROZEN_KV_MTP"\n'
        '        return "EAGLE"\n'
        "    return speculative_algorithm\n"
    )
    enum = CREATE_WORKER.format(body="        return None")
    assert analyze(enum)["aliases"] == {}
    result = analyze(enum, **{"srt/arg_groups/speculative_hook.py": hook})
    assert result["aliases"] == {"NEXTN": "EAGLE"}
    assert src.check_requirements(result, ["NEXTN"]) == []


def test_alias_target_from_reserved_aliases_check():
    result = analyze(SPEC_INFO_0_5_23, **{"srt/speculative/spec_registry.py": REGISTRY_0_5_23})
    assert result["aliases"] == {"NEXTN": "EAGLE"}
    # Without the registry file the alias is not known (spec_info.py only tests membership).
    assert analyze(SPEC_INFO_0_5_23)["aliases"] == {}


def test_registry_based_class_is_refused_with_the_way_out():
    text = "class SpeculativeAlgorithm(metaclass=Meta):\n    __slots__ = ('name',)\n    _next_value: int = 0\n"
    with pytest.raises(src.SglangSourceError, match="without enum members.*runtime import check"):
        analyze(text)


def test_missing_class_and_broken_source_are_named():
    with pytest.raises(src.SglangSourceError, match="does not define class SpeculativeAlgorithm"):
        analyze("X = 1\n")
    with pytest.raises(src.SglangSourceError, match=r"spec_info.py does not parse: .* \(line 2\)"):
        analyze("class SpeculativeAlgorithm:\n    DFLASH = = 1\n")


@pytest.mark.parametrize("layout", ["venv", "site-packages", "package"])
def test_find_package_dir_layouts(tmp_path, layout):
    site = make_site(tmp_path)
    given = {"venv": tmp_path, "site-packages": site, "package": site / "sglang"}[layout]
    assert src.find_package_dir(str(given)) == str(site / "sglang")


def test_find_package_dir_errors(tmp_path):
    with pytest.raises(src.SglangSourceError, match="does not exist"):
        src.find_package_dir(str(tmp_path / "nope"))
    with pytest.raises(src.SglangSourceError, match="no sglang package under"):
        src.find_package_dir(str(tmp_path))


def test_spec_info_found_by_scan_when_moved(tmp_path):
    site = make_site(tmp_path)
    speculative = site / "sglang" / "srt" / "speculative"
    (speculative / "spec_info.py").rename(speculative / "algorithms.py")
    assert src.find_spec_info(str(site / "sglang")) == str(speculative / "algorithms.py")
    (speculative / "algorithms.py").unlink()
    with pytest.raises(src.SglangSourceError, match="defines class SpeculativeAlgorithm"):
        src.find_spec_info(str(site / "sglang"))


def test_read_distribution_version_and_origin(tmp_path):
    site = make_site(tmp_path, version="0.5.24.dev0")
    direct_url = {"url": "https://github.com/example/sglang", "vcs_info": {"vcs": "git", "commit_id": "abc123"}}
    (site / "sglang-0.5.24.dev0.dist-info" / "direct_url.json").write_text(json.dumps(direct_url))
    info = src.read_distribution(str(site / "sglang"))
    # Only the header's Version counts, not a "Version:" line in the description.
    assert info["version"] == "0.5.24.dev0"
    assert info["direct_url"] == direct_url


def test_read_distribution_without_dist_info(tmp_path):
    (tmp_path / "sglang").mkdir()
    (tmp_path / "sglang_router-1.0.dist-info").mkdir()
    assert src.read_distribution(str(tmp_path / "sglang")) == {"version": None, "direct_url": None, "dist_info": None}


def test_parse_import_check_takes_the_last_json_line():
    out = 'INFO importing torch\n{"version": "0.5.23", "algorithms": ["DDTREE"], "is_dflash": ["DDTREE"]}\n'
    assert src.parse_import_check(out)["algorithms"] == ["DDTREE"]
    with pytest.raises(src.SglangSourceError, match="printed no result: Traceback"):
        src.parse_import_check("Traceback (most recent call last):\n")


PROFILES = Path(__file__).resolve().parents[4] / "roles" / "sglang" / "vars" / "profiles.yml"
# A sentence that speaks of DDTREE being counted as DFLASH (the field report's is_dflash() patch).
IS_DFLASH_SENTENCE = re.compile(r"[^.]*(?:is_dflash|(?:counts?|treats?|treated) as DFLASH)[^.]*\.", re.IGNORECASE)


def _profile_texts():
    data = yaml.safe_load(PROFILES.read_text())
    for name, profile in data["__sglang_profiles"].items():
        yield name, "summary", " ".join(str(profile.get("summary", "")).split())
        for option, spec in (profile.get("options") or {}).items():
            yield name, option, " ".join(str(spec.get("why", "")).split())


def test_profile_reasons_agree_with_the_release_check_on_is_dflash(tmp_path):
    # The release check's view: DDTREE counted by is_dflash() (here on top of #29907's wiring)
    # is handed to the DFlash worker, and that is a problem, not a requirement.
    site = make_site(tmp_path)
    assert gnu_patch(site, PR_PATCH).returncode == 0
    spec_info = site / "sglang" / "srt" / "speculative" / "spec_info.py"
    spec_info.write_text(
        spec_info.read_text().replace(
            "return self == SpeculativeAlgorithm.DFLASH\n",
            "return self in (SpeculativeAlgorithm.DFLASH, SpeculativeAlgorithm.DDTREE)\n",
        )
    )
    found = wiring(site)
    assert found["worker"]["class"] != src.DDTREE_WORKER and src.check_ddtree_wiring(found)

    texts = list(_profile_texts())
    ddtree_reason = next(t for name, option, t in texts if name == "ddtree" and option == "speculative_algorithm")
    assert src.DDTREE_WORKER in ddtree_reason  # the worker the release check requires
    mentions = [(name, option, m) for name, option, t in texts for m in IS_DFLASH_SENTENCE.findall(t)]
    assert mentions, "the ddtree reason should warn about the is_dflash() patch"
    for name, option, sentence in mentions:
        # every reason that speaks of the patch says what the release check says: it is harmful
        assert not re.search(r"\b(?:needs?|requires?|must)\b", sentence, re.IGNORECASE), (name, option, sentence)
        assert re.search(r"harmful|DFlash worker|not DDTree", sentence), (name, option, sentence)
