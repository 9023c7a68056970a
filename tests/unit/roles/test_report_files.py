# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""report.yml writes the host report, the run summary and a tune's records with ddtree.sglang.report_files (one
task, no module run; issue 37 item 8): the files are byte for byte what ansible.builtin.template wrote from the same
templates and variables, with the same modes and group. The holdout tune's host report (test_tune_files), every
file of report.yml's list."""

import grp
import os
import stat
import sys
from pathlib import Path

import pytest
from playbook_harness import run_playbook

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugins" / "module_utils"))
from test_deploy_tuning import HOLDOUT_GATE, tune_run  # noqa: E402

ROLE = Path(__file__).resolve().parents[3] / "roles" / "ddtree_deploy"

PLAY = """
- hosts: all
  gather_facts: false
  vars_files: [ROLE/defaults/main.yml, ROLE/vars/main.yml]
  vars:
    __ddtree_deploy_run_id: run
    __files: "{{ [{'src': 'host_report.json.j2', 'dest': inventory_hostname ~ '.json'},
                  {'src': 'host_report.md.j2', 'dest': inventory_hostname ~ '.md'}] + __ddtree_deploy_run_files }}"
  tasks:
    - name: As report.yml gathers the host's report
      ansible.builtin.set_fact:
        __ddtree_deploy_report_data: "{{ reports[inventory_hostname] }}"
    - name: As report.yml wrote them before, one template per file
      ansible.builtin.template:
        src: "{{ item.src }}"
        dest: "{{ out }}/template/{{ item.dest }}"
        mode: "{{ mode }}"
        group: "{{ group or omit }}"
      loop: "{{ __files }}"
      delegate_to: localhost
    - name: As report.yml writes them now
      ddtree.sglang.report_files:
        dir: "{{ out }}/report_files"
        files: "{{ __files }}"
        mode: "{{ mode }}"
        group: "{{ group }}"
"""


def write_both(tmp, env, mode, group):
    (tmp / "templates").symlink_to(ROLE / "templates", target_is_directory=True)
    out = tmp / "out"
    (out / "template").mkdir(parents=True)
    mix = {"1": 0.9, "16": 0.1}
    extra = {
        "reports": {"holdout": tune_run(HOLDOUT_GATE, mix=mix)[0]},
        "out": str(out),
        "ddtree_deploy_load_mix": mix,
        "mode": mode,
        "group": group,
    }
    rc, said = run_playbook(tmp, env, PLAY.replace("ROLE", str(ROLE)), extra, inventory="holdout,")
    assert rc == 0, said
    return out / "template", out / "report_files"


@pytest.mark.parametrize("mode", ["0600", "0640"])
def test_report_files_writes_what_the_template_module_wrote(tmp_path, ansible_cli_env, mode):
    group = grp.getgrgid(os.getgid()).gr_name if mode == "0640" else ""
    by_template, by_report_files = write_both(tmp_path, ansible_cli_env, mode, group)
    names = sorted(p.name for p in by_template.iterdir())
    assert names == [
        "holdout.json",
        "holdout.md",
        "summary.json",
        "summary.md",
        "tuning-ampere_48g.md",
        "tuning-ampere_48g.svg",
        "tuning-ampere_48g.yml",
    ]
    assert sorted(p.name for p in by_report_files.iterdir()) == names
    for name in names:
        a, b = by_template / name, by_report_files / name
        assert b.read_bytes() == a.read_bytes(), name
        assert stat.S_IMODE(b.stat().st_mode) == int(mode, 8), name
        assert b.stat().st_gid == a.stat().st_gid, name
    # The directory it made: the files' mode with search bits (as deploy_record makes the report directory).
    assert stat.S_IMODE(by_report_files.stat().st_mode) & 0o777 == (0o700 if mode == "0600" else 0o750)


def test_a_missing_template_fails_the_task_naming_it(tmp_path, ansible_cli_env):
    play = """
- hosts: localhost
  gather_facts: false
  tasks:
    - ddtree.sglang.report_files:
        dir: "{{ out }}"
        files: [{src: no_such_report.j2, dest: x.json}]
"""
    rc, said = run_playbook(tmp_path, ansible_cli_env, play, {"out": str(tmp_path / "out")})
    assert rc != 0 and "no_such_report.j2" in said, said
    assert not (tmp_path / "out" / "x.json").exists()
