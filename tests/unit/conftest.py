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


def _import_the_collections_python():
    """Import every module_utils and filter module now, by the plain path above. A test that renders templates
    as ansible-playbook does (init_plugin_loader: tests/unit/awx) installs ansible-core's collection finder for
    the rest of its process; a module of this collection first imported after that goes through the finder,
    which refuses a collection it did not load itself ("collection metadata was not loaded for collection
    ddtree.sglang"), so the failure depended on which xdist worker ran which test first."""
    import importlib

    for kind in ("module_utils", "filter"):
        for path in sorted((REPO_ROOT / "plugins" / kind).glob("*.py")):
            if path.name != "__init__.py":
                importlib.import_module(f"ansible_collections.ddtree.sglang.plugins.{kind}.{path.stem}")


_import_the_collections_python()


# --------------------------------------------------------------------------- SGLang releases
import os  # noqa: E402
import shutil  # noqa: E402

import pytest  # noqa: E402
from sglang_releases import pinned_sglang_version, unpack_sglang  # noqa: E402


@pytest.fixture(scope="session")
def sglang_tables(tmp_path_factory):
    """Option tables read by _sglang_flags from release wheels: tables(version, ddtree=False)."""
    from ansible_collections.ddtree.sglang.plugins.module_utils import _sglang_flags

    cache = {}

    def tables(version, ddtree=False):
        if (version, ddtree) not in cache:
            dest = tmp_path_factory.mktemp(f"sglang-{version}{'-ddtree' if ddtree else ''}")
            try:
                cache[version, ddtree] = _sglang_flags.read_cli_options(str(unpack_sglang(version, dest, ddtree)))
            finally:
                shutil.rmtree(dest, ignore_errors=True)
        return cache[version, ddtree]

    return tables


@pytest.fixture(scope="session")
def sglang_release_table(sglang_tables):
    """The option table of the pinned SGLang release, read from its wheel by _sglang_flags."""
    return sglang_tables(pinned_sglang_version())


# --------------------------------------------------------------------------- the ansible CLI


@pytest.fixture(scope="session")
def ansible_cli_env():
    """The environment for running ansible-playbook on localhost against the collection under
    test: its collection path, no colour, no warnings about the implicit localhost inventory, and
    ansible-core's default stdout callback, whose `fatal:` line carries a failed task's whole
    result (tests read it as JSON). Run from the clone, its ansible.cfg would select
    ddtree_default, which leaves out of that line a msg the [ERROR] line above already printed."""
    return dict(
        os.environ,
        ANSIBLE_STDOUT_CALLBACK="default",
        ANSIBLE_COLLECTIONS_PATH=str(COLLECTIONS_ROOT),
        ANSIBLE_NOCOLOR="1",
        ANSIBLE_LOCALHOST_WARNING="0",
        ANSIBLE_INVENTORY_UNPARSED_WARNING="0",
    )


# --------------------------------------------------------------------------- Prometheus, Alertmanager
from prometheus_harness import (  # noqa: E402
    AlertmanagerServer,
    Job,
    PrometheusServer,
    backfill,
    openmetrics_text,
)


@pytest.fixture
def prometheus(tmp_path):
    """Factory: a real Prometheus (Debian's 2.42) on a free loopback port, stopped after the test.

        prom = prometheus(scrape=[Job("sglang", ["127.0.0.1:30000"], {"host": "sim129"})], interval=1)
        prom.url; prom.wait_scraped(); prom.targets(); prom.stop()

    Keyword arguments are PrometheusServer's (tests/unit/prometheus_harness.py): ``scrape`` (Job
    objects, or ``host:port`` strings for one job named ``sglang``), ``rule_files``,
    ``alertmanagers`` (URLs), ``interval`` (scrape and evaluation, seconds), ``storage`` (a TSDB
    directory, e.g. a backfilled one), ``web_config`` (its --web.config.file: TLS, basic auth).
    The classes are on the fixture too: ``prometheus.Job``.
    """
    started = []

    def start(scrape=(), **kwargs):
        jobs = [j for j in scrape if isinstance(j, Job)]
        plain = [t for t in scrape if not isinstance(t, Job)]
        if plain:
            jobs.append(Job("sglang", plain))
        server = PrometheusServer(tmp_path / f"prometheus-{len(started)}", scrape=jobs, **kwargs)
        started.append(server)
        return server.start()

    start.Job = Job
    yield start
    for server in started:
        server.stop()


@pytest.fixture
def prometheus_backfill(tmp_path):
    """Factory: ``prometheus_backfill(series_or_text, storage=None)`` -> the TSDB directory holding it.

    ``series_or_text`` is OpenMetrics text, or ``[(name, labels, [(t, v), ...])]`` (written by
    ``openmetrics_text``: give ``job`` and ``instance`` in the labels, a backfill adds none). It is
    turned into blocks by ``promtool tsdb create-blocks-from openmetrics``; start ``prometheus(storage=dir)``
    on the directory to query it. Call it again with the same ``storage`` to add more.
    """
    made = []

    def fill(series_or_text, storage=None):
        storage = storage or tmp_path / f"tsdb-{len(made)}"
        text = series_or_text if isinstance(series_or_text, str) else openmetrics_text(series_or_text)
        backfill(storage, text, directory=tmp_path)
        made.append(storage)
        return storage

    return fill


@pytest.fixture
def alertmanager(tmp_path):
    """Factory: ``alertmanager(webhook_url, group_by=("alertname", "host"), group_wait="0s")`` -> a real
    Alertmanager (Debian's 0.25) on a free loopback port that posts its webhook to ``webhook_url``."""
    started = []

    def start(webhook_url, **kwargs):
        server = AlertmanagerServer(tmp_path / f"alertmanager-{len(started)}", webhook_url, **kwargs)
        started.append(server)
        return server.start()

    yield start
    for server in started:
        server.stop()


# --------------------------------------------------------------------------- tests that serve in real time
import socket  # noqa: E402

# A test that serves HTTP on loopback while the code under test reads it (a simulator, a scripted or
# trickling server, sglang-router, Prometheus, Alertmanager, a /metrics server) depends on the CPU it
# gets within its windows: a duration of 0.3 s, a timeout of 0.5 s, a scrape every 0.5 s. Such tests
# are marked `live_server`. The pytest stage runs them on every core; the ansible-core matrix leaves
# them out: it runs beside molecule at the lowest priority, where a process waits seconds for a core
# (its CI run at 74af72c failed eight of them, all on time), and what they time is the module's
# reading of sockets, the same on every ansible-core. The other tests of the same modules load them
# through each version.
LIVE_SERVER_FIXTURES = frozenset(
    {"sglang_sim", "shared_sim", "sglang_router", "scripted_server", "trickle_server", "prometheus", "alertmanager"}
)


def pytest_collection_modifyitems(items):
    for item in items:
        if LIVE_SERVER_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.live_server)


@pytest.fixture(autouse=True)
def _a_server_needs_the_live_server_mark(request, monkeypatch):
    """Keep the mark true: a test without it that opens a listening socket fails, naming the fix, so a new
    server-backed test cannot slip into the matrix unmarked."""
    if request.node.get_closest_marker("live_server") is not None:
        return

    def refuse(sock, *args):
        raise RuntimeError(
            f"{request.node.nodeid} serves on {sock.getsockname()}: mark it @pytest.mark.live_server "
            "(tests/unit/conftest.py says why) or use one of the server fixtures, which mark it"
        )

    monkeypatch.setattr(socket.socket, "listen", refuse)
