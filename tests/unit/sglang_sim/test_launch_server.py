# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The SGLang simulator keeps its contract (docs/architecture.md, tests/sglang_sim/README.md):
SGLang's flags and checks, SGLang's JSON shapes, and each failure of the field report."""

import argparse
import ast
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import requests
from ansible_collections.ddtree.sglang.plugins.module_utils._journal_causes import match_cause
from hang_guard import hang_guard
from sglang_releases import pinned_sglang_version

LAUNCH = str(Path(__file__).resolve().parents[2] / "sglang_sim" / "launch_server.py")


def launch(args, env=None, timeout=10):
    """Run the simulator to completion (for modes and checks that end before serving)."""
    run_env = {k: v for k, v in os.environ.items() if not k.startswith(("SGLANG_SIM_", "DDTREE_SIM_"))}
    run_env.update(DDTREE_SIM_BEHAVIOUR_FILE="/nonexistent", SGLANG_SIM_BIND_DELAY_S="0", SGLANG_SIM_LOAD_SECONDS="0")
    run_env.update(env or {})
    return subprocess.run(
        [sys.executable, LAUNCH, *args], env=run_env, capture_output=True, text=True, timeout=timeout, check=False
    )


def lines(resp):
    return [ln[len("data: ") :] for ln in resp.text.split("\n\n") if ln.startswith("data: ")]


# --- flags and SGLang's own checks ------------------------------------------------------------
# The simulator parses with the pinned release's option table (read from its wheel at set-up),
# so these are the release's answers; the texts are quoted from the 0.5.23 wheel and CPython.

REPO = Path(__file__).resolve().parents[3]
CLI_TABLE = REPO / ".cache" / "sglang_sim" / "sglang_cli.json"


def test_the_table_is_the_pinned_release():
    table = json.loads(CLI_TABLE.read_text())
    assert table["sglang_version"] == pinned_sglang_version()
    assert table["prog"] == "sglang serve"  # sglang/srt/server_args.py:679
    dests = {o["dest"] for o in table["options"]}
    # arg_groups/fields/exec_.py:629-634: the split that made --cuda-graph-max-bs ambiguous
    assert {"cuda_graph_max_bs_decode", "cuda_graph_max_bs_prefill"} <= dests and "cuda_graph_max_bs" not in dests
    assert "speculative_ddtree_budget" not in dests  # #29907 is in no release


@pytest.mark.parametrize(
    ("args", "words"),
    [
        # CPython 3.11 Lib/argparse.py:2268 (ambiguous option) and :2633 (prog: error:, exit 2)
        (
            ["--cuda-graph-max-bs", "4"],
            "sglang serve: error: ambiguous option: --cuda-graph-max-bs could match --cuda-graph-max-bs-decode, "
            "--cuda-graph-max-bs-prefill",
        ),
        # Lib/argparse.py:2389 (unrecognized arguments)
        (["--no-such-flag"], "sglang serve: error: unrecognized arguments: --no-such-flag"),
        # Lib/argparse.py:2546 (invalid int value) for an int field (arg_groups/fields/serving.py:66 port)
        (["--port", "x"], "sglang serve: error: argument --port: invalid int value: 'x'"),
    ],
)
def test_the_release_parser_refuses_with_argparse_text(args, words):
    proc = launch(["--model-path", "/m", *args])
    assert proc.returncode == 2
    assert proc.stderr.rstrip().endswith(words)
    assert proc.stderr.splitlines()[-1].startswith("sglang serve: error: ")


def test_model_path_is_required():
    # ServerArgs.model_path has no default (arg_groups/fields/model.py:51-57), so it is required
    # (arg_groups/arg_utils.py:413-416); Lib/argparse.py:2147.
    proc = launch(["--port", "1"])
    assert proc.returncode == 2
    assert (
        proc.stderr.splitlines()[-1]
        == "sglang serve: error: the following arguments are required: --model-path/--model"
    )


def test_release_build_does_not_know_ddtree():
    # The bare release: DDTREE passes argparse (speculative_algorithm is a free string,
    # arg_groups/fields/spec.py:31-34) and fails in resolve_once (speculative/spec_info.py:65).
    proc = launch(["--model-path", "/m", "--speculative-algorithm", "DDTREE"], env={"SGLANG_SIM_BUILD": "release"})
    assert proc.returncode == 1
    tail = proc.stderr.splitlines()
    assert tail[-1] == "ValueError: Unknown speculative algorithm name: DDTREE"
    assert 'sglang/srt/server_args.py", line 277, in resolve_once' in proc.stderr
    refused = launch(["--model-path", "/m", "--speculative-ddtree-budget", "15"], env={"SGLANG_SIM_BUILD": "release"})
    assert refused.returncode == 2
    assert (
        refused.stderr.splitlines()[-1] == "sglang serve: error: unrecognized arguments: --speculative-ddtree-budget 15"
    )


def test_ddtree_build_takes_the_pull_requests_flag(sglang_sim):
    sim = sglang_sim(algorithm="DDTREE", args=["--speculative-ddtree-budget", "15"])
    info = requests.get(sim.base_url + "/server_info", timeout=2).json()
    assert info["speculative_algorithm"] == "DDTREE" and info["speculative_ddtree_budget"] == 15


@pytest.mark.parametrize(
    ("args", "last"),
    [
        # arg_groups/speculative_hook.py:319-322
        (
            ["--speculative-algorithm", "DFLASH"],
            "ValueError: DFLASH speculative decoding requires setting --speculative-draft-model-path.",
        ),
        # arg_groups/speculative_hook.py:374-382
        (
            [
                "--speculative-algorithm",
                "dflash",
                "--speculative-draft-model-path",
                "/d",
                "--speculative-num-draft-tokens",
                "8",
                "--speculative-dflash-block-size",
                "16",
            ],
            "ValueError: Both --speculative-num-draft-tokens and --speculative-dflash-block-size are set but they "
            "differ. For DFLASH they must match. speculative_num_draft_tokens=8, speculative_dflash_block_size=16.",
        ),
        # arg_groups/speculative_hook.py:368-373
        (
            [
                "--speculative-algorithm",
                "DFLASH",
                "--speculative-draft-model-path",
                "/d",
                "--speculative-dflash-block-size",
                "0",
            ],
            "ValueError: DFLASH requires --speculative-dflash-block-size to be positive, got 0.",
        ),
    ],
)
def test_resolution_checks_fail_like_the_release(args, last):
    proc = launch(["--model-path", "/m", "--port", "1", *args])
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[-1] == last
    assert "in resolve_once" in proc.stderr and "__post_init__" not in proc.stderr


def test_every_release_flag_is_accepted(sglang_sim):
    # What the release accepts, the simulator accepts: a few flags it does not simulate at all.
    sim = sglang_sim(
        args=["--enable-metrics", "--schedule-policy", "lpm", "--trust-remote-code", "--cuda-graph-max-bs-decode", "8"]
    )
    assert requests.get(sim.base_url + "/health", timeout=2).status_code == 200


@pytest.mark.parametrize(
    ("given", "reported"), [("NEXTN", "EAGLE"), ("EAGLE", "EAGLE"), ("DDTREE", "DDTREE"), (None, None)]
)
def test_server_info_reports_the_algorithm_and_version_as_sglang_does(sglang_sim, given, reported):
    sim = sglang_sim(algorithm=given, args=["--speculative-num-steps", "3", "--mem-fraction-static", "0.85"])
    for path in ("/get_server_info", "/server_info"):
        info = requests.get(sim.base_url + path, timeout=2).json()
        assert info["speculative_algorithm"] == reported
        assert info["speculative_num_steps"] == 3 and info["mem_fraction_static"] == 0.85
        assert info["model_path"] == "/models/Qwen3.6-27B"
        # entrypoints/http_server.py:883-890: the package version and the frontend
        assert info["version"] == pinned_sglang_version() and info["frontend"] == "python"


def test_startup_logs_server_args_as_the_release_does(sglang_sim):
    # entrypoints/engine.py:1185 logs f"server_args={...}" with ServerArgs.resolved_dict(), which
    # redacts only watermark secrets: the api_key is in clear. Format: server_args.py:703-708.
    sim = sglang_sim(algorithm="NEXTN", args=["--api-key", "sk-visible", "--tp-size", "2"])
    line = next(ln for ln in sim.logs().splitlines() if "] server_args={" in ln)
    assert re.match(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] server_args=\{", line)
    logged = ast.literal_eval(line.split("] server_args=", 1)[1])
    table = json.loads(CLI_TABLE.read_text())
    assert set(logged) >= {o["dest"] for o in table["options"]}
    assert logged["api_key"] == "sk-visible" and logged["tp_size"] == 2 and logged["port"] == sim.port
    assert logged["speculative_algorithm"] == "EAGLE"  # resolved (arg_groups/speculative_hook.py:109-116)
    # A scheduler with tp_size 2 prefixes its lines with its rank (utils/common.py:2630).
    assert re.search(r"^\[[\d :-]+ TP0\] Load weight begin\. avail mem=", sim.logs(), re.M)


# --- the field report's failures ---------------------------------------------------------------


def test_oom_start_dies_before_binding_with_sglangs_message():
    proc = launch(
        ["--model-path", "/m", "--port", "1", "--mem-fraction-static", "0.8"], env={"SGLANG_SIM_MODE": "oom_start"}
    )
    assert proc.returncode == -signal.SIGKILL  # SGLang's parent kills its own tree
    # model_executor/pool_configurator.py:96-99; scheduler.py:6372; entrypoints/engine.py:1977-1979
    assert "\nRuntimeError: Not enough memory. Please try to increase --mem-fraction-static.\n" in proc.stderr
    assert "] Scheduler hit an exception: Traceback (most recent call last):" in proc.stderr
    assert "] Received sigquit from a child process. It usually means the child failed." in proc.stderr
    assert "Uvicorn running" not in proc.stderr + proc.stdout


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        # model_executor/runner/decode_cuda_graph_runner.py:602-604 + runner_backend_utils/__init__.py:14-21
        ([], "\nException: Capture cuda graph failed: CUDA out of memory. Tried to allocate 1.25 GiB."),
        ([], "\n2. set --cuda-graph-max-bs-decode to a smaller value (e.g., 16)\n"),
        # PyTorch c10/cuda/CUDACachingAllocator.cpp
        (["--disable-cuda-graph"], "\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.50 GiB."),
    ],
)
def test_crash_before_bind(extra, words):
    proc = launch(["--model-path", "/m", "--port", "1", *extra], env={"SGLANG_SIM_MODE": "crash_before_bind"})
    assert proc.returncode == -signal.SIGKILL and words in proc.stderr
    assert "Uvicorn running" not in proc.stderr + proc.stdout


# The causes the collection names for what the simulator prints: the molecule scenarios that
# use these modes exercise the journal patterns on the release's own text.
@pytest.mark.parametrize(
    ("args", "env", "cause"),
    [
        (["--mem-fraction-static", "0.8"], {"SGLANG_SIM_MODE": "oom_start"}, "mem_fraction_too_low"),
        ([], {"SGLANG_SIM_MODE": "crash_before_bind"}, "cuda_oom"),
        (["--disable-cuda-graph"], {"SGLANG_SIM_MODE": "crash_before_bind"}, "cuda_oom"),
        (["--speculative-algorithm", "DDTREE"], {"SGLANG_SIM_BUILD": "release"}, "unknown_speculative_algorithm"),
        (["--speculative-algorithm", "DFLASH"], {}, "invalid_args"),
        (["--cuda-graph-max-bs", "8"], {}, "invalid_args"),
    ],
)
def test_each_failure_is_named_by_the_journal_cause_table(args, env, cause):
    proc = launch(["--model-path", "/m", "--port", "1", *args], env=env)
    found = match_cause((proc.stdout + proc.stderr).splitlines())
    assert found["id"] == cause, found
    assert not found["line"].startswith(" ")  # the message, not a quoted source line


def test_chat_400_health_fine_generation_400(sglang_sim):
    sim = sglang_sim("chat_400", "DDTREE")
    assert requests.get(sim.base_url + "/health", timeout=2).status_code == 200
    assert requests.get(sim.base_url + "/v1/models", timeout=2).status_code == 200
    r = requests.post(
        sim.base_url + "/v1/chat/completions", json={"messages": [{"role": "user", "content": "hi"}]}, timeout=2
    )
    assert r.status_code == 400
    body = r.json()
    assert set(body) == {"object", "message", "type", "param", "code"} and body["object"] == "error"
    # models/dflash.py:834-840, with the field report's widths
    assert body["code"] == 400 and body["message"].rstrip().endswith(
        "ValueError: DFLASH target_hidden feature dim mismatch. Expected shape [N, 25600] "
        "(num_context_features=5, hidden_size=5120), but got shape=(7, 5120). This usually means the target "
        "model is capturing a different number of layer features than the draft checkpoint/config expects."
    )
    assert match_cause(sim.logs().splitlines())["id"] == "hidden_size_mismatch"


def test_conn_reset(sglang_sim):
    sim = sglang_sim("conn_reset", "DDTREE")
    assert requests.get(sim.base_url + "/v1/models", timeout=2).status_code == 200
    with pytest.raises(requests.ConnectionError) as e:
        requests.post(sim.base_url + "/v1/completions", json={"prompt": "Hello"}, timeout=2)
    assert "reset" in str(e.value).lower()


def test_hang_accepts_and_never_answers(sglang_sim):
    sim = sglang_sim("hang", "DDTREE")
    with pytest.raises(requests.ReadTimeout):
        requests.post(sim.base_url + "/v1/completions", json={"prompt": "Hello"}, timeout=(2, 0.5))


@pytest.mark.wallclock
def test_degenerate_timing_and_text(sglang_sim):
    sim = sglang_sim("degenerate", "DDTREE", env={"SGLANG_SIM_TIME_SCALE": "0.01"})
    r = requests.post(
        sim.base_url + "/v1/completions", json={"prompt": "Hello", "max_tokens": 8, "temperature": 0}, timeout=10
    )
    body = r.json()
    assert body["choices"][0]["text"] == "!!!!!!!!" and body["usage"]["completion_tokens"] == 8
    # 17.6 s to the first token and 17.6 s per token after it, scaled by 0.01: 8 x 0.176 s
    assert 1.3 < r.elapsed.total_seconds() < 3


def test_sigterm_stops_cleanly(sglang_sim):
    sim = sglang_sim()
    sim.proc.send_signal(signal.SIGTERM)
    assert sim.proc.wait(timeout=hang_guard(5)) == 0
    assert "Shutting down" in sim.logs()


def test_address_in_use_fails(sglang_sim):
    sim = sglang_sim()
    proc = launch(["--model-path", "/m", "--host", "127.0.0.1", "--port", str(sim.port)])
    assert proc.returncode == 1
    assert (
        f"[Errno 98] error while attempting to bind on address ('127.0.0.1', {sim.port}): address already in use"
        in (proc.stderr)
    )
    assert match_cause(proc.stderr.splitlines())["id"] == "address_in_use"


# --- SGLang's JSON shapes ----------------------------------------------------------------------


def test_models_shape(sglang_sim):
    sim = sglang_sim(args=["--served-model-name", "qwen"])
    data = requests.get(sim.base_url + "/v1/models", timeout=2).json()
    assert data["object"] == "list" and data["data"][0]["id"] == "qwen" and data["data"][0]["owned_by"] == "sglang"


def test_completions_stream_shape(sglang_sim):
    sim = sglang_sim()
    r = requests.post(
        sim.base_url + "/v1/completions",
        timeout=5,
        json={
            "prompt": "Hello",
            "max_tokens": 8,
            "temperature": 0,
            "stream": True,
            "stream_options": {"include_usage": True},
        },
    )
    assert r.headers["content-type"] == "text/event-stream"
    data = lines(r)
    assert data[-1] == "[DONE]"
    chunks = [json.loads(d) for d in data[:-1]]
    assert all(c["object"] == "text_completion" for c in chunks)
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] == 8
    assert chunks[-2]["choices"][0]["finish_reason"] == "length"
    text = "".join(c["choices"][0]["text"] for c in chunks[:-1])
    assert len(text.split()) == 8


def test_chat_stream_shape(sglang_sim):
    sim = sglang_sim()
    r = requests.post(
        sim.base_url + "/v1/chat/completions",
        timeout=5,
        json={"messages": [{"role": "user", "content": "Hello"}], "max_tokens": 4, "temperature": 0, "stream": True},
    )
    chunks = [json.loads(d) for d in lines(r)[:-1]]
    assert chunks[0]["object"] == "chat.completion.chunk"
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    assert all(c["usage"] is None for c in chunks)  # no usage chunk unless asked for


def test_generate_meta_info(sglang_sim):
    sim = sglang_sim(algorithm="NEXTN", env={"SGLANG_SIM_ACCEPT_LENGTH": "2.0"})
    body = requests.post(
        sim.base_url + "/generate",
        timeout=5,
        json={"text": "Hello", "sampling_params": {"max_new_tokens": 9, "temperature": 0}},
    ).json()
    m = body["meta_info"]
    assert m["finish_reason"] == {"type": "length", "length": 9}
    assert m["completion_tokens"] == 9 and m["prompt_tokens"] >= 1 and m["e2e_latency"] > 0
    assert m["spec_verify_ct"] == 4 and m["spec_accept_length"] == pytest.approx(9 / 4)
    assert 0 <= m["spec_accept_rate"] <= 1


def test_generate_without_speculation_has_no_spec_fields(sglang_sim):
    sim = sglang_sim(algorithm=None)
    m = requests.post(sim.base_url + "/generate", timeout=5, json={"text": "Hi"}).json()["meta_info"]
    assert "spec_verify_ct" not in m


def test_api_key(sglang_sim):
    sim = sglang_sim(args=["--api-key", "k"])
    r = requests.get(sim.base_url + "/v1/models", timeout=2)
    assert r.status_code == 401 and r.json() == {"error": "Unauthorized"}
    assert requests.get(sim.base_url + "/health", timeout=2).status_code == 200
    assert requests.get(sim.base_url + "/v1/models", headers={"Authorization": "Bearer k"}, timeout=2).ok


def test_health_is_503_while_loading(sglang_sim):
    sim = sglang_sim(env={"SGLANG_SIM_LOAD_SECONDS": "30"})
    assert requests.get(sim.base_url + "/health", timeout=2).status_code == 503
    assert requests.get(sim.base_url + "/v1/models", timeout=2).status_code == 200  # proves nothing


def test_port_not_bound_while_loading_weights(sglang_sim):
    sim = sglang_sim(env={"SGLANG_SIM_BIND_DELAY_S": "30"}, wait=False)
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", sim.port), timeout=1).close()


# --- behaviour file ------------------------------------------------------------------------------


FIELD_REPORT = {
    "DDTREE": [
        {"when": {"mem_fraction_static": {"lt": 0.85}, "disable_cuda_graph": False}, "mode": "oom_start"},
        {"when": {"disable_cuda_graph": True}, "mode": "crash_before_bind"},
        {"mode": "degenerate"},
    ],
    "NEXTN": {"mode": "healthy", "tok_s": 40, "accept_length": 2.4},
}


@pytest.mark.parametrize(
    ("algorithm", "extra", "mode"),
    [
        ("DDTREE", ["--mem-fraction-static", "0.8"], "oom_start"),
        ("DDTREE", ["--mem-fraction-static", "0.8", "--disable-cuda-graph"], "crash_before_bind"),
        ("DDTREE", ["--mem-fraction-static", "0.85"], "degenerate"),
        ("NEXTN", [], "healthy"),
        ("EAGLE", [], "healthy"),  # no EAGLE entry: healthy by default
    ],
)
def test_behaviour_file_replays_the_field_report(tmp_path, algorithm, extra, mode):
    f = tmp_path / "behaviour.json"
    f.write_text(json.dumps(FIELD_REPORT))
    args = [
        "--model-path",
        "/m",
        "--port",
        "1",
        "--speculative-algorithm",
        algorithm,
        "--speculative-draft-model-path",
        "/d",
        *extra,
    ]
    env = {"DDTREE_SIM_BEHAVIOUR_FILE": str(f), "SGLANG_SIM_MODE": ""}
    # the chosen mode is in the start-up log; an address that cannot bind ends the run right after
    proc = launch([*args[:2], "--host", "256.0.0.1", *args[4:]], env=env)
    assert f"mode={mode} " in proc.stderr


def test_environment_wins_over_the_file(tmp_path):
    f = tmp_path / "behaviour.json"
    f.write_text(json.dumps({"NONE": {"mode": "degenerate"}}))
    proc = launch(
        ["--model-path", "/m", "--host", "256.0.0.1"],
        env={"DDTREE_SIM_BEHAVIOUR_FILE": str(f), "SGLANG_SIM_MODE": "healthy", "SGLANG_SIM_TOK_S": "12"},
    )
    assert "mode=healthy tok_s=12 " in proc.stderr


def test_unknown_mode_is_refused(tmp_path):
    proc = launch(["--model-path", "/m"], env={"SGLANG_SIM_MODE": "sleepy"})
    assert proc.returncode != 0 and "unknown mode 'sleepy'" in proc.stderr


def _greedy(sim, prompt, chat=False):
    path = "/v1/chat/completions" if chat else "/v1/completions"
    body = {"max_tokens": 12, "temperature": 0}
    body.update({"messages": [{"role": "user", "content": prompt}]} if chat else {"prompt": prompt})
    r = requests.post(sim.base_url + path, json=body, timeout=10)
    choice = r.json()["choices"][0]
    return (choice["message"]["content"] if chat else choice["text"]), r.json()["usage"]["completion_tokens"]


@pytest.mark.parametrize("chat", [False, True])
def test_greedy_output_depends_on_the_prompt_alone(sglang_sim, chat):
    """NEXTN and a healthy DDTree (lossless speculation) give the same greedy answer; a divergent build does not."""
    nextn = sglang_sim("healthy", "NEXTN", env={"SGLANG_SIM_TOK_S": "400"})
    ddtree = sglang_sim("healthy", "DDTREE", env={"SGLANG_SIM_TOK_S": "500", "SGLANG_SIM_ACCEPT_LENGTH": "3.1"})
    wrong = sglang_sim("divergent", "DDTREE", env={"SGLANG_SIM_TOK_S": "520"})
    for prompt in ("The capital of France is", "Hello! What can you help me with today?"):
        base, n = _greedy(nextn, prompt, chat)
        assert _greedy(nextn, prompt, chat) == (base, n)  # the same answer every time
        assert _greedy(ddtree, prompt, chat) == (base, n)
        text, n_wrong = _greedy(wrong, prompt, chat)
        # fast but answering differently: as many tokens, other words, not degenerate
        assert n_wrong == n == 12 and text != base
        assert len(set(text.split())) > 6


# --- batching: the per-stream rate falls with the generations in flight --------------------------


def _sim_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("sglang_sim_launch_server", LAUNCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_rate_table_interpolates_and_holds():
    sim = _sim_module()
    points = sim._rate_table({"16": 22, "1": 66, "4": 52})
    assert points == [(1, 66.0), (4, 52.0), (16, 22.0)]
    assert sim.rate_at(points, 1) == 66 and sim.rate_at(points, 4) == 52
    assert sim.rate_at(points, 2) == pytest.approx(66 + (52 - 66) / 3)
    assert sim.rate_at(points, 10) == pytest.approx(37)
    assert sim.rate_at(points, 64) == 22  # held past the last point
    with pytest.raises(SystemExit, match="rates must map"):
        sim._rate_table({"0": 10})


def test_a_ttft_table_is_read_as_rates_are_and_a_bad_one_is_refused_with_an_example(monkeypatch):
    sim = _sim_module()
    monkeypatch.setenv("SGLANG_SIM_TTFT", '{"1": 0.05, "16": 1.5}')
    args = argparse.Namespace(speculative_algorithm=None)
    b = sim.load_behaviour(args, None, {})
    assert b["ttft"] == [(1, 0.05), (16, 1.5)] and b["ttft_s"] == 0.05
    s = sim.Sim.__new__(sim.Sim)
    s.behaviour = b
    assert s.first_token_delay(1) == 0.05 and s.first_token_delay(16) == 1.5 and s.first_token_delay(64) == 1.5
    assert s.first_token_delay(4) == pytest.approx(0.05 + (1.5 - 0.05) * 3 / 15)
    monkeypatch.setenv("SGLANG_SIM_TTFT", '{"1": -1}')
    with pytest.raises(SystemExit) as err:
        sim.load_behaviour(args, None, {})
    assert "ttft must map a number of streams (1 or more) to a first-token delay in seconds above 0" in str(err.value)
    assert 'e.g. {"1": 0.05, "16": 1.5}' in str(err.value)


def _stream(base, max_tokens, out, key=None):
    """One streamed completion: [(time, tokens so far)] of its chunks, and the usage's count."""
    body = {
        "prompt": "Hello",
        "max_tokens": max_tokens,
        "temperature": 0,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    marks, n, usage = [], 0, None
    with requests.post(base + "/v1/completions", json=body, stream=True, timeout=30) as r:
        for line in r.iter_lines():
            if not line.startswith(b"data: {"):
                continue
            chunk = json.loads(line[6:])
            if chunk.get("usage"):
                usage = chunk["usage"]["completion_tokens"]
            elif chunk.get("choices") and chunk["choices"][0]["text"]:
                n += len(TOKEN_RE.findall(chunk["choices"][0]["text"]))
                marks.append((time.monotonic(), n))
    out[key if key is not None else len(out)] = (marks, usage)


TOKEN_RE = re.compile(r"\s*\S+")


def _decode_rate(marks, since=None, until=None):
    """Tokens per second between the first token (or ``since``) and the last mark (or ``until``)."""
    inside = [(t, n) for t, n in marks if (since is None or t >= since) and (until is None or t <= until)]
    (t0, n0), (t1, n1) = inside[0], inside[-1]
    return (n1 - n0) / (t1 - t0)


RATES = {"NEXTN": {"rates": {"1": 100, "4": 50, "16": 20}, "accept_length": 2.0}}


@pytest.mark.wallclock
def test_streams_in_flight_share_the_rate_of_the_table(sglang_sim):
    sim = sglang_sim(algorithm="NEXTN", behaviour=RATES, mode=None)
    alone = {}
    _stream(sim.base_url, 61, alone)
    assert _decode_rate(alone[0][0]) == pytest.approx(100, rel=0.05)
    together, threads = {}, []
    for i in range(4):
        threads.append(threading.Thread(target=_stream, args=(sim.base_url, 41, together, i)))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rates = [_decode_rate(marks) for marks, _usage in together.values()]
    assert rates == [pytest.approx(50, rel=0.06)] * 4, rates
    assert all(usage == 41 for _marks, usage in together.values())


@pytest.mark.wallclock
def test_a_stream_slows_down_when_others_join_and_speeds_up_when_they_leave(sglang_sim):
    sim = sglang_sim(algorithm="NEXTN", behaviour=RATES, mode=None)
    long_one, short = {}, {}
    first = threading.Thread(target=_stream, args=(sim.base_url, 121, long_one, 0))
    first.start()
    time.sleep(0.3)  # alone: 100 tok/s
    joined = time.monotonic()
    others = [threading.Thread(target=_stream, args=(sim.base_url, 16, short, i)) for i in range(3)]
    for t in others:
        t.start()
    for t in others:
        t.join()
    left = time.monotonic()
    first.join()
    marks = long_one[0][0]
    assert _decode_rate(marks, until=joined) == pytest.approx(100, rel=0.1)
    # 4 in flight: 50 tok/s each, from the 3 prefills to their last tokens
    assert _decode_rate(marks, since=joined + 0.15, until=left - 0.02) == pytest.approx(50, rel=0.1)
    assert _decode_rate(marks, since=left + 0.02) == pytest.approx(100, rel=0.1)


@pytest.mark.wallclock
def test_closed_loop_aggregate_is_the_configured_truth(sglang_sim):
    """README "Batching": N closed-loop streams of T tokens give N*T / (ttft + (T-1)/rate(N)) tok/s."""
    sim = sglang_sim(algorithm="NEXTN", behaviour=RATES, mode=None)
    n_streams, tokens, seconds = 4, 31, 1.5
    done = []
    lock = threading.Lock()
    end = time.monotonic() + seconds

    def loop():
        while time.monotonic() < end:
            out = {}
            _stream(sim.base_url, tokens, out)
            with lock:
                done.append(out[0][1])

    start = time.monotonic()
    threads = [threading.Thread(target=loop) for _stream in range(n_streams)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    aggregate = sum(done) / (time.monotonic() - start)
    truth = n_streams * tokens / (0.08 + (tokens - 1) / 50)
    assert aggregate == pytest.approx(truth, rel=0.06)


def test_a_flat_tok_s_from_the_environment_wins_over_the_table(tmp_path):
    f = tmp_path / "behaviour.json"
    f.write_text(json.dumps(RATES))
    env = {"DDTREE_SIM_BEHAVIOUR_FILE": str(f), "SGLANG_SIM_MODE": ""}
    args = ["--model-path", "/m", "--host", "256.0.0.1", "--speculative-algorithm", "NEXTN"]
    table = launch(args, env=env).stderr
    assert " tok_s=100 " in table and " rates=1:100,4:50,16:20" in table  # tok_s: the table's rate at one stream
    flat = launch(args, env=dict(env, SGLANG_SIM_TOK_S="12")).stderr
    assert " tok_s=12 " in flat and " rates=" not in flat


# --- /metrics ---------------------------------------------------------------------------------------

WANTED = {
    "sglang:spec_accept_length": "gauge",
    "sglang:gen_throughput": "gauge",
    "sglang:num_running_reqs": "gauge",
    "sglang:num_queue_reqs": "gauge",
    "sglang:token_usage": "gauge",
    "sglang:generation_tokens_total": "counter",
    "sglang:num_requests_total": "counter",
    "sglang:spec_verify_calls_total": "counter",
    "sglang:num_aborted_requests_total": "counter",
    "sglang:time_to_first_token_seconds": "histogram",
    "sglang:inter_token_latency_seconds": "histogram",
    "sglang:e2e_request_latency_seconds": "histogram",
    "sglang:http_responses_total": "counter",
}


def _wheel_metrics():
    """Every prometheus metric the pinned wheel's collectors declare, read from their source:
    {name: (type, HELP, label names beyond the base labels, buckets)}, and the base label sets."""
    import zipfile

    from sglang_releases import sglang_wheel

    found, bases = {}, {}
    with zipfile.ZipFile(sglang_wheel(pinned_sglang_version())) as wheel:
        for path in (
            "sglang/srt/observability/metrics_collector.py",
            "sglang/srt/observability/http_request_metrics.py",
        ):
            tree = ast.parse(wheel.read(path).decode())
            lists = {}  # bucket defaults: name = [numbers]
            for node in ast.walk(tree):
                if isinstance(node, ast.Assign) and isinstance(node.value, ast.List):
                    for target in node.targets:
                        if isinstance(target, ast.Name) and all(isinstance(e, ast.Constant) for e in node.value.elts):
                            lists[target.id] = [e.value for e in node.value.elts]
                if isinstance(node, ast.FunctionDef) and node.name in ("init_new", "tokenizer_metric_labels"):
                    for sub in ast.walk(node):
                        if isinstance(sub, ast.Assign) and isinstance(sub.value, ast.Dict):
                            if any(isinstance(t, ast.Name) and t.id == "labels" for t in sub.targets):
                                bases[node.name] = {k.value for k in sub.value.keys}
            for node in ast.walk(tree):
                if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                    continue
                if node.func.id not in ("Gauge", "Counter", "Histogram"):
                    continue
                kw = {k.arg: k.value for k in node.keywords}
                if not isinstance(kw.get("name"), ast.Constant):
                    continue
                doc = kw["documentation"]
                doc = "".join(c.value for c in ast.walk(doc) if isinstance(c, ast.Constant))
                names = kw.get("labelnames")  # none: an unlabelled metric
                extra = {c.value for c in ast.walk(names) if isinstance(c, ast.Constant)} if names else set()
                buckets = kw.get("buckets")
                if isinstance(buckets, ast.Name):
                    buckets = lists.get(buckets.id)
                found[kw["name"].value] = (node.func.id.lower(), doc, extra, buckets)
    return found, bases


def _families(text):
    from prometheus_client.parser import text_string_to_metric_families

    return {f.name: f for f in text_string_to_metric_families(text)}


def test_metrics_is_404_without_enable_metrics(sglang_sim):
    r = requests.get(sglang_sim().base_url + "/metrics", timeout=2)
    assert r.status_code == 404 and r.json() == {"detail": "Not Found"}


def test_metrics_are_the_wheels(sglang_sim):
    """Every family the simulator serves: the wheel's name, type, HELP, labels and buckets."""
    wheel, bases = _wheel_metrics()
    sim = sglang_sim(
        algorithm="NEXTN",
        args=["--enable-metrics", "--decode-log-interval", "5", "--served-model-name", "qwen"],
        env={"SGLANG_SIM_TOK_S": "400", "SGLANG_SIM_ACCEPT_LENGTH": "2.0"},
    )
    for stream in (True, False):
        # 31 tokens: the prefill's, then 15 verify passes of 2 (intervals of 5 passes see 2.0 exactly)
        body = {"prompt": "Hello", "max_tokens": 31, "temperature": 0, "stream": stream}
        requests.post(sim.base_url + "/v1/completions", json=body, timeout=10).raise_for_status()
    requests.get(sim.base_url + "/no-such-path", timeout=2)
    r = requests.get(sim.base_url + "/metrics", timeout=2)
    assert r.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    families = _families(r.text)
    # prometheus_client's parser names a counter family without _total
    served = {(f.name + "_total" if f.type == "counter" else f.name): f for f in families.values()}
    for name, family in served.items():
        assert name in wheel, f"{name} is not in the pinned wheel"
        typ, doc, extra, buckets = wheel[name]
        assert (family.type, family.documentation) == (typ, doc), name
        base = set()
        if name.startswith("sglang:http_"):
            pass
        elif typ == "gauge":
            base = bases["init_new"]
        else:
            base = bases["tokenizer_metric_labels"]
        for sample in family.samples:
            assert set(sample.labels) - {"le"} == base | extra, (name, sample.labels)
        if typ == "histogram":
            les = [float(s.labels["le"]) for s in family.samples if s.name.endswith("_bucket")]
            assert les[: len(buckets)] == [float(b) for b in buckets] and les[-1] == float("inf")
    # the ones the brief names are all there (num_aborted_requests_total once a client went away)
    assert set(WANTED) - {"sglang:num_aborted_requests_total"} <= set(served)
    labels = served["sglang:num_running_reqs"].samples[0].labels
    assert labels == {
        "model_name": "qwen",
        "engine_type": "unified",
        "tp_rank": "0",
        "pp_rank": "0",
        "moe_ep_rank": "0",
    }
    gen = {s.labels["is_streaming"]: s.value for s in served["sglang:generation_tokens_total"].samples}
    assert gen == {"true": 31.0, "false": 31.0}
    # 15 verify passes per request, without is_streaming: 62 tokens / 30 passes is the window's accept length
    assert [(s.labels, s.value) for s in served["sglang:spec_verify_calls_total"].samples] == [
        ({"model_name": "qwen", "engine_type": "unified"}, 30.0)
    ]
    ttft = next(s for s in served["sglang:time_to_first_token_seconds"].samples if s.name.endswith("_count"))
    assert ttft.value == 1.0
    itl_count = next(s for s in served["sglang:inter_token_latency_seconds"].samples if s.name.endswith("_count"))
    assert itl_count.value == 60.0  # every token after the first, of both requests
    statuses = {(s.labels["endpoint"], s.labels["status_code"]) for s in served["sglang:http_responses_total"].samples}
    assert {("/v1/completions", "200"), ("/no-such-path", "404")} <= statuses
    assert served["sglang:spec_accept_length"].samples[0].value == 2.0


def test_scheduler_gauges_wait_for_the_decode_log_interval(sglang_sim):
    sim = sglang_sim(
        algorithm="NEXTN",
        args=["--enable-metrics", "--decode-log-interval", "1000"],
        env={"SGLANG_SIM_TOK_S": "400", "SGLANG_SIM_ACCEPT_LENGTH": "2.0"},
    )
    url = sim.base_url + "/metrics"
    assert "sglang:" not in requests.get(url, timeout=2).text  # nothing reported yet
    requests.post(sim.base_url + "/v1/completions", json={"prompt": "Hi", "max_tokens": 20}, timeout=10)
    families = _families(requests.get(url, timeout=2).text)
    # The prefill reported the batch (running, usage), but no decode report came: accept length
    # and throughput are still the initial 0, counters and histograms are per request.
    assert families["sglang:spec_accept_length"].samples[0].value == 0.0
    assert families["sglang:gen_throughput"].samples[0].value == 0.0
    assert families["sglang:num_running_reqs"].samples[0].value == 0.0  # idle again
    assert families["sglang:num_requests"].samples[0].value == 1.0
    assert "Decode batch" not in sim.logs()


def test_a_client_that_leaves_is_an_aborted_request(sglang_sim):
    sim = sglang_sim(args=["--enable-metrics"], env={"SGLANG_SIM_TOK_S": "20"})
    host, port = "127.0.0.1", sim.port
    body = json.dumps({"prompt": "Hello", "max_tokens": 60, "stream": True}).encode()
    with socket.create_connection((host, port)) as s:
        s.sendall(
            b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + b"Content-Length: %d\r\n\r\n" % len(body)
            + body
        )
        s.recv(100)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        families = _families(requests.get(sim.base_url + "/metrics", timeout=2).text)
        if "sglang:num_aborted_requests" in families:
            break
        time.sleep(0.1)
    assert families["sglang:num_aborted_requests"].samples[0].value == 1.0


# --- degrading after N seconds of serving -------------------------------------------------------------


def _generate(base, stream=False):
    body = {"text": "Hello", "sampling_params": {"max_new_tokens": 41, "temperature": 0}, "stream": stream}
    return requests.post(base + "/generate", json=body, timeout=10)


@pytest.mark.wallclock
def test_degrade_lowers_accept_length_and_rate_after_n_seconds(sglang_sim):
    behaviour = {
        "DDTREE": {
            "tok_s": 200,
            "accept_length": 3.0,
            "degrade": {"after_s": 0.6, "accept_length": 1.0, "rate_factor": 0.5},
        }
    }
    sim = sglang_sim(algorithm="DDTREE", behaviour=behaviour, mode=None, args=["--enable-metrics"])
    before = _generate(sim.base_url).json()["meta_info"]
    # SGLang's accept length: completion tokens / verify passes (the prefill token is not one)
    assert before["spec_accept_length"] == pytest.approx(41 / 14, abs=1e-4)
    time.sleep(0.7)
    marks = {}
    _stream(sim.base_url, 61, marks)
    assert _decode_rate(marks[0][0]) == pytest.approx(100, rel=0.07)
    after = _generate(sim.base_url).json()["meta_info"]
    assert after["spec_accept_length"] == pytest.approx(41 / 40, abs=1e-4)
    assert after["finish_reason"] == {"type": "length", "length": 41}


def test_degrade_aborts_requests_as_sglang_aborts_them(sglang_sim):
    behaviour = {"DDTREE": {"tok_s": 400, "degrade": {"after_s": 0, "abort_rate": 1.0}}}
    sim = sglang_sim(algorithm="DDTREE", behaviour=behaviour, mode=None, args=["--enable-metrics"])
    # not streamed: 503 with the scheduler's message (schedule_batch.py:3492-3502, serving_base.py:119-122)
    r = requests.post(sim.base_url + "/v1/completions", json={"prompt": "Hi", "max_tokens": 30}, timeout=10)
    assert r.status_code == 503
    assert r.json() == {
        "object": "error",
        "message": "Retracted under decode memory pressure without a KV backup. Retry later.",
        "type": "503",
        "param": None,
        "code": 503,
    }
    # streamed: tokens, then an error chunk in place of the finish chunk, the usage chunk, [DONE]
    r = requests.post(
        sim.base_url + "/v1/chat/completions",
        json={
            "messages": [{"role": "user", "content": "Hi"}],
            "max_tokens": 30,
            "stream": True,
            "stream_options": {"include_usage": True},
        },
        timeout=10,
    )
    data = lines(r)
    assert r.status_code == 200 and data[-1] == "[DONE]"
    chunks = [json.loads(d) for d in data[:-1]]
    assert chunks[-2]["error"]["code"] == 503 and chunks[-2]["error"]["type"] == "SERVICE_UNAVAILABLE"
    assert 0 < chunks[-1]["usage"]["completion_tokens"] < 30
    assert all(c["choices"][0]["finish_reason"] is None for c in chunks[:-2])
    # /generate streamed: the last chunk's finish_reason is the abort (FINISH_ABORT.to_json)
    last = json.loads(lines(_generate(sim.base_url, stream=True))[-2])
    assert last["meta_info"]["finish_reason"]["type"] == "abort"
    assert last["meta_info"]["finish_reason"]["status_code"] == 503
    families = _families(requests.get(sim.base_url + "/metrics", timeout=2).text)
    codes = {s.labels["status_code"]: s.value for s in families["sglang:http_responses"].samples}
    assert codes["503"] == 1.0  # the streamed ones answered 200 before they were aborted
    assert families["sglang:num_requests"].samples  # aborted requests are finished requests
    assert "sglang:num_aborted_requests" not in families  # that counter is for clients that leave
    assert "retract_decode: aborted request" in sim.logs()


BEHAVIOURS = Path(LAUNCH).parent / "behaviours"


def _gain(entry, n):
    sim = _sim_module()
    return (
        sim.rate_at(sim._rate_table(entry["DDTREE"]["rates"]), n)
        / sim.rate_at(sim._rate_table(entry["NEXTN"]["rates"]), n)
        - 1
    )


def test_the_test_host_is_plus_32_at_one_stream_and_minus_31_at_16():
    entry = json.loads((BEHAVIOURS / "ampere_48g_gain_turns_negative.json").read_text())
    assert _gain(entry, 1) == pytest.approx(0.32) and _gain(entry, 16) == pytest.approx(-0.31)


@pytest.mark.parametrize("name", ["ct129_batched.json", "ct200_batched.json"])
def test_class_curves_lose_the_gain_with_the_batch(name):
    entry = json.loads((BEHAVIOURS / name).read_text())
    gains = [_gain(entry, n) for n in (1, 8, 16, 32)]
    assert gains[0] > 0.2 and gains == sorted(gains, reverse=True) and gains[-1] < 0


@pytest.mark.parametrize(("host", "name"), [("ct129-sim", "ct129_batched.json"), ("ct200-sim", "ct200_batched.json")])
def test_the_demo_hosts_carry_the_class_curves(host, name):
    import yaml

    entry = json.loads((BEHAVIOURS / name).read_text())
    demo = yaml.safe_load((REPO / "inventories" / "demo" / "host_vars" / f"{host}.yml").read_text())["sim_behaviour"]
    assert demo["NEXTN"]["rates"] == entry["NEXTN"]["rates"]
    if demo["DDTREE"].get("mode") != "degenerate":
        assert demo["DDTREE"]["rates"] == entry["DDTREE"]["rates"]


def test_requests_beyond_max_running_requests_wait_in_the_queue(sglang_sim):
    sim = sglang_sim(
        algorithm="NEXTN",
        behaviour=RATES,
        mode=None,
        args=["--enable-metrics", "--max-running-requests", "2", "--decode-log-interval", "1"],
    )
    threads = [threading.Thread(target=_stream, args=(sim.base_url, 41, {}, i)) for i in range(3)]
    for t in threads:
        t.start()
    time.sleep(0.3)
    families = _families(requests.get(sim.base_url + "/metrics", timeout=2).text)
    assert families["sglang:num_queue_reqs"].samples[0].value == 1.0
    assert families["sglang:num_running_reqs"].samples[0].value == 2.0
    for t in threads:
        t.join()
    families = _families(requests.get(sim.base_url + "/metrics", timeout=2).text)
    ttft = {s.labels["le"]: s.value for s in families["sglang:time_to_first_token_seconds"].samples if "le" in s.labels}
    assert ttft["0.2"] == 2.0 and ttft["1.0"] == 3.0  # the third waited for one of the first two (~0.6 s)


@pytest.mark.wallclock
def test_a_burst_of_64_connections_is_accepted_at_once(sglang_sim):
    sim = sglang_sim()
    start = time.monotonic()
    conns = [socket.create_connection(("127.0.0.1", sim.port), timeout=2) for _conn in range(64)]
    try:
        for c in conns:
            c.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        assert all(c.recv(12) == b"HTTP/1.1 200" for c in conns)
    finally:
        for c in conns:
            c.close()
    assert time.monotonic() - start < 0.9  # a dropped SYN is retried after 1 s
