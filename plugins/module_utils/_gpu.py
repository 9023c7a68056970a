# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia-smi parsing and the GPU -> class id identification table.

One place answers "which GPU class is this host?": the ``gpu_facts`` module (on the
managed host) and the ``gpu_class`` filter (on the controller) both call ``classify()`` /
``identify()`` from here, so the two can never disagree.

The class id selects a row of ``roles/sglang/vars/gpu_classes.yml`` (attention backend,
memory fraction, CUDA graph sizes, ...). A test keeps the class ids of both files equal.

Identification matches the marketing name that nvidia-smi prints, then cross-checks the
compute capability and the memory size: a name pattern alone would, for example, put a
96 GB GH200 into the 141 GB class and size its KV cache for memory it does not have.
"""

from __future__ import absolute_import, division, print_function

import re
import subprocess
from collections import namedtuple

from ansible_collections.ddtree.sglang.plugins.module_utils._values import describe

# The exact query the gpu_facts module runs; the field order is the parser's contract.
# mig.mode.current: "Enabled", "Disabled", or "[N/A]" on a GPU without MIG (nvidia-smi's own words:
# kubernetes-sigs/dra-driver-nvidia-gpu#852 quotes "GPU-ec84..., Enabled, Enabled"; Syllo/nvtop#470 "[N/A]" on an
# RTX and "Disabled" on an A100; a real H200's `nvidia-smi -q`, tests/unit/plugins/fixtures/nvidia-smi-h200,
# "MIG Mode / Current : Disabled").
QUERY_FIELDS = ("index", "name", "memory.total", "compute_cap", "driver_version", "uuid", "mig.mode.current")
NVIDIA_SMI_ARGS = (
    "--query-gpu=" + ",".join(QUERY_FIELDS),
    "--format=csv,noheader,nounits",
)

# The inventory variable an operator sets when detection cannot decide (named in errors).
OVERRIDE_VARIABLE = "sglang_gpu_class"

GpuClass = namedtuple("GpuClass", ["id", "summary"])
# name_memory: for a model sold with memory sizes outside the class, a pattern the name must also
# match when the memory is not known (a bare name given to the gpu_class filter); None when the
# name alone fixes the memory.
GpuRule = namedtuple(
    "GpuRule", ["class_id", "pattern", "compute_cap", "memory_mib", "reason", "name_memory"], defaults=(None,)
)

# Class ids, in the order docs and error messages list them. The summary says what the class
# stands for; the settings themselves live in roles/sglang/vars/gpu_classes.yml.
GPU_CLASSES = (
    GpuClass("ampere_48g", "Ampere sm86, 48 GB GDDR6, PCIe (RTX A6000, A40)"),
    GpuClass("ada_48g", "Ada Lovelace sm89, 48 GB GDDR6, PCIe (L40S, L40, RTX 6000 Ada)"),
    GpuClass("hopper_80g", "Hopper sm90, 80-94 GB HBM (H100 SXM/PCIe/NVL, H800)"),
    GpuClass("hopper_141g", "Hopper sm90, 141-144 GB HBM3e (H200, H200 NVL, GH200 144G)"),
    GpuClass("blackwell_rtx_96g", "Blackwell sm120, 96 GB GDDR7, PCIe (RTX PRO 6000 Blackwell)"),
    GpuClass("blackwell_dc_180g", "Blackwell sm100, 180 GB HBM3e (B200)"),
)
CLASS_IDS = tuple(c.id for c in GPU_CLASSES)

# Identification rows, first match wins, so a more specific pattern comes before a broader
# one of the same family. Patterns are matched case-insensitively with re.search against the
# name nvidia-smi prints ("NVIDIA RTX A6000", "NVIDIA H100 80GB HBM3", ...).
# memory_mib is the range memory.total (MiB, as nvidia-smi reports it: a little under the
# marketing size, less with ECC on) may fall in for that model.
GPU_RULES = (
    GpuRule(
        "ampere_48g",
        r"\bRTX A6000\b",
        "8.6",
        (45000, 49500),
        "RTX A6000: GA102, sm86, 48 GB GDDR6 (49140 MiB; 46068 MiB with ECC on). The ct129 host "
        "of the field report (2x, PCIe, optional NVLink bridge).",
    ),
    GpuRule(
        "ampere_48g",
        r"\bA40\b",
        "8.6",
        (45000, 49500),
        "A40: GA102, sm86, 48 GB GDDR6 with ECC (46068 MiB); the same silicon and memory as the RTX A6000.",
    ),
    GpuRule(
        "ada_48g",
        r"\bL40S?\b",
        "8.9",
        (45000, 49500),
        "L40S and L40: AD102, sm89, 48 GB GDDR6 with ECC (46068 MiB). FP8 tensor cores, no FA3 kernels (sm90 only).",
    ),
    GpuRule(
        "ada_48g",
        r"\bRTX 6000 Ada\b",
        "8.9",
        (45000, 49500),
        "RTX 6000 Ada Generation: AD102, sm89, 48 GB GDDR6 (49140 MiB). Not to be confused with the "
        "Quadro RTX 6000 (Turing, 24 GB), whose name lacks 'Ada'.",
    ),
    GpuRule(
        "hopper_80g",
        r"\bH100\b",
        "9.0",
        (79000, 96000),
        "H100 SXM5/PCIe 80GB (81559 MiB) and H100 NVL (94 GB, 95830 MiB): GH100, sm90. The NVL's "
        "extra 14 GB is headroom for settings sized for 80 GB.",
    ),
    GpuRule(
        "hopper_80g",
        r"\bH800\b",
        "9.0",
        (79000, 82000),
        "H800 (SXM/PCIe): the export variant of the H100 80GB, same sm90 and memory, less NVLink bandwidth.",
    ),
    GpuRule(
        "hopper_141g",
        r"\bGH200\b",
        "9.0",
        (139000, 150000),
        "GH200 141/144 GB HBM3e variants: the Hopper die of a Grace Hopper superchip, sm90. The 96 GB "
        "HBM3 GH200 fails the memory cross-check on purpose: it does not have the memory this class assumes. "
        "By name alone only '144G'/'141G' says which: 'GH200 480GB' is the superchip's total (96 GB HBM3 "
        "plus 384 GB LPDDR5X), so a bare name without it is refused.",
        r"\b14[14] ?GB?\b",
    ),
    GpuRule(
        "hopper_141g",
        r"\bH200\b",
        "9.0",
        (139000, 150000),
        "H200 SXM and H200 NVL: GH100 with 141 GB HBM3e (143771 MiB), sm90.",
    ),
    GpuRule(
        "blackwell_rtx_96g",
        r"\bRTX PRO 6000\b.*\bBlackwell\b",
        "12.0",
        (94000, 98500),
        "RTX PRO 6000 Blackwell Server, Workstation and Max-Q Workstation Editions: GB202, sm120, "
        "96 GB GDDR7 (97887 MiB), PCIe only. The ct200 host of the field report (8x).",
    ),
    GpuRule(
        "blackwell_dc_180g",
        r"\bB200\b",
        "10.0",
        (176000, 184500),
        "B200: datacenter Blackwell, sm100 (not sm120: different kernels), 180 GB HBM3e (183359 MiB).",
    ),
)


# nvidia-smi answers in well under a second with persistence mode on and within a few seconds
# per GPU while the driver initialises without it; a GPU fallen off the bus or a wedged driver
# makes it hang for good. 30 s covers an 8-GPU host initialising and still ends such a hang.
NVIDIA_SMI_TIMEOUT = 30


class NvidiaSmiTimeout(Exception):
    """nvidia-smi did not finish within its timeout (it was killed)."""


def run_nvidia_smi(path, timeout=NVIDIA_SMI_TIMEOUT):
    """Run ``path`` with NVIDIA_SMI_ARGS; return (rc, stdout, stderr) or raise NvidiaSmiTimeout.

    AnsibleModule.run_command has no timeout. On timeout the process is killed; one stuck in
    the kernel (uninterruptible, as with a GPU fallen off the bus) may not die at once, so it
    gets 2 s more and is then left behind rather than waited for. OSError (a path that cannot
    be run) propagates.
    """
    proc = subprocess.Popen(
        [path] + list(NVIDIA_SMI_ARGS),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        try:
            proc.communicate(timeout=2)
        except subprocess.TimeoutExpired:
            pass
        raise NvidiaSmiTimeout(
            f"nvidia-smi ({path}) did not finish within {timeout:g} s (timeout) and was killed. A GPU that has "
            "fallen off the bus or a hung NVIDIA driver does this: check 'dmesg | grep -i -e nvrm -e xid', "
            "and reboot the host if a GPU is lost. Raise the gpu_facts timeout only for a host whose "
            "nvidia-smi is known to be this slow."
        ) from None
    return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


class GpuError(Exception):
    """Base class: a GPU set that cannot be parsed or classified. The message says the fix."""


class NvidiaSmiParseError(GpuError):
    """nvidia-smi printed something that is not the CSV the query asked for."""


class UnknownGpuError(GpuError):
    """No class matches a GPU (or its compute capability / memory contradict its name)."""


class MixedGpuError(GpuError):
    """More than one GPU model on one host: one SGLang server needs one class."""


class MigEnabledError(GpuError):
    """A GPU is split into MIG instances: a class's settings are for a whole GPU."""


