"""The journal cause table: each known SGLang failure maps to its cause and a fix naming the knob.

Every line below is quoted from where it is really printed: the SGLang 0.5.23 wheel
(sglang-0.5.23-cp311-cp311-manylinux_2_34_x86_64.whl, paths relative to its sglang/ package),
CPython 3.11, PyTorch, huggingface_hub/transformers, or a real traceback. The provenance
stands beside each case; variable parts (sizes, ports, paths) are filled in as the format
string would fill them.
"""

import re

import pytest
from ansible_collections.ddtree.sglang.plugins.module_utils._journal_causes import (
    CAUSES,
    UNKNOWN_CAUSE_ID,
    match_cause,
)
from ansible_collections.ddtree.sglang.plugins.module_utils._redact import redact

# (cause id, journal message, a word the fix must name, where the text comes from)
CASES = [
    (
        "unknown_speculative_algorithm",
        "ValueError: Unknown speculative algorithm name: DDTREE",
        "#29907",
        "srt/speculative/spec_info.py:65, via srt/arg_groups/speculative_hook.py:242",
    ),
    (
        "hidden_size_mismatch",
        "ValueError: DFLASH target_hidden feature dim mismatch. Expected shape [N, 25600] "
        "(num_context_features=5, hidden_size=5120), but got shape=(7, 5120). This usually means the "
        "target model is capturing a different number of layer features than the draft checkpoint/config "
        "expects.",
        "sglang_draft_model_path",
        "srt/models/dflash.py:834-840 (5120 vs 25600: the field report's widths)",
    ),
    (
        "draft_checkpoint_mismatch",
        "ValueError: DFLASH fc.weight shape mismatch. This usually means the draft checkpoint's number of "
        "context features (K) does not match this config. Expected fc.weight.shape=(5120, 25600) "
        "(num_context_features=5, hidden_size=5120), but got (5120, 20480) for weight 'fc.weight'.",
        "sglang_draft_model_path",
        "srt/models/dflash.py:968-974",
    ),
    (
        "no_kernel_image",
        "RuntimeError: CUDA error: no kernel image is available for execution on the device",
        "attention_backend",
        "CUDA cudaGetErrorString(cudaErrorNoKernelImageForDevice) as torch raises it "
        "(c10/cuda/CUDAException.cpp, 'CUDA error: ')",
    ),
    (
        "no_gpu",
        "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and "
        "installed a driver from http://www.nvidia.com/Download/index.aspx",
        "nvidia-smi",
        "PyTorch c10/cuda/CUDAFunctions.cpp (device_count_impl, cudaErrorInsufficientDriver without a driver)",
    ),
    (
        "no_gpu",
        "RuntimeError: CUDA error: no CUDA-capable device is detected",
        "PrivateDevices",
        "CUDA cudaGetErrorString(cudaErrorNoDevice) as torch raises it (c10/cuda/CUDAException.cpp)",
    ),
    (
        "no_gpu",
        "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version",
        "driver version",
        "CUDA cudaGetErrorString(cudaErrorInsufficientDriver) as torch raises it (c10/cuda/CUDAException.cpp)",
    ),
    (
        "mem_fraction_too_low",
        "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
        "mem_fraction_static",
        "srt/model_executor/pool_configurator.py:96, raised at :99",
    ),
    (
        "mem_fraction_too_low",
        "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. "
        "Current value: mem_fraction_static=0.8",
        "balanced",
        "srt/model_executor/pool_configurator.py:96-99 (:98 appends the current value)",
    ),
    (
        "cuda_oom",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.50 GiB. GPU 0 has a total capacity "
        "of 47.41 GiB of which 1.19 GiB is free. Including non-PyTorch memory, this process has 46.21 GiB "
        "memory in use.",
        "cuda_graph_max_bs_decode",
        "PyTorch c10/cuda/CUDACachingAllocator.cpp, TORCH_CHECK_WITH(OutOfMemoryError, ...)",
    ),
    (
        "cuda_oom",
        "Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 1.25 GiB. GPU 0 has a "
        "total capacity of 47.41 GiB of which 1.02 GiB is free.",
        "nograph",
        "srt/model_executor/runner/decode_cuda_graph_runner.py:602-604 wrapping the allocator's OOM",
    ),
    (
        "cuda_graph_capture",
        "Exception: Capture cuda graph failed: CUDA error: operation not permitted when stream is capturing",
        "nograph",
        "srt/model_executor/runner/decode_cuda_graph_runner.py:602-604 wrapping CUDA's "
        "cudaGetErrorString(cudaErrorStreamCaptureUnsupported)",
    ),
    (
        "cuda_oom",
        "RuntimeError: CUDA error: out of memory",
        "mem_fraction_static",
        "CUDA cudaGetErrorString(cudaErrorMemoryAllocation) as torch raises it (c10/cuda/CUDAException.cpp)",
    ),
    (
        "nccl_error",
        "torch.distributed.DistBackendError: NCCL error in: "
        "/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3356, unhandled cuda error (run with "
        "NCCL_DEBUG=INFO for details), NCCL version 2.26.2",
        "NCCL_DEBUG",
        "PyTorch C10D_NCCL_CHECK (torch/csrc/distributed/c10d/NCCLUtils.hpp); the line as a real "
        "torch 2.7 traceback printed it",
    ),
    (
        "nccl_error",
        "[rank1]: ncclUnhandledCudaError: Call to CUDA function failed.",
        "tp_size",
        "PyTorch torch/csrc/distributed/c10d/NCCLUtils.cpp, getNcclErrorDetailStr()",
    ),
    (
        "nccl_error",
        "RuntimeError: NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO for details)",
        "sglang_env",
        "srt/distributed/device_communicators/pynccl_wrapper.py:474 with NCCL's ncclGetErrorString text",
    ),
    (
        "internal_port_busy",
        "ValueError: nccl_port at 31337 is not available in 30 seconds. nccl_port at 31337 is not available",
        "SGLANG_WAIT_PORT_TIMEOUT",
        "srt/utils/network.py:102-104 (message from :82), called at srt/server_args.py:875",
    ),
    (
        "internal_port_busy",
        "[2026-12-02 12:00:01] Port is already in use. dist_init_port=30010 port_base=30011 "
        "detokenizer_port=30012 nccl_port=31337 scheduler_input_port=30015",
        "nccl_port",
        "srt/server_args.py:885-887",
    ),
    (
        "address_in_use",
        "OSError: [Errno 98] Address already in use",
        "ss -ltnp",
        "CPython socket.bind() error: glibc strerror(EADDRINUSE)",
    ),
    (
        "address_in_use",
        "ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 30000): address already in use",
        "sglang_port",
        "CPython 3.11 Lib/asyncio/base_events.py:1525-1527, logged by uvicorn",
    ),
    (
        "model_not_found",
        "OSError: /srv/models/Qwen3.6-27B does not appear to have a file named config.json.",
        "sglang_model_path",
        "transformers utils/hub.py cached_file()",
    ),
    (
        "model_not_found",
        "huggingface_hub.errors.HFValidationError: Repo id must be in the form 'repo_name' or "
        "'namespace/repo_name': '/srv/models/Qwen3.6-27B'. Use `repo_type` argument if needed.",
        "sglang_draft_model_path",
        "huggingface_hub utils/_validators.py validate_repo_id(); the line as a real traceback printed it",
    ),
    (
        "model_not_found",
        "OSError: Can't load the configuration of '/srv/models/Qwen3.6-27B-DFlash'. If you were trying to load "
        "it from 'https://huggingface.co/models', make sure you don't have a local directory with the same "
        "name. Otherwise, make sure '/srv/models/Qwen3.6-27B-DFlash' is the correct path to a directory "
        "containing a config.json file",
        "config.json",
        "transformers configuration_utils.py PretrainedConfig._get_config_dict()",
    ),
    (
        "import_error",
        "ImportError: libcudart.so.12: cannot open shared object file: No such file or directory",
        "sglang_install",
        "CPython's ImportError carrying glibc's dlopen() error text",
    ),
    (
        "import_error",
        "/usr/bin/python3: Error while finding module specification for 'sglang.launch_server' "
        "(ModuleNotFoundError: No module named 'sglang')",
        "sglang_launch_command",
        "CPython 3.11 Lib/runpy.py:136 (python -m with a python that has no sglang)",
    ),
    (
        "invalid_args",
        "sglang serve: error: ambiguous option: --cuda-graph-max-bs could match --cuda-graph-max-bs-decode, "
        "--cuda-graph-max-bs-prefill",
        "cuda_graph_max_bs_decode",
        "prog: srt/server_args.py:679; CPython 3.11 Lib/argparse.py:2268 and :2633 (exit 2)",
    ),
    (
        "invalid_args",
        "sglang serve: error: unrecognized arguments: --speculative-ddtree-budget 15",
        "sglang_extra_args",
        "prog: srt/server_args.py:679; CPython 3.11 Lib/argparse.py:1876 and :2633 (exit 2)",
    ),
]


