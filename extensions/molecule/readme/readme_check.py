# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Follow the README as a new user does, then check that the docs quote what it printed.

  readme_check.py run   --repo R --out DIR --prefix P
  readme_check.py check --repo R --out DIR --prefix P
  readme_check.py clean --repo R --out DIR --prefix P

run: from the clone R, in a root shell's environment (nothing of the test runner's Ansible,
molecule or DDTREE_* settings, only DDTREE_DEMO_PREFIX=P so the demo's hosts are this run's):
  1. the Quick start's `scripts/demo`;
  2. the commands of "Using it on real hosts", as written and in their order: the first
     block for real against the demo hosts (`source .venv/bin/activate`, probe, deploy to
     ct129-sim, rollback); the real-host block with `-i inventories/production` left out and
     each host named by its demo twin (ct129 -> ct129-sim), with --list-hosts.
Each command's output (stdout and stderr, as a terminal shows them), exit status and new
report directories go to DIR/transcript.json.

check: every quote the README, the docs that quote what a command prints (DOCS_QUOTING_OUTPUT)
and llm_probe's documentation make of the demo is compared with what was printed: the demo's
outcome lines, run summary and failure message must be quoted where the docs say so, and every
outcome line (`ct129-sim: ROLLED BACK ...`) or probe verdict (`serving EAGLE on SGLang ...`)
any of those docs quotes must be one the demo printed. Figures measured per run
(decimals: tok/s, seconds, gains) and this run's report directory are the only parts that
may differ. Prints each mismatch with the doc, the line printed and the fix; exit 1 on any.

clean: removes the report directories the run wrote into R/reports/.
"""

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml  # the venv's: the scenario runs this script with its python

# Decimals are measured per run (tok/s, seconds, gains, accept lengths); integers are
# settings (max_ttft's 4 s, host counts) and must match.
MEASURED = re.compile(r"[+-]?\d+\.\d+")
REAL_HOSTS = "## Using it on real hosts"
# The docs that quote what a command of the demo prints (docs/bake.md, docs/probe.md and
# docs/awx.md quote other scenarios' output, which those scenarios' verifiers check; they are
# scanned too, so a quote of the demo's lines there cannot go stale unnoticed).
DOCS_QUOTING_OUTPUT = (
    "README.md",
    "docs/user-guide.md",
    "docs/deploy.md",
    "docs/probe.md",
    "docs/bake.md",
    "docs/awx.md",
    "docs/install.md",
)
SERVING = re.compile(r"serving \w+ on SGLang \S+?(?=[:`])")


def fold(text):
    """Text with line breaks and indentation folded to single spaces (Markdown wraps)."""
    return " ".join(text.split())


def norm(text):
    return fold(MEASURED.sub("#", text))


# --- run -------------------------------------------------------------------------------------


def user_env(prefix):
    """A root shell's environment: what a new user has, plus the demo's container prefix."""
    env = {
        "HOME": os.environ.get("HOME", "/root"),
        "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "DDTREE_DEMO_PREFIX": prefix,
    }
    return env


def readme_commands(repo):
    """[(command line, is a real-host command)] of the README's "Using it on real hosts"."""
    section = (repo / "README.md").read_text().split(REAL_HOSTS, 1)[1].split("\n## ", 1)[0]
    commands = []
    for index, block in enumerate(re.findall(r"```sh\n(.*?)```", section, re.S)):
        for line in block.splitlines():
            line = line.split("#", 1)[0].strip()
            if line:
                commands.append((line, index > 0))
    return commands


def demo_twin(command, hosts):
    """A real-host command on the demo: no -i (ansible.cfg's demo inventory), demo host names."""
    argv = shlex.split(command)
    if "-i" in argv:
        i = argv.index("-i")
        if argv[i + 1] != "inventories/production":
            raise SystemExit(f"README: {command}: the real-host commands name inventories/production")
        del argv[i : i + 2]
    want = hosts
    if "-l" in argv:
        i = argv.index("-l")
        argv[i + 1] = argv[i + 1] if argv[i + 1] in hosts else argv[i + 1] + "-sim"
        want = [argv[i + 1]]
    return shlex.join([*argv, "--list-hosts"]), want


def report_dirs(repo):
    reports = repo / "reports"
    return {p.name for p in reports.iterdir()} if reports.is_dir() else set()


