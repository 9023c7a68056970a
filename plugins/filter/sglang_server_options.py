# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, annotations, division, print_function

DOCUMENTATION = r"""
name: sglang_server_options
short_description: Merge the SGLang options of a profile, a GPU class, variants and host overrides
version_added: 0.1.0
author: ddtree.sglang developers (@ddtree)
description:
  - Builds the SGLang options (ServerArgs field names) of one server from the role's tables
    (C(roles/sglang/vars/profiles.yml), C(roles/sglang/vars/gpu_classes.yml)) and the host's variables.
  - "Merge order, later wins: O(base) < profile < GPU class options < the class's options for this profile
    (class x profile) < each variant, in the order of O(variants) < O(extra_args)."
  - Table entries are C({value, why}); the reasons stay in the tables and only the values are merged.
  - A C(null) value at a later layer removes an option that an earlier layer set; the result holds no C(null).
  - A profile whose table entry has C(draft_model=true) (dflash, ddtree) gets C(speculative_draft_model_path) from
    O(draft_model_path), unless O(extra_args) sets it.
  - Fails before anything changes on the host, with the fix in the message, on an unknown class, profile or
    variant; a draft-model profile without a draft model; C(speculative_dflash_block_size) and
    C(speculative_num_draft_tokens) set to different values (DFlash and DDTree need them equal); a
    C(speculative_ddtree_budget) that is not a positive integer; for C(DDTREE), a C(page_size) other than 1 or an
    attention backend for which SGLang sets a larger page size (DDTree, SGLang PR 29907, supports page size 1
    only); an option name that is not a ServerArgs field name.
options:
  _input:
    description: The profile name (C(sglang_profile)), a key of O(profiles).
    type: string
    required: true
  gpu_class:
    description: The GPU class id, a key of O(gpu_classes).
    type: string
    required: true
  gpu_classes:
    description: The class table (C(__sglang_gpu_classes) of C(roles/sglang/vars/gpu_classes.yml)).
    type: dict
    required: true
  profiles:
    description: The profile table (C(__sglang_profiles) of C(roles/sglang/vars/profiles.yml)).
    type: dict
    required: true
  variant_table:
    description: The variant table (C(__sglang_profile_variants) of C(roles/sglang/vars/profiles.yml)).
    type: dict
    default: {}
  variants:
    description: Variant names to apply, in order (C(sglang_profile_variants)).
    type: list
    elements: string
    default: []
  extra_args:
    description: Host overrides keyed by ServerArgs field name (C(sglang_extra_args)); they win over everything.
    type: dict
    default: {}
  draft_model_path:
    description: The draft model for profiles that need one (C(sglang_draft_model_path)).
    type: string
  base:
    description:
      - Options the role sets from its own variables (C(model_path), C(host), C(port), C(tp_size), ...), merged
        first so that every table and O(extra_args) can override them.
    type: dict
    default: {}
  option_names:
    description:
      - The names of options that changed between SGLang releases (C(__sglang_option_names) of
        C(roles/sglang/vars/option_names.yml)), each a list of C({value, releases, why}).
      - With O(release_version), an option of any layer named by a key of this table is rendered under the name
        whose C(releases) range holds that version (C(cuda_graph_max_bs_decode) is C(cuda_graph_max_bs) before
        0.5.14).
    type: dict
    default: {}
  release_version:
    description:
      - Version of the SGLang release the unit will run (C(0.5.23)); picks the option names of O(option_names).
      - Without it the tables' names are used as they are.
    type: string
"""

