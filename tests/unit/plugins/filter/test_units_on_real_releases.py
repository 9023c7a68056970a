# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every unit the tables render starts on the release it is rendered for.

All class x profile x variant units (6 classes x 4 profiles x {no variant, adaptive, small, nograph,
balanced} = 120) are merged with sglang_server_options for a release version, rendered with
sglang_args and parsed by that release's own parser: the argparse parser _sglang_flags builds
from the option definitions read out of the release's wheel (.cache/sglang-wheel/, downloaded by
scripts/test setup). Two releases: the pinned one (sglang_install_version) and the base of
sgl-project/sglang#29907 (tests/sglang-wheels.txt). The ddtree profile runs on a DDTree build,
so its units are parsed by the release plus #29907's field.
"""

import itertools
import sys
from pathlib import Path

import pytest
from ansible_collections.ddtree.sglang.plugins.filter.sglang_args import sglang_args
from ansible_collections.ddtree.sglang.plugins.filter.sglang_server_options import sglang_server_options
from ansible_collections.ddtree.sglang.plugins.module_utils import _sglang_flags
from sglang_releases import ddtree_base_version, pinned_sglang_version

# The same rendering `scripts/check_release_flags.py` (the documented re-check) does.
sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "scripts"))
from check_release_flags import BASE, DRAFT, render, tables, units  # noqa: E402

CLASSES, PROFILES, VARIANTS, OPTION_NAMES = tables()
UNITS = units()
RELEASES = [pinned_sglang_version(), ddtree_base_version()]


def test_every_combination_is_covered():
    assert len(UNITS) == 120


@pytest.mark.parametrize("version", RELEASES)
@pytest.mark.parametrize(("class_id", "profile", "variant"), UNITS)
def test_unit_parses_on_the_release(sglang_tables, version, class_id, profile, variant):
    table = sglang_tables(version, ddtree=profile == "ddtree")
    assert table["sglang_version"] == version
    argv = render(class_id, profile, variant, version)
    assert _sglang_flags.check_argv(table, argv) == []
    # And the whole command line at once, as the server parses it.
    parsed = _sglang_flags.build_parser(table).parse_args(argv)
    assert parsed.model_path == BASE["model_path"]
    assert parsed.tp_size == 2
    assert parsed.speculative_algorithm == PROFILES[profile]["options"].get("speculative_algorithm", {}).get("value")
    # The adaptive variant's flag, which the release's own adaptive rules judge (test_sglang_release_info_adaptive.py).
    assert bool(parsed.speculative_adaptive) == (variant == "adaptive")
    if variant != "nograph":
        # The graph batch size reaches the release under the name it has.
        assert parsed.cuda_graph_max_bs_decode is not None


@pytest.mark.parametrize("version", RELEASES)
def test_the_names_table_is_what_makes_the_units_valid(sglang_tables, version):
    """Without the release-aware names, the tables' old spelling is what 0.5.23 refuses."""
    table = sglang_tables(version)
    old_spelling = {"cuda_graph_max_bs_decode": [{"value": "cuda_graph_max_bs", "releases": ">=0", "why": "x " * 5}]}
    problems = _sglang_flags.check_argv(table, render("ampere_48g", "nextn", None, version, old_spelling))
    if version == "0.5.23":
        assert [(p["flag"], p["kind"]) for p in problems] == [("--cuda-graph-max-bs", "ambiguous")]
    else:
        # 0.5.14 still accepts the old flag, a deprecated alias of --cuda-graph-max-bs-decode.
        assert problems == []


def test_a_release_before_the_split_gets_the_old_name():
    argv = render("ampere_48g", "nextn", None, "0.5.13.post1")
    assert "--cuda-graph-max-bs" in argv and "--cuda-graph-max-bs-decode" not in argv
    assert "--cuda-graph-max-bs-decode" in render("ampere_48g", "nextn", None, "0.5.14")


def test_ddtree_units_need_the_ddtree_build(sglang_tables):
    """On the bare release the DDTree flag is unknown: the check names it and the release's closest flag."""
    version = pinned_sglang_version()
    problems = _sglang_flags.check_argv(sglang_tables(version), render("ampere_48g", "ddtree", None, version))
    assert [(p["flag"], p["kind"]) for p in problems] == [("--speculative-ddtree-budget", "unknown")]


@pytest.mark.parametrize(("class_id", "profile"), list(itertools.product(sorted(CLASSES), sorted(PROFILES))))
def test_two_variants_in_either_order_still_parse(sglang_tables, class_id, profile):
    version = pinned_sglang_version()
    table = sglang_tables(version, ddtree=profile == "ddtree")
    for variants in itertools.permutations(sorted(VARIANTS), 2):
        options = sglang_server_options(
            profile,
            gpu_class=class_id,
            gpu_classes=CLASSES,
            profiles=PROFILES,
            variant_table=VARIANTS,
            variants=list(variants),
            draft_model_path=DRAFT,
            base=BASE,
            option_names=OPTION_NAMES,
            release_version=version,
        )
        assert _sglang_flags.check_argv(table, sglang_args(options, "argv")) == [], variants
