#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

DOCUMENTATION = r"""
---
module: gpu_facts
short_description: Gather the NVIDIA GPUs of a host and the GPU class that selects its SGLang settings
version_added: 0.1.0
description:
  - Runs C(nvidia-smi --query-gpu=index,name,memory.total,compute_cap,driver_version,uuid,mig.mode.current
    --format=csv,noheader,nounits) and returns the GPUs as facts with typed values.
  - Identifies the GPU class (C(ampere_48g), C(ada_48g), C(hopper_80g), C(hopper_141g), C(blackwell_rtx_96g),
    C(blackwell_dc_180g)) from the GPU name, cross-checked against compute capability and memory. The same table
    backs the P(ddtree.sglang.gpu_class#filter) filter.
  - Fails, quoting what nvidia-smi said and its exit code, when nvidia-smi is missing or fails (for example
    when the NVIDIA driver is not loaded), and names the likely fix.
  - Fails when nvidia-smi does not finish within O(timeout) (it is killed), naming the timeout. A GPU that
    has fallen off the bus or a hung driver makes nvidia-smi hang instead of failing.
  - By default also fails when the GPUs match no class or the host mixes GPU models. With
    O(fail_on_unknown_class=false) it returns C(gpu_class=null) and a warning instead, so that a class set in
    the inventory (C(sglang_gpu_class)) can be used for a GPU the table does not know.
  - "Lines of nvidia-smi's output that are not GPU rows (such as C(WARNING: infoROM is corrupted at gpu
    0000:41:00.0), which nvidia-smi prints on standard output before the CSV) are skipped, each with a warning
    and listed in RV(skipped_lines); the GPU rows around them are read."
  - "A line saying nvidia-smi could not reach a GPU (C(Unable to determine the device handle for GPU0000:41:00.0:
    Unknown Error), C(... GPU is lost. Reboot the system to recover this GPU), or any other line naming a GPU by its
    bus id that is not a warning) fails the module, naming the line, whatever O(fail_on_unknown_class) says:
    nvidia-smi then prints the rows of the GPUs it could reach and exits 0, so the rows are fewer than the host's
    GPUs and the GPU count is unknown (a unit sized for the rows would be wrong)."
  - A GPU with MIG enabled (C(mig.mode.current) V(Enabled)) is split into instances, each with a part of its memory,
    and a class's settings are for a whole GPU. It matches no class, as an unknown GPU does, unless the inventory
    names the class (C(sglang_gpu_class), with O(fail_on_unknown_class=false)).
  - A value nvidia-smi cannot read in a GPU row (C([N/A]) memory, a compute capability that is not a number)
    is V(null) in the facts and blocks only the class, like an unknown GPU. With O(fail_on_unknown_class=false)
    the module passes with a warning and the inventory's C(sglang_gpu_class) decides.
  - Never changes the host.
author:
  - ddtree.sglang developers (@ddtree)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.facts
attributes:
  check_mode:
    support: full
    details: nvidia-smi only reads, so the module runs and reports the same in check mode.
  diff_mode:
    support: none
  facts:
    support: full
  platform:
    platforms: posix
options:
  nvidia_smi_path:
    description:
      - Path of the nvidia-smi executable.
      - Default is C(nvidia-smi) found on the remote PATH or in C(/usr/bin), C(/usr/local/bin), C(/usr/sbin),
        C(/sbin) and C(/bin).
    type: path
  fail_on_unknown_class:
    description:
      - Fail when no GPU class matches the GPUs (an unknown model, a model whose compute capability or memory
        contradicts its name, a memory or compute capability nvidia-smi could not read, no GPU at all) or when
        the host has more than one GPU model.
      - When V(false), return C(gpu_class=null) with a warning that says why; the GPU list is returned either way.
        Use this when the inventory sets C(sglang_gpu_class).
    type: bool
    default: true
  timeout:
    description:
      - Seconds nvidia-smi may run before it is killed and the module fails, naming the timeout.
      - The default 30 covers a host whose driver initialises 8 GPUs (without persistence mode nvidia-smi
        takes a few seconds per GPU); a healthy host with persistence mode answers in well under a second.
    type: int
    default: 30
notes:
  - The C(compute_cap) query field needs NVIDIA driver 510 or newer (C(mig.mode.current) is older).
seealso:
  - ref: ddtree.sglang.gpu_class filter <ansible_collections.ddtree.sglang.gpu_class_filter>
    description: The same classification from a GPU name or the C(gpus) fact.
"""

