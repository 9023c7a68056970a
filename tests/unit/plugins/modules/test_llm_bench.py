# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""llm_bench end to end: its documentation, its options, a sweep against the simulator, and a
sweep through the ansible CLI that ends within its deadline."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from ansible_collections.ddtree.sglang.plugins.module_utils import _bench
from ansible_collections.ddtree.sglang.plugins.modules import llm_bench
from hang_guard import hang_guard
from module_harness import run_main

REPO = Path(__file__).resolve().parents[4]
SIM_ENV = {"SGLANG_SIM_TOK_S": "100", "SGLANG_SIM_TTFT_S": "0.05", "SGLANG_SIM_ACCEPT_LENGTH": "1"}


def run_module(args, check_mode=False):
    return run_main(llm_bench.main, args, check_mode=check_mode)


def _doc():
    return yaml.safe_load(llm_bench.DOCUMENTATION)


def test_documentation_matches_argument_spec():
    options = _doc()["options"]
    assert set(options) == set(llm_bench.ARGUMENT_SPEC)
    for name, spec in llm_bench.ARGUMENT_SPEC.items():
        doc = options[name]
        assert doc["type"] == spec["type"], name
        assert doc.get("default") == spec.get("default"), name
        assert doc.get("choices") == spec.get("choices"), name
        assert bool(doc.get("required")) == bool(spec.get("required")), name
        if name != "base_url":
            assert spec.get("default") == _bench.DEFAULTS[name], name


def test_documentation_has_examples_and_return_samples():
    assert _doc()["attributes"]["check_mode"]["support"] == "full"
    assert _doc()["attributes"]["diff_mode"]["support"] == "none"
    examples = yaml.safe_load(llm_bench.EXAMPLES)
    assert all("ddtree.sglang.llm_bench" in t or "ansible.builtin.debug" in t for t in examples)
    level = yaml.safe_load(llm_bench.RETURN)["levels"]["contains"]
    for key in (
        "concurrency",
        "output_tokens_per_second",
        "requests_per_second",
        "completed",
        "errors",
        "ttft_s",
        "itl_s",
        "decode_tokens_per_second",
        "token_count_source",
    ):
        assert level[key]["description"] and "sample" in level[key], key


@pytest.mark.parametrize("option", ["api_key", "headers"])
def test_options_carrying_secrets_are_no_log(option):
    assert llm_bench.ARGUMENT_SPEC[option]["no_log"] is True


@pytest.mark.wallclock
def test_a_sweep_returns_one_level_per_concurrency_in_the_order_given(shared_sim):
    sim = shared_sim("healthy", None, env=SIM_ENV)
    args = {"base_url": sim.base_url, "concurrency": [2, 1], "duration": 1.0, "warmup": 0.2, "max_tokens": 16}
    failed, r = run_module(args, check_mode=True)
    assert not failed, r["msg"]
    assert r["changed"] is False and r["concurrency"] == [2, 1]
    assert [level["concurrency"] for level in r["levels"]] == [2, 1]
    two, one = r["levels"]
    assert two["completed"] > 0 and one["completed"] > 0
    # Independent streams on the simulator: twice the streams, twice the rate.
    assert two["output_tokens_per_second"] == pytest.approx(2 * one["output_tokens_per_second"], rel=0.1)
    assert r["msg"].startswith("concurrency 2: ")


def test_api_key_reaches_the_server_and_not_the_result(sglang_sim):
    sim = sglang_sim(mode="healthy", algorithm=None, args=["--api-key", "k3y-b3nch"], env=SIM_ENV)
    args = {"base_url": sim.base_url, "api_key": "k3y-b3nch", "concurrency": 1, "duration": 0.5, "warmup": 0}
    failed, r = run_module(args)
    assert not failed, r["msg"]
    assert r["levels"][0]["completed"] > 0
    assert "k3y-b3nch" not in json.dumps(r)


def test_a_wrong_key_fails_naming_the_fix(sglang_sim):
    sim = sglang_sim(mode="healthy", algorithm=None, args=["--api-key", "right"], env=SIM_ENV)
    args = {"base_url": sim.base_url, "api_key": "wrong", "concurrency": 1, "duration": 0.3, "warmup": 0}
    failed, r = run_module(dict(args, model="/models/Qwen3.6-27B"))
    assert failed
    assert "HTTP 401" in r["msg"] and "set api_key to the server's --api-key" in r["msg"]
    assert r["levels"][0]["completed"] == 0 and r["levels"][0]["errors"]["count"] > 0


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ({"base_url": "localhost:30000"}, "base_url must be an http:// or https:// URL"),
        ({"base_url": "http://127.0.0.1:1", "concurrency": [1, "x"]}, "concurrency takes whole numbers"),
    ],
)
def test_bad_options_fail_cleanly(args, words):
    failed, r = run_module(args)
    assert failed and words in r["msg"] and r["levels"] == []
    # the same keys as a run's result, for a caller that registers it with failed_when: false
    assert r["reasons"] == [r["msg"]] and r["greedy"] == []


