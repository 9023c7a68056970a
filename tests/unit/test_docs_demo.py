# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The README and the user guide say what the demo prints and runs.

- The cause quoted for the demo's ct129-sim is what the probe says, measured here: the
  simulator runs with the demo host's own behaviour (inventories/demo/host_vars/ct129-sim.yml)
  and is probed on each API the deploy probes, with the deploy's probe options (role
  defaults, overridden by the demo's group_vars). The module's documented ``msg`` sample is
  that same text.
- The container names are the demo's (scripts/demo's default prefix + the inventory's hosts).
- Every ``ansible-playbook`` command of the README's "Using it on real hosts" runs from a
  clone as written (ansible.cfg finds the collection and defaults to the demo inventory):
  with the production inventory swapped for the demo's, each resolves its playbook and
  selects the demo host it names. The collection's roles resolve through ansible.cfg alone.
"""

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from ansible_collections.ddtree.sglang.plugins.module_utils import _probe
from ansible_collections.ddtree.sglang.plugins.modules import llm_probe

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "inventories" / "demo"
# The simulator launcher of the plugin tests (one definition, as tests/unit/sglang_sim does).
_spec = importlib.util.spec_from_file_location("ddtree_sglang_plugin_fixtures", REPO / "tests/unit/plugins/conftest.py")
_fixtures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_fixtures)
Launcher = _fixtures.Launcher


def _flat(text):
    """Markdown text with its line breaks and indentation folded to single spaces."""
    return " ".join(text.split())


def _doc(name):
    return _flat((REPO / name).read_text())


def _demo_hosts():
    return list(yaml.safe_load((DEMO / "hosts.yml").read_text())["sglang_servers"]["hosts"])


def _demo_prefix():
    """The container prefix: the inventory's default, which must be scripts/demo's."""
    group_vars = (DEMO / "group_vars" / "sglang_servers.yml").read_text()
    inventory = re.search(r"DDTREE_DEMO_PREFIX'\) \| default\('([^']+)'", group_vars).group(1)
    script = re.search(
        r'DDTREE_DEMO_PREFIX="\$\{DDTREE_DEMO_PREFIX:-([^}]+)\}"', (REPO / "scripts" / "demo").read_text()
    )
    assert script and script.group(1) == inventory, "scripts/demo and inventories/demo disagree on the prefix"
    return inventory


# --- the cause the demo prints for ct129-sim -------------------------------------------------


@pytest.fixture(scope="module")
def ct129_cause(tmp_path_factory):
    """{api: msg} of the deploy's probe of the demo's ct129-sim after the switch to DDTree."""
    host = yaml.safe_load((DEMO / "host_vars" / "ct129-sim.yml").read_text())
    group = yaml.safe_load((DEMO / "group_vars" / "sglang_servers.yml").read_text())
    role = yaml.safe_load((REPO / "roles" / "ddtree_deploy" / "defaults" / "main.yml").read_text())

    def setting(name):
        return group.get(f"ddtree_deploy_probe_{name}", role[f"ddtree_deploy_probe_{name}"])

    # The options roles/ddtree_deploy/vars/main.yml gives every probe (null: the probe's own).
    options = {"max_tokens": setting("max_tokens"), "timeout": setting("timeout")}
    for name in ("min_tokens_per_second", "max_ttft"):
        if setting(name) is not None:
            options[name] = setting(name)
    apis = group.get("ddtree_deploy_probe_apis", role["ddtree_deploy_probe_apis"])

    launcher = Launcher(tmp_path_factory.mktemp("demo-ct129"))
    try:
        sim = launcher.start(mode=None, algorithm="DDTREE", behaviour=host["sim_behaviour"])
        results = {}
        # As the role's probe_apis.yml does: one API after the other, and the first that fails
        # ends the probing (the others are "not tried"); the failure names the failed one.
        for api in apis:
            results[api] = _probe.Probe(sim.base_url, api=api, **options).run()
            if results[api]["failed"]:
                break
    finally:
        launcher.stop_all()
    assert results[apis[0]]["failed"], results
    return {api: res["msg"] for api, res in results.items() if res["failed"]}


def test_readme_quotes_the_demo_cause(ct129_cause):
    cause = "; ".join(f"{api}: {msg}" for api, msg in ct129_cause.items())
    assert cause in _doc("README.md"), f"README.md should quote ct129-sim's cause as the demo prints it: {cause}"


def test_user_guide_quotes_the_demo_host_line(ct129_cause):
    cause = "; ".join(f"{api}: {msg}" for api, msg in ct129_cause.items())
    line = f"ct129-sim: ROLLED BACK at probe: {cause}; NEXTN unit restored and verified"
    assert line in _doc("docs/user-guide.md"), f"docs/user-guide.md should show the demo's line: {line}"


def test_deploy_guide_quotes_the_demo_failure(ct129_cause):
    cause = "; ".join(f"{api}: {msg}" for api, msg in ct129_cause.items())
    assert f"ROLLED BACK on ct129-sim: profile 'ddtree' failed at step 'probe': {cause} (fix: " in _doc(
        "docs/deploy.md"
    )


def test_deploy_guide_quotes_the_demo_summary_row(ct129_cause):
    cause = "; ".join(f"{api}: {msg}" for api, msg in ct129_cause.items())
    rows = [ln for ln in (REPO / "docs" / "deploy.md").read_text().splitlines() if ln.startswith("| ct129-sim |")]
    assert rows and all(row.endswith(f"| probe: {cause} |") for row in rows), rows


def test_llm_probe_msg_sample_is_what_it_says(ct129_cause):
    returns = yaml.safe_load(llm_probe.RETURN)
    assert returns["msg"]["sample"] == ct129_cause["completions"]
    assert returns["reasons"]["sample"] == [ct129_cause["completions"]]
    assert f"C({ct129_cause['completions']})" in _flat(llm_probe.DOCUMENTATION)


# --- container names -------------------------------------------------------------------------


def test_docs_name_the_demo_containers():
    prefix = _demo_prefix()
    for doc in ("README.md", "docs/user-guide.md"):
        text = _doc(doc)
        for host in _demo_hosts():
            assert f"`{prefix}{host}`" in text, f"{doc} should name the container {prefix}{host}"
        for name in re.findall(r"podman exec (\S+)", text):
            assert name in {prefix + h for h in _demo_hosts()}, f"{doc}: podman exec {name} is no demo container"


# --- the README's commands, from a clone -----------------------------------------------------


def _readme_commands():
    section = (REPO / "README.md").read_text().split("## Using it on real hosts", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    lines = [ln.split("#", 1)[0].strip() for block in blocks for ln in block.splitlines()]
    return [ln for ln in lines if ln.startswith("ansible-playbook")]


def _clone_env():
    """The environment of a user in the clone: nothing from a test runner's Ansible settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_") and k != "DDTREE_DEMO_PREFIX"}
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