EXAMPLES = r"""
- name: Detect the GPUs and their class
  ddtree.sglang.gpu_facts:

- name: Show what was found
  ansible.builtin.debug:
    msg: "{{ gpu_count }} x {{ gpus[0].name }} -> {{ gpu_class }}"

- name: Keep going for a GPU the class table does not know when the inventory names the class
  ddtree.sglang.gpu_facts:
    fail_on_unknown_class: "{{ sglang_gpu_class | length == 0 }}"

- name: Use an nvidia-smi outside PATH
  ddtree.sglang.gpu_facts:
    nvidia_smi_path: /usr/local/nvidia/bin/nvidia-smi
"""

RETURN = r"""
ansible_facts:
  description: Facts about the host's NVIDIA GPUs.
  returned: success
  type: complex
  contains:
    gpus:
      description:
        - One entry per GPU, in nvidia-smi's index order.
        - C(memory_total_mib) (an integer) and C(compute_cap) (a string) are V(null) when nvidia-smi could not
          read them (C([N/A])).
        - C(mig_mode) is V(Enabled), V(Disabled), or V(null) for a GPU without MIG (nvidia-smi's C([N/A])).
      type: list
      elements: dict
      returned: success
      sample:
        - index: 0
          name: NVIDIA RTX A6000
          memory_total_mib: 49140
          compute_cap: "8.6"
          driver_version: 550.127.05
          uuid: GPU-5a1c8f0e-2b7d-4c3e-9f10-6d2a8b4e1c01
          mig_mode: null
        - index: 1
          name: NVIDIA RTX A6000
          memory_total_mib: 49140
          compute_cap: "8.6"
          driver_version: 550.127.05
          uuid: GPU-9e3b2d1a-7c6f-4a58-b0e2-3f1d5c7a9b02
          mig_mode: null
    gpu_count:
      description: Number of GPUs.
      type: int
      returned: success
      sample: 2
    gpu_class:
      description:
        - The GPU class id, the key of C(roles/sglang/vars/gpu_classes.yml).
        - V(null) when no class matches and O(fail_on_unknown_class=false).
      type: str
      returned: success
      sample: ampere_48g
skipped_lines:
  description:
    - Lines of nvidia-smi's standard output that are not GPU rows (warnings, headers), verbatim, in order. Each
      is also a warning.
  type: list
  elements: str
  returned: when nvidia-smi ran and exited with 0
  sample: ["WARNING: infoROM is corrupted at gpu 0000:41:00.0"]
gpu_errors:
  description: The lines of nvidia-smi's output that say a GPU could not be reached; when there is one, the module
    fails and returns no facts (the GPU count is unknown).
  type: list
  elements: str
  returned: when nvidia-smi ran and exited with 0
  sample: ["Unable to determine the device handle for GPU0000:41:00.0: Unknown Error"]
nvidia_smi_path:
  description: The nvidia-smi that was run.
  type: str
  returned: always
  sample: /usr/bin/nvidia-smi
rc:
  description: Exit code of nvidia-smi.
  type: int
  returned: when nvidia-smi ran
  sample: 9
stdout:
  description: What nvidia-smi printed on standard output.
  type: str
  returned: when nvidia-smi ran
  sample: "0, NVIDIA RTX A6000, 49140, 8.6, 550.127.05, GPU-5a1c8f0e-2b7d-4c3e-9f10-6d2a8b4e1c01, [N/A]"
stderr:
  description: What nvidia-smi printed on standard error.
  type: str
  returned: when nvidia-smi ran
  sample: ""
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._gpu import (  # noqa: E402
    NVIDIA_SMI_TIMEOUT,
    GpuError,
    NvidiaSmiTimeout,
    classify_reading,
    read_nvidia_smi,
    run_nvidia_smi,
)

# Where nvidia-smi lives when PATH of a non-login ssh session misses it.
EXTRA_BIN_DIRS = ["/usr/bin", "/usr/local/bin", "/usr/sbin", "/sbin", "/bin"]

# Known nvidia-smi failures (its documented exit codes and messages) -> what to do.
FAILURE_HINTS = (
    (
        lambda rc, text: "couldn't communicate with the NVIDIA driver" in text or rc == 9,
        "The NVIDIA kernel driver is not loaded: install the driver, or load it (modprobe nvidia) "
        "and check 'dmesg | grep -i nvrm'. In a container, pass the GPUs and driver through.",
    ),
    (
        lambda rc, text: "Driver/library version mismatch" in text,
        "The loaded kernel module and the user-space driver libraries differ (a driver upgrade without a "
        "reboot): reboot the host or reload the nvidia modules.",
    ),
    (
        lambda rc, text: "No devices were found" in text or rc == 6,
        "nvidia-smi sees no GPU: check that the GPUs are present (lspci | grep -i nvidia) and, in a "
        "container or VM, passed through.",
    ),
    (
        lambda rc, text: rc == 12 or "NVML Shared Library Not Found" in text,
        "libnvidia-ml.so was not found: the driver's user-space libraries are missing.",
    ),
    (
        lambda rc, text: rc == 15 or "fallen off the bus" in text,
        "A GPU has fallen off the bus: check the host (dmesg, power, PCIe) and reboot it.",
    ),
    (
        lambda rc, text: rc == 2 or "not a valid field" in text,
        "This nvidia-smi does not know a queried field; the compute_cap field needs NVIDIA driver 510 or newer.",
    ),
)


class GpuFacts:
    """Run nvidia-smi once, parse it, classify the GPUs."""

    def __init__(self, module):
        self.module = module
        self.params = module.params

    def find_nvidia_smi(self):
        path = self.params["nvidia_smi_path"]
        if path:
            return path
        found = self.module.get_bin_path("nvidia-smi", opt_dirs=EXTRA_BIN_DIRS)
        if not found:
            self.module.fail_json(
                msg="nvidia-smi was not found on PATH nor in {}: install the NVIDIA driver and its utilities "
                "(Debian: nvidia-driver and nvidia-smi), or set nvidia_smi_path.".format(", ".join(EXTRA_BIN_DIRS)),
                nvidia_smi_path=None,
            )
        return found

    def _fail_lost(self, result, reading):
        """nvidia-smi could not reach a GPU: the count is unknown, never the smaller count of the rows."""
        lines = "; ".join(repr(line) for line in reading.errors)
        result["msg"] = (
            f"nvidia-smi could not reach every GPU: {lines}. It printed {len(reading.gpus)} GPU row(s) and exited 0, "
            "so the host's GPU count is unknown (a unit sized for the rows would use the wrong tensor parallelism). "
            "A GPU whose device handle nvidia-smi cannot get has usually fallen off the bus or needs a reset: check "
            "'dmesg | grep -i -e nvrm -e xid' and 'lspci | grep -i nvidia', then reset the GPU (nvidia-smi -r -i "
            "<index>) or reboot the host."
        )
        self.module.fail_json(**result)

    def run(self):
        path = self.find_nvidia_smi()
        try:
            rc, out, err = run_nvidia_smi(path, self.params["timeout"])
        except NvidiaSmiTimeout as exc:
            self.module.fail_json(msg=str(exc), nvidia_smi_path=path)
        except OSError as exc:
            # an executable that cannot be started: missing, not executable, wrong architecture
            self.module.fail_json(
                msg=f"Cannot run nvidia-smi at {path}: {exc.strerror or exc}. Point nvidia_smi_path at the "
                "nvidia-smi executable, or leave it unset to find nvidia-smi on PATH.",
                nvidia_smi_path=path,
            )
        result = {"changed": False, "nvidia_smi_path": path, "rc": rc, "stdout": out, "stderr": err}
        if rc != 0:
            said = " ".join((err.strip() + " " + out.strip()).split()) or "(nothing)"
            hints = [hint for matches, hint in FAILURE_HINTS if matches(rc, said)]
            result["msg"] = f"nvidia-smi failed (exit code {rc}): {said}" + (f" {hints[0]}" if hints else "")
            self.module.fail_json(**result)
        reading = read_nvidia_smi(out)
        gpus = reading.gpus
        result["skipped_lines"] = reading.skipped
        result["gpu_errors"] = list(reading.errors)
        if reading.errors:
            self._fail_lost(result, reading)
        for line in reading.skipped:
            self.module.warn(f"Skipped a line of nvidia-smi's output that is not a GPU row: {line!r}")
        try:
            gpu_class = classify_reading(reading)
        except GpuError as exc:
            if self.params["fail_on_unknown_class"]:
                result["msg"] = str(exc)
                self.module.fail_json(**result)
            self.module.warn(f"No GPU class for this host; gpu_class is null. {exc}")
            gpu_class = None
        result["ansible_facts"] = {"gpus": gpus, "gpu_count": len(gpus), "gpu_class": gpu_class}
        self.module.exit_json(**result)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            nvidia_smi_path=dict(type="path"),
            fail_on_unknown_class=dict(type="bool", default=True),
            timeout=dict(type="int", default=NVIDIA_SMI_TIMEOUT),
        ),
        supports_check_mode=True,
    )
    if module.params["timeout"] < 1:
        module.fail_json(msg=f"timeout must be at least 1 second, got {module.params['timeout']}")
    GpuFacts(module).run()


if __name__ == "__main__":
    main()
