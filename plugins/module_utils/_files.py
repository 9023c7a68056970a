# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading and atomically writing small files (standard library only).

systemd_unit_snapshot writes its store and puts a unit's files back with it; the test hosts'
tests/sglang_sim/write_host_files.py writes their own files with it (copied beside it as
/opt/sglang-sim/_files.py), so both replace a file the same way: never half written.
"""

from __future__ import absolute_import, division, print_function

import hashlib
import os
import stat
import tempfile


def read_bytes(path):
    """A file's content, or None when it cannot be read (missing, a directory)."""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


def sha256_bytes(data):
    return hashlib.sha256(data).hexdigest()


def differs(path, data, mode):
    """Whether ``path`` is missing, or its content or permission bits are not ``data`` and ``mode``."""
    try:
        info = os.stat(path)
    except OSError:
        return True
    return stat.S_IMODE(info.st_mode) != mode or read_bytes(path) != data


def atomic_write(path, data, mode, uid=None, gid=None):
    """Write ``data`` beside ``path`` and rename it into place: the file is never half written.

    The temporary file gets its owner (``uid``/``gid``, when given) and ``mode`` before the rename,
    so the file is never seen with the wrong ones either.
    """
    directory = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".ddtree-", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if uid is not None:
            os.chown(tmp, uid, gid)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise
