"""Every AWX object extensions/awx/configure.yml creates is valid for the awx.awx modules and for AWX.

No AWX server runs here, so the test does what the modules would do before talking to one:
it loads the playbook with ansible-core's own loader, renders every task's loop and
arguments with the playbook's variables (omit, !unsafe and all), and validates the result
against the argument spec each awx.awx module builds in its main(), captured by replacing
ControllerAPIModule for the duration of the call.  Survey specs are checked against the
rules AWX's API applies when a survey is saved, and the workflow graph against the
canary -> approval -> rollout contract.
"""

import functools
import importlib.util
import re
import sys
from pathlib import Path
from unittest import mock

import pytest
import yaml
from ansible.inventory.manager import InventoryManager
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.parsing.dataloader import DataLoader
from ansible.playbook import Playbook
from ansible.plugins.loader import init_plugin_loader
from ansible.template import Templar
from ansible.vars.manager import VariableManager

REPO = Path(__file__).resolve().parents[3]
AWX_DIR = REPO / "extensions" / "awx"
PROJECT = AWX_DIR / "project"
CONFIGURE = AWX_DIR / "configure.yml"

# The docs generator knows which playbook variables the playbooks document; reuse it.
_GEN_DOCS_SPEC = importlib.util.spec_from_file_location("gen_docs", REPO / "scripts" / "gen_docs.py")
GEN_DOCS = sys.modules.setdefault("gen_docs", importlib.util.module_from_spec(_GEN_DOCS_SPEC))
_GEN_DOCS_SPEC.loader.exec_module(GEN_DOCS)

# Site settings a user passes with -e @site.yml.  "minimal" names existing credentials only;
# "full" also hands in the secrets (as from an ansible-vault file), so the tasks guarded by
# `when: ... is defined` run and are validated too.
MINIMAL_SITE = {
    "ddtree_awx_project_scm_url": "https://git.example.com/ops/llm-serving.git",
    "ddtree_awx_ee_image": "registry.example.com/ddtree-sglang-ee:0.1.0",
}
FULL_SITE = MINIMAL_SITE | {
    "ddtree_awx_project_scm_credential": "git read-only",
    "ddtree_awx_ee_pull_credential": "registry pull",
    "ddtree_awx_vault_credential": "inventory vault",
    "ddtree_awx_api_key_credential": "SGLang API key (prod)",
    "ddtree_awx_ssh_private_key": "-----BEGIN OPENSSH PRIVATE KEY-----\nnot-a-key\n",
    "ddtree_awx_sglang_api_key": "not-a-key",
}

# AWX's survey question types and the Python type a default of each must have
# (awx/main/models/mixins.py SURVEY_TYPE_MAPPING and the survey_spec view's checks).
SURVEY_TYPES = {
    "text": str,
    "textarea": str,
    "password": str,
    "multiplechoice": str,
    "multiselect": str,
    "integer": int,
    "float": (int, float),
}


class _Captured(Exception):
    def __init__(self, kwargs):
        super().__init__("argument spec captured")
        self.kwargs = kwargs


def awx_module_spec(name):
    """Return (full argument spec, validator kwargs, DOCUMENTATION) as awx.awx.<name> builds them."""
    module = pytest.importorskip(f"ansible_collections.awx.awx.plugins.modules.{name}")
    from ansible_collections.awx.awx.plugins.module_utils.controller_api import ControllerModule

    def capture(**kwargs):
        raise _Captured(kwargs)

    with mock.patch.object(module, "ControllerAPIModule", side_effect=capture), pytest.raises(_Captured) as caught:
        module.main()
    kwargs = dict(caught.value.kwargs)
    spec = dict(ControllerModule.AUTH_ARGSPEC) | kwargs.pop("argument_spec")
    return spec, kwargs, yaml.safe_load(module.DOCUMENTATION)


def _doc_to_spec(options):
    """Turn documented suboptions into an argument spec (for dict options the code leaves open)."""
    spec = {}
    for key, doc in options.items():
        entry = {k: doc[k] for k in ("type", "required", "choices", "elements", "aliases") if k in doc}
        if "suboptions" in doc:
            entry["options"] = _doc_to_spec(doc["suboptions"])
        spec[key] = entry
    return spec


