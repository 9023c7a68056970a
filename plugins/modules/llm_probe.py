#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

DOCUMENTATION = r"""
---
module: llm_probe
short_description: Prove that a served LLM answers, fast enough and sensibly, or fail with the cause
version_added: 0.1.0
description:
  - Sends one small completion to an SGLang server (or another OpenAI-compatible server such as vLLM or
    llama.cpp), streamed by default, and judges it. Time to first token and decode rate are measured apart;
    the output is checked for degeneracy (a loop covering at least half of it, one token repeated, one
    word dominating, empty output, replacement characters; docs/probe.md states the rule).
  - A C(/health) or C(/v1/models) check proves only that the HTTP server runs. This module exercises the
    model itself, which is what catches a speculative decoder that answers C(!!!!!!!!) at 0.057 tok/s.
  - The verdict is reached as soon as it is known. No first token by O(max_ttft) fails at that moment; once
    the first token is in, a stream that can no longer reach O(min_tokens_per_second), even if every
    remaining token arrived at once, fails at that moment. With only O(base_url) set, the field report's
    failure (first token after 17.6 s, then one C(!) every 17.6 s) fails 4 s after the request
    instead of 141 s.
  - "A failed verdict sets C(failed) and a C(msg) naming the cause and the numbers, for example
    C(no first token within 1 s (max_ttft)) for the field report's server, or C(output degenerate: 8 x '!')
    when the repeated token comes fast. Server errors are quoted, cut to a readable
    length, never as a Python traceback. All measured values are returned whether the verdict passes or
    fails."
  - The probe runs where the module runs. Use C(delegate_to) to probe from the controller or from another
    host, or run it on the server host against C(http://127.0.0.1:PORT).
author:
  - ddtree.sglang developers (@ddtree)
requirements:
  - requests
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: The probe only reads from the server, so it runs in check mode too and reports what it measured.
  diff_mode:
    support: none
  platform:
    platforms: posix
options:
  base_url:
    description:
      - Base URL of the server, without a path, for example C(http://127.0.0.1:30000).
      - The probe adds C(/v1/...) itself; a base_url ending in C(/v1) (as OpenAI clients take it) gets a
        warning, and a failure's message says to drop it.
      - "Redirects are not followed but named with their C(Location) (a POST that followed a 301 or 302
        would turn into a GET): set base_url to the address the server answers at."
    type: str
    required: true
  api:
    description:
      - Which endpoint to probe. V(completions) is C(/v1/completions), V(chat) is C(/v1/chat/completions),
        V(generate) is SGLang's native C(/generate), which also reports speculative accept length.
      - V(completions) with a one-word prompt is the smallest request that exercises the model; it does not
        depend on a chat template.
    type: str
    choices: [completions, chat, generate]
    default: completions
  model:
    description:
      - Model name to send. Default is the first id that C(/v1/models) lists. Not used with O(api=generate).
    type: str
  prompt:
    description:
      - The prompt (with O(api=chat) the content of a single user message unless O(messages) is set).
    type: str
    default: Hello
  messages:
    description:
      - Chat messages (list of dicts with C(role) and C(content)) for O(api=chat).
    type: list
    elements: dict
  max_tokens:
    description:
      - Tokens to ask for. Small keeps the probe cheap; 8 is enough to see a degenerate decoder and to measure
        a decode rate over 7 intervals.
    type: int
    default: 8
  temperature:
    description:
      - Sampling temperature. 0 makes the output deterministic, so a changed answer means a changed server.
    type: float
    default: 0.0
  stream:
    description:
      - Stream the answer (SSE). Needed to measure time to first token and decode rate apart and to judge
        before the completion ends. Without streaming only the end-to-end rate is measured.
    type: bool
    default: true
  timeout:
    description:
      - Budget of the probe proper in seconds (model lookup, request, reading the answer, server facts),
        after any O(wait_ready) wait. The thresholds usually decide first; this bounds a probe with the
        thresholds turned off.
      - A wall-clock deadline over every request, enforced whatever the server does byte by byte. A
        server (or proxy) that trickles its answers one byte at a time is cut at the deadline, and the
        message names the request that was awaited and the time spent on it. The module ends within
        O(wait_ready) + O(timeout) seconds of starting the probe.
    type: float
    default: 30.0
  wait_ready:
    description:
      - Seconds to wait for the server to become ready before probing. Connection refused, HTTP 503 and any
        other failing answer from O(ready_path) are retried until then. V(0) probes at once.
      - Each readiness request is bounded by the time left on the wall clock, so the wait ends by then even
        against a server that trickles its answer.
      - A number (or a string that reads as one). A boolean is refused, since V(true) would otherwise be
        taken as 1 second; that is why the type is C(raw) and not C(float).
    type: raw
    default: 0.0
  ready_path:
    description:
      - Path polled by O(wait_ready). C(/health) answers 503 while SGLang starts; C(/health_generate) also
        runs a one-token generation.
    type: str
    default: /health
  api_key:
    description:
      - "The server's API key (SGLang's C(--api-key)), sent as C(Authorization: Bearer)."
    type: str
  validate_certs:
    description:
      - Verify the server's TLS certificate for C(https://) URLs. Set V(false) only for a self-signed test
        certificate.
    type: bool
    default: true
  headers:
    description:
      - Extra HTTP headers to send with every request.
      - Their values are treated as secrets (C(no_log)), as they often carry credentials; Ansible masks
        each of them wherever it appears in the task's output.
    type: dict
  min_tokens_per_second:
    description:
      - Fail when the decode rate (tokens after the first, over the time from the first token to the last) is
        lower. Without streaming, or when all tokens came in one chunk, the end-to-end rate is used instead.
        V(0) turns the check off.
      - The default 5 is far below any usable server (a 27B model decodes at 15 tok/s or more on the slowest
        supported GPU class) and far above the field report's 0.057 tok/s.
    type: float
    default: 5.0
  max_ttft:
    description:
      - Fail when the first token takes longer than this many seconds (measured from sending the request).
        V(0) turns the check off.
      - The default 4 s is ample for a busy server (a few-token prefill takes well under a second, and SGLang
        warms up before C(/health) says ready) and keeps the verdict on the field report's failure within
        10 s of starting Ansible, which itself takes 2-4 s to start the module on a loaded controller.
    type: float
    default: 4.0
  min_completion_tokens:
    description:
      - Fail when the answer has fewer tokens. V(0) turns the check off.
    type: int
    default: 1
  expect_finish_reason:
    description:
      - Fail unless the finish reason is this, for example V(length) (the model produced all O(max_tokens))
        or V(stop).
    type: str
  expect:
    description:
      - A regular expression (Python C(re.search)) the answer must match.
    type: str
  degenerate:
    description:
      - What a degenerate answer does to the verdict. V(fail) fails, V(warn) passes with a warning,
        V(ignore) only reports it.
    type: str
    choices: [fail, warn, ignore]
    default: fail
notes:
  - The token count comes from the server's C(usage) (the probe asks for it with
    C(stream_options.include_usage)), from C(/generate)'s C(meta_info), or else one token per non-empty
    stream chunk, a lower bound that can pass a threshold but never fail one (RV(token_count_source) says which).
  - Server facts (RV(server), RV(spec)) come from SGLang's C(/server_info) or C(/get_server_info) when it
    answers within 2 s (on the wall clock, and within O(timeout)); they are left empty for other servers.
  - A 200 answer that is not what was asked for (an HTML page of a proxy or login portal instead of an event
    stream or JSON) fails naming its content type, with a short quote of what came back.
  - See C(docs/probe.md) in the collection for how to read a verdict.
seealso:
  - module: ddtree.sglang.sglang_wait
"""