# A line of nvidia-smi's output that says it could not reach a GPU. nvidia-smi then prints the rows of the GPUs it
# could reach and exits 0, so the rows are fewer than the host's GPUs. Real texts: "Unable to determine the device
# handle for GPU0000:65:00.0: Unknown Error" (NVIDIA/nvidia-container-toolkit#69), "... for GPU 0000:0B:00.0:
# Unknown Error" (NVIDIA/open-gpu-kernel-modules#387), "... for GPU 0000:02:00.0: GPU is lost. Reboot the system
# to recover this GPU" (JosephKJ/OWOD#81), "Unable to detect the device handle for GPU0000:B1:00.0: Unknown Error"
# (jamesstringer90/Easy-GPU-PV#276). Any other line naming a GPU by its bus id that is not a WARNING counts too.
GPU_ERROR_LINE = re.compile(
    r"unable to (determine|detect) the device handle|gpu is lost|fallen off the bus|unknown error|requires reset",
    re.IGNORECASE,
)
BUS_ID = re.compile(r"(?<![0-9a-f])[0-9a-f]{3,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]\b", re.IGNORECASE)


def is_gpu_error_line(line):
    """Whether a line of nvidia-smi's output (not a GPU row) says a GPU could not be reached."""
    if GPU_ERROR_LINE.search(line):
        return True
    return bool(BUS_ID.search(line)) and not line.lstrip().upper().startswith("WARNING")


