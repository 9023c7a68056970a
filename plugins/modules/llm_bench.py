#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

DOCUMENTATION = r"""
---
module: llm_bench
short_description: Put closed-loop concurrent load on an LLM server and measure throughput and latency per level
version_added: 0.1.0
description:
  - Measures an SGLang server (or another OpenAI-compatible server such as vLLM) under load, the way SGLang's
    C(bench_serving --max-concurrency), vLLM's C(bench serve) and guidellm's concurrent profile do.
  - "Closed loop: at each level of O(concurrency), N streams each send their next request as soon as the last
    one ends, from O(prompts), for O(warmup) seconds and then O(duration) seconds. One call sweeps every level
    in the order given."
  - Requests are streamed with C(stream_options.include_usage), so time to first token and inter-token latency
    are measured per chunk as it arrives and output tokens are the server's own C(usage.completion_tokens).
  - A request is counted when it starts inside the window (after the warmup, before the window ends). Counted
    requests run to their end; meanwhile the other streams keep the load at N with requests that are not
    counted, which are cut once the last counted request has ended. Each stream's rate is its counted tokens
    over the time from the start of its first counted request to the end of its last; the aggregate is the sum
    over the streams. See C(docs/bench.md) in the collection.
  - The whole call is bounded by O(deadline) on the wall clock. When it passes, requests in flight are cut,
    levels not yet run are listed as skipped, and the module fails saying so.
  - With O(greedy_tokens), after the levels it asks each prompt once more, at one stream and greedy, for its
    first O(greedy_tokens) tokens, and returns the texts in RV(greedy) (the output-equivalence check of
    C(ddtree.sglang.ddtree_deploy) compares them between two servers). One call then does what a sweep and a
    loop of M(ddtree.sglang.llm_probe) calls did, with one module start instead of one per prompt.
  - The same HTTP and stream-reading code as M(ddtree.sglang.llm_probe), and the same options where they mean
    the same.
author:
  - ddtree.sglang developers (@ddtree)
requirements:
  - requests
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: The benchmark only sends completions and changes nothing, so it runs in check mode too.
  diff_mode:
    support: none
  platform:
    platforms: posix
options:
  base_url:
    description:
      - Base URL of the server, without a path, for example C(http://127.0.0.1:30000).
    type: str
    required: true
  api:
    description:
      - V(completions) is C(/v1/completions), V(chat) is C(/v1/chat/completions).
    type: str
    choices: [completions, chat]
    default: completions
  model:
    description:
      - Model name to send. Default is the first id that C(/v1/models) lists.
    type: str
  concurrency:
    description:
      - The number of streams, or a list of them (for example V([1, 16])); each is a level, run in the order
        given. At most 512 (one thread per stream).
      - Pick V(1) and one level at or near the server's C(max_running_requests) (its production batch); see
        C(docs/bench.md).
      - V([]) runs no level; it is only accepted with O(greedy_tokens), for the greedy answers alone.
      - "The list may be written as text, as the ad-hoc form does: C(-a 'concurrency=[1,16]') or
        C(concurrency=1,16)."
    type: raw
    default: [1]
  duration:
    description:
      - Seconds of each level's measurement window, after its warmup.
    type: float
    default: 10.0
  warmup:
    description:
      - Seconds of load at each level before the window; requests that start in it are not counted.
    type: float
    default: 2.0
  prompts:
    description:
      - The prompt set, each entry with C(prompt) (a string) or C(messages) (a list, chat only), and
        optionally C(max_tokens) and C(api) (C(completions) or C(chat), for this prompt instead of O(api);
        one sweep can load both paths). Each stream walks the list from its own offset.
      - An entry may carry its own C(temperature) and C(top_p) (a trace of production requests).
      - C(id) and C(why) may label an entry (the gate prompt set of C(ddtree.sglang.ddtree_deploy)); they are
        not sent.
      - Default is eight short built-in prompts of different topics.
    type: list
    elements: dict
  repeats:
    description:
      - Measurements per level without running it again. The window is split into this many equal parts, and
        each part's requests (by their start) give a rate of their own in RV(levels[].rates), whose spread says
        how much the figure moves from one measurement to the next. 1 gives no RV(levels[].rates).
    type: int
    default: 1
  max_tokens:
    description:
      - Tokens to ask for per request, unless a prompt sets its own.
    type: int
    default: 128
  temperature:
    description:
      - Sampling temperature. 0 (greedy) makes every run ask for the same work. A prompt's own C(temperature)
        wins (a trace of production requests carries its own).
    type: float
    default: 0.0
  top_p:
    description:
      - Nucleus sampling, above 0 and at most 1; not sent when unset (the server's default). A prompt's own
        C(top_p) wins.
    type: float
  slo:
    description:
      - The service level objective each request is judged against, in seconds; either key may be left out.
      - C(ttft_s), the time to first token; C(itl_s), the request's mean time per output token after the first
        ((last token - first token) / (tokens - 1), SGLang's request TPOT).
      - "A request meets the SLO when it completed within every bound given. Each level then reports
        RV(levels[].slo_attainment) and its goodput, RV(levels[].goodput_requests_per_second) and
        RV(levels[].goodput_tokens_per_second), the rates counting only the requests that met it. Without it
        every completed request counts (goodput is the throughput). See C(docs/bench.md)."
    type: dict
  greedy_tokens:
    description:
      - Tokens of each prompt's greedy answer (temperature 0, at one stream, one prompt at a time, after the
        levels); V(0) asks for none. Each answer is one M(ddtree.sglang.llm_probe) run with its speed checks off
        (a slow answer is not a failed one); an answer that fails (an HTTP error, no token, a degenerate text)
        fails the module, as a level without a completed request does.
    type: int
    default: 0
  greedy_prompts:
    description:
      - The prompts whose greedy answers O(greedy_tokens) asks for, in the form of O(prompts); default is
        O(prompts). A trace of production requests can load the levels while a small fixed set is compared
        (C(ddtree.sglang.ddtree_deploy)'s output-equivalence check). Their own sampling settings are not sent;
        the answers are greedy.
    type: list
    elements: dict
  max_error_share:
    description:
      - The largest share of a level's counted requests that may fail (an HTTP error such as 429 or 503, a reset,
        a timeout, an error event, a stream cut off) for the level still to count as a measurement; above it
        the level fails the module, naming each kind of error, how many, and the first of each. V(0.05) is 5 %.
      - "A server that refuses (429 Too Many Requests, 503 Service Unavailable) is given the pause it asks for:
        the stream waits its C(Retry-After) (seconds or an HTTP date) before its next request, else 0.25 s
        doubling to 8 s while refusals follow each other (RV(levels[].backoff))."
    type: float
    default: 0.05
  timeout:
    description:
      - Seconds one request may take, on the wall clock. It also bounds how long a level's last counted request
        may run past the window.
    type: float
    default: 30.0
  deadline:
    description:
      - Seconds the whole call may take, on the wall clock. When it passes, requests in flight are cut and the
        module fails, saying which levels were cut or not run.
      - Default is the number of levels times (O(warmup) + O(duration) + O(timeout)), plus, with
        O(greedy_tokens), the number of prompts times O(timeout), plus 5 s.
    type: float
  api_key:
    description:
      - "The server's API key (SGLang's C(--api-key)), sent as C(Authorization: Bearer)."
    type: str
  validate_certs:
    description:
      - Verify the server's TLS certificate for C(https://) URLs.
    type: bool
    default: true
  headers:
    description:
      - Extra HTTP headers to send with every request. Their values are treated as secrets (C(no_log)).
    type: dict
notes:
  - A level where no request completed fails the module, with the first error messages. A level where more
    than O(max_error_share) of the counted requests failed fails too, naming the kinds of error (for example
    C(HTTP 429 x 1200, HTTP 503 x 471)) and the first of each; RV(levels[].errors) counts them by kind. A
    level where a stream started no request inside the window (one request outlasted it) fails too, saying how
    long a request takes (RV(levels[].request_estimate_s)) and what to raise.
  - The module's own CPU time is returned (RV(client_cpu_s)); at 16 streams it is a few percent of one core, so
    the client does not limit what it measures (C(docs/bench.md) has the figures).
seealso:
  - module: ddtree.sglang.llm_probe
"""

