# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The candidates of a ddtree_deploy run (issue 21): which configurations it tries, in order, the
winner of a tuning run (by _deploy_tuning's rule), and the host's outcome in words. The tuning record per
GPU class is _deploy_tuning's.

A candidate is {name, profile, variants, extra_args} (and a ``why``, documentation only). The default
is one candidate from ddtree_deploy_profile and ddtree_deploy_profile_variants: today's single deploy.
Everything is checked on the controller before the host is touched. Standard library only.
"""

from __future__ import absolute_import, annotations, division, print_function

import json
from collections.abc import Mapping

from ansible_collections.ddtree.sglang.plugins.module_utils import _deploy_tuning as _tuning
from ansible_collections.ddtree.sglang.plugins.module_utils import _sglang_adaptive_pinned as _pinned
from ansible_collections.ddtree.sglang.plugins.module_utils._values import describe, show

VAR = "ddtree_deploy_candidates"
LIST_VAR = "ddtree_deploy_candidate_list"
KEYS = ("name", "profile", "variants", "extra_args", "why")
MODES = ("deploy", "tune")


def ordinal(n):
    """1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, 21st."""
    n = int(n)
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def default_name(profile, variants):
    """ddtree, ddtree+nograph, ddtree+small+nograph."""
    return "+".join([str(profile)] + [str(v) for v in variants or []])


def options(candidate, profiles, variant_table, base=None):
    """The options (ServerArgs fields) a candidate renders on top of what every candidate of the host shares (the
    class's): ``base`` (sglang_extra_args) under its own, then its profile's, its variants' in order, then its
    extra_args, a null removing an option (the sglang_server_options filter's layers); None when the tables are not
    given."""
    profile = profiles.get(candidate["profile"]) if isinstance(profiles, Mapping) else None
    if not isinstance(variant_table, Mapping) or not isinstance(profile, Mapping):
        return None
    found = {}
    layers = [profile] + [variant_table.get(v) or {} for v in candidate["variants"]]
    for layer in layers:
        for field, entry in (layer.get("options") or {}).items():
            value = entry.get("value") if isinstance(entry, Mapping) else entry
            found[field] = value
    found.update(base if isinstance(base, Mapping) else {}, **candidate["extra_args"])
    return {field: value for field, value in found.items() if value is not None}


def configuration(candidate, profiles, variant_table):
    """A candidate's options (options()) as sorted JSON with its profile, so two candidates compare; by names alone
    when the tables are not given."""
    rendered = options(candidate, profiles, variant_table)
    if rendered is None:
        return json.dumps([candidate["profile"], candidate["variants"], candidate["extra_args"]], sort_keys=True)
    return json.dumps([candidate["profile"], rendered], sort_keys=True, default=str)


def _adaptive(out, where_of, profiles, variant_table, base):
    """An adaptive candidate the release would not run adaptive, or not start (issue 35): refused in the preflight
    with the release's own reason, by the pinned release's rules (_sglang_adaptive_pinned), before the host is
    touched. The options step checks the unit again against the release installed."""
    problems = []
    for index, candidate in enumerate(out):
        said = _pinned.refusal(options(candidate, profiles, variant_table, base) or {})
        if said:
            problems.append(f"{where_of(index)}: {candidate['name']!r} asks for adaptive speculation, and {said}")
    return problems


def _duplicates(out, where_of, profiles, variant_table):
    """A candidate that renders the configuration of an earlier one: refused naming both (each costs a model load,
    and a tune would compare a unit with itself)."""
    problems = []
    first = {}
    for index, candidate in enumerate(out):
        key = configuration(candidate, profiles, variant_table)
        if key in first:
            earlier = out[first[key]]
            problems.append(
                f"{where_of(index)}: {candidate['name']!r} renders the same configuration as {where_of(first[key])} "
                f"{earlier['name']!r} (profile {candidate['profile']}, variants {candidate['variants']}, extra_args "
                f"{candidate['extra_args']} against variants {earlier['variants']}, extra_args "
                f"{earlier['extra_args']}): each candidate costs a model load, and this one would measure the same "
                "unit again. Remove one, or make them differ."
            )
        else:
            first[key] = index
    return problems


def _one(entry, where, profiles, variant_table):
    """(candidate, problems) of one entry."""
    if not isinstance(entry, Mapping):
        return None, [f"{where} must be a mapping {{profile, variants, extra_args}}, got {describe(entry)}."]
    problems = []
    unknown = sorted(str(k) for k in entry if k not in KEYS)
    if unknown:
        problems.append(f"{where} has unknown keys {', '.join(unknown)}; a candidate has {', '.join(KEYS)}.")
    profile = entry.get("profile")
    if not isinstance(profile, str) or not profile:
        problems.append(f"{where}: profile ({show(profile)}) is required, one of {', '.join(profiles)}.")
    elif profiles and profile not in profiles:
        problems.append(
            f"{where}: profile {profile!r} is not a profile of the sglang role; use one of {', '.join(profiles)}."
        )
    variants = entry.get("variants")
    variants = [] if variants is None else variants
    if not isinstance(variants, (list, tuple)) or isinstance(variants, str):
        problems.append(f"{where}: variants ({show(variants)}) must be a list of variant names, e.g. [nograph].")
        variants = []
    for variant in variants:
        if not isinstance(variant, str) or (variant_table and variant not in variant_table):
            problems.append(
                f"{where}: variant {show(variant)} is not a variant of the sglang role; use "
                f"{', '.join(variant_table) if variant_table else 'a variant name'}."
            )
    extra_args = entry.get("extra_args")
    extra_args = {} if extra_args is None else extra_args
    if not isinstance(extra_args, Mapping):
        problems.append(
            f"{where}: extra_args ({show(extra_args)}) must be a mapping of ServerArgs fields to values, "
            "e.g. {mem_fraction_static: 0.85}."
        )
        extra_args = {}
    name = entry.get("name")
    if name is not None and (not isinstance(name, str) or not name.strip()):
        problems.append(
            f"{where}: name ({show(name)}) must be a non-empty text, or left out ({default_name(profile, variants)})."
        )
        name = None
    candidate = {
        "name": name or default_name(profile, [v for v in variants if isinstance(v, str)]),
        "profile": profile,
        "variants": [v for v in variants if isinstance(v, str)],
        "extra_args": dict(extra_args),
    }
    return candidate, problems


def _collect(entries, where_of, profiles, variant_table, problems):
    """The candidates of the entries, their problems added to ``problems`` (a name used twice among them)."""
    out = []
    seen = set()
    for index, entry in enumerate(entries):
        candidate, found = _one(entry, where_of(index), profiles, variant_table)
        problems.extend(found)
        if candidate is None:
            continue
        if candidate["name"] in seen:
            problems.append(
                f"{where_of(index)}: the name {candidate['name']!r} is used twice; give each candidate its own name "
                "(reports and the tuning record name candidates by it)."
            )
        seen.add(candidate["name"])
        out.append(candidate)
    return out


def expand(
    candidates=None,
    profile="",
    variants=None,
    named="",
    lists=None,
    profiles=None,
    variant_table=None,
    mode="deploy",
    min_gain=0.0,
    fallback=None,
    extra_args=None,
):
    """{candidates: [{index, of, name, profile, variants, extra_args}], errors: [...], source}.

    candidates: ddtree_deploy_candidates (a list, or null for the default); named: ddtree_deploy_candidate_list (a
    name of ``lists``, e.g. ladder_ampere); profiles, variant_table: the sglang role's tables (their names are what
    may be used); mode: ddtree_deploy_mode; min_gain: a tune compares gains, which only the gain gate measures;
    fallback: ddtree_deploy_fallback_profile; extra_args: sglang_extra_args, under every candidate's own."""
    tables = (profiles, variant_table)  # with their options: a duplicate is found by what it renders
    profiles, variant_table = list(profiles or []), list(variant_table or [])
    lists = lists if isinstance(lists, Mapping) else {}
    problems = []
    if fallback is not None and profiles and fallback not in profiles:
        problems.append(
            f"ddtree_deploy_fallback_profile ({show(fallback)}) must be a profile of the sglang role: "
            f"{', '.join(profiles)} (rendered when a rollback finds no snapshot)."
        )
    if mode not in MODES:
        problems.append(f"ddtree_deploy_mode ({show(mode)}) must be one of {', '.join(MODES)}.")
    if mode == "tune" and min_gain is None:
        problems.append(
            "ddtree_deploy_mode tune compares the candidates' gains, which the gain gate measures: set "
            "ddtree_deploy_min_gain (0.0 keeps any candidate that is not slower) instead of null."
        )
    # A named list (the AWX survey's choice, an extra variable) wins over ddtree_deploy_candidates (a tuning
    # record in group_vars): the operator chose it for this run.
    if named:
        if not isinstance(named, str) or named not in lists:
            problems.append(
                f"{LIST_VAR} ({show(named)}) is not a named candidate list; use one of "
                f"{', '.join(sorted(lists)) or '(none defined)'} (roles/ddtree_deploy/vars/candidate_lists.yml), "
                f"or list the candidates in {VAR}."
            )
            return {"candidates": [], "errors": problems, "source": LIST_VAR}
        entries, source, label = lists[named], f"{LIST_VAR} {named}", f"{LIST_VAR} {named}"
    elif candidates is None:
        entries = [{"profile": profile, "variants": variants}]
        source, label = "ddtree_deploy_profile", "ddtree_deploy_profile and ddtree_deploy_profile_variants"
    else:
        entries, source, label = candidates, VAR, VAR
    if not isinstance(entries, (list, tuple)) or isinstance(entries, str):
        problems.append(
            f"{label} must be a list of candidates, each {{profile, variants, extra_args}} (e.g. "
            f"[{{profile: ddtree}}, {{profile: ddtree, variants: [nograph]}}]), got {describe(entries)}."
        )
        return {"candidates": [], "errors": problems, "source": source}
    if not entries:
        problems.append(
            f"{label} is empty: list at least one candidate (e.g. [{{profile: ddtree}}]), or set it to null to "
            "deploy ddtree_deploy_profile with ddtree_deploy_profile_variants."
        )
    where_of = (lambda i: label) if source == "ddtree_deploy_profile" else (lambda i: f"{label}[{i}]")
    out = _collect(entries, where_of, profiles, variant_table, problems)
    problems.extend(
        [] if problems else _duplicates(out, where_of, *tables) + _adaptive(out, where_of, *tables, extra_args)
    )
    for index, candidate in enumerate(out):
        candidate.update(index=index + 1, of=len(out))
    return {"candidates": out if not problems else [], "errors": problems, "source": source}


def production_level(gains):
    """The highest concurrency level the gate measured (the operator's production load), or None."""
    levels = [g.get("concurrency") for g in gains or [] if isinstance(g, Mapping) and g.get("concurrency")]
    return max(levels) if levels else None


def gain_at(gains, level):
    for entry in gains or []:
        if isinstance(entry, Mapping) and entry.get("concurrency") == level:
            return entry.get("gain")
    return None


def winner(attempts, mix=None):
    """The index of the attempt a tune keeps, or None when the fallback serves the load mix best: of the attempts
    that passed every step, the best gain weighted by ``mix`` (ddtree_deploy_load_mix; None: all on the highest
    level measured), above 0 and the gate's margin; a tie goes to the earlier candidate (the operator's order).
    The rule is _deploy_tuning's (docs/deploy.md, "Tune"). A final re-switch to the winner is not a contender."""
    contenders = [
        (a["index"], a.get("result") in ("passed", "kept"), _tuning.levels_of(a.get("gains")))
        for a in attempts or []
        if not a.get("final")
    ]
    levels = sorted({level for _index, _ok, figures in contenders for level in figures})
    return _tuning.choose(contenders, _tuning.weights(mix, levels))[0]


def won(attempts, kept=None, mode="deploy", mix=None):
    """Which candidate the host serves and of how many, for more than one candidate or a tune:
    "ddtree+nograph, 2nd of 3" (deploy), "ddtree, the best of 3, +24.0 % at concurrency 16" (tune; with a load
    mix "+25.7 % over the load mix (1: 90 %, 16: 10 %)"); None otherwise (a single deploy says what it always
    said)."""
    tried = [a for a in attempts or [] if not a.get("final")]
    chosen = next((a for a in tried if a.get("index") == kept), None)
    if chosen is None or (mode != "tune" and (chosen.get("of") or 1) <= 1):
        return None
    count = chosen.get("of") or len(tried)
    if mode == "tune":
        gain = chosen.get("gain_at_production")
        shown = f", {gain * 100:+.1f} % at concurrency {chosen.get('production_level')}" if gain is not None else ""
        if mix:
            levels = _tuning.levels_of(chosen.get("gains"))
            mix_weights = _tuning.weights(mix, sorted(levels))
            value = _tuning.score(levels, mix_weights)
            shown = f", {value * 100:+.1f} % over the load mix ({_tuning.mix_text(mix_weights)})" if value else shown
        return f"{chosen['name']}, the best of {count}{shown}"
    return f"{chosen['name']}, {ordinal(chosen['index'])} of {count}"


def outcome_text(outcome, attempts, kept=None, mode="deploy", mix=None):
    """The host's outcome in words: the outcome itself for a single candidate (today's), else which
    candidate won and of how many ("deployed ddtree+nograph, 2nd of 3"), or that none passed."""
    tried = [a for a in attempts or [] if not a.get("final")]
    which = won(attempts, kept, mode, mix)
    if which and outcome in ("deployed", "unchanged"):
        return f"{outcome} {which}"
    count = max([a.get("of") or 1 for a in tried] or [1])
    if count <= 1 or outcome in ("checked", "check_failed", "deployed", "unchanged"):
        return outcome
    return f"{outcome}: none of {count} candidates passed"


def tried_text(attempts):
    """Each failed candidate's step and cause, when more than one was tried and none is kept:
    "none of 2 candidates passed (ddtree at switch: ...; ddtree+nograph at probe: ...)"; else None."""
    tried = [a for a in attempts or [] if not a.get("final")]
    if len(tried) < 2 or any(a.get("result") == "passed" for a in tried):
        return None
    each = "; ".join(f"{a.get('name')} at {a.get('failed_step')}: {a.get('cause')}" for a in tried)
    return f"none of {len(tried)} candidates passed ({each})"
