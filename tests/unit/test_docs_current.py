"""The documentation matches the code: docs/variables.md is what scripts/gen_docs.py makes of the
roles' argument specs today, and every local link in docs/ and README.md leads somewhere."""

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import yaml
from hang_guard import hang_guard

REPO = Path(__file__).resolve().parents[2]
_SPEC = importlib.util.spec_from_file_location("gen_docs", REPO / "scripts" / "gen_docs.py")
GEN_DOCS = sys.modules.setdefault("gen_docs", importlib.util.module_from_spec(_SPEC))
_SPEC.loader.exec_module(GEN_DOCS)


def test_variables_md_is_current():
    proc = subprocess.run(
        [sys.executable, REPO / "scripts" / "gen_docs.py", "--check"],
        capture_output=True,
        text=True,
        timeout=hang_guard(60),
        check=False,
    )
    assert proc.returncode == 0, proc.stderr


def test_variables_md_lists_every_option_of_every_role_with_its_default():
    page = (REPO / "docs" / "variables.md").read_text()
    specs = sorted(REPO.glob("roles/*/meta/argument_specs.yml"))
    assert specs, "no role has meta/argument_specs.yml"
    for path in specs:
        role = path.parents[1].name
        assert f"## Role `ddtree.sglang.{role}`" in page
        for entry in (yaml.safe_load(path.read_text())["argument_specs"] or {}).values():
            for name, spec in (entry.get("options") or {}).items():
                rows = [line for line in page.splitlines() if line.startswith(f"| `{name}` |")]
                assert rows, f"{role}: {name} missing from docs/variables.md"
                if "default" in spec and not spec.get("required"):
                    assert any(GEN_DOCS._code(spec["default"]) in row for row in rows), (role, name)


def _fake_collection(tmp_path, options):
    specs = tmp_path / "roles" / "demo" / "meta" / "argument_specs.yml"
    specs.parent.mkdir(parents=True)
    specs.write_text(yaml.safe_dump({"argument_specs": {"main": {"short_description": "Demo", "options": options}}}))
    (tmp_path / "docs").mkdir()
    return specs


def test_check_fails_when_an_option_is_added_without_regenerating(tmp_path):
    specs = _fake_collection(tmp_path, {"demo_port": {"type": "int", "default": 30000, "description": "Port."}})
    assert GEN_DOCS.main(["--repo", str(tmp_path)]) == 0
    assert GEN_DOCS.main(["--repo", str(tmp_path), "--check"]) == 0
    data = yaml.safe_load(specs.read_text())
    data["argument_specs"]["main"]["options"]["demo_host"] = {"type": "str", "description": "Host."}
    specs.write_text(yaml.safe_dump(data))
    assert GEN_DOCS.main(["--repo", str(tmp_path), "--check"]) == 1


def test_rendering_of_markup_choices_suboptions_and_secrets(tmp_path):
    _fake_collection(
        tmp_path,
        {
            "demo_mode": {
                "type": "str",
                "choices": ["a", "b"],
                "default": "a",
                "description": ["Use C(a) or I(b); see U(https://example.com).", "Second | line."],
            },
            "demo_key": {"type": "str", "no_log": True, "required": True, "description": "Key."},
            "demo_extra": {
                "type": "dict",
                "default": {},
                "description": "Extra.",
                "options": {"depth": {"type": "int", "default": 2, "description": "Depth."}},
            },
        },
    )
    page = GEN_DOCS.render(tmp_path)
    assert "| `demo_mode` | str | `a` | Use `a` or *b*; see <https://example.com>. Second \\| line." in page
    assert "Choices: `a`, `b`." in page
    assert "| `demo_key` | str | required | Key. Secret: never logged. |" in page
    assert "| `demo_extra.depth` | int | `2` | Depth. |" in page


def test_playbook_variables_come_from_play_keywords_and_header(tmp_path):
    _fake_collection(tmp_path, {})
    (tmp_path / "playbooks").mkdir()
    (tmp_path / "playbooks" / "go.yml").write_text(
        "---\n# Go. Batches: demo_serial (default [1]): one at a time.\n#\n#   ansible-playbook go.yml\n"
        "- name: Go\n  hosts: \"{{ demo_hosts | default('all') }}\"\n"
        "  serial: \"{{ [demo_serial | default([1, ')'])] | flatten | join(',') }}\"\n"
        "  tasks: []\n"
    )
    found = {var.name: var for var in GEN_DOCS.playbook_variables(tmp_path)}
    # The default is read with its brackets and quotes balanced, wherever the variable sits.
    assert found["demo_serial"].default == "[1, ')']" and "one at a time" in found["demo_serial"].description
    assert found["demo_hosts"].description == ""
    assert "Not described in the playbook's header." in GEN_DOCS.render(tmp_path)


def test_local_links_in_the_docs_resolve():
    broken = []
    for page in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text()):
            if re.match(r"[a-z]+:", target):
                continue
            if not (page.parent / target).exists():
                broken.append(f"{page.relative_to(REPO)} -> {target}")
    assert not broken, broken
