# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The alert path, end to end on loopback (scripts/test eda):

    regressing /metrics server --scrape--> Prometheus 2.42 (extensions/eda/prometheus/sglang-alerts.yml)
      --firing alert--> Alertmanager 0.25 --webhook--> ansible-rulebook 1.3.2 running the shipped
      extensions/eda/rulebooks/rollback_on_alert.yml --run_playbook--> the stand-in rollback

Everything is the real program but two parts, each said where it is used: the rulebook's event source
``ansible.eda.alertmanager`` is a test double (tests/eda/alertmanager_source.py: ansible.eda cannot be
installed here, DESIGN.md; with ``EDA_COLLECTIONS=<a collections path holding ansible.eda>`` the test
runs the real one instead), and the rollback is tests/eda/standin_rollback.yml (no systemd here: it
copies the saved NEXTN unit file back, as the real rollback restores the unit). The alert rules are
the shipped ones with one edit: each ``for:`` is cut to 2 s, so that the test takes seconds, not
minutes (``promtool test rules tests/eda/sglang-alerts.test.yml`` checks them as shipped, ``for:``
included, on simulated time).

Passes when the NEXTN unit file is restored byte for byte, the cause recorded is the firing alert's
own summary as Prometheus rendered it from the served value, and the rollback ran once although
Alertmanager sent more than one rollback alert for the host (the rulebook's throttle).
"""

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "unit"))
from prometheus_harness import AlertmanagerServer, Job, PrometheusServer, free_port  # noqa: E402

RULES = REPO / "extensions" / "eda" / "prometheus" / "sglang-alerts.yml"
RULEBOOK = REPO / "extensions" / "eda" / "rulebooks" / "rollback_on_alert.yml"
NEXTN = "[Service]\nExecStart=/opt/sglang/bin/python -m sglang.launch_server --speculative-algorithm NEXTN\n"
DDTREE = "[Service]\nExecStart=/opt/sglang/bin/python -m sglang.launch_server --speculative-algorithm DDTREE\n"
ROLLBACK_PLAY = "PLAY [Restore the last-known-good SGLang unit (stand-in)]"
# Each step's bound, generous for a loaded 2-core machine; the whole test ends within their sum.
JVM_START_S = 90
ALERT_S = 60
ROLLBACK_S = 90


def wait_for(what, check, timeout, proc=None, log=None):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = check()
        if got:
            return got
        if proc is not None and proc.poll() is not None:
            break
        time.sleep(0.25)
    tail = log.read_text(errors="replace")[-6000:] if log and log.exists() else ""
    raise AssertionError(f"{what} not within {timeout} s\n{tail}")


OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: no proxy from the environment


def answers(url):
    try:
        with OPENER.open(url, timeout=1) as resp:
            return resp.status == 200
    except OSError:
        return False


def alertmanager_alerts(am, at_least):
    """The alerts Alertmanager holds (its API v2), once it holds ``at_least``; else None."""
    with OPENER.open(am.url + "/api/v2/alerts", timeout=2) as resp:
        alerts = json.loads(resp.read())
    return alerts if len(alerts) >= at_least else None


def rules_with_short_for(dest):
    """The shipped rules, each ``for:`` cut to 2 s; nothing else changes."""
    rules = yaml.safe_load(RULES.read_text())
    for group in rules["groups"]:
        for rule in group["rules"]:
            if "for" in rule:
                rule["for"] = "2s"
    dest.write_text(yaml.safe_dump(rules, sort_keys=False))
    return dest


@pytest.fixture
def scenario(tmp_path):
    """The host's unit files (DDTree active, NEXTN saved), an inventory, and the processes to stop."""
    (tmp_path / "active").mkdir()
    (tmp_path / "saved").mkdir()
    (tmp_path / "saved" / "sglang.service").write_text(NEXTN)
    (tmp_path / "active" / "sglang.service").write_text(DDTREE)
    (tmp_path / "inventory.yml").write_text(
        yaml.safe_dump(
            {
                "all": {
                    "hosts": {
                        "sim129": {
                            "ansible_connection": "local",
                            "ansible_python_interpreter": sys.executable,
                            "scenario_dir": str(tmp_path),
                        }
                    }
                }
            }
        )
    )
    stop = []
    yield tmp_path, stop
    for thing in reversed(stop):
        thing()


def start_rulebook(work, port):
    """ansible-rulebook on the shipped rulebook. Its alertmanager source is the test double, or the real
    ansible.eda when EDA_COLLECTIONS names a collections path that holds it."""
    real_eda = os.environ.get("EDA_COLLECTIONS")
    sources = work / "sources"
    sources.mkdir()
    if not real_eda:
        # ansible-rulebook looks for <source name>.py in --source-dir before the collections.
        double = REPO / "tests" / "eda" / "alertmanager_source.py"
        (sources / "ansible.eda.alertmanager.py").write_text(double.read_text())
    collections = work / "collections" / "ansible_collections" / "ddtree"
    collections.mkdir(parents=True)
    (collections / "sglang").symlink_to(REPO)
    (work / "vars.yml").write_text(
        yaml.safe_dump(
            {
                "alertmanager_host": "127.0.0.1",
                "alertmanager_port": port,
                "rollback_playbook": str(REPO / "tests" / "eda" / "standin_rollback.yml"),
            }
        )
    )
    paths = [str(work / "collections")] + ([real_eda] if real_eda else [])
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.pathsep.join(paths))
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env["PATH"]
    log = work / "rulebook.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [
                str(Path(sys.executable).parent / "ansible-rulebook"),
                "--rulebook",
                str(RULEBOOK),
                "--inventory",
                str(work / "inventory.yml"),
                "--vars",
                str(work / "vars.yml"),
                "--source-dir",
                str(sources),
                "-v",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=work,
        )
    return proc, log


