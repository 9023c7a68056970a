# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a user reads at the end of a deploy: the host line, the Markdown report and the failure message.

The role's own templates (roles/ddtree_deploy/templates) are rendered by ansible-playbook on
localhost from a deploy record built with the record's own functions and turned into the report's
data by the collection's filters, as report.yml and rescue.yml do.
"""

from pathlib import Path

import pytest
from ansible_collections.ddtree.sglang.plugins.module_utils import _deploy_record as dr
from playbook_harness import run_playbook

TEMPLATES = Path(__file__).resolve().parents[3] / "roles" / "ddtree_deploy" / "templates"

PLAY = """
- hosts: all
  gather_facts: false
  vars:
    ddtree_deploy_profile: ddtree
    ddtree_deploy_service_name: sglang-qwen
    ddtree_deploy_fallback_profile: nextn
    __ddtree_deploy_had_snapshot: true
    __ddtree_deploy_journal_path: reports/run/ct200-sim.journal.txt
    __ddtree_deploy_store: /var/lib/ddtree-sglang/last-known-good/sglang-qwen
    __ddtree_deploy_unit_before: {active: true, algorithm: NEXTN, fragment: /etc/systemd/system/sglang-qwen.service}
    __ddtree_deploy_report_data: >-
      {{ case.record | ddtree.sglang.deploy_report(run=case.run, verdict=case.verdict, baseline=case.baseline,
                                                   bake=case.bake) }}
    __ddtree_deploy_course: >-
      {{ case.record | ddtree.sglang.deploy_record_summary(profile='ddtree', journal=__ddtree_deploy_journal_path,
         check_mode=case.run.check_mode) }}
  tasks:
    # As report.yml and rescue.yml render them.
    - name: The host line
      ansible.builtin.copy:
        content: "{{ lookup('ansible.builtin.template', 'host_line.j2') | trim }}"
        dest: "{{ out }}/line.txt"
        mode: "0600"
    - name: The Markdown report
      ansible.builtin.template:
        src: host_report.md.j2
        dest: "{{ out }}/report.md"
        mode: "0600"
    - name: The failure message
      ansible.builtin.copy:
        content: "{{ lookup('ansible.builtin.template', 'failure_msg.j2') | trim | regex_replace('\\\\s+', ' ') }}"
        dest: "{{ out }}/failure.txt"
        mode: "0600"
      when: (__ddtree_deploy_course.failure or none) is not none
