# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Prometheus client against a real Prometheus (Debian 12's 2.42) on loopback: what it scraped
from an SGLang-shaped /metrics server, backfilled history, its own errors and warnings, basic
auth and TLS as Prometheus serves them itself (--web.config.file), a path prefix
(--web.route-prefix); bearer tokens and extra headers as a proxy in front of it receives them."""

import math
import time
from pathlib import Path

import pytest
from ansible_collections.ddtree.sglang.plugins.module_utils._prometheus import (
    PrometheusClient,
    PrometheusError,
    label_selector,
)
from prometheus_harness import Job, PrometheusServer
from sglang_metrics_text import MetricsServer, SglangMetrics

# bcrypt of PASSWORD (crypt.crypt with METHOD_BLOWFISH, 2^10 rounds): Prometheus' basic_auth_users
# takes bcrypt hashes only. The real server accepting PASSWORD proves the pair.
USER = "prom-reader"
PASSWORD = "s3cret-test-password"
BCRYPT = "$2b$10$nfNyzawdSEWSbcp/aaoz8umNdkFN51P5czQEKXWAAg46f0ZYn7agu"
REPO = Path(__file__).resolve().parents[4]


@pytest.fixture(scope="module")
def plain_prometheus(tmp_path_factory):
    """One Prometheus without targets, for the tests that only evaluate expressions."""
    with PrometheusServer(tmp_path_factory.mktemp("plain-prometheus")) as server:
        yield server


@pytest.fixture
def sglang_unit():
    """An SGLang-shaped /metrics server serving 6 requests per scrape, accept length 3.0."""

    def step(n, state):
        state.serve(6)

    with MetricsServer(SglangMetrics(accept_length=3.0, running=4), step=step) as server:
        yield server


def _hostport(url):
    return url.split("://", 1)[1]


def test_instant_and_range_queries_read_what_prometheus_scraped(prometheus, sglang_unit):
    target = _hostport(sglang_unit.url)
    prom = prometheus(scrape=[Job("sglang", [target], {"host": "sim129"})], interval=0.5)
    prom.wait_scraped(scrapes=4)
    client = PrometheusClient(prom.url, timeout=5)

    selector = label_selector({"job": "sglang", "instance": target})
    res = client.query(f"sglang:spec_accept_length{{{selector}}}")
    assert res.result_type == "vector" and res.warnings == []
    (series,) = res.series
    # The labels a scrape gives (job, instance, the static label) beside SGLang's own.
    assert series.labels["instance"] == target and series.labels["job"] == "sglang"
    assert series.labels["host"] == "sim129" and series.labels["tp_rank"] == "0"
    assert res.value() == 3.0

    # Requests grow by 6 per scrape: over the range, a counter that only goes up.
    now = time.time()
    ranged = client.query_range(f"sum(sglang:num_requests_total{{{selector}}})", now - 3, now, step=0.5)
    assert ranged.result_type == "matrix"
    values = [v for _t, v in ranged.series[0].samples]
    assert len(values) >= 4 and values == sorted(values) and values[-1] > values[0]
    assert all(v % 6 == 0 for v in values)
    times = [t for t, _v in ranged.series[0].samples]
    assert all(b - a == pytest.approx(0.5) for a, b in zip(times, times[1:], strict=False))

    # series(): the unit's series as Prometheus labels them; targets(): what it scrapes.
    names = {s["__name__"] for s in client.series(f"{{{selector}}}")}
    assert {"sglang:num_requests_total", "sglang:spec_accept_length", "up"} <= names
    (t,) = client.targets()
    assert t["labels"]["instance"] == target and t["health"] == "up"


def test_nan_and_infinities_come_back_as_floats(plain_prometheus):
    client = PrometheusClient(plain_prometheus.url)
    assert math.isnan(client.query("0/0").value())
    assert client.query("1/0").value() == math.inf
    assert client.query("-1/0").value() == -math.inf
    assert client.query("vector(2.5)").series[0].labels == {}
    assert client.query("scalar(vector(7))").result_type == "scalar"
    # A timeout in fractions of a second reaches Prometheus in a duration it parses (whole milliseconds).
    assert PrometheusClient(plain_prometheus.url, timeout=2.5).query("vector(1)", timeout=0.75).value() == 1.0


def test_prometheus_errors_are_quoted_with_the_query(plain_prometheus):
    prom = plain_prometheus
    client = PrometheusClient(prom.url)
    with pytest.raises(PrometheusError) as e:
        client.query("sum(rate(sglang:num_requests_total[5m])")
    err = e.value
    assert err.kind == "api" and err.error_type == "bad_data" and err.status == 400
    # Prometheus' own words (its parser's position and reason), the query and the server.
    assert "parse error" in err.message and "sum(rate(sglang:num_requests_total[5m])" in err.message
    assert prom.url in err.message and "the query or its parameters are invalid" in err.message

    now = time.time()
    with pytest.raises(PrometheusError) as e:
        client.query_range("up", now - 86400, now, step=1)
    assert e.value.error_type == "bad_data" and "exceeded maximum resolution of 11,000 points" in e.value.message

    with pytest.raises(PrometheusError) as e:
        client.query_range("up", now - 10, now, step=0)
    assert e.value.kind == "invalid" and "step must be positive" in e.value.message


def test_one_figure_from_several_series_is_an_error_naming_them(plain_prometheus):
    client = PrometheusClient(plain_prometheus.url)
    res = client.query(
        'label_replace(vector(1), "instance", "a:1", "", "") or label_replace(vector(2), "instance", "b:2", "", "")'
    )
    assert len(res.series) == 2
    with pytest.raises(PrometheusError) as e:
        res.value()
    assert 'instance="a:1"' in e.value.message and 'instance="b:2"' in e.value.message
    assert "narrow its label selector to one unit" in e.value.message
    assert client.query("absent(vector(1))").value() is None


def test_warnings_are_handed_back_as_prometheus_said_them(prometheus, h):
    # A remote_read endpoint that refuses: Prometheus answers from its local storage and warns.
    dead = f"http://127.0.0.1:{h.free_port()}/read"
    prom = prometheus(extra_config={"remote_read": [{"url": dead, "read_recent": True}]})
    res = PrometheusClient(prom.url).query("up")
    assert res.warnings and any("connection refused" in w for w in res.warnings), res.warnings


def test_a_path_prefix_is_kept(prometheus):
    prom = prometheus(
        extra_args=["--web.route-prefix=/prometheus", "--web.external-url=http://127.0.0.1/prometheus"],
        ready_path="/prometheus/-/ready",
    )
    assert PrometheusClient(prom.url + "/prometheus/").query("vector(1)").value() == 1.0
    with pytest.raises(PrometheusError) as e:
        PrometheusClient(prom.url).query("vector(1)")
    assert e.value.kind == "http" and e.value.status == 404 and "path prefix" in e.value.message


def test_basic_auth_and_tls_as_prometheus_serves_them(prometheus, self_signed_cert):
    cert, key = self_signed_cert
    prom = prometheus(
        web_config={"tls_server_config": {"cert_file": cert, "key_file": key}, "basic_auth_users": {USER: BCRYPT}}
    )
    assert prom.url.startswith("https://")
    ok = PrometheusClient(prom.url, username=USER, password=PASSWORD, ca_path=cert)
    assert ok.query("vector(1)").value() == 1.0
    no_verify = PrometheusClient(prom.url, username=USER, password=PASSWORD, validate_certs=False)
    assert no_verify.query("vector(2)").value() == 2.0

    with pytest.raises(PrometheusError) as e:
        PrometheusClient(prom.url, username=USER, password=PASSWORD).query("vector(1)")
    assert e.value.kind == "tls" and "certificate" in e.value.message

    with pytest.raises(PrometheusError) as e:
        PrometheusClient(prom.url, username=USER, password="wrong", ca_path=cert).query("vector(1)")
    assert e.value.kind == "http" and e.value.status == 401
    assert "give a bearer token, or basic auth user and password" in e.value.message
    assert "wrong" not in e.value.message and PASSWORD not in e.value.message


def test_bearer_token_and_headers_reach_the_server(scripted_server, h):
    answer = h.Script(200, '{"status": "success", "data": {"resultType": "scalar", "result": [1700000000, "4"]}}')
    url, seen = scripted_server({"/api/v1/query?query=scalar%28vector%284%29%29&timeout=3000ms": answer})
    client = PrometheusClient(url, timeout=3, bearer_token="tok-123", headers={"X-Scope-OrgID": "tenant-a"})
    assert client.query("scalar(vector(4))").value() == 4.0
    (req,) = seen
    assert req["headers"]["Authorization"] == "Bearer tok-123"
    assert req["headers"]["X-Scope-OrgID"] == "tenant-a"


@pytest.mark.live_server
def test_a_server_that_is_not_prometheus(sglang_unit):
    # SGLang's port, not Prometheus': /api/v1/query is not there.
    with pytest.raises(PrometheusError) as e:
        PrometheusClient(sglang_unit.url).query("up")
    assert e.value.kind == "http" and e.value.status == 404 and "is not a Prometheus server's" in e.value.message


def test_transport_failures_name_the_server(h):
    url = f"http://127.0.0.1:{h.free_port()}"
    with pytest.raises(PrometheusError) as e:
        PrometheusClient(url).query("up")
    assert e.value.kind == "refused" and url in e.value.message


# the client's timeout is kept on the wall clock: 1 s asked, well under 3 s taken
@pytest.mark.wallclock
def test_a_server_that_trickles_times_out_within_the_timeout(trickle_server):
    slow = trickle_server(interval=0.5)
    start = time.monotonic()
    with pytest.raises(PrometheusError) as e:
        PrometheusClient(slow.base_url, timeout=1).query("up")
    assert e.value.kind == "timeout" and time.monotonic() - start < 3


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"url": "prom:9090"}, "is not a Prometheus URL"),
        ({"url": "http://prom:9090/api/v1"}, "without /api/v1"),
        ({"url": "http://u:p@prom:9090"}, "carries credentials"),
        ({"url": "http://prom:9090", "bearer_token": "t", "username": "u"}, "not both"),
        ({"url": "http://prom:9090", "password": "p"}, "without a username"),
        ({"url": "http://prom:9090", "ca_path": "/nonexistent/ca.pem"}, "does not exist"),
        ({"url": "http://prom:9090", "bearer_token": "t", "headers": {"authorization": "x"}}, "give one of them"),
    ],
)
def test_bad_settings_are_refused_before_any_request(kwargs, words):
    with pytest.raises(PrometheusError) as e:
        PrometheusClient(**kwargs)
    assert e.value.kind == "invalid" and words in e.value.message


def test_label_selector_quotes_values():
    assert label_selector({"instance": "ct129:30000", "job": 'a"b'}) == 'instance="ct129:30000", job="a\\"b"'
    assert label_selector('{host="ct129"}') == 'host="ct129"'


def test_a_backfilled_week_is_served(prometheus, prometheus_backfill):
    # A week of running requests at one-minute resolution: 0..29 in a repeating ramp.
    now = int(time.time()) // 60 * 60
    labels = {"job": "sglang", "instance": "ct129:30000", "model_name": "m"}
    samples = [(t, (i % 30)) for i, t in enumerate(range(now - 7 * 86400, now - 600, 60))]
    storage = prometheus_backfill([("sglang:num_running_reqs", labels, samples)])
    client = PrometheusClient(prometheus(storage=storage).url)
    sel = label_selector({"instance": "ct129:30000"})
    at = now - 600
    count = client.query(f"count_over_time(sglang:num_running_reqs{{{sel}}}[7d])", time=at).value()
    assert count == len([t for t, _value in samples if t > at - 7 * 86400])
    p50 = client.query(f"quantile_over_time(0.5, sglang:num_running_reqs{{{sel}}}[7d])", time=at).value()
    p90 = client.query(f"quantile_over_time(0.9, sglang:num_running_reqs{{{sel}}}[7d])", time=at).value()
    assert p50 == pytest.approx(14.5, abs=0.5) and p90 == pytest.approx(26.1, abs=0.5)


_LOADER = {"ready": False}


def _plugin_loader(init):
    """Initialise Ansible's plugin loader once per process: a second init warns."""
    if not _LOADER["ready"]:
        init()
        _LOADER["ready"] = True


