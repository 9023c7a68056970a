# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every filter's errors, rendered by real ansible-core templating, name types as a user writes
them (a list, a string, a number, a mapping, true/false, omit), never Ansible's internal classes.

ansible-core 2.19 hands filters lazy containers (_AnsibleLazyTemplateList, ...), tagged scalars
(_AnsibleTaggedInt, ...) and omit as _OmitType; a message built from ``type(value).__name__`` or
``repr(value)`` shows those names. The playbook calls each filter with such values, every call
must fail, and no message may hold a type name with a leading underscore or "Ansible".
"""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hang_guard import hang_guard

# (what is called, the expression). Values come from variables (lazy, tagged) or omit.
CALLS = [
    ("gpu_class of a number", "{{ a_number | ddtree.sglang.gpu_class }}"),
    ("gpu_class of omit", "{{ omit | ddtree.sglang.gpu_class }}"),
    ("gpu_class of a list of numbers", "{{ a_list | ddtree.sglang.gpu_class }}"),
    ("sglang_args of a list", "{{ a_list | ddtree.sglang.sglang_args }}"),
    ("sglang_args of a number", "{{ a_number | ddtree.sglang.sglang_args }}"),
    ("sglang_args with omit as a value", "{{ {'tp_size': omit} | ddtree.sglang.sglang_args }}"),
    ("sglang_args with null in a list", "{{ {'cuda_graph_bs': a_list_with_null} | ddtree.sglang.sglang_args }}"),
    ("sglang_args with a list in a list", "{{ {'cuda_graph_bs': a_nested_list} | ddtree.sglang.sglang_args }}"),
    ("sglang_args with a number as a key", "{{ a_number_keyed_mapping | ddtree.sglang.sglang_args }}"),
    ("sglang_args with a bad style", "{{ {} | ddtree.sglang.sglang_args(style=a_number) }}"),
    ("sglang_redact of a number", "{{ a_number | ddtree.sglang.sglang_redact }}"),
    ("sglang_redact with secrets a number", "{{ 'x' | ddtree.sglang.sglang_redact(a_number) }}"),
    ("sglang_redact with secrets a mapping", "{{ 'x' | ddtree.sglang.sglang_redact(a_mapping) }}"),
    ("sglang_gate_summary of a number", "{{ a_number | ddtree.sglang.sglang_gate_summary }}"),
    ("sglang_gate_summary of a list", "{{ a_list | ddtree.sglang.sglang_gate_summary }}"),
    (
        "sglang_gate_summary of a result whose greedy is a mapping",
        "{{ {'levels': [], 'greedy': a_mapping} | ddtree.sglang.sglang_gate_summary }}",
    ),
    (
        "sglang_gate_summary with not_measured a list",
        "{{ none | ddtree.sglang.sglang_gate_summary(not_measured=a_list) }}",
    ),
    ("deploy_settings_errors of a list", "{{ a_list | ddtree.sglang.deploy_settings_errors }}"),
    ("deploy_settings_errors of an unknown setting", "{{ a_mapping | ddtree.sglang.deploy_settings_errors }}"),
    ("sglang_gate_verdict of a list", "{{ a_list | ddtree.sglang.sglang_gate_verdict(a_mapping) }}"),
    ("sglang_gate_verdict with min_gain a word", "{{ {} | ddtree.sglang.sglang_gate_verdict({}, min_gain=a_word) }}"),
    ("sglang_gate_verdict with min_gain yes", "{{ {} | ddtree.sglang.sglang_gate_verdict({}, min_gain=true) }}"),
    (
        "sglang_gate_verdict with min_gain levels of words",
        "{{ {} | ddtree.sglang.sglang_gate_verdict({}, min_gain=a_mapping) }}",
    ),
    ("sglang_server_env with env a list", "{{ 'c' | ddtree.sglang.sglang_server_env(classes, a_list) }}"),
    ("sglang_server_env with a value a list", "{{ 'c' | ddtree.sglang.sglang_server_env(classes, {'A': a_list}) }}"),
    ("sglang_server_env with omit as a value", "{{ 'c' | ddtree.sglang.sglang_server_env(classes, {'A': omit}) }}"),
    ("sglang_server_env with a table a list", "{{ 'c' | ddtree.sglang.sglang_server_env(a_list) }}"),
    ("sglang_server_env with an unknown class", "{{ a_number | ddtree.sglang.sglang_server_env(classes) }}"),
    (
        "sglang_server_options with variants a number",
        "{{ 'p' | ddtree.sglang.sglang_server_options('c', classes, profiles, {}, a_number) }}",
    ),
    (
        "sglang_server_options with extra_args a list",
        "{{ 'p' | ddtree.sglang.sglang_server_options('c', classes, profiles, {}, [], a_list) }}",
    ),
    (
        "sglang_server_options with an entry a list",
        "{{ 'p' | ddtree.sglang.sglang_server_options('c', bad_classes, profiles) }}",
    ),
    (
        "sglang_server_options with option names a list",
        "{{ 'p' | ddtree.sglang.sglang_server_options('c', classes, profiles, option_names=a_list,"
        " release_version='0.5.23') }}",
    ),
    (
        "sglang_server_options with a budget a list",
        "{{ 'p' | ddtree.sglang.sglang_server_options('c', classes, profiles, extra_args=ddtree_list_budget) }}",
    ),
]

VARS = {
    "a_number": 42,
    "a_list": [1, 2],
    "a_list_with_null": [1, None],
    "a_nested_list": [[1, 2]],
    "a_mapping": {"a": 1},
    "a_word": "ten",
    "a_number_keyed_mapping": {1: "x"},
    "classes": {"c": {"options": {}, "env": {}}},
    "bad_classes": {"c": [1, 2]},
    "profiles": {"p": {"options": {}}},
    "ddtree_list_budget": {"speculative_algorithm": "DDTREE", "speculative_ddtree_budget": [15]},
}

# Ansible's internal classes are _CamelCase (_AnsibleTaggedInt, _OmitType) or AnsibleCamelCase
# (AnsibleUnsafeText); Python's own class names (NoneType, dict) are no better for a YAML writer.
# Variable names such as __sglang_profiles (two underscores, lower case) are not type names.
INTERNAL = re.compile(r"(?<![\w.])_[A-Z]\w*|\bAnsible[A-Z]\w*|\b(?:NoneType|type \w+)\b")


@pytest.fixture(scope="module")
def messages(tmp_path_factory, ansible_cli_env):
    tmp = tmp_path_factory.mktemp("filter_errors")
    tasks = [
        {
            "name": name,
            "ansible.builtin.debug": {"msg": expr},
            "ignore_errors": True,
            "register": f"r{i}",
        }
        for i, (name, expr) in enumerate(CALLS)
    ]
    # Each result as registered, written by the play itself: the same on every ansible-core (the matrix runs this
    # on each; ansible.builtin.json, the stdout callback that printed them before, is 2.19's and not 2.16's).
    registered = ", ".join(f"'r{i}': r{i}" for i in range(len(CALLS)))
    tasks.append(
        {
            "name": "Write what each call registered",
            "ansible.builtin.copy": {"content": "{{ {%s} | to_json }}" % registered, "dest": str(tmp / "results.json")},  # noqa: UP031
        }
    )
    play = [{"hosts": "localhost", "gather_facts": False, "vars": VARS, "tasks": tasks}]
    (tmp / "play.yml").write_text(json.dumps(play))
    run = subprocess.run(
        [
            Path(sys.executable).parent / "ansible-playbook",
            "-i",
            "localhost,",
            "-c",
            "local",
            tmp / "play.yml",
            "-e",
            f"ansible_python_interpreter={sys.executable}",
        ],
        capture_output=True,
        text=True,
        env=ansible_cli_env,
        cwd=tmp,
        timeout=hang_guard(300),
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    out = json.loads((tmp / "results.json").read_text())
    results = {name: out[f"r{i}"] for i, (name, _expr) in enumerate(CALLS)}
    return results


@pytest.mark.parametrize(("name", "expr"), CALLS, ids=[c[0] for c in CALLS])
def test_filter_error_names_no_internal_type(messages, name, expr):
    res = messages[name]
    assert res.get("failed") is True, (expr, res)  # each call is an error, or the check proves nothing
    msg = res["msg"]
    assert not INTERNAL.search(msg), msg


def test_a_refused_null_is_not_listed_as_allowed(messages):
    msg = messages["sglang_args with null in a list"]["msg"]
    assert "has a list item that is null; the items of a list must be strings or numbers." in msg


def test_a_min_gain_the_gate_cannot_read_is_named_with_what_it_takes(messages):
    # issue 38 item 6: 'ten' read Python's "could not convert string to float"; true read +100 %.
    takes = (
        "min_gain must be a fraction above -1 (0.05 is 5 %), a mapping of concurrency levels to such fractions "
        "({1: 0.1, 16: 0.0}), or null; got "
    )
    assert f'sglang_gate_verdict: {takes}"ten"' in messages["sglang_gate_verdict with min_gain a word"]["msg"]
    assert f"sglang_gate_verdict: {takes}yes/no" in messages["sglang_gate_verdict with min_gain yes"]["msg"]
    assert f"sglang_gate_verdict: {takes}" in messages["sglang_gate_verdict with min_gain levels of words"]["msg"]