def known_classes_text():
    """The known classes as one line for error messages: ``id (summary), ...``."""
    return "; ".join(f"{c.id} ({c.summary})" for c in GPU_CLASSES)


def _how_to_override():
    return (
        f"Set {OVERRIDE_VARIABLE} in the inventory (host_vars or group_vars) to the known class whose "
        "settings fit this GPU, or add the GPU to GPU_RULES in plugins/module_utils/_gpu.py and a class to "
        "roles/sglang/vars/gpu_classes.yml (see docs/gpu-classes.md)."
    )


# What read_nvidia_smi found: GPU rows, other lines, and values a GPU row could not give.
NvidiaSmiReading = namedtuple("NvidiaSmiReading", ["gpus", "skipped", "unreported", "errors"], defaults=((),))


def _int_or_none(value):
    # nvidia-smi prints "[N/A]", "[Not Supported]" or "[Unknown Error]" for a value it cannot read
    try:
        return int(value)
    except ValueError:
        return None


def read_nvidia_smi(output):
    """Read the CSV of ``nvidia-smi`` run with ``NVIDIA_SMI_ARGS``; never raises.

    Returns ``NvidiaSmiReading(gpus, skipped, unreported)``:

    - ``gpus``: one dict per GPU row, in nvidia-smi's (index) order, ``{index: int, name: str,
      memory_total_mib: int or None, compute_cap: str or None, driver_version: str, uuid: str}``.
      A GPU row is a line of at least six comma-separated fields whose first is an integer index.
    - ``skipped``: every other non-blank line, verbatim. nvidia-smi prints warnings on stdout
      before the CSV ("WARNING: infoROM is corrupted at gpu 0000:41:00.0"); they must not hide
      the GPUs after them. The caller shows each one as a warning.
    - ``unreported``: one note per value a GPU row has but nvidia-smi could not read (memory
      ``[N/A]``, a compute_cap that is not MAJOR.MINOR); such a value is None in ``gpus``, and
      ``classify_reading`` will not name a class without it.
    - ``errors``: the lines (of ``skipped``) that say a GPU could not be reached (``is_gpu_error_line``): the
      rows are then fewer than the GPUs, and the count is unknown.
    ``mig_mode`` of a GPU is "Enabled", "Disabled", or None (no MIG on that GPU: "[N/A]").
    """
    gpus, skipped, unreported = [], [], []
    for raw_line in output.splitlines():
        line = raw_line.strip()
        if not line:
            continue
        fields = [f.strip() for f in line.split(",")]
        index = _int_or_none(fields[0])
        if len(fields) < len(QUERY_FIELDS) or index is None:
            skipped.append(line)
            continue
        # index comes first and the last five fields never contain commas; a name with a comma
        # in it (none known, but names are free text) keeps its commas.
        rest = fields[1:]
        name = ", ".join(rest[: len(rest) - 5])
        memory, compute_cap, driver_version, uuid, mig = rest[len(rest) - 5 :]
        memory_mib = _int_or_none(memory)
        if memory_mib is None:
            unreported.append(f"GPU {index} ({name}) memory.total={memory!r}, not a number")
        if not re.match(r"^\d+\.\d+$", compute_cap):
            unreported.append(
                f"GPU {index} ({name}) compute_cap={compute_cap!r}, not MAJOR.MINOR such as 8.6 "
                "(the compute_cap query field needs NVIDIA driver 510 or newer)"
            )
            compute_cap = None
        gpus.append(
            {
                "index": index,
                "name": name,
                "memory_total_mib": memory_mib,
                "compute_cap": compute_cap,
                "driver_version": driver_version,
                "uuid": uuid,
                "mig_mode": mig if mig in ("Enabled", "Disabled") else None,
            }
        )
    return NvidiaSmiReading(gpus, skipped, unreported, [line for line in skipped if is_gpu_error_line(line)])


