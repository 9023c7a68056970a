# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What ddtree_deploy's preflight checks in its settings beyond argument_specs, and the draft
model's fit to the target model: one table of rules, each with what the value must be and why.

argument_specs checks types, but a float option takes YAML's ``true`` as 1, ``-e key=value`` gives
strings, and it cannot check ranges, the shape of a mapping or a prompt set's entries. These rules
do, on the controller, before anything on the host changes. Standard library only.
"""

from __future__ import absolute_import, annotations, division, print_function

import re
from collections.abc import Mapping

from ansible_collections.ddtree.sglang.plugins.module_utils._deploy_tuning import mix_errors, mix_level_errors
from ansible_collections.ddtree.sglang.plugins.module_utils._values import describe, show

_NUMBER = re.compile(r"^\s*[-+]?(\d+\.?\d*|\.\d+)\s*$")
_WHOLE = re.compile(r"^\s*\+?\d+\s*$")


def _number(value):
    """The number a setting holds (a number written as text is a number), or None; true/false is
    not a number (a float option reads YAML's true as 1)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and _NUMBER.match(value):
        return float(value)
    return None


def _whole(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and _WHOLE.match(value):
        return int(value)
    return None


def _at_least(limit, whole=False):
    def check(value):
        number = _whole(value) if whole else _number(value)
        return number is not None and number >= limit

    return check


def _above(limit):
    def check(value):
        number = _number(value)
        return number is not None and number > limit

    return check


def _gain(value):
    return value is None or _above(-1)(value)


def _min_gain(value):
    if isinstance(value, Mapping):
        return all(_at_least(1, whole=True)(level) and _gain(gain) for level, gain in value.items())
    return _gain(value)


def _levels(value):
    return value is None or (
        isinstance(value, (list, tuple))
        and len(value) > 0
        and all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in value)
    )


def _checks(value):
    return isinstance(value, (list, tuple)) and all(isinstance(c, Mapping) and c.get("name") for c in value)


_PROMETHEUS_URL = re.compile(r"^https?://[^/\s@]+(/\S*)?$")


def _prometheus_url(value):
    """null, or an http(s) URL without credentials and without the API's path (_prometheus.py's rules)."""
    if value is None or value == "":
        return True
    return isinstance(value, str) and bool(_PROMETHEUS_URL.match(value)) and not value.rstrip("/").endswith("/api/v1")


def _text(value):
    return isinstance(value, str)


def _slo(value):
    """null, or {ttft_s, itl_s} of seconds above 0, either left out (_goodput.check_slo's rule)."""
    if value is None:
        return True
    return (
        isinstance(value, Mapping)
        and len(value) > 0
        and set(value) <= {"ttft_s", "itl_s"}
        and all(v is None or _above(0)(v) for v in value.values())
    )


def _sampling(value):
    """{} or {temperature: 0 or more, top_p: above 0 and at most 1}, either left out."""
    if not isinstance(value, Mapping) or not set(value) <= {"temperature", "top_p"}:
        return False
    top_p = _number(value.get("top_p", 1))
    return _at_least(0)(value.get("temperature", 0)) and top_p is not None and 0 < top_p <= 1


def _path_or_null(value):
    return value is None or (isinstance(value, str) and value.strip() != "")


def _router_url(value):
    """null, or the router's http(s) address without credentials (they go in ddtree_deploy_router_api_key)."""
    return value is None or value == "" or _http_url(value)


def _http_url(value):
    return isinstance(value, str) and bool(_PROMETHEUS_URL.match(value))


# variable: (the check, what the value must be, why)
RULES = {
    "ddtree_deploy_gate_repeats": (
        _at_least(1, whole=True),
        "at least 1",
        "each level's window is split into this many measurements; 3 is the fewest with a median",
    ),
    "ddtree_deploy_equivalence_tokens": (
        _at_least(0, whole=True),
        "a whole number of 0 or more",
        "tokens compared greedy per prompt; 0 turns the check off",
    ),
    "ddtree_deploy_min_gain": (
        _min_gain,
        "a fraction above -1 (0.05 is 5 %), a mapping of concurrency levels to such fractions "
        "({1: 0.1, 16: 0.0}), or null",
        "the least gain the new service must show over the baseline; null requires none: the new service is judged "
        "not worse (ddtree_deploy_gate_not_worse), or measured and not judged with that false",
    ),
    "ddtree_deploy_gate_concurrency": (
        _levels,
        "a list of whole numbers of streams of 1 or more (e.g. [1, 16]), or null",
        "the closed-loop levels the gate measures; null is 1 and the unit's max_running_requests up to 16",
    ),
    # A tune's load mix (issue 35): _deploy_tuning's own messages name what is wrong (see errors()).
    "ddtree_deploy_load_mix": (
        lambda value: not mix_errors(value),
        "null or a mapping of concurrency levels (whole numbers, 1 or more) to weights (0 or more, not all 0), "
        "e.g. {1: 0.2, 16: 0.8}",
        "the share of the time the host's traffic runs at each level; a tune keeps the candidate that serves it best",
    ),
    "ddtree_deploy_slo": (
        _slo,
        "null, or a mapping of ttft_s and/or itl_s, each a number of seconds above 0 (e.g. {ttft_s: 1.0, itl_s: 0.05})",
        "the SLO each request of the gate is judged against (ttft_s: the first token; itl_s: the request's mean time "
        "per output token after the first); null derives one per level from the baseline's p90 (docs/deploy.md)",
    ),
    "ddtree_deploy_gate_inconclusive": (
        lambda value: value in (None, "fail", "pass", "extend"),
        "fail, pass, extend, or null",
        "what a level whose goodput interval holds its required gain does (extend: measure it once more, twice as "
        "long, then decide); null fails where a gain above 0 is required and passes where none is",
    ),
    "ddtree_deploy_gate_prompts_file": (
        _path_or_null,
        "null, or the path on the controller of a JSONL trace (one request a line: prompt or messages, max_tokens, "
        "optionally temperature and top_p)",
        "the gate's load: production requests instead of the built-in prompts (docs/bench.md, 'Your workload')",
    ),
    "ddtree_deploy_gate_sampling": (
        _sampling,
        "a mapping of temperature (0 or more) and/or top_p (above 0, at most 1), or {} (greedy)",
        "the production sampling settings the gate's load is sent with; the equivalence check stays greedy",
    ),
    "ddtree_deploy_gate_duration": (
        _above(0),
        "a number of seconds above 0, not yes/no (`true` would be 1 s)",
        "each level's measured window",
    ),
    "ddtree_deploy_gate_warmup": (
        _at_least(0),
        "a number of seconds, 0 or more, not yes/no (`true` would be 1 s)",
        "load before each level's window",
    ),
    "ddtree_deploy_probe_wait_ready": (
        _at_least(0),
        "a number of seconds, not yes/no (`true` would be 1 s)",
        "how long the probe waits for the server to be ready, e.g. 900 (a 27B model loads in minutes)",
    ),
    "ddtree_deploy_probe_timeout": (
        _above(0),
        "a number of seconds, not yes/no (`true` would be 1 s)",
        "how long one probe request may take, e.g. 60",
    ),
    "ddtree_deploy_bake_s": (
        _at_least(0, whole=True),
        "a whole number of seconds, 0 or more, not yes/no",
        "how long the bake watches the new unit under traffic; 0 turns the bake off",
    ),
    "ddtree_deploy_bake_interval": (
        _at_least(1, whole=True),
        "a whole number of seconds, 1 or more, not yes/no",
        "seconds between two bake measurements (a few at least: SGLang's gauges change every 40 decode steps)",
    ),
    "ddtree_deploy_bake_failure_limit": (
        _at_least(0, whole=True),
        "a whole number, 0 or more",
        "failed measurements a bake check may have before it fails the deploy (0 fails on the first)",
    ),
    "ddtree_deploy_bake_checks": (
        _checks,
        "a list of mappings, each with a name (e.g. [{name: aborts, bound: 0.05}])",
        "changes to the bake's default checks, by name (docs/bake.md)",
    ),
    "ddtree_deploy_prometheus_url": (
        _prometheus_url,
        "null, or Prometheus' http(s) address with its path prefix if any, without /api/v1 and without "
        "credentials (e.g. https://prom.example.com/prometheus)",
        "where the bake reads the unit's series; give credentials as ddtree_deploy_prometheus_username and "
        "_password, or _bearer_token",
    ),
    "ddtree_deploy_prometheus_timeout": (
        _above(0),
        "a number of seconds above 0, not yes/no",
        "how long one Prometheus query may take",
    ),
    "ddtree_deploy_prometheus_selector": (
        _text,
        'PromQL label matchers as text (e.g. job="sglang", host="ct129")',
        "they select the unit's series among Prometheus'",
    ),
    # Secrets: never shown; checked together below (a token and basic auth exclude each other).
    "ddtree_deploy_prometheus_bearer_token": (lambda _value: True, "text", "a secret, never shown"),
    "ddtree_deploy_prometheus_username": (lambda _value: True, "text", "basic auth's user"),
    "ddtree_deploy_prometheus_password": (lambda _value: True, "text", "a secret, never shown"),
    "ddtree_deploy_router_url": (
        _router_url,
        "null, or the router's http(s) address without credentials (e.g. http://router.example:30000)",
        "the deploy takes the host out of this router and puts it back; give its key as ddtree_deploy_router_api_key",
    ),
    "ddtree_deploy_router_worker_url": (
        _http_url,
        "the http(s) URL the router knows this host's server by (e.g. http://10.0.0.129:30000)",
        "the worker taken out and put back; GET <router>/workers lists the URLs it knows",
    ),
    "ddtree_deploy_router_drain_timeout": (
        _above(0),
        "a number of seconds above 0, not yes/no",
        "the longest wait for the worker's requests to end once it is out of the router",
    ),
    "ddtree_deploy_router_drain_unwatched": (
        _at_least(0),
        "a number of seconds, 0 or more, not yes/no",
        "the wait after the removal when the worker's requests cannot be counted",
    ),
    "ddtree_deploy_router_min_healthy_others": (
        _at_least(0, whole=True),
        "a whole number of 0 or more",
        "healthy workers the router must keep while this one is out; 0 allows taking out the last one",
    ),
    "ddtree_deploy_router_return_timeout": (
        _above(0),
        "a number of seconds above 0, not yes/no",
        "the longest wait until the router lists the returned worker healthy",
    ),
}

# The prompt set's own rules: one message per prompt, naming it.
PROMPT_SET = "ddtree_deploy_gate_prompts"


def _prompt_errors(prompts):
    if not isinstance(prompts, (list, tuple)):
        return [f"{PROMPT_SET} must be a list of prompts, got {describe(prompts)}."]
    problems = []
    seen = set()
    for index, prompt in enumerate(prompts):
        if not isinstance(prompt, Mapping):
            problems.append(f"{PROMPT_SET}[{index}] must be a mapping (id, api, max_tokens), got {describe(prompt)}.")
            continue
        name = f"{PROMPT_SET}[{index}] ({show(prompt.get('id'))})"
        if prompt.get("id") in seen:
            problems.append(f"{name}: its id is used twice; each prompt needs its own id (reports name prompts by it).")
        seen.add(prompt.get("id"))
        if not _at_least(1, whole=True)(prompt.get("max_tokens")):
            problems.append(f"{name}: max_tokens ({show(prompt.get('max_tokens'))}) must be 1 or more.")
        api = prompt.get("api")
        if api == "completions" and "prompt" not in prompt:
            problems.append(f"{name}: api completions needs a prompt.")
        elif api == "chat" and "messages" not in prompt:
            problems.append(f"{name}: api chat needs messages.")
        elif api not in ("completions", "chat"):
            problems.append(f"{name}: api ({show(api)}) must be completions or chat.")
    return problems


def errors(settings):
    """One message per setting that breaks its rule: "<name> (<value>) must be <what>: <why>.".

    ``settings``: variable -> value, for variables of RULES and PROMPT_SET. An unknown variable is the
    caller's mistake (KeyError), not the user's."""
    problems = []
    for name, value in settings.items():
        if name == PROMPT_SET:
            problems.extend(_prompt_errors(value))
            continue
        check, what, why = RULES[name]
        if not check(value):
            problems.append(f"{name} ({show(value)}) must be {what}: {why}.")
    problems.extend(_prometheus_auth_errors(settings))
    # A tune's load mix at a level the gate does not measure would score no candidate.
    problems.extend(
        mix_level_errors(settings.get("ddtree_deploy_load_mix"), settings.get("ddtree_deploy_gate_concurrency"))
    )
    problems.extend(
        min_gain_level_errors(settings.get("ddtree_deploy_min_gain"), settings.get("ddtree_deploy_gate_concurrency"))
    )
    # A bake shorter than its interval would take no measurement.
    bake, interval = _whole(settings.get("ddtree_deploy_bake_s")), _whole(settings.get("ddtree_deploy_bake_interval"))
    if bake and interval and interval > bake:
        problems.append(
            f"ddtree_deploy_bake_interval ({interval}) must not exceed ddtree_deploy_bake_s ({bake}): "
            "the bake would take no measurement."
        )
    return problems


def min_gain_level_errors(min_gain, gate_levels):
    """A min_gain mapping's level the gate does not measure: its gain is ignored, and the levels measured are gated
    by nothing the operator wrote (issue 38: {1: 0.1, 32: 0.0} with levels [1, 16]). ``gate_levels``:
    ddtree_deploy_gate_concurrency (None: the default levels, known only at the gate)."""
    if not isinstance(min_gain, Mapping) or not _min_gain(min_gain) or not _levels(gate_levels) or not gate_levels:
        return []
    measured = {int(level) for level in gate_levels}
    missing = sorted(int(level) for level in min_gain if int(level) not in measured)
    if not missing:
        return []
    unnamed = sorted(measured - {int(level) for level in min_gain})
    return [
        f"ddtree_deploy_min_gain names concurrency {', '.join(map(str, missing))}, which "
        f"ddtree_deploy_gate_concurrency ({', '.join(str(v) for v in gate_levels)}) does not measure: its gain would "
        "be ignored"
        + (f", and concurrency {', '.join(map(str, unnamed))} would be gated by nothing you wrote" if unnamed else "")
        + ". Give ddtree_deploy_min_gain the levels the gate measures, or add those levels to "
        "ddtree_deploy_gate_concurrency."
    ]


def _prometheus_auth_errors(settings):
    """A bearer token and basic auth exclude each other; a password needs its user. Values never shown."""
    token = settings.get("ddtree_deploy_prometheus_bearer_token")
    user = settings.get("ddtree_deploy_prometheus_username")
    password = settings.get("ddtree_deploy_prometheus_password")
    if token and (user or password):
        return [
            "ddtree_deploy_prometheus_bearer_token and ddtree_deploy_prometheus_username/_password are both set: "
            "give one way to authenticate to Prometheus, a bearer token or basic auth."
        ]
    if password and not user:
        return ["ddtree_deploy_prometheus_password is set without ddtree_deploy_prometheus_username: give the user."]
    return []


def draft_fit_errors(target, draft):
    """Why a DFlash draft model's config.json does not fit its target's (empty when it fits, or
    when the configs do not say). The field report's chat 400 came from hidden states of the wrong
    width reaching the draft (5120 vs 25600). Multimodal and hybrid checkpoints (Qwen3.x) nest the
    language model under text_config."""
    if not isinstance(target, Mapping) or not isinstance(draft, Mapping):
        return [f"a config.json is not a JSON object (target {describe(target, 40)}, draft {describe(draft, 40)})"]
    target = target.get("text_config") if isinstance(target.get("text_config"), Mapping) else target
    problems = []
    layers = _whole(target.get("num_hidden_layers"))
    dflash = draft.get("dflash_config") if isinstance(draft.get("dflash_config"), Mapping) else {}
    layer_ids = dflash.get("target_layer_ids") or []
    if not isinstance(layer_ids, (list, tuple)):
        layer_ids = [layer_ids]
    bad = [
        i
        for i in layer_ids
        if isinstance(i, bool) or not isinstance(i, int) or i < 0 or (layers is not None and i >= layers)
    ]
    if bad:
        within = f"the target's {layers} layers (0..{layers - 1})" if layers is not None else "0 or more"
        problems.append(f"dflash_config.target_layer_ids {show(bad)} are outside {within}")
    target_width, draft_width = _whole(target.get("hidden_size")), _whole(draft.get("hidden_size"))
    if target_width is not None and draft_width is not None and target_width != draft_width:
        problems.append(f"hidden_size {draft_width} (draft) != {target_width} (target)")
    return problems