def _journal(message):
    """A failed start as journalctl --output short-iso prints it."""
    return [
        "2026-12-02T12:00:01+0000 ct129 python3[812]: [2026-12-02 12:00:01] server_args={'model_path': "
        "'/srv/models/Qwen3.6-27B', 'api_key': None}",
        "2026-12-02T12:00:03+0000 ct129 python3[812]: Traceback (most recent call last):",
        "2026-12-02T12:00:03+0000 ct129 python3[812]: " + message,
        "2026-12-02T12:00:03+0000 ct129 systemd[1]: sglang-qwen.service: Main process exited, code=exited, "
        "status=1/FAILURE",
    ]


@pytest.mark.parametrize(
    ("cause_id", "line", "fix_mentions", "source"),
    CASES,
    ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)],
)
def test_known_cause_is_named_with_a_fix(cause_id, line, fix_mentions, source):
    journal = _journal(line)
    found = match_cause(journal)
    assert found["id"] == cause_id, source
    assert found["line"] == journal[2]
    assert fix_mentions in found["fix"]
    assert found["journal_tail"] == journal


def test_every_pattern_is_exercised_by_a_quoted_line():
    # A pattern no quoted line matches is a pattern nobody has seen SGLang print.
    for cause in CAUSES:
        for pattern in cause.patterns:
            rx = re.compile(pattern, re.IGNORECASE)
            quoted = [line for cid, line, _fix, _src in CASES + TRACEBACK_CASES_FLAT if cid == cause.id]
            assert any(rx.search(line) for line in quoted), (cause.id, pattern)