def classify_reading(reading):
    """The class id of a host from ``read_nvidia_smi``'s reading, or GpuError naming the fix.

    A value nvidia-smi could not read blocks naming the class (the cross-checks need it), and
    so does output without a single GPU row; neither blocks the facts themselves, so the
    gpu_facts module can report them and let an inventory's sglang_gpu_class decide.
    """
    if reading.unreported:
        raise UnknownGpuError(
            f"nvidia-smi could not read what the GPU class needs: {'; '.join(reading.unreported)}. "
            f"Without it the class cannot be cross-checked. {_how_to_override()}"
        )
    if not reading.gpus and reading.skipped:
        shown = "; ".join(repr(line) for line in reading.skipped[:3])
        raise NvidiaSmiParseError(
            f"nvidia-smi printed no GPU row, only {len(reading.skipped)} other line(s): {shown}. "
            f"Expected the output of 'nvidia-smi {' '.join(NVIDIA_SMI_ARGS)}'. {_how_to_override()}"
        )
    return classify(reading.gpus)


# A vGPU profile name: the GPU's name, a dash, the frame buffer in GB and the profile series
# (Q: virtual workstation, C: compute, B: virtual PC, A: virtual apps), e.g. "NVIDIA A40-8Q".
# The slice has a fraction of the board's memory, so the name cannot say the class.
VGPU_PROFILE = re.compile(r"-\d+[QCBA]\b", re.IGNORECASE)


def identify(name, compute_cap=None, memory_total_mib=None):
    """Return the class id for one GPU, or raise UnknownGpuError naming the GPU and the fix.

    ``compute_cap`` and ``memory_total_mib`` are cross-checks: when given, the matching row's
    values must agree, else the GPU is not what its name suggests (or a new variant) and is
    not guessed at.
    """
    if not isinstance(name, str) or not name.strip():
        raise UnknownGpuError(f"A GPU name is needed to find its class, got {describe(name)}. {_how_to_override()}")
    if memory_total_mib is None and VGPU_PROFILE.search(name):
        raise UnknownGpuError(
            f"GPU {name!r} is a vGPU profile (a slice of a GPU, its memory in GB before Q/C/B/A), and the class "
            "depends on the memory the slice has, not on the board's name. Give the gpu_class filter the gpus "
            "fact of ddtree.sglang.gpu_facts (it has memory_total_mib) instead of a bare name, or set "
            f"{OVERRIDE_VARIABLE} in the inventory. Known classes: {known_classes_text()}."
        )
    for rule in GPU_RULES:
        if not re.search(rule.pattern, name, re.IGNORECASE):
            continue
        problems = []
        low, high = rule.memory_mib
        if compute_cap is not None and str(compute_cap) != rule.compute_cap:
            problems.append(f"compute capability {compute_cap}, expected {rule.compute_cap}")
        if memory_total_mib is not None and not low <= int(memory_total_mib) <= high:
            problems.append(f"memory {memory_total_mib} MiB, expected {low}-{high} MiB")
        if memory_total_mib is None and rule.name_memory and not re.search(rule.name_memory, name, re.IGNORECASE):
            raise UnknownGpuError(
                f"GPU {name!r} is a model sold with different memory sizes, and its name does not say which: "
                f"class {rule.class_id} assumes {low}-{high} MiB, which not every variant has. Give the gpu_class "
                "filter the gpus fact of ddtree.sglang.gpu_facts (it has memory_total_mib) instead of a bare name, "
                f"or set {OVERRIDE_VARIABLE} in the inventory to the class whose settings fit this GPU. "
                f"Known classes: {known_classes_text()}."
            )
        if problems:
            raise UnknownGpuError(
                f"GPU {name!r} looks like class {rule.class_id} by its name, but its {' and '.join(problems)}: "
                "it is a variant the class table does not describe, so its settings would be wrong. "
                f"Known classes: {known_classes_text()}. {_how_to_override()}"
            )
        return rule.class_id
    details = []
    if compute_cap is not None:
        details.append(f"compute capability {compute_cap}")
    if memory_total_mib is not None:
        details.append(f"{memory_total_mib} MiB")
    seen = f" ({', '.join(details)})" if details else ""
    raise UnknownGpuError(
        f"Unknown GPU {name!r}{seen}: no GPU class matches it. Known classes: {known_classes_text()}. "
        f"{_how_to_override()}"
    )


