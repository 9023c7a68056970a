# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Start SGLang with an API key that never appears on a command line.

SGLang takes its key only as ``--api-key`` (ServerArgs has no environment fallback), and a
command line is world-readable through ps and /proc/PID/cmdline. systemd reads the key from a
root-only EnvironmentFile into DDTREE_SGLANG_API_KEY; this launcher, exec'd by the unit's
python, moves it into sys.argv inside the process and runs SGLang's entry point in the same
interpreter. /proc/PID/cmdline keeps the exec'd arguments, which hold no key.

Usage (ExecStart): PYTHON sglang-launch.py -m sglang.launch_server [options]
               or: PYTHON sglang-launch.py /path/to/launch_server.py [options]
"""

import os
import runpy
import sys

KEY_VARIABLE = "DDTREE_SGLANG_API_KEY"


def main():
    args = sys.argv[1:]
    if not args or (args[0] == "-m" and len(args) < 2):
        sys.exit(f"usage: {sys.argv[0]} (-m MODULE | SCRIPT) [SGLang options]")
    # Drop the key from the environment so SGLang's worker processes do not inherit it.
    key = os.environ.pop(KEY_VARIABLE, "")
    if args[0] == "-m":
        target, options = args[1], args[2:]
    else:
        target, options = args[0], args[1:]
    if key:
        options = options + ["--api-key", key]
    sys.argv = [target] + options
    if args[0] == "-m":
        runpy.run_module(target, run_name="__main__", alter_sys=True)
    else:
        runpy.run_path(target, run_name="__main__")


if __name__ == "__main__":
    main()
