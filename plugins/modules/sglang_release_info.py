#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

DOCUMENTATION = r"""
---
module: sglang_release_info
short_description: Read which speculative algorithms an installed SGLang release serves, and how DDTree is wired
version_added: 0.1.0
description:
  - Finds the C(sglang) package of a release venv (or a site-packages or package directory) and reads, without
    importing it, the installed version and the members of C(SpeculativeAlgorithm), the alias names it accepts
    (C(NEXTN) is EAGLE) and the members for which C(is_dflash()) is true.
  - Reading the source works on hosts without the GPU stack (torch, flashinfer), where importing SGLang fails.
  - Fails when an algorithm in O(required_algorithms) is missing.
  - When C(DDTREE) is required, also checks the wiring that sgl-project/sglang PR 29907 defines, followed
    statically through the source, and fails naming what is missing. C(SpeculativeAlgorithm.create_worker()) must
    select C(DDTreeWorker) for C(DDTREE), from a module of the installed package that defines it (the field
    report's C(is_dflash()) patch made DDTREE a member that C(create_worker()) hands to the linear DFlash worker);
    ServerArgs must have the field C(speculative_ddtree_budget) (C(--speculative-ddtree-budget)).
  - Reports what the DDTree server-args hook (C(_handle_ddtree)) enforces, as PR 29907 does it (C(page_size) 1,
    overlap schedule off), for the unit's options to be checked against.
  - With O(import_check=true) the release's own python also imports SGLang and answers the same questions at run
    time, for hosts with the full stack.
  - With O(argv), checks a server command line against the release's own argument definitions, read from its
    installed files without importing it (the C(ServerArgs) fields of C(sglang/srt/arg_groups/fields/*.py) or of
    the older single C(server_args.py), and the explicit C(add_argument) calls of C(ServerArgs.add_cli_args)),
    that is flag names and aliases, abbreviations (argparse's, as SGLang's parser allows them), static choices,
    int and float values. Fails naming each refused flag, the release (version and path), argparse's message as
    the server would print it, and the closest real flag.
  - With O(argv) holding C(--speculative-adaptive), also checks the unit against the release's own rules for adaptive
    speculative decoding, read from its files (C(adaptive_unsupported_reason()) and C(DEFAULT_ADAPTIVE_CONFIG) of
    C(sglang/srt/speculative/adaptive_spec_params.py), the start-up checks of C(sglang/srt/arg_groups/)). A unit the
    release would turn adaptive off for (it starts, logs "speculative_adaptive disabled", and serves static
    speculation; an adaptive DDTREE unit), or would refuse at start (a C(--speculative-num-steps) outside the tiers'
    candidate steps, a bad C(--speculative-adaptive-config) file), fails the module quoting the release's reason
    and where it is.
  - Never changes the host.
author:
  - ddtree.sglang developers (@ddtree)
attributes:
  check_mode:
    description: Can run in check mode and return changed status prediction without modifying target.
    support: full
    details: The module only reads; it runs the same way in check mode, import check included.
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check mode), when in diff mode.
    support: none
options:
  path:
    description:
      - A release directory (a venv with C(lib/python3*/site-packages/sglang)), a site-packages directory or the
        C(sglang) package directory itself.
    type: path
    required: true
  required_algorithms:
    description:
      - Speculative algorithm names the release must accept, as given to C(--speculative-algorithm).
      - A name is accepted when it is a member of C(SpeculativeAlgorithm) or an alias of one.
      - When C(DDTREE) is listed, its worker and its budget flag must be wired as PR 29907 does it (see above).
    type: list
    elements: str
    default: []
  import_check:
    description:
      - Also import C(sglang.srt.speculative.spec_info) with the release's python and check the required
        algorithms against the live enum (and, for C(DDTREE), that C(DDTreeWorker) imports). Needs the full
        stack (torch and the rest) on the host.
    type: bool
    default: false
  python:
    description:
      - Interpreter for the import check. Defaults to C(bin/python) under O(path).
    type: path
  argv:
    description:
      - The server's arguments after C(-m sglang.launch_server) (what the unit passes), to check against the
        release's flags. Not checked when omitted.
      - Unknown flags, ambiguous abbreviations (a removed flag that prefixes two others, such as
        C(--cuda-graph-max-bs) in 0.5.23), values outside static choices, bad int or float values and missing
        values fail the module. Choices the release computes at run time and values of its own C(type=) functions
        are not checked.
    type: list
    elements: str
notes:
  - The static reader understands the predicate forms SGLang uses (C(self == A), C(self in (A, B)), C(or) and
    C(and) of those, calls of other C(self.is_*()) methods). When C(create_worker()) decides on DDTREE in another
    way the worker is reported as unknown and a required C(DDTREE) fails with a request to use O(import_check).
seealso:
  - name: SGLang speculative decoding
    description: The algorithms and their server options.
    link: https://docs.sglang.ai/advanced_features/speculative_decoding.html
  - name: SGLang PR 29907
    description: Add DDTree speculative decoding (open; in no release).
    link: https://github.com/sgl-project/sglang/pull/29907
"""