def test_greedy_answers_alone_through_the_module(shared_sim):
    sim = shared_sim("healthy", None, env=SIM_ENV)
    prompts = [{"id": "short", "prompt": "The capital of France is"}]
    failed, r = run_module({"base_url": sim.base_url, "concurrency": [], "greedy_tokens": 5, "prompts": prompts})
    assert not failed, r["msg"]
    assert r["levels"] == [] and r["reasons"] == []
    assert [(g["id"], g["verdict"], g["completion_tokens"]) for g in r["greedy"]] == [("short", "pass", 5)]


def test_missing_requests_names_the_library(monkeypatch):
    monkeypatch.setattr(llm_bench, "HAS_REQUESTS", False)
    failed, r = run_module({"base_url": "http://127.0.0.1:1"})
    assert failed and "requests" in r["msg"]
    # the reasons a caller with failed_when: false reads (the deploy's gate) name it too
    assert r["reasons"] == [r["msg"]] and r["levels"] == [] and r["greedy"] == []


@pytest.mark.wallclock
def test_a_three_level_sweep_ends_within_its_deadline_through_ansible(shared_sim):
    """The issue's 'a sweep of 3 levels x 8 s ends within its deadline', at a tenth of the scale
    (3 levels x 0.8 s), through the ansible CLI and the module transport."""
    sim = shared_sim("healthy", None, env=SIM_ENV)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(REPO / ".cache" / "collections"), ANSIBLE_NOCOLOR="1")
    ansible = Path(sys.executable).parent / "ansible"
    args = {
        "base_url": sim.base_url,
        "concurrency": [1, 2, 4],
        "duration": 0.8,
        "warmup": 0.2,
        "max_tokens": 16,
        "deadline": 6,
    }
    start = time.monotonic()
    proc = subprocess.run(
        [str(ansible), "localhost", "-m", "ddtree.sglang.llm_bench", "-a", json.dumps(args)],
        env=env,
        capture_output=True,
        text=True,
        timeout=hang_guard(60),
        check=False,
    )
    took = time.monotonic() - start
    marker = "localhost | SUCCESS => "
    assert proc.returncode == 0 and marker in proc.stdout, proc.stdout[-3000:] + proc.stderr[-3000:]
    result = json.loads(proc.stdout[proc.stdout.index(marker) + len(marker) :])
    assert [level["concurrency"] for level in result["levels"]] == [1, 2, 4]
    assert all(level["completed"] > 0 for level in result["levels"])
    assert result["deadline_reached"] is False and result["elapsed_s"] < 6
    assert took < 6 + 10, took  # the deadline plus ansible's own start on a loaded 2-core machine


def test_the_ad_hoc_form_takes_concurrency_as_text(scripted_server, h, ansible_cli_env):
    # issue #38: `-a 'concurrency=[1,16]'` was refused with a message suggesting exactly what was typed.
    events = [{"object": "text_completion", "choices": [{"index": 0, "text": "Hi", "finish_reason": "length"}]}]
    url, _seen = scripted_server(
        {
            "/v1/models": h.Script(200, json.dumps({"data": [{"id": "m"}]})),
            "/v1/completions": h.Script(
                200, headers={"content-type": "text/event-stream"}, pieces=h.sse(*events, "[DONE]")
            ),
        }
    )
    for text in ("[1,2]", "1,2"):
        args = f"base_url={url} concurrency={text} duration=0.3 warmup=0 max_tokens=1"
        out = subprocess.run(
            # this Python's ansible: the matrix runs the test under each ansible-core
            [str(Path(sys.executable).parent / "ansible"), "localhost", "-m", "ddtree.sglang.llm_bench", "-a", args],
            env=ansible_cli_env,
            capture_output=True,
            text=True,
            timeout=hang_guard(120),
            check=False,
        )
        assert out.returncode == 0, out.stdout + out.stderr
        result = json.loads(out.stdout.split(" => ", 1)[1])
        assert result["concurrency"] == [1, 2] and [lv["concurrency"] for lv in result["levels"]] == [1, 2]
