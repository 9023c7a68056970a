# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""roles/sglang/files/sglang-launch.py: the key reaches SGLang's argv in-process, from a systemd
credential or the EnvironmentFile's variable, and never the exec'd command line or a child's environment."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

LAUNCHER = Path(__file__).resolve().parents[3] / "roles" / "sglang" / "files" / "sglang-launch.py"
KEY = "sk-launch-42"

# Stands in for SGLang's launch_server: reports what it was given and what a child would inherit.
SERVER = """
import json, os, sys
cmdline = open("/proc/self/cmdline", "rb").read().split(b"\\0")
print(json.dumps({"argv": sys.argv, "cmdline": [c.decode() for c in cmdline if c],
                  "env_key": os.environ.get("DDTREE_SGLANG_API_KEY")}))
"""


@pytest.fixture
def server(tmp_path):
    script = tmp_path / "launch_server.py"
    script.write_text(SERVER)
    return script


def launch(script, env):
    base = {k: v for k, v in os.environ.items() if k not in ("DDTREE_SGLANG_API_KEY", "CREDENTIALS_DIRECTORY")}
    out = subprocess.run(
        [sys.executable, str(LAUNCHER), str(script), "--model-path", "/m"],
        env=dict(base, **env),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return json.loads(out)


def test_key_from_a_systemd_credential(server, tmp_path):
    creds = tmp_path / "creds"
    creds.mkdir()
    # the role writes the key with a newline at the end
    (creds / "sglang-api-key").write_text(KEY + "\n")
    got = launch(server, {"CREDENTIALS_DIRECTORY": str(creds)})
    assert got["argv"] == [str(server), "--model-path", "/m", "--api-key", KEY]
    assert KEY not in " ".join(got["cmdline"])
    assert got["env_key"] is None


def test_key_from_the_environment_file_is_dropped_from_the_environment(server):
    got = launch(server, {"DDTREE_SGLANG_API_KEY": KEY})
    assert got["argv"][-2:] == ["--api-key", KEY]
    assert KEY not in " ".join(got["cmdline"])
    assert got["env_key"] is None


def test_no_key_no_option(server, tmp_path):
    got = launch(server, {"CREDENTIALS_DIRECTORY": str(tmp_path)})
    assert "--api-key" not in got["argv"]
