# Copyright (c) 2026 ddtree.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Speculation steps by running batch for the simulator: adaptive speculation's tiers and no speculation.

SGLang 0.5.23's ``--speculative-adaptive`` moves ``speculative_num_steps`` with the running batch
(sglang/srt/speculative/adaptive_spec_params.py): a running batch is routed to the tier whose key is
the largest at or below it (``_find_closest_bs``, :356-358), and each tier settles, from the draft
tokens it sees accepted, on one of its ``candidate_steps`` (``AdaptiveStepSlot._recompute_params``,
:213-261); step 0 is speculation off. Whether the release adapts the unit at all is its own rules'
(``adaptive_unsupported_reason()``), which the simulator applies with the collection's reader of
them, ``plugins/module_utils/_sglang_adaptive.py``, over the rules the table set-up read from the
wheel (``sglang_cli.json``'s ``adaptive``).

What the simulator takes from the behaviour entry (README "Adaptive speculation and no speculation"):
the entry's ``rates`` and ``accept_length`` are the unit's at its own ``--speculative-num-steps``;
``steps`` gives other step counts (``{"1": {"rates": ..., "accept_length": ...}}``); step 0 is the
behaviour file's ``NONE`` entry (no speculation) unless ``steps`` says otherwise. An accept length
not given is the chain model's, ``(1 - p^(k+1)) / (1 - p)`` tokens per step of k drafts with each
accepted with probability p given its predecessors (Leviathan et al., arXiv 2211.17192, Eq. 1),
p solved from the entry's own accept length. Standard library only.

Simplification: SGLang pads a running batch to the next CUDA-graph batch size before routing it
(``_pad_to_cuda_graph_bs``, :348-354); the simulator routes the batch's own size.
"""

import json
import os
import sys

# collection_code.py beside this file loads plugins/module_utils/_sglang_adaptive.py (also when loaded by path).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collection_code  # noqa: E402

# AdaptiveStepSlot's defaults (adaptive_spec_params.py:174-176) for a tier that does not set them.
SLOT_DEFAULTS = {"down_hysteresis": -0.25, "up_hysteresis": 0.0}
# The path into _init_adaptive_speculative_params (0.5.23 line numbers), for a unit it refuses.
STEPS_FRAMES = [
    (
        "srt/arg_groups/speculative_hook.py",
        263,
        "handle_speculative_decoding",
        "_init_adaptive_speculative_params(server_args)",
    ),
    ("srt/arg_groups/speculative_hook.py", 1417, "_init_adaptive_speculative_params", "raise ValueError("),
]


class TierError(Exception):
    """The behaviour does not say how the unit runs at a step its tiers settle on."""


def resolve_adaptive(args, table):
    """The release's handling of --speculative-adaptive at start, on the resolved args.

    Returns (log lines, refusal, tiers, config): a warning when the release would turn adaptive off
    (args.speculative_adaptive is set False, as ``_maybe_disable_adaptive`` declares it); the exception lines
    it would stop on (a step count outside the tiers, a bad tiers file); else the tiers' initialisation line,
    the tiers ({batch size: candidate steps}) and the config they come from (the file's, or the release's
    DEFAULT_ADAPTIVE_CONFIG)."""
    if not getattr(args, "speculative_adaptive", False):
        return [], None, None, None
    rules = table.get("adaptive")
    module = collection_code.load("_sglang_adaptive")
    if not rules or module is None:
        raise TierError("the option table has no adaptive rules (scripts/test setup reads them from the wheel)")
    config = None
    if getattr(args, "speculative_adaptive_config", None):
        # _load_adaptive_config opens and parses the file at start (adaptive_spec_params.py:110-112).
        with open(args.speculative_adaptive_config, encoding="utf-8") as handle:
            config = json.load(handle)
    verdict = module.check(rules, vars(args), config)
    if verdict["reason"] is not None:
        args.speculative_adaptive = False
        return [verdict["warning"]], None, None, None
    if verdict["problems"]:
        # The checker's text ends with where the release says it; the exception line is the text alone.
        lines = [p.rsplit(" (", 1)[0] for p in verdict["problems"]]
        return (
            [],
            [line if line.startswith("ValueError: ") else "ValueError: " + line for line in lines[:1]],
            None,
            None,
        )
    first = verdict["tiers"][min(verdict["tiers"])]
    initial = args.speculative_num_steps if args.speculative_num_steps in first else first[len(first) // 2]
    # adaptive_spec_params.py:297-303
    note = f"AdaptiveSpeculativeParams initialized: steps={initial}, candidate_steps={first}"
    return [note], None, verdict["tiers"], config if config is not None else rules["default_config"]


def accept_length_of(steps, base_length, base_steps):
    """Tokens per verify step with ``steps`` drafts, by the chain model from the unit's own accept length."""
    if steps <= 0:
        return 1.0
    if base_steps is None or base_steps <= 0 or base_length <= 1:
        return max(1.0, base_length)
    if base_length >= base_steps + 1:
        return float(steps + 1)
    lo, hi = 0.0, 1.0
    for _step in range(60):  # bisection: sum_{i<=k} p^i is increasing in p
        p = (lo + hi) / 2
        if sum(p**i for i in range(base_steps + 1)) < base_length:
            lo = p
        else:
            hi = p
    p = (lo + hi) / 2
    return sum(p**i for i in range(steps + 1))


def settled_step(candidates, initial, accepted_drafts, slot):
    """The step a tier settles on: AdaptiveStepSlot's rule (adaptive_spec_params.py:166-261) fed, at each step
    count, the drafts accepted there (its EMA's steady state). In a cycle (a probe from 0 that drops back),
    the lowest step of the cycle, where it returns after each probe."""
    candidates = sorted(set(candidates))
    down = slot.get("down_hysteresis", SLOT_DEFAULTS["down_hysteresis"])
    up = slot.get("up_hysteresis", SLOT_DEFAULTS["up_hysteresis"])
    current = initial if initial in candidates else candidates[len(candidates) // 2]
    seen = []
    while current not in seen:
        seen.append(current)
        idx = candidates.index(current)
        if current == 0:  # :219-227, probe the next step up
            current = candidates[min(idx + 1, len(candidates) - 1)]
            continue
        ema = accepted_drafts(current)
        while idx > 0 and ema <= (0.5 if candidates[idx - 1] == 0 else candidates[idx - 1] - 0.5) + down:  # :230-239
            idx -= 1
        if candidates.index(current) == idx:  # :241-249, only when it did not move down
            while idx < len(candidates) - 1 and ema > candidates[idx] - 0.5 + up:
                idx += 1
        current = candidates[idx]
    return min(seen[seen.index(current) :])


class Steps:
    """How many draft steps a unit runs with n generations in flight, and the per-stream rate and accept length
    that gives. ``behaviour`` is the merged entry (its rates and accept length are at the unit's own step count),
    ``none_entry`` the file's NONE entry (no speculation), ``tiers`` and ``config`` resolve_adaptive's,
    ``rate_table`` and ``rate_at`` the simulator's own (README "Batching")."""

    def __init__(self, args, behaviour, none_entry, tiers, config, rate_table, rate_at):
        self.own = args.speculative_num_steps
        self.behaviour = behaviour
        self.rate_at = rate_at
        self.specs, self.curves, self.by_tier = {}, {}, {}
        if not tiers:
            return  # static speculation (or none): the entry's own rates, whatever n is
        if self.own is None:  # the release starts at the middle of every candidate step (speculative_hook.py:1408-1413)
            union = sorted({step for steps in tiers.values() for step in steps})
            self.own = union[len(union) // 2]
        specs = {int(k): dict(v) for k, v in (behaviour.get("steps") or {}).items()}
        if 0 not in specs and none_entry:
            specs[0] = {"rates": none_entry.get("rates"), "tok_s": none_entry.get("tok_s"), "accept_length": 1.0}
        for step, spec in specs.items():
            if spec.get("rates") is None and spec.get("tok_s") is None:
                raise TierError(f"steps {step}: give its rates (or tok_s)")
            self.curves[step] = rate_table(spec.get("rates")) if spec.get("rates") else float(spec["tok_s"])
            if spec.get("accept_length") is None:
                spec["accept_length"] = accept_length_of(step, behaviour["accept_length"], self.own)
        self.specs = specs
        shared = {k: v for k, v in (config or {}).items() if not str(k).isdigit()}
        for tier, candidates in sorted(tiers.items()):
            slot = dict(shared, **(config or {}).get(str(tier), {}))  # {**cfg, **entry}, adaptive_spec_params.py:294
            step = settled_step(candidates, self.own, lambda s: self.accept_length(s) - 1, slot)
            if step != self.own and step not in self.curves:
                raise TierError(
                    f"the adaptive unit settles on {step} step(s) at a running batch of {tier} or more "
                    f"(tier {tier}), but the "
                    f'behaviour gives no rates for it: add "steps": {{"{step}": {{"rates": {{...}}}}}} to its entry'
                )
            self.by_tier[tier] = step

    @property
    def adaptive(self):
        return bool(self.by_tier)

    def step_at(self, n):
        """The step count with n generations in flight: the tier of the largest key at or below n."""
        if not self.by_tier:
            return self.own
        keys = [k for k in sorted(self.by_tier) if k <= n] or [min(self.by_tier)]
        return self.by_tier[keys[-1]]

    def accept_length(self, step):
        if step == self.own or step is None:
            return self.behaviour["accept_length"]
        if step in self.specs:
            return self.specs[step]["accept_length"]
        return accept_length_of(step, self.behaviour["accept_length"], self.own)

    def rate(self, n):
        """Per-stream tok/s with n in flight: the unit's own curve at its step count, else that step's."""
        step = self.step_at(n)
        if step == self.own:
            b = self.behaviour
            return self.rate_at(b["rates"], n) if b["rates"] else b["tok_s"]
        curve = self.curves[step]
        return curve if isinstance(curve, float) else self.rate_at(curve, n)

    def describe(self):
        """For the start line: tier -> step."""
        return ",".join(f"{tier}:{step}" for tier, step in sorted(self.by_tier.items()))
