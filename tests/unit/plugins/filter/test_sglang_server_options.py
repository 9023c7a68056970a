# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""sglang_server_options and the tables it merges (roles/sglang/vars/*.yml)."""

import itertools
from pathlib import Path

import pytest
import yaml
from ansible.errors import AnsibleFilterError
from ansible_collections.ddtree.sglang.plugins.filter.sglang_args import sglang_args
from ansible_collections.ddtree.sglang.plugins.filter.sglang_server_options import (
    PAGE_SIZE_FORCING_BACKENDS,
    FilterModule,
    sglang_server_options,
)
from ansible_collections.ddtree.sglang.plugins.module_utils import _gpu

VARS = Path(__file__).resolve().parents[4] / "roles" / "sglang" / "vars"
CLASSES = yaml.safe_load((VARS / "gpu_classes.yml").read_text())["__sglang_gpu_classes"]
_PROFILES_FILE = yaml.safe_load((VARS / "profiles.yml").read_text())
PROFILES = _PROFILES_FILE["__sglang_profiles"]
VARIANTS = _PROFILES_FILE["__sglang_profile_variants"]
DRAFT = "/root/models/Qwen3.6-27B-DFlash"


def merge(profile, gpu_class, variants=(), extra_args=None, draft_model_path=DRAFT, base=None):
    return sglang_server_options(
        profile,
        gpu_class=gpu_class,
        gpu_classes=CLASSES,
        profiles=PROFILES,
        variant_table=VARIANTS,
        variants=variants,
        extra_args=extra_args or {},
        draft_model_path=draft_model_path,
        base=base,
    )


def test_the_filter_is_registered():
    assert FilterModule().filters()["sglang_server_options"] is sglang_server_options


# --- the tables ---------------------------------------------------------------------------


def test_class_table_and_identification_table_name_the_same_classes():
    assert set(CLASSES) == set(_gpu.CLASS_IDS)


def test_profiles_and_variants_are_the_documented_ones():
    assert set(PROFILES) == {"nextn", "dflash", "ddtree", "plain"}
    assert set(VARIANTS) == {"adaptive", "small", "nograph", "balanced"}


def _entries():
    for class_id, entry in CLASSES.items():
        yield f"{class_id}.options", entry["options"]
        yield f"{class_id}.env", entry.get("env") or {}
        for profile, options in (entry.get("profiles") or {}).items():
            assert profile in PROFILES, f"{class_id}.profiles.{profile} is not a profile"
            yield f"{class_id}.profiles.{profile}", options
    for name, entry in itertools.chain(PROFILES.items(), VARIANTS.items()):
        yield f"{name}.options", entry["options"]


@pytest.mark.parametrize(("where", "entries"), list(_entries()))
def test_every_table_value_carries_its_reason(where, entries):
    for key, entry in entries.items():
        assert set(entry) == {"value", "why"}, f"{where}.{key}"
        assert len(entry["why"].split()) >= 5, f"{where}.{key}: the why should say why"


@pytest.mark.parametrize("class_id", sorted(CLASSES))
def test_every_class_sets_the_settings_the_issue_requires(class_id):
    options = CLASSES[class_id]["options"]
    for key in ("attention_backend", "mem_fraction_static", "max_running_requests", "context_length"):
        assert options[key]["value"] is not None, key
    assert "cuda_graph_max_bs_decode" in options or "disable_cuda_graph" in options
    assert 0.5 < options["mem_fraction_static"]["value"] < 0.95


def _compute_cap(class_id):
    return {rule.compute_cap for rule in _gpu.GPU_RULES if rule.class_id == class_id}


@pytest.mark.parametrize(("class_id", "profile"), list(itertools.product(sorted(CLASSES), sorted(PROFILES))))
def test_attention_backend_runs_on_the_class_architecture(class_id, profile):
    backend = merge(profile, class_id)["attention_backend"]
    caps = _compute_cap(class_id)
    if backend == "fa3":
        assert caps == {"9.0"}, "fa3 kernels exist for sm90 only"
    if backend in ("trtllm_mha", "fa4"):
        assert caps == {"10.0"}, f"{backend} runs on sm100 only among the classes"
    if caps & {"8.6", "8.9"}:
        assert backend in ("flashinfer", "triton")
    if profile == "ddtree":
        assert backend != "trtllm_mha", "trtllm_mha verifies chains (topk 1) only, DDTree verifies a tree"