EXAMPLES = r"""
- name: The options of the SGLang unit for this host
  ansible.builtin.set_fact:
    __sglang_options: >-
      {{ sglang_profile | ddtree.sglang.sglang_server_options(
           gpu_class=__sglang_gpu_class, gpu_classes=__sglang_gpu_classes,
           profiles=__sglang_profiles, variant_table=__sglang_profile_variants,
           variants=sglang_profile_variants, extra_args=sglang_extra_args,
           draft_model_path=sglang_draft_model_path,
           base={'model_path': sglang_model_path, 'host': sglang_host, 'port': sglang_port},
           option_names=__sglang_option_names, release_version='0.5.23') }}

# ddtree on ampere_48g with the nograph variant and one host override gives:
#   attention_backend: flashinfer          (class)
#   context_length: 65536                  (class)
#   disable_cuda_graph: true               (variant nograph; cuda_graph_max_bs_decode removed)
#   max_running_requests: 4                (class x profile)
#   mem_fraction_static: 0.8               (sglang_extra_args)
#   speculative_algorithm: DDTREE          (profile)
#   speculative_ddtree_budget: 7           (class x profile)
#   speculative_draft_model_path: /models/draft   (sglang_draft_model_path)
"""

RETURN = r"""
_value:
  description: The merged SGLang options, keyed by ServerArgs field name, ready for P(ddtree.sglang.sglang_args#filter).
  type: dict
  sample:
    attention_backend: flashinfer
    context_length: 65536
    cuda_graph_max_bs_decode: 8
    max_running_requests: 8
    mem_fraction_static: 0.85
    speculative_algorithm: NEXTN
    speculative_eagle_topk: 1
    speculative_num_draft_tokens: 4
    speculative_num_steps: 3
"""

import operator  # noqa: E402
import re  # noqa: E402
from collections.abc import Mapping  # noqa: E402

from ansible.errors import AnsibleFilterError  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.filter.sglang_args import validate_options  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._values import describe  # noqa: E402

DRAFT_MODEL_OPTION = "speculative_draft_model_path"

# DDTree (sgl-project/sglang PR #29907) runs with page_size 1 only: its _handle_ddtree raises
# "DDTREE currently supports only page_size == 1." at start. It also turns the overlap
# schedule off itself, so the tables need not (and do not) set disable_overlap_schedule.
DDTREE_PAGE_SIZE = 1
# Attention backends for which SGLang 0.5.23 changes the page size to more than 1 on its own
# (sglang/srt/arg_groups/overrides.py: _mla_backend_page_constraints, lines 1144-1200, sets 64
# for flashmla, trtllm_mla, cutedsl_mla, trtllm_mha and hpc_ops; _fa4_page_constraint, lines
# 1274-1297, sets 128 for fa4 on sm100). With DDTREE the server would refuse to start.
PAGE_SIZE_FORCING_BACKENDS = ("flashmla", "trtllm_mla", "cutedsl_mla", "trtllm_mha", "hpc_ops", "fa4")
ATTENTION_BACKEND_OPTIONS = ("attention_backend", "decode_attention_backend", "prefill_attention_backend")


def table_values(entries, where):
    """The values of a table's {value, why} entries; an error naming the entry that lacks either."""
    if entries is None:
        return {}
    if not isinstance(entries, Mapping):
        raise AnsibleFilterError(f"{where} must be a dict of {{value, why}} entries, got {describe(entries)}.")
    values = {}
    for key, entry in entries.items():
        if not isinstance(entry, Mapping) or "value" not in entry or not str(entry.get("why") or "").strip():
            raise AnsibleFilterError(
                f"{where}.{key} must be {{value: ..., why: '...'}}: every value in the tables carries its reason, "
                f"got {describe(entry)}."
            )
        values[key] = entry["value"]
    return values


def _pick(table, name, what, table_name, fix):
    if not isinstance(table, Mapping):
        raise AnsibleFilterError(f"The {what} table ({table_name}) must be a dict, got {describe(table)}.")
    if not isinstance(name, str) or name not in table:
        known = ", ".join(sorted(table)) or "none"
        shown = repr(str(name)) if isinstance(name, str) else describe(name)
        raise AnsibleFilterError(f"Unknown {what} {shown}. Known: {known}. {fix}")
    entry = table[name]
    if not isinstance(entry, Mapping):
        raise AnsibleFilterError(f"{table_name}.{name} must be a dict, got {describe(entry)}.")
    return entry


