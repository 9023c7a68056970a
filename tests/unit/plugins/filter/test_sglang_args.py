# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The sglang_args filter: ServerArgs dict -> launch_server arguments, quoted for systemd."""

import json

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.ddtree.sglang.plugins.filter.sglang_args import FilterModule, sglang_args, systemd_quote

_C_UNESCAPES = {"\\": "\\", '"': '"', "'": "'", "n": "\n", "t": "\t", "r": "\r", "s": " "}


def systemd_split(line):
    """Split an ExecStart= command line the way systemd.syntax(7) and systemd.service(5) describe.

    Words are separated by whitespace; double quotes group; C escapes are decoded; then "%%" is a
    literal "%" (specifiers) and "$$" a literal "$" (variable substitution). Any other "%" or "$"
    would be expanded by systemd, so it is an error here: the filter must have escaped it.
    """
    words, i = [], 0
    while i < len(line):
        while i < len(line) and line[i] in " \t":
            i += 1
        if i >= len(line):
            break
        word, quoted = [], False
        while i < len(line) and (quoted or line[i] not in " \t"):
            char = line[i]
            if char == '"':
                quoted = not quoted
            elif char == "\\":
                nxt = line[i + 1]
                if nxt == "x":
                    word.append(chr(int(line[i + 2 : i + 4], 16)))
                    i += 2
                else:
                    word.append(_C_UNESCAPES[nxt])
                i += 1
            elif char == "'" and not quoted:
                # a single quote opens a single-quoted word; the filter uses double quotes only
                raise AssertionError(f"unescaped single quote in {line!r}")
            else:
                word.append(char)
            i += 1
        assert not quoted, f"unterminated quote in {line!r}"
        words.append(_unescape_specials("".join(word)))
    return words


def _unescape_specials(word):
    out, i = [], 0
    while i < len(word):
        if word[i] in "%$":
            assert word[i + 1 : i + 2] == word[i], f"unescaped {word[i]!r} in {word!r}"
            i += 1
        out.append(word[i])
        i += 1
    return "".join(out)


def test_the_filter_is_registered():
    assert FilterModule().filters()["sglang_args"] is sglang_args


def test_field_report_options_render_as_documented():
    options = {
        "speculative_algorithm": "NEXTN",
        "speculative_num_steps": 3,
        "speculative_eagle_topk": 1,
        "speculative_num_draft_tokens": 4,
        "mem_fraction_static": 0.85,
        "disable_cuda_graph": True,
        "enable_metrics": False,
        "cuda_graph_max_bs": None,
    }
    assert sglang_args(options) == (
        "--disable-cuda-graph --mem-fraction-static 0.85 --speculative-algorithm NEXTN "
        "--speculative-eagle-topk 1 --speculative-num-draft-tokens 4 --speculative-num-steps 3"
    )


@pytest.mark.parametrize(
    ("options", "argv"),
    [
        ({"disable_cuda_graph": True}, ["--disable-cuda-graph"]),
        ({"disable_cuda_graph": False}, []),
        ({"cuda_graph_max_bs": None}, []),
        ({"tp_size": 2}, ["--tp-size", "2"]),
        ({"mem_fraction_static": 0.85}, ["--mem-fraction-static", "0.85"]),
        ({"mem_fraction_static": 1e-05}, ["--mem-fraction-static", "1e-05"]),
        ({"cuda_graph_bs": [1, 2, 4, 8]}, ["--cuda-graph-bs", "1", "2", "4", "8"]),
        ({"lora_paths": ["a=/m/a", "b=/m/b"]}, ["--lora-paths", "a=/m/a", "b=/m/b"]),
        (
            {"json_model_override_args": {"rope_scaling": {"type": "yarn", "factor": 4.0}, "a": 1}},
            ["--json-model-override-args", '{"a":1,"rope_scaling":{"factor":4.0,"type":"yarn"}}'],
        ),
        ({"served_model_name": "Qwen 27B"}, ["--served-model-name", "Qwen 27B"]),
        ({}, []),
    ],
)
def test_argv_style_renders_each_value_kind(options, argv):
    assert sglang_args(options, "argv") == argv