def validate_module_args(name, args):
    """Errors awx.awx.<name> would report for these arguments, before any API call."""
    spec, kwargs, doc = awx_module_spec(name)
    errors = [str(e) for e in ArgumentSpecValidator(spec, **kwargs).validate(args).errors]
    # Dict options the module takes as plain dicts but documents field by field.
    for key, value in args.items():
        documented = doc["options"].get(key, {})
        if isinstance(value, dict) and "suboptions" in documented and "options" not in spec.get(key, {}):
            sub = ArgumentSpecValidator(_doc_to_spec(documented["suboptions"])).validate(value)
            errors += [f"{key}: {e}" for e in sub.errors]
    return errors


@functools.cache
def _init_plugin_loader():
    """What ansible-playbook does first: let the loader resolve ansible.builtin and collections
    (this checkout through tests/unit/conftest.py's link, the bundled ones from site-packages)."""
    init_plugin_loader([str(REPO / ".cache" / "collections")])


def rendered_awx_tasks(site):
    """Yield (task name, module name, rendered args, loop item) for every awx.awx call the play makes."""
    _init_plugin_loader()
    loader = DataLoader()
    inventory = InventoryManager(loader=loader, sources="localhost,")
    variable_manager = VariableManager(loader=loader, inventory=inventory)
    playbook = Playbook.load(str(CONFIGURE), variable_manager=variable_manager, loader=loader)
    host = inventory.get_host("localhost")
    for play in playbook.get_plays():
        for block in play.compile():
            for task in block.block:
                if not task.action.startswith("awx.awx."):
                    continue
                task_vars = variable_manager.get_vars(play=play, host=host, task=task) | site
                templar = Templar(loader=loader, variables=task_vars)
                items = templar.template(task.loop) if task.loop is not None else [None]
                for item in items:
                    item_vars = task_vars | ({"item": item} if item is not None else {})
                    templar = Templar(loader=loader, variables=item_vars)
                    if not all(templar.evaluate_conditional(when) for when in task.when):
                        continue
                    yield task.get_name(), task.action.removeprefix("awx.awx."), templar.template(task.args), item


def config_vars(site=None):
    """The play's variables (vars/main.yml plus the site settings), each rendered as a task sees it."""
    site = MINIMAL_SITE if site is None else site
    _init_plugin_loader()
    loader = DataLoader()
    variable_manager = VariableManager(loader=loader)
    play = Playbook.load(str(CONFIGURE), variable_manager=variable_manager, loader=loader).get_plays()[0]
    play_vars = variable_manager.get_vars(play=play) | site
    templar = Templar(loader=loader, variables=play_vars)
    names = loader.load_from_file(str(AWX_DIR / "vars" / "main.yml")).keys() | site.keys()
    return {name: templar.template(play_vars[name]) for name in names}


@pytest.fixture(scope="module", params=["minimal", "full"])
def calls(request):
    site = MINIMAL_SITE if request.param == "minimal" else FULL_SITE
    return list(rendered_awx_tasks(site))


def test_every_awx_call_passes_the_module_argument_spec(calls):
    assert calls, "configure.yml makes no awx.awx calls"
    failures = {
        f"{name} [{args.get('name') or args.get('identifier')}]": errors
        for name, module, args, _item in calls
        if (errors := validate_module_args(module, args))
    }
    assert not failures, failures


def test_the_full_site_creates_the_credentials_from_its_secrets():
    calls = list(rendered_awx_tasks(FULL_SITE))
    created = {args["name"]: args for _n, module, args, _i in calls if module == "credential" and "inputs" in args}
    assert created["GPU servers SSH"]["inputs"]["ssh_key_data"] == FULL_SITE["ddtree_awx_ssh_private_key"]
    assert created["SGLang API key (prod)"]["inputs"] == {"sglang_api_key": "not-a-key"}
    checked = {
        args["name"] for _n, module, args, _i in calls if module == "credential" and args.get("state") == "exists"
    }
    assert checked == {"git read-only", "registry pull", "inventory vault"}


