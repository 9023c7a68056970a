"""Answers AWX sends from the surveys are accepted by the roles and the playbook that get them.

AWX passes survey answers as extra vars typed by question: text as a string, float as a
number, multiselect as a list of strings.  A role validates its variables against
meta/argument_specs.yml; a play keyword such as serial takes whatever the template gives.
"""

import ast
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.parsing.dataloader import DataLoader
from hang_guard import hang_guard

REPO = Path(__file__).resolve().parents[3]
# The docs generator reads the playbooks' play-keyword variables and their defaults.
_GEN_DOCS_SPEC = importlib.util.spec_from_file_location("gen_docs", REPO / "scripts" / "gen_docs.py")
GEN_DOCS = sys.modules.setdefault("gen_docs", importlib.util.module_from_spec(_GEN_DOCS_SPEC))
_GEN_DOCS_SPEC.loader.exec_module(GEN_DOCS)
BIN = Path(sys.executable).parent
# ansible's loader: the vars file carries !unsafe values for AWX's own templating.
SURVEY = DataLoader().load_from_file(str(REPO / "extensions" / "awx" / "vars" / "main.yml"))["ddtree_awx_deploy_survey"]


def _answers(question):
    """Values AWX can send for this question: its default, its bounds, its choices."""
    qtype = question["type"]
    if qtype == "multiselect":
        return [[], question["choices"][:1], list(question["choices"])]
    if qtype == "multiplechoice":
        return list(question["choices"])
    if qtype in ("float", "integer"):
        cast = float if qtype == "float" else int
        return [cast(question[b]) for b in ("min", "max") if b in question] + (
            [cast(question["default"])] if "default" in question else []
        )
    return [question["default"]] if "default" in question else []


def _role_option(variable):
    for path in sorted(REPO.glob("roles/*/meta/argument_specs.yml")):
        for entry in (yaml.safe_load(path.read_text()) or {}).get("argument_specs", {}).values():
            if variable in (entry.get("options") or {}):
                return entry["options"][variable]
    return None


ROLE_QUESTIONS = [q for q in SURVEY["spec"] if _role_option(q["variable"]) is not None]


def test_every_survey_answer_is_checked_somewhere():
    """Role variables are checked against their argument spec, the playbook's batches by running it."""
    assert {q["variable"] for q in SURVEY["spec"]} - {q["variable"] for q in ROLE_QUESTIONS} <= {"ddtree_deploy_serial"}


@pytest.mark.parametrize("question", ROLE_QUESTIONS, ids=lambda q: q["variable"])
def test_role_argument_spec_accepts_every_survey_answer(question):
    spec = _role_option(question["variable"])
    for answer in _answers(question):
        result = ArgumentSpecValidator({question["variable"]: spec}).validate({question["variable"]: answer})
        assert not result.error_messages, (answer, result.error_messages)


def _serial_question():
    (question,) = [q for q in SURVEY["spec"] if q["variable"] == "ddtree_deploy_serial"]
    return question


def test_deploy_playbook_batches_hosts_as_the_survey_answer_says(tmp_path):
    """Run the deploy play's own serial expression with the survey's default answer (a string)."""
    play = yaml.safe_load((REPO / "playbooks" / "deploy_ddtree.yml").read_text())[-1]
    probe_play = [
        {
            "name": "Batches",
            "hosts": "all",
            "gather_facts": False,
            "serial": play["serial"],
            "tasks": [
                {
                    "name": "Show the batch",
                    "ansible.builtin.debug": {"msg": "BATCH {{ ansible_play_batch | join(',') }}"},
                    "run_once": True,
                }
            ],
        }
    ]
    playbook = tmp_path / "batches.yml"
    playbook.write_text(yaml.safe_dump(probe_play))
    answer = _serial_question()["default"]
    env = dict(os.environ, ANSIBLE_STDOUT_CALLBACK="ansible.builtin.default", ANSIBLE_NOCOLOR="1")
    proc = subprocess.run(
        [BIN / "ansible-playbook", "-i", "h1,h2,h3,h4,", "-c", "local", str(playbook),
         "-e", json.dumps({"ddtree_deploy_serial": answer})],
        capture_output=True, text=True, timeout=hang_guard(120), env=env, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, (
        f"the deploy playbook's serial ({play['serial']}) fails on the survey answer {answer!r}, "
        f"which AWX sends as a string:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    )
    batches = [line.split("BATCH ", 1)[1].rstrip('"') for line in proc.stdout.splitlines() if "BATCH " in line]
    # The default, 1,25%,100% of four hosts: one canary, one (a quarter), the other two.
    assert batches == ["h1", "h2", "h3,h4"], batches


def test_survey_batches_default_is_the_playbook_default():
    """Launching with the survey's defaults batches hosts as the playbook does from a shell."""
    (serial,) = [v for v in GEN_DOCS.playbook_variables(REPO) if v.name == "ddtree_deploy_serial"]
    playbook_default = [str(batch) for batch in ast.literal_eval(serial.default)]
    assert _serial_question()["default"].split(",") == playbook_default
