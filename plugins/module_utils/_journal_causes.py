# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Known reasons an SGLang server dies, as data: journal pattern -> cause and fix.

Every pattern quotes text the pinned release (SGLang 0.5.23) or the libraries under it
really print; the comment beside it says where (a file:line in the 0.5.23 wheel, or the
library's source). tests/unit/plugins/module_utils/test_journal_causes.py tests each one on
such a line, with the same provenance.

The table is ordered from the most specific pattern to the most generic one, because one
crash often prints several of them: a draft-model error is raised inside ServerArgs
resolution (whose traceback also matches the generic "rejected arguments" entry), and a rank
that runs out of CUDA memory takes its sibling ranks down with NCCL errors. The first entry
whose pattern matches any journal line wins. Fixes name the SGLang option (ServerArgs field
of 0.5.23, as the role's ``sglang_extra_args`` takes it) or the role variable to change, so
an operator can act on the message without reading SGLang's source.

Used by the ``sglang_wait`` module (fail fast when the unit dies) and by anything else that
holds journal lines of an SGLang unit.
"""

from __future__ import absolute_import, division, print_function

import re
from collections import namedtuple

from ansible_collections.ddtree.sglang.plugins.module_utils._redact import redact_lines

JournalCause = namedtuple("JournalCause", ["id", "patterns", "cause", "fix"])

UNKNOWN_CAUSE_ID = "unknown"

CAUSES = (
    JournalCause(
        id="unknown_speculative_algorithm",
        patterns=(
            # sglang/srt/speculative/spec_info.py:65, raised during ServerArgs.resolve_once
            # (arg_groups/speculative_hook.py:242) for a name neither built in nor registered.
            r"Unknown speculative algorithm name: ",
        ),
        cause="The installed SGLang does not know this speculative algorithm. DDTREE is in no SGLang "
        "release: it comes with pull request sgl-project/sglang#29907 (DDTreeWorker, "
        "--speculative-ddtree-budget); a release such as 0.5.23 stops at start with this error.",
        fix="Install an SGLang build that carries #29907 (the sglang_install role's DDTree source) and "
        "point sglang_launch_command at it, or deploy a profile the release knows "
        "(sglang_profile / ddtree_deploy_profile: nextn or dflash).",
    ),
    JournalCause(
        id="hidden_size_mismatch",
        patterns=(
            # sglang/srt/models/dflash.py:834-840 (and 1084-1088, the Laguna variant): the target's
            # captured hidden states do not have the width the DFlash-family draft's fc expects.
            r"DFLASH target_hidden feature dim mismatch",
        ),
        cause="The draft model received target hidden states of the wrong width (e.g. 5120 where the "
        "draft expects 5 captured layers, 25600): the target did not capture the layers the "
        "DFlash-family draft was trained on.",
        fix="Check that sglang_draft_model_path is the DFlash draft trained for this target model (its "
        "dflash_config.target_layer_ids / num_context_features). With speculative_algorithm DDTREE, "
        "run a build with #29907's DDTree wiring (sglang_install's DDTree source) rather than one "
        "that only treats DDTREE as DFLASH in SpeculativeAlgorithm.is_dflash(): that patch routes "
        "DDTREE to the DFlash worker and is not a DDTree implementation.",
    ),
    JournalCause(
        id="draft_checkpoint_mismatch",
        patterns=(
            # sglang/srt/models/dflash.py:968-974, while loading the draft's weights.
            r"DFLASH fc\.weight shape mismatch",
        ),
        cause="The DFlash draft checkpoint's fc.weight does not fit its own config: the number of "
        "context features (K) the checkpoint was trained with differs from what the config says.",
        fix="Set sglang_draft_model_path to a complete DFlash draft directory whose config.json and "
        "weights belong together (re-download it), trained for this target model.",
    ),
    JournalCause(
        id="no_kernel_image",
        patterns=(
            # CUDA's cudaGetErrorString(cudaErrorNoKernelImageForDevice), raised by torch as
            # "RuntimeError: CUDA error: ..." (c10/cuda/CUDAException.cpp).
            r"no kernel image is available for execution on the device",
        ),
        cause="A CUDA kernel was not built for this GPU architecture; usually the attention "
        "backend does not support it (fa3 is sm90 only; trtllm_mha and fa4 do not run on sm120).",
        fix="Let the GPU class pick the attention backend (remove attention_backend from "
        "sglang_extra_args, or set sglang_gpu_class to the host's real class), or set "
        "attention_backend to flashinfer or triton.",
    ),
    JournalCause(
        id="no_gpu",
        patterns=(
            # torch: TORCH_CHECK in c10/cuda/CUDAFunctions.cpp (device_count_impl) when the driver is absent.
            r"Found no NVIDIA driver on your system",
            # CUDA's cudaGetErrorString texts for cudaErrorNoDevice / cudaErrorInsufficientDriver.
            r"no CUDA-capable device is detected",
            r"CUDA driver version is insufficient for CUDA runtime version",
        ),
        cause="The server cannot use the GPUs: the NVIDIA driver is missing, not loaded, or too old "
        "for this CUDA build.",
        fix="Check nvidia-smi on the host and the driver version against the CUDA version of the "
        "SGLang release; the unit must not hide /dev/nvidia* (no PrivateDevices).",
    ),
    JournalCause(
        id="mem_fraction_too_low",
        patterns=(
            # sglang/srt/model_executor/pool_configurator.py:96 (raised at :99 as a RuntimeError);
            # :98 appends " Current value: mem_fraction_static=<v>" when the pool config carries it.
            r"Not enough memory\. Please try to increase --mem-fraction-static\.",
        ),
        cause="SGLang found no GPU memory left for the KV cache pool after loading the weights "
        "(Not enough memory; increase --mem-fraction-static).",
        fix="Raise mem_fraction_static (e.g. the 'balanced' variant sets 0.85, or "
        "sglang_extra_args: {mem_fraction_static: 0.88}), or shrink what sits outside the pool: "
        "the 'small' variant (32K context_length, 4 max_running_requests), or more GPUs (tp_size).",
    ),
    JournalCause(
        id="cuda_oom",
        patterns=(
            # torch: c10/cuda/CUDACachingAllocator.cpp, TORCH_CHECK_WITH(OutOfMemoryError, ...,
            # "CUDA out of memory. Tried to allocate ", ...) -> torch.OutOfMemoryError.
            r"CUDA out of memory\. Tried to allocate",
            # CUDA's cudaGetErrorString(cudaErrorMemoryAllocation) through torch's "CUDA error: ".
            r"CUDA error: out of memory",
        ),
        cause="CUDA ran out of GPU memory after the static pool was reserved (CUDA graphs, "
        "activations or the draft model did not fit).",
        fix="Lower mem_fraction_static, lower cuda_graph_max_bs_decode (SGLang 0.5.23's own advice, "
        "model_executor/runner_backend_utils) or turn CUDA graphs off (the 'nograph' variant), shrink "
        "the draft tree (speculative_ddtree_budget / speculative_num_draft_tokens) or "
        "max_running_requests (the 'small' variant).",
    ),
    JournalCause(
        id="cuda_graph_capture",
        patterns=(
            # sglang/srt/model_executor/runner/decode_cuda_graph_runner.py:602-604 wraps any RuntimeError
            # of a capture as "Capture cuda graph failed: {e}" + runner_backend_utils/__init__.py:14-21
            # (the EAGLE draft runners the same way). An OOM inside it is caught by cuda_oom above.
            r"Capture cuda graph failed: ",
        ),
        cause="SGLang could not capture its CUDA graphs (for a reason other than memory: the attention "
        "backend, a kernel or the draft worker does not support graph capture in this configuration).",
        fix="Start without CUDA graphs to confirm (the 'nograph' variant), then capture fewer batch sizes "
        "(cuda_graph_max_bs_decode, SGLang 0.5.23's own advice) or let the GPU class pick "
        "attention_backend; report the error above to SGLang if it persists.",
    ),
    JournalCause(
        id="nccl_error",
        patterns=(
            # torch: C10D_NCCL_CHECK in torch/csrc/distributed/c10d/NCCLUtils.hpp,
            # "NCCL error in: <file>:<line>, <ncclGetErrorString>, NCCL version <v>" (DistBackendError).
            r"NCCL error in: ",
            # sglang/srt/distributed/device_communicators/pynccl_wrapper.py:474, SGLang's own NCCL calls.
            r"RuntimeError: NCCL error: ",
            # torch: getNcclErrorDetailStr() in torch/csrc/distributed/c10d/NCCLUtils.cpp.
            r"\bnccl(?:UnhandledCudaError|SystemError|InternalError|InvalidArgument|InvalidUsage|RemoteError): ",
        ),
        cause="Communication between the GPUs (NCCL, tensor parallelism) failed: a CUDA call inside "
        "NCCL, peer-to-peer access or shared memory between the ranks did not work.",
        fix="Check that tp_size matches the GPUs the unit can see (sglang_tp_size, or leave it to "
        "gpu_facts), that no other process holds those GPUs, and the GPU topology (nvidia-smi topo -m); "
        "in a container give the unit every GPU and enough /dev/shm. Read NCCL's own reason with "
        "sglang_env: {NCCL_DEBUG: INFO}; NCCL_P2P_DISABLE: '1' in sglang_env works around broken "
        "peer-to-peer access.",
    ),
    JournalCause(
        id="internal_port_busy",
        patterns=(
            # sglang/srt/utils/network.py:82 and :102-104 (wait_port_available, called for the
            # internal ports at server_args.py:871-883), logged at server_args.py:885-887.
            r"\b(?:\w+_port|port_base) at \d+ is not available",
            r"Port is already in use\. dist_init_port=",
        ),
        cause="A port SGLang uses internally (nccl_port, dist_init_port, its ZMQ ports) is held by "
        "another process, often a previous SGLang server that has not let go of it yet.",
        fix="Stop the process holding the port (ss -ltnp), or give a killed server longer to release "
        "it (sglang_env: {SGLANG_WAIT_PORT_TIMEOUT: '120'}), or pick other ports: nccl_port in "
        "sglang_extra_args, or another sglang_port (the internal ports derive from it).",
    ),
    JournalCause(
        id="address_in_use",
        patterns=(
            # CPython Lib/asyncio/base_events.py:1525-1527 (create_server), logged by uvicorn.
            r"\[Errno 98\] error while attempting to bind on address",
            r"\[Errno 98\] Address already in use",
        ),
        cause="The server's port is already taken by another process (often a previous server or "
        "a second unit on the same port).",
        fix="Stop whatever listens on the port (ss -ltnp 'sport = :PORT'), or set sglang_port to a free port.",
    ),
    JournalCause(
        id="model_not_found",
        patterns=(
            # transformers utils/hub.py (cached_file): "<path> does not appear to have a file named config.json."
            r"does not appear to have a file named config\.json",
            # transformers configuration_utils.py (_get_config_dict): "Can't load the configuration of '<path>'."
            r"Can't load the configuration of",
            # huggingface_hub utils/_validators.py (validate_repo_id): a path that is not a directory
            # is taken for a Hub repo id.
            r"Repo id must be in the form 'repo_name' or 'namespace/repo_name'",
        ),
        cause="The model (or draft model) path does not hold a Hugging Face model directory.",
        fix="Set sglang_model_path / sglang_draft_model_path to a directory on the host that "
        "contains config.json and the weights.",
    ),
    JournalCause(
        id="import_error",
        patterns=(
            # CPython's own texts (ModuleNotFoundError: No module named 'x'; ImportError: ...).
            r"ModuleNotFoundError: ",
            r"\bImportError: ",
        ),
        cause="The SGLang environment is incomplete: a Python module could not be imported.",
        fix="Check sglang_launch_command points at the release venv's python "
        "(sglang_install_release_python) and re-run the sglang_install role to repair that venv.",
    ),
    JournalCause(
        id="invalid_args",
        patterns=(
            # argparse's error line (CPython Lib/argparse.py:2633 "%(prog)s: error: %(message)s", exit 2)
            # with 0.5.23's prog: sglang/srt/server_args.py:679 ArgumentParser(prog="sglang serve").
            r"sglang serve: error: ",
            # A check of ServerArgs resolution refusing a combination: 0.5.23 validates in
            # resolve_once (sglang/srt/server_args.py:277 runs arg_groups/pipeline.py's hooks), no
            # longer in __post_init__. The reported line is the exception that ends the traceback.
            r'server_args\.py", line \d+, in resolve_once',
        ),
        cause="SGLang rejected its command line (an unknown or ambiguous flag, a bad value, or a "
        "combination ServerArgs resolution refuses, e.g. DFLASH without a draft model).",
        fix="Read the error line below; correct the option in sglang_extra_args, sglang_profile_variants "
        "or sglang_draft_model_path to one the installed release accepts (0.5.23 names: e.g. "
        "cuda_graph_max_bs_decode, not cuda_graph_max_bs), or install a release that knows it (sglang_install).",
    ),
)

_COMPILED = tuple((cause, tuple(re.compile(p, re.IGNORECASE) for p in cause.patterns)) for cause in CAUSES)

# A Python traceback frame, and the exception line that ends a traceback (after any journal prefix).
_FRAME = re.compile(r'File "[^"]*", line \d+, in ')
_EXCEPTION_LINE = re.compile(r"(?:^|[\s:\]])(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt): ")


# journalctl --output short-iso (what sglang_wait reads): "2026-12-02T12:00:03+0000 host ident[pid]: ".
_JOURNAL_PREFIX = re.compile(r"^\d{4}-\d\d-\d\dT\S+ \S+ [^\s:]+: ")


def _indent(line):
    """Indentation of the message, after any journal prefix."""
    message = _JOURNAL_PREFIX.sub("", line, count=1)
    return len(message) - len(message.lstrip(" "))


def _source_lines(lines):
    """Indexes of the source lines a traceback quotes under its frames.

    Python prints the source line indented deeper than its ``File ..., line N`` frame (4 spaces
    under 2), and prints none when it cannot read the file (a deleted or zipped module, a
    different path in a container). Then the next line may be the exception itself
    (``RuntimeError: Not enough memory. ...``), which is not indented: following a frame does
    not make a line source, being indented under it does.
    """
    return {
        i
        for i in range(1, len(lines))
        if _FRAME.search(lines[i - 1]) and not _FRAME.search(lines[i]) and _indent(lines[i]) > _indent(lines[i - 1])
    }


def _reported_line(lines, index, source_lines):
    """The line to quote for a match: a traceback frame stands for the exception that ends it."""
    if not _FRAME.search(lines[index]):
        return lines[index]
    for i in range(index + 1, len(lines)):
        if i not in source_lines and _EXCEPTION_LINE.search(lines[i]) and not _FRAME.search(lines[i]):
            return lines[i]
    return lines[index]


def match_cause(lines, tail=20):
    """Return the first known cause found in ``lines`` (journal messages, oldest first).

    The result is a dict with ``id``, ``cause``, ``fix``, ``line`` (the journal line that
    matched, or for a traceback frame the exception line that ends that traceback; None when
    nothing matched) and ``journal_tail`` (the last ``tail`` lines, so a report always quotes
    what the server said). Without a known pattern, ``id`` is ``unknown`` and the cause quotes
    the last line, so the operator still sees the server's last words instead of a bare
    "failed". Secrets SGLang logs in clear (api_key in its server_args line) are redacted in
    everything returned.
    """
    # Secrets SGLang logs in clear never leave this module: one redaction for the collection.
    lines = redact_lines([line.rstrip("\n") for line in lines if line is not None])
    journal_tail = lines[-tail:] if tail else []
    # A traceback quotes the source line under each frame (`raise ValueError(f"Unknown ...")`):
    # that is code, not a message, and must not match.
    source_lines = _source_lines(lines)
    for cause, patterns in _COMPILED:
        for index, line in enumerate(lines):
            if index not in source_lines and any(p.search(line) for p in patterns):
                return {
                    "id": cause.id,
                    "cause": cause.cause,
                    "fix": cause.fix,
                    "line": _reported_line(lines, index, source_lines),
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
