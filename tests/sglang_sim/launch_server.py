# Copyright (c) 2026 ddtree.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A dependency-free stand-in for ``python -m sglang.launch_server`` (test infrastructure).

It takes SGLang's launch_server flags, serves SGLang's HTTP endpoints with SGLang's JSON
shapes, and behaves per speculative algorithm as /etc/ddtree-sim/behaviour.json (or the
SGLANG_SIM_* environment) says: healthy at a given tok/s and accept length, or one of the
failures of the field report (oom_start, crash_before_bind, chat_400, conn_reset, hang,
degenerate). See README.md beside this file. Python 3.9+ standard library only, because it
runs with the test host's /usr/bin/python3.
"""

import argparse
import hashlib
import json
import math
import os
import random
import re
import signal
import socket
import struct
import sys
import threading
import time
import traceback
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SIM_VERSION = "0.5.6.post2"  # the SGLang version the simulator reports
BEHAVIOUR_FILE = "/etc/ddtree-sim/behaviour.json"
MODES = ("healthy", "oom_start", "crash_before_bind", "chat_400", "conn_reset", "hang", "degenerate")
SPEC_ALGORITHMS = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM", "DFLASH", "DDTREE")
# The field report: 8 tokens in 141 s, the first after ~17.6 s, then one '!' every ~17.6 s.
DEGENERATE_INTERVAL_S = 17.6

# Defaults per mode: what a behaviour entry does not say.
MODE_DEFAULTS = {
    "healthy": {"tok_s": 40.0, "ttft_s": 0.08},
    "degenerate": {"tok_s": 1.0 / DEGENERATE_INTERVAL_S, "ttft_s": DEGENERATE_INTERVAL_S, "accept_length": 1.0},
}
COMMON_DEFAULTS = {
    "tok_s": 40.0,
    "ttft_s": 0.08,
    "bind_delay_s": 0.5,  # weights loading: the port is not bound yet (connection refused)
    "load_seconds": 1.5,  # bound, /health answers 503 while warming up
}
ENV_OVERRIDES = {
    "SGLANG_SIM_MODE": ("mode", str),
    "SGLANG_SIM_TOK_S": ("tok_s", float),
    "SGLANG_SIM_ACCEPT_LENGTH": ("accept_length", float),
    "SGLANG_SIM_LOAD_SECONDS": ("load_seconds", float),
    "SGLANG_SIM_BIND_DELAY_S": ("bind_delay_s", float),
    "SGLANG_SIM_TTFT_S": ("ttft_s", float),
    "SGLANG_SIM_TEXT": ("text", str),
}

# Healthy output: plain, varied English, one "token" per word piece.
PASSAGES = (
    "Hello! How can I help you today? I am happy to answer questions, explain an idea step by step, "
    "summarise a document, or help you write and review code. Tell me a little about what you are "
    "working on and what you would like to achieve, and I will do my best to give you a clear and "
    "useful answer. If anything I say is unclear, ask me to expand on it.",
    "The capital of France is Paris. It lies on the Seine in the north of the country and has been "
    "the centre of French political and cultural life for centuries. Paris is known for its museums, "
    "such as the Louvre and the Musee d'Orsay, for its cafes and bookshops, and for landmarks like "
    "the Eiffel Tower and the cathedral of Notre-Dame.",
    "Speculative decoding lets a small draft model propose several tokens that the large target model "
    "then checks in a single forward pass. When most proposals are accepted, the server produces more "
    "than one token per step of the large model, which raises throughput without changing the output "
    "at temperature zero. The gain depends on how often the draft agrees with the target.",
)
TOKEN_RE = re.compile(r"\s*\S+")

LOG_LOCK = threading.Lock()


def _now():
    return time.strftime("%Y-%m-%d %H:%M:%S")


def log(msg, stream=None):
    """One SGLang-style log line (SGLang's logging goes to stderr; uvicorn's access log to stdout)."""
    stream = stream or sys.stderr
    with LOG_LOCK:
        stream.write(f"[{_now()}] {msg}\n")
        stream.flush()


# --------------------------------------------------------------------------- arguments


def build_parser():
    p = argparse.ArgumentParser(prog="sglang.launch_server", allow_abbrev=False)
    p.add_argument("--model-path", "--model", dest="model_path", required=True)
    p.add_argument("--tokenizer-path", dest="tokenizer_path")
    p.add_argument("--served-model-name", dest="served_model_name")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=30000)
    p.add_argument("--api-key", dest="api_key")
    p.add_argument("--speculative-algorithm", dest="speculative_algorithm", type=str.upper, choices=SPEC_ALGORITHMS)
    p.add_argument("--speculative-draft-model-path", "--speculative-draft-model", dest="speculative_draft_model_path")
    p.add_argument("--speculative-num-steps", dest="speculative_num_steps", type=int)
    p.add_argument("--speculative-eagle-topk", dest="speculative_eagle_topk", type=int)
    p.add_argument("--speculative-num-draft-tokens", dest="speculative_num_draft_tokens", type=int)
    p.add_argument("--speculative-dflash-block-size", dest="speculative_dflash_block_size", type=int)
    p.add_argument("--speculative-ddtree-budget", dest="speculative_ddtree_budget", type=int)
    p.add_argument("--mem-fraction-static", dest="mem_fraction_static", type=float)
    p.add_argument("--disable-cuda-graph", dest="disable_cuda_graph", action="store_true")
    p.add_argument("--cuda-graph-max-bs", dest="cuda_graph_max_bs", type=int)
    p.add_argument("--attention-backend", dest="attention_backend")
    p.add_argument("--max-running-requests", dest="max_running_requests", type=int)
    p.add_argument("--context-length", dest="context_length", type=int)
    p.add_argument("--tp-size", "--tp", "--tensor-parallel-size", dest="tp_size", type=int, default=1)
    p.add_argument("--dp-size", "--dp", dest="dp_size", type=int, default=1)
    p.add_argument("--trust-remote-code", dest="trust_remote_code", action="store_true")
    p.add_argument("--dtype", default="auto")
    p.add_argument("--kv-cache-dtype", dest="kv_cache_dtype", default="auto")
    p.add_argument("--chunked-prefill-size", dest="chunked_prefill_size", type=int)
    p.add_argument("--log-level", dest="log_level", default="info")
    return p


def validate(args):
    """SGLang's own cheap checks (ServerArgs.__post_init__); returns an error message or None."""
    if args.mem_fraction_static is not None and not 0.0 < args.mem_fraction_static < 1.0:
        return f"mem_fraction_static must be in (0, 1), got {args.mem_fraction_static}"
    algo = args.speculative_algorithm
    if algo in ("DFLASH", "DDTREE", "STANDALONE", "EAGLE3") and not args.speculative_draft_model_path:
        return f"{algo} requires --speculative-draft-model-path to be set."
    if algo in ("DFLASH", "DDTREE"):
        a, b = args.speculative_num_draft_tokens, args.speculative_dflash_block_size
        if a is not None and b is not None and a != b:
            return f"--speculative-num-draft-tokens ({a}) must match --speculative-dflash-block-size ({b}) for {algo}."
    if args.speculative_ddtree_budget is not None and algo != "DDTREE":
        return "--speculative-ddtree-budget is only valid with --speculative-algorithm DDTREE."
    return None


