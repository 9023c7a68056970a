# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a tune leaves beside the run summary (issue 35), written as report.yml writes it: the role's own defaults,
vars (__ddtree_deploy_run_files) and templates, run by ansible-playbook on the host reports of the holdout tune
(DDTree +32 % at one stream and -31 % at 16, DFLASH +16 % and -6 %) with a load mix of {1: 0.9, 16: 0.1}."""

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml
from hang_guard import hang_guard
from playbook_harness import run_playbook

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugins" / "module_utils"))
from test_deploy_tuning import HOLDOUT_GATE, tune_run  # noqa: E402

ROLE = Path(__file__).resolve().parents[3] / "roles" / "ddtree_deploy"
SVG = "{http://www.w3.org/2000/svg}"

PLAY = """
- hosts: all
  gather_facts: false
  vars_files: [ROLE/defaults/main.yml, ROLE/vars/main.yml]
  vars:
    __ddtree_deploy_run_id: run
  tasks:
    - name: As report.yml gathers the host's report
      ansible.builtin.set_fact:
        __ddtree_deploy_report_data: "{{ reports[inventory_hostname] }}"
    - name: As report.yml writes the run's files
      ansible.builtin.template:
        src: "{{ item.src }}"
        dest: "{{ out }}/{{ item.dest }}"
        mode: "0600"
      loop: "{{ __ddtree_deploy_run_files }}"
      loop_control: {label: "{{ item.dest }}"}
      delegate_to: localhost
      run_once: true
"""


@pytest.fixture(scope="module")
def written(tmp_path_factory, ansible_cli_env):
    tmp = tmp_path_factory.mktemp("tune-files")
    (tmp / "templates").symlink_to(ROLE / "templates", target_is_directory=True)
    out = tmp / "out"
    out.mkdir()
    mix = {"1": 0.9, "16": 0.1}
    reports = {"holdout": tune_run(HOLDOUT_GATE, mix=mix)[0]}
    extra = {"reports": reports, "out": str(out), "ddtree_deploy_load_mix": mix}
    rc, said = run_playbook(tmp, ansible_cli_env, PLAY.replace("ROLE", str(ROLE)), extra, inventory="holdout,")
    assert rc == 0, said
    return out


def test_a_tune_writes_the_record_the_chart_and_the_table_beside_the_summary(written):
    assert sorted(p.name for p in written.iterdir()) == [
        "summary.json",
        "summary.md",
        "tuning-ampere_48g.md",
        "tuning-ampere_48g.svg",
        "tuning-ampere_48g.yml",
    ]
    record = yaml.safe_load((written / "tuning-ampere_48g.yml").read_text())
    tuning = record["ddtree_deploy_tuning"]
    assert tuning["winner"] == "ddtree" and tuning["mix_source"] == "ddtree_deploy_load_mix"
    assert tuning["load_mix"] == {1: 0.9, 16: 0.1}
    assert [(e["concurrency"], e["winner"], e["gains"]) for e in tuning["crossover"]] == [
        (1, "ddtree", {"ddtree": 0.32, "dflash": 0.16}),
        (16, "nextn", {"ddtree": -0.31, "dflash": -0.06}),
    ]
    assert record["ddtree_deploy_candidates"][0]["name"] == "ddtree"


def test_the_written_record_drops_into_group_vars_as_it_is(written, tmp_path, ansible_cli_env):
    """The file the tune wrote, copied as it is to group_vars/<class>.yml: the inventory gives the class's host the
    crossover, the winner and the candidate list."""
    inventory = tmp_path / "inventory"
    (inventory / "group_vars").mkdir(parents=True)
    (inventory / "group_vars" / "ampere_48g.yml").write_text((written / "tuning-ampere_48g.yml").read_text())
    (inventory / "hosts.yml").write_text("ampere_48g:\n  hosts:\n    holdout:\n")
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "ansible-inventory"), "-i", str(inventory / "hosts.yml")]
        + ["--host", "holdout"],
        env=ansible_cli_env, capture_output=True, text=True, timeout=hang_guard(60), check=True,
    )  # fmt: skip
    host = json.loads(proc.stdout)
    assert host["ddtree_deploy_tuning"]["winner"] == "ddtree"
    assert [e["winner"] for e in host["ddtree_deploy_tuning"]["crossover"]] == ["ddtree", "nextn"]
    kept = {"name": "ddtree", "profile": "ddtree", "variants": [], "extra_args": {}}
    assert host["ddtree_deploy_candidates"] == [kept]


def test_the_summary_shows_the_crossover_table_and_links_the_chart(written):
    md = (written / "summary.md").read_text()
    assert "## Crossover (tune)" in md
    rows = [line for line in md.splitlines() if line.startswith("| 1 |") or line.startswith("| 16 |")]
    assert "| 1 | +32.0 % better | +16.0 % better | `ddtree` |" in rows, rows
    assert "| 16 | -31.0 % worse | -6.0 % worse | `nextn` |" in rows, rows
    assert "| load mix (1: 90 %, 16: 10 %) | +25.7 % | +13.8 % | **`ddtree`** (kept) |" in md
    assert "![Gain against concurrency per candidate, ampere_48g](tuning-ampere_48g.svg)" in md
    assert (written / "tuning-ampere_48g.md").read_text().strip() in md


def test_the_chart_beside_it_parses_with_both_curves_the_zero_line_and_the_mix(written):
    root = ET.fromstring((written / "tuning-ampere_48g.svg").read_text())
    assert root.tag == SVG + "svg"
    curves = {p.get("data-name"): p.get("points").split() for p in root.iter(SVG + "polyline")}
    assert set(curves) == {"ddtree", "dflash"} and all(len(points) == 2 for points in curves.values())
    zero = [line for line in root.iter(SVG + "line") if line.get("class") == "zero"]
    assert len(zero) == 1
    y0 = float(zero[0].get("y1"))
    for name, (at1, at16) in curves.items():
        assert float(at1.split(",")[1]) < y0 < float(at16.split(",")[1]), name  # above zero at 1, below at 16
    marks = {int(m.get("data-concurrency")): float(m.get("data-weight")) for m in root.iter(SVG + "line")
             if m.get("class") == "mix"}  # fmt: skip
    assert marks == {1: 0.9, 16: 0.1}


MIX_PLAY = """
- hosts: all
  gather_facts: false
  vars_files: [ROLE/defaults/main.yml, ROLE/vars/main.yml]
  tasks:
    - name: As baseline.yml registers sglang_traffic's result (a skipped task's result without Prometheus)
      ansible.builtin.set_fact:
        __ddtree_deploy_traffic: "{{ traffic }}"
    - name: The mix a tune judges by, and its source
      ansible.builtin.copy:
        content: "{{ {'mix': __ddtree_deploy_load_mix, 'source': __ddtree_deploy_mix_source} | to_json }}"
        dest: "{{ out }}"
        mode: "0600"
      delegate_to: localhost
