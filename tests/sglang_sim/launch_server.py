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

# Its siblings collection_code.py and tiers.py (adaptive speculation's tiers and no speculation, README),
# also when a test loads this file by path.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collection_code  # noqa: E402
import tiers  # noqa: E402

BEHAVIOUR_FILE = "/etc/ddtree-sim/behaviour.json"
MODES = ("healthy", "oom_start", "crash_before_bind", "chat_400", "conn_reset", "hang", "degenerate", "divergent")
# The field report: 8 tokens in 141 s, the first after ~17.6 s, then one '!' every ~17.6 s.
DEGENERATE_INTERVAL_S = 17.6

# Defaults per mode: what a behaviour entry does not say.
MODE_DEFAULTS = {
    "healthy": {"tok_s": 40.0, "ttft_s": 0.08},
    "divergent": {"tok_s": 40.0, "ttft_s": 0.08},
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
    "SGLANG_SIM_RATES": ("rates", json.loads),
    "SGLANG_SIM_TTFT": ("ttft", json.loads),
    "SGLANG_SIM_DEGRADE": ("degrade", json.loads),
}
# What a "degrade" entry does not say: it changes nothing but what it names.
DEGRADE_DEFAULTS = {"after_s": 0.0, "accept_length": None, "abort_rate": 0.0, "rate_factor": 1.0}

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
EXPORT_LOCK = threading.Lock()


def _now():
    return time.strftime("%Y-%m-%d %H:%M:%S")


def log(msg, stream=None, prefix=""):
    """One SGLang log line (SGLang's logging goes to stderr; uvicorn's access log to stdout).

    The format is 0.5.23's "[%(asctime)s] %(message)s" (sglang/srt/server_args.py:703-708); a
    scheduler's lines carry its rank, "[%(asctime)s TP0] ..." (utils/common.py:2630)."""
    stream = stream or sys.stderr
    with LOG_LOCK:
        stream.write(f"[{_now()}{prefix}] {msg}\n")
        stream.flush()


# --------------------------------------------------------------------------- arguments
#
# The command line is parsed by the pinned release's own argument table: the options of
# sglang 0.5.23 read from its wheel at test set-up (scripts/test setup writes
# .cache/sglang_sim/sglang_cli.json; prepare_gpu_host.yml copies it beside this file), turned
# into an argparse parser by the collection's plugins/module_utils/_sglang_flags.py. So the
# simulator refuses what the real server refuses, with argparse's real text
# ("sglang serve: error: ...", exit 2), and accepts every flag the real one accepts.

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
# Where the table is looked for: SGLANG_SIM_CLI_TABLE, beside this file (test hosts), the
# repository's set-up cache (unit tests and runs from a checkout).
CLI_TABLE_PLACES = (
    os.path.join(HERE, "sglang_cli.json"),
    os.path.join(REPO, ".cache", "sglang_sim", "sglang_cli.json"),
)
# The DDTree build: the release plus what sgl-project/sglang#29907 adds (see the file).
DDTREE_OVERLAY_FILE = os.path.join(HERE, "ddtree_pr29907.json")
BUILDS = ("ddtree", "release")

# Built-in speculative algorithms of 0.5.23: the SpeculativeAlgorithm members
# (sglang/srt/speculative/spec_info.py:39-47) and the reserved alias NEXTN
# (speculative/spec_registry.py:183), which resolution turns into EAGLE
# (arg_groups/speculative_hook.py:109-116).
RELEASE_ALGORITHMS = ("DFLASH", "UNO", "DSPARK", "EAGLE", "EAGLE3", "FROZEN_KV_MTP", "STANDALONE", "NGRAM", "NONE")
RESERVED_ALIASES = ("NEXTN",)

# Defaults of the ServerArgs fields the simulator reads, as 0.5.23 declares them, for a table
# that carries no defaults: arg_groups/fields/serving.py:65 host, :66 port;
# parallel.py:45-51 tp_size; observability.py:31 log_level; exec_.py:670 disable_cuda_graph.
# observability.py:70 enable_metrics; :136-139 decode_log_interval, 40 decode passes;
# spec.py:237-240 speculative_adaptive.
FIELD_DEFAULTS = {
    "host": "127.0.0.1",
    "port": 30000,
    "tp_size": 1,
    "log_level": "info",
    "disable_cuda_graph": False,
    "enable_metrics": False,
    "decode_log_interval": 40,
    "speculative_adaptive": False,
}
SIM_FIELDS = (
    "model_path",
    "tokenizer_path",
    "served_model_name",
    "api_key",
    "speculative_algorithm",
    "speculative_draft_model_path",
    "speculative_num_draft_tokens",
    "speculative_dflash_block_size",
    "speculative_ddtree_budget",
    "speculative_num_steps",
    "speculative_eagle_topk",
    "speculative_adaptive_config",
    "mem_fraction_static",
    "context_length",
    "max_running_requests",
    "export_metrics_to_file",
    "export_metrics_to_file_dir",
)

# Where the release's files would be: tracebacks name them as Python does (paths only; the
# line numbers are the 0.5.23 wheel's).
SITE = "/opt/sglang/venv/lib/python3.11/site-packages/sglang"


class SimSetupError(Exception):
    """The simulator itself is not set up (no table): not an SGLang error, exit 70."""


def _load_flags_module():
    module = collection_code.load("_sglang_flags")
    if module is None:
        raise SimSetupError("no _sglang_flags.py in {}".format(" or ".join(collection_code.places("_sglang_flags"))))
    return module


def load_cli_table(build):
    """The option table of the release (plus #29907's additions for the DDTree build)."""
    places = (os.environ["SGLANG_SIM_CLI_TABLE"],) if os.environ.get("SGLANG_SIM_CLI_TABLE") else CLI_TABLE_PLACES
    path = next((p for p in places if os.path.exists(p)), None)
    if path is None:
        raise SimSetupError(
            "no SGLang option table in {} (scripts/test setup generates it from the pinned wheel; "
            "prepare_gpu_host.yml copies it to /opt/sglang-sim/)".format(" or ".join(places))
        )
    with open(path, encoding="utf-8") as f:
        table = json.load(f)
    table["algorithms"] = list(RELEASE_ALGORITHMS) + list(RESERVED_ALIASES)
    table["build"] = build
    if build == "ddtree":
        with open(DDTREE_OVERLAY_FILE, encoding="utf-8") as f:
            overlay = json.load(f)
        have = {o["dest"] for o in table["options"]}
        table["options"] = list(table["options"]) + [o for o in overlay["options"] if o["dest"] not in have]
        table["algorithms"] += overlay["algorithms"]
    return table


def parse_args(argv, table):
    """Parse like 0.5.23's prepare_server_args (sglang/srt/server_args.py:679-701)."""
    flags = _load_flags_module()
    parser = flags.build_parser(table)
    parsed = parser.parse_args(argv)  # argparse's own error text and exit 2
    if getattr(parsed, "model_path", None) is None:
        # ServerArgs.model_path has no default, so 0.5.23 makes it required (arg_groups/arg_utils.py:413-416).
        parser.error("the following arguments are required: --model-path/--model")
    values = dict(FIELD_DEFAULTS)
    values.update({f: None for f in SIM_FIELDS})
    values.update({k: v for k, v in vars(parsed).items() if v is not None})
    return argparse.Namespace(**values), parsed