def reported_algorithm(args):
    """SGLang rewrites NEXTN to EAGLE in ServerArgs; the server reports EAGLE."""
    algo = args.speculative_algorithm
    return "EAGLE" if algo == "NEXTN" else algo


# --------------------------------------------------------------------------- behaviour


def _matches(cond, args):
    """A behaviour entry's "when": {field: value | {"lt"|"le"|"gt"|"ge"|"ne": value}} over ServerArgs fields."""
    for field, want in (cond or {}).items():
        have = getattr(args, field, None)
        if isinstance(want, dict):
            for op, val in want.items():
                if have is None:
                    return False
                ok = {
                    "lt": lambda h, v: h < v,
                    "le": lambda h, v: h <= v,
                    "gt": lambda h, v: h > v,
                    "ge": lambda h, v: h >= v,
                    "ne": lambda h, v: h != v,
                }[op](have, val)
                if not ok:
                    return False
        elif have != want:
            return False
    return True


def load_behaviour(args):
    """The effective behaviour dict: file entry for the algorithm, then defaults, then SGLANG_SIM_* env."""
    path = os.environ.get("DDTREE_SIM_BEHAVIOUR_FILE", BEHAVIOUR_FILE)
    table = {}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            table = json.load(f)
    algo = args.speculative_algorithm or "NONE"
    entry = {}
    # The name given on the command line first (NEXTN), then what SGLang calls it (EAGLE), then a default.
    for key in (algo, reported_algorithm(args) or "NONE", "default", "*"):
        if key in table:
            entry = table[key]
            break
    if isinstance(entry, list):  # first entry whose "when" matches the flags
        entry = next((e for e in entry if _matches(e.get("when"), args)), {})
    entry = dict(entry)
    entry.pop("when", None)
    for env, (key, conv) in ENV_OVERRIDES.items():
        if os.environ.get(env, "") != "":
            entry[key] = conv(os.environ[env])
    mode = entry.get("mode", "healthy")
    if mode not in MODES:
        raise SystemExit("sglang-sim: unknown mode {!r} (one of {})".format(mode, ", ".join(MODES)))
    merged = dict(COMMON_DEFAULTS)
    merged["accept_length"] = 1.0 if algo == "NONE" else 2.4
    merged.update(MODE_DEFAULTS.get(mode, {}))
    merged.update(entry)
    merged["mode"] = mode
    merged["time_scale"] = float(os.environ.get("SGLANG_SIM_TIME_SCALE", "1") or 1)
    if merged["tok_s"] <= 0 or merged["accept_length"] < 1:
        raise SystemExit("sglang-sim: tok_s must be > 0 and accept_length >= 1")
    return merged