# --- the merge ----------------------------------------------------------------------------


def test_nextn_renders_the_field_report_flags():
    options = merge("nextn", "ampere_48g")
    assert sglang_args(options, "argv")[-8:] == [
        "--speculative-algorithm",
        "NEXTN",
        "--speculative-eagle-topk",
        "1",
        "--speculative-num-draft-tokens",
        "4",
        "--speculative-num-steps",
        "3",
    ]
    assert "speculative_draft_model_path" not in options


@pytest.mark.parametrize(
    ("class_id", "variants", "profile"),
    [
        (c, list(v), p)
        for c in sorted(CLASSES)
        for p in sorted(PROFILES)
        for n in range(len(VARIANTS) + 1)
        for v in itertools.permutations(sorted(VARIANTS), n)
    ],
)
def test_every_class_profile_and_variant_combination_renders(class_id, variants, profile):
    options = merge(profile, class_id, variants, base={"model_path": "/m", "port": 30000})
    argv = sglang_args(options, "argv")
    # plain: no speculative decoding at all
    assert argv.count("--speculative-algorithm") == (0 if profile == "plain" else 1)
    assert not any(word.startswith("--speculative-") for word in argv) or profile != "plain" or "adaptive" in variants
    assert ("--speculative-adaptive" in argv) == ("adaptive" in variants)
    assert "--attention-backend" in argv
    assert None not in options.values()
    if PROFILES[profile]["draft_model"]:
        assert options["speculative_draft_model_path"] == DRAFT
    if "nograph" in variants:
        assert options["disable_cuda_graph"] is True
    if variants and variants[-1] == "nograph":
        assert "cuda_graph_max_bs_decode" not in options
    if "balanced" in variants:
        assert options["mem_fraction_static"] == 0.85
    if "small" in variants:
        assert options["context_length"] == 32768
    if options.get("speculative_algorithm") == "DDTREE":
        # #29907 refuses page_size != 1; SGLang's default (1) stays unless a backend forces another
        assert "page_size" not in options
        assert options["attention_backend"] not in PAGE_SIZE_FORCING_BACKENDS
        # the server turns the overlap schedule off itself; the tables leave it alone
        assert "disable_overlap_schedule" not in options


def test_merge_order_profile_class_class_profile_variant_extra():
    # class beats profile: ampere's own max_running_requests, unless the class x profile sets one
    assert merge("nextn", "ampere_48g")["max_running_requests"] == 8
    # class x profile beats class
    ddtree = merge("ddtree", "ampere_48g")
    assert ddtree["max_running_requests"] == 4
    assert ddtree["speculative_ddtree_budget"] == 7
    # class x profile beats profile (the profile's budget is 15)
    assert merge("ddtree", "blackwell_rtx_96g")["speculative_ddtree_budget"] == 15
    # variant beats class x profile
    assert merge("ddtree", "ampere_48g", ["balanced"])["mem_fraction_static"] == 0.85
    assert merge("nextn", "hopper_141g", ["balanced"])["mem_fraction_static"] == 0.85
    # extra args beat everything, null removes
    extra = merge("ddtree", "ampere_48g", ["small"], {"max_running_requests": 2, "context_length": None})
    assert extra["max_running_requests"] == 2
    assert "context_length" not in extra
    # base is the lowest layer
    assert merge("nextn", "ampere_48g", base={"attention_backend": "triton"})["attention_backend"] == "flashinfer"
    assert merge("nextn", "ampere_48g", base={"port": 30000})["port"] == 30000


def test_variants_apply_in_list_order():
    assert "cuda_graph_max_bs_decode" not in merge("nextn", "ampere_48g", ["small", "nograph"])
    assert merge("nextn", "ampere_48g", ["nograph", "small"])["cuda_graph_max_bs_decode"] == 4


def test_b200_ddtree_switches_from_trtllm_mha_to_flashinfer():
    assert merge("nextn", "blackwell_dc_180g")["attention_backend"] == "trtllm_mha"
    assert merge("ddtree", "blackwell_dc_180g")["attention_backend"] == "flashinfer"


def test_draft_model_from_extra_args_is_enough():
    options = merge("dflash", "ampere_48g", extra_args={"speculative_draft_model_path": "/d"}, draft_model_path="")
    assert options["speculative_draft_model_path"] == "/d"


