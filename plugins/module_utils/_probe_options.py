# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The probe's options and their defaults: the one copy.

``_probe.Probe`` fills unset options from here and ``llm_probe``'s argument_spec takes its
defaults from here (its DOCUMENTATION repeats them, and ansible-test's validate-modules fails
when the two differ). Kept apart from ``_probe`` because that needs requests, and the module
must build its argument_spec (and say that requests is missing) without it. Roles that probe
(``ddtree_deploy``) leave an option unset to get these defaults.
"""

from __future__ import absolute_import, division, print_function

# Why each threshold is what it is:
# - max_ttft 4 s: a first token for a 1-word prompt takes well under 1 s on every supported GPU
#   class (a 27B model's prefill of a few tokens is tens of ms, and SGLang warms up before /health
#   says ready), so 4 s is ample room for a busy server. It also keeps the field report's failure
#   (first token at 17.6 s) judged 4 s after the request: Ansible itself needs 2-4 s to start the
#   module on a loaded controller, and the whole run must end within 10 s.
# - min_tokens_per_second 5: the slowest supported class decodes a 27B model at 15+ tok/s
#   without speculation; below 5 tok/s a server is unusable, and the field report's 0.057 tok/s
#   is two orders of magnitude lower, so the margin is wide both ways.
# - timeout 30 s: the budget of the probe proper; with the defaults a healthy server answers
#   8 tokens in well under a second, and a failing one is judged by the thresholds first.
DEFAULTS = {
    "api": "completions",
    "model": None,
    "prompt": "Hello",
    "messages": None,
    "max_tokens": 8,
    "temperature": 0.0,
    "stream": True,
    "timeout": 30.0,
    "wait_ready": 0.0,
    "ready_path": "/health",
    "api_key": None,
    "validate_certs": True,
    "headers": None,
    "min_tokens_per_second": 5.0,
    "max_ttft": 4.0,
    "min_completion_tokens": 1,
    "expect_finish_reason": None,
    "expect": None,
    "degenerate": "fail",
}