# --------------------------------------------------------------------------- generation


class Generation:
    """Tokens and their timing for one request: prefill yields one token, each decode step accept_length."""

    def __init__(self, sim, prompt, max_tokens, temperature, chat=False):
        self.sim = sim
        b = sim.behaviour
        self.prompt_tokens = max(1, len(TOKEN_RE.findall(prompt))) + (10 if chat else 0)
        mode = b["mode"]
        if mode == "degenerate":
            pieces = ["!"] * max_tokens
            self.finish = "length"
        else:
            if "text" in b:
                source = b["text"]
            else:
                idx = int(hashlib.sha256(prompt.encode()).hexdigest(), 16) % len(PASSAGES)
                source = PASSAGES[idx]
            words = TOKEN_RE.findall(source)
            if temperature and temperature > 0:
                # Sampled: vary the order a little, as sampling would, but keep it text.
                rng = random.Random()
                start = rng.randrange(len(words))
                words = words[start:] + words[:start]
            if chat and words:
                words[0] = words[0].lstrip()
            pieces = words[:max_tokens]
            self.finish = "length" if len(words) >= max_tokens else "stop"
        self.pieces = pieces
        # Decode steps after the prefill token: sizes average accept_length exactly.
        self.steps = []
        acc, emitted, rest = 0.0, 0, max(0, len(pieces) - 1)
        while emitted < rest:
            acc += b["accept_length"]
            k = max(1, min(rest - emitted, int(math.floor(acc + 1e-9)) - emitted))
            self.steps.append(k)
            emitted += k
        # SGLang counts verify passes only (the prefill token is not one): accept length = tokens / verify_ct.
        self.verify_ct = len(self.steps) or (1 if pieces else 0)

    @property
    def completion_tokens(self):
        return len(self.pieces)

    def chunks(self):
        """Yield (text piece, n tokens) at the simulated pace."""
        b = self.sim.behaviour
        scale = b["time_scale"]
        if not self.pieces:
            return
        # Pace against deadlines from the first token, so a late wake-up (a busy host) is caught up
        # on the next step instead of slowing the whole stream: the rate after the first token stays tok_s.
        self.sim.sleep(b["ttft_s"] * scale)
        t_first = time.monotonic()
        yield self.pieces[0], 1
        i, done = 1, 0
        for k in self.steps:
            done += k
            self.sim.sleep(t_first + done / b["tok_s"] * scale - time.monotonic())
            yield "".join(self.pieces[i : i + k]), k
            i += k

    def text(self):
        return "".join(piece for piece, _count in self.chunks())

    def spec_meta(self):
        if not self.sim.spec_enabled:
            return {}
        ct = max(1, self.verify_ct)
        accept_length = self.completion_tokens / ct
        steps = self.sim.args.speculative_num_draft_tokens or 4
        return {
            "spec_verify_ct": ct,
            "spec_accept_length": round(accept_length, 4),
            "spec_accept_rate": round(min(1.0, max(0.0, (accept_length - 1) / max(1, steps - 1))), 4),
        }