def stop_process(proc):
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_a_firing_alert_rolls_the_host_back_once(scenario):
    work, stop = scenario
    start = time.monotonic()

    # ansible-rulebook first: its JVM takes the longest to start. Its source answers GET / once it runs.
    rb_port = free_port()
    rulebook, rb_log = start_rulebook(work, rb_port)
    stop.append(lambda: stop_process(rulebook))

    # Alertmanager posts every firing alert at once (group_wait 0 s) to the rulebook's webhook.
    am = AlertmanagerServer(work / "am", f"http://127.0.0.1:{rb_port}/alerts").start()
    stop.append(am.stop)

    # The unit: SGLang-shaped /metrics, traffic at every scrape, collapsing after 3 s.
    unit_port = free_port()
    unit_log = work / "unit.log"
    with open(unit_log, "wb") as out:
        unit = subprocess.Popen(
            [
                sys.executable,
                str(REPO / "tests" / "eda" / "regressing_metrics_server.py"),
                "--port",
                str(unit_port),
                "--decay-after",
                "3",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    stop.append(lambda: stop_process(unit))
    wait_for("the /metrics server", lambda: answers(f"http://127.0.0.1:{unit_port}/metrics"), 20, unit, unit_log)
    rb_up = f"http://127.0.0.1:{rb_port}/"
    wait_for("ansible-rulebook's source", lambda: answers(rb_up), JVM_START_S, rulebook, rb_log)

    # Prometheus scrapes the unit with the host label the rules and the rulebook use (sglang-alerts.yml).
    prom = PrometheusServer(
        work / "prom",
        scrape=[Job("sglang", [f"127.0.0.1:{unit_port}"], {"host": "sim129"})],
        rule_files=[rules_with_short_for(work / "sglang-alerts.yml")],
        alertmanagers=[am.url],
        interval=1.0,
    ).start()
    stop.append(prom.stop)

    firing = prom.wait_alert("SGLangAcceptLengthCollapsed", timeout=ALERT_S)
    cause_file = work / "rollback-cause.txt"
    wait_for("the rollback", cause_file.exists, ROLLBACK_S, rulebook, rb_log)
    # Both rollback alerts of the host reach the rulebook (the aborts follow the collapse).
    prom.wait_alert("SGLangAbortsHigh", timeout=ALERT_S)
    am_alerts = wait_for("both alerts at Alertmanager", lambda: alertmanager_alerts(am, 2), ALERT_S)
    # Time for a second rollback to show, were the throttle not there: the playbook takes a few seconds.
    time.sleep(8)
    stop_process(rulebook)
    log = rb_log.read_text(errors="replace")

    assert (work / "active" / "sglang.service").read_bytes() == NEXTN.encode(), "the NEXTN unit was not restored"
    cause = cause_file.read_text().strip()
    # The alert's own summary, rendered by Prometheus from the value the unit served (1.02).
    assert re.fullmatch(
        r"sim129: (SGLangAcceptLengthCollapsed: sglang:spec_accept_length 1\.02 on sim129 \(bound >= 1\.2\)"
        r"|SGLangAbortsHigh: aborted requests per request 0\.\d+ on sim129 \(bound <= 0\.02\))",
        cause,
    ), cause
    assert log.count(ROLLBACK_PLAY) == 1, f"the rollback ran {log.count(ROLLBACK_PLAY)} times (throttle: once)\n{log}"
    names = sorted(a["labels"]["alertname"] for a in am_alerts)
    assert names == ["SGLangAbortsHigh", "SGLangAcceptLengthCollapsed"], names
    assert all(a["labels"]["host"] == "sim129" and a["labels"]["ddtree_action"] == "rollback" for a in am_alerts)
    assert firing[0]["labels"]["instance"] == f"127.0.0.1:{unit_port}"
    print(f"alert path: {cause} ({time.monotonic() - start:.0f} s)")