def _frames(frames):
    """Traceback frames as Python 3.11 prints them for `python -m sglang.launch_server`."""
    out = [
        "Traceback (most recent call last):",
        '  File "<frozen runpy>", line 198, in _run_module_as_main',
        '  File "<frozen runpy>", line 88, in _run_code',
    ]
    for f, line, fn, code in frames:
        out.append(f'  File "{SITE}/{f}", line {line}, in {fn}')
        out.append("    " + code)
    return out


# The path from launch_server's __main__ into the resolution hooks (0.5.23 line numbers).
RESOLVE_FRAMES = [
    ("launch_server.py", 84, "<module>", "run_server(server_args)"),
    ("launch_server.py", 29, "run_server", "server_args.resolve_once()"),
    ("srt/server_args.py", 277, "resolve_once", "run_resolution_pipeline(self)"),
    (
        "srt/arg_groups/pipeline.py",
        306,
        "run_resolution_pipeline",
        "run_hook(handle_speculative_decoding, server_args)",
    ),
    ("srt/arg_groups/resolution_hooks.py", 139, "run_hook", "step(server_args)"),
]


def resolve(args, table):
    """ServerArgs.resolve_once's speculative checks of 0.5.23: the traceback lines of the first
    one that fails, or None. The args are resolved in place (algorithm upper-cased, NEXTN -> EAGLE)."""
    algo = args.speculative_algorithm
    if algo is None:
        return None
    algo = algo.upper()  # arg_groups/speculative_hook.py:138-143
    args.speculative_algorithm = "EAGLE" if algo in ("NEXTN", "EAGLE") else algo  # :109-116
    if algo not in table["algorithms"]:
        return _frames(
            RESOLVE_FRAMES
            + [
                (
                    "srt/arg_groups/speculative_hook.py",
                    242,
                    "handle_speculative_decoding",
                    "algo = SpeculativeAlgorithm.from_string(cfg.speculative_algorithm)",
                ),
                (
                    "srt/speculative/spec_info.py",
                    65,
                    "from_string",
                    'raise ValueError(f"Unknown speculative algorithm name: {name}")',
                ),
            ]
        ) + [f"ValueError: Unknown speculative algorithm name: {algo}"]
    if algo != "DFLASH":
        # DDTREE's own checks (#29907) are not simulated: their text is not in the release.
        return None
    dflash = RESOLVE_FRAMES + [
        (
            "srt/arg_groups/speculative_hook.py",
            284,
            "handle_speculative_decoding",
            "algo.handle_server_args(server_args)",
        ),
        ("srt/speculative/spec_info.py", 256, "handle_server_args", "_handle_dflash(server_args)"),
    ]
    if args.speculative_draft_model_path is None:  # speculative_hook.py:319-322
        return _frames(
            dflash + [("srt/arg_groups/speculative_hook.py", 320, "_handle_dflash", "raise ValueError(")]
        ) + ["ValueError: DFLASH speculative decoding requires setting --speculative-draft-model-path."]
    block, tokens = args.speculative_dflash_block_size, args.speculative_num_draft_tokens
    if block is not None and int(block) <= 0:  # speculative_hook.py:368-373
        return _frames(
            dflash + [("srt/arg_groups/speculative_hook.py", 370, "_handle_dflash", "raise ValueError(")]
        ) + [f"ValueError: DFLASH requires --speculative-dflash-block-size to be positive, got {block}."]
    if block is not None and tokens is not None and int(tokens) != int(block):  # speculative_hook.py:374-382
        return _frames(
            dflash + [("srt/arg_groups/speculative_hook.py", 377, "_handle_dflash", "raise ValueError(")]
        ) + [
            "ValueError: Both --speculative-num-draft-tokens and --speculative-dflash-block-size are set but they "
            "differ. For DFLASH they must match. "
            f"speculative_num_draft_tokens={tokens}, speculative_dflash_block_size={block}."
        ]
    return None


def reported_algorithm(args):
    """The algorithm after resolution (NEXTN is EAGLE): what the server reports."""
    return args.speculative_algorithm


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


def read_behaviour_file():
    path = os.environ.get("DDTREE_SIM_BEHAVIOUR_FILE", BEHAVIOUR_FILE)
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def simulated_build(table):
    """Which SGLang the simulator is: the DDTree build (release + #29907, the default) or the bare release."""
    build = os.environ.get("SGLANG_SIM_BUILD") or table.get("build") or "ddtree"
    if build not in BUILDS:
        raise SimSetupError("unknown build {!r} (one of {})".format(build, ", ".join(BUILDS)))
    return build


def _file_entry(table, key, args):
    """The behaviour file's own entry for a key (a list: the first whose "when" matches), or None."""
    entry = table.get(key)
    if isinstance(entry, list):
        entry = next((e for e in entry if _matches(e.get("when"), args)), None)
    return entry if isinstance(entry, dict) else None


def load_behaviour(args, given, table):
    """The effective behaviour dict: file entry for the algorithm, then defaults, then SGLANG_SIM_* env.

    ``given`` is the algorithm as the command line names it (NEXTN), ``args`` the resolved
    arguments (EAGLE)."""
    algo = given or "NONE"
    entry = {}
    # The name given on the command line first (NEXTN), then what SGLang calls it (EAGLE), then a default.
    for key in (algo, reported_algorithm(args) or "NONE", "default", "*"):
        if key in table and key != "build":
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
    if os.environ.get("SGLANG_SIM_TOK_S", "") != "" and os.environ.get("SGLANG_SIM_RATES", "") == "":
        merged.pop("rates", None)  # a flat rate from the environment wins over the file's table
    if os.environ.get("SGLANG_SIM_TTFT_S", "") != "" and os.environ.get("SGLANG_SIM_TTFT", "") == "":
        merged.pop("ttft", None)  # likewise a flat first-token delay
    merged["rates"] = _rate_table(merged.get("rates"))
    if merged["rates"] and "tok_s" not in entry:
        merged["tok_s"] = rate_at(merged["rates"], 1)  # what the start line shows
    merged["ttft"] = _rate_table(merged.get("ttft"), "ttft", "a first-token delay in seconds", '{"1": 0.05, "16": 1.5}')
    if merged["ttft"] and "ttft_s" not in entry:
        merged["ttft_s"] = rate_at(merged["ttft"], 1)
    merged["degrade"] = _degrade(merged.get("degrade"))
    if merged["tok_s"] <= 0 or merged["accept_length"] < 1:
        raise SystemExit("sglang-sim: tok_s must be > 0 and accept_length >= 1")
    return merged


def _rate_table(rates, key="rates", what="a tok/s", example='{"1": 66, "4": 52, "16": 22}'):
    """ "rates": {"1": 66, "4": 52, "16": 22} (or "ttft": {"1": 0.05, "16": 1.5}) as sorted (streams, value)
    points, or None."""
    if rates is None:
        return None
    try:
        points = sorted((int(n), float(r)) for n, r in dict(rates).items())
    except (TypeError, ValueError):
        points = []
    if not points or any(n < 1 or r <= 0 for n, r in points):
        raise SystemExit(
            f"sglang-sim: {key} must map a number of streams (1 or more) to {what} above 0, "
            f"e.g. {example}; got " + json.dumps(rates)
        )
    return points