"""


def record(*events):
    rec = dr.new_record("run")
    for event in events:
        rec = dr.append(rec, event[0], result=event[2] if len(event) > 2 else None, at=event[1])
    return rec


def render(tmp_path, env, rec, check_mode, run=None, verdict=None, baseline=None, bake=None):
    (tmp_path / "templates").symlink_to(TEMPLATES, target_is_directory=True)
    run = dict({"host": "ct200-sim", "profile": "ddtree", "check_mode": check_mode}, **(run or {}))
    case = {"record": rec, "run": run, "verdict": verdict, "baseline": baseline, "bake": bake}
    out = tmp_path / "out"
    out.mkdir()
    rc, said = run_playbook(tmp_path, env, PLAY, {"case": case, "out": str(out)}, inventory="ct200-sim,")
    assert rc == 0, said
    failure = out / "failure.txt"
    return (
        (out / "line.txt").read_text(),
        (out / "report.md").read_text(),
        failure.read_text() if failure.exists() else None,
    )


EVERY_CHECK = (("preflight", 1), ("snapshot", 2), ("install", 3), ("options", 4), ("baseline", 5), ("switch", 6))


def test_check_mode_says_what_was_checked_and_that_nothing_changed(tmp_path, ansible_cli_env):
    # The sglang role stamps the restart it would have done (its set_fact runs in check mode too).
    rec = record(*EVERY_CHECK, ("stopped", 7), ("ready", 7), ("probe", 8), ("probed", 8), ("done", 9, {}))
    line, md, failure = render(tmp_path, ansible_cli_env, rec, check_mode=True)
    assert line == (
        "ct200-sim: CHECKED ddtree: preflight, snapshot and the new unit's options passed their checks (the switch, "
        "probe and gain gate need a real run); nothing was changed (check mode)"
    )
    assert md.startswith("# ct200-sim: checked\n\n" + line + "\n")
    downtime = md.split("## Downtime\n", 1)[1].strip()
    assert downtime == "0 s. None (check mode: nothing was stopped, restarted or changed)."
    assert failure is None


def test_a_check_that_fails_in_check_mode_says_where_on_one_line(tmp_path, ansible_cli_env):
    cause = "SGLang 0.5.23 refuses --cuda-graph-max-bs: the server would exit at start\n(status 2)."
    rec = record(*EVERY_CHECK[:4], ("failed", 5, {"cause": cause, "task": "", "fix": "", "said": ""}))
    line, md, failure = render(tmp_path, ansible_cli_env, rec, check_mode=True)
    assert line == (
        "ct200-sim: CHECK FAILED at options: SGLang 0.5.23 refuses --cuda-graph-max-bs: the server would exit at "
        "start (status 2); nothing was changed (check mode)"
    )
    assert "0 s. None (check mode: nothing was stopped, restarted or changed)." in md
    assert failure == (
        "CHECK FAILED on ct200-sim at step 'options' (check mode: nothing was changed): SGLang 0.5.23 refuses "
        "--cuda-graph-max-bs: the server would exit at start (status 2)."
    )


@pytest.mark.parametrize("stage", ["options", "baseline"])
def test_a_failure_before_the_switch_ends_each_sentence_once_on_one_line(tmp_path, ansible_cli_env, stage):
    # sglang_release_info's message ends with its parser's place and a period.
    cause = (
        "SGLang 0.5.23 refuses --cuda-graph-max-bs: ambiguous option:\n--cuda-graph-max-bs could match "
        "--cuda-graph-max-bs-decode. Its parser is sglang/srt/server_args.py:679."
    )
    events = EVERY_CHECK[:4] if stage == "options" else EVERY_CHECK[:5]
    rec = record(*events, ("failed", 6, {"cause": cause, "task": "", "fix": "", "said": ""}))
    line, md, failure = render(tmp_path, ansible_cli_env, rec, check_mode=False)
    assert "\n" not in line
    outcome = "OPTIONS REFUSED" if stage == "options" else "BASELINE FAILED"
    assert line.startswith(f"ct200-sim: {outcome} at {stage}: "), line
    assert "ambiguous option: --cuda-graph-max-bs could match" in line
    assert failure.endswith(
        "Its parser is sglang/srt/server_args.py:679. sglang-qwen was not touched and still runs as before."
    ), failure
    assert ".." not in failure
    assert "| cause | SGLang 0.5.23 refuses --cuda-graph-max-bs: ambiguous option: --cuda-graph-max-bs could" in md


def test_a_failed_restore_ends_each_sentence_once(tmp_path, ansible_cli_env):
    # The restore's error quotes a journal cause's fix, which ends with a period (deploy_failures' 'restore').
    error = (
        "Restore | Wait until the restored server is ready: did not come up. "
        "Fix: turn CUDA graphs off (the 'nograph' variant).\n"
    )
    rec = record(
        *EVERY_CHECK,
        ("stopped", 7),
        ("failed", 8, {"cause": "Not enough memory.", "task": "", "fix": "", "said": ""}),
        ("verified", 9, {"verified": False, "state": "down", "systemd_state": "failed", "error": error}),
    )
    _line, _md, failure = render(tmp_path, ansible_cli_env, rec, check_mode=False)
    assert failure.startswith("SERVICE DOWN on ct200-sim: "), failure
    assert "(the 'nograph' variant). sglang-qwen is not serving (systemd: failed)." in failure, failure
    assert ".." not in failure.replace("...", "")


def _cand(index, name, variants=()):
    return {"index": index, "of": 2, "name": name, "profile": "ddtree", "variants": list(variants), "extra_args": {}}


OOM = {
    "cause": "Not enough memory. Please try to increase --mem-fraction-static.",
    "task": "",
    "fix": "lower it",
    "said": "",
}


def test_a_later_candidate_kept_says_which_and_lists_both(tmp_path, ansible_cli_env):
    """Issue 21: the first candidate's failure is not the host's; the host line says which one won."""
    rec = record(
        *EVERY_CHECK[:5],
        ("candidate", 6, _cand(1, "ddtree")),
        ("switch", 6),
        ("stopped", 7),
        ("failed", 8, dict(OOM, said="RuntimeError: Not enough memory.")),
        ("candidate", 9, _cand(2, "ddtree+nograph", ["nograph"])),
        ("switch", 9),
        ("stopped", 10),
        ("ready", 12),
        ("probe", 12),
        ("probed", 13),
        ("passed", 14, {"figures": {}}),
        ("done", 15, {"restarted": True}),
    )
    line, md, failure = render(tmp_path, ansible_cli_env, rec, check_mode=False)
    assert line.startswith("ct200-sim: DEPLOYED ddtree+nograph, 2nd of 2: "), line
    assert "## Candidates (deploy: deployed ddtree+nograph, 2nd of 2)" in md
    assert (
        "| 1 | ddtree | failed | switch | Not enough memory. Please try to increase --mem-fraction-static. | lower it |"
        in md
    )
    assert "| 2 | ddtree+nograph **kept** | passed | - |" in md
    assert "| failed step | - |" in md
    assert failure is None


def test_every_candidate_failing_names_each_ones_step_and_cause(tmp_path, ansible_cli_env):
    rec = record(
        *EVERY_CHECK[:5],
        ("candidate", 6, _cand(1, "ddtree")),
        ("switch", 6),
        ("stopped", 7),
        ("failed", 8, OOM),
        ("candidate", 9, _cand(2, "ddtree+nograph", ["nograph"])),
        ("switch", 9),
        ("stopped", 10),
        ("failed", 11, {"cause": "CUDA out of memory. Tried to allocate 2.50 GiB.", "task": "", "fix": "", "said": ""}),
        ("restart", 12),
        ("restored", 14),
        ("verified", 15, {"verified": True}),
    )
    line, _md, failure = render(tmp_path, ansible_cli_env, rec, check_mode=False)
    assert line.startswith(
        "ct200-sim: ROLLED BACK: none of 2 candidates passed; the last at switch: CUDA out of memory."
    ), line
    assert failure.startswith(
        "ROLLED BACK on ct200-sim: none of 2 candidates passed (ddtree at switch: Not enough memory. Please try to "
        "increase --mem-fraction-static.; ddtree+nograph at switch: CUDA out of memory. Tried to allocate 2.50 GiB.); "
        "the last, 'ddtree+nograph', failed at step 'switch': CUDA out of memory."
    ), failure
    assert "Journal: reports/run/ct200-sim.2-ddtree+nograph.journal.txt" in failure


SUMMARY_PLAY = """
- hosts: all
  gather_facts: false
  vars:
    __ddtree_deploy_run_id: run
    __ddtree_deploy_reports: "{{ reports }}"
  tasks:
    - name: The run summary, as report.yml writes it
      ansible.builtin.template:
        src: run_summary.md.j2
        dest: "{{ out }}/summary.md"
        mode: "0600"