"""

TRAFFIC = {
    "changed": False,
    "levels": [1, 9, 22],
    "mix": {"1": 0.1443, "9": 0.5052, "22": 0.3505},
    "mix_msg": "your traffic's busy minutes: 14 % nearest 1, 51 % nearest 9, 35 % nearest 22",
}


@pytest.mark.parametrize(
    ("given", "traffic", "mix", "source"),
    [
        (None, TRAFFIC, TRAFFIC["mix"], "Prometheus (" + TRAFFIC["mix_msg"] + ")"),
        ({"1": 0.9, "16": 0.1}, TRAFFIC, {"1": 0.9, "16": 0.1}, "ddtree_deploy_load_mix"),  # the operator's wins
        (None, {"changed": False, "skipped": True}, None, None),  # no Prometheus: the production concurrency
    ],
)
def test_the_mix_is_the_operators_else_the_prometheus_history(tmp_path, ansible_cli_env, given, traffic, mix, source):
    out = tmp_path / "mix.json"
    extra = {"traffic": traffic, "out": str(out), "ddtree_deploy_load_mix": given}
    rc, said = run_playbook(tmp_path, ansible_cli_env, MIX_PLAY.replace("ROLE", str(ROLE)), extra, inventory="holdout,")
    assert rc == 0, said
    # ansible-core before 2.19 renders a template's none as '' (the matrix's 2.16-2.18); _deploy_tuning reads
    # '' as it reads null (weights(), _record's mix_source), so both mean "no mix".
    assert {k: v or None for k, v in json.loads(out.read_text()).items()} == {"mix": mix, "source": source}
