# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, annotations, division, print_function

DOCUMENTATION = r"""
name: gpu_class
short_description: The GPU class id of a GPU name or of a host's GPU list
version_added: 0.1.0
author: ddtree.sglang developers (@ddtree)
description:
  - Maps an NVIDIA GPU to the class id that selects its SGLang settings (C(ampere_48g), C(ada_48g), C(hopper_80g),
    C(hopper_141g), C(blackwell_rtx_96g), C(blackwell_dc_180g)).
  - Uses the same table as the M(ddtree.sglang.gpu_facts) module, so the filter and the module never disagree.
  - Given a name, matches the name only, and refuses a name whose memory it cannot know (a model sold with memory
    sizes outside its class, such as C(NVIDIA GH200 480GB), the 96 GB part). Given the C(gpus) list of
    M(ddtree.sglang.gpu_facts), also cross-checks each GPU's compute capability and memory, and fails when the host
    mixes GPU models.
  - An unknown GPU, a name that contradicts its compute capability or memory, or a mixed host raises an error that
    names the GPU, lists the known classes and says to set C(sglang_gpu_class) in the inventory.
options:
  _input:
    description:
      - A GPU name as nvidia-smi prints it (C(NVIDIA RTX A6000)), or the C(gpus) fact of
        M(ddtree.sglang.gpu_facts) (a list of dicts with C(name), C(compute_cap), C(memory_total_mib)).
    type: raw
    required: true
"""

EXAMPLES = r"""
- name: Class of a GPU name
  ansible.builtin.debug:
    msg: "{{ 'NVIDIA RTX PRO 6000 Blackwell Server Edition' | ddtree.sglang.gpu_class }}"
  # => blackwell_rtx_96g

- name: Class of the host, from the gathered GPU list, unless the inventory sets one
  ansible.builtin.set_fact:
    __sglang_gpu_class: "{{ sglang_gpu_class | default(gpus | ddtree.sglang.gpu_class, true) }}"
"""

RETURN = r"""
_value:
  description: The GPU class id.
  type: string
  sample: ampere_48g
"""

from collections.abc import Mapping  # noqa: E402

from ansible.errors import AnsibleFilterError  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._gpu import GpuError, classify, identify  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._values import describe  # noqa: E402


def gpu_class(gpus):
    """Class id of a GPU name, or of a list of GPU dicts (the gpus fact)."""
    try:
        if isinstance(gpus, str):
            return identify(gpus)
        if isinstance(gpus, Mapping):
            # one GPU dict: accept it as a one-GPU host rather than fail on the shape
            gpus = [gpus]
        if not isinstance(gpus, (list, tuple)):
            raise AnsibleFilterError(
                f"gpu_class expects a GPU name or the gpus list of ddtree.sglang.gpu_facts, got {describe(gpus)}."
            )
        return classify([dict(gpu) if isinstance(gpu, Mapping) else gpu for gpu in gpus])
    except GpuError as err:
        raise AnsibleFilterError(str(err)) from None


class FilterModule:
    """GPU classification."""

    def filters(self):
        return {"gpu_class": gpu_class}
