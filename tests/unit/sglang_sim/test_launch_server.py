# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The SGLang simulator keeps its contract (docs/architecture.md, tests/sglang_sim/README.md):
SGLang's flags and checks, SGLang's JSON shapes, and each failure of the field report."""

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import requests

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


@pytest.mark.parametrize(
    ("args", "rc", "words"),
    [
        (["--speculative-algorithm", "DDTREE"], 1, "ValueError: DDTREE requires --speculative-draft-model-path"),
        (["--speculative-algorithm", "DFLASH"], 1, "ValueError: DFLASH requires --speculative-draft-model-path"),
        (
            [
                "--speculative-algorithm",
                "DFLASH",
                "--speculative-draft-model-path",
                "/d",
                "--speculative-num-draft-tokens",
                "8",
                "--speculative-dflash-block-size",
                "16",
            ],
            1,
            "must match --speculative-dflash-block-size",
        ),
        (["--speculative-algorithm", "FOO"], 2, "invalid choice: 'FOO'"),
        (["--mem-fraction-static", "1.5"], 1, "mem_fraction_static must be in (0, 1)"),
        (["--speculative-ddtree-budget", "64"], 1, "only valid with --speculative-algorithm DDTREE"),
    ],
)
def test_sglang_checks_exit_like_sglang(args, rc, words):
    proc = launch(["--model-path", "/m", "--port", "1", *args])
    assert proc.returncode == rc
    assert words in proc.stderr


def test_model_path_is_required():
    proc = launch(["--port", "1"])
    assert proc.returncode == 2 and "--model-path" in proc.stderr


def test_unknown_flags_are_tolerated_and_logged(sglang_sim):
    sim = sglang_sim(args=["--enable-metrics", "--schedule-policy", "lpm", "--trust-remote-code"])
    assert requests.get(sim.base_url + "/health", timeout=2).status_code == 200
    assert "ignoring flags it does not simulate: --enable-metrics --schedule-policy lpm" in sim.logs()


@pytest.mark.parametrize(
    ("given", "reported"), [("NEXTN", "EAGLE"), ("EAGLE", "EAGLE"), ("DDTREE", "DDTREE"), (None, None)]
)
def test_server_info_reports_the_algorithm_as_sglang_does(sglang_sim, given, reported):
    sim = sglang_sim(algorithm=given, args=["--speculative-num-steps", "3", "--mem-fraction-static", "0.85"])
    for path in ("/get_server_info", "/server_info"):
        info = requests.get(sim.base_url + path, timeout=2).json()
        assert info["speculative_algorithm"] == reported
        assert info["speculative_num_steps"] == 3 and info["mem_fraction_static"] == 0.85
        assert info["version"] and info["model_path"] == "/models/Qwen3.6-27B"


# --- the field report's failures ---------------------------------------------------------------


def test_oom_start_dies_before_binding_with_sglangs_message():
    proc = launch(
        ["--model-path", "/m", "--port", "1", "--mem-fraction-static", "0.8"], env={"SGLANG_SIM_MODE": "oom_start"}
    )
    assert proc.returncode == -signal.SIGKILL  # SGLang's parent kills its own tree
    assert "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static." in proc.stderr
    assert "Uvicorn running" not in proc.stderr + proc.stdout


@pytest.mark.parametrize(
    ("extra", "words"),
    [([], "Capture cuda graph failed: CUDA out of memory"), (["--disable-cuda-graph"], "torch.OutOfMemoryError")],
)
def test_crash_before_bind(extra, words):
    proc = launch(["--model-path", "/m", "--port", "1", *extra], env={"SGLANG_SIM_MODE": "crash_before_bind"})
    assert proc.returncode != 0 and words in proc.stderr
    assert "Uvicorn running" not in proc.stderr + proc.stdout


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
    assert body["code"] == 400 and "(7x5120 and 25600x5120)" in body["message"]


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
    assert sim.proc.wait(timeout=5) == 0
    assert "Shutting down" in sim.logs()


def test_address_in_use_fails(sglang_sim):
    sim = sglang_sim()
    proc = launch(["--model-path", "/m", "--host", "127.0.0.1", "--port", str(sim.port)])
    assert proc.returncode == 1 and "Address already in use" in proc.stderr


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
