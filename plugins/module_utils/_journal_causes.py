# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Known reasons an SGLang server dies, as data: journal pattern -> cause and fix.

The table is ordered from the most specific pattern to the most generic one, because one
crash often prints several of them (a hidden-size mismatch ends in a RuntimeError, a CUDA
OOM is sometimes followed by an ImportError-free traceback of the scheduler, ...). The
first entry whose pattern matches any journal line wins. Fixes name the SGLang option
(ServerArgs field, as the role's ``sglang_extra_args`` takes it) or the role variable to
change, so an operator can act on the message without reading SGLang's source.

Used by the ``sglang_wait`` module (fail fast when the unit dies) and by anything else that
holds journal lines of an SGLang unit.
"""

from __future__ import absolute_import, division, print_function

import re
from collections import namedtuple

JournalCause = namedtuple("JournalCause", ["id", "patterns", "cause", "fix"])

UNKNOWN_CAUSE_ID = "unknown"

CAUSES = (
    JournalCause(
        id="hidden_size_mismatch",
        patterns=(
            # The field report: a DDTree draft fed the target's final hidden state (5120)
            # where DFlash expects the concatenated captured layers (25600).
            r"hidden[ _-]?size mismatch",
            r"mat1 and mat2 shapes cannot be multiplied",
            r"size of tensor a \(\d+\) must match the size of tensor b \(\d+\)",
        ),
        cause="The draft model received hidden states of the wrong size (a DDTree/DFlash "
        "hidden-size mismatch, e.g. 5120 vs 25600): the target did not capture the layers the "
        "DFlash-family draft expects.",
        fix="Use an SGLang build where DDTREE is treated as DFLASH for hidden-layer capture "
        "(SpeculativeAlgorithm.is_dflash() must include DDTREE; install the patched release with "
        "the sglang_install role), and check that sglang_draft_model_path is the draft trained for "
        "this target model.",
    ),
    JournalCause(
        id="no_kernel_image",
        patterns=(r"no kernel image is available for execution on the device",),
        cause="A CUDA kernel was not built for this GPU architecture; usually the attention "
        "backend does not support it (fa3 is sm90 only; trtllm_mha and fa4 do not run on sm120).",
        fix="Let the GPU class pick the attention backend (remove attention_backend from "
        "sglang_extra_args, or set sglang_gpu_class to the host's real class), or set "
        "attention_backend to flashinfer or triton.",
    ),
    JournalCause(
        id="mem_fraction_too_low",
        patterns=(r"Not enough memory\.? .*increase --mem-fraction-static",),
        cause="SGLang found no GPU memory left for the KV cache pool after loading the weights "
        "(Not enough memory; increase --mem-fraction-static).",
        fix="Raise mem_fraction_static (e.g. the 'balanced' variant sets 0.85, or "
        "sglang_extra_args: {mem_fraction_static: 0.88}), or shrink what sits outside the pool: "
        "the 'small' variant (32K context_length, 4 max_running_requests), or more GPUs (tp_size).",
    ),
    JournalCause(
        id="cuda_oom",
        patterns=(
            r"CUDA out of memory",
            r"torch\.(cuda\.)?OutOfMemoryError",
            r"CUDA error: out of memory",
        ),
        cause="CUDA ran out of GPU memory after the static pool was reserved (CUDA graphs, "
        "activations or the draft model did not fit).",
        fix="Lower mem_fraction_static, lower cuda_graph_max_bs or disable CUDA graphs (the "
        "'nograph' variant), shrink the draft tree (speculative_ddtree_budget / "
        "speculative_num_draft_tokens) or max_running_requests (the 'small' variant).",
    ),
    JournalCause(
        id="address_in_use",
        patterns=(r"Address already in use", r"\[Errno 98\]"),
        cause="The server's port is already taken by another process (often a previous server or "
        "a second unit on the same port).",
        fix="Stop whatever listens on the port (ss -ltnp 'sport = :PORT'), or set sglang_port to a free port.",
    ),
    JournalCause(
        id="import_error",
        patterns=(r"ModuleNotFoundError: .*", r"ImportError: .*"),
        cause="The SGLang environment is incomplete: a Python module could not be imported.",
        fix="Check sglang_launch_command points at the release venv's python "
        "(sglang_install_release_python) and re-run the sglang_install role to repair that venv.",
    ),
    JournalCause(
        id="invalid_args",
        patterns=(
            # argparse's own error line, and ServerArgs.__post_init__ refusing a combination
            r"launch_server(\.py)?: error: ",
            r"server_args\.py\", line \d+, in __post_init__",
        ),
        cause="SGLang rejected its command line (an unknown flag, or a combination ServerArgs refuses, "
        "e.g. DFLASH/DDTREE without a draft model, or a draft block size that differs from "
        "speculative_num_draft_tokens).",
        fix="Read the error line below; correct the option in sglang_extra_args, sglang_profile_variants "
        "or sglang_draft_model_path, or install an SGLang release that knows the flag (sglang_install).",
    ),
    JournalCause(
        id="model_not_found",
        patterns=(
            r"does not appear to have a file named config\.json",
            r"Can't load the configuration of",
            r"No such file or directory: .*config\.json",
            r"Repo id must be in the form",
        ),
        cause="The model (or draft model) path does not hold a Hugging Face model directory.",
        fix="Set sglang_model_path / sglang_draft_model_path to a directory on the host that "
        "contains config.json and the weights.",
    ),
    JournalCause(
        id="no_gpu",
        patterns=(
            r"Found no NVIDIA driver on your system",
            r"no CUDA-capable device is detected",
            r"CUDA driver version is insufficient",
        ),
        cause="The server cannot use the GPUs: the NVIDIA driver is missing, not loaded, or too old "
        "for this CUDA build.",
        fix="Check nvidia-smi on the host and the driver version against the CUDA version of the "
        "SGLang release; the unit must not hide /dev/nvidia* (no PrivateDevices).",
    ),
)

_COMPILED = tuple((cause, tuple(re.compile(p, re.IGNORECASE) for p in cause.patterns)) for cause in CAUSES)


def match_cause(lines, tail=20):
    """Return the first known cause found in ``lines`` (journal messages, oldest first).

    The result is a dict with ``id``, ``cause``, ``fix``, ``line`` (the journal line that
    matched, or None) and ``journal_tail`` (the last ``tail`` lines, so a report always quotes
    what the server said). Without a known pattern, ``id`` is ``unknown`` and the cause quotes
    the last line, so the operator still sees the server's last words instead of a bare
    "failed".
    """
    lines = [line.rstrip("\n") for line in lines if line is not None]
    journal_tail = lines[-tail:] if tail else []
    for cause, patterns in _COMPILED:
        for line in lines:
            if any(p.search(line) for p in patterns):
                return {
                    "id": cause.id,
                    "cause": cause.cause,
                    "fix": cause.fix,
                    "line": line,
                    "journal_tail": journal_tail,
                }
    last = next((line for line in reversed(lines) if line.strip()), None)
    return {
        "id": UNKNOWN_CAUSE_ID,
        "cause": "The server stopped without a known cause in its journal; its last line: %s"
        % (last if last is not None else "(the journal is empty)"),
        "fix": "Read the journal lines below (journalctl -u UNIT -b); if the cause is new, add its "
        "pattern to plugins/module_utils/_journal_causes.py.",
        "line": None,
        "journal_tail": journal_tail,
    }
