# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The clone's stdout callback (ansible.cfg): each failure said once, no argument-spec dump."""

import subprocess
import sys
from pathlib import Path

from hang_guard import hang_guard

REPO = Path(__file__).resolve().parents[3]

PLAY = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Validate a role's arguments
      ansible.builtin.validate_argument_spec:
        argument_spec:
          ddtree_deploy_profile: {type: str, choices: [nextn, dflash, ddtree], description: "%s"}
        provided_arguments: {ddtree_deploy_profile: bogus}
      ignore_errors: true
    - name: Fail the host with the cause
      ansible.builtin.fail:
        msg: "ROLLED BACK on localhost: profile 'ddtree' failed at step 'probe': no first token within 1 s"
""" % ("a long description " * 200)


def run(tmp_path, env, callback, *args):
    (tmp_path / "play.yml").write_text(PLAY)
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "ansible-playbook"), "-c", "local", "play.yml", *args],
        env=dict(
            env,
            ANSIBLE_STDOUT_CALLBACK=callback,
            ANSIBLE_CALLBACK_PLUGINS=str(REPO / "scripts" / "lib" / "callback_plugins"),
            ANSIBLE_PYTHON_INTERPRETER=sys.executable,
        ),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=hang_guard(120),
        check=False,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    return proc.stdout + proc.stderr


def test_the_clone_uses_it():
    cfg = (REPO / "ansible.cfg").read_text()
    assert "\nstdout_callback = ddtree_default\n" in cfg
    assert "\ncallback_plugins = scripts/lib/callback_plugins\n" in cfg


def test_a_failure_is_said_once_and_a_bad_value_without_the_spec(tmp_path, ansible_cli_env):
    out = run(tmp_path, ansible_cli_env, "ddtree_default")
    assert out.count("ROLLED BACK on localhost: profile 'ddtree' failed at step 'probe'") == 1, out
    assert "fatal: [localhost]: FAILED!" in out
    # The bad value is named once; the spec (its long description) is not printed.
    assert out.count("value of ddtree_deploy_profile must be one of: nextn, dflash, ddtree, got: bogus") >= 1, out
    assert "argument_spec_data" not in out and "a long description" not in out, out
    assert max(len(line) for line in out.splitlines()) < 1000


def test_at_vvv_the_result_is_printed_whole(tmp_path, ansible_cli_env):
    out = run(tmp_path, ansible_cli_env, "ddtree_default", "-vvv")
    assert "argument_spec_data" in out


def test_the_default_callback_dumps_the_spec(tmp_path, ansible_cli_env):
    # What ddtree_default leaves out, so the test above proves something.
    out = run(tmp_path, ansible_cli_env, "default")
    assert "argument_spec_data" in out and "a long description" in out
