# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ddtree_deploy's preflight rules for its settings and for a draft model's fit (_deploy_settings.py):
what a user writes in group_vars or with -e, and the verdict."""

import pytest
from ansible_collections.ddtree.sglang.plugins.module_utils._deploy_settings import (
    PROMPT_SET,
    RULES,
    draft_fit_errors,
    errors,
)

# (variable, value): values an operator may write that must pass.
GOOD = [
    ("ddtree_deploy_gate_repeats", 3),
    ("ddtree_deploy_gate_repeats", "3"),  # -e key=value gives text
    ("ddtree_deploy_equivalence_tokens", 0),
    ("ddtree_deploy_min_gain", 0.05),
    ("ddtree_deploy_min_gain", "0.05"),
    ("ddtree_deploy_min_gain", -0.05),
    ("ddtree_deploy_min_gain", None),
    ("ddtree_deploy_min_gain", {1: 0.1, 16: 0.0}),
    ("ddtree_deploy_min_gain", {"1": 0.1, "16": None}),  # JSON keys are text; null: measured, not gated
    ("ddtree_deploy_gate_concurrency", None),
    ("ddtree_deploy_gate_concurrency", [1, 16]),
    ("ddtree_deploy_gate_duration", 6),
    ("ddtree_deploy_gate_duration", "0.5"),
    ("ddtree_deploy_gate_warmup", 0),
    ("ddtree_deploy_probe_wait_ready", 0),
    ("ddtree_deploy_probe_wait_ready", "900"),
    ("ddtree_deploy_probe_timeout", 60),
    ("ddtree_deploy_bake_s", 0),
    ("ddtree_deploy_bake_s", "90"),
    ("ddtree_deploy_bake_interval", 15),
    ("ddtree_deploy_bake_failure_limit", 0),
    ("ddtree_deploy_bake_checks", []),
    ("ddtree_deploy_bake_checks", [{"name": "aborts", "bound": 0.05}]),
    ("ddtree_deploy_load_mix", None),
    ("ddtree_deploy_load_mix", {1: 0.2, 16: 0.8}),
    ("ddtree_deploy_load_mix", {"1": 9, "16": 1}),  # JSON keys are text; weights are normalised
    ("ddtree_deploy_prometheus_url", None),
    ("ddtree_deploy_prometheus_url", "http://prom:9090"),
    ("ddtree_deploy_prometheus_url", "https://prom.example.com/prometheus/"),
    ("ddtree_deploy_prometheus_timeout", 10),
    ("ddtree_deploy_prometheus_selector", 'job="sglang", host="ct129"'),
    ("ddtree_deploy_slo", None),
    ("ddtree_deploy_slo", {"ttft_s": 1.0, "itl_s": 0.05}),
    ("ddtree_deploy_slo", {"ttft_s": "1.5"}),
    ("ddtree_deploy_gate_inconclusive", None),
    ("ddtree_deploy_gate_inconclusive", "extend"),
    ("ddtree_deploy_gate_prompts_file", None),
    ("ddtree_deploy_gate_prompts_file", "files/trace.jsonl"),
    ("ddtree_deploy_gate_sampling", {}),
    ("ddtree_deploy_gate_sampling", {"temperature": 0.7, "top_p": 0.95}),
    ("ddtree_deploy_gate_sampling", {"top_p": "1"}),
    ("ddtree_deploy_router_url", None),
    ("ddtree_deploy_router_url", "http://router.example:30000"),
    ("ddtree_deploy_router_worker_url", "http://10.0.0.129:30000"),
    ("ddtree_deploy_router_worker_url", "https://[fd00::5]:30000/"),
    ("ddtree_deploy_router_drain_timeout", "300"),
    ("ddtree_deploy_router_drain_unwatched", 0),
    ("ddtree_deploy_router_min_healthy_others", 0),
    ("ddtree_deploy_router_return_timeout", 120),
]

# (variable, value, what the message must say)
BAD = [
    ("ddtree_deploy_gate_repeats", 0, "ddtree_deploy_gate_repeats (0) must be at least 1"),
    ("ddtree_deploy_gate_repeats", True, "ddtree_deploy_gate_repeats (true) must be at least 1"),
    ("ddtree_deploy_gate_repeats", "2.5", 'ddtree_deploy_gate_repeats ("2.5") must be at least 1'),
    ("ddtree_deploy_equivalence_tokens", -1, "must be a whole number of 0 or more"),
    ("ddtree_deploy_min_gain", -1, "ddtree_deploy_min_gain (-1) must be a fraction above -1"),
    ("ddtree_deploy_min_gain", True, "ddtree_deploy_min_gain (true) must be a fraction above -1"),
    ("ddtree_deploy_min_gain", "ten", 'ddtree_deploy_min_gain ("ten") must be'),
    ("ddtree_deploy_min_gain", {0: 0.1}, "a mapping of concurrency levels to such fractions"),
    ("ddtree_deploy_min_gain", {"sixteen": 0.1}, "a mapping of concurrency levels"),
    ("ddtree_deploy_min_gain", {16: -2}, "ddtree_deploy_min_gain"),
    ("ddtree_deploy_min_gain", [0.1], "ddtree_deploy_min_gain ([0.1]) must be"),
    ("ddtree_deploy_gate_concurrency", [], "ddtree_deploy_gate_concurrency ([]) must be a list of whole numbers"),
    ("ddtree_deploy_gate_concurrency", [1, 0], "of 1 or more"),
    ("ddtree_deploy_gate_concurrency", [1, "16"], "ddtree_deploy_gate_concurrency"),
    ("ddtree_deploy_gate_concurrency", [True], "ddtree_deploy_gate_concurrency"),
    ("ddtree_deploy_gate_duration", 0, "ddtree_deploy_gate_duration (0) must be a number of seconds above 0"),
    ("ddtree_deploy_gate_duration", True, "not yes/no (`true` would be 1 s)"),
    ("ddtree_deploy_gate_warmup", -1, "ddtree_deploy_gate_warmup (-1) must be a number of seconds, 0 or more"),
    ("ddtree_deploy_probe_wait_ready", True, "ddtree_deploy_probe_wait_ready (true) must be a number of seconds"),
    ("ddtree_deploy_probe_timeout", 0, "ddtree_deploy_probe_timeout (0) must be a number of seconds"),
    ("ddtree_deploy_probe_timeout", None, "ddtree_deploy_probe_timeout (null) must be"),
    ("ddtree_deploy_bake_s", True, "ddtree_deploy_bake_s (true) must be a whole number of seconds, 0 or more"),
    ("ddtree_deploy_bake_s", -1, "0 turns the bake off"),
    ("ddtree_deploy_bake_interval", 0, "ddtree_deploy_bake_interval (0) must be a whole number of seconds, 1 or more"),
    ("ddtree_deploy_bake_failure_limit", -1, "ddtree_deploy_bake_failure_limit (-1) must be a whole number"),
    ("ddtree_deploy_bake_checks", {"name": "aborts"}, "must be a list of mappings, each with a name"),
    ("ddtree_deploy_bake_checks", [{"bound": 0.05}], "ddtree_deploy_bake_checks"),
    ("ddtree_deploy_prometheus_url", "prom:9090", 'ddtree_deploy_prometheus_url ("prom:9090") must be null, or'),
    ("ddtree_deploy_prometheus_url", "http://prom:9090/api/v1", "without /api/v1"),
    ("ddtree_deploy_prometheus_url", "https://u:p@prom", "without credentials"),
    ("ddtree_deploy_prometheus_timeout", 0, "ddtree_deploy_prometheus_timeout (0) must be a number of seconds"),
    ("ddtree_deploy_prometheus_selector", None, "ddtree_deploy_prometheus_selector (null) must be PromQL"),
    ("ddtree_deploy_router_url", "router:30000", 'ddtree_deploy_router_url ("router:30000") must be null, or'),
    ("ddtree_deploy_router_worker_url", "10.0.0.129:30000", "must be the http(s) URL the router knows"),
    ("ddtree_deploy_router_drain_timeout", True, "ddtree_deploy_router_drain_timeout (true) must be a number"),
    ("ddtree_deploy_router_drain_unwatched", -1, "must be a number of seconds, 0 or more"),
    ("ddtree_deploy_router_min_healthy_others", "one", "must be a whole number of 0 or more"),
    ("ddtree_deploy_router_return_timeout", 0, "ddtree_deploy_router_return_timeout (0) must be a number"),
    ("ddtree_deploy_load_mix", [1, 16], "ddtree_deploy_load_mix ([1, 16]) must be null or a mapping of concurrency"),
    ("ddtree_deploy_load_mix", {0: 1}, "e.g. {1: 0.2, 16: 0.8}"),
    ("ddtree_deploy_load_mix", {1: -0.5, 16: 1}, "weights (0 or more, not all 0)"),
    ("ddtree_deploy_load_mix", {1: 0, 16: 0}, "a tune keeps the candidate that serves it best"),
    ("ddtree_deploy_slo", {"ttft_ms": 1000}, 'ddtree_deploy_slo ({"ttft_ms": 1000}) must be null, or a mapping'),
    ("ddtree_deploy_slo", {"ttft_s": 0}, "each a number of seconds above 0"),
    ("ddtree_deploy_slo", {"ttft_s": True}, "ddtree_deploy_slo"),
    ("ddtree_deploy_slo", 1.0, "ddtree_deploy_slo (1.0) must be null, or a mapping"),
    ("ddtree_deploy_slo", {}, "null derives one per level from the baseline's p90"),
    ("ddtree_deploy_gate_inconclusive", "retry", 'ddtree_deploy_gate_inconclusive ("retry") must be fail, pass'),
    ("ddtree_deploy_gate_prompts_file", "", 'ddtree_deploy_gate_prompts_file ("") must be null, or the path'),
    ("ddtree_deploy_gate_sampling", {"temperature": -1}, "must be a mapping of temperature (0 or more)"),
    ("ddtree_deploy_gate_sampling", {"top_p": 0}, "and/or top_p (above 0, at most 1)"),
    ("ddtree_deploy_gate_sampling", {"top_k": 1}, "ddtree_deploy_gate_sampling"),
    ("ddtree_deploy_gate_sampling", None, "ddtree_deploy_gate_sampling (null) must be"),
]


@pytest.mark.parametrize(
    ("auth", "message"),
    [
        ({"bearer_token": "tok-sekret", "username": "u"}, "give one way to authenticate to Prometheus"),
        ({"bearer_token": "tok-sekret", "password": "pw-sekret"}, "give one way to authenticate to Prometheus"),
        ({"password": "pw-sekret"}, "ddtree_deploy_prometheus_password is set without"),
    ],
)
def test_prometheus_auth_that_contradicts_itself_is_named_without_the_secrets(auth, message):
    settings = {f"ddtree_deploy_prometheus_{k}": v for k, v in auth.items()}
    (problem,) = errors(settings)
    assert message in problem and "sekret" not in problem


def test_prometheus_auth_of_one_kind_passes():
    assert errors({"ddtree_deploy_prometheus_bearer_token": "t", "ddtree_deploy_prometheus_username": ""}) == []
    assert errors({"ddtree_deploy_prometheus_username": "u", "ddtree_deploy_prometheus_password": "p"}) == []


@pytest.mark.parametrize(("name", "value"), GOOD)
def test_good_settings_pass(name, value):
    assert errors({name: value}) == []


@pytest.mark.parametrize(("name", "value", "message"), BAD)
def test_bad_settings_are_named_with_their_value_and_rule(name, value, message):
    problems = errors({name: value})
    assert len(problems) == 1, problems
    assert message in problems[0], problems
    # the message gives the reason, not only the rule
    assert problems[0].endswith(".") and ": " in problems[0], problems


def test_every_rule_has_what_and_why():
    for name, (check, what, why) in RULES.items():
        assert callable(check) and what and why, name


def test_each_bad_setting_gets_its_own_message():
    problems = errors(
        {"ddtree_deploy_gate_repeats": 0, "ddtree_deploy_gate_duration": -1, "ddtree_deploy_gate_warmup": 1}
    )
    assert [p.split(" ")[0] for p in problems] == ["ddtree_deploy_gate_repeats", "ddtree_deploy_gate_duration"]


def test_an_unknown_variable_is_the_callers_mistake():
    with pytest.raises(KeyError):
        errors({"ddtree_deploy_gate_repetitions": 3})


def _prompt(**kw):
    return {"id": "short", "api": "completions", "prompt": "Say hi", "max_tokens": 16, **kw}


@pytest.mark.parametrize(
    ("prompts", "message"),
    [
        ([_prompt(), _prompt()], 'ddtree_deploy_gate_prompts[1] ("short"): its id is used twice'),
        ([_prompt(max_tokens=0)], 'ddtree_deploy_gate_prompts[0] ("short"): max_tokens (0) must be 1 or more'),
        ([{"id": "c", "api": "completions", "max_tokens": 8}], "api completions needs a prompt"),
        ([{"id": "c", "api": "chat", "max_tokens": 8, "prompt": "x"}], "api chat needs messages"),
        ([_prompt(api="generate")], 'api ("generate") must be completions or chat'),
        (["Say hi"], 'ddtree_deploy_gate_prompts[0] must be a mapping (id, api, max_tokens), got a string ("Say hi")'),
        ("Say hi", "ddtree_deploy_gate_prompts must be a list of prompts"),
    ],
)
def test_bad_prompts_are_named_by_index_and_id(prompts, message):
    problems = errors({PROMPT_SET: prompts})
    assert any(message in p for p in problems), problems


def test_the_role_prompt_set_and_an_empty_one_pass():
    chat = {"id": "chat", "api": "chat", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 64}
    assert errors({PROMPT_SET: []}) == []
    assert errors({PROMPT_SET: [_prompt(), chat]}) == []


# The field report's target (Qwen3.6-27B: hidden 5120, 64 layers, nested under text_config) and draft.
TARGET = {
    "architectures": ["Qwen3_5ForConditionalGeneration"],
    "text_config": {"hidden_size": 5120, "num_hidden_layers": 64},
}
DRAFT = {"hidden_size": 5120, "dflash_config": {"target_layer_ids": [1, 16, 31, 46, 61]}}


def test_the_draft_trained_for_the_target_fits():
    assert draft_fit_errors(TARGET, DRAFT) == []
    # a flat target config (no text_config) is read as it is
    assert draft_fit_errors({"hidden_size": 5120, "num_hidden_layers": 64}, DRAFT) == []


@pytest.mark.parametrize(
    ("target", "draft", "messages"),
    [
        (TARGET, {**DRAFT, "hidden_size": 4096}, ["hidden_size 4096 (draft) != 5120 (target)"]),
        (
            TARGET,
            {**DRAFT, "dflash_config": {"target_layer_ids": [1, 64, -1]}},
            ["dflash_config.target_layer_ids [64, -1] are outside the target's 64 layers (0..63)"],
        ),
        (
            TARGET,
            {"hidden_size": 2048, "dflash_config": {"target_layer_ids": [70, "x"]}},
            ['target_layer_ids [70, "x"] are outside', "hidden_size 2048 (draft) != 5120 (target)"],
        ),
        # without the target's layer count, only what is never a layer is refused
        (
            {"hidden_size": 5120},
            {**DRAFT, "dflash_config": {"target_layer_ids": [99, -2]}},
            ["[-2] are outside 0 or more"],
        ),
    ],
)
def test_a_draft_for_another_model_is_refused_with_both_figures(target, draft, messages):
    problems = draft_fit_errors(target, draft)
    assert len(problems) == len(messages), problems
    for problem, message in zip(problems, messages, strict=True):
        assert message in problem, problems


def test_what_the_configs_do_not_say_is_not_compared():
    assert draft_fit_errors({}, {}) == []
    assert draft_fit_errors({"text_config": {}}, {"dflash_config": {}}) == []


def test_a_config_that_is_not_an_object_is_named():
    problems = draft_fit_errors([], DRAFT)
    assert problems and "not a JSON object" in problems[0] and "a list" in problems[0], problems


def test_a_bake_interval_longer_than_the_bake_is_refused():
    problems = errors({"ddtree_deploy_bake_s": 10, "ddtree_deploy_bake_interval": 15})
    assert problems == [
        "ddtree_deploy_bake_interval (15) must not exceed ddtree_deploy_bake_s (10): "
        "the bake would take no measurement."
    ]
    # Off, the interval is not compared.
    assert errors({"ddtree_deploy_bake_s": 0, "ddtree_deploy_bake_interval": 15}) == []


@pytest.mark.parametrize(
    ("mix", "levels", "problem"),
    [
        ({1: 0.2, 8: 0.8}, [1, 16], "ddtree_deploy_load_mix has traffic at concurrency 8, which "),
        ({"1": 0.5, "64": 0.5}, [1, 16], "at concurrency 64, which ddtree_deploy_gate_concurrency (1, 16) does not"),
    ],
)
def test_a_mix_at_a_level_the_gate_does_not_measure_is_named_with_the_fix(mix, levels, problem):
    """No candidate has a score for such a mix: the fallback would win whatever they measure."""
    (found,) = errors({"ddtree_deploy_load_mix": mix, "ddtree_deploy_gate_concurrency": levels})
    assert problem in found and "Add those levels to ddtree_deploy_gate_concurrency" in found, found


def test_a_mix_within_the_gate_levels_or_with_the_default_levels_passes():
    assert errors({"ddtree_deploy_load_mix": {1: 0.9, 16: 0.1}, "ddtree_deploy_gate_concurrency": [1, 4, 16]}) == []
    assert errors({"ddtree_deploy_load_mix": {1: 1, 16: 0}, "ddtree_deploy_gate_concurrency": [1]}) == []
    assert errors({"ddtree_deploy_load_mix": {1: 0.9, 16: 0.1}, "ddtree_deploy_gate_concurrency": None}) == []


def test_a_min_gain_level_the_gate_does_not_measure_is_refused_naming_the_level_left_ungated():
    # issue #38: {1: 0.1, 32: 0.0} with levels [1, 16]: the 32 was ignored and 16 gated by nothing written
    (found,) = errors({"ddtree_deploy_min_gain": {1: 0.1, 32: 0.0}, "ddtree_deploy_gate_concurrency": [1, 16]})
    assert found == (
        "ddtree_deploy_min_gain names concurrency 32, which ddtree_deploy_gate_concurrency (1, 16) does not measure: "
        "its gain would be ignored, and concurrency 16 would be gated by nothing you wrote. Give "
        "ddtree_deploy_min_gain the levels the gate measures, or add those levels to ddtree_deploy_gate_concurrency."
    )


def test_min_gain_at_the_gate_levels_one_number_or_the_default_levels_passes():
    assert errors({"ddtree_deploy_min_gain": {1: 0.1, 16: 0.0}, "ddtree_deploy_gate_concurrency": [1, 16]}) == []
    assert errors({"ddtree_deploy_min_gain": {"16": 0.0}, "ddtree_deploy_gate_concurrency": [1, 16]}) == []
    assert errors({"ddtree_deploy_min_gain": 0.1, "ddtree_deploy_gate_concurrency": [1, 16]}) == []
    assert errors({"ddtree_deploy_min_gain": {1: 0.1, 32: 0.0}, "ddtree_deploy_gate_concurrency": None}) == []