def test_readme_commands_run_against_the_demo_hosts():
    commands = _readme_commands()
    assert len(commands) >= 6, commands
    hosts = _demo_hosts()
    runs = []
    for command in commands:
        argv = shlex.split(command)
        if "-i" in argv:  # real hosts: the same command on the demo's inventory and host
            i = argv.index("-i")
            assert argv[i + 1] == "inventories/production", command
            del argv[i : i + 2]
        if "-l" in argv:
            i = argv.index("-l")
            argv[i + 1] = argv[i + 1] if argv[i + 1] in hosts else argv[i + 1] + "-sim"
            want = [argv[i + 1]]
        else:
            want = hosts
        if any(argv == run[2] for run in runs):
            continue  # the same command on the demo hosts as one before it
        proc = subprocess.Popen(
            [*argv, "--list-hosts"], cwd=REPO, env=_clone_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        runs.append((command, want, argv, proc))
    for command, want, _argv, proc in runs:
        out = proc.communicate(timeout=120)[0].decode()
        assert proc.returncode == 0, f"{command}:\n{out}"
        listed = re.search(r"hosts \(\d+\):\n((?:\s+\S+\n?)+)", out)
        assert listed and sorted(listed.group(1).split()) == sorted(want), f"{command}:\n{out}"


def test_ansible_cfg_finds_the_collection_roles():
    # probe.yml includes ddtree.sglang.ddtree_deploy at run time: from a clone without
    # ansible.cfg that was "the role 'ddtree.sglang.ddtree_deploy' was not found".
    out = subprocess.run(
        ["ansible-doc", "-t", "role", "-l", "ddtree.sglang"],
        cwd=REPO,
        env=_clone_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,  # the assert below shows stderr
    )
    assert out.returncode == 0, out.stderr
    roles = set(re.findall(r"^(\S+):$", out.stdout, re.M))
    assert {"ddtree.sglang.ddtree_deploy", "ddtree.sglang.sglang", "ddtree.sglang.sglang_install"} <= roles, out.stdout