EXAMPLES = r"""
- name: The same prompts on two servers, greedy, to compare their answers
  ddtree.sglang.llm_bench:
    base_url: "{{ item }}"
    concurrency: []
    greedy_tokens: 32
  loop: [http://10.0.0.5:30000, http://10.0.0.6:30000]
  register: answers

- name: Throughput at one stream and at the production batch
  ddtree.sglang.llm_bench:
    base_url: http://127.0.0.1:30000
    concurrency: [1, 16, 64]
    duration: 8
  register: bench

- name: Show the aggregate rate per level
  ansible.builtin.debug:
    msg: "{{ bench.levels | map(attribute='output_tokens_per_second') | list }}"

- name: Goodput under an SLO, on a trace of production requests with their own sampling
  ddtree.sglang.llm_bench:
    base_url: http://127.0.0.1:30000
    concurrency: [1, 16]
    slo: {ttft_s: 1.0, itl_s: 0.05}
    prompts: "{{ lookup('ansible.builtin.file', 'trace.jsonl').splitlines() | map('from_json') | list }}"
  register: goodput

- name: Chat API, own prompts, with the API key
  ddtree.sglang.llm_bench:
    base_url: "http://127.0.0.1:{{ sglang_port }}"
    api: chat
    api_key: "{{ sglang_api_key }}"
    concurrency: 4
    prompts:
      - messages: [{role: user, content: "Summarize the plot of Hamlet."}]
      - messages: [{role: user, content: "Write a haiku about rain."}]
        max_tokens: 32
"""

