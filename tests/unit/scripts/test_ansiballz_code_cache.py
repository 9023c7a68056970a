"""The GPU test hosts' code cache for Ansible's module payloads (scripts/lib/ansiballz_code_cache.py).

A module imported from a zip, as AnsiballZ imports ansible.module_utils, must behave exactly as
without the cache: the same code for the same source, new code for changed source, tracebacks
naming this run's zip, and a cache it cannot read or write is no cache at all.
"""

import functools
import importlib.util
import os
import sys
import traceback
import zipfile
import zipimport
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts" / "lib"))
import ansiballz_code_cache  # noqa: E402

MODULE = """
def answer():
    return {value!r}

def fail():
    raise RuntimeError("from the payload")
"""


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setattr(
        zipimport, "_compile_source", functools.partial(ansiballz_code_cache.compile_source, cache_dir=str(cache))
    )
    return cache


def payload(directory, value):
    """A zip holding package pkg/util.py, as an AnsiballZ payload holds ansible/module_utils."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "ansible_stat_payload.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("pkg/__init__.py", "")
        z.writestr("pkg/util.py", MODULE.format(value=value))
    return path


def load(zip_path):
    module = importlib.util.module_from_spec(zipimport.zipimporter(f"{zip_path}/pkg").find_spec("util"))
    module.__spec__.loader.exec_module(module)
    return module


def test_a_second_payload_with_the_same_source_is_answered_from_the_cache(tmp_path, cache_dir):
    first = load(payload(tmp_path / "run1", "forty-two"))
    entries = sorted(os.listdir(cache_dir))
    assert len(entries) == 1 and first.answer() == "forty-two"

    second_zip = payload(tmp_path / "run2", "forty-two")
    (cache_dir / entries[0]).touch()
    before = (cache_dir / entries[0]).stat().st_mtime_ns
    second = load(second_zip)
    assert second.answer() == "forty-two"
    assert sorted(os.listdir(cache_dir)) == entries and (cache_dir / entries[0]).stat().st_mtime_ns == before


def test_code_from_the_cache_names_this_runs_zip_in_tracebacks(tmp_path, cache_dir):
    load(payload(tmp_path / "run1", 1))
    second_zip = payload(tmp_path / "run2", 1)
    module = load(second_zip)
    assert module.fail.__code__.co_filename == f"{second_zip}/pkg/util.py"
    with pytest.raises(RuntimeError) as caught:
        module.fail()
    frames = traceback.extract_tb(caught.value.__traceback__)
    assert frames[-1].filename == f"{second_zip}/pkg/util.py" and frames[-1].name == "fail"
    assert "run1" not in "".join(traceback.format_exception(caught.value))


def test_changed_source_is_compiled_afresh(tmp_path, cache_dir):
    assert load(payload(tmp_path / "run1", "old")).answer() == "old"
    assert load(payload(tmp_path / "run2", "new")).answer() == "new"
    assert len(os.listdir(cache_dir)) == 2


def test_a_corrupt_entry_is_compiled_again(tmp_path, cache_dir):
    load(payload(tmp_path / "run1", "kept"))
    (entry,) = cache_dir.iterdir()
    entry.write_bytes(b"\x00not marshal data")
    assert load(payload(tmp_path / "run2", "kept")).answer() == "kept"


def test_a_cache_it_cannot_write_is_no_cache(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setattr(
        zipimport,
        "_compile_source",
        functools.partial(ansiballz_code_cache.compile_source, cache_dir=str(blocker / "cache")),
    )
    assert load(payload(tmp_path / "run1", "still works")).answer() == "still works"


def test_the_key_holds_the_path_inside_the_zip_not_the_runs_directory():
    key = ansiballz_code_cache.cache_key
    basic = "ansible/module_utils/basic.py"
    assert key(f"/tmp/a/p.zip/{basic}", b"x") == key(f"/tmp/b/p.zip/{basic}", b"x")
    assert key(f"/tmp/a/p.zip/{basic}", b"x") != key("/tmp/a/p.zip/ansible/module_utils/urls.py", b"x")
    assert key("/tmp/a/p.zip/m.py", b"x") != key("/tmp/a/p.zip/m.py", b"y")


def test_importing_it_changes_nothing_until_installed():
    # The .pth line on the hosts calls install(); the test process's zipimport is untouched.
    assert zipimport._compile_source is not ansiballz_code_cache.compile_source
