# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Adaptive candidates against the release's own rules, as a deploy checks them (issue 35). First ddtree_deploy's
preflight, before the host is touched: an adaptive DDTREE candidate is refused by the pinned release's rules
(_sglang_adaptive_pinned, the wheel's own), and nothing on the host changes. Then the options
step (role_step.yml with the sglang role's preflight_release, the check every candidate passes before the
baseline and any switch) run by ansible-playbook on localhost, against the pinned release with #29907's field (the
DDTree build), laid out as an installed release. An adaptive NEXTN candidate renders flags the release accepts; an
adaptive DDTREE candidate is refused with the release's own reason (read from adaptive_spec_params.py), and the
record says the unit was not touched."""

import json
import sys

import pytest
from ansible_collections.ddtree.sglang.plugins.module_utils import _deploy_record as dr
from playbook_harness import run_playbook
from sglang_releases import pinned_sglang_version, unpack_sglang

VERSION = pinned_sglang_version()

# The course of the record as the play left it, to course.json (not counted as a change of the host's).
RECORD = """\
        - name: What the record says
          ansible.builtin.copy:
            content: "{{ ddtree_deploy_record | ddtree.sglang.deploy_record_summary | to_json }}"
            dest: "{{ out }}/course.json"
            mode: "0600"
          changed_when: false
"""

# The first tasks of every play here: the host's systemd, the record begun and the tables loaded, as preflight.yml.
BEGIN = """\
    - name: The host's systemd, as the setup module reads it on a Debian 12 host
      ansible.builtin.set_fact:
        systemd: {version: 252, features: ""}
        cacheable: true
    - name: The run's record, as preflight.yml begins it
      ddtree.sglang.deploy_record: {event: preflight, start: run}
    - name: The tables, as preflight.yml loads them
      ansible.builtin.include_role: {name: ddtree.sglang.sglang, tasks_from: tables}
"""

PLAY = """
- hosts: localhost
  gather_facts: false
  vars:
    sglang_model_path: /srv/models/Qwen3.6-27B
    sglang_draft_model_path: /srv/models/Qwen3.6-27B-DFlash
    __sglang_gpu_class: ampere_48g
    __sglang_gpu_count: 2
    __ddtree_deploy_extra_args: {}
  tasks:
    # This test machine runs no systemd: the host's version as a Debian 12 host reports it (ansible_facts.systemd).
BEGIN    - name: The options step of switch.yml, for the candidate
      block:
        - name: As switch.yml checks every candidate's options against the release it will run
          ansible.builtin.include_role:
            name: ddtree.sglang.ddtree_deploy
            tasks_from: role_step
          vars:
            __ddtree_deploy_sglang_step: preflight_release
            __ddtree_deploy_candidate: "{{ candidate }}"
      always:
RECORD
        - name: The options checked
          ansible.builtin.copy:
            content: "{{ {'argv': sglang_server_options | default({}) | ddtree.sglang.sglang_args('argv'),
                          'release': sglang_release | default({})} | to_json }}"
            dest: "{{ out }}/options.json"
            mode: "0600"