def sglang_server_options(
    profile,
    gpu_class=None,
    gpu_classes=None,
    profiles=None,
    variant_table=None,
    variants=None,
    extra_args=None,
    draft_model_path=None,
    base=None,
    option_names=None,
    release_version=None,
):
    """Merge base < profile < class < class x profile < variants < extra_args (see DOCUMENTATION)."""
    profile_entry = _pick(
        profiles,
        profile,
        "profile",
        "__sglang_profiles",
        "Set sglang_profile to one of them (roles/sglang/vars/profiles.yml defines them).",
    )
    class_entry = _pick(
        gpu_classes,
        gpu_class,
        "GPU class",
        "__sglang_gpu_classes",
        "Set sglang_gpu_class in the inventory to one of them, or leave it empty to detect the class "
        "(docs/gpu-classes.md says how to add a class).",
    )
    variant_table = variant_table or {}
    if variants is None:
        variants = []
    if isinstance(variants, str) or not isinstance(variants, (list, tuple)):
        raise AnsibleFilterError(
            "sglang_profile_variants must be a list of variant names (e.g. [small, nograph]), got "
            f"{describe(variants)}."
        )
    variant_entries = [
        _pick(
            variant_table,
            name,
            "profile variant",
            "__sglang_profile_variants",
            "Set sglang_profile_variants to a list of them.",
        )
        for name in variants
    ]
    base = validate_options(base or {}, "base options")
    extra_args = validate_options(extra_args if extra_args is not None else {}, "sglang_extra_args")

    layers = [
        dict(base),
        table_values(profile_entry.get("options"), f"__sglang_profiles.{profile}.options"),
        table_values(class_entry.get("options"), f"__sglang_gpu_classes.{gpu_class}.options"),
        table_values(
            (class_entry.get("profiles") or {}).get(profile),
            f"__sglang_gpu_classes.{gpu_class}.profiles.{profile}",
        ),
    ]
    if profile_entry.get("draft_model"):
        if draft_model_path:
            layers.append({DRAFT_MODEL_OPTION: draft_model_path})
        elif not extra_args.get(DRAFT_MODEL_OPTION):
            raise AnsibleFilterError(
                f"Profile {profile!r} needs a draft model: set sglang_draft_model_path to the draft model's "
                "directory (the DFlash draft trained for the target model)."
            )
    for name, entry in zip(variants, variant_entries, strict=True):
        layers.append(table_values(entry.get("options"), f"__sglang_profile_variants.{name}.options"))
    layers.append(dict(extra_args))

    renames = release_names(option_names, release_version)
    merged = {}
    for layer in layers:
        # Per layer, so that a later layer's value wins also when two names become one.
        merged.update({renames.get(key, key): value for key, value in layer.items()})
    merged = {key: value for key, value in merged.items() if value is not None}
    validate_options(merged)
    _check_speculative(merged)
    return merged


_SPECIFIER = re.compile(r"^\s*(>=|<=|==|!=|>|<)\s*(\d+(?:\.\d+)*)\s*$")
_RELEASE = re.compile(r"^v?(\d+(?:\.\d+)*)")
_COMPARE = {
    ">=": operator.ge,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
    ">": operator.gt,
    "<": operator.lt,
}


def release_number(version):
    """The release number of a version as a tuple of ints (0.5.15.post1 -> (0, 5, 15)); None if it has none."""
    match = _RELEASE.match(str(version or "").strip())
    return tuple(int(part) for part in match.group(1).split(".")) if match else None


def _padded(a, b):
    width = max(len(a), len(b))
    return a + (0,) * (width - len(a)), b + (0,) * (width - len(b))


def in_releases(version, releases):
    """Whether a release version is in a range of comma-separated specifiers (">=0.5.14,<0.5.20")."""
    number = release_number(version)
    if number is None:
        raise AnsibleFilterError(f"SGLang release version {version!r} has no release number (such as 0.5.23).")
    for spec in str(releases).split(","):
        match = _SPECIFIER.match(spec)
        if not match:
            raise AnsibleFilterError(
                f"Release range {releases!r}: {spec.strip()!r} is not a specifier such as '>=0.5.14' or '<0.5.20'."
            )
        have, bound = _padded(number, release_number(match.group(2)))
        if not _COMPARE[match.group(1)](have, bound):
            return False
    return True