EXAMPLES = r"""
- name: Probe the local SGLang server with the defaults
  ddtree.sglang.llm_probe:
    base_url: http://127.0.0.1:30000

- name: Wait up to 10 minutes for the model to load, then probe chat with the API key
  ddtree.sglang.llm_probe:
    base_url: "http://127.0.0.1:{{ sglang_port }}"
    api: chat
    wait_ready: 600
    api_key: "{{ sglang_api_key }}"

- name: Measure throughput over more tokens and keep the numbers
  ddtree.sglang.llm_probe:
    base_url: http://127.0.0.1:30000
    api: generate
    max_tokens: 64
    min_tokens_per_second: 20
  register: probe

- name: Show decode rate and speculative accept length
  ansible.builtin.debug:
    msg: "{{ probe.tokens_per_second }} tok/s, accept length {{ probe.spec.accept_length | default('n/a') }}"

- name: Probe from the controller, record the verdict instead of failing
  ddtree.sglang.llm_probe:
    base_url: "http://{{ inventory_hostname }}:30000"
    degenerate: warn
  delegate_to: localhost
  register: probe
  ignore_errors: true

- name: Check a known answer
  ddtree.sglang.llm_probe:
    base_url: http://127.0.0.1:30000
    api: chat
    prompt: "What is the capital of France? Answer with one word."
    max_tokens: 16
    expect: "(?i)paris"
"""