""".replace("BEGIN", BEGIN).replace("RECORD\n", RECORD)


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    root = tmp_path_factory.mktemp("release-ddtree")
    site = root / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    return unpack_sglang(VERSION, site, ddtree=True)


def check(tmp_path, env, release, candidate):
    extra = {
        "candidate": dict({"index": 1, "of": 1, "variants": [], "extra_args": {}}, **candidate),
        "out": str(tmp_path),
        "sglang_release_path": str(release),
        "sglang_launch_command": f"{sys.executable} -m sglang.launch_server",
    }
    rc, out = run_playbook(tmp_path, env, PLAY, extra)
    course = json.loads((tmp_path / "course.json").read_text())
    return rc, out, course, json.loads((tmp_path / "options.json").read_text())


def test_an_adaptive_nextn_candidate_renders_flags_the_pinned_release_accepts(tmp_path, ansible_cli_env, release):
    candidate = {"name": "nextn+adaptive", "profile": "nextn", "variants": ["adaptive"]}
    rc, out, course, options = check(tmp_path, ansible_cli_env, release, candidate)
    assert rc == 0, out
    argv = options["argv"]
    assert "--speculative-adaptive" in argv and argv[argv.index("--speculative-algorithm") + 1] == "NEXTN"
    assert options["release"]["version"] == VERSION
    assert course["stage"] == "options" and course["failure"] is None


def test_an_adaptive_ddtree_candidate_is_refused_with_the_releases_reason_before_the_switch(
    tmp_path, ansible_cli_env, release
):
    candidate = {"name": "ddtree+adaptive", "profile": "ddtree", "variants": ["adaptive"]}
    rc, out, course, _options = check(tmp_path, ansible_cli_env, release, candidate)
    assert rc == 2, out
    said = " ".join(out.replace('\\"', '"').split())
    assert "Check the options against the release's own flags" in said, said
    reason = "speculative_algorithm=DDTREE (only EAGLE/EAGLE3 are supported)"
    assert (
        f'would not run this unit adaptive: adaptive_unsupported_reason() says "{reason}" '
        "(sglang/srt/speculative/adaptive_spec_params.py:61)"
    ) in said, said
    assert "Drop the adaptive variant (--speculative-adaptive) from this unit" in said
    # Before the switch: the record's stage is the options check, which leaves the unit as it was (a deploy's
    # rescue then ends the host "options_refused", "... The service was not touched.").
    assert course["stage"] == "options" and course["touched"] == "host", course
    assert dr.stage("options")["outcome"] == "options_refused"
    assert dr.stage("options")["fix"].endswith("The service was not touched.")


PREFLIGHT = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: The deploy's preflight
      block:
        - ansible.builtin.include_role:
            name: ddtree.sglang.ddtree_deploy
            tasks_from: preflight
      always:
RECORD
""".replace("RECORD\n", RECORD)


def tree(root):
    """Every path under root with its bytes and mode: what "nothing changed" is checked against."""
    return {
        str(p.relative_to(root)): (p.stat().st_mode, p.read_bytes() if p.is_file() else None)
        for p in sorted(root.rglob("*"))
    }


def test_an_adaptive_ddtree_candidate_is_refused_in_preflight_and_nothing_is_touched(tmp_path, ansible_cli_env):
    host = tmp_path / "host"
    store = host / "var" / "lib" / "ddtree-sglang"
    (store / "sglang").mkdir(parents=True)
    (store / "sglang" / "manifest.json").write_text('{"unit": "sglang.service"}\n')
    (host / "etc").mkdir()
    (host / "etc" / "sglang.service").write_text(
        "[Service]\nExecStart=/opt/sglang/bin/python -m sglang.launch_server\n"
    )
    before = tree(host)
    extra = {
        "ddtree_deploy_mode": "tune",
        "ddtree_deploy_min_gain": 0.0,
        "ddtree_deploy_candidates": [
            {"profile": "nextn", "variants": ["adaptive"]},
            {"profile": "ddtree", "variants": ["adaptive"]},
        ],
        "ddtree_deploy_store_dir": str(store),
        "sglang_model_path": "/srv/models/Qwen3.6-27B",
        "sglang_draft_model_path": "/srv/models/Qwen3.6-27B-DFlash",
        "out": str(tmp_path),
    }
    rc, out = run_playbook(tmp_path, ansible_cli_env, PREFLIGHT, extra)
    assert rc == 2, out
    said = " ".join(out.replace('\\"', '"').split())
    assert "Preflight | Check the candidates, the fallback profile and the model paths" in said, said
    assert (
        "ddtree_deploy_candidates[1]: 'ddtree+adaptive' asks for adaptive speculation, and SGLang 0.5.23 would not "
        'run it adaptive: adaptive_unsupported_reason() says "speculative_algorithm=DDTREE (only EAGLE/EAGLE3 are '
        'supported)" (sglang/srt/speculative/adaptive_spec_params.py:61)'
    ) in said, said
    assert "Drop the adaptive variant (--speculative-adaptive)" in said
    # The adaptive NEXTN candidate before it is not refused: only the one the release would not run adaptive.
    assert "'nextn+adaptive'" not in said
    # Nothing touched: the host's checks never ran, Ansible changed nothing, the record says so, the files are as
    # they were.
    assert "Check what the modules need on the host" not in out and "changed=0" in out, out
    course = json.loads((tmp_path / "course.json").read_text())
    assert course["stage"] == "preflight" and course["touched"] == "nothing", course
    assert tree(host) == before


