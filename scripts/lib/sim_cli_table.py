"""The pinned SGLang release's option table for the simulator, read from its wheel (test set-up).

Usage: python scripts/lib/sim_cli_table.py WHEEL OUT.json

The release's argument definitions are read without importing SGLang (no torch), by
plugins/module_utils/_sglang_flags.py's read_cli_options() (the wheel's sources unpacked to a
temporary directory), and its rules for adaptive speculative decoding (the table's "adaptive":
DEFAULT_ADAPTIVE_CONFIG, adaptive_unsupported_reason()'s reasons, ...) by
plugins/module_utils/_sglang_adaptive.py's read_rules(), from the same files.
The table is written to OUT.json atomically; tests/sglang_sim/launch_server.py builds its
argument parser from it, so the simulator refuses what the release refuses. Exit 1 with the
reason when the wheel cannot be read.
"""

import importlib.util
import json
import os
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FLAGS_MODULE = os.path.join(REPO, "plugins", "module_utils", "_sglang_flags.py")
ADAPTIVE_MODULE = os.path.join(REPO, "plugins", "module_utils", "_sglang_adaptive.py")


def _module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def table_from_wheel(wheel):
    flags = _module("_sglang_flags", FLAGS_MODULE)
    with flags.unpacked_wheel(wheel) as package_dir:
        table = flags.read_cli_options(package_dir)
        table["adaptive"] = _module("_sglang_adaptive", ADAPTIVE_MODULE).read_rules(package_dir)
    return table


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    wheel, out = argv
    try:
        table = table_from_wheel(wheel)
    except Exception as e:  # noqa: BLE001 - any reason the wheel cannot be read ends the set-up, named
        sys.stderr.write(f"cannot read the SGLang option table from {wheel}: {e}\n")
        return 1
    if not table.get("options"):
        sys.stderr.write(f"{wheel}: read_cli_options found no options\n")
        return 1
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(out)), suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(table, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, out)
    print(f"{out}: {len(table['options'])} options of sglang {table.get('sglang_version')}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
