# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""llm_bench beside SGLang's own bench_serving on the same simulated server (docs/bench.md).

At 1, 4 and 16 streams, on one simulator (no speculation, ``tok_s`` 40, ``ttft_s`` 0.08,
48-token answers): the simulator's configured truth, llm_bench's aggregate output tok/s, and
bench_serving's (``python -m sglang.bench_serving --backend sglang-oai --max-concurrency N``, the
pinned 0.5.23 wheel's own code), with the load average before and after each run. Writes
benchmarks/results/bench_accuracy_<date>.json (renamed -quiet or -loaded by the load average it
records for docs/bench.md) and prints the table docs/bench.md quotes.

bench_serving runs in its own venv (never the dev venv), from the wheel's files, offline:

    python3 -m venv .cache/bench-serving-venv
    .cache/bench-serving-venv/bin/pip install aiohttp msgspec numpy orjson requests tqdm \\
        transformers tokenizers pillow pybase64 psutil pyzmq datasets

(what ``sglang/benchmark/serving.py``, its ``datasets`` package and ``srt/utils/network.py``
import; no torch). The wheel's ``sglang/__init__.py`` and ``sglang/srt/__init__.py`` import the
whole runtime (torch, CUDA kernels), so this script loads ``sglang.benchmark.serving`` with those
two package ``__init__`` files skipped (empty packages over the wheel's directories) and one
module replaced: ``sglang.srt.disaggregation.utils``, which imports torch and of which
bench_serving uses one constant (for ``--fake-prefill``, not used here). Everything bench_serving
measures with is its own code. Its tokenizer (for the dataset's prompt lengths and its
"retokenized" counts) is a word-level tokenizer made here with the ``tokenizers`` library and
loaded by ``AutoTokenizer`` from a local directory; the dataset is ``--dataset-name custom`` over
a local JSONL file of this script's prompts, with ``--sharegpt-output-len`` fixing the answer
length. Nothing is downloaded (HF_HUB_OFFLINE=1).

Run from the repository root with the dev venv:
``.venv/bin/python benchmarks/bench_accuracy.py [--bench-serving-python PATH] [--levels 1 4 16]``
(about 2 minutes).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import types
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WHEEL_GLOB = "sglang-0.5.23-*.whl"
# What bench_serving needs from the wheel, nothing more (see the module docstring).
WHEEL_PREFIXES = ("sglang/benchmark/", "sglang/bench_serving.py", "sglang/srt/utils/network.py")

TOK_S, TTFT_S, MAX_TOKENS = 40.0, 0.08, 48  # every simulator passage has 61+ words: 48 tokens each
WARMUP_S, DURATION_S = 2.0, 10.0
ROUNDS = 8  # bench_serving requests per stream: 8 x 1.255 s, about llm_bench's 10 s window


def truth(n):
    """The simulator's configured rate at n streams (tests/sglang_sim/README.md, "Timing"): each
    stream gets its first token after ttft_s, then one every 1/tok_s, whatever else runs."""
    return n * MAX_TOKENS / (TTFT_S + (MAX_TOKENS - 1) / TOK_S)


# ------------------------------------------------------------------ bench_serving, in its own venv


def _as_bench_serving(src, work, argv):
    """Runs in the bench_serving venv: load the wheel's bench_serving and run its CLI."""
    src = Path(src)

    def package(name, path):
        module = types.ModuleType(name)
        module.__path__ = [str(path)]
        sys.modules[name] = module

    package("sglang", src / "sglang")
    package("sglang.srt", src / "sglang" / "srt")
    package("sglang.srt.utils", src / "sglang" / "srt" / "utils")
    package("sglang.srt.disaggregation", src / "sglang" / "srt" / "disaggregation")
    stub = types.ModuleType("sglang.srt.disaggregation.utils")
    stub.FAKE_BOOTSTRAP_HOST = "2.2.2.2"  # sglang/srt/disaggregation/utils.py:53 (0.5.23)
    sys.modules[stub.__name__] = stub
    tokenizer_dir = Path(work) / "tokenizer"
    if not (tokenizer_dir / "tokenizer.json").exists():
        from tokenizers import Tokenizer, models, pre_tokenizers
        from transformers import PreTrainedTokenizerFast

        tok = Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
        tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
        PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]").save_pretrained(str(tokenizer_dir))
    from sglang.benchmark.serving import cli_main

    sys.argv = ["bench_serving", *argv, "--tokenizer", str(tokenizer_dir)]
    cli_main()


def unpack_wheel(dest):
    wheel = next((REPO / ".cache" / "sglang-wheel").glob(WHEEL_GLOB))
    with zipfile.ZipFile(wheel) as zf:
        for name in zf.namelist():
            if name.startswith(WHEEL_PREFIXES):
                zf.extract(name, dest)
    return wheel.name