class Sim:
    def __init__(self, args, behaviour):
        self.args = args
        self.behaviour = behaviour
        self.model_id = args.served_model_name or args.model_path
        self.spec_enabled = bool(args.speculative_algorithm)
        self.started = time.monotonic()
        self.ready_at = self.started + behaviour["load_seconds"] * behaviour["time_scale"]
        self.stopping = threading.Event()
        self.last_accept_length = None
        self.last_throughput = None

    def sleep(self, seconds):
        if self.stopping.wait(max(0.0, seconds)):
            raise ConnectionAbortedError("server shutting down")

    @property
    def ready(self):
        return time.monotonic() >= self.ready_at

    def server_info(self):
        info = dict(vars(self.args))
        info["speculative_algorithm"] = reported_algorithm(self.args)
        info["served_model_name"] = self.model_id
        # /server_info answers ServerArgs.resolved_dict() (utils/common.py:3584-3591): api_key in clear.
        info["admin_api_key"] = None
        info.update(
            {
                "version": SIM_VERSION,
                "status": "ready" if self.ready else "starting",
                "max_total_num_tokens": 65536,
                "internal_states": [
                    {
                        "avg_spec_accept_length": self.last_accept_length,
                        "last_gen_throughput": self.last_throughput,
                        "memory_usage": {
                            "weight": 25.3,
                            "kvcache": 12.1,
                            "graph": 0.0 if self.args.disable_cuda_graph else 1.2,
                        },
                    }
                ],
            }
        )
        return info


# --------------------------------------------------------------------------- HTTP


def _openai_error(message, status=400, err_type="BadRequest"):
    return {"object": "error", "message": message, "type": err_type, "param": None, "code": status}