def classify(gpus):
    """Return the one class id of a host's GPUs (dicts as ``read_nvidia_smi`` returns).

    Raises GpuError when the list is empty, MixedGpuError when the host has more than one GPU
    model, UnknownGpuError when the model is not in the table.
    """
    if not isinstance(gpus, (list, tuple)) or not gpus:
        raise GpuError(
            f"No GPU to classify (got {describe(gpus)}): nvidia-smi listed no GPU on this host. {_how_to_override()}"
        )
    for gpu in gpus:
        if not isinstance(gpu, dict) or "name" not in gpu:
            raise GpuError(
                f"Expected a list of GPU dicts with a 'name' key (the gpus fact of gpu_facts), got an item that is "
                f"{describe(gpu)}."
            )
    names = []
    for gpu in gpus:
        if gpu["name"] not in names:
            names.append(gpu["name"])
    if len(names) > 1:
        listing = ", ".join(f"{gpu.get('index', i)}: {gpu['name']}" for i, gpu in enumerate(gpus))
        raise MixedGpuError(
            f"This host mixes GPU models ({listing}). One SGLang server runs its tensor-parallel ranks in "
            "lockstep and one setting table per host, so it needs one GPU model. Limit the server to "
            f"one model's GPUs (CUDA_VISIBLE_DEVICES in sglang_env) and set {OVERRIDE_VARIABLE} to that "
            f"model's class. Known classes: {known_classes_text()}."
        )
    split = [
        f"GPU {gpu.get('index', i)} ({gpu['name']})" for i, gpu in enumerate(gpus) if gpu.get("mig_mode") == "Enabled"
    ]
    if split:
        raise MigEnabledError(
            f"MIG is enabled on {', '.join(split)}: the GPU is split into instances, each with a part of its memory "
            "and SMs, and a class's settings (memory fraction, CUDA graphs, tensor parallelism over whole GPUs) are "
            "for a whole GPU. Disable MIG (nvidia-smi -i <index> -mig 0, then reset the GPU or reboot), or, to "
            f"serve on the instances, set {OVERRIDE_VARIABLE} in the inventory to the class whose settings fit an "
            f"instance. Known classes: {known_classes_text()}."
        )
    # A gpus fact whose memory or compute capability nvidia-smi could not read (null) is not a
    # bare name: its class cannot be cross-checked, as gpu_facts says (classify_reading).
    unread = [
        f"GPU {gpu.get('index', i)} ({gpu['name']}) {field}"
        for i, gpu in enumerate(gpus)
        for field in ("memory_total_mib", "compute_cap")
        if field in gpu and gpu[field] is None
    ]
    if unread:
        raise UnknownGpuError(
            f"nvidia-smi could not read what the GPU class needs: {', '.join(unread)} is null. Without it the "
            f"class cannot be cross-checked. {_how_to_override()}"
        )
    # All GPUs share the name; every one must also pass the cross-checks (a mix of ECC on and
    # off still passes, a different memory size does not).
    class_ids = {identify(gpu["name"], gpu.get("compute_cap"), gpu.get("memory_total_mib")) for gpu in gpus}
    return class_ids.pop()
