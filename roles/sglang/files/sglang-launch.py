# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Start SGLang with an API key that never appears on a command line or in an environment.

SGLang 0.5.23 takes its key only as ``--api-key`` (ServerArgs field ``api_key``,
arg_groups/fields/serving.py:160, parsed from ``sys.argv[1:]`` by prepare_server_args,
launch_server.py:81 and server_args.py:668-696; no environment fallback), and a command line
is world-readable through ps and /proc/PID/cmdline. systemd hands the key to this launcher
from a root-only file, as a credential (LoadCredential=sglang-api-key:FILE, systemd 250+: the
file $CREDENTIALS_DIRECTORY/sglang-api-key, readable by the service only, in no environment)
or, on older systemd, as DDTREE_SGLANG_API_KEY from an EnvironmentFile. The launcher, exec'd
by the unit's python, appends ``--api-key KEY`` to sys.argv inside the process and runs
SGLang's entry point in the same interpreter. /proc/PID/cmdline keeps the exec'd arguments,
which hold no key; SGLang's worker processes are started with multiprocessing's "spawn"
(entrypoints/engine.py:1995) and get their arguments through a pipe, not a command line.

What is left: the key is in the server's memory (it must be, to check requests), SGLang logs
it in clear in its server_args line at start (entrypoints/engine.py:1185; the collection
redacts every journal text it saves or prints), and with an EnvironmentFile the initial
environment block (/proc/PID/environ of the main process, readable by its user and root)
keeps it even after the variable is dropped here.

Usage (ExecStart): PYTHON sglang-launch.py -m sglang.launch_server [options]
               or: PYTHON sglang-launch.py /path/to/launch_server.py [options]
"""

import os
import runpy
import sys

KEY_VARIABLE = "DDTREE_SGLANG_API_KEY"
# The name in the unit's LoadCredential=NAME:FILE (roles/sglang/templates/sglang.service.j2).
CREDENTIAL = "sglang-api-key"


def read_key():
    """The key from systemd's credential, else from the environment (which is then dropped)."""
    # Drop the variable either way so SGLang's worker processes do not inherit it.
    key = os.environ.pop(KEY_VARIABLE, "")
    directory = os.environ.get("CREDENTIALS_DIRECTORY", "")
    path = os.path.join(directory, CREDENTIAL)
    if directory and os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            key = f.read().strip()
    return key


def main():
    args = sys.argv[1:]
    if not args or (args[0] == "-m" and len(args) < 2):
        sys.exit(f"usage: {sys.argv[0]} (-m MODULE | SCRIPT) [SGLang options]")
    key = read_key()
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
