# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The test harness's simulator launcher (conftest.Launcher): a simulator is only handed to a test once it
listens on its own port. free_port's pick is free when picked; an xdist peer can bind it before the
simulator does, and a test then talked to the peer's server (clean42's matrix: a chat_400 test read a
healthy answer)."""

import socket

import requests


def test_a_simulator_whose_port_was_taken_starts_on_another(sglang_sim, monkeypatch):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()  # accepts connections, as the peer's server would
        port = taken.getsockname()[1]
        # The launcher's own module globals (several conftest modules share the name "conftest").
        harness = sglang_sim.__func__.__globals__
        picks = iter([port])
        real_free_port = harness["free_port"]
        monkeypatch.setitem(harness, "free_port", lambda: next(picks, None) or real_free_port())
        sim = sglang_sim("chat_400", None)
        assert sim.port != port and sim.proc.poll() is None
        # the server behind base_url is this simulator: chat answers with its mode's 400
        r = requests.post(
            sim.base_url + "/v1/chat/completions",
            json={"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 2},
            timeout=10,
        )
        assert r.status_code == 400 and "DFLASH target_hidden feature dim mismatch" in r.text