def test_the_same_ddtree_candidate_without_the_variant_passes(tmp_path, ansible_cli_env, release):
    rc, out, _course, options = check(tmp_path, ansible_cli_env, release, {"name": "ddtree", "profile": "ddtree"})
    assert rc == 0, out
    assert "--speculative-adaptive" not in options["argv"]


# switch.yml checks every candidate's options (last to first), then candidate.yml sets each later candidate's
# options again before its switch: 2N-1 runs of preflight_release. The sglang role reads the release once and
# checks each distinct option set against its flags once (issue 37 item 5).
PLAY_CANDIDATES = (
    PLAY.split("  tasks:\n", maxsplit=1)[0]
    + """  tasks:
BEGIN    - name: As switch.yml and then candidate.yml run the options step
      ansible.builtin.include_role:
        name: ddtree.sglang.ddtree_deploy
        tasks_from: role_step
      vars:
        __ddtree_deploy_sglang_step: preflight_release
        __ddtree_deploy_candidate: "{{ item }}"
      loop: "{{ candidates | reverse | list + candidates[1:] }}"
    - name: The options left for the last candidate's switch
      ansible.builtin.copy:
        content: "{{ {'argv': sglang_server_options | ddtree.sglang.sglang_args('argv'),
                      'release': sglang_release, 'tables': sglang_tables.profiles | list} | to_json }}"
        dest: "{{ out }}/options.json"
        mode: "0600"
""".replace("BEGIN", BEGIN)
)


def _task_results(out):
    """Each task's name and the first host status under it (ok, changed, skipping, failed, fatal), in order."""
    results = []
    for block in out.split("TASK [")[1:]:
        name = block.split("]", 1)[0].split(" : ", 1)[-1]
        statuses = [line.split(":")[0] for line in block.splitlines()[1:] if line.split(":")[0] in
                    ("ok", "changed", "skipping", "failed", "fatal")]  # fmt: skip
        results.append((name, statuses))
    return results


def test_the_release_is_read_once_and_each_option_set_checked_once_for_every_candidate(
    tmp_path, ansible_cli_env, release
):
    candidates = [
        {"index": 1, "of": 3, "name": "ddtree", "profile": "ddtree", "variants": [], "extra_args": {}},
        {"index": 2, "of": 3, "name": "ddtree+small", "profile": "ddtree", "variants": ["small"], "extra_args": {}},
        {"index": 3, "of": 3, "name": "nextn", "profile": "nextn", "variants": [], "extra_args": {}},
    ]
    extra = {
        "candidates": candidates,
        "out": str(tmp_path),
        "sglang_release_path": str(release),
        "sglang_launch_command": f"{sys.executable} -m sglang.launch_server",
    }
    rc, out = run_playbook(tmp_path, ansible_cli_env, PLAY_CANDIDATES, extra, timeout=300)
    assert rc == 0, out
    results = _task_results(out)
    reads = [statuses for name, statuses in results if name == "Read the SGLang release the unit runs"]
    checks = [statuses for name, statuses in results if name == "Check the options against the release's own flags"]
    assert len(reads) == len(checks) == 5, results  # 2N-1 runs of the step for N = 3
    assert sum(s == ["ok"] for s in reads) == 1 and sum(s == ["skipping"] for s in reads) == 4, reads
    assert sum(s == ["ok"] for s in checks) == 3 and sum(s == ["skipping"] for s in checks) == 2, checks
    options = json.loads((tmp_path / "options.json").read_text())
    # The last run was the third candidate's: its options are the ones the switch renders.
    argv = options["argv"]
    assert argv[argv.index("--speculative-algorithm") + 1] == "NEXTN", argv
    assert options["release"]["version"] == VERSION
    assert options["release"]["package_dir"].endswith("/sglang")
    assert "ddtree" in options["tables"]