# Whole tracebacks as 0.5.23 prints them, frames with their line numbers in the wheel.
TRACEBACKS = {
    # python -m sglang.launch_server --speculative-algorithm DDTREE on the release, no #29907.
    "unknown_speculative_algorithm": [
        "Traceback (most recent call last):",
        '  File "/opt/sglang/venv/lib/python3.11/site-packages/sglang/launch_server.py", line 84, in <module>',
        "    run_server(server_args)",
        '  File "/opt/sglang/venv/lib/python3.11/site-packages/sglang/launch_server.py", line 29, in run_server',
        "    server_args.resolve_once()",
        '  File "/opt/sglang/venv/lib/python3.11/site-packages/sglang/srt/server_args.py", line 277, in resolve_once',
        "    run_resolution_pipeline(self)",
        '  File "/opt/sglang/venv/lib/python3.11/site-packages/sglang/srt/arg_groups/pipeline.py", line 306, '
        "in run_resolution_pipeline",
        "    run_hook(handle_speculative_decoding, server_args)",
        '  File "/opt/sglang/venv/lib/python3.11/site-packages/sglang/srt/arg_groups/resolution_hooks.py", '
        "line 139, in run_hook",
        "    step(server_args)",
        '  File "/opt/sglang/venv/lib/python3.11/site-packages/sglang/srt/arg_groups/speculative_hook.py", '
        "line 242, in handle_speculative_decoding",
        "    algo = SpeculativeAlgorithm.from_string(cfg.speculative_algorithm)",
        '  File "/opt/sglang/venv/lib/python3.11/site-packages/sglang/srt/speculative/spec_info.py", line 65, '
        "in from_string",
        '    raise ValueError(f"Unknown speculative algorithm name: {name}")',
        "ValueError: Unknown speculative algorithm name: DDTREE",
    ],
    # DFLASH without --speculative-draft-model-path: arg_groups/speculative_hook.py:319-322.
    "invalid_args": [
        "Traceback (most recent call last):",
        '  File "/opt/sglang/venv/lib/python3.11/site-packages/sglang/launch_server.py", line 84, in <module>',
        "    run_server(server_args)",
        '  File "/opt/sglang/venv/lib/python3.11/site-packages/sglang/launch_server.py", line 29, in run_server',
        "    server_args.resolve_once()",
        '  File "/opt/sglang/venv/lib/python3.11/site-packages/sglang/srt/server_args.py", line 277, in resolve_once',
        "    run_resolution_pipeline(self)",
        "ValueError: DFLASH speculative decoding requires setting --speculative-draft-model-path.",
    ],
}
TRACEBACK_CASES_FLAT = [(cid, line, None, None) for cid, lines in TRACEBACKS.items() for line in lines]


@pytest.mark.parametrize("cause_id", sorted(TRACEBACKS))
def test_a_traceback_reports_its_exception_line(cause_id):
    lines = TRACEBACKS[cause_id]
    found = match_cause(lines)
    assert found["id"] == cause_id
    # A match on a frame ("in resolve_once") quotes the exception that ends the traceback.
    assert found["line"] == lines[-1]


def test_validation_in_resolve_once_is_not_taken_for_a_draft_problem():
    # The specific cause wins over the generic "resolve_once" frame of the same traceback.
    lines = TRACEBACKS["unknown_speculative_algorithm"]
    assert match_cause(lines)["id"] == "unknown_speculative_algorithm"


