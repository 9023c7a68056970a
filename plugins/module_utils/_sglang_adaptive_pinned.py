# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Adaptive speculation's rules of the pinned release (SGLang 0.5.23, sglang_install_version), for the preflight.

A deploy checks every candidate before the host is touched, and the release it will run is installed only after
that (side by side): the preflight judges an adaptive candidate by the pinned release's own rules, kept here as
``_sglang_adaptive.read_rules`` reads them from its wheel (``sglang/srt/speculative/adaptive_spec_params.py``:
``DEFAULT_ADAPTIVE_CONFIG`` :28-53, ``adaptive_unsupported_reason()`` :56-100, each reason at its ``if`` line; the
warning ``sglang/srt/arg_groups/speculative_hook.py:1381``; the start-up steps check ``:1416``), and the algorithm
aliases ``_sglang_source.read_package`` reads (``NEXTN`` is ``EAGLE``). tests/unit/plugins/module_utils/
test_sglang_adaptive_pinned.py reads the wheel again and fails on any difference (it prints the new table): the
copy cannot drift from the release. The options step checks each unit once more against the release installed,
read from its files (sglang_release_info), before any switch.
"""

from __future__ import absolute_import, annotations, division, print_function

from ansible_collections.ddtree.sglang.plugins.module_utils import _sglang_adaptive

VERSION = "0.5.23"
ALIASES = {"NEXTN": "EAGLE"}
RULES = {
    "source": "sglang/srt/speculative/adaptive_spec_params.py",
    "default_config": {
        "1": {"candidate_steps": [1, 3, 5, 7], "up_hysteresis": 0.0, "down_hysteresis": -0.25, "ceiling_coeff": 0},
        "8": {"candidate_steps": [0, 1, 3], "up_hysteresis": 0.0, "down_hysteresis": 0.0, "ceiling_coeff": 0},
        "32": {"candidate_steps": [0, 1], "up_hysteresis": 0.0, "down_hysteresis": 0.0, "ceiling_coeff": 0},
        "64": {"candidate_steps": [0], "up_hysteresis": 0.0, "down_hysteresis": 0.0, "ceiling_coeff": 0},
    },
    "default_config_where": "sglang/srt/speculative/adaptive_spec_params.py:28",
    "reason_function": {"where": "sglang/srt/speculative/adaptive_spec_params.py:56", "params": ["server_args"]},
    "reasons": [
        {
            "assign": "cfg",
            "expr": "resolving_view(server_args)",
            "line": 59,
            "where": "sglang/srt/speculative/adaptive_spec_params.py:59",
        },
        {
            "test": 'cfg.speculative_algorithm not in ("EAGLE", "EAGLE3")',
            "reason": 'f"speculative_algorithm={cfg.speculative_algorithm} "\n'
            '            "(only EAGLE/EAGLE3 are supported)"',
            "line": 61,
            "end_line": 65,
            "where": "sglang/srt/speculative/adaptive_spec_params.py:61",
        },
        {
            "assign": "platform_worker_cls",
            "expr": "SpeculativeAlgorithm.from_string(\n"
            "        cfg.speculative_algorithm\n"
            "    ).get_platform_worker_cls()",
            "line": 66,
            "where": "sglang/srt/speculative/adaptive_spec_params.py:66",
        },
        {
            "test": "platform_worker_cls is not None",
            "reason": 'f"the platform serves {cfg.speculative_algorithm} with "\n'
            '            f"{platform_worker_cls.__name__} (only the built-in worker "\n'
            '            "implements adaptive)"',
            "line": 69,
            "end_line": 74,
            "where": "sglang/srt/speculative/adaptive_spec_params.py:69",
        },
        {
            "test": "cfg.speculative_eagle_topk is not None and cfg.speculative_eagle_topk != 1",
            "reason": 'f"speculative_eagle_topk={cfg.speculative_eagle_topk} "\n'
            '            "(only topk=1 is supported)"',
            "line": 75,
            "end_line": 79,
            "where": "sglang/srt/speculative/adaptive_spec_params.py:75",
        },
        {
            "test": "attn_dp_enabled_of(resolved_view(server_args))",
            "reason": '"attention DP is not supported "\n'
            '            "(adaptive tier decisions are not synchronized across DP ranks)"',
            "line": 80,
            "end_line": 84,
            "where": "sglang/srt/speculative/adaptive_spec_params.py:80",
        },
        {
            "test": "resolved_view(server_args).enable_multi_layer_eagle",
            "reason": '"enable_multi_layer_eagle=True is not supported "\n'
            '            "(MultiLayerEagleWorkerV2 does not implement adaptive)"',
            "line": 85,
            "end_line": 89,
            "where": "sglang/srt/speculative/adaptive_spec_params.py:85",
        },
        {
            "test": "cfg.enable_two_batch_overlap",
            "reason": '"enable_two_batch_overlap=True is not supported "\n'
            '            "(adaptive state swap would discard the TboAttnBackend wrapper)"',
            "line": 90,
            "end_line": 94,
            "where": "sglang/srt/speculative/adaptive_spec_params.py:90",
        },
        {
            "test": "cfg.enable_pdmux",
            "reason": '"enable_pdmux=True is not supported "\n'
            '            "(adaptive state swap does not update decode_attn_backend_group)"',
            "line": 95,
            "end_line": 99,
            "where": "sglang/srt/speculative/adaptive_spec_params.py:95",
        },
    ],
    "helpers": {
        "attn_dp_enabled_of": {
            "params": ["cfg"],
            "expr": "cfg.attn_dp_size > 1 or ep_scale_joiner_of(cfg)",
            "where": "sglang/srt/runtime_context.py:191",
        },
        "ep_scale_joiner_of": {
            "params": ["cfg"],
            "expr": 'cfg.ep_join_mode == "scale"',
            "where": "sglang/srt/arg_groups/model_override_base.py:250",
        },
    },
    "defaults": {
        "enable_pdmux": False,
        "ep_join_mode": None,
        "enable_two_batch_overlap": False,
        "attn_dp_size": 1,
        "speculative_algorithm": None,
        "speculative_eagle_topk": None,
        "enable_multi_layer_eagle": False,
    },
    "disabled_warning": {
        "function": "_maybe_disable_adaptive",
        "where": "sglang/srt/arg_groups/speculative_hook.py:1381",
        "message": 'f"speculative_adaptive disabled: {reason}. "\n'
        '            "Falling back to static speculative params."',
    },
    "steps_rule": {
        "where": "sglang/srt/arg_groups/speculative_hook.py:1416",
        "error": "ValueError",
        "message": 'f"--speculative-num-steps={cfg.speculative_num_steps} "\n'
        '            f"is not in the adaptive config candidate_steps {candidate_steps}. '
        '"\n'
        '            "Pass one of those values."',
    },
    "load_config": "sglang/srt/speculative/adaptive_spec_params.py:103-139",
}


def values_of(options):
    """A unit's options (ServerArgs fields) with the algorithm resolved as the release resolves it (NEXTN: EAGLE)."""
    values = dict(options)
    algorithm = values.get("speculative_algorithm")
    if isinstance(algorithm, str):
        values["speculative_algorithm"] = ALIASES.get(algorithm.upper(), algorithm.upper())
    return values


