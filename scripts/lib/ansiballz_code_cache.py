# A compiled-code cache for Ansible's module payloads, installed on the simulated GPU host
# images only (scripts/build-test-image.sh gpu, both suites), never by the collection.
#
# Why: every Ansible module run ships an AnsiballZ zip and imports ansible.module_utils
# out of it with zipimport, which cannot keep bytecode, so each run compiles basic.py and
# its peers again. On these 2-core machines that compilation was most of the test hosts'
# CPU: one module run took 0.27-0.30 s of CPU (user + system), 0.12-0.20 s with this cache
# (a captured ansible.builtin.stat payload run in a bookworm test container). The molecule stage is bound
# by CPU, and runs thousands of modules.
#
# What it changes: only where a code object comes from. The source zipimport read is the
# key (with the interpreter's version and the file's path inside the zip), so a changed
# module_utils file is compiled afresh; the code gets the file name this run's zip gives it,
# so tracebacks read as without the cache. Any failure to read or write the cache falls
# back to compiling, as Python does without it. The minimal image (the field report's
# bare host) does not get it: that host is kept as a user's host is.
#
# Installed at interpreter start by ddtree-ansiballz-code-cache.pth next to it in
# /usr/lib/python3/dist-packages (site.py runs a .pth file's import lines); importing it
# alone changes nothing (the unit tests import it).
# Standard library only: the hosts have nothing else.
import hashlib
import marshal
import os
import sys
import zipimport

CACHE_DIR = "/var/cache/ddtree-ansiballz-code"

# zipimport's own compile step (CPython 3.8-3.13: _get_module_code calls it by name).
_compile_source = getattr(zipimport, "_compile_source", None)


def cache_key(pathname, source):
    """The key of SOURCE found at PATHNAME: the interpreter, the path inside the zip, the source."""
    inside = pathname.rpartition(".zip")[2]
    digest = hashlib.sha256()
    for part in (sys.version.encode(), inside.encode("utf-8", "surrogateescape"), source):
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    return digest.hexdigest()


def with_filename(code, filename):
    """CODE and every code object inside it, named FILENAME (what compile() would have given)."""
    consts = tuple(with_filename(c, filename) if isinstance(c, type(code)) else c for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


def compile_source(pathname, source, cache_dir=None):
    """zipimport._compile_source, answered from CACHE_DIR when this source was compiled before."""
    cache_dir = cache_dir or CACHE_DIR
    path = os.path.join(cache_dir, cache_key(pathname, source))
    try:
        with open(path, "rb") as f:
            return with_filename(marshal.load(f), pathname)
    except (OSError, EOFError, ValueError, TypeError):
        pass  # not cached yet, or unreadable: compile, as without the cache
    code = _compile_source(pathname, source)
    try:
        os.makedirs(cache_dir, mode=0o700, exist_ok=True)
        partial = f"{path}.{os.getpid()}"
        with open(partial, "wb") as f:
            marshal.dump(code, f)
        # Whole or not at all: two module runs may write the same entry at once.
        os.replace(partial, path)
    except OSError:
        pass
    return code


def install():
    """Answer zipimport's compile step from the cache (where this Python has that step)."""
    if _compile_source is not None:
        zipimport._compile_source = compile_source
