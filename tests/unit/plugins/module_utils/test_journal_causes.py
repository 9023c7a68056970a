"""The journal cause table: each known SGLang failure maps to its cause and a fix naming the knob."""

import pytest
from ansible_collections.ddtree.sglang.plugins.module_utils._journal_causes import (
    CAUSES,
    UNKNOWN_CAUSE_ID,
    match_cause,
)

# Journal lines as SGLang (and Python, CUDA, uvicorn) print them when a start fails.
CASES = [
    (
        "mem_fraction_too_low",
        "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
        "mem_fraction_static",
    ),
    (
        "cuda_oom",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
        "capacity of 47.41 GiB of which 1.06 GiB is free.",
        "cuda_graph_max_bs",
    ),
    (
        "address_in_use",
        "ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 30000): address already in use",
        "sglang_port",
    ),
    ("import_error", "ModuleNotFoundError: No module named 'sgl_kernel'", "sglang_install"),
    ("import_error", "ImportError: libcudart.so.12: cannot open shared object file", "sglang_launch_command"),
    (
        "no_kernel_image",
        "RuntimeError: CUDA error: no kernel image is available for execution on the device",
        "attention_backend",
    ),
    (
        "hidden_size_mismatch",
        "RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x5120 and 25600x5120)",
        "is_dflash",
    ),
    ("hidden_size_mismatch", "ValueError: DFlash hidden size mismatch: got 5120, expected 25600", "DDTREE"),
    (
        "model_not_found",
        "OSError: /models/x does not appear to have a file named config.json.",
        "sglang_model_path",
    ),
    ("no_gpu", "RuntimeError: Found no NVIDIA driver on your system.", "nvidia-smi"),
]


@pytest.mark.parametrize(("cause_id", "line", "fix_mentions"), CASES)
def test_known_cause_is_named_with_a_fix(cause_id, line, fix_mentions):
    journal = [
        "Dec 02 12:00:01 host python3[812]: [2026-12-02 12:00:01] server_args=ServerArgs(...)",
        "Dec 02 12:00:03 host python3[812]: Traceback (most recent call last):",
        "Dec 02 12:00:03 host python3[812]: " + line,
        "Dec 02 12:00:03 host systemd[1]: sglang-qwen.service: Main process exited, code=exited, status=1/FAILURE",
    ]
    found = match_cause(journal)
    assert found["id"] == cause_id
    assert found["line"] == journal[2]
    assert fix_mentions in found["fix"]
    assert found["journal_tail"] == journal


def test_specific_cause_wins_over_generic_one():
    # A hidden-size mismatch surfaces as a RuntimeError in a traceback that may also log an
    # ImportError warning for an optional kernel; the specific cause must be reported.
    journal = [
        "WARNING: ImportError: optional module flashinfer_jit not found, falling back",
        "RuntimeError: mat1 and mat2 shapes cannot be multiplied (8x5120 and 25600x5120)",
    ]
    assert match_cause(journal)["id"] == "hidden_size_mismatch"


def test_unknown_cause_quotes_the_last_non_empty_line():
    journal = ["loading weights", "Segmentation fault (core dumped)", "", "   "]
    found = match_cause(journal)
    assert found["id"] == UNKNOWN_CAUSE_ID
    assert "Segmentation fault (core dumped)" in found["cause"]
    assert found["line"] is None
    assert "journalctl" in found["fix"]


def test_unknown_cause_on_empty_journal_says_so():
    found = match_cause([])
    assert found["id"] == UNKNOWN_CAUSE_ID
    assert "journal is empty" in found["cause"]
    assert found["journal_tail"] == []


def test_tail_keeps_the_last_lines_only():
    journal = [f"line {i}" for i in range(50)]
    assert match_cause(journal, tail=5)["journal_tail"] == ["line 45", "line 46", "line 47", "line 48", "line 49"]


def test_table_entries_are_complete_and_unique():
    ids = [c.id for c in CAUSES]
    assert len(ids) == len(set(ids))
    assert UNKNOWN_CAUSE_ID not in ids
    for cause in CAUSES:
        assert cause.patterns and cause.cause and cause.fix


@pytest.mark.parametrize(
    "lines",
    [
        [
            "usage: sglang.launch_server [-h] --model-path MODEL_PATH",
            "sglang.launch_server: error: unrecognized arguments: --speculative-ddtree-budget 64",
        ],
        [
            "Traceback (most recent call last):",
            '  File "/opt/sglang/python/sglang/srt/server_args.py", line 712, in __post_init__',
            "    self._handle_speculative_decoding()",
            "ValueError: DFLASH requires --speculative-draft-model-path to be set.",
        ],
    ],
)
def test_rejected_arguments_are_named(lines):
    found = match_cause(lines)
    assert found["id"] == "invalid_args"
    assert "sglang_extra_args" in found["fix"]