def rate_at(points, n):
    """Per-stream decode rate with n generations in flight: linear between the table's points,
    the first point's rate below it and the last point's rate past it (README "Batching")."""
    if n <= points[0][0]:
        return points[0][1]
    for i in range(1, len(points)):  # no zip(strict=): Python 3.9
        (n0, r0), (n1, r1) = points[i - 1], points[i]
        if n <= n1:
            return r0 + (r1 - r0) * (n - n0) / (n1 - n0)
    return points[-1][1]


def _degrade(degrade):
    """A "degrade" entry completed with its defaults, or None."""
    if degrade is None:
        return None
    if not isinstance(degrade, dict) or set(degrade) - set(DEGRADE_DEFAULTS):
        raise SystemExit(
            'sglang-sim: degrade must be a mapping with keys among {} (e.g. {{"after_s": 40, '
            '"accept_length": 1.02, "abort_rate": 0.3, "rate_factor": 0.5}}); got {}'.format(
                ", ".join(DEGRADE_DEFAULTS), json.dumps(degrade)
            )
        )
    merged = dict(DEGRADE_DEFAULTS, **degrade)
    if merged["accept_length"] is not None and merged["accept_length"] < 1:
        raise SystemExit("sglang-sim: degrade.accept_length must be 1 or more")
    if not 0 <= merged["abort_rate"] <= 1 or merged["rate_factor"] <= 0 or merged["after_s"] < 0:
        raise SystemExit("sglang-sim: degrade needs after_s >= 0, abort_rate between 0 and 1, rate_factor > 0")
    return merged


# --------------------------------------------------------------------------- generation


class Generation:
    """Tokens and their timing for one request: prefill yields one token, each decode step accept_length.

    ``stream`` is whether the client streams (the is_streaming label of the request metrics)."""

    def __init__(self, sim, prompt, max_tokens, temperature, chat=False, stream=False):
        self.sim = sim
        self.stream = bool(stream)
        self.arrived = time.monotonic()
        b = sim.behaviour
        degraded = sim.degraded(self.arrived)
        accept_length = b["accept_length"]
        if b["steps"].adaptive:
            # The tier of the batch it joins decides its draft steps (README "Adaptive speculation").
            accept_length = b["steps"].accept_length(b["steps"].step_at(len(sim.batch.in_flight) + 1))
        if degraded and b["degrade"]["accept_length"] is not None:
            accept_length = b["degrade"]["accept_length"]
        self.prompt_tokens = max(1, len(TOKEN_RE.findall(prompt))) + (10 if chat else 0)
        mode = b["mode"]
        if mode == "degenerate":
            pieces = ["!"] * max_tokens
            self.finish = "length"
        else:
            if "text" in b:
                source = b["text"]
            else:
                # Greedy output is a function of the prompt alone, as on a real server at temperature 0:
                # NEXTN and a healthy DDTree (lossless speculation) answer a prompt with the same text.
                idx = int(hashlib.sha256(prompt.encode()).hexdigest(), 16) % len(PASSAGES)
                if mode == "divergent":
                    # A build that is fast but wrong (a verification bug accepting draft tokens the
                    # target would not pick): fluent, non-degenerate text that is not the target's answer.
                    idx = (idx + 1) % len(PASSAGES)
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
            acc += accept_length
            k = max(1, min(rest - emitted, int(math.floor(acc + 1e-9)) - emitted))
            self.steps.append(k)
            emitted += k
        # A degraded server aborts some requests half-way through their decode steps, as 0.5.23's
        # scheduler aborts a request it retracts under decode memory pressure (README "Degrading").
        self.abort_after_steps = None
        if degraded and self.steps and random.random() < b["degrade"]["abort_rate"]:
            self.abort_after_steps = len(self.steps) // 2
        self.emitted = 0  # tokens sent so far
        self.verify_done = 0  # decode steps done so far
        self.rid = uuid.uuid4().hex
        self.health = False  # /health_generate's own request: not exported (request_metrics_exporter.py:150-152)
        self.first_token_at = None

    @property
    def completion_tokens(self):
        """Tokens the request produced: all of them, or those sent before an abort."""
        return self.emitted if self.finish == "abort" else len(self.pieces)

    @property
    def verify_ct(self):
        # SGLang counts verify passes only (the prefill token is not one): accept length = tokens / verify_ct.
        return self.verify_done or (1 if self.emitted else 0)

    def chunks(self):
        """Yield (text piece, n tokens) at the simulated pace.

        The request is in flight (it counts for the batch's rate) from here to its last token;
        decode steps are paced on the batch's clock, so joins, leaves and a degrade change the rate
        of a stream under way (README "Batching")."""
        if not self.pieces:
            return
        sim = self.sim
        scale = sim.behaviour["time_scale"]
        in_flight = sim.batch.join(self)
        try:
            sim.sleep(sim.first_token_delay(in_flight) * scale)
            now = time.monotonic()
            self.first_token_at = now
            start = sim.batch.first_token(self, now)
            sim.metrics.first_token(self, now - self.arrived)
            self.emitted, last = 1, now
            yield self.pieces[0], 1
            for n_step, k in enumerate(self.steps):
                if n_step == self.abort_after_steps:
                    self.finish = "abort"
                    # schedule_batch.py:3504-3506 logs it as a warning
                    log(
                        f"retract_decode: aborted request {id(self):x}: {RETRACT_ABORT_MESSAGE}",
                        prefix=sim.rank_prefix,
                    )
                    break
                sim.batch.wait_until(start + self.emitted - 1 + k)
                now = time.monotonic()
                self.verify_done += 1
                self.emitted += k
                sim.batch.stepped(self, k)
                sim.metrics.tokens(now - last, k)
                last = now
                yield "".join(self.pieces[self.emitted - k : self.emitted]), k
        finally:
            sim.batch.leave(self)
        sim.metrics.finished(self, time.monotonic() - self.arrived)
        sim.export_request(self)

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


# managers/schedule_batch.py:3492-3502 (0.5.23): the abort of a request retracted under decode
# memory pressure without a KV backup, with HTTPStatus.SERVICE_UNAVAILABLE.
RETRACT_ABORT_MESSAGE = "Retracted under decode memory pressure without a KV backup. Retry later."
# The KV pool the start-up log announces ("#tokens: 65536"): token_usage's denominator.
KV_POOL_TOKENS = 65536
# managers/scheduler_components/metrics_reporter.py:74: gen_throughput reads 0 once decode
# stats are older than this (_current_gen_throughput, :266-274).
GEN_THROUGHPUT_STALENESS_SECONDS = 30.0