"""


def test_the_run_summary_shows_each_hosts_candidates(tmp_path, ansible_cli_env):
    rec = record(
        *EVERY_CHECK[:5],
        ("candidate", 6, _cand(1, "ddtree")),
        ("switch", 6),
        ("stopped", 7),
        ("failed", 8, dict(OOM)),
        ("candidate", 9, _cand(2, "ddtree+nograph", ["nograph"])),
        ("switch", 9),
        ("stopped", 10),
        ("ready", 12),
        ("passed", 14, {"figures": {}}),
        ("done", 15, {"restarted": True}),
    )
    single = record(*EVERY_CHECK, ("stopped", 7), ("ready", 8), ("done", 9, {"restarted": True}))
    reports = [
        dr.report(rec, {"host": "ct129-sim", "profile": "ddtree"}),
        dr.report(single, {"host": "ct200-sim", "profile": "ddtree"}),
    ]
    (tmp_path / "templates").symlink_to(TEMPLATES, target_is_directory=True)
    out = tmp_path / "out"
    out.mkdir()
    rc, said = run_playbook(
        tmp_path, ansible_cli_env, SUMMARY_PLAY, {"reports": reports, "out": str(out)}, inventory="localhost,"
    )
    assert rc == 0, said
    md = (out / "summary.md").read_text()
    assert "**ct129-sim**: deployed ddtree+nograph, 2nd of 2" in md
    assert "| 1 | ddtree | failed | switch | Not enough memory." in md
    assert "**ct200-sim**" not in md  # one candidate: the table of hosts says it all


def test_a_failure_in_the_commit_is_a_commit_failure_with_the_commits_fix(tmp_path, ansible_cli_env):
    """Issue 37, item 3: the proved unit could not be kept (the snapshot module failed after the bake): the
    host is rolled back at step 'commit' with the commit's fix, not the bake's or the gate's."""
    cause = "cannot write /var/lib/ddtree-sglang/last-known-good/sglang-qwen/manifest.json: No space left on device"
    rec = record(
        *EVERY_CHECK[:5],
        ("candidate", 6, dict(_cand(1, "ddtree"), of=1)),
        ("switch", 6),
        ("stopped", 7),
        ("ready", 12),
        ("probe", 12),
        ("probed", 13),
        ("equivalence", 14),
        ("gate", 15),
        ("bake", 16),
        ("passed", 20, {"figures": {}}),
        ("commit", 21),
        ("failed", 22, {"cause": cause, "task": "", "fix": "", "said": ""}),
        ("restart", 23),
        ("restored", 40),
        ("verified", 41, {"verified": True}),
    )
    line, md, failure = render(tmp_path, ansible_cli_env, rec, check_mode=False)
    assert line.startswith(f"ct200-sim: ROLLED BACK at commit: {cause}; "), line
    assert "failed at step 'commit': " + cause in failure, failure
    assert "(fix: Keep the restored unit: ddtree passed every check, but it could not be stored" in failure
    assert "regressed under traffic" not in failure and "min_gain" not in failure
    assert "| failed step | commit |" in md
    assert "| fix | Keep the restored unit: ddtree passed every check, but it could not be stored" in md
    # The Markdown's course is the record's, event by event, each with what it carries.
    course = md.split("## Course\n", 1)[1]
    assert "| 0.0 | preflight | - |" in course and "| 20.0 | commit | - |" in course
    assert f"| 21.0 | failed | cause: {cause}; task: ; fix: ; said:  |" in course
    assert "| 40.0 | verified | verified: True |" in course


