# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The tests' guard against a hung child stretches where scripts/test starves them (the matrix, at nice 19)."""

import re
from pathlib import Path

import pytest
from hang_guard import hang_guard

REPO = Path(__file__).resolve().parents[2]


def test_a_guard_is_as_written_unless_the_stage_stretches_it(monkeypatch):
    monkeypatch.delenv("DDTREE_TEST_HANG_GUARD_FACTOR", raising=False)
    assert hang_guard(300) == 300
    monkeypatch.setenv("DDTREE_TEST_HANG_GUARD_FACTOR", "10")
    assert hang_guard(300) == 3000


@pytest.mark.parametrize("factor", ["ten", "0.5"])
def test_a_factor_that_would_not_stretch_is_refused_by_name(monkeypatch, factor):
    monkeypatch.setenv("DDTREE_TEST_HANG_GUARD_FACTOR", factor)
    with pytest.raises(ValueError, match="DDTREE_TEST_HANG_GUARD_FACTOR"):
        hang_guard(300)


def test_the_matrix_stage_stretches_the_guards():
    script = (REPO / "scripts" / "test").read_text()
    factor = re.search(r"^MATRIX_HANG_GUARD_FACTOR=(\d+)$", script, re.M)
    assert factor and int(factor.group(1)) > 1, "scripts/test sets no MATRIX_HANG_GUARD_FACTOR"
    body = script[script.index("stage_matrix() {") :]
    body = body[: body.index("\n}\n")]
    assert 'export DDTREE_TEST_HANG_GUARD_FACTOR="$MATRIX_HANG_GUARD_FACTOR"' in body


def test_no_child_process_in_the_unit_tests_waits_on_a_guard_of_its_own():
    """A subprocess guard written as a bare number is not stretched in the matrix: each goes through hang_guard."""
    bare = []
    for path in (REPO / "tests" / "unit").rglob("*.py"):
        text = path.read_text()
        if "subprocess" not in text:
            continue
        lines = text.splitlines()
        for n, line in enumerate(lines, 1):
            # the call's own line, or a `timeout=N,` line of a subprocess.run( call written over several lines
            if re.search(r"(subprocess\.run\(|\.wait\(|\.communicate\().*timeout=\d", line) or (
                re.search(r"^\s+timeout=\d+,\s*$", line)
                and any("subprocess.run(" in ln for ln in lines[max(0, n - 12) : n])
            ):
                bare.append(f"{path.relative_to(REPO)}:{n}: {line.strip()}")
    assert not bare, "guards not stretched by hang_guard:\n" + "\n".join(bare)