class Batch:
    """The generations in flight and the decode rate they share.

    ``clock`` counts the tokens one stream has decoded since start: it advances at
    rate(n) / time_scale tokens per second, n being the generations in flight (admitted and not
    finished), so a stream's k-th decoded token is due when the clock has moved k tokens past its
    first token. The scheduler's gauges are published as 0.5.23 publishes them: at each prefill
    (admission), every --decode-log-interval decode forward passes of the batch, and when the
    batch goes idle."""

    def __init__(self, sim):
        self.sim = sim
        self.cond = threading.Condition()
        self.in_flight = set()
        self.waiting = 0  # requests queued behind --max-running-requests
        self.decoding = 0
        self.clock = 0.0
        self.clock_at = time.monotonic()
        # Scheduler stats (managers/scheduler_components/metrics_reporter.py:276-306).
        self.forward_ct = 0.0  # decode forward passes of the batch (one per step of every stream in it)
        self.interval_tokens = 0
        self.interval_spec_forward_ct = 0  # update_spec_metrics adds the batch size per pass (:543-555)
        self.last_decode_tic = time.monotonic()
        self.last_gen_throughput = 0.0
        self.gauges = None  # nothing published yet: the families appear with the first report

    def rate(self, n, when):
        b = self.sim.behaviour
        r = b["steps"].rate(n)
        if self.sim.degraded(when):
            r *= b["degrade"]["rate_factor"]
        return r / b["time_scale"]

    def _advance(self, now):
        """Move the clock to now, across the degrade boundary when there is one in between."""
        while self.clock_at < now:
            edge = self.sim.degrade_at
            end = edge if edge is not None and self.clock_at < edge < now else now
            self.clock += self.rate(len(self.in_flight), self.clock_at) * (end - self.clock_at)
            self.clock_at = end

    def join(self, gen):
        # --max-running-requests (arg_groups/fields/schedule.py:31) caps the running batch: a request
        # beyond it waits in the queue (num_queue_reqs) and its first token comes that much later.
        limit = self.sim.args.max_running_requests
        with self.cond:
            if limit and len(self.in_flight) >= limit:
                self.waiting += 1
                try:
                    while len(self.in_flight) >= limit:
                        if self.sim.stopping.is_set():
                            raise ConnectionAbortedError("server shutting down")
                        self.cond.wait(0.5)
                finally:
                    self.waiting -= 1
            self._advance(time.monotonic())
            self.in_flight.add(gen)
            self._publish(prefill=True)  # a prefill batch reports its stats (metrics_reporter.py:719-897)
            self.cond.notify_all()
            return len(self.in_flight)

    def first_token(self, gen, now):
        with self.cond:
            self._advance(now)
            self.decoding += 1
            return self.clock

    def leave(self, gen):
        with self.cond:
            self._advance(time.monotonic())
            if gen in self.in_flight:
                self.in_flight.discard(gen)
                if gen.emitted:
                    self.decoding -= 1
                if not self.in_flight:
                    # _maybe_log_idle_metrics (metrics_reporter.py:1476-1532): running 0, throughput 0.
                    self._publish(idle=True)
            self.cond.notify_all()

    def wait_until(self, target):
        """Until the clock reaches target (tokens); joins, leaves and the degrade wake us to recompute."""
        with self.cond:
            while True:
                now = time.monotonic()
                self._advance(now)
                if self.clock >= target - 1e-9:
                    return
                if self.sim.stopping.is_set():
                    raise ConnectionAbortedError("server shutting down")
                wait = (target - self.clock) / self.rate(len(self.in_flight), now)
                edge = self.sim.degrade_at
                if edge is not None and now < edge:
                    wait = min(wait, edge - now)
                self.cond.wait(min(wait, 0.5))

    def stepped(self, gen, k):
        """One decode step of one stream: 1/decoding of a batch forward pass."""
        with self.cond:
            self.interval_tokens += k
            self.interval_spec_forward_ct += 1
            before = int(self.forward_ct // self.sim.decode_log_interval)
            self.forward_ct += 1.0 / max(1, self.decoding)
            if int(self.forward_ct // self.sim.decode_log_interval) > before:
                self._publish(decode=True)

    def _publish(self, prefill=False, decode=False, idle=False):
        now = time.monotonic()
        g = dict(self.gauges or {"spec_accept_length": 0.0})
        g["num_running_reqs"] = len(self.in_flight) if not decode else self.decoding
        g["num_queue_reqs"] = self.waiting
        g["tokens"] = sum(x.prompt_tokens + x.emitted for x in self.in_flight)  # in the KV pool
        g["token_usage"] = g["tokens"] / KV_POOL_TOKENS
        if decode:
            gap = now - self.last_decode_tic
            self.last_decode_tic = now
            self.last_gen_throughput = self.interval_tokens / gap if gap > 0 else 0.0
            # metrics_reporter.py:966-973: accepted tokens / verify passes of the interval, 0 without speculation
            if self.sim.spec_enabled and self.interval_spec_forward_ct:
                g["spec_accept_length"] = self.interval_tokens / self.interval_spec_forward_ct
            self.interval_tokens = self.interval_spec_forward_ct = 0
            g["gen_throughput"] = self.last_gen_throughput
            self.sim.decode_log(g)
        elif idle:
            g["gen_throughput"] = 0.0
        else:
            stale = now - self.last_decode_tic > GEN_THROUGHPUT_STALENESS_SECONDS
            g["gen_throughput"] = 0.0 if stale else self.last_gen_throughput
        self.gauges = g


class Sim:
    def __init__(self, args, behaviour, version=None):
        self.args = args
        self.version = version
        self.behaviour = behaviour
        self.model_id = args.served_model_name or args.model_path
        self.spec_enabled = bool(args.speculative_algorithm)
        self.started = time.monotonic()
        self.ready_at = self.started + behaviour["load_seconds"] * behaviour["time_scale"]
        self.stopping = threading.Event()
        self.last_accept_length = None
        self.last_throughput = None
        # A scheduler's log prefix (managers/scheduler.py:6289-6290): its TP rank when tp_size > 1.
        self.rank_prefix = " TP0" if (args.tp_size or 1) > 1 else ""
        self.decode_log_interval = max(1, int(args.decode_log_interval or 40))
        self.batch = Batch(self)
        self.metrics = Metrics(self)

    def first_token_delay(self, in_flight):
        """Seconds from admission to the first token with ``in_flight`` generations admitted (this one
        included): the "ttft" table's value there, linear between its points as "rates" is, else ttft_s
        (README "Batching"). A speculative server's draft and tree add work per step, and prefill shares
        those steps with the batch's decode, so a unit's first token can grow with the batch."""
        b = self.behaviour
        return rate_at(b["ttft"], in_flight) if b.get("ttft") else b["ttft_s"]

    def export_request(self, gen):
        """--export-metrics-to-file: one JSON line per finished request, as 0.5.23's FileRequestMetricsExporter
        writes it (observability/request_metrics_exporter.py:70-160) into DIR/sglang-request-metrics-
        %Y%m%d_%H.log: request_parameters, then the request's meta_info (tokenizer_manager.py:2027-2038), with
        the time stats of --enable-metrics (req_time_stats.py:507-533). The release refuses the flag without
        --export-metrics-to-file-dir (validation_hook.py:340-343); so does this, by writing nothing."""
        args = self.args
        if gen.health or not args.export_metrics_to_file or not args.export_metrics_to_file_dir:
            return
        done = time.monotonic()
        meta = {
            "id": gen.rid,
            "finish_reason": {"type": "length", "length": len(gen.pieces)}
            if gen.finish == "length"
            else {"type": gen.finish},
            "prompt_tokens": gen.prompt_tokens,
            "completion_tokens": gen.completion_tokens,
            "cached_tokens": 0,
            "e2e_latency": done - gen.arrived,
        }
        meta.update(gen.spec_meta())
        if args.enable_metrics:
            wall = time.time() - done  # monotonic -> wall clock (convert_time_to_realtime)
            meta["request_received_ts"] = gen.arrived + wall
            if gen.first_token_at is not None:
                meta["first_token_latency"] = gen.first_token_at - gen.arrived
                if gen.completion_tokens > 1 and done > gen.first_token_at:
                    meta["decode_throughput"] = (gen.completion_tokens - 1) / (done - gen.first_token_at)
            meta["request_finished_ts"] = done + wall
        record = dict({"request_parameters": json.dumps({"rid": gen.rid, "stream": gen.stream})}, **meta)
        name = time.strftime("sglang-request-metrics-%Y%m%d_%H.log")
        with EXPORT_LOCK:
            os.makedirs(args.export_metrics_to_file_dir, exist_ok=True)
            with open(os.path.join(args.export_metrics_to_file_dir, name), "a", encoding="utf-8") as f:
                f.write(json.dumps(record) + "\n")

    @property
    def degrade_at(self):
        """When the degrade starts (monotonic time): after_s of serving after warm-up, or None."""
        d = self.behaviour.get("degrade")
        if not d:
            return None
        return self.ready_at + d["after_s"] * self.behaviour["time_scale"]

    def degraded(self, when):
        at = self.degrade_at
        return at is not None and when >= at

    def sleep(self, seconds):
        if self.stopping.wait(max(0.0, seconds)):
            raise ConnectionAbortedError("server shutting down")

    @property
    def ready(self):
        return time.monotonic() >= self.ready_at

    def decode_log(self, g):
        """The "Decode batch" line, every --decode-log-interval forward passes
        (managers/scheduler_components/metrics_reporter.py:963-1043, 0.5.23)."""
        accept = ""
        if self.spec_enabled:
            steps = self.args.speculative_num_draft_tokens or 4
            rate = min(1.0, max(0.0, (g["spec_accept_length"] - 1) / max(1, steps - 1)))
            accept = f"accept len: {g['spec_accept_length']:.2f}, accept rate: {rate:.2f}, "
        log(
            f"Decode batch, #running-req: {g['num_running_reqs']}, "
            f"#token: {g['tokens']}, token usage: {g['token_usage']:.2f}, "
            f"{accept}cuda graph: {not self.args.disable_cuda_graph}, "
            f"gen throughput (token/s): {g['gen_throughput']:.2f}, #queue-req: {g['num_queue_reqs']}",
            prefix=self.rank_prefix,
        )

    def server_info(self):
        info = dict(vars(self.args))
        info["speculative_algorithm"] = reported_algorithm(self.args)
        info["served_model_name"] = self.model_id
        # /server_info answers ServerArgs.resolved_dict() (utils/common.py:3584-3591): api_key in clear
        # (admin_api_key too: the parser is the release's own, so every field is in self.args).
        info.update(
            {
                # http_server.py:883-890 (0.5.23): the resolved args, then version and frontend.
                "version": self.version,
                "frontend": "python",
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


# --------------------------------------------------------------------------- metrics
#
# What 0.5.23 serves at /metrics with --enable-metrics: prometheus_client's multiprocess registry
# (utils/common.py:2843-2853, mounted by entrypoints/http_server.py:314-317), text format 0.0.4.
# Each family: (name, type, HELP text, label names beyond the collector's base labels) at the
# wheel's file:line. A family appears once it has a sample (multiprocess files hold only
# label sets that were used), labels sorted by name, a histogram as _sum, _bucket..., _count.

OBS = "srt/observability/metrics_collector.py"
# SchedulerMetricsCollector (metrics_collector.py:334), labels of init_new (:1382-1388).
SCHEDULER_GAUGES = (
    ("sglang:num_running_reqs", "The number of running requests.", OBS + ":364-369"),
    ("sglang:num_queue_reqs", "The number of requests in the waiting queue.", OBS + ":370-375"),
    ("sglang:gen_throughput", "The generation throughput (token/s).", OBS + ":382-387"),
    ("sglang:token_usage", "The token usage.", OBS + ":404-409"),
    (
        "sglang:spec_accept_length",
        "Mean acceptance length of speculative decoding (accepted drafts + bonus token per forward).",
        OBS + ":511-516",
    ),
)
# TokenizerMetricsCollector (metrics_collector.py:1822), labels of tokenizer_metric_labels (:1804-1819).
COUNTERS = {
    "generation": ("sglang:generation_tokens_total", "Number of generation tokens processed.", OBS + ":1860-1864"),
    "prompt": ("sglang:prompt_tokens_total", "Number of prefill tokens processed.", OBS + ":1855-1859"),
    # Verify passes of finished requests, without is_streaming (metrics_collector.py:1865-1869, inc at :2111-2112
    # when the request's spec_verify_ct > 0): generation tokens / verify passes is the accept length of a window.
    "verify": (
        "sglang:spec_verify_calls_total",
        "Number of speculative decoding verification calls.",
        OBS + ":1865-1869",
    ),
    "requests": ("sglang:num_requests_total", "Number of requests processed.", OBS + ":1940-1944"),
    "aborted": ("sglang:num_aborted_requests_total", "Number of requests aborted.", OBS + ":1959-1963"),
}
HISTOGRAMS = {
    "ttft": ("sglang:time_to_first_token_seconds", "Histogram of time to first token in seconds.", OBS + ":2040-2048"),
    "itl": ("sglang:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", OBS + ":2050-2055"),
    "e2e": (
        "sglang:e2e_request_latency_seconds",
        "Histogram of End-to-end request latency in seconds",
        OBS + ":2067-2072",
    ),
}
# Default buckets, metrics_collector.py:1965-1985 (TTFT), :1987-2011 (e2e), :2013-2038 (ITL);
# --bucket-time-to-first-token etc. replace them (arg_groups/fields/observability.py:104-115).
DEFAULT_BUCKETS = {
    "ttft": (0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400),
    "e2e": (0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 600, 1200, 1800, 2400),
    "itl": (
        0.002, 0.004, 0.006, 0.008, 0.010, 0.015, 0.020, 0.025, 0.030, 0.035, 0.040, 0.060, 0.080, 0.100,
        0.200, 0.400, 0.600, 0.800, 1.000, 2.000, 4.000, 6.000, 8.000,
    ),
}  # fmt: skip
BUCKET_FLAGS = {
    "ttft": "bucket_time_to_first_token",
    "itl": "bucket_inter_token_latency",
    "e2e": "bucket_e2e_request_latency",
}
# observability/http_request_metrics.py:29-39 (_HttpRequestMetrics), set by its middleware (:82-104).
HTTP_REQUESTS = ("sglang:http_requests_total", "Total number of HTTP requests by endpoint and method")
HTTP_RESPONSES = ("sglang:http_responses_total", "Total number of HTTP responses by endpoint and status code")
CONTENT_TYPE_0_0_4 = "text/plain; version=0.0.4; charset=utf-8"  # prometheus_client exposition.py


def _go_float(value):
    """A number as prometheus_client writes it (floatToGoString): 5.0, 0.1, +Inf."""
    value = float(value)
    if value == math.inf:
        return "+Inf"
    if value == -math.inf:
        return "-Inf"
    if math.isnan(value):
        return "NaN"
    return repr(value)


def _escape(value):
    return str(value).replace("\\", r"\\").replace("\n", r"\n").replace('"', r"\"")


def _sample(name, labels, value):
    inner = ",".join(f'{k}="{_escape(v)}"' for k, v in sorted(labels.items()))
    return f"{name}{{{inner}}} {_go_float(value)}" if inner else f"{name} {_go_float(value)}"


class Metrics:
    """The request-side families (counters, histograms, HTTP) as 0.5.23's tokenizer manager records
    them, and the text of /metrics with the scheduler's gauges (Batch.gauges)."""

    def __init__(self, sim):
        self.sim = sim
        args = sim.args
        self.enabled = bool(args.enable_metrics)
        self.lock = threading.Lock()
        # tokenizer_metric_labels (metrics_collector.py:1804-1819): served model name (the model
        # path when not given), engine type "unified" without PD disaggregation
        # (disaggregation/utils.py:156-161); "priority" with --enable-priority-scheduling.
        self.labels = {"model_name": sim.model_id, "engine_type": "unified"}
        if getattr(args, "enable_priority_scheduling", False):
            self.labels["priority"] = ""
        # SchedulerMetricsCollector.init_new (metrics_collector.py:1382-1392): plus the ranks of
        # the stats-logging scheduler (TP 0, PP 0, EP 0).
        self.scheduler_labels = dict(self.labels, tp_rank="0", pp_rank="0", moe_ep_rank="0")
        self.buckets = {}
        for key, flag in BUCKET_FLAGS.items():
            given = getattr(args, flag, None)
            self.buckets[key] = tuple(float(b) for b in given) if given else DEFAULT_BUCKETS[key]
        self.counters = {}  # (key, label items) -> value
        self.histograms = {}  # (key, label items) -> [bucket counts, sum, count]
        self.http = {}  # (name, label items) -> value

    def _inc(self, key, labels, by=1.0):
        k = (key, tuple(sorted(labels.items())))
        self.counters[k] = self.counters.get(k, 0.0) + by

    def _observe(self, key, labels, value, times=1):
        k = (key, tuple(sorted(labels.items())))
        h = self.histograms.setdefault(k, [[0] * len(self.buckets[key]), 0.0, 0])
        for i, bound in enumerate(self.buckets[key]):
            if value <= bound:
                h[0][i] += times
                break
        h[1] += value * times
        h[2] += times

    def _streaming(self, gen):
        return dict(self.labels, is_streaming="true" if gen.stream else "false")

    def first_token(self, gen, ttft):
        # TokenizerManager.collect_metrics (managers/tokenizer_manager.py:3235-3247): on the first output.
        with self.lock:
            self._observe("ttft", self._streaming(gen), ttft)

    def tokens(self, interval, k):
        # observe_inter_token_latency (metrics_collector.py:2158-2183): k tokens of interval/k each.
        with self.lock:
            self._observe("itl", self.labels, interval / k, times=k)

    def finished(self, gen, e2e):
        # observe_one_finished_request (metrics_collector.py:2096-2142), on every finished request,
        # aborted ones included (tokenizer_manager.py:3262-3297).
        spec = gen.spec_meta()
        if spec:
            self.sim.last_accept_length = spec["spec_accept_length"]
        self.sim.last_throughput = gen.completion_tokens / e2e if e2e > 0 else None
        with self.lock:
            labels = self._streaming(gen)
            self._inc("prompt", labels, gen.prompt_tokens)
            self._inc("generation", labels, gen.completion_tokens)
            self._inc("requests", labels)
            if spec and gen.verify_ct > 0:
                self._inc("verify", self.labels, gen.verify_ct)
            self._observe("e2e", labels, e2e)

    def client_abort(self):
        # TokenizerManager.abort_request (tokenizer_manager.py:2241-2265): a client that went away.
        with self.lock:
            self._inc("aborted", self.labels)

    def http_response(self, endpoint, method, status):
        # The middleware counts every request and response when metrics are on (http_request_metrics.py:82-104).
        if not self.enabled:
            return
        with self.lock:
            for name, labels in (
                (HTTP_REQUESTS[0], {"endpoint": endpoint, "method": method}),
                (HTTP_RESPONSES[0], {"endpoint": endpoint, "method": method, "status_code": str(status)}),
            ):
                k = (name, tuple(sorted(labels.items())))
                self.http[k] = self.http.get(k, 0.0) + 1

    def text(self):
        families = []
        gauges = self.sim.batch.gauges
        if gauges is not None:
            for name, doc, _where in SCHEDULER_GAUGES:
                families.append((name, "gauge", doc, [_sample(name, self.scheduler_labels, gauges[name[7:]])]))
        with self.lock:
            for key, (name, doc, _where) in COUNTERS.items():
                rows = [_sample(name, dict(lk), v) for (k, lk), v in sorted(self.counters.items()) if k == key]
                if rows:
                    families.append((name, "counter", doc, rows))
            for key, (name, doc, _where) in HISTOGRAMS.items():
                rows = []
                for (k, lk), (counts, total, count) in sorted(self.histograms.items()):
                    if k != key:
                        continue
                    labels = dict(lk)
                    rows.append(_sample(name + "_sum", labels, total))
                    running = 0
                    for i, bound in enumerate(self.buckets[key]):
                        running += counts[i]
                        rows.append(_sample(name + "_bucket", dict(labels, le=_go_float(bound)), running))
                    rows.append(_sample(name + "_bucket", dict(labels, le="+Inf"), count))
                    rows.append(_sample(name + "_count", labels, count))
                if rows:
                    families.append((name, "histogram", doc, rows))
            for name, doc in (HTTP_REQUESTS, HTTP_RESPONSES):
                rows = [_sample(name, dict(lk), v) for (n, lk), v in sorted(self.http.items()) if n == name]
                if rows:
                    families.append((name, "counter", doc, rows))
        out = []
        for name, typ, doc, rows in sorted(families):
            out += [f"# HELP {name} {doc}", f"# TYPE {name} {typ}"] + rows
        return ("\n".join(out) + "\n").encode() if out else b""


# --------------------------------------------------------------------------- HTTP


def _openai_error(message, status=400, err_type="BadRequest"):
    return {"object": "error", "message": message, "type": err_type, "param": None, "code": status}


# The field report's HTTP 400: the DDTree draft got the target's 5120-wide hidden state where
# its DFlash fc expects 5 captured layers (25600). The exception is 0.5.23's own check
# (sglang/srt/models/dflash.py:834-840), on the path a DFlash-family worker takes to it.
CHAT_400_MESSAGE = (
    "\n".join(
        [
            "Traceback (most recent call last):",
            f'  File "{SITE}/srt/managers/scheduler.py", line 4870, in run_batch',
            "    batch_result = self.model_worker.forward_batch_generation(",
            f'  File "{SITE}/srt/speculative/dflash_worker_v2.py", line 2408, in forward_batch_generation',
            "    self._append_target_hidden_to_draft_kv_by_loc(",
            f'  File "{SITE}/srt/speculative/dflash_worker_v2.py", line 1929, '
            "in _append_target_hidden_to_draft_kv_by_loc",
            "    ctx_hidden = self.draft_model.project_target_hidden(target_hidden)",
            f'  File "{SITE}/srt/models/dflash.py", line 834, in project_target_hidden',
            "    raise ValueError(",
            "ValueError: DFLASH target_hidden feature dim mismatch. Expected shape [N, 25600] "
            "(num_context_features=5, hidden_size=5120), but got shape=(7, 5120). This usually means the target "
            "model is capturing a different number of layer features than the draft checkpoint/config expects.",
        ]
    )
    + "\n"
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
        path = self.path.split("?", 1)[0]
        # The middleware labels a response with its route's path, or the raw path when no route matches
        # (http_request_metrics.py:109-117).
        self.sim.metrics.http_response(path, self.command, status)
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
        if self.sim.metrics.enabled:
            routes[("GET", "/metrics")] = self.metrics
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
            if method == "POST" and not self.sim.stopping.is_set():
                self.sim.metrics.client_abort()  # a client that left mid-generation: SGLang aborts it

    def metrics(self):
        # Only with --enable-metrics (entrypoints/http_server.py:314-317 mounts it); without, /metrics
        # is an unknown path: 404 {"detail": "Not Found"}.
        self._send(200, self.sim.metrics.text(), ctype=CONTENT_TYPE_0_0_4)

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
        probe = Generation(self.sim, "health", 1, 0)
        probe.health = True
        probe.text()  # one token, at the mode's pace
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
            sys.stderr.write(CHAT_400_MESSAGE)
            sys.stderr.flush()
            # The field report's 400 carried the exception's traceback as the message.
            self._send(400, _openai_error(CHAT_400_MESSAGE))
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

    def _abort_response(self):
        # A non-streamed request the scheduler aborted with a status: the HTTPException of
        # tokenizer_manager.py:1916-1921 as the OpenAI layer and the server answer it
        # (entrypoints/openai/serving_base.py:119-122, entrypoints/http_server.py:625-631).
        return self._send(503, _openai_error(RETRACT_ABORT_MESSAGE, 503, "503"))

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
        stream = bool(req.get("stream"))
        gen = Generation(
            self.sim, prompt, int(max_tokens), float(req.get("temperature", 1.0) or 0), chat=chat, stream=stream
        )
        rid = gen.rid
        created = int(time.time())
        obj = "chat.completion" if chat else "text_completion"

        def usage():
            return {
                "prompt_tokens": gen.prompt_tokens,
                "total_tokens": gen.prompt_tokens + gen.completion_tokens,
                "completion_tokens": gen.completion_tokens,
                "prompt_tokens_details": None,
                "reasoning_tokens": 0,
            }

        if not stream:
            text = gen.text()
            if gen.finish == "abort":
                return self._abort_response()
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
                {"id": rid, "object": obj, "created": created, "model": model, "choices": [choice], "usage": usage()},
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
        if gen.finish == "abort":
            # An abort with a status mid-stream: an error chunk instead of the finish chunk, then the
            # usage chunk and [DONE] as usual (serving_completions.py:356-371, :476-504;
            # serving_chat.py:2562-2580; the chunk's shape: serving_base.py:223-237).
            error = _openai_error(RETRACT_ABORT_MESSAGE, 503, "SERVICE_UNAVAILABLE")
            self._sse({"error": error})
        else:
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
                {"id": rid, "object": chunk_obj, "created": created, "model": model, "choices": [], "usage": usage()}
            )
        self._sse_end()

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
        stream = bool(req.get("stream"))
        gen = Generation(
            self.sim,
            str(text or ""),
            int(params.get("max_new_tokens", 128)),
            float(params.get("temperature", 1.0)),
            stream=stream,
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
                if gen.finish == "abort":
                    # FINISH_ABORT.to_json (managers/schedule_batch.py:332-346), status 503 (:3492-3502)
                    fr = {"type": "abort", "message": RETRACT_ABORT_MESSAGE, "status_code": 503, "err_type": None}
                else:
                    fr = {"type": gen.finish}
                    fr.update({"length": n} if gen.finish == "length" else {"matched": 151645})
                m["finish_reason"] = fr
                m.update(gen.spec_meta())
            return m

        if not stream:
            out = gen.text()
            if gen.finish == "abort":
                return self._abort_response()
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
        # An abort ends the stream with the abort's finish_reason (tokenizer_manager.py:1922-1923 hands
        # the output on; http_server.py:950-956 writes it).
        self._sse({"text": sofar, "output_ids": list(range(1000, 1000 + n)), "meta_info": meta(True, n)})
        self._sse_end()


# --------------------------------------------------------------------------- startup


def fail_start(lines, sim):
    """A scheduler process died before the HTTP server bound: log as SGLang does, then die like it."""
    # managers/scheduler.py:6372 logs the traceback; the parent's SIGQUIT handler logs
    # entrypoints/engine.py:1977-1979 and kills the process tree (utils kill_process_tree).
    log("Scheduler hit an exception: " + "\n".join(lines), prefix=sim.rank_prefix)
    log("Received sigquit from a child process. It usually means the child failed.")
    sys.stdout.flush()
    sys.stderr.flush()
    # SGLang's parent kills its own process tree with SIGKILL (systemd: status=9/KILL).
    os.kill(os.getpid(), signal.SIGKILL)


# Failures while the scheduler starts, as 0.5.23 raises them. The tracebacks are cut to the
# frames that name the failure: each frame's file:line is the wheel's, intermediate frames
# (Scheduler.__init__ down to the model runner) are left out.
SCHEDULER_FRAME = (
    "srt/managers/scheduler.py",
    6362,
    "run_scheduler_process",
    "scheduler = Scheduler(server_args, port_args)",
)
# torch's allocator message (c10/cuda/CUDACachingAllocator.cpp, TORCH_CHECK_WITH(OutOfMemoryError, ...)).
TORCH_OOM = (
    "CUDA out of memory. Tried to allocate {need}. GPU 0 has a total capacity of 47.41 GiB of which {free} is "
    "free. Including non-PyTorch memory, this process has {used} memory in use. Of the allocated memory 44.90 GiB "
    "is allocated by PyTorch, and 512.00 MiB is reserved by PyTorch but unallocated."
)
# model_executor/runner_backend_utils/__init__.py:14-21, appended by
# model_executor/runner/decode_cuda_graph_runner.py:602-604 ("Capture cuda graph failed: {e}\n{MSG}").
CUDA_GRAPH_CAPTURE_FAILED_MSG = (
    "Possible solutions:\n"
    "1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)\n"
    "2. set --cuda-graph-max-bs-decode to a smaller value (e.g., 16)\n"
    "3. disable decode CUDA graph by --cuda-graph-backend-decode=disabled. "
    "(Not recommended. Huge performance loss)\n"
    "Open an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose \n"
)


def oom_start_lines():
    # model_executor/pool_configurator.py:96-99: the KV pool got no tokens. calculate_pool_sizes
    # (:647) builds the config without mem_fraction_static, so no "Current value" is appended.
    return _frames_only(
        [
            SCHEDULER_FRAME,
            (
                "srt/model_executor/pool_configurator.py",
                647,
                "calculate_pool_sizes",
                "return MemoryPoolConfig(max_total_num_tokens=max_total_num_tokens)",
            ),
            ("srt/model_executor/pool_configurator.py", 99, "__post_init__", "raise RuntimeError(msg)"),
        ]
    ) + ["RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."]


def crash_before_bind_lines(args):
    if args.disable_cuda_graph:
        # No graphs to capture: the memory runs out later, as a plain torch OOM.
        return _frames_only([SCHEDULER_FRAME]) + [
            "torch.OutOfMemoryError: " + TORCH_OOM.format(need="2.50 GiB", free="1.19 GiB", used="46.21 GiB")
        ]
    return (
        _frames_only(
            [
                SCHEDULER_FRAME,
                ("srt/model_executor/runner/decode_cuda_graph_runner.py", 602, "__init__", "raise Exception("),
            ]
        )
        + (
            "Exception: Capture cuda graph failed: "
            + TORCH_OOM.format(need="1.25 GiB", free="1.02 GiB", used="46.38 GiB")
            + "\n"
            + CUDA_GRAPH_CAPTURE_FAILED_MSG
        ).splitlines()
    )


def _frames_only(frames):
    """Frames of a scheduler process's traceback (it is not started with -m: no runpy frames)."""
    out = ["Traceback (most recent call last):"]
    for f, line, fn, code in frames:
        out.append(f'  File "{SITE}/{f}", line {line}, in {fn}')
        out.append("    " + code)
    return out


def server_args_line(args, parsed):
    """entrypoints/engine.py:1185: logger.info(f"server_args={...}") of ServerArgs.resolved_dict()
    (engine.py:173-174), which redacts only watermark secrets: api_key is printed as given."""
    values = {}
    for name in vars(parsed):
        values[name] = getattr(args, name, None)
    return f"server_args={values}"


def main(argv=None):
    try:
        behaviour_file = read_behaviour_file()
        table = load_cli_table(simulated_build(behaviour_file))
    except SimSetupError as e:
        sys.stderr.write(f"sglang-sim: {e}\n")
        return 70
    # 0.5.23's launch_server warns that python -m sglang.launch_server is the old entry point
    # (sglang/launch_server.py:71-78); python prints a warnings.warn as file:line: category: text.
    sys.stderr.write(
        f"{SITE}/launch_server.py:71: UserWarning: 'python -m sglang.launch_server' is still supported, but "
        "'sglang serve' is the recommended entrypoint.\n  Example: sglang serve --model-path <model> [options]\n"
        "  warnings.warn(\n"
    )
    args, parsed = parse_args(argv, table)
    # Options parsed by a function of the release (type null in the table) keep their text; the
    # ones given as plain integers (context_length, chunked_prefill_size, ... use
    # human_readable_int in arg_groups/fields/model.py, schedule.py, exec_.py) are ints in the
    # real ServerArgs and so in /server_info.
    for option in table["options"]:
        value = getattr(args, option["dest"], None)
        if option.get("type") is None and isinstance(value, str) and value.isdigit():
            setattr(args, option["dest"], int(value))
    given = args.speculative_algorithm.upper() if args.speculative_algorithm else None
    refused = resolve(args, table)
    try:
        notes, stopped, adaptive_tiers, adaptive_config = (
            tiers.resolve_adaptive(args, table) if not refused else ([], None, None, None)
        )
        if stopped:
            refused = _frames(RESOLVE_FRAMES + tiers.STEPS_FRAMES) + stopped
    except (OSError, ValueError) as e:  # the tiers file: _load_adaptive_config's open and json.load
        refused = [f"{type(e).__name__}: {e}"]
    except tiers.TierError as e:
        sys.stderr.write(f"sglang-sim: {e}\n")
        return 70
    if refused:
        for line in refused:
            sys.stderr.write(line + "\n")
        return 1
    for line in notes:
        log(line)
    behaviour = load_behaviour(args, given, behaviour_file)
    try:
        behaviour["steps"] = tiers.Steps(
            args,
            behaviour,
            _file_entry(behaviour_file, "NONE", args),
            adaptive_tiers,
            adaptive_config,
            _rate_table,
            rate_at,
        )
    except tiers.TierError as e:
        sys.stderr.write(f"sglang-sim: {e}\n")
        return 70
    sim = Sim(args, behaviour, version=table.get("sglang_version"))
    Handler.sim = sim
    scale = behaviour["time_scale"]
    log(server_args_line(args, parsed))
    b = behaviour
    log(
        f"sglang-sim: build={table['build']} version={sim.version} mode={b['mode']} tok_s={b['tok_s']:.4g} "
        f"accept_length={b['accept_length']:.3g} ttft_s={b['ttft_s']:.4g} load_seconds={b['load_seconds']:.4g} "
        f"bind_delay_s={b['bind_delay_s']:.4g}"
        + (" rates=" + ",".join(f"{n}:{r:.4g}" for n, r in b["rates"]) if b["rates"] else "")
        + (" degrade=" + json.dumps(b["degrade"], separators=(",", ":")) if b["degrade"] else "")
        + (" adaptive_steps=" + b["steps"].describe() if b["steps"].adaptive else "")
    )
    # model_executor/model_runner.py:1274
    log("Load weight begin. avail mem=46.82 GB", prefix=sim.rank_prefix)
    time.sleep(behaviour["bind_delay_s"] * scale)

    mode = behaviour["mode"]
    if mode == "oom_start":
        fail_start(oom_start_lines(), sim)
    if mode == "crash_before_bind":
        fail_start(crash_before_bind_lines(args), sim)

    # model_executor/model_runner.py:1372-1379 and mem_cache/memory_pool.py:2087-2091
    log(
        "Load weight end. elapsed=12.41 s, type=Qwen3ForCausalLM, avail mem=21.02 GB, mem usage=25.80 GB.",
        prefix=sim.rank_prefix,
    )
    log(
        "KV Cache is allocated. dtype: torch.bfloat16, #tokens: 65536, K size: 4.00 GB, V size: 4.00 GB",
        prefix=sim.rank_prefix,
    )
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    ThreadingHTTPServer.address_family = family
    ThreadingHTTPServer.daemon_threads = True
    ThreadingHTTPServer.allow_reuse_address = True
    # 0.5.23 runs uvicorn with backlog=2048 (entrypoints/http_server.py:2768); socketserver's 5 would drop the
    # SYNs of a burst of clients (a closed-loop benchmark starting 64 streams), costing them 1 s each.
    ThreadingHTTPServer.request_queue_size = 2048
    try:
        server = ThreadingHTTPServer((args.host, args.port), Handler)
    except OSError as e:
        # CPython Lib/asyncio/base_events.py:1525-1527 (uvicorn's create_server), logged by uvicorn.
        where = f"({args.host!r}, {args.port})"
        log(f"ERROR:    [Errno {e.errno}] error while attempting to bind on address {where}: {e.strerror.lower()}")
        return 1

    def on_term(signum, _frame):
        raise KeyboardInterrupt

    # From the moment the port accepts connections a SIGTERM is a clean stop (exit 0), also when
    # it arrives before serve_forever runs (a client that saw the port open may stop us at once).
    signal.signal(signal.SIGTERM, on_term)
    try:
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