# ------------------------------------------------------------------ the comparison


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench-serving-python", default=str(REPO / ".cache" / "bench-serving-venv" / "bin" / "python"))
    ap.add_argument("--levels", type=int, nargs="+", default=[1, 4, 16])
    ap.add_argument("--as-bench-serving", nargs=2, metavar=("SRC", "WORK"), help=argparse.SUPPRESS)
    args, rest = ap.parse_known_args()
    if args.as_bench_serving:
        _as_bench_serving(*args.as_bench_serving, [a for a in rest if a != "--"])
        return
    if not Path(args.bench_serving_python).exists():
        raise SystemExit(f"no bench_serving venv at {args.bench_serving_python}: see this script's docstring")

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import probe_bench  # puts the collection on sys.path

    Sim = probe_bench.Sim
    from ansible_collections.ddtree.sglang.plugins.module_utils._bench import DEFAULT_PROMPTS, Bench

    work = Path(tempfile.mkdtemp(prefix="bench-accuracy-"))
    src = work / "src"
    wheel = unpack_wheel(src)
    dataset = work / "prompts.jsonl"
    out = {
        "simulator": {"tok_s": TOK_S, "ttft_s": TTFT_S, "accept_length": 1, "speculative_algorithm": None},
        "max_tokens": MAX_TOKENS,
        "llm_bench": {"warmup": WARMUP_S, "duration": DURATION_S},
        "bench_serving": {"wheel": wheel, "backend": "sglang-oai", "requests_per_stream": ROUNDS},
        "cpus": os.cpu_count(),
        "levels": [],
    }
    started = time.monotonic()
    with Sim("healthy", None, tok_s=TOK_S, ttft_s=TTFT_S, accept_length=1) as sim:
        for n in args.levels:
            row = {"concurrency": n, "truth_tok_s": round(truth(n), 2)}
            row["load_before_llm_bench"] = os.getloadavg()
            r = Bench(sim.base_url, concurrency=n, duration=DURATION_S, warmup=WARMUP_S, max_tokens=MAX_TOKENS).run()
            level = r["levels"][0]
            row["llm_bench"] = {
                k: level[k]
                for k in (
                    "output_tokens_per_second",
                    "requests_per_second",
                    "completed",
                    "ttft_s",
                    "itl_s",
                    "decode_tokens_per_second",
                    "token_count_source",
                    "elapsed_s",
                    "client_cpu_s",
                )
            }
            row["load_before_bench_serving"] = os.getloadavg()
            lines = []
            for i in range(n * ROUNDS):
                prompt = DEFAULT_PROMPTS[i % len(DEFAULT_PROMPTS)]["prompt"]
                # custom dataset rows: a user turn and an assistant turn (the answer's text is unused
                # with --sharegpt-output-len)
                lines.append(json.dumps({"conversations": [{"content": prompt}, {"content": "an answer"}]}))
            dataset.write_text("\n".join(lines) + "\n")
            result_file = work / f"bench_serving_{n}.jsonl"
            env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
            t0 = time.monotonic()
            proc = subprocess.run(
                [
                    args.bench_serving_python,
                    __file__,
                    "--as-bench-serving",
                    str(src),
                    str(work),
                    "--",
                    "--backend",
                    "sglang-oai",
                    "--base-url",
                    sim.base_url,
                    "--model",
                    "/models/Qwen3.6-27B",
                    "--dataset-name",
                    "custom",
                    "--dataset-path",
                    str(dataset),
                    "--num-prompts",
                    str(n * ROUNDS),
                    "--sharegpt-output-len",
                    str(MAX_TOKENS),
                    "--max-concurrency",
                    str(n),
                    "--request-rate",
                    "inf",
                    "--disable-tqdm",
                    "--output-file",
                    str(result_file),
                ],
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
            if proc.returncode != 0 or not result_file.exists():
                raise SystemExit(
                    f"bench_serving failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
                )
            bs = json.loads(result_file.read_text().splitlines()[-1])
            row["bench_serving"] = {
                k: bs.get(k)
                for k in (
                    "output_throughput",
                    "request_throughput",
                    "completed",
                    "duration",
                    "total_output_tokens",
                    "median_ttft_ms",
                    "p99_ttft_ms",
                    "median_itl_ms",
                    "p99_itl_ms",
                )
            }
            row["bench_serving"]["wall_s"] = round(time.monotonic() - t0, 2)
            row["load_after"] = os.getloadavg()
            ours, theirs = level["output_tokens_per_second"], bs["output_throughput"]
            row["llm_bench_vs_truth"] = round(ours / truth(n) - 1, 4)
            row["llm_bench_vs_bench_serving"] = round(ours / theirs - 1, 4)
            row["bench_serving_vs_truth"] = round(theirs / truth(n) - 1, 4)
            out["levels"].append(row)
            print(json.dumps(row), flush=True)
    out["seconds"] = round(time.monotonic() - started, 1)
    stamp = time.strftime("%Y-%m-%d")
    path = REPO / "benchmarks" / "results" / f"bench_accuracy_{stamp}.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"\nwritten {path.relative_to(REPO)}\n")
    print(
        "| streams | truth tok/s | llm_bench tok/s | bench_serving tok/s | llm_bench vs truth | "
        "llm_bench vs bench_serving | bench_serving vs truth | load avg (1 min) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for row in out["levels"]:
        print(
            f"| {row['concurrency']} | {row['truth_tok_s']:.1f} | {row['llm_bench']['output_tokens_per_second']:.1f} | "
            f"{row['bench_serving']['output_throughput']:.1f} | {row['llm_bench_vs_truth']:+.2%} | "
            f"{row['llm_bench_vs_bench_serving']:+.2%} | {row['bench_serving_vs_truth']:+.2%} | "
            f"{row['load_before_llm_bench'][0]:.2f} / {row['load_after'][0]:.2f} |"
        )


if __name__ == "__main__":
    main()
