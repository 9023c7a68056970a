# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Adding a deploy stage costs at most four files, and docs/architecture.md says which (issue 37, items 7, 9).

The last stage added to _deploy_record.STAGES is found in git's history (the commit that introduced its
entry); "How to add a deploy step" must name no file that commit did not need, and the commit needed at most
four. A how-to that drifts from what a stage really costs fails here."""

import re
import subprocess
from pathlib import Path

from ansible_collections.ddtree.sglang.plugins.module_utils import _deploy_record as dr

ROOT = Path(__file__).resolve().parents[2]
RECORD = "plugins/module_utils/_deploy_record.py"


def git(*args):
    proc = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, f"git {' '.join(args)}: {proc.stderr} (the test reads the repository's history)"
    return proc.stdout


def introduced(name):
    """(commit time, hash) of the commit that added the stage's entry to STAGES."""
    out = git("log", "--format=%ct %H", "--reverse", "-S", f'"name": "{name}"', "--", RECORD).split()
    assert out, f"no commit in git's history added the stage {name!r} to {RECORD}"
    return int(out[0]), out[1]


def howto_files():
    """The paths the steps of "How to add a deploy step" name (backticked, with a '/'), as patterns over a
    commit's files. The steps are its numbered list; the paragraph after it explains."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    section = text.split("### How to add a deploy step", 1)[1].split("\n#", 1)[0].strip()
    section = section.split("\n\n", 1)[0]
    assert re.match(r"1\. ", section), "'How to add a deploy step' begins with its numbered steps"
    named = [t for t in re.findall(r"`([^`]+)`", section) if "/" in t and re.fullmatch(r"[\w./<>-]+", t)]
    patterns = {}
    for path in named:
        regex = re.escape(path).replace(r"\<", "<").replace(r"\>", ">")
        regex = re.sub(r"<[^>]+>", r"[^/]+", regex) + (".*" if path.endswith("/") else "")
        patterns[path] = re.compile(regex)
    return patterns


def test_the_howto_names_the_files_the_last_added_stage_needed_and_no_more():
    when, commit = max(introduced(name) for name in dr.STAGE_NAMES)
    files = git("show", "--name-only", "--format=", commit).split()
    patterns = howto_files()
    assert patterns, "docs/architecture.md's 'How to add a deploy step' names no file"
    unneeded = [path for path, regex in patterns.items() if not any(regex.fullmatch(f) for f in files)]
    assert not unneeded, (
        f"'How to add a deploy step' names {unneeded}, which the last stage added ({commit[:10]}) did not need: "
        f"it changed {files}"
    )
    unnamed = [f for f in files if not any(regex.fullmatch(f) for regex in patterns.values())]
    assert not unnamed, f"the last stage added ({commit[:10]}) needed {unnamed}, which the how-to does not name"
    assert len(files) <= 4, f"the last stage added ({commit[:10]}) needed {len(files)} files: {files}"