@pytest.mark.parametrize(
    "min_gain, verdict, says",
    [
        (None, {"gate": "pass", "gain": 0.02}, "Gain: +2.0 % (gate: not worse)."),
        (None, None, "Gain: - (gate: none)."),
        (0.1, {"gate": "pass", "gain": 0.19}, "Gain: +19.0 % (gate: +10.0 %)."),
        ({"1": 0.1, "16": 0.0}, {"gate": "pass", "gain": 0.19}, "Gain: +19.0 % (gate: +10.0 % at 1, +0.0 % at 16)."),
    ],
)
def test_the_gain_line_names_the_gate_that_judged_it(tmp_path, ansible_cli_env, min_gain, verdict, says):
    """With ddtree_deploy_min_gain null the gate judges "not worse" by default (issue 33); a gain per level is
    named per level."""
    rec = record(*EVERY_CHECK, ("stopped", 7), ("ready", 8), ("probe", 8), ("probed", 9), ("done", 10, {}))
    _line, md, _failure = render(tmp_path, ansible_cli_env, rec, False, run={"min_gain": min_gain}, verdict=verdict)
    assert says in md, md


# What the gate, the bake and the drain handed the record, as a deploy through a router with Prometheus has it.
LEVELS_MSG = "your traffic: p50 9, p90 22 running requests over 7 d: levels 1, 9, 16"
VERDICT = {"gate": "pass", "gain": 0.2, "gains": [], "gate_msg": "goodput +20.0 %", "levels_msg": LEVELS_MSG}
DRAIN = {"out": False, "removed_at": None, "out_s": 65.24, "drained": 3, "returned": 1, "error": None, "calls": []}