EXAMPLES = r"""
- name: Verify that the new release serves DDTree as PR 29907 wires it
  ddtree.sglang.sglang_release_info:
    path: /opt/sglang/releases/git-refs-pull-29907-head-1a2b3c4d5e6f
    required_algorithms:
      - DDTREE

- name: Also import it on a host with the GPU stack
  ddtree.sglang.sglang_release_info:
    path: /opt/sglang/releases/pypi-0.5.23-1a2b3c4d5e6f
    required_algorithms: [DDTREE]
    import_check: true
  register: release

- name: Check a unit's command line against the release's own flags
  ddtree.sglang.sglang_release_info:
    path: /opt/sglang/releases/pypi-0.5.23-1a2b3c4d5e6f
    argv: [--model-path, /srv/models/Qwen3.6-27B, --tp-size, "2", --cuda-graph-max-bs-decode, "8"]

- name: Show what it serves
  ansible.builtin.debug:
    msg: "{{ release.version }}: {{ release.algorithms | join(', ') }}"
"""

RETURN = r"""
version:
  description: Version from the installed distribution's metadata; V(null) for a source tree without dist-info.
  returned: always
  type: str
  sample: 0.5.23
package_dir:
  description: The C(sglang) package directory that was read.
  returned: always
  type: str
  sample: /opt/sglang/releases/pypi-0.5.23-1a2b3c4d5e6f/lib/python3.11/site-packages/sglang
spec_info_path:
  description: The file that defines C(SpeculativeAlgorithm).
  returned: always
  type: str
  sample: /opt/sglang/releases/pypi-0.5.23-1a2b3c4d5e6f/lib/python3.11/site-packages/sglang/srt/speculative/spec_info.py
algorithms:
  description: Members of C(SpeculativeAlgorithm), in source order.
  returned: always
  type: list
  elements: str
  sample: [DFLASH, DDTREE, UNO, DSPARK, EAGLE, EAGLE3, FROZEN_KV_MTP, STANDALONE, NGRAM, NONE]
aliases:
  description: Other names the server accepts, each mapped to the member it stands for (V(null) when unknown).
  returned: always
  type: dict
  sample: {NEXTN: EAGLE}
is_dflash:
  description: Members for which C(is_dflash()) is true; V(null) when it could not be read statically.
  returned: always
  type: list
  elements: str
  sample: [DFLASH]
ddtree:
  description:
    - How the release wires C(DDTREE), read statically (sgl-project/sglang PR 29907).
    - C(registered) whether C(DDTREE) is a member; C(worker) what C(create_worker()) selects for it (C(class),
      C(module), C(file), C(defined), C(line); or C(unknown) with the line that could not be decided; V(null) for
      none); C(budget_field) where C(speculative_ddtree_budget) is declared; C(hook) where C(_handle_ddtree) is
      defined; C(constraints) what that hook enforces (C(page_size) it refuses to differ from,
      C(disable_overlap_schedule) it turns on).
  returned: always
  type: dict
  sample:
    registered: true
    worker: {class: DDTreeWorker, module: sglang.srt.speculative.ddtree_worker, line: 337, defined: true,
             file: /opt/sglang/releases/x/lib/python3.11/site-packages/sglang/srt/speculative/ddtree_worker.py}
    budget_field: /opt/sglang/releases/x/lib/python3.11/site-packages/sglang/srt/arg_groups/fields/spec.py:74
    hook: /opt/sglang/releases/x/lib/python3.11/site-packages/sglang/srt/arg_groups/speculative_hook.py:449
    constraints: {page_size: 1, disable_overlap_schedule: true}
required_algorithms:
  description: The required names, upper-cased.
  returned: always
  type: list
  elements: str
  sample: [DDTREE]
problems:
  description: Why the release cannot serve the required algorithms; empty on success.
  returned: always
  type: list
  elements: str
  sample: []
direct_url:
  description: PEP 610 origin of the install (a git URL and commit, or a local file); V(null) for an index install.
  returned: always
  type: dict
  sample: {url: https://github.com/sgl-project/sglang, vcs_info: {vcs: git, commit_id: 0123abcd}}
flags:
  description:
    - What O(argv) was checked against; V(null) without O(argv).
    - C(options) how many options the release's parser has, C(parser) where it is built (file and line),
      C(prog) its name in error messages, C(checked) how many arguments of O(argv) were checked.
  returned: always
  type: dict
  sample: {options: 531, parser: "sglang/srt/server_args.py:679", prog: sglang serve, checked: 14}
flag_problems:
  description:
    - Each argument of O(argv) the release refuses; empty when it accepts them all.
    - C(flag) the flag as given; C(kind) V(unknown), V(ambiguous) or V(value); C(message) argparse's message as
      the server prints it; C(closest) the nearest real flag (for a value, the nearest allowed choice), or
      V(null).
  returned: always
  type: list
  elements: dict
  sample:
    - flag: --cuda-graph-max-bs
      kind: ambiguous
      message: "sglang serve: error: ambiguous option: --cuda-graph-max-bs could match --cuda-graph-max-bs-decode,
        --cuda-graph-max-bs-prefill"
      closest: --cuda-graph-max-bs-decode
adaptive:
  description:
    - How the release would run the unit's C(--speculative-adaptive), from its own rules; V(null) without it in O(argv).
    - C(adaptive) whether it would run adaptive; C(reason) and C(where) what C(adaptive_unsupported_reason()) returns
      and its line; C(warning) the line the server would log; C(problems) what would stop it at start; C(tiers) the
      tiers it would run (running batch size -> candidate steps, 0 is speculation off); C(not_checked) conditions the
      static reader could not decide; C(rules) where the rules were read.
  returned: always
  type: dict
  sample:
    adaptive: false
    reason: speculative_algorithm=DDTREE (only EAGLE/EAGLE3 are supported)
    where: sglang/srt/speculative/adaptive_spec_params.py:61
    warning: "speculative_adaptive disabled: speculative_algorithm=DDTREE (only EAGLE/EAGLE3 are supported). Falling
      back to static speculative params."
    problems: []
    tiers: null
    not_checked: []
    rules:
      source: sglang/srt/speculative/adaptive_spec_params.py
      warning: "sglang/srt/arg_groups/speculative_hook.py:1381"
import_check:
  description: What the release's python reported when it imported SGLang.
  returned: when O(import_check=true)
  type: dict
  sample: {version: 0.5.23, algorithms: [DFLASH, DDTREE, EAGLE, NONE], is_dflash: [DFLASH],
           accepted: {DDTREE: DDTREE}, ddtree_worker: DDTreeWorker}
"""