# The field report's HTTP 400: DDTree's draft got 5120-wide hidden states where DFlash capture gives 25600.
CHAT_400_MESSAGE = (
    "Traceback (most recent call last):\n"
    '  File "/opt/sglang/python/sglang/srt/managers/scheduler.py", line 2612, in run_batch\n'
    "    batch_result = self.model_worker.forward_batch_generation(model_worker_batch)\n"
    '  File "/opt/sglang/python/sglang/srt/speculative/ddtree_worker.py", line 418, in forward_batch_generation\n'
    "    draft_hidden = self.draft_model_runner.model.fc(target_hidden)\n"
    '  File "/opt/sglang/python/sglang/srt/models/dflash.py", line 201, in forward\n'
    "    return F.linear(input, self.weight, self.bias)\n"
    "RuntimeError: mat1 and mat2 shapes cannot be multiplied (7x5120 and 25600x5120)\n"
)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "uvicorn"
    sys_version = ""
    sim = None  # set in main()

    def setup(self):
        super().setup()
        # uvicorn sets TCP_NODELAY; without it small writes meet delayed ACKs (40 ms stalls on loopback).
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    # -- plumbing
    def log_message(self, fmt, *a):  # uvicorn's access log format, on stdout
        pass

    def _access(self, status):
        phrase = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 503: "Service Unavailable"}
        host, port = self.client_address[:2]
        log(
            f'INFO:     {host}:{port} - "{self.command} {self.path} HTTP/1.1" {status} {phrase.get(status, "")}',
            sys.stdout,
        )

    def _send(self, status, body=None, ctype="application/json"):
        data = b"" if body is None else (json.dumps(body).encode() if not isinstance(body, bytes) else body)
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self._access(status)

    def _body(self):
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b""
        if not raw:
            return {}
        try:
            return json.loads(raw)
        except ValueError:
            return None

    def _authorized(self):
        key = self.sim.args.api_key
        if not key or self.path.startswith("/health") or self.path.startswith("/metrics"):
            return True
        return self.headers.get("Authorization") == "Bearer " + key

    def _reset(self):
        """Send a TCP RST: what a client sees as 'Connection reset by peer'."""
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()
        self.close_connection = True
        host, port = self.client_address[:2]
        log(f'INFO:     {host}:{port} - "{self.command} {self.path} HTTP/1.1" connection reset', sys.stdout)

    def _hang(self):
        log(f"WARNING:  request {self.command} {self.path} accepted; the scheduler does not answer (hang mode)")
        while not self.sim.stopping.wait(1.0):
            pass
        self.close_connection = True

    # -- routing
    def do_GET(self):
        self._dispatch("GET")

    def do_POST(self):
        self._dispatch("POST")

    def _dispatch(self, method):
        path = self.path.split("?", 1)[0]
        if not self._authorized():
            self._body()
            return self._send(401, {"error": "Unauthorized"})
        routes = {
            ("GET", "/health"): self.health,
            ("GET", "/health_generate"): self.health_generate,
            ("GET", "/v1/models"): self.models,
            ("GET", "/get_model_info"): self.model_info,
            ("GET", "/model_info"): self.model_info,
            ("GET", "/get_server_info"): self.server_info,
            ("GET", "/server_info"): self.server_info,
            ("POST", "/v1/completions"): self.completions,
            ("POST", "/v1/chat/completions"): self.chat,
            ("POST", "/generate"): self.generate,
        }
        fn = routes.get((method, path))
        if fn is None:
            if method == "POST":
                self._body()
            if any(p == path for (_method, p) in routes):
                return self._send(405, {"detail": "Method Not Allowed"})
            return self._send(404, {"detail": "Not Found"})
        try:
            fn()
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            self.close_connection = True

    # -- endpoints
    def health(self):
        self._send(200 if self.sim.ready else 503)

    def health_generate(self):
        if not self.sim.ready:
            return self._send(503)
        mode = self.sim.behaviour["mode"]
        if mode == "hang":
            return self._hang()
        if mode == "conn_reset":
            return self._send(503)
        Generation(self.sim, "health", 1, 0).text()  # one token, at the mode's pace
        self._send(200)

    def models(self):
        now = int(self.sim.started)
        self._send(
            200,
            {
                "object": "list",
                "data": [
                    {
                        "id": self.sim.model_id,
                        "object": "model",
                        "created": now,
                        "owned_by": "sglang",
                        "root": self.sim.model_id,
                        "parent": None,
                        "max_model_len": self.sim.args.context_length or 262144,
                    }
                ],
            },
        )

    def model_info(self):
        self._send(
            200,
            {
                "model_path": self.sim.args.model_path,
                "tokenizer_path": self.sim.args.tokenizer_path or self.sim.args.model_path,
                "is_generation": True,
                "preferred_sampling_params": None,
                "weight_version": "default",
            },
        )

    def server_info(self):
        self._send(200, self.sim.server_info())

    def _generation_gate(self):
        """The failure modes every generation endpoint shares; True when the request was answered."""
        if not self.sim.ready:
            self._send(503, _openai_error("The server is not ready yet (still loading).", 503, "ServiceUnavailable"))
            return True
        mode = self.sim.behaviour["mode"]
        if mode == "conn_reset":
            self._reset()
            return True
        if mode == "hang":
            self._hang()
            return True
        if mode == "chat_400":
            log("ERROR:    Error in request: " + CHAT_400_MESSAGE.splitlines()[-1])
            sys.stderr.write(CHAT_400_MESSAGE)
            sys.stderr.flush()
            # SGLang returns the exception text, cut, as the message.
            self._send(400, _openai_error(CHAT_400_MESSAGE[-600:].lstrip()))
            return True
        return False

    def _stream_headers(self):
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        self._access(200)

    def _sse(self, obj):
        data = ("data: " + (obj if isinstance(obj, str) else json.dumps(obj)) + "\n\n").encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _sse_end(self):
        self._sse("[DONE]")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _decode_log(self, gen, seconds):
        rate = gen.completion_tokens / seconds if seconds > 0 else None
        self.sim.last_throughput = rate
        if self.sim.spec_enabled:
            self.sim.last_accept_length = gen.spec_meta().get("spec_accept_length")
        accept = f"accept len: {self.sim.last_accept_length:.2f}, " if self.sim.spec_enabled else ""
        log(
            f"Decode batch. #running-req: 1, #token: {gen.prompt_tokens + gen.completion_tokens}, token usage: 0.00, "
            f"{accept}gen throughput (token/s): {rate or 0.0:.2f}, #queue-req: 0"
        )

    def _openai(self, chat):
        req = self._body()
        if req is None:
            return self._send(400, _openai_error("Invalid JSON body"))
        if self._generation_gate():
            return
        model = req.get("model") or self.sim.model_id
        if model not in (self.sim.model_id, self.sim.args.model_path):
            return self._send(404, _openai_error(f"The model `{model}` does not exist.", 404, "NotFoundError"))
        if chat:
            msgs = req.get("messages")
            if not isinstance(msgs, list) or not msgs:
                return self._send(400, _openai_error("messages: field required"))
            prompt = " ".join(str(m.get("content", "")) for m in msgs if isinstance(m, dict))
        else:
            prompt = req.get("prompt")
            if prompt is None:
                return self._send(400, _openai_error("prompt: field required"))
            prompt = prompt if isinstance(prompt, str) else json.dumps(prompt)
        max_tokens = req.get("max_completion_tokens") or req.get("max_tokens") or (16 if not chat else 128)
        gen = Generation(self.sim, prompt, int(max_tokens), float(req.get("temperature", 1.0) or 0), chat=chat)
        rid = uuid.uuid4().hex
        created = int(time.time())
        obj = "chat.completion" if chat else "text_completion"
        usage = {
            "prompt_tokens": gen.prompt_tokens,
            "total_tokens": gen.prompt_tokens + gen.completion_tokens,
            "completion_tokens": gen.completion_tokens,
            "prompt_tokens_details": None,
            "reasoning_tokens": 0,
        }
        t0 = time.monotonic()
        if not req.get("stream"):
            text = gen.text()
            self._decode_log(gen, time.monotonic() - t0)
            if chat:
                choice = {
                    "index": 0,
                    "message": {"role": "assistant", "content": text, "reasoning_content": None, "tool_calls": None},
                    "logprobs": None,
                    "finish_reason": gen.finish,
                    "matched_stop": None if gen.finish == "length" else 151645,
                }
            else:
                choice = {
                    "index": 0,
                    "text": text,
                    "logprobs": None,
                    "finish_reason": gen.finish,
                    "matched_stop": None if gen.finish == "length" else 151645,
                }
            return self._send(
                200,
                {"id": rid, "object": obj, "created": created, "model": model, "choices": [choice], "usage": usage},
            )
        include_usage = bool((req.get("stream_options") or {}).get("include_usage"))
        self._stream_headers()
        chunk_obj = "chat.completion.chunk" if chat else "text_completion"
        first = True
        for piece, _k in gen.chunks():
            if chat:
                delta = {"role": "assistant", "content": piece} if first else {"content": piece}
                choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": None, "matched_stop": None}
            else:
                choice = {"index": 0, "text": piece, "logprobs": None, "finish_reason": None, "matched_stop": None}
            first = False
            self._sse(
                {"id": rid, "object": chunk_obj, "created": created, "model": model, "choices": [choice], "usage": None}
            )
        # The finish chunk: empty content, finish_reason set (as SGLang sends it).
        last = {
            "index": 0,
            "logprobs": None,
            "finish_reason": gen.finish,
            "matched_stop": None if gen.finish == "length" else 151645,
        }
        if chat:
            last["delta"] = {}
        else:
            last["text"] = ""
        self._sse(
            {"id": rid, "object": chunk_obj, "created": created, "model": model, "choices": [last], "usage": None}
        )
        if include_usage:
            self._sse(
                {"id": rid, "object": chunk_obj, "created": created, "model": model, "choices": [], "usage": usage}
            )
        self._sse_end()
        self._decode_log(gen, time.monotonic() - t0)

    def completions(self):
        self._openai(chat=False)

    def chat(self):
        self._openai(chat=True)

    def generate(self):
        req = self._body()
        if req is None:
            return self._send(400, {"error": {"message": "Invalid JSON body"}})
        if self._generation_gate():
            return
        text = req.get("text")
        if text is None and req.get("input_ids") is None:
            return self._send(400, {"error": {"message": "Either text or input_ids should be provided."}})
        params = req.get("sampling_params") or {}
        gen = Generation(
            self.sim, str(text or ""), int(params.get("max_new_tokens", 128)), float(params.get("temperature", 1.0))
        )
        rid = uuid.uuid4().hex
        t0 = time.monotonic()

        def meta(done, n):
            m = {
                "id": rid,
                "finish_reason": None,
                "prompt_tokens": gen.prompt_tokens,
                "weight_version": "default",
                "completion_tokens": n,
                "cached_tokens": 0,
                "e2e_latency": round(time.monotonic() - t0, 6),
            }
            if done:
                fr = {"type": gen.finish}
                fr.update({"length": n} if gen.finish == "length" else {"matched": 151645})
                m["finish_reason"] = fr
                m.update(gen.spec_meta())
            return m

        if not req.get("stream"):
            out = gen.text()
            self._decode_log(gen, time.monotonic() - t0)
            return self._send(
                200,
                {
                    "text": out,
                    "output_ids": list(range(1000, 1000 + gen.completion_tokens)),
                    "meta_info": meta(True, gen.completion_tokens),
                },
            )
        self._stream_headers()
        sofar, n = "", 0
        for piece, k in gen.chunks():
            sofar += piece  # SGLang's /generate streams the text so far, not the increment
            n += k
            self._sse({"text": sofar, "output_ids": list(range(1000, 1000 + n)), "meta_info": meta(False, n)})
        self._sse({"text": sofar, "output_ids": list(range(1000, 1000 + n)), "meta_info": meta(True, n)})
        self._sse_end()
        self._decode_log(gen, time.monotonic() - t0)


