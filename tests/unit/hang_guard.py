# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How long a test waits for a child process (ansible-playbook, a script, a module) before calling it hung.

The seconds a test names are a guard against a hang, not a bound on speed (the `wallclock` tests bound speed, alone,
one at a time). They fit a machine the test has to itself. scripts/test runs the ansible-core matrix at nice 19
beside molecule, where a child waits minutes for a core: at 8a2cd50 CI's matrix failed test_filter_error_types
because its play, 6.8 s quiet on ansible-core 2.16, passed its 300 s guard there (more than 44 times slower). So the
stage that runs tests so starved says so, in DDTREE_TEST_HANG_GUARD_FACTOR, and every guard stretches by it."""

import os


def hang_guard(seconds):
    """``seconds`` times DDTREE_TEST_HANG_GUARD_FACTOR (1 when unset)."""
    factor = os.environ.get("DDTREE_TEST_HANG_GUARD_FACTOR", "1")
    try:
        factor = float(factor)
    except ValueError:
        raise ValueError(f"DDTREE_TEST_HANG_GUARD_FACTOR must be a number, e.g. 10; got {factor!r}") from None
    if factor < 1:
        raise ValueError(f"DDTREE_TEST_HANG_GUARD_FACTOR stretches the guards, so it is 1 or more; got {factor!r}")
    return seconds * factor
