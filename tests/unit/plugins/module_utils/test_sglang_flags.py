# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The option table of an SGLang release, read from its files (plugins/module_utils/_sglang_flags.py).

Three sources: small synthetic package trees of both layouts (arg_groups namespaces, as in
0.5.23; one ServerArgs dataclass with parser.add_argument calls, as in older releases), and the
real 0.5.23 wheel (the `sglang_release_table` fixture of tests/unit/conftest.py).
"""

import json
import sys
import textwrap

import pytest
from ansible_collections.ddtree.sglang.plugins.module_utils import _sglang_flags as flags


def write_tree(root, files):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    return root / "sglang"


# The 0.5.23 layout in miniature: namespace classes in arg_groups/fields/, ServerArgs collecting
# the ones listed in _INPUT_NAMESPACES, explicit add_argument calls for the rest.
NEW_LAYOUT = {
    "sglang-9.9.9.dist-info/METADATA": "Metadata-Version: 2.1\nName: sglang\nVersion: 9.9.9\n\nbody\n",
    "sglang/__init__.py": "",
    "sglang/srt/__init__.py": "",
    "sglang/srt/arg_groups/__init__.py": "",
    "sglang/srt/arg_groups/field_order.py": """
        POSITIONAL_FIELD_ORDER = (
            "model_path",
            "tp_size",
        )
        """,
    "sglang/srt/arg_groups/choices.py": """
        ATTENTION_BACKEND_CHOICES = ["triton", "flashinfer"]
        PLUGGABLE = ["a"]
        PLUGGABLE.append("b")
        """,
    "sglang/srt/arg_groups/argparse_actions.py": """
        import argparse

        class DeprecatedStoreTrueAction(argparse.Action):
            def __init__(self, option_strings, dest, new_flag=None, nargs=0, **kwargs):
                super().__init__(option_strings, dest, nargs=nargs, **kwargs)

        class ListAction(argparse.Action):
            pass
        """,
    "sglang/srt/arg_groups/fields/__init__.py": "",
    "sglang/srt/arg_groups/fields/graph.py": """
        from __future__ import annotations
        import argparse
        from typing import List, Literal, Optional
        import msgspec
        from sglang.srt.arg_groups.arg_utils import A, Arg, Derived
        from sglang.srt.arg_groups.choices import ATTENTION_BACKEND_CHOICES, PLUGGABLE

        class Backend:
            FULL = "full"
            ALL = ["full", "disabled"]

        class Graph(msgspec.Struct):
            _NS_PATH = "exec.graph"
            cuda_graph_max_bs_decode: A[Optional[int], "Max batch size."] = None
            cuda_graph_max_bs_prefill: A[Optional[int], "Max prefill batch size."] = None
            cuda_graph_bs: A[Optional[List[int]], "Batch sizes."] = None
            backend: A[Optional[Literal["full", "disabled"]], Arg(help="b", choices=Backend.ALL)] = None
            mode: A[Literal["a", "b"], "A literal."] = "a"
            level: A[Literal[1, 2], "An int literal."] = 1
            attention_backend: A[Optional[str], Arg(help="x", choices=ATTENTION_BACKEND_CHOICES)] = None
            plugin: A[Optional[str], Arg(help="x", choices=PLUGGABLE)] = None
            disable_cuda_graph: A[bool, Arg(no_cli=True)] = False
            enable_x: A[bool, Arg(help="x", action=argparse.BooleanOptionalAction)] = False
            derived_thing: A[int, Derived(doc="set at run time")] = 0
            plain: int = 3
            _private_flag: A[bool, Arg(no_cli=True)] = False
            mem_fraction_static: A[float | None, f"The fraction {1}."] = None
            parsed: A[Optional[int], Arg(help="x", type_parser=human_readable_int)] = None
            checked_after_parse: A[
                Optional[Literal["full", "disabled"]],
                Arg(help="x", choices=Backend.ALL, type_parser=parse_backend),
            ] = None
            paths: A[
                Optional[List[str]],
                Arg(help="x", action=ListAction, action_kwargs={"type": str, "nargs": "*"}),
            ] = None
        """,
    "sglang/srt/arg_groups/fields/model.py": """
        from __future__ import annotations
        from typing import Optional
        import msgspec
        from sglang.srt.arg_groups.arg_utils import A, Arg

        class Model(msgspec.Struct):
            _NS_PATH = "model"
            tp_size: A[int, Arg(help="TP.", aliases=["--tensor-parallel-size"])] = 1
            model_path: A[str, Arg(help="Path.", aliases=["--model"])]

        class NotCollected(msgspec.Struct):
            _NS_PATH = "elsewhere"
            not_a_server_flag: A[int, "Declared but not in _INPUT_NAMESPACES."] = 0
        """,
    "sglang/srt/server_args.py": """
        from __future__ import annotations
        import argparse
        from sglang.srt.arg_groups.arg_utils import add_cli_args_from_dataclass
        from sglang.srt.arg_groups.argparse_actions import DeprecatedStoreTrueAction
        from sglang.srt.arg_groups.fields import collect_input_fields
        from sglang.srt.arg_groups.fields.graph import Graph
        from sglang.srt.arg_groups.fields.model import Model

        class ServerArgs:
            @staticmethod
            def add_cli_args(parser: argparse.ArgumentParser):
                add_cli_args_from_dataclass(parser, ServerArgs)
                choices = compute_choices()
                parser.add_argument("--sampling-backend", type=str, choices=choices)
                parser.add_argument("--config", type=str)
                parser.add_argument("--disable-cuda-graph", action=DeprecatedStoreTrueAction, new_flag="x")
                parser.add_argument("--monokernel-backend", action=DeprecatedStoreTrueAction, dest="amd",
                                    nargs=None, choices=["amd"])

        _INPUT_NAMESPACES = [
            Graph,
            Model,
        ]
        _annotations, _defaults, _namespaces = collect_input_fields(_INPUT_NAMESPACES)
        ServerArgs = make_struct(ServerArgs)

        def prepare_server_args(argv):
            parser = argparse.ArgumentParser(prog="sglang serve")
            ServerArgs.add_cli_args(parser)
            return parser.parse_args(argv)
        """,
}

# An older release: one ServerArgs dataclass, its options spelled out in add_cli_args.
OLD_LAYOUT = {
    "sglang/__init__.py": "",
    "sglang/version.py": '__version__ = "0.4.0"\n',
    "sglang/srt/__init__.py": "",
    "sglang/srt/server_args.py": """
        import argparse
        import dataclasses
        from typing import List, Optional

        LOAD_FORMATS = ["auto", "pt", "safetensors"]

        @dataclasses.dataclass
        class ServerArgs:
            model_path: str
            cuda_graph_max_bs: Optional[int] = None
            load_format: str = "auto"

            @staticmethod
            def add_cli_args(parser: argparse.ArgumentParser):
                parser.add_argument("--model-path", "--model", type=str, required=True)
                parser.add_argument("--cuda-graph-max-bs", type=int, default=ServerArgs.cuda_graph_max_bs)
                parser.add_argument("--cuda-graph-bs", type=int, nargs="+")
                parser.add_argument("--load-format", type=str, choices=LOAD_FORMATS + ["dummy"])
                parser.add_argument("--mem-fraction-static", type=float)
                parser.add_argument("--disable-cuda-graph", action="store_true")
                if True:
                    parser.add_argument("--enable-metrics", action="store_true")

        def prepare_server_args(argv: List[str]) -> ServerArgs:
            parser = argparse.ArgumentParser()
            ServerArgs.add_cli_args(parser)
            raw_args = parser.parse_args(argv)
            return ServerArgs.from_cli_args(raw_args)
        """,
}


@pytest.fixture
def new_table(tmp_path):
    return flags.read_cli_options(write_tree(tmp_path, NEW_LAYOUT))


@pytest.fixture
def old_table(tmp_path):
    return flags.read_cli_options(write_tree(tmp_path, OLD_LAYOUT))


def by_dest(table):
    return {option["dest"]: option for option in table["options"]}


def test_new_layout_fields_as_add_cli_args_from_dataclass_registers_them(new_table):
    options = by_dest(new_table)
    assert new_table["sglang_version"] == "9.9.9"
    assert new_table["prog"] == "sglang serve"
    assert new_table["allow_abbrev"] is True
    assert new_table["parser_source"] == "sglang/srt/server_args.py:28"
    # POSITIONAL_FIELD_ORDER first, then the namespaces' other fields in declaration order,
    # then the explicit add_argument calls.
    dests = [o["dest"] for o in new_table["options"]]
    assert dests[:3] == ["model_path", "tp_size", "cuda_graph_max_bs_decode"]
    assert dests[-4:] == ["sampling_backend", "config", "disable_cuda_graph", "amd"]
    assert options["model_path"]["flags"] == ["--model-path", "--model"]
    assert options["model_path"]["where"] == "sglang/srt/arg_groups/fields/model.py:9"
    assert options["tp_size"] == {
        "dest": "tp_size",
        "flags": ["--tp-size", "--tensor-parallel-size"],
        "action": "store",
        "nargs": None,
        "type": "int",
        "choices": None,
        "where": "sglang/srt/arg_groups/fields/model.py:8",
    }
    assert options["cuda_graph_bs"]["nargs"] == "+" and options["cuda_graph_bs"]["type"] == "int"
    # Arg(choices=Backend.ALL) wins over the Literal; a class attribute is static.
    assert options["backend"]["choices"] == ["full", "disabled"]
    assert options["mode"]["choices"] == ["a", "b"] and options["mode"]["type"] == "str"
    assert options["level"]["choices"] == [1, 2] and options["level"]["type"] == "int"
    assert options["attention_backend"]["choices"] == ["triton", "flashinfer"]
    # A list the release extends at import time is not static: any value passes.
    assert options["plugin"]["choices"] is None
    assert options["enable_x"]["flags"] == ["--enable-x", "--no-enable-x"]
    assert options["enable_x"]["nargs"] == 0
    assert options["mem_fraction_static"]["type"] == "float"
    # A custom type_parser is not run: the value is accepted as text, and choices (which argparse
    # checks on the parsed value) are not checked either.
    assert options["parsed"]["type"] is None
    assert options["checked_after_parse"]["type"] is None
    assert options["checked_after_parse"]["choices"] is None
    assert options["paths"]["action"] == "custom" and options["paths"]["nargs"] == "*"
    # no_cli, Derived, unannotated and other namespaces' fields are not options.
    for absent in ("derived_thing", "plain", "_private_flag", "not_a_server_flag"):
        assert absent not in options
    # Explicit registrations: dynamic choices unknown, a custom action's nargs from its __init__.
    assert options["sampling_backend"]["choices"] is None
    assert options["disable_cuda_graph"]["action"] == "custom"
    assert options["disable_cuda_graph"]["nargs"] == 0
    assert options["disable_cuda_graph"]["where"] == "sglang/srt/server_args.py:16"
    assert options["amd"]["flags"] == ["--monokernel-backend"]
    assert options["amd"]["nargs"] is None and options["amd"]["choices"] == ["amd"]
    json.dumps(new_table)


def test_old_layout_add_argument_calls(old_table):
    options = by_dest(old_table)
    assert old_table["sglang_version"] == "0.4.0"
    assert old_table["prog"] is None
    assert [o["dest"] for o in old_table["options"]] == [
        "model_path",
        "cuda_graph_max_bs",
        "cuda_graph_bs",
        "load_format",
        "mem_fraction_static",
        "disable_cuda_graph",
        "enable_metrics",
    ]
    assert options["load_format"]["choices"] == ["auto", "pt", "safetensors", "dummy"]
    assert options["cuda_graph_bs"]["nargs"] == "+"
    assert options["disable_cuda_graph"]["action"] == "store_true"
    assert options["disable_cuda_graph"]["type"] is None


def test_not_a_release(tmp_path):
    (tmp_path / "sglang").mkdir()
    with pytest.raises(flags.SGLangSourceError, match="has no srt/server_args.py"):
        flags.read_cli_options(tmp_path / "sglang")


@pytest.mark.parametrize(
    "argv, expected",
    [
        # 0.5.14 split --cuda-graph-max-bs; a prefix of two flags is ambiguous.
        (
            ["--cuda-graph-max-bs", "8"],
            {
                "flag": "--cuda-graph-max-bs",
                "kind": "ambiguous",
                "message": "sglang serve: error: ambiguous option: --cuda-graph-max-bs could match "
                "--cuda-graph-max-bs-decode, --cuda-graph-max-bs-prefill",
                "closest": "--cuda-graph-max-bs-decode",
            },
        ),
        (
            ["--cuda-graph-maxbs-decode", "8"],
            {
                "flag": "--cuda-graph-maxbs-decode",
                "kind": "unknown",
                "message": "sglang serve: error: unrecognized arguments: --cuda-graph-maxbs-decode 8",
                "closest": "--cuda-graph-max-bs-decode",
            },
        ),
        (
            ["--tp-size", "two"],
            {
                "flag": "--tp-size",
                "kind": "value",
                "message": "sglang serve: error: argument --tp-size/--tensor-parallel-size: invalid int value: 'two'",
                "closest": None,
            },
        ),
        (
            ["--mem-fraction-static=0,8"],
            {
                "flag": "--mem-fraction-static",
                "kind": "value",
                "message": "sglang serve: error: argument --mem-fraction-static: invalid float value: '0,8'",
                "closest": None,
            },
        ),
        (
            ["--attention-backend", "flashinfr"],
            {
                "flag": "--attention-backend",
                "kind": "value",
                "message": "sglang serve: error: argument --attention-backend: invalid choice: 'flashinfr' "
                "(choose from 'triton', 'flashinfer')",
                "closest": "flashinfer",
            },
        ),
        (
            ["--tp-size"],
            {
                "flag": "--tp-size",
                "kind": "value",
                "message": "sglang serve: error: argument --tp-size/--tensor-parallel-size: expected one argument",
                "closest": None,
            },
        ),
    ],
)
def test_check_argv_problem(new_table, argv, expected):
    if sys.version_info >= (3, 12, 8) and "invalid choice" in expected["message"]:
        # Python 3.12.8 stopped quoting choices with repr() in this message.
        expected = dict(expected, message=expected["message"].replace("'triton', 'flashinfer'", "triton, flashinfer"))
    assert flags.check_argv(new_table, ["--model-path", "/m"] + argv) == [expected]


def test_check_argv_lists_every_problem_and_accepts_the_rest(new_table):
    argv = [
        "--model", "/m",
        "--tp", "2",                     # unique prefix of --tp-size: argparse accepts it
        "--cuda-graph-bs", "1", "2", "4",
        "--enable-x", "--no-enable-x",
        "--level", "2",
        "--unknown-flag",
        "--cuda-graph-max-bs", "16",
        "--disable-cuda-graph",
        "--mem-fraction-static", "-0.5",  # a negative number is a value, not an option
    ]  # fmt: skip
    problems = flags.check_argv(new_table, argv)
    assert [(p["flag"], p["kind"]) for p in problems] == [
        ("--unknown-flag", "unknown"),
        ("--cuda-graph-max-bs", "ambiguous"),
    ]
    assert flags.check_argv(new_table, ["--model-path", "/m", "--tp-size", "2"]) == []


def test_build_parser_refuses_like_the_release(new_table, capsys):
    parser = flags.build_parser(new_table)
    assert parser.prog == "sglang serve"
    parsed = parser.parse_args(["--model", "/m", "--cuda-graph-max-bs-d", "8", "--cuda-graph-bs", "1", "2"])
    assert parsed.model_path == "/m" and parsed.cuda_graph_max_bs_decode == 8 and parsed.cuda_graph_bs == [1, 2]
    with pytest.raises(SystemExit) as exit_info:
        parser.parse_args(["--model", "/m", "--cuda-graph-max-bs", "8"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "sglang serve: error: ambiguous option: --cuda-graph-max-bs could match "
        "--cuda-graph-max-bs-decode, --cuda-graph-max-bs-prefill"
    )


# --------------------------------------------------------------------------- the real 0.5.23 wheel


def test_real_release_table(sglang_release_table):
    table = sglang_release_table
    options = by_dest(table)
    assert table["sglang_version"] == "0.5.23"
    # sglang/srt/server_args.py:679 parser = argparse.ArgumentParser(prog="sglang serve")
    assert (table["prog"], table["allow_abbrev"], table["parser_source"]) == (
        "sglang serve",
        True,
        "sglang/srt/server_args.py:679",
    )
    # arg_groups/fields/exec_.py:629-634: the split flags; the old one is gone.
    assert options["cuda_graph_max_bs_decode"]["where"] == "sglang/srt/arg_groups/fields/exec_.py:629"
    assert options["cuda_graph_max_bs_decode"]["type"] == "int"
    assert "cuda_graph_max_bs" not in options
    # parallel.py:45 tp_size with its --tensor-parallel-size alias.
    assert options["tp_size"]["flags"] == ["--tp-size", "--tensor-parallel-size"]
    # model.py:51 model_path, alias --model.
    assert options["model_path"]["flags"] == ["--model-path", "--model"]
    # spec.py:35-40 the draft model path and its alias.
    assert options["speculative_draft_model_path"]["flags"] == [
        "--speculative-draft-model-path",
        "--speculative-draft-model",
    ]
    # exec_.py:670 disable_cuda_graph is no_cli; server_args.py:410 registers the deprecated flag.
    assert options["disable_cuda_graph"]["where"] == "sglang/srt/server_args.py:410"
    assert options["disable_cuda_graph"]["nargs"] == 0
    # exec_.py:207 attention_backend choices from arg_groups/choices.py.
    assert "flashinfer" in options["attention_backend"]["choices"]
    assert "fa3" in options["attention_backend"]["choices"]
    # No DDTree in the release (sgl-project/sglang#29907 adds it).
    assert "speculative_ddtree_budget" not in options
    assert len({f for o in table["options"] for f in o["flags"]}) == sum(len(o["flags"]) for o in table["options"])


def test_real_release_refuses_the_removed_flag(sglang_release_table):
    problems = flags.check_argv(sglang_release_table, ["--model-path", "/m", "--cuda-graph-max-bs", "8"])
    assert [(p["flag"], p["kind"], p["closest"]) for p in problems] == [
        ("--cuda-graph-max-bs", "ambiguous", "--cuda-graph-max-bs-decode")
    ]
    assert problems[0]["message"] == (
        "sglang serve: error: ambiguous option: --cuda-graph-max-bs could match "
        "--cuda-graph-max-bs-decode, --cuda-graph-max-bs-prefill"
    )
