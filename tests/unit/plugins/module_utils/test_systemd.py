"""_systemd: systemctl show output parsed once, for sglang_wait and systemd_unit_snapshot."""

import pytest
from ansible_collections.ddtree.sglang.plugins.module_utils import _systemd

EXEC_LINE = (
    "ExecStart={ path=/opt/sglang/bin/python ; argv[]=/opt/sglang/bin/python -m sglang.launch_server "
    "--speculative-algorithm NEXTN --port 30000 ; ignore_errors=no ; start_time=[Fri 2026-12-04 18:00:01 UTC] ; "
    "stop_time=[n/a] ; pid=812 ; code=(null) ; status=0/0 }"
)
SHOW = "\n".join(
    [
        "LoadState=loaded",
        "FragmentPath=/etc/systemd/system/sglang-qwen.service",
        "DropInPaths=/usr/lib/systemd/system/sglang-qwen.service.d/10-a.conf"
        " /etc/systemd/system/sglang-qwen.service.d/20-b.conf",
        "EnvironmentFiles=/etc/default/sglang-qwen (ignore_errors=no)",
        "EnvironmentFiles=/etc/default/optional (ignore_errors=yes)",
        "UnitFileState=enabled",
        "ActiveState=activating",
        "SubState=start",
        "ExecMainStartTimestampMonotonic=595590662",
        EXEC_LINE,
        "NeedDaemonReload=yes",
        "LoadCredential=[unprintable]",
    ]
)


def test_parse_properties_keeps_repeated_keys_in_order():
    props = _systemd.parse_properties(SHOW + "\nnot a property line\nExecStart=second\n")
    assert props["EnvironmentFiles"] == [
        "/etc/default/sglang-qwen (ignore_errors=no)",
        "/etc/default/optional (ignore_errors=yes)",
    ]
    assert props["ExecStart"] == [EXEC_LINE[len("ExecStart=") :], "second"]
    assert "not a property line" not in props
    assert _systemd.first(props, "Missing", "x") == "x"


def test_unit_info():
    info = _systemd.unit_info(_systemd.parse_properties(SHOW), ["/etc/ddtree-sglang/k"])
    assert info == {
        "exists": True,
        "fragment": "/etc/systemd/system/sglang-qwen.service",
        "dropins": [
            "/usr/lib/systemd/system/sglang-qwen.service.d/10-a.conf",
            "/etc/systemd/system/sglang-qwen.service.d/20-b.conf",
        ],
        "env_files": ["/etc/default/sglang-qwen", "/etc/default/optional"],
        "credential_files": ["/etc/ddtree-sglang/k"],
        "enabled": True,
        "active": True,
        "active_state": "activating",
        "systemd_state": "activating (start)",
        "started_at": "595590662",
        "exec_start": [
            "{ path=/opt/sglang/bin/python ; argv[]=/opt/sglang/bin/python -m sglang.launch_server "
            "--speculative-algorithm NEXTN --port 30000 ; ignore_errors=no }"
        ],
        "algorithm": "NEXTN",
        "need_daemon_reload": True,
    }


def test_unit_info_of_a_unit_systemd_does_not_know():
    info = _systemd.unit_info(_systemd.parse_properties("LoadState=not-found\nFragmentPath=\nActiveState=inactive\n"))
    assert info["exists"] is False and info["dropins"] == [] and info["exec_start"] == []
    assert info["algorithm"] == "NONE" and info["enabled"] is False and info["started_at"] == "0"


@pytest.mark.parametrize(
    "value, expected",
    [
        (EXEC_LINE[len("ExecStart=") :].replace("start_time=[Fri", "start_time=[Sat"), None),
        (
            "{ path=/bin/true ; argv[]=/bin/true ; ignore_errors=yes }",
            "{ path=/bin/true ; argv[]=/bin/true ; ignore_errors=yes }",
        ),
    ],
)
def test_exec_start_static_drops_what_changes_at_each_start(value, expected):
    static = _systemd.exec_start_static(value)
    if expected is None:  # two starts of the same command read the same
        assert static == _systemd.exec_start_static(EXEC_LINE[len("ExecStart=") :])
        assert "start_time" not in static and "pid=" not in static and static.endswith("ignore_errors=no }")
    else:
        assert static == expected


@pytest.mark.parametrize(
    "value, path",
    [
        ("/etc/default/x (ignore_errors=no)", "/etc/default/x"),
        ("-/etc/default/x (ignore_errors=yes)", "/etc/default/x"),
        ("", ""),
    ],
)
def test_env_file_path(value, path):
    assert _systemd.env_file_path(value) == path


def test_credential_files_are_absolute_paths_once_each():
    texts = [
        "[Service]\nLoadCredential=sglang-api-key:/etc/ddtree-sglang/sglang-qwen.key\nLoadCredential=from-store\n",
        "  LoadCredentialEncrypted=tls:/etc/ssl/private/k.cred\n"
        "LoadCredential=again:/etc/ddtree-sglang/sglang-qwen.key\n"
        "#LoadCredential=commented:/etc/nothing\nLoadCredential=relative:keys/x\n",
    ]
    assert _systemd.credential_files(texts) == ["/etc/ddtree-sglang/sglang-qwen.key", "/etc/ssl/private/k.cred"]


@pytest.mark.parametrize(
    "command, algorithm",
    [
        ("python -m sglang.launch_server --speculative-algorithm NEXTN", "NEXTN"),
        ("python -m sglang.launch_server --speculative-algorithm=ddtree --x", "DDTREE"),
        ("python -m sglang.launch_server --model-path /m", "NONE"),
        ("", "NONE"),
    ],
)
def test_speculative_algorithm(command, algorithm):
    assert _systemd.speculative_algorithm(command) == algorithm


def test_unit_name():
    assert _systemd.unit_name("sglang-qwen") == "sglang-qwen.service"
    assert _systemd.unit_name("sglang-qwen.service") == "sglang-qwen.service"
    assert _systemd.unit_name("x.timer") == "x.timer"


def test_unit_files_fragment_then_dropins():
    props = _systemd.parse_properties(SHOW)
    assert _systemd.unit_files(props)[0] == "/etc/systemd/system/sglang-qwen.service"
    assert len(_systemd.unit_files(props)) == 3
    assert _systemd.unit_files({}) == []


class Module:
    def __init__(self, rc, out, err=""):
        self.answer = (rc, out, err)
        self.cmds = []

    def run_command(self, cmd):
        self.cmds.append(cmd)
        return self.answer

    def fail_json(self, msg, **kwargs):
        raise RuntimeError(msg)


def test_show_runs_systemctl_show_with_the_properties():
    module = Module(0, SHOW)
    assert _systemd.show(module, "/usr/bin/systemctl", "u.service", ["A", "B"]) == SHOW
    assert module.cmds == [["/usr/bin/systemctl", "show", "u.service", "--property=A,B"]]


def test_show_failure_names_the_unit_and_what_systemctl_said():
    with pytest.raises(RuntimeError, match="systemctl show u.service failed: Failed to connect to bus"):
        _systemd.show(Module(1, "", "Failed to connect to bus\n"), "systemctl", "u.service", ["A"])


def test_a_masked_unit_has_nothing_to_snapshot():
    props = _systemd.parse_properties("LoadState=masked\nFragmentPath=/dev/null\nUnitFileState=masked\n")
    assert _systemd.unit_info(props)["exists"] is False