RETURN = r"""
msg:
  description: Each level's aggregate rate, request rate and median TTFT; on failure, the cause.
  returned: always
  type: str
  sample: "concurrency 1: 44.3 tok/s, 1.38 req/s, TTFT p50 0.102 s, goodput 44.3 tok/s (100 % of requests met ..."
levels:
  description: One entry per level, in the order of O(concurrency).
  returned: always
  type: list
  elements: dict
  contains:
    concurrency:
      description: The number of streams.
      type: int
      sample: 16
    output_tokens_per_second:
      description: Aggregate output tokens per second over all streams (none when no request completed, or when
        the deadline cut the level, as for RV(levels[].requests_per_second), the goodput rates and
        RV(levels[].rates); its streams were cut mid-request, so no rate was measured).
      type: float
      sample: 707.76
    requests_per_second:
      description: Completed requests per second over all streams.
      type: float
      sample: 22.1
    completed:
      description: Counted requests that completed.
      type: int
      sample: 112
    output_tokens:
      description: Output tokens of the completed counted requests.
      type: int
      sample: 3584
    errors:
      description: Counted requests that failed, C(count), the first distinct C(messages) (at most 5), and
        C(kinds), per kind of error (C(HTTP 429), C(HTTP 503), C(reset), C(timeout), C(error event),
        C(cut off), ...) its C(count) and the C(first) message.
      type: dict
      sample: {count: 2, messages: ["HTTP 429 ..."], kinds: {"HTTP 429": {count: 2, first: "HTTP 429 ..."}}}
    error_share:
      description: The share of the counted requests that ended (cut ones aside) that failed; none when none
        ended. Above O(max_error_share) the level fails.
      type: float
      sample: 0.0
    backoff:
      description: How often the streams waited before their next request because the server refused one
        (429 or 503) and asked for a pause, C(waits), and the C(seconds) they waited in all.
      type: dict
      sample: {waits: 0, seconds: 0.0}
    cut:
      description: Counted requests cut by the deadline (neither completed nor errors).
      type: int
      sample: 0
    streams_measured:
      description: Streams that started at least one request inside the window. Fewer than O(concurrency) fails
        the module (a request outlasted the window, so the aggregate would miss that stream's share).
      type: int
      sample: 16
    ttft_s:
      description: Time to first token in seconds, from sending the request, C(p50), C(p90), C(p99).
      type: dict
      sample: {p50: 0.1021, p90: 0.1048, p99: 0.107}
    itl_s:
      description: Inter-token latency in seconds, the gap between successive content chunks, C(p50), C(p90),
        C(p99). A chunk may carry several tokens (speculative decoding, stream intervals).
      type: dict
      sample: {p50: 0.02, p90: 0.0201, p99: 0.0205}
    decode_tokens_per_second:
      description: Per-stream decode rate, C(p50) over requests, each (tokens - 1) over the time from its first
        token to its last.
      type: dict
      sample: {p50: 49.98}
    request_itl_s:
      description: Each request's mean time per output token after the first (the SLO's C(itl_s)), C(p50),
        C(p90), C(p99) over requests.
      type: dict
      sample: {p50: 0.02, p90: 0.0201, p99: 0.0203}
    slo:
      description: The SLO the level was judged against (empty when none was given).
      type: dict
      sample: {ttft_s: 1.0, itl_s: 0.05}
    slo_attainment:
      description: The share of completed requests that met every bound of O(slo) (1.0 without an SLO).
      type: float
      sample: 0.97
    goodput_requests_per_second:
      description: Requests per second over all streams, counting only those that met O(slo) (DistServe's goodput).
      type: float
      sample: 21.4
    goodput_tokens_per_second:
      description: Output tokens per second over all streams, counting only the requests that met O(slo).
      type: float
      sample: 686.5
    samples:
      description:
        - One entry per counted request (cut ones aside), for a caller that judges them again (the gate of
          C(ddtree.sglang.ddtree_deploy) derives an SLO and bootstraps an interval from them).
        - C(stream), C(prompt) (its index in O(prompts)), C(start_s) and C(end_s) (seconds from the window start),
          C(tokens), C(ttft_s), C(itl_s)
          (the mean time per output token after the first; none for a one-token answer), C(error) (true for a
          failed request, which has 0 tokens), C(id) (the completion's id, SGLang's request id in its logs).
      type: list
      elements: dict
      sample: [{stream: 0, prompt: 0, start_s: 0.0, end_s: 0.361, tokens: 32, ttft_s: 0.051, itl_s: 0.0100, id: 9f2c1e}]
    rates:
      description: With O(repeats) above 1, the aggregate tok/s of each part of the window, in order.
      type: list
      elements: float
      sample: [707.1, 712.4, 701.9]
    token_count_source:
      description: V(usage) when the server sent usage for every completed request; otherwise what was counted
        and that the figure is a lower bound.
      type: str
      sample: usage
    token_count_doubts:
      description: Completed requests whose server count was not believed (above the C(max_tokens) asked for, or
        above 128 tokens per content chunk received), C(count), and the C(first) reason; their chunks were
        counted instead (a lower bound, which RV(levels[].token_count_source) then says).
      type: dict
      sample: {count: 0, first: null}
    window_s:
      description: The measurement window in seconds (O(duration)).
      type: float
      sample: 10.0
    elapsed_s:
      description: Seconds the level took, warmup, window and the last counted requests included.
      type: float
      sample: 12.6
    client_cpu_s:
      description: CPU seconds this process spent during the level (the client's own overhead).
      type: float
      sample: 0.397
    outlasted_window_s:
      description: When no request could be counted because each stream's request from the warmup was still running
        at the window's end, the least time those requests had run (a request takes longer than the window; the
        level fails saying to lengthen O(duration)).
      type: float
      returned: when no request started inside the window
      sample: 8.1
    request_estimate_s:
      description:
        - How long a request of the level takes, from the requests of the warmup cut while still running at the
          window's end - C(seconds) to the last chunk, plus the tokens left of O(max_tokens) at the pace the chunks
          came (the median over those requests).
        - C(tokens_per_chunk) is learned from the run's completed requests with the server's own count (C(known)
          true); without one a chunk is one token and the estimate an upper bound (a speculative server sends
          several). The level's message says "a request takes about 8 s, longer than the 6 s window" and what to
          raise.
      type: dict
      returned: when a request outlasted the window
      sample: {seconds: 8.05, tokens_per_chunk: 2.4, known: true}
    cut_by_deadline:
      description: True when the deadline passed during the level; its aggregate rates are then none.
      type: bool
      returned: when the deadline cut the level
    skipped:
      description: True when the deadline had passed before the level could start.
      type: bool
      returned: when the level was not run
greedy:
  description: With O(greedy_tokens), one entry per prompt, in the order of O(greedy_prompts) (else O(prompts));
    else empty.
  returned: always
  type: list
  elements: dict
  contains:
    id:
      description: The prompt's C(id), else its index in O(prompts).
      type: raw
      sample: completion_short
    api:
      description: The API the prompt was sent to.
      type: str
      sample: completions
    verdict:
      description: V(pass), V(fail) (see RV(greedy[].msg)), or V(skipped) (the deadline had passed).
      type: str
      sample: pass
    msg:
      description: The probe's summary, or why the answer failed.
      type: str
    text:
      description: The answer (capped at 4000 characters, as M(ddtree.sglang.llm_probe)'s).
      type: str
      sample: " Paris. It is the largest city"
    reasoning_text:
      description: The reasoning part of a chat answer, when the server sends one apart.
      type: str
      returned: when the server sent reasoning
    text_truncated:
      description: Whether RV(greedy[].text) was cut.
      type: bool
    completion_tokens:
      description: Tokens of the answer (the server's count when it sent usage).
      type: int
      sample: 32
    finish_reason:
      description: Why the server stopped (V(length) when it gave every token asked for).
      type: str
      sample: length
    token_count_source:
      description: Where RV(greedy[].completion_tokens) comes from, as M(ddtree.sglang.llm_probe) says it.
      type: str
      sample: usage
    ttft_s:
      description: Seconds to the first token.
      type: float
      sample: 0.08
    tokens_per_second:
      description: The answer's decode rate.
      type: float
      sample: 49.9
greedy_tokens:
  description: The tokens asked for per greedy answer (0 when none were asked).
  returned: always
  type: int
  sample: 32
reasons:
  description: Each reason the call failed, one per entry (RV(msg) joins them); empty when it passed. A caller that
    registers the result with C(failed_when) set to false still reads them here.
  returned: always
  type: list
  elements: str
  sample: []
deadline_reached:
  description: Whether the deadline cut the call.
  returned: always
  type: bool
  sample: false
url:
  description: The URL of the completion requests.
  returned: always
  type: str
  sample: http://127.0.0.1:30000/v1/completions
api:
  description: The API used.
  returned: always
  type: str
  sample: completions
model:
  description: The model name sent (from O(model) or C(/v1/models)).
  returned: always
  type: str
  sample: /models/Qwen3.6-27B
concurrency:
  description: The levels, as numbers.
  returned: always
  type: list
  elements: int
  sample: [1, 16]
duration:
  description: The window of each level, in seconds.
  returned: always
  type: float
  sample: 10.0
warmup:
  description: The warmup of each level, in seconds.
  returned: always
  type: float
  sample: 2.0
max_tokens:
  description: Tokens asked for per request (unless a prompt set its own).
  returned: always
  type: int
  sample: 128
temperature:
  description: The sampling temperature sent (unless a prompt set its own).
  returned: always
  type: float
  sample: 0.0
top_p:
  description: The nucleus sampling sent (unless a prompt set its own); none when not sent.
  returned: always
  type: float
  sample: 0.95
slo:
  description: The SLO the levels were judged against (empty when none was given).
  returned: always
  type: dict
  sample: {ttft_s: 1.0}
timeout:
  description: The bound of one request, in seconds.
  returned: always
  type: float
  sample: 30.0
deadline:
  description: The bound of the whole call, in seconds (given, or derived).
  returned: always
  type: float
  sample: 125.0
prompts:
  description: How many prompts the set has.
  returned: always
  type: int
  sample: 8
elapsed_s:
  description: Seconds the whole call took.
  returned: always
  type: float
  sample: 25.2
client_cpu_s:
  description: CPU seconds this process spent in the whole call.
  returned: always
  type: float
  sample: 0.6
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._bench import DEFAULTS, Bench, BenchError  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._http import (  # noqa: E402
    HAS_REQUESTS,
    REQUESTS_IMPORT_ERROR,
)

# Defaults come from _bench.DEFAULTS (DOCUMENTATION repeats them; validate-modules fails when they differ).
ARGUMENT_SPEC = dict(
    base_url=dict(type="str", required=True),
    api=dict(type="str", choices=["completions", "chat"], default=DEFAULTS["api"]),
    model=dict(type="str"),
    # raw: an int or a list of ints; _bench checks it and names what it got.
    concurrency=dict(type="raw", default=DEFAULTS["concurrency"]),
    duration=dict(type="float", default=DEFAULTS["duration"]),
    warmup=dict(type="float", default=DEFAULTS["warmup"]),
    prompts=dict(type="list", elements="dict"),
    repeats=dict(type="int", default=DEFAULTS["repeats"]),
    greedy_tokens=dict(type="int", default=DEFAULTS["greedy_tokens"], no_log=False),
    greedy_prompts=dict(type="list", elements="dict"),
    max_tokens=dict(type="int", default=DEFAULTS["max_tokens"], no_log=False),
    temperature=dict(type="float", default=DEFAULTS["temperature"]),
    top_p=dict(type="float"),
    slo=dict(type="dict"),
    timeout=dict(type="float", default=DEFAULTS["timeout"]),
    deadline=dict(type="float"),
    api_key=dict(type="str", no_log=True),
    validate_certs=dict(type="bool", default=DEFAULTS["validate_certs"]),
    # Headers often carry credentials (Authorization, proxy tokens): their values are never shown.
    headers=dict(type="dict", no_log=True),
    max_error_share=dict(type="float", default=DEFAULTS["max_error_share"]),
)


class LlmBenchModule:
    """Options in, one Bench run, its figures out as the module's result."""

    def __init__(self, module):
        self.module = module

    def run(self):
        params = dict(self.module.params)
        base_url = params.pop("base_url")
        try:
            bench = Bench(base_url, **params)
        except BenchError as exc:
            self._fail(str(exc))
        try:
            result = bench.run()
        except Exception as exc:  # a bug here must still read as a result, not a traceback
            self._fail(f"llm_bench internal error ({exc.__class__.__name__}: {exc}); please report it")
        result["changed"] = False
        if result.pop("failed"):
            self.module.fail_json(**result)
        self.module.exit_json(**result)

    def _fail(self, msg, **extra):
        """A failure before any figure: the same keys as a run's result, so a caller's templates still read them."""
        self.module.fail_json(msg=msg, reasons=[msg], levels=[], greedy=[], **extra)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    bench = LlmBenchModule(module)
    if not HAS_REQUESTS:
        bench._fail(missing_required_lib("requests"), exception=REQUESTS_IMPORT_ERROR)
    bench.run()


if __name__ == "__main__":
    main()
