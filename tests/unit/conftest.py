"""Make the collection importable as ``ansible_collections.ddtree.sglang`` in unit tests.

The repository root is the collection root, so a symlink tree under ``.cache/`` gives
Python the ``ansible_collections/<namespace>/<name>`` layout that ansible-core's loader
and ansible-test expect, without copying files.
"""

import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
COLLECTIONS_ROOT = REPO_ROOT / ".cache" / "collections"
_link = COLLECTIONS_ROOT / "ansible_collections" / "ddtree" / "sglang"
if not _link.exists():
    _link.parent.mkdir(parents=True, exist_ok=True)
    _link.symlink_to(REPO_ROOT, target_is_directory=True)
if str(COLLECTIONS_ROOT) not in sys.path:
    sys.path.insert(0, str(COLLECTIONS_ROOT))