def test_the_minimal_site_checks_the_machine_credential_exists_instead():
    calls = list(rendered_awx_tasks(MINIMAL_SITE))
    assert not [a for _n, module, a, _i in calls if module == "credential" and "inputs" in a]
    checked = {(args["name"], args["credential_type"]) for _n, module, args, _i in calls if module == "credential"}
    assert checked == {("GPU servers SSH", "Machine")}


def test_every_loop_item_key_reaches_the_module(calls):
    """A key in vars/main.yml that the task does not pass on would be silently ignored."""
    for name, _module, args, item in calls:
        if not isinstance(item, dict) or name.startswith("Credentials"):
            continue
        dropped = set(item) - set(args)
        assert not dropped, f"{name}: {sorted(dropped)} of {item.get('name') or item.get('identifier')} not passed on"


def test_the_api_key_injector_keeps_its_template_for_awx():
    calls = list(rendered_awx_tasks(FULL_SITE))
    (ctype,) = [args for _n, module, args, _i in calls if module == "credential_type"]
    assert ctype["injectors"] == {"extra_vars": {"sglang_api_key": "{{ sglang_api_key }}"}}
    assert [f["id"] for f in ctype["inputs"]["fields"]] == ["sglang_api_key"]
    assert ctype["inputs"]["fields"][0]["secret"] is True


def test_secrets_are_never_logged():
    play = yaml.safe_load(CONFIGURE.read_text())[0]
    for task in play["tasks"]:
        if "inputs" in task.get("awx.awx.credential", {}):
            assert task.get("no_log") is True, task["name"]


# --- survey specs -------------------------------------------------------------------------


def awx_survey_errors(survey):
    """The checks AWX's survey_spec endpoint makes when a survey is saved, plus a few stricter ones."""
    errors = []
    if not isinstance(survey, dict):
        return ["survey spec must be an object"]
    for field in ("name", "description", "spec"):
        if field not in survey:
            errors.append(f"'{field}' missing from survey spec")
    questions = survey.get("spec")
    if not isinstance(questions, list) or not questions:
        return errors + ["'spec' must be a non-empty list of questions"]
    seen = set()
    for idx, question in enumerate(questions):
        where = f"question {idx} ({question.get('variable')})"
        for field in ("question_name", "variable", "type", "required"):
            if field not in question:
                errors.append(f"'{field}' missing from survey {where}")
        qtype, variable = question.get("type"), question.get("variable", "")
        if qtype not in SURVEY_TYPES:
            errors.append(f"{where}: type {qtype!r} is not one of {sorted(SURVEY_TYPES)}")
            continue
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", str(variable)):
            errors.append(f"{where}: variable is not a valid Ansible variable name")
        if variable in seen:
            errors.append(f"{where}: variable duplicated")
        seen.add(variable)
        if not isinstance(question.get("required"), bool):
            errors.append(f"{where}: required must be true or false")
        default = question.get("default")
        if default not in (None, "") and not isinstance(default, SURVEY_TYPES[qtype]):
            errors.append(f"{where}: default {default!r} is not a {qtype} value")
        if qtype in ("multiplechoice", "multiselect"):
            choices = question.get("choices")
            if isinstance(choices, str):
                choices = [c for c in choices.split("\n") if c]
            if not isinstance(choices, list) or not choices:
                errors.append(f"{where}: choices must be a non-empty list or newline-separated string")
                continue
            wanted = [] if default in (None, "") else str(default).split("\n")
            if qtype == "multiplechoice" and len(wanted) > 1:
                errors.append(f"{where}: a multiplechoice default is one choice")
            errors += [f"{where}: default {w!r} is not a choice" for w in wanted if w not in choices]
        elif question.get("choices"):
            errors.append(f"{where}: choices only apply to multiplechoice and multiselect")
        for bound in ("min", "max"):
            if bound in question and not isinstance(question[bound], int | float):
                errors.append(f"{where}: {bound} must be a number")
        low, high = question.get("min"), question.get("max")
        if isinstance(default, str) and default and qtype in ("text", "textarea", "password"):
            if (low is not None and len(default) < low) or (high is not None and len(default) > high):
                errors.append(f"{where}: default length outside min/max")
        if isinstance(default, int | float) and qtype in ("integer", "float"):
            if (low is not None and default < low) or (high is not None and default > high):
                errors.append(f"{where}: default outside min/max")
        if question.get("required") and qtype != "password" and default in (None, "") and qtype != "multiselect":
            # A required question without a default blocks every workflow node and schedule.
            errors.append(f"{where}: a required question needs a default")
    return errors


def all_surveys(calls):
    return [
        (args["name"], args["survey_spec"])
        for _n, module, args, _i in calls
        if module in ("job_template", "workflow_job_template") and "survey_spec" in args
    ]


def test_every_survey_is_valid_for_awx(calls):
    surveys = all_surveys(calls)
    assert {name for name, _s in surveys} >= {"ddtree.sglang deploy", "ddtree.sglang canary rollout"}
    for name, survey in surveys:
        assert not awx_survey_errors(survey), (name, awx_survey_errors(survey))


def test_survey_checker_rejects_what_awx_rejects():
    good = {"question_name": "Q", "variable": "v", "type": "text", "required": False}
    assert not awx_survey_errors({"name": "n", "description": "d", "spec": [good]})
    broken = [
        {"name": "n", "spec": [good]},
        {"name": "n", "description": "d", "spec": []},
        {"name": "n", "description": "d", "spec": [good | {"type": "boolean"}]},
        {"name": "n", "description": "d", "spec": [{k: v for k, v in good.items() if k != "required"}]},
        {"name": "n", "description": "d", "spec": [good, good]},
        {"name": "n", "description": "d", "spec": [good | {"type": "integer", "default": "3"}]},
        {
            "name": "n",
            "description": "d",
            "spec": [good | {"type": "multiplechoice", "choices": ["a"], "default": "b"}],
        },
        {"name": "n", "description": "d", "spec": [good | {"type": "multiselect"}]},
        {"name": "n", "description": "d", "spec": [good | {"variable": "not-a-var"}]},
    ]
    for survey in broken:
        assert awx_survey_errors(survey), survey


def _documented_variables():
    """Options of every role entry point (meta/argument_specs.yml), by name."""
    found = {}
    for path in sorted(REPO.glob("roles/*/meta/argument_specs.yml")):
        for entry in (yaml.safe_load(path.read_text()) or {}).get("argument_specs", {}).values():
            for option, spec in (entry.get("options") or {}).items():
                found.setdefault(option, spec)
    return found


def _playbook_variables():
    """Variables the collection's playbooks read in play keywords and describe in their header comment."""
    return {var.name for var in GEN_DOCS.playbook_variables(REPO) if var.description}


def test_every_survey_variable_is_a_documented_variable(calls):
    documented, playbook_vars = _documented_variables(), _playbook_variables()
    for name, survey in all_surveys(calls):
        for question in survey["spec"]:
            variable = question["variable"]
            assert variable in documented or variable in playbook_vars, (
                f"survey {name!r} asks for {variable!r}, which no role documents in meta/argument_specs.yml "
                "and no playbook documents in its header"
            )
            spec = documented.get(variable)
            if spec is None:
                continue
            kind = spec.get("type", "str")
            if question["type"] == "multiselect":
                assert kind == "list", (variable, kind)
                assert set(question["choices"]) <= set(spec.get("choices") or question["choices"]), variable
            elif question["type"] == "multiplechoice":
                assert set(question["choices"]) <= set(spec.get("choices") or question["choices"]), variable
            elif question["type"] in ("integer", "float"):
                assert kind in ("int", "float", "raw"), (variable, kind)


# --- workflow graph -------------------------------------------------------------------------