import json  # noqa: E402
import os  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils import _sglang_adaptive  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._sglang_flags import (  # noqa: E402
    SGLangSourceError,
    build_parser,
    check_argv,
    read_cli_options,
)
from ansible_collections.ddtree.sglang.plugins.module_utils._sglang_source import (  # noqa: E402
    DDTREE,
    DDTREE_WORKER,
    IMPORT_CHECK_SCRIPT,
    SglangSourceError,
    check_ddtree_wiring,
    check_requirements,
    find_package_dir,
    parse_import_check,
    read_ddtree_wiring,
    read_distribution,
    read_package,
)


class SglangReleaseInfo:
    """Read one release and compare it with what the profile needs."""

    def __init__(self, module):
        self.module = module
        self.params = module.params
        self.required = [name.upper() for name in self.params["required_algorithms"]]

    def run(self):
        try:
            package_dir = find_package_dir(self.params["path"])
            analysis = read_package(package_dir)
            wiring = read_ddtree_wiring(package_dir, analysis["spec_info_path"])
        except SglangSourceError as exc:
            self.module.fail_json(msg=f"Cannot read the SGLang release at {self.params['path']}: {exc}")
        distribution = read_distribution(package_dir)
        result = {
            "changed": False,
            "version": distribution["version"],
            "direct_url": distribution["direct_url"],
            "package_dir": package_dir,
            "spec_info_path": analysis["spec_info_path"],
            "algorithms": analysis["algorithms"],
            "aliases": analysis["aliases"],
            "is_dflash": analysis["is_dflash"],
            "ddtree": wiring,
            "required_algorithms": self.required,
        }
        problems = check_requirements(analysis, self.required)
        if DDTREE in self.required:
            problems.extend(check_ddtree_wiring(wiring))
        if self.params["import_check"]:
            result["import_check"] = self.import_check()
            problems.extend(self.runtime_problems(result["import_check"]))
        result["problems"] = problems
        if problems:
            version = distribution["version"] or "(unknown version)"
            result["msg"] = (
                f"SGLang {version} at {package_dir} cannot serve {', '.join(self.required)}: {'; '.join(problems)}"
            )
            self.module.fail_json(**result)
        table = self.check_flags(package_dir, result)
        self.check_adaptive(package_dir, table, result)
        self.module.exit_json(**result)

    @staticmethod
    def unregistered_algorithm(argv, result):
        """The argv's --speculative-algorithm when the release does not know it (a member or an alias)."""
        name = None
        for index, word in enumerate(argv):
            if word == "--speculative-algorithm" and index + 1 < len(argv):
                name = argv[index + 1]
            elif word.startswith("--speculative-algorithm="):
                name = word.split("=", 1)[1]
        if not name or name.upper() in result["algorithms"] or name.upper() in result["aliases"]:
            return None
        return name.upper()

    def check_flags(self, package_dir, result):
        """Check argv against the release's own argument definitions; fail naming what it refuses."""
        result["flags"] = None
        result["flag_problems"] = []
        argv = self.params["argv"]
        if argv is None:
            return None
        try:
            table = read_cli_options(package_dir)
        except SGLangSourceError as exc:
            self.module.fail_json(
                msg=f"Cannot read the command line options of the SGLang release at {package_dir}: {exc}"
            )
        problems = check_argv(table, argv)
        result["flags"] = {
            "options": len(table["options"]),
            "parser": table["parser_source"],
            "prog": table["prog"],
            "checked": len(argv),
        }
        result["flag_problems"] = problems
        if problems:
            release = f"SGLang {result['version'] or table['sglang_version'] or '(unknown version)'} at {package_dir}"
            details = "; ".join(
                f"{p['flag']}: {p['message']}"
                + (f" (closest real flag: {p['closest']})" if p["closest"] and p["kind"] != "value" else "")
                + (f" (closest choice: {p['closest']})" if p["closest"] and p["kind"] == "value" else "")
                for p in problems
            )
            flags = ", ".join(p["flag"] for p in problems)
            result["msg"] = (
                f"{release} refuses {flags}: the server would exit at start (status 2) with {details}. "
                f"Options are ServerArgs field names of this release; its parser is {table['parser_source']}."
            )
            # The result shows ddtree.registered false; say what that means for this unit, and
            # whether it is why a flag is refused (a flag of the algorithm, --speculative-ddtree-budget).
            missing = self.unregistered_algorithm(argv, result)
            if missing:
                prefix = f"--speculative-{missing.lower()}-"
                own = [p["flag"] for p in problems if p["flag"].startswith(prefix)]
                registered = " (ddtree.registered: false)" if missing == DDTREE else ""
                result["msg"] += (
                    f" This release does not register {missing}{registered}, which the unit's "
                    f"--speculative-algorithm {missing} needs"
                    + (f": that is why it has no {', '.join(own)}" if own else "")
                    + (
                        "; install SGLang PR #29907's build (docs/install.md)."
                        if missing == DDTREE
                        else "; install a build that adds it."
                    )
                )
            self.module.fail_json(**result)
        return table

    def adaptive_values(self, table, result):
        """The unit's options as the release parses them, the algorithm resolved as it resolves it (NEXTN: EAGLE)."""
        parsed = vars(build_parser(table).parse_known_args(self.params["argv"])[0])
        values = {k: v for k, v in parsed.items() if v is not None}
        algorithm = values.get("speculative_algorithm")
        if isinstance(algorithm, str):
            upper = algorithm.upper()
            values["speculative_algorithm"] = result["aliases"].get(upper) or upper
        return values

    def check_adaptive(self, package_dir, table, result):
        """--speculative-adaptive against the release's own rules: fail when it would not run adaptive, or not start."""
        result["adaptive"] = None
        if table is None:
            return
        values = self.adaptive_values(table, result)
        if not values.get(_sglang_adaptive.FIELD):
            return
        release = f"SGLang {result['version'] or table['sglang_version'] or '(unknown version)'} at {package_dir}"
        try:
            rules = _sglang_adaptive.read_rules(package_dir)
        except _sglang_adaptive.AdaptiveSourceError as exc:
            self.module.fail_json(msg=f"{release} cannot run --speculative-adaptive: {exc}; drop the adaptive variant.")
        config = None
        path = values.get(_sglang_adaptive.CONFIG_FIELD)
        if path:
            try:
                with open(path, encoding="utf-8") as handle:
                    config = json.load(handle)
            except (OSError, ValueError) as exc:
                self.module.fail_json(
                    msg=f"{release}: the unit's --speculative-adaptive-config {path} cannot be read as JSON ({exc}); "
                    "the server would fail at start. Write the tiers there (the release's shape: "
                    f"{rules['default_config_where']}) or drop the option."
                )
        verdict = _sglang_adaptive.check(rules, values, config)
        warning = rules.get("disabled_warning") or {}
        verdict["rules"] = {"source": rules["source"], "warning": warning.get("where")}
        result["adaptive"] = verdict
        if verdict["reason"] is not None:
            result["msg"] = (
                f"{release} would not run this unit adaptive: adaptive_unsupported_reason() says "
                f'"{verdict["reason"]}" ({verdict["where"]}), so at start the server logs "{verdict["warning"]}" '
                f"({warning.get('where')}) and serves static speculation. Drop the adaptive variant "
                "(--speculative-adaptive) from this unit, or change what the reason names (adaptive serves EAGLE, "
                "EAGLE3 and NEXTN)."
            )
            self.module.fail_json(**result)
        if verdict["problems"]:
            result["msg"] = (
                f"{release} would refuse --speculative-adaptive at start: {'; '.join(verdict['problems'])}. "
                "Give --speculative-num-steps one of the tiers' candidate steps, or fix the tiers."
            )
            self.module.fail_json(**result)

    def import_check(self):
        python = self.params["python"] or os.path.join(self.params["path"], "bin", "python")
        if not os.access(python, os.X_OK):
            self.module.fail_json(msg=f"import check: {python} is not an executable python; set python")
        rc, out, err = self.module.run_command(
            [python, "-c", IMPORT_CHECK_SCRIPT] + self.required,
            environ_update={"PYTHONDONTWRITEBYTECODE": "1"},
        )
        if rc != 0:
            tail = (err or out).strip().splitlines()[-1:] or ["(no output)"]
            self.module.fail_json(
                msg=f"import check: {python} could not import SGLang (rc {rc}): {tail[0]}; the runtime import "
                "check needs the full stack on the host (torch, ...), or set sglang_install_import_check: false",
                stderr=err,
                stdout=out,
            )
        try:
            return parse_import_check(out)
        except SglangSourceError as exc:
            self.module.fail_json(msg=f"import check: {exc}", stdout=out, stderr=err)

    def runtime_problems(self, report):
        problems = []
        for name in self.required:
            if not report.get("accepted", {}).get(name):
                problems.append(f"at run time SpeculativeAlgorithm.from_string({name!r}) fails")
            elif name == DDTREE and report.get("ddtree_worker") != DDTREE_WORKER:
                problems.append(f"at run time {DDTREE_WORKER} does not import: {report.get('ddtree_worker')}")
        return problems


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type="path", required=True),
            required_algorithms=dict(type="list", elements="str", default=[]),
            import_check=dict(type="bool", default=False),
            python=dict(type="path"),
            argv=dict(type="list", elements="str"),
        ),
        supports_check_mode=True,
    )
    SglangReleaseInfo(module).run()


if __name__ == "__main__":
    main()