def refusal(options):
    """Why the pinned release would not run these options adaptive, or not start them, in its words with its
    file:line; None when it would (or when they ask for no adaptive speculation). Tiers from a
    speculative_adaptive_config file are on the host: with one, the start-up steps check is left to the options
    step (which reads the file)."""
    values = values_of(options)
    if not values.get(_sglang_adaptive.FIELD):
        return None
    verdict = _sglang_adaptive.check(RULES, values)
    if values.get(_sglang_adaptive.CONFIG_FIELD):
        verdict["problems"] = []  # the steps against the file's tiers: the options step reads the file
    if verdict["reason"] is not None:
        return (
            f'SGLang {VERSION} would not run it adaptive: adaptive_unsupported_reason() says "{verdict["reason"]}" '
            f'({verdict["where"]}), so at start the server logs "{verdict["warning"]}" '
            f"({RULES['disabled_warning']['where']}) and serves static speculation. Drop the adaptive variant "
            "(--speculative-adaptive), or change what the reason names "
            "(adaptive serves EAGLE, EAGLE3 and NEXTN)."
        )
    if verdict["problems"]:
        return (
            f"SGLang {VERSION} would refuse --speculative-adaptive at start: {'; '.join(verdict['problems'])}. "
            "Give speculative_num_steps one of the tiers' candidate steps, or fix the tiers."
        )
    return None