def _deployed_through_a_router():
    rec = record(
        *EVERY_CHECK[:4],
        ("drain", 4.5),
        ("baseline", 5),
        ("candidate", 6, dict(_cand(1, "ddtree"), of=1)),
        ("switch", 6),
        ("stopped", 7),
        ("ready", 12),
        ("probe", 12),
        ("probed", 13),
        ("equivalence", 14),
        ("gate", 15, VERDICT),
        ("bake", 16),
        ("passed", 40, {"figures": {}}),
        ("commit", 41),
        ("done", 42, {"restarted": True}),
    )
    return dr.set_result(rec, "drain", DRAIN)


@pytest.mark.parametrize(
    "source, says",
    [
        (
            {
                "kind": "prometheus",
                "url": "https://ops:s3cret@prom.example:9090/?token=t0ken",
                "selector": 'job="sglang"',
            },
            'Verdict: successful, read from Prometheus at https://prom.example:9090/ (job="sglang").',
        ),
        (
            {"kind": "metrics", "url": "http://127.0.0.1:30000/metrics"},
            "Verdict: successful, read directly from the unit's own /metrics (http://127.0.0.1:30000/metrics).",
        ),
    ],
)
def test_the_report_shows_the_gates_levels_the_bakes_verdict_and_source_and_the_drain(
    tmp_path, ansible_cli_env, source, says
):
    """Issues 33, 36 and 34 in the host report, from what each stage handed the record: where the gate's levels came
    from, the bake's verdict and where it read the metrics (no credential of the URL), how long the worker was out
    of the router and what was drained."""
    bake = {"result": "pass", "verdict": "successful", "source": source, "measurements": [], "failed_checks": []}
    run = {"bake_s": 30, "bake_interval": 5, "bake_inconclusive": "pass", "gate_concurrency": [1, 9, 16]}
    baseline = {"measured": True, "median": 30.0, "ttft_s": 0.3}
    _line, md, _failure = render(
        tmp_path, ansible_cli_env, _deployed_through_a_router(), False, run, VERDICT, baseline, bake
    )
    assert f"Levels: {LEVELS_MSG}." in md, md
    assert says in md, md
    assert "s3cret" not in md and "t0ken" not in md
    router = md.split("## Router\n", 1)[1].split("\n## ", 1)[0]
    assert (
        " ".join(router.split())
        == "Out of the router 65.2 s, 3 request(s) drained while it was out, put back 1 time(s)."
    ), router


def test_the_report_data_carries_them_and_none_without_the_stages():
    report = dr.report(
        _deployed_through_a_router(),
        {"host": "h", "bake_s": 30},
        verdict=VERDICT,
        bake={
            "result": "pass",
            "verdict": "successful",
            "source": {"kind": "prometheus", "url": "http://u:p@prom:9090"},
        },
    )
    assert report["gate"]["levels_msg"] == LEVELS_MSG
    assert report["bake"]["verdict"] == "successful"
    assert report["bake"]["source"] == {"kind": "prometheus", "url": "http://prom:9090"}
    assert report["router"] == {"out": False, "out_s": 65.24, "drained": 3, "returned": 1, "error": None}
    # No router, no gate verdict, no bake: nothing made up.
    plain = dr.report(
        record(*EVERY_CHECK, ("stopped", 7), ("ready", 8), ("probe", 8), ("probed", 9), ("done", 10, {})), {"host": "h"}
    )
    assert plain["router"] is None and plain["gate"]["levels_msg"] is None
    assert plain["bake"]["verdict"] is None and plain["bake"]["source"] is None