def run_one(repo, prefix, shell_line, setup=""):
    before = report_dirs(repo)
    start = time.monotonic()
    proc = subprocess.run(
        ["bash", "-c", f"{setup}{shell_line}"],
        cwd=repo,
        env=user_env(prefix),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        check=False,  # the exit status is part of what is checked
    )
    return {
        "command": shell_line,
        "rc": proc.returncode,
        "seconds": round(time.monotonic() - start, 1),
        "output": proc.stdout,
        "new_reports": sorted(report_dirs(repo) - before),
    }


def run(args):
    repo, out = Path(args.repo).resolve(), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    hosts = demo_hosts(repo)
    transcript = {"prefix": args.prefix, "demo": None, "commands": []}
    print("$ scripts/demo", flush=True)
    transcript["demo"] = run_one(repo, args.prefix, "scripts/demo")
    print(f"  exit {transcript['demo']['rc']} after {transcript['demo']['seconds']} s", flush=True)
    # The README's first line is `source .venv/bin/activate`; each command runs after it.
    activate = ""
    for command, real_hosts in readme_commands(repo):
        if command.startswith("source "):
            activate = command + " && "
            continue
        want = None
        if real_hosts:
            command, want = demo_twin(command, hosts)
        print(f"$ {command}", flush=True)
        result = run_one(repo, args.prefix, command, activate)
        result["listed_hosts_wanted"] = want
        transcript["commands"].append(result)
        print(f"  exit {result['rc']} after {result['seconds']} s", flush=True)
    (out / "transcript.json").write_text(json.dumps(transcript, indent=1) + "\n")


def clean(args):
    repo, transcript_path = Path(args.repo).resolve(), Path(args.out) / "transcript.json"
    if not transcript_path.exists():
        return
    transcript = json.loads(transcript_path.read_text())
    for result in [transcript["demo"], *transcript["commands"]]:
        for name in (result or {}).get("new_reports", []):
            shutil.rmtree(repo / "reports" / name, ignore_errors=True)


# --- check -----------------------------------------------------------------------------------


def demo_hosts(repo):
    return list(yaml.safe_load((repo / "inventories/demo/hosts.yml").read_text())["sglang_servers"]["hosts"])


class Checker:
    def __init__(self, repo, transcript):
        self.repo = repo
        self.transcript = transcript
        self.failures = []
        self.checked = 0

    def doc(self, name):
        return (self.repo / name).read_text()

    def expect(self, ok, what, fix=""):
        self.checked += 1
        if not ok:
            self.failures.append(f"{what}" + (f"\n    fix: {fix}" if fix else ""))

    def quotes(self, doc, printed, what):
        """The doc quotes the printed text, measured figures aside."""
        self.expect(
            norm(printed) in norm(self.doc(doc)),
            f"{doc} does not quote {what} as it was printed:\n    printed: {fold(printed)}",
            f"quote that text in {doc} (figures with decimals may differ)",
        )

    def unpathed(self, text, run_id):
        """This run's report paths as the docs write them."""
        return text.replace(f"{self.repo}/reports/{run_id}/", "reports/<run id>/")


def quoted_outcome_lines(text, hosts):
    """The lines of a doc's code blocks that quote a demo host's outcome line (`<host>: DEPLOYED ...`)."""
    quoted = []
    for block in re.findall(r"```[a-z]*\n(.*?)```", text, re.S):
        for line in block.splitlines():
            host = line.split(": ", 1)[0]
            if host in hosts and re.match(rf"{re.escape(host)}: [A-Z][A-Z ]+\b", line):
                quoted.append(line)
    return quoted


def report(repo, run_id, host):
    return json.loads((repo / "reports" / run_id / f"{host}.json").read_text())


def progress_lines(output):
    """The demo's own lines ("[ddtree] ..."), without their prefix and time."""
    lines = []
    for line in output.splitlines():
        # scripts/lib's set-up lines have no time; the progress callback's have one.
        m = re.match(r"\[ddtree\] (?:\d\d:\d\d:\d\d )?(.*)$", line)
        if m:
            lines.append(m.group(1))
    return lines


def printed_msgs(output, host):
    """The msg of every `ok: [host] => {"msg": ...}` of the default callback's output."""
    msgs = []
    for block in re.findall(rf"ok: \[{re.escape(host)}\] => (\{{.*?\n\}})", output, re.S):
        msgs.append(json.loads(block).get("msg", ""))
    return msgs