def test_cuda_oom_on_one_rank_wins_over_the_nccl_errors_of_the_others():
    # scheduler.py:6374-6375: without SGLANG_KILLPG_ON_SCHEDULER_EXCEPTION sibling ranks "spew
    # NCCL/TCPStore tracebacks" after one rank died; the root cause is the OOM.
    journal = [
        "[2026-12-02 12:00:03 TP1] ncclUnhandledCudaError: Call to CUDA function failed.",
        "[2026-12-02 12:00:02 TP0] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.50 GiB.",
    ]
    assert match_cause(journal)["id"] == "cuda_oom"


def test_a_plain_pytorch_shape_error_is_not_a_hidden_size_mismatch():
    # Any matmul of wrong shapes says this; it proves nothing about DFlash or DDTree.
    found = match_cause(["RuntimeError: mat1 and mat2 shapes cannot be multiplied (7x5120 and 25600x5120)"])
    assert found["id"] == UNKNOWN_CAUSE_ID


def test_hidden_size_mismatch_does_not_prescribe_the_is_dflash_patch():
    fix = next(c.fix for c in CAUSES if c.id == "hidden_size_mismatch")
    assert "#29907" in fix and "is not a DDTree implementation" in fix


def test_fixes_use_option_names_of_the_pinned_release():
    # 0.5.23 split --cuda-graph-max-bs (arg_groups/fields/exec_.py:629-634); the old name is ambiguous there.
    for cause in CAUSES:
        assert not re.search(r"(?<!not )\bcuda_graph_max_bs\b", cause.fix), cause.id


def test_the_api_key_sglang_logs_in_clear_is_redacted():
    # entrypoints/engine.py:1185 logs server_args={...} from ServerArgs.resolved_dict(), which redacts
    # only watermark secrets: api_key (arg_groups/fields/serving.py:160) is printed as given.
    journal = [
        "[2026-12-02 12:00:01] server_args={'host': '127.0.0.1', 'api_key': 'sk-secret-1', "
        "'admin_api_key': \"it's-2\", 'ssl_keyfile_password': None, 'port': 30000}",
        "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
    ]
    found = match_cause(journal)
    text = repr(found)
    assert "sk-secret-1" not in text and "it's-2" not in text
    assert "'api_key': '<redacted>'" in found["journal_tail"][0]
    assert "'ssl_keyfile_password': None" in found["journal_tail"][0]
    assert redact("'api_key': None") == "'api_key': None"


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


# sglang/srt/model_executor/pool_configurator.py:96 (0.5.23 wheel) builds this message and :99
# raises it as a RuntimeError; :98 appends the current value when the pool config carries it.
MEM_ERROR = "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."
POOL_FRAME = (
    '  File "/opt/sglang/venv/lib/python3.11/site-packages/sglang/srt/model_executor/pool_configurator.py", '
    "line 99, in __post_init__"
)


def _short_iso(messages):
    """Messages as journalctl --output short-iso prints them (what sglang_wait reads)."""
    return ["2026-12-02T12:00:09+0000 ct129 python3[812]: " + m for m in messages]


@pytest.mark.parametrize("with_source", [True, False], ids=["with source lines", "without source lines"])
def test_a_traceback_exception_is_read_with_or_without_source_lines(with_source):
    # Python prints no source line under a frame when it cannot read the file: then the
    # exception line follows the frame directly, and must not be taken for quoted source.
    messages = ["Traceback (most recent call last):", POOL_FRAME]
    if with_source:
        messages.append("    raise RuntimeError(msg)")
    messages.append(MEM_ERROR)
    journal = _short_iso(messages) + [
        "2026-12-02T12:00:09+0000 ct129 systemd[1]: sglang-qwen.service: Main process exited, code=exited, "
        "status=1/FAILURE",
    ]
    found = match_cause(journal)
    assert found["id"] == "mem_fraction_too_low"
    assert found["line"] == journal[len(messages) - 1]


def test_a_source_line_under_its_frame_still_does_not_match():
    # the same frame with a source line that quotes a pattern: code, not the server's message
    journal = _short_iso(
        [
            "Traceback (most recent call last):",
            POOL_FRAME,
            '    msg = "Not enough memory. Please try to increase --mem-fraction-static."',
            "KeyboardInterrupt: ",
        ]
    )
    assert match_cause(journal)["id"] == "unknown"


def test_without_journal_prefixes_the_indentation_decides_too():
    lines = ["Traceback (most recent call last):", POOL_FRAME, MEM_ERROR]
    found = match_cause(lines)
    assert found["id"] == "mem_fraction_too_low" and found["line"] == MEM_ERROR
