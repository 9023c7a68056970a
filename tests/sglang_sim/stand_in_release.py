"""The SGLang release the simulator stands in for, as files on a test host.

Usage: python stand_in_release.py WHEEL OUT.tar.gz

On a real host the sglang role checks the unit's options against the release the unit runs,
read from its installed files (ddtree.sglang.sglang_release_info with argv). On a test host the
unit runs the simulator, so the check needs the files of the release the simulator pretends to
be: this script writes them as a tarball of lib/python3.11/site-packages/ (a release venv's
layout) for extensions/molecule/shared/prepare_gpu_host.yml to unpack under
/opt/sglang-sim/release/, the path the molecule scenarios give as sglang_release_path.

What goes in, from the pinned release's wheel, unchanged: the files that define the command
line and the speculative algorithms (sglang/srt/server_args.py, sglang/srt/arg_groups/,
sglang/srt/speculative/, sglang/srt/runtime_context.py, the modules their option choices come
from, sglang/version.py) and
the dist-info METADATA (the version). What is added: sgl-project/sglang#29907's ServerArgs
field, speculative_ddtree_budget, after speculative_dflash_block_size as the pull request
declares it, since the deploys under test run the DDTree build (the simulator's default build
is the same: release + #29907). Standard library only.
"""

import ast
import io
import os
import re
import sys
import tarfile
import zipfile

# sgl-project/sglang#29907's field, as its branch declares it (commit
# 6c52d319a429be6216fba93b8291b7aff79516bb; docs/install.md quotes it).
PR29907_FIELD = (
    "speculative_ddtree_budget: A[\n"
    "    Optional[int],\n"
    '    "DDTREE only. Tree expansion budget. Defaults to speculative_num_draft_tokens - 1.",\n'
    "] = None\n"
)
PR29907_ANCHOR = "speculative_dflash_block_size"

# The package files the checks read (plugins/module_utils/_sglang_flags.py follows the field
# modules' imports into these; _sglang_source.py reads speculative/; _sglang_adaptive.py follows
# adaptive_unsupported_reason()'s helpers into runtime_context.py and arg_groups/).
_KEEP = re.compile(
    r"^sglang/(__init__|version)\.py$"
    r"|^sglang/srt/__init__\.py$"
    r"|^sglang/srt/server_args\.py$"
    r"|^sglang/srt/arg_groups/.*\.py$"
    r"|^sglang/srt/speculative/.*\.py$"
    r"|^sglang/srt/runtime_context\.py$"
    r"|^sglang/srt/model_executor/(__init__|cuda_graph_config)\.py$"
    r"|^sglang/srt/utils/(__init__|common)\.py$"
    r"|^sglang-[^/]+\.dist-info/METADATA$"
)
SITE = "lib/python3.11/site-packages"


def add_pr29907_field(files):
    """Insert #29907's field after speculative_dflash_block_size in whichever file declares it."""
    for name in ("sglang/srt/arg_groups/fields/spec.py", "sglang/srt/server_args.py"):
        if name not in files:
            continue
        source = files[name].decode("utf-8")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", None) == PR29907_ANCHOR:
                indent = " " * node.col_offset
                lines = source.splitlines(keepends=True)
                lines.insert(node.end_lineno, "".join(indent + line + "\n" for line in PR29907_FIELD.splitlines()))
                files[name] = "".join(lines).encode("utf-8")
                return files
    raise ValueError(f"no {PR29907_ANCHOR} field in the wheel: cannot add sgl-project/sglang#29907's field")


def release_files(wheel, everything=False, ddtree=True):
    """{path inside site-packages: bytes} of the stand-in release: all .py files with everything=True,
    without #29907's field with ddtree=False."""
    with zipfile.ZipFile(wheel) as archive:
        files = {
            name: archive.read(name)
            for name in archive.namelist()
            if _KEEP.match(name) or (everything and name.startswith("sglang/") and name.endswith(".py"))
        }
    if "sglang/srt/server_args.py" not in files:
        raise ValueError(f"{wheel} has no sglang/srt/server_args.py: not an SGLang wheel")
    return add_pr29907_field(files) if ddtree else files


def write_tarball(wheel, out):
    files = release_files(wheel)
    tmp = out + ".tmp"
    with tarfile.open(tmp, "w:gz") as tar:
        for name in sorted(files):
            info = tarfile.TarInfo(f"{SITE}/{name}")
            info.size = len(files[name])
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(files[name]))
    os.replace(tmp, out)
    return len(files)


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    try:
        count = write_tarball(*argv)
    except (OSError, ValueError, zipfile.BadZipFile) as err:
        sys.stderr.write(f"cannot build the stand-in SGLang release from {argv[0]}: {err}\n")
        return 1
    print(f"{argv[1]}: {count} files of {os.path.basename(argv[0])}, with #29907's field")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
