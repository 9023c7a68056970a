"""Check that an installed ddtree.sglang collection shows what its source holds.

Usage: ANSIBLE_COLLECTIONS_PATH=<installed> ANSIBLE_COLLECTIONS_SCAN_SYS_PATH=false \\
       python check_installed.py <collection source dir> <installed collections path>

Run by scripts/test after `ansible-galaxy collection install --offline` of the built
tarball: every module and every role with an argument spec in the source must be listed
by ansible-doc, and the galaxy.yml dependencies must be installed next to it.
"""

import json
import subprocess
import sys
from pathlib import Path

import yaml

COLLECTION = "ddtree.sglang"


def ansible_doc_list(plugin_type: str) -> set[str]:
    out = subprocess.run(
        ["ansible-doc", "-t", plugin_type, "-l", COLLECTION, "--json"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return set(json.loads(out or "{}"))


def main(source: Path, installed: Path) -> int:
    problems = []

    modules = {f"{COLLECTION}.{p.stem}" for p in (source / "plugins" / "modules").glob("*.py") if p.stem != "__init__"}
    listed = ansible_doc_list("module")
    if modules != listed:
        problems.append(f"ansible-doc lists modules {sorted(listed)}, the source has {sorted(modules)}")
    print(f"modules: {', '.join(sorted(listed)) or '(none)'}")

    roles = {f"{COLLECTION}.{p.parent.parent.name}" for p in (source / "roles").glob("*/meta/argument_specs.yml")}
    listed = ansible_doc_list("role")
    if roles != listed:
        problems.append(f"ansible-doc lists roles {sorted(listed)}, the source has {sorted(roles)}")
    print(f"roles: {', '.join(sorted(listed)) or '(none)'}")

    print(f"filters: {', '.join(sorted(ansible_doc_list('filter'))) or '(none)'}")

    galaxy = yaml.safe_load((source / "galaxy.yml").read_text())
    for dep in [COLLECTION, *(galaxy.get("dependencies") or {})]:
        namespace, name = dep.split(".")
        if not (installed / "ansible_collections" / namespace / name / "MANIFEST.json").is_file():
            problems.append(f"{dep} is not installed in {installed}")

    for problem in problems:
        print(f"ERROR: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