RETURN = r"""
verdict:
  description: V(pass) or V(fail).
  returned: always
  type: str
  sample: fail
msg:
  description: The verdict in words. On failure, every failed check with its numbers, separated by C(; ).
  returned: always
  type: str
  # What the probe says against the field report's server (molecule scenario readme checks it).
  sample: "no first token within 1 s (max_ttft)"
reasons:
  description: The failed checks, one string each (empty when the verdict passes).
  returned: always
  type: list
  elements: str
  sample: ["no first token within 1 s (max_ttft)"]
api:
  description: The API probed.
  returned: always
  type: str
  sample: completions
url:
  description: The URL of the completion request.
  returned: always
  type: str
  sample: http://127.0.0.1:30000/v1/completions
model:
  description: The model name sent (or reported by the server).
  returned: always
  type: str
  sample: /root/models/Qwen3.6-27B
stream:
  description: Whether the answer was streamed.
  returned: always
  type: bool
  sample: true
text:
  description:
    - The answer's text (empty when none came), cut to its first 4000 characters (RV(text_truncated)
      says so). The checks (degeneracy, O(expect)) judge the whole text.
  returned: always
  type: str
  sample: The capital of France is Paris. It lies
text_truncated:
  description: Whether RV(text) (or RV(reasoning_text)) was cut to 4000 characters.
  returned: always
  type: bool
  sample: false
reasoning_text:
  description:
    - Reasoning text of a chat answer (C(reasoning_content)) when the server separates it, cut to 4000 characters.
  returned: when the server sent reasoning content
  type: str
  sample: Okay, the user greets me
completion_tokens:
  description: Tokens in the answer.
  returned: always
  type: int
  sample: 8
prompt_tokens:
  description: Tokens in the prompt, when the server reports them.
  returned: always
  type: int
  sample: 1
token_count_doubt:
  description:
    - Why the server's count (C(usage.completion_tokens) or C(meta_info.completion_tokens)) was not believed,
      or none. A count above O(max_tokens), or, for a streamed answer, above 128 tokens per content chunk
      received, is not a count of what was sent; RV(completion_tokens) then counts the chunks (a lower bound)
      and a warning says so.
  returned: always
  type: str
  sample: "the server's usage.completion_tokens 5000 is above the max_tokens 16 asked for"
token_count_source:
  description:
    - Where RV(completion_tokens) comes from, V(usage) (the server's count), V(meta_info) (C(/generate)'s count)
      or V(chunks (lower bound)) (the server sent no count; one token per non-empty chunk).
    - A chunk count is a lower bound, since a speculative server may send several tokens a chunk. A rate or
      count from it passes O(min_tokens_per_second) and O(min_completion_tokens) when it meets them, and
      below them gives a warning, never a failure.
  returned: always
  type: str
  sample: usage
finish_reason:
  description: Why the answer ended (V(length), V(stop), ...), or null when it did not end.
  returned: always
  type: str
  sample: length
ttft_s:
  description: Seconds from sending the request to the first token (streamed only; null when none came).
  returned: always
  type: float
  sample: 0.083
total_s:
  description: Seconds from sending the request to the end of the answer (or to the verdict that cut it).
  returned: always
  type: float
  sample: 0.26
tokens_per_second:
  description: Decode rate, tokens after the first over the seconds from the first token to the last.
  returned: always
  type: float
  sample: 39.8
e2e_tokens_per_second:
  description: All tokens over RV(total_s), prefill included.
  returned: always
  type: float
  sample: 30.7
degenerate:
  description: Whether the answer is degenerate (null when no answer came to judge).
  returned: always
  type: bool
  sample: true
degenerate_reason:
  description: Why the answer is degenerate.
  returned: always
  type: str
  sample: 8 x '!'
http_status:
  description:
    - HTTP status of the completion request, or of the request that failed before it (model lookup,
      readiness); null when no HTTP answer came.
  returned: always
  type: int
  sample: 200
transport_error:
  description:
    - Kind of transport failure, if any (V(refused), V(reset), V(timeout), V(dns), V(tls), V(connect)). Set
      whenever no HTTP answer came, whichever request it was (readiness, model lookup, completion); null
      when an HTTP answer came (RV(http_status) has it).
  returned: always
  type: str
  sample: reset
readiness:
  description: Result of the O(wait_ready) wait (null when not waiting).
  returned: always
  type: dict
  sample: {"phase": "ready", "http_status": 200, "detail": "200 ready", "waited_s": 41.2}
server:
  description:
    - What the SGLang server says about itself (C(/server_info) or C(/get_server_info)); null for other servers.
    - NEXTN is reported as C(EAGLE), as SGLang rewrites it.
  returned: always
  type: dict
  sample:
    version: 0.5.6.post2
    speculative_algorithm: EAGLE
    speculative_num_steps: 3
    speculative_eagle_topk: 1
    speculative_num_draft_tokens: 4
    model_path: /root/models/Qwen3.6-27B
    source: /server_info
spec:
  description:
    - Speculative decoding figures. From C(/generate)'s C(meta_info) (V(accept_length) =
      completion tokens / verify passes) or the server's running average.
  returned: always
  type: dict
  sample: {"accept_length": 2.67, "accept_rate": 0.56, "verify_ct": 3, "source": "meta_info"}
elapsed_s:
  description: Seconds the whole module spent, readiness wait included.
  returned: always
  type: float
  sample: 0.31
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib  # noqa: E402
from ansible_collections.ddtree.sglang.plugins.module_utils._http import (  # noqa: E402
    HAS_REQUESTS,
    REQUESTS_IMPORT_ERROR,
)
from ansible_collections.ddtree.sglang.plugins.module_utils._probe_options import DEFAULTS  # noqa: E402

if HAS_REQUESTS:
    from ansible_collections.ddtree.sglang.plugins.module_utils._probe import Probe, ProbeError
else:  # the module still loads, so it can say what is missing
    Probe, ProbeError = None, Exception

# Defaults come from _probe_options.DEFAULTS, the probe's one copy (DOCUMENTATION repeats them;
# validate-modules fails when the two differ).
ARGUMENT_SPEC = dict(
    base_url=dict(type="str", required=True),
    api=dict(type="str", choices=["completions", "chat", "generate"], default=DEFAULTS["api"]),
    model=dict(type="str"),
    prompt=dict(type="str", default=DEFAULTS["prompt"]),
    messages=dict(type="list", elements="dict"),
    max_tokens=dict(type="int", default=DEFAULTS["max_tokens"], no_log=False),
    temperature=dict(type="float", default=DEFAULTS["temperature"]),
    stream=dict(type="bool", default=DEFAULTS["stream"]),
    timeout=dict(type="float", default=DEFAULTS["timeout"]),
    # raw, not float: a float option takes `true` as 1 s; the probe refuses a boolean.
    wait_ready=dict(type="raw", default=DEFAULTS["wait_ready"]),
    ready_path=dict(type="str", default=DEFAULTS["ready_path"]),
    api_key=dict(type="str", no_log=True),
    validate_certs=dict(type="bool", default=DEFAULTS["validate_certs"]),
    # Headers often carry credentials (Authorization, proxy tokens): their values are never shown.
    headers=dict(type="dict", no_log=True),
    min_tokens_per_second=dict(type="float", default=DEFAULTS["min_tokens_per_second"], no_log=False),
    max_ttft=dict(type="float", default=DEFAULTS["max_ttft"]),
    min_completion_tokens=dict(type="int", default=DEFAULTS["min_completion_tokens"], no_log=False),
    expect_finish_reason=dict(type="str"),
    expect=dict(type="str"),
    degenerate=dict(type="str", choices=["fail", "warn", "ignore"], default=DEFAULTS["degenerate"]),
)


class LlmProbeModule:
    """Options in, one Probe run, the verdict out as the module's result."""

    def __init__(self, module):
        self.module = module

    def run(self):
        params = dict(self.module.params)
        base_url = params.pop("base_url")
        try:
            probe = Probe(base_url, **params)
        except ProbeError as exc:
            self.module.fail_json(msg=str(exc), verdict="fail", reasons=[str(exc)])
        try:
            result = probe.run()
        except Exception as exc:  # a bug in the probe must still read as a verdict, not a traceback
            self.module.fail_json(
                msg=f"llm_probe internal error ({exc.__class__.__name__}: {exc}); please report it",
                verdict="fail",
                reasons=["internal error"],
            )
        for warning in result.pop("warnings"):
            self.module.warn(warning)
        result["changed"] = False
        if result.pop("failed"):
            self.module.fail_json(**result)
        self.module.exit_json(**result)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    if not HAS_REQUESTS:
        module.fail_json(msg=missing_required_lib("requests"), exception=REQUESTS_IMPORT_ERROR)
    LlmProbeModule(module).run()


if __name__ == "__main__":
    main()