def test_tables_are_not_modified_by_a_merge():
    before = yaml.safe_dump(CLASSES)
    merge("ddtree", "ampere_48g", ["small", "nograph"], {"tp_size": 2})
    assert yaml.safe_dump(CLASSES) == before


# --- bad input ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"profile": "eagle"}, "Unknown profile 'eagle'. Known: ddtree, dflash, nextn, plain. Set sglang_profile"),
        ({"gpu_class": "rtx_4090"}, "Unknown GPU class 'rtx_4090'. Known: ada_48g, ampere_48g"),
        ({"gpu_class": ""}, "Set sglang_gpu_class in the inventory"),
        ({"variants": ["tiny"]}, "Unknown profile variant 'tiny'. Known: adaptive, balanced, nograph, small"),
        ({"variants": "small"}, "must be a list of variant names"),
        (
            {"profile": "ddtree", "draft_model_path": ""},
            "Profile 'ddtree' needs a draft model: set sglang_draft_model_path",
        ),
        ({"profile": "dflash", "draft_model_path": None}, "Profile 'dflash' needs a draft model"),
        ({"extra_args": {"mem-fraction-static": 0.8}}, "Use the ServerArgs field name 'mem_fraction_static'"),
        ({"extra_args": ["--tp-size", "2"]}, "sglang_extra_args must be a dict"),
        (
            {
                "profile": "dflash",
                "extra_args": {"speculative_dflash_block_size": 16, "speculative_num_draft_tokens": 8},
            },
            "speculative_dflash_block_size (16) and speculative_num_draft_tokens (8) differ",
        ),
        ({"profile": "ddtree", "extra_args": {"speculative_ddtree_budget": 0}}, "must be a positive integer"),
        ({"profile": "ddtree", "extra_args": {"speculative_ddtree_budget": "8"}}, "must be a positive integer"),
        ({"profile": "ddtree", "extra_args": {"page_size": 16}}, "page_size 16 with DDTREE: DDTree (SGLang PR #29907)"),
        (
            {"profile": "ddtree", "extra_args": {"attention_backend": "trtllm_mha"}},
            "attention_backend trtllm_mha with DDTREE: SGLang sets a page size above 1 for trtllm_mha",
        ),
        (
            {"profile": "ddtree", "extra_args": {"decode_attention_backend": "fa4"}},
            "decode_attention_backend fa4 with DDTREE",
        ),
    ],
)
def test_bad_input_is_refused_with_the_fix(kwargs, expected):
    args = {"profile": "nextn", "gpu_class": "ampere_48g", "variants": [], "extra_args": {}, "draft_model_path": DRAFT}
    args.update(kwargs)
    with pytest.raises(AnsibleFilterError) as err:
        merge(**args)
    assert expected in str(err.value)


def test_ddtree_tolerates_what_pr_29907_sets_itself():
    # page_size 1 is what DDTree needs; disable_overlap_schedule is what its hook sets anyway.
    extra = {"page_size": 1, "disable_overlap_schedule": True}
    options = merge("ddtree", "ampere_48g", extra_args=extra)
    assert options["page_size"] == 1 and options["disable_overlap_schedule"] is True
    # other profiles keep their page size choice
    assert merge("nextn", "blackwell_dc_180g", extra_args={"page_size": 64})["page_size"] == 64


def test_dflash_block_size_equal_to_draft_tokens_is_accepted():
    extra = {"speculative_dflash_block_size": 16, "speculative_num_draft_tokens": 16}
    assert merge("dflash", "ampere_48g", extra_args=extra)["speculative_dflash_block_size"] == 16


def test_a_table_value_without_its_reason_is_refused():
    broken = {"ampere_48g": {"options": {"attention_backend": "flashinfer"}}}
    with pytest.raises(AnsibleFilterError) as err:
        sglang_server_options("nextn", gpu_class="ampere_48g", gpu_classes=broken, profiles=PROFILES)
    assert "__sglang_gpu_classes.ampere_48g.options.attention_backend must be {value: ..., why:" in str(err.value)


def test_missing_tables_are_refused():
    with pytest.raises(AnsibleFilterError) as err:
        sglang_server_options("nextn", gpu_class="ampere_48g")
    assert "must be a dict" in str(err.value)