def check_demo(c, prefix):
    demo = c.transcript["demo"]
    out = demo["output"]
    hosts = demo_hosts(c.repo)
    c.expect(demo["rc"] == 2, f"scripts/demo ended with exit {demo['rc']}, not 2 as the README says:\n{out[-3000:]}")
    expected = "Demo outcome as expected: 1 deployed, 1 rolled back"
    c.expect(expected in out, f"scripts/demo did not print '{expected}'")
    c.expect(fold(expected) in fold(c.doc("README.md")), f"README.md does not quote '{expected}'")

    # The log's path comes first, before the play starts.
    lines = progress_lines(out)
    log_at = [i for i, ln in enumerate(lines) if ln.startswith("full Ansible log: ")]
    play_at = [i for i, ln in enumerate(lines) if ln.startswith("play: ")]
    c.expect(log_at and play_at and log_at[0] < play_at[0], "scripts/demo did not print the log's path before the play")
    run_id = None
    if log_at:
        log = Path(lines[log_at[0]].split(": ", 1)[1])
        c.expect(log.is_file() and log.stat().st_size > 10000, f"the demo's log {log} is missing or nearly empty")
        c.quotes("README.md", c.unpathed(str(log), log.parent.name), "the demo's log path")
        run_id = log.parent.name

    # Each failure once (issue 38): ct129-sim's one failure is one line, said when it happens; no outcome before
    # it happened (restore_failed, before the restore ran); an ignored failure is not the host's.
    failed = [ln for ln in lines if " FAILED: " in ln]
    c.expect(failed, "scripts/demo printed no failure line for ct129-sim")
    c.expect(len(failed) == len(set(failed)), "scripts/demo printed a failure twice:\n    " + "\n    ".join(failed))
    c.expect(
        [ln.split()[0] for ln in failed] == ["ct129-sim"],
        "scripts/demo did not print ct129-sim's failure as one line:\n    " + "\n    ".join(failed),
    )
    c.expect(
        not any("restore_failed" in ln or "(ignored)" in ln for ln in lines),
        "scripts/demo printed an outcome before it happened, or an ignored failure:\n    " + "\n    ".join(lines),
    )

    # Container names: the docs name the demo's default prefix + each host.
    default_prefix = re.search(r'DDTREE_DEMO_PREFIX="\$\{DDTREE_DEMO_PREFIX:-([^}]+)\}"', c.doc("scripts/demo")).group(
        1
    )
    made = re.search(r"creating the simulated GPU hosts: (.*)$", "\n".join(lines), re.M)
    c.expect(made is not None, "scripts/demo did not name the hosts it creates")
    names = [default_prefix + n[len(prefix) :] for n in (made.group(1).split() if made else []) if n.startswith(prefix)]
    c.expect(sorted(names) == sorted(default_prefix + h for h in hosts), f"the demo created {made and made.group(1)}")
    for doc in ("README.md", "docs/user-guide.md"):
        text = c.doc(doc)
        for name in names:
            c.expect(f"`{name}`" in text, f"{doc} does not name the container `{name}` the demo creates")
        for name in re.findall(r"podman exec (\S+)", text):
            c.expect(name in names, f"{doc}: `podman exec {name}`: the demo creates no such container ({names})")
    if not run_id:
        return

    # Each host's report: outcome, cause, fix; "none" is null for every host. A demo that stopped before the
    # reports is a mismatch like the others, shown with the demo's own output above, not a traceback that hides it.
    missing = [h for h in hosts if not (c.repo / "reports" / run_id / f"{h}.json").is_file()]
    c.expect(not missing, f"scripts/demo wrote no report for {', '.join(missing)} in reports/{run_id}/")
    if missing:
        return
    reports = {h: report(c.repo, run_id, h) for h in hosts}
    c.expect(reports["ct200-sim"]["outcome"] == "deployed", f"ct200-sim: {reports['ct200-sim']['outcome']}")
    c.expect(reports["ct129-sim"]["outcome"] == "rolled_back", f"ct129-sim: {reports['ct129-sim']['outcome']}")
    for host, rep in reports.items():
        for key in ("outcome", "cause", "fix"):
            c.expect(key in rep and rep[key] != "", f"{host}.json: '{key}' missing or \"\" (none is null)")
    c.expect(bool(reports["ct129-sim"]["fix"]), "ct129-sim.json has no fix for its rollback")
    # The collection's own answer to a class the profile fails on: the candidate ladder, or a tune (issue 38).
    c.expect(
        all(w in (reports["ct129-sim"]["fix"] or "") for w in ("ddtree_deploy_candidate_list", "ddtree.sglang.tune")),
        f"ct129-sim's fix does not name the candidate ladder and the tune: {reports['ct129-sim']['fix']}",
    )
    cause = reports["ct129-sim"]["cause"] or ""
    c.quotes("README.md", f"`{cause}`", "ct129-sim's cause")

    # Each host's outcome line, as the demo printed it (the role's "Say how it went").
    printed = {}
    for host in hosts:
        said = [
            ln.split(None, 1)[1]
            for ln in lines
            if ln.startswith(f"{host} ") and ln.split(None, 1)[1].startswith(f"{host}: ")
        ]
        c.expect(len(said) == 1, f"scripts/demo printed {len(said)} outcome lines for {host}")
        for line in said:
            c.quotes("docs/user-guide.md", line, f"{host}'s outcome line")
        printed[host] = said
    # And the other way round: no doc quotes an outcome line the demo no longer prints.
    for doc in DOCS_QUOTING_OUTPUT:
        for line in quoted_outcome_lines(c.doc(doc), hosts):
            host = line.split(": ", 1)[0]
            c.expect(
                any(norm(line) == norm(said) for said in printed.get(host, [])),
                f"{doc} quotes an outcome line the demo did not print:\n    quoted:  {line}"
                f"\n    printed: {printed.get(host)}",
                f"quote the line as the demo prints it in {doc}",
            )

    # The run summary and what to do next.
    summary = out.split("# DDTree deploy ", 1)[-1].split("\nReports: ", 1)[0]
    quoted = [ln for ln in summary.splitlines() if ln.startswith(("**", "| host |", "| ct", "- **"))]
    c.expect(len(quoted) >= 5, f"scripts/demo printed no run summary:\n{summary[-2000:]}")
    for line in quoted:
        c.quotes("docs/deploy.md", c.unpathed(line, run_id), "a line of the demo's run summary")

    # llm_probe's documentation says what it printed on ct129-sim.
    api, _sep, msg = cause.partition(": ")
    docs = module_docs(c.repo, "ddtree.sglang.llm_probe")
    c.expect(api == "completions", f"ct129-sim failed on {api}, not on completions, the first API probed")
    c.expect(docs["return"]["msg"]["sample"] == msg, f"llm_probe RETURN msg sample is not '{msg}'")
    c.expect(docs["return"]["reasons"]["sample"] == [msg], f"llm_probe RETURN reasons sample is not ['{msg}']")
    c.expect(
        f"C({msg})" in fold(" ".join(docs["doc"]["description"])), f"llm_probe's description does not quote C({msg})"
    )


