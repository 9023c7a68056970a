"""The execution environment definition builds a context that carries this collection and its needs.

``ansible-builder build`` needs a container registry, which these machines cannot reach, so
the test stops at ``ansible-builder create`` and then runs the introspection script that the
builder stage of the Containerfile runs, against the tarball installed offline: that is the
step that turns the collection's meta/execution-environment.yml into pip and dnf installs.
"""

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hang_guard import hang_guard

REPO = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent
GALAXY = yaml.safe_load((REPO / "galaxy.yml").read_text())
TARBALL = f"{GALAXY['namespace']}-{GALAXY['name']}-{GALAXY['version']}.tar.gz"
EE = yaml.safe_load((REPO / "execution-environment.yml").read_text())


def _run(*cmd, cwd=None):
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=hang_guard(300), check=False)
    assert proc.returncode == 0, f"{' '.join(map(str, cmd))} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Build the collection tarball, then an EE build context from it; return both locations."""
    work = tmp_path_factory.mktemp("ee")
    _run(BIN / "ansible-galaxy", "collection", "build", "--output-path", str(work), str(REPO))
    assert (work / TARBALL).is_file()
    shutil.copy(REPO / "execution-environment.yml", work / "execution-environment.yml")
    _run(BIN / "ansible-builder", "create", "-f", "execution-environment.yml", "-c", "context", cwd=work)
    return work, work / "context"


def test_ee_is_builder_v3_and_pins_the_tested_ansible_core():
    assert EE["version"] == 3
    dev_pins = dict(
        line.split("==", 1) for line in (REPO / "requirements-dev.txt").read_text().splitlines() if "==" in line
    )
    assert EE["dependencies"]["ansible_core"]["package_pip"] == f"ansible-core=={dev_pins['ansible-core']}", (
        "the EE must run the ansible-core the collection is tested with (requirements-dev.txt)"
    )
    assert EE["dependencies"]["ansible_runner"]["package_pip"].startswith("ansible-runner==")


def test_ee_installs_the_tarball_of_the_version_in_galaxy_yml():
    sources = [entry["src"] for entry in EE["additional_build_files"]]
    names = [entry["name"] for entry in EE["dependencies"]["galaxy"]["collections"]]
    assert TARBALL in sources, f"execution-environment.yml must copy {TARBALL} (galaxy.yml version); bump both"
    assert f"/build/collections/{TARBALL}" in names


def test_meta_execution_environment_points_at_existing_files():
    meta = yaml.safe_load((REPO / "meta" / "execution-environment.yml").read_text())
    assert meta["version"] == 1
    assert (REPO / meta["dependencies"]["python"]).is_file()
    assert (REPO / meta["dependencies"]["system"]).is_file()


def test_create_puts_the_collection_and_its_install_in_the_context(built):
    work, context = built
    copied = context / "_build" / "collections" / TARBALL
    assert copied.read_bytes() == (work / TARBALL).read_bytes()
    requirements = yaml.safe_load((context / "_build" / "requirements.yml").read_text())
    assert {"name": f"/build/collections/{TARBALL}", "type": "file"} in requirements["collections"]
    containerfile = (context / "Containerfile").read_text()
    assert "COPY _build /build" in containerfile
    assert "ansible-galaxy collection install" in containerfile
    assert "introspect.py introspect" in containerfile
    assert EE["dependencies"]["ansible_core"]["package_pip"] in containerfile


def test_builder_introspection_finds_the_collection_requirements(built):
    """Run the context's own introspect.py on the installed tarball, as the builder stage does."""
    work, context = built
    _run(
        BIN / "ansible-galaxy", "collection", "install", "--offline", "--no-deps",
        "-p", str(work / "installed"), str(work / TARBALL),
        # Not from the clone: its ansible.cfg makes the work tree an installed ddtree.sglang,
        # and ansible-galaxy would say "Nothing to do".
        cwd=work,
    )  # fmt: skip
    out = _run(sys.executable, context / "_build" / "scripts" / "introspect.py", "introspect", work / "installed")
    found = yaml.safe_load(out.stdout)
    python = [line.split("#")[0].strip() for line in found["python"]]
    system = [line.split("#")[0].strip() for line in found["system"]]
    assert any(req.startswith("requests") for req in python), found
    assert "openssh-clients [platform:rpm]" in system, found


def _third_party_imports():
    """Top-level names imported by the collection's Python plugins that are not stdlib or Ansible."""
    names = set()
    for path in (REPO / "plugins").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module.split(".")[0])
    return sorted(names - set(sys.stdlib_module_names) - {"ansible", "ansible_collections", "__future__"})


def test_requirements_txt_lists_every_third_party_import_of_the_plugins():
    listed = {
        line.split("#")[0].strip().split(">")[0].split("=")[0].split("<")[0].strip().lower()
        for line in (REPO / "requirements.txt").read_text().splitlines()
        if line.split("#")[0].strip()
    }
    missing = [name for name in _third_party_imports() if name.lower() not in listed]
    assert not missing, f"plugins import {missing} but requirements.txt (the EE's pip list) does not name them"
