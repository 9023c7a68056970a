# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's own code that the simulator's scripts use, loaded by path (standard library only).

A script here uses a file of plugins/module_utils/ rather than a copy of its code: on a test host
extensions/molecule/shared/prepare_gpu_host.yml puts that file beside the scripts
(/opt/sglang-sim/<name>.py), in a checkout it is the repository's. The host has no
ansible_collections package to import it from, hence the load by path.
"""

import importlib.util
import os

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))


def places(name):
    """Where ``name``.py is looked for: beside this file (test hosts), then the checkout's module_utils."""
    return (os.path.join(HERE, name + ".py"), os.path.join(REPO, "plugins", "module_utils", name + ".py"))


def load(name):
    """plugins/module_utils/``name``.py as a module, or None when it is in neither place."""
    for path in places(name):
        if os.path.exists(path):
            spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module
    return None