def module_docs(repo, module):
    """ansible-doc's JSON of a module, as the clone resolves it (ansible.cfg)."""
    proc = subprocess.run(
        [sys.executable, "-m", "ansible.cli.doc", "--json", module],
        cwd=repo,
        env=user_env(""),  # the venv's python runs it (sys.executable): no PATH of its own needed
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(proc.stdout)[module]


def listed_hosts(output):
    """The hosts `ansible-playbook --list-hosts` lists, one list per play (deploy_ddtree.yml has two).

    Each play's list is the lines of one host name each under its `hosts (N):`; a list whose
    length is not its N comes back as printed with a note, so it cannot equal a wanted list.
    """
    plays = []
    for m in re.finditer(r"^[ \t]+hosts \((\d+)\):\n((?:[ \t]+\S+[ \t]*(?:\n|$))*)", output, re.M):
        names = m.group(2).split()
        plays.append(names if len(names) == int(m.group(1)) else [*names, f"(hosts ({m.group(1)}) printed)"])
    return plays


def check_commands(c):
    hosts = demo_hosts(c.repo)
    ran = {r["command"]: r for r in c.transcript["commands"]}
    by_playbook = {}
    for result in c.transcript["commands"]:
        out = result["output"]
        if result["listed_hosts_wanted"] is not None:
            wanted = sorted(result["listed_hosts_wanted"])
            plays = listed_hosts(out)
            c.expect(
                result["rc"] == 0 and plays and all(sorted(hosts) == wanted for hosts in plays),
                f"README real-host command on the demo: {result['command']} (exit {result['rc']}) listed "
                f"{plays or 'no hosts'} (one list per play), not {wanted} in every play:\n{out[-2000:]}",
                "the README's real-host commands must select, on the demo, each host's demo twin",
            )
            continue
        by_playbook[shlex.split(result["command"])[1]] = result
    c.expect(
        set(by_playbook) == {"playbooks/probe.yml", "playbooks/deploy_ddtree.yml", "playbooks/rollback.yml"},
        f"README commands run: {list(ran)}",
    )

    probe = by_playbook.get("playbooks/probe.yml")
    if probe:
        c.expect(probe["rc"] == 0, f"{probe['command']}: exit {probe['rc']}:\n{probe['output'][-3000:]}")
        serving = {h: [m for m in printed_msgs(probe["output"], h) if m.startswith("serving ")] for h in hosts}
        c.expect(all(serving.values()), f"{probe['command']} did not say what each host serves: {serving}")
        c.expect(
            any(m.startswith("serving DDTREE on SGLang ") for m in serving.get("ct200-sim", [])),
            f"ct200-sim: {serving.get('ct200-sim')}",
        )
        c.expect(
            any(m.startswith("serving EAGLE on SGLang ") for m in serving.get("ct129-sim", [])),
            f"ct129-sim: {serving.get('ct129-sim')}",
        )
        for doc in DOCS_QUOTING_OUTPUT:
            for said in SERVING.findall(fold(c.doc(doc))):
                c.expect(
                    any(said in m for ms in serving.values() for m in ms),
                    f"{doc} quotes '{said}', which the probe did not print",
                )

    deploy = by_playbook.get("playbooks/deploy_ddtree.yml")
    if deploy:
        out = deploy["output"]
        c.expect(
            deploy["rc"] == 2, f"{deploy['command']}: exit {deploy['rc']}, not 2 (a rolled-back host):\n{out[-3000:]}"
        )
        # Once: ansible.cfg's stdout callback (ddtree_default) prints the [ERROR] line and leaves the
        # same message out of the fatal line below it.
        said = [ln for ln in out.splitlines() if "ROLLED BACK on ct129-sim" in ln]
        c.expect(len(said) == 1, f"{deploy['command']} printed the rollback message {len(said)} times, not once")
        message = re.search(r"^\[ERROR\]: Task failed: Action failed: (ROLLED BACK on ct129-sim: .*)$", out, re.M)
        c.expect(message is not None, f"{deploy['command']} printed no 'ROLLED BACK on ct129-sim' failure")
        c.expect(
            len(deploy["new_reports"]) == 1, f"{deploy['command']} wrote reports {deploy['new_reports']}, not one run"
        )
        if message and len(deploy["new_reports"]) == 1:
            run_id = deploy["new_reports"][0]
            c.quotes("docs/deploy.md", c.unpathed(message.group(1), run_id), "the deploy's failure message")
            rep = report(c.repo, run_id, "ct129-sim")
            c.expect(
                rep["outcome"] == "rolled_back" and rep["fix"],
                f"reports/{run_id}/ct129-sim.json: {rep['outcome']}, fix {rep['fix']!r}",
            )

    rollback = by_playbook.get("playbooks/rollback.yml")
    if rollback:
        # The deploy rolled ct129-sim back already: its unit is the last-known-good, byte for byte, and
        # serving, so the rollback changes nothing and restarts nothing (and says so), then proves it.
        said = [m for m in printed_msgs(rollback["output"], "ct129-sim") if "already is the last-known-good" in m]
        c.expect(
            rollback["rc"] == 0
            and said
            and "nothing changed, not restarted; verified: " in said[0]
            and re.search(r"ct129-sim\s+: ok=\d+\s+changed=0 ", rollback["output"]) is not None,
            f"{rollback['command']}: exit {rollback['rc']}:\n{rollback['output'][-3000:]}",
        )


def check(args):
    repo = Path(args.repo).resolve()
    transcript = json.loads((Path(args.out) / "transcript.json").read_text())
    c = Checker(repo, transcript)
    check_demo(c, transcript["prefix"])
    check_commands(c)
    for failure in c.failures:
        print(f"MISMATCH: {failure}\n")
    print(f"{c.checked - len(c.failures)} of {c.checked} checks of the docs against the demo's output passed")
    return 1 if c.failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("action", choices=["run", "check", "clean"])
    parser.add_argument("--repo", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--prefix", required=True)
    args = parser.parse_args()
    return {"run": run, "check": check, "clean": clean}[args.action](args) or 0


if __name__ == "__main__":
    sys.exit(main())