def test_order_is_sorted_by_field_name_whatever_the_dict_order():
    forward = {"tp_size": 2, "attention_backend": "fa3", "mem_fraction_static": 0.9}
    backward = dict(reversed(list(forward.items())))
    assert sglang_args(forward) == sglang_args(backward)
    assert sglang_args(forward, "list") == [
        "--attention-backend fa3",
        "--mem-fraction-static 0.9",
        "--tp-size 2",
    ]


@pytest.mark.parametrize(
    "value",
    [
        "plain",
        "/root/models/Qwen3.6-27B",
        "with space",
        'double "quote"',
        "single 'quote'",
        "back\\slash",
        "trailing backslash\\",
        "$HOME and ${HOME}",
        "100% and %n and %%",
        "semi ; colon",
        ";",
        "#not-a-comment",
        "new\nline and\ttab",
        "bell\x07",
        "",
        "unicode é ✓",
    ],
)
def test_unit_style_survives_systemd_parsing(value):
    options = {"served_model_name": value, "chat_template": value, "tp_size": 2}
    line = sglang_args(options)
    assert systemd_split(line) == sglang_args(options, "argv")
    assert "\n" not in line


def test_json_values_survive_systemd_parsing():
    override = {"architectures": ["Qwen3ForCausalLM"], "note": 'say "hi" for $5 at 50%'}
    line = sglang_args({"json_model_override_args": override})
    words = systemd_split(line)
    assert words[0] == "--json-model-override-args"
    assert json.loads(words[1]) == override


@pytest.mark.parametrize(
    ("word", "quoted"),
    [
        ("0.85", "0.85"),
        ("/m/x", "/m/x"),
        ("a b", '"a b"'),
        ("50%", "50%%"),
        ("$X", "$$X"),
        ('"', '"\\""'),
        ("\\", '"\\\\"'),
        ("", '""'),
    ],
)
def test_systemd_quote(word, quoted):
    assert systemd_quote(word) == quoted


def test_environment_quoting_leaves_dollar_alone():
    assert systemd_quote("A=$B 50%", expand_dollar=False) == '"A=$B 50%%"'


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("mem-fraction-static", "Use the ServerArgs field name 'mem_fraction_static'"),
        ("--mem-fraction-static", "Use the ServerArgs field name 'mem_fraction_static'"),
        ("--disable_cuda_graph", "Use the ServerArgs field name 'disable_cuda_graph'"),
        ("Mem_Fraction_Static", "Use the ServerArgs field name 'mem_fraction_static'"),
        ("mem fraction", "not a ServerArgs field name"),
        ("", "not a ServerArgs field name"),
        (3, "ServerArgs field names (strings"),
    ],
)
def test_keys_must_be_serverargs_field_names(key, expected):
    with pytest.raises(AnsibleFilterError) as err:
        sglang_args({key: 1})
    assert expected in str(err.value)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ([], "empty list"),
        ([True], "true/false inside a list"),
        ([[1, 2]], "has a list item that is a list ([1, 2]); the items of a list must be strings or numbers"),
        ([1, None], "has a list item that is null; the items of a list must be strings or numbers."),
        (float("nan"), "finite number"),
        (float("inf"), "finite number"),
        ({1, 2}, "is a set ([1, 2]); expected a string"),
        (b"bytes", "is bytes (b'bytes'); expected a string"),
        ("nul\0", "NUL character"),
        ({"x": {1, 2}}, "cannot render"),
    ],
)
def test_values_without_a_command_line_form_are_refused(value, expected):
    with pytest.raises(AnsibleFilterError) as err:
        sglang_args({"some_option": value})
    assert expected in str(err.value)
    assert "some_option" in str(err.value) or "NUL" in str(err.value)


@pytest.mark.parametrize("options", [None, ["--tp-size", "2"], "--tp-size 2", 3])
def test_input_must_be_a_dict(options):
    with pytest.raises(AnsibleFilterError) as err:
        sglang_args(options)
    assert "must be a dict keyed by SGLang ServerArgs field names" in str(err.value)


def test_unknown_style_is_refused():
    with pytest.raises(AnsibleFilterError) as err:
        sglang_args({"tp_size": 2}, "shell")
    assert "'unit', 'list' or 'argv'" in str(err.value)