def test_workflow_is_canary_approval_promote_rollout_with_rollback_on_failure_or_denial():
    conf = config_vars()
    templates = {jt["name"]: jt for jt in conf["ddtree_awx_job_templates"]}
    nodes = conf["ddtree_awx_workflow_nodes"]
    by_id = {node["identifier"]: node for node in nodes}
    assert len(by_id) == len(nodes), "node identifiers must be unique"

    created = set()
    for node in nodes:
        links = [t for key in ("success_nodes", "failure_nodes", "always_nodes") for t in node.get(key, [])]
        # awx.awx.workflow_job_template_node links only to nodes that exist: leaves first.
        assert set(links) <= created, f"{node['identifier']} links to {set(links) - created} before they exist"
        created.add(node["identifier"])
        if "unified_job_template" in node:
            template = templates[node["unified_job_template"]]
            if "limit" in node:
                assert template["ask_limit_on_launch"], f"{template['name']} must prompt for limit"
            if "extra_data" in node:
                # AWX drops a node's extra_data unless its template prompts for variables.
                assert template.get("ask_variables_on_launch"), f"{template['name']} must prompt for variables"

    deploy, rollback = conf["ddtree_awx_jt_deploy"], conf["ddtree_awx_jt_rollback"]
    promote = conf["ddtree_awx_jt_promote"]
    assert templates[promote]["playbook"] == "promote.yml"
    roots = set(by_id) - {t for n in nodes for k in ("success_nodes", "failure_nodes") for t in n.get(k, [])}
    assert roots == {"canary"}
    canary = by_id["canary"]
    assert canary["unified_job_template"] == deploy and canary["limit"] == conf["ddtree_awx_canary_limit"]
    # The canary is proved but not promoted: its previous unit stays last-known-good until approval.
    # It bakes before the approval node (issue 22): the approval comes after its metrics were judged.
    assert canary["extra_data"] == {"ddtree_deploy_promote": False, "ddtree_deploy_bake_s": 90}
    (approve,) = [by_id[i] for i in canary["success_nodes"]]
    assert "approval_node" in approve and approve["approval_node"]["timeout"] > 0
    (promote_canary,) = [by_id[i] for i in approve["success_nodes"]]
    assert promote_canary["unified_job_template"] == promote and promote_canary["limit"] == canary["limit"]
    (rollout,) = [by_id[i] for i in promote_canary["success_nodes"]]
    assert rollout["unified_job_template"] == deploy and "extra_data" not in rollout
    assert rollout["limit"] == f"sglang_servers:!{conf['ddtree_awx_canary_limit']}"
    # A failed canary, a denied or expired approval (AWX's failure path of an approval node) and
    # a failed promotion put the canary's previous unit back; a failed rollout rolls back its hosts.
    for node, hosts in (
        (canary, canary["limit"]),
        (approve, canary["limit"]),
        (promote_canary, canary["limit"]),
        (rollout, rollout["limit"]),
    ):
        (target,) = [by_id[i] for i in node["failure_nodes"]]
        assert target["unified_job_template"] == rollback, node["identifier"]
        assert target["limit"] == hosts, node["identifier"]
    assert "always_nodes" not in approve


def test_job_templates_run_playbooks_of_the_project():
    for template in config_vars()["ddtree_awx_job_templates"]:
        assert (PROJECT / template["playbook"]).is_file(), template["playbook"]


def test_project_pins_the_collection_version_of_galaxy_yml():
    galaxy = yaml.safe_load((REPO / "galaxy.yml").read_text())
    requirements = yaml.safe_load((PROJECT / "collections" / "requirements.yml").read_text())
    (pin,) = [c for c in requirements["collections"] if c["name"] == f"{galaxy['namespace']}.{galaxy['name']}"]
    assert pin["version"] == f"=={galaxy['version']}"


def test_project_inventory_puts_hosts_in_sglang_servers_with_documented_variables():
    loader = DataLoader()
    inventory = InventoryManager(loader=loader, sources=str(PROJECT / "inventories" / "production" / "hosts.yml"))
    hosts = inventory.get_groups_dict().get("sglang_servers", [])
    assert hosts, "the example inventory must fill the sglang_servers group"
    documented = _documented_variables()
    if not documented:
        pytest.fail("no role documents its variables in meta/argument_specs.yml yet")
    variable_manager = VariableManager(loader=loader, inventory=inventory)
    for name in hosts:
        host_vars = variable_manager.get_vars(host=inventory.get_host(name))
        ours = [v for v in host_vars if re.match(r"(sglang|ddtree_deploy)_", v)]
        unknown = [v for v in ours if v not in documented]
        assert not unknown, f"{name}: {unknown} are not documented role variables (typo?)"
