# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ansible-playbook on this machine, for the tests of the roles' wiring and of plugins through Ansible: one way to
write a play, run it on the local connection with extra variables (as JSON) and read what it printed. The
environment is the test's (the ``ansible_cli_env`` fixture: the collection under test, the default callback)."""

import json
import subprocess
import sys
from pathlib import Path

from hang_guard import hang_guard

ANSIBLE_PLAYBOOK = str(Path(sys.executable).parent / "ansible-playbook")


def playbook_argv(playbook="play.yml", extra=None, inventory=None, check=False):
    """The command line: ansible-playbook on the local connection (``inventory``: e.g. ``"ct129,"``, else the
    implicit localhost), in check mode when asked, with ``extra`` and this Python as the hosts' interpreter."""
    argv = [ANSIBLE_PLAYBOOK, "-c", "local"]
    argv += ["-i", inventory] if inventory else []
    argv += ["--check"] if check else []
    variables = {"ansible_python_interpreter": sys.executable, **(extra or {})}
    return argv + [str(playbook), "--extra-vars", json.dumps(variables)]


def run_playbook(cwd, env, play=None, extra=None, *, playbook="play.yml", inventory=None, check=False, timeout=180):
    """Write ``play`` (YAML text) to ``cwd/playbook`` when given and run it from ``cwd``: (return code, what it
    printed, stdout then stderr). ``timeout``: the hang guard, in seconds (hang_guard stretches it)."""
    if play is not None:
        (Path(cwd) / playbook).write_text(play)
    proc = subprocess.run(
        playbook_argv(playbook, extra, inventory, check),
        env=env, cwd=cwd, capture_output=True, text=True, timeout=hang_guard(timeout), check=False,
    )  # fmt: skip
    return proc.returncode, proc.stdout + proc.stderr


ROLES = Path(__file__).resolve().parents[2] / "roles"


def role_vars_play(body, role="ddtree_deploy"):
    """A play on every host with a role's defaults and vars loaded (its wiring, without its tasks), then ``body``:
    the play's other keys (module_defaults, tasks), YAML indented as a play's."""
    return (
        "\n- hosts: all\n  gather_facts: false\n  vars_files:\n"
        f"    - {ROLES / role}/defaults/main.yml\n    - {ROLES / role}/vars/main.yml\n" + body
    )