# --------------------------------------------------------------------------- startup


def _traceback_lines(frames, last):
    out = ["Traceback (most recent call last):"]
    for f, line, fn, code in frames:
        out.append(f'  File "/opt/sglang/python/sglang/srt/{f}", line {line}, in {fn}')
        out.append("    " + code)
    out.append(last)
    return out


def fail_start(lines, sim):
    """A scheduler process died before the HTTP server bound: log as SGLang does, then die like it."""
    log("Scheduler hit an exception: " + lines[0])
    for line in lines[1:]:
        sys.stderr.write(line + "\n")
    sys.stderr.flush()
    log("Received sigquit from a child process. It usually means the child failed.")
    sys.stdout.flush()
    sys.stderr.flush()
    # SGLang's parent kills its own process tree with SIGKILL (systemd: status=9/KILL).
    os.kill(os.getpid(), signal.SIGKILL)


def main(argv=None):
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    err = validate(args)
    if err:
        sys.stderr.write("Traceback (most recent call last):\n")
        sys.stderr.write('  File "/opt/sglang/python/sglang/launch_server.py", line 24, in <module>\n')
        sys.stderr.write("    server_args = prepare_server_args(sys.argv[1:])\n")
        sys.stderr.write('  File "/opt/sglang/python/sglang/srt/server_args.py", line 712, in __post_init__\n')
        sys.stderr.write("    self._handle_speculative_decoding()\n")
        sys.stderr.write(f"ValueError: {err}\n")
        return 1
    behaviour = load_behaviour(args)
    sim = Sim(args, behaviour)
    Handler.sim = sim
    scale = behaviour["time_scale"]
    if unknown:
        log("sglang-sim: ignoring flags it does not simulate: {}".format(" ".join(unknown)))
    # SGLang 0.5.23 (entrypoints/engine.py:1185, :173-174): a dict repr of ServerArgs.resolved_dict(),
    # in field order, api_key in clear (only watermark secrets are redacted, watermarking/core.py:25-27).
    log(f"server_args={dict(vars(args), admin_api_key=None)}")
    b = behaviour
    log(
        f"sglang-sim: mode={b['mode']} tok_s={b['tok_s']:.4g} accept_length={b['accept_length']:.3g} "
        f"ttft_s={b['ttft_s']:.4g} load_seconds={b['load_seconds']:.4g} bind_delay_s={b['bind_delay_s']:.4g}"
    )
    log("Load weight begin. avail mem=46.82 GB")
    time.sleep(behaviour["bind_delay_s"] * scale)

    mode = behaviour["mode"]
    if mode == "oom_start":
        fail_start(
            _traceback_lines(
                [
                    ("managers/scheduler.py", 3091, "run_scheduler_process", "scheduler = Scheduler("),
                    ("managers/scheduler.py", 412, "__init__", "self.tp_worker = TpModelWorker("),
                    ("model_executor/model_runner.py", 1788, "init_memory_pool", "raise RuntimeError("),
                ],
                "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
            ),
            sim,
        )
    if mode == "crash_before_bind":
        if args.disable_cuda_graph:
            last = (
                "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.50 GiB. GPU 0 has a total "
                "capacity of 47.41 GiB of which 1.19 GiB is free. Including non-PyTorch memory, this process "
                "has 46.21 GiB memory in use."
            )
            frames = [
                ("managers/scheduler.py", 3091, "run_scheduler_process", "scheduler = Scheduler("),
                ("speculative/dflash_worker.py", 143, "__init__", "self.draft_model_runner = ModelRunner("),
            ]
        else:
            last = (
                "Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 1.25 GiB.\n"
                "Possible solutions:\n"
                "1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)\n"
                "2. set --cuda-graph-max-bs to a smaller value (e.g., 16)\n"
                "3. disable torch compile by not using --enable-torch-compile\n"
                "4. disable CUDA graph by --disable-cuda-graph. (Not recommended. Huge performance loss)"
            )
            frames = [
                ("managers/scheduler.py", 3091, "run_scheduler_process", "scheduler = Scheduler("),
                (
                    "model_executor/model_runner.py",
                    2204,
                    "init_device_graphs",
                    "self.graph_runner = CudaGraphRunner(self)",
                ),
            ]
        fail_start(_traceback_lines(frames, last), sim)

    log("Load weight end. type=Qwen3ForCausalLM, dtype=torch.bfloat16, avail mem=21.02 GB, mem usage=25.80 GB.")
    log("KV Cache is allocated. #tokens: 65536, K size: 4.00 GB, V size: 4.00 GB")
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    ThreadingHTTPServer.address_family = family
    ThreadingHTTPServer.daemon_threads = True
    ThreadingHTTPServer.allow_reuse_address = True
    try:
        server = ThreadingHTTPServer((args.host, args.port), Handler)
    except OSError as e:
        where = f"({args.host!r}, {args.port})"
        log(f"ERROR:    [Errno {e.errno}] error while attempting to bind on address {where}: {e.strerror}")
        return 1
    # Warm-up (503 on /health) starts once the port is bound, as in SGLang.
    sim.ready_at = time.monotonic() + behaviour["load_seconds"] * scale
    log(f"INFO:     Started server process [{os.getpid()}]")
    log("INFO:     Waiting for application startup.")
    log("INFO:     Application startup complete.")
    log(f"INFO:     Uvicorn running on http://{args.host}:{args.port} (Press CTRL+C to quit)")

    def announce_ready():
        if not sim.stopping.wait(max(0.0, sim.ready_at - time.monotonic())):
            log("The server is fired up and ready to roll!")

    threading.Thread(target=announce_ready, daemon=True).start()

    def on_term(signum, _frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        sim.stopping.set()
        log("INFO:     Shutting down")
        server.server_close()
        log(f"INFO:     Finished server process [{os.getpid()}]")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except SystemExit:
        raise
    except Exception:  # a bug in the simulator: say so plainly rather than look like SGLang
        traceback.print_exc()
        sys.exit(70)