def _role_selector(**host_vars):
    """ddtree_deploy_prometheus_selector's default, rendered by Ansible's templar as the role renders it."""
    from ansible.parsing.dataloader import DataLoader
    from ansible.plugins.loader import init_plugin_loader
    from ansible.template import Templar

    try:  # ansible-core 2.19's data tagging: a file read here is not trusted as a template
        from ansible.template import trust_as_template
    except ImportError:  # before 2.19 (the matrix's 2.16-2.18) every string is a template
        trust_as_template = str

    _plugin_loader(init_plugin_loader)
    loader = DataLoader()
    defaults = loader.load_from_file(str(REPO / "roles" / "ddtree_deploy" / "defaults" / "main.yml"))
    templar = Templar(loader=loader, variables=host_vars)
    # A role's defaults file is trusted as templates, as the role's own defaults are.
    return templar.template(trust_as_template(defaults["ddtree_deploy_prometheus_selector"]))


SELECTOR_CASES = [
    ({"inventory_hostname": "ct129"}, "ct129:30000"),
    ({"inventory_hostname": "gpu-7.dc1.example", "sglang_port": 30001}, "gpu-7.dc1.example:30001"),
    ({"inventory_hostname": "ct130", "ansible_host": "10.20.0.129"}, "10.20.0.129:30000"),
]


def test_the_roles_default_selector_finds_the_unit_as_a_scrape_labels_it(prometheus, sglang_unit):
    """The default selector matches the instance a scrape config names the unit by (inventory name or
    ansible_host, and the port) and no other unit: a neighbour on the next port, a name that only
    starts the same, and a dot that a regex would take for any character."""
    target = _hostport(sglang_unit.url)
    jobs = []
    for n, (_host_vars, instance) in enumerate(SELECTOR_CASES):
        name, port = instance.rsplit(":", 1)
        lookalikes = [f"{name}0:{port}", f"{name}:1{port}", name.replace(".", "x", 1) if "." in name else "x" + name]
        jobs.append(Job(f"unit{n}", [target], {"instance": instance}))
        jobs += [Job(f"other{n}-{i}", [target], {"instance": other}) for i, other in enumerate(lookalikes)]
    prom = prometheus(scrape=jobs, interval=0.5)
    prom.wait_scraped()
    client = PrometheusClient(prom.url)
    for host_vars, instance in SELECTOR_CASES:
        selector = _role_selector(**host_vars)
        res = client.query(f"sglang:spec_accept_length{{{selector}}}")
        assert [s.labels["instance"] for s in res.series] == [instance], selector
