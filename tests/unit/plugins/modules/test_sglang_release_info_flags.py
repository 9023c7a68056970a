# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""sglang_release_info argv=: a unit's command line checked against the flags of a real release.

The release is the pinned SGLang wheel's own files (scripts/test setup downloads it), laid out as
the sglang_install role installs a release venv. The module runs as Ansible runs it: its file
executed by python with the arguments in a JSON file, its result read from stdout.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sglang_releases import pinned_sglang_version, unpack_sglang

REPO = Path(__file__).resolve().parents[4]
MODULE = REPO / "plugins" / "modules" / "sglang_release_info.py"
COLLECTIONS = REPO / ".cache" / "collections"


def run_module(tmp_path, **args):
    args_file = tmp_path / "args.json"
    args_file.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": args}))
    env = dict(os.environ, PYTHONPATH=str(COLLECTIONS))
    proc = subprocess.run(
        [sys.executable, str(MODULE), str(args_file)], capture_output=True, text=True, env=env, check=False
    )
    result = json.loads(proc.stdout)
    return proc.returncode == 0 and not result.get("failed"), result


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    """A release venv holding the pinned wheel's sglang package (sources and dist-info)."""
    root = tmp_path_factory.mktemp("release")
    site = root / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    unpack_sglang(pinned_sglang_version(), site)
    return root


ARGV = [
    "--model-path", "/srv/models/Qwen3.6-27B",
    "--host", "127.0.0.1",
    "--port", "30000",
    "--tp-size", "2",
    "--attention-backend", "flashinfer",
    "--cuda-graph-max-bs-decode", "8",
    "--mem-fraction-static", "0.85",
    "--speculative-algorithm", "NEXTN",
]  # fmt: skip


@pytest.mark.parametrize("check_mode", [False, True])
def test_accepted_command_line(tmp_path, release, check_mode):
    args = {"path": str(release), "argv": ARGV}
    if check_mode:
        args["_ansible_check_mode"] = True
    ok, result = run_module(tmp_path, **args)
    assert ok, result
    assert result["changed"] is False
    assert result["version"] == pinned_sglang_version()
    assert result["flag_problems"] == []
    assert result["flags"] == {
        "options": result["flags"]["options"],
        "parser": "sglang/srt/server_args.py:679",
        "prog": "sglang serve",
        "checked": len(ARGV),
    }
    assert result["flags"]["options"] > 500


def test_no_argv_checks_nothing(tmp_path, release):
    ok, result = run_module(tmp_path, path=str(release))
    assert ok and result["flags"] is None and result["flag_problems"] == []


def test_removed_flag_fails_naming_flag_release_and_closest(tmp_path, release):
    ok, result = run_module(tmp_path, path=str(release), argv=[*ARGV, "--cuda-graph-max-bs", "8"])
    assert not ok
    package = release / "lib" / "python3.11" / "site-packages" / "sglang"
    assert result["msg"] == (
        f"SGLang 0.5.23 at {package} refuses --cuda-graph-max-bs: the server would exit at start (status 2) "
        "with --cuda-graph-max-bs: sglang serve: error: ambiguous option: --cuda-graph-max-bs could match "
        "--cuda-graph-max-bs-decode, --cuda-graph-max-bs-prefill (closest real flag: --cuda-graph-max-bs-decode). "
        "Options are ServerArgs field names of this release; its parser is sglang/srt/server_args.py:679."
    )
    assert result["flag_problems"] == [
        {
            "flag": "--cuda-graph-max-bs",
            "kind": "ambiguous",
            "message": "sglang serve: error: ambiguous option: --cuda-graph-max-bs could match "
            "--cuda-graph-max-bs-decode, --cuda-graph-max-bs-prefill",
            "closest": "--cuda-graph-max-bs-decode",
        }
    ]


def test_every_refused_argument_is_listed(tmp_path, release):
    argv = [*ARGV, "--speculative-ddtree-budget", "7", "--tp-size", "two", "--attention-backend", "flashinfr"]
    ok, result = run_module(tmp_path, path=str(release), argv=argv)
    assert not ok
    assert [(p["flag"], p["kind"]) for p in result["flag_problems"]] == [
        ("--speculative-ddtree-budget", "unknown"),
        ("--tp-size", "value"),
        ("--attention-backend", "value"),
    ]
    assert "--speculative-ddtree-budget, --tp-size, --attention-backend" in result["msg"]
    assert "invalid int value: 'two'" in result["msg"]
    assert "invalid choice: 'flashinfr'" in result["msg"]
    assert "(closest choice: flashinfer)" in result["msg"]


def test_a_directory_without_sglang_fails_clearly(tmp_path):
    ok, result = run_module(tmp_path, path=str(tmp_path), argv=ARGV)
    assert not ok
    assert result["msg"].startswith(f"Cannot read the SGLang release at {tmp_path}")


def test_a_refused_flag_of_an_algorithm_the_release_does_not_register_says_that_is_why(tmp_path, release):
    # The pinned release has no DDTREE: its result says ddtree.registered false, and the message
    # says what that means for a unit that asks for DDTREE.
    argv = [*ARGV[:-1], "DDTREE", "--speculative-ddtree-budget", "7"]
    ok, result = run_module(tmp_path, path=str(release), argv=argv)
    assert not ok
    assert result["ddtree"]["registered"] is False
    assert result["msg"].endswith(
        "its parser is sglang/srt/server_args.py:679. This release does not register DDTREE "
        "(ddtree.registered: false), which the unit's --speculative-algorithm DDTREE needs: that is why it has "
        "no --speculative-ddtree-budget; install SGLang PR #29907's build (docs/install.md)."
    ), result["msg"]


def test_a_registered_algorithm_adds_nothing(tmp_path, release):
    ok, result = run_module(tmp_path, path=str(release), argv=[*ARGV, "--cuda-graph-max-bs", "8"])
    assert not ok
    assert "does not register" not in result["msg"]