def release_names(option_names, release_version):
    """{table name: the name the release has} for the option names table (roles/sglang/vars/option_names.yml).

    Without a release version the tables' own names stand (nothing is renamed).
    """
    if not option_names or release_version in (None, ""):
        return {}
    if not isinstance(option_names, Mapping):
        raise AnsibleFilterError(f"The option names table must be a dict, got {describe(option_names)}.")
    renames = {}
    for key, entries in option_names.items():
        where = f"__sglang_option_names.{key}"
        if not isinstance(entries, (list, tuple)) or not entries:
            raise AnsibleFilterError(f"{where} must be a list of {{value, releases, why}} entries.")
        matching = []
        for entry in entries:
            if (
                not isinstance(entry, Mapping)
                or not entry.get("value")
                or not entry.get("releases")
                or not str(entry.get("why") or "").strip()
            ):
                raise AnsibleFilterError(
                    f"{where} entries must be {{value: <field name>, releases: '<range>', why: '...'}}, got "
                    f"{describe(entry)}."
                )
            if in_releases(release_version, entry["releases"]):
                matching.append(entry["value"])
        if len(matching) != 1:
            ranges = ", ".join(str(entry["releases"]) for entry in entries)
            raise AnsibleFilterError(
                f"{where}: SGLang {release_version} is in {len(matching)} of its release ranges ({ranges}); "
                "exactly one must name the option for each release. Extend the table for this release."
            )
        if matching[0] != key:
            renames[key] = matching[0]
    return renames


def _check_speculative(options):
    """Refuse combinations SGLang would only reject (or silently mis-run) after the restart."""
    block = options.get("speculative_dflash_block_size")
    draft_tokens = options.get("speculative_num_draft_tokens")
    algorithm = str(options.get("speculative_algorithm") or "").upper()
    if algorithm in ("DFLASH", "DDTREE") and block is not None and draft_tokens is not None:
        if str(block) != str(draft_tokens):
            raise AnsibleFilterError(
                f"speculative_dflash_block_size ({block}) and speculative_num_draft_tokens ({draft_tokens}) differ: "
                f"{algorithm} drafts one block, so both must be the draft model's block size. Set one of them "
                "(or neither: SGLang reads the block size from the draft's config)."
            )
    if algorithm == "DDTREE":
        _check_ddtree_page_size(options)
    budget = options.get("speculative_ddtree_budget")
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int) or budget < 1):
        raise AnsibleFilterError(
            "speculative_ddtree_budget must be a positive integer (tree nodes beyond the root), got "
            f"{describe(budget)}."
        )


def _check_ddtree_page_size(options):
    """DDTREE needs page_size 1: refuse an explicit other size and backends that force one."""
    page_size = options.get("page_size")
    if page_size is not None and str(page_size) != str(DDTREE_PAGE_SIZE):
        raise AnsibleFilterError(
            f"page_size {page_size} with DDTREE: DDTree (SGLang PR #29907) supports only page_size 1 and refuses "
            "to start otherwise. Remove page_size from sglang_extra_args (SGLang's default is 1)."
        )
    for option in ATTENTION_BACKEND_OPTIONS:
        backend = options.get(option)
        if backend in PAGE_SIZE_FORCING_BACKENDS:
            raise AnsibleFilterError(
                f"{option} {backend} with DDTREE: SGLang sets a page size above 1 for {backend}, and DDTree "
                "(SGLang PR #29907) supports only page_size 1. Use flashinfer (or fa3 on Hopper) for the ddtree "
                "profile, e.g. in the class table's profiles.ddtree or in sglang_extra_args."
            )


class FilterModule:
    """Merge of the SGLang option tables."""

    def filters(self):
        return {"sglang_server_options": sglang_server_options}
