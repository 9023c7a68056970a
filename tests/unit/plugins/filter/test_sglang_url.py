# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One URL for a server bound to sglang_host:sglang_port (the wait and the probes use it)."""

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.ddtree.sglang.plugins.filter.sglang_url import sglang_url


@pytest.mark.parametrize(
    "host, url",
    [
        ("0.0.0.0", "http://127.0.0.1:30000"),
        ("", "http://127.0.0.1:30000"),
        (None, "http://127.0.0.1:30000"),
        ("::", "http://[::1]:30000"),
        ("127.0.0.1", "http://127.0.0.1:30000"),
        # the field report's unit: bound to one address, listening nowhere else
        ("10.1.230.172", "http://10.1.230.172:30000"),
        ("fd00::5", "http://[fd00::5]:30000"),
        ("[fd00::5]", "http://[fd00::5]:30000"),
        ("gpu-node-1.lan", "http://gpu-node-1.lan:30000"),
    ],
)
def test_the_url_reaches_the_bound_address(host, url):
    assert sglang_url(host, 30000) == url


@pytest.mark.parametrize("port", [0, 70000, "x", None])
def test_a_bad_port_is_named(port):
    with pytest.raises(AnsibleFilterError, match="sglang_port"):
        sglang_url("127.0.0.1", port)
