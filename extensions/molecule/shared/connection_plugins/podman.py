# Test harness and demo only (not part of the collection): molecule's podman driver names the
# connection `podman`; this file, first on the connection plugin path that
# extensions/molecule/config.yml sets (and ansible.cfg, for scripts/demo and the README's commands
# on the demo's hosts), is containers.podman.podman with pipelining.
#
# Why: every task on a test host paid four podman invocations (mount, mkdir of the
# remote tmp, exec of the module, rm), each a Go binary start plus a runc exec. With
# pipelining the module goes to `podman exec -i ... python3` on stdin: one invocation.
# Measured on this 2-core machine (10 `command: true` tasks, load ~6.5): 14.2 s with
# containers.podman.podman, 5.4 s with this plugin. containers.podman disables
# pipelining because its exec does not attach stdin (no -i); this one does.
#
# Real hosts are reached over SSH, where pipelining is the usual setting, so the
# collection's tasks run here the way most operators run them.
from __future__ import annotations

import shlex

from ansible.module_utils.common.text.converters import to_native
from ansible_collections.containers.podman.plugins.connection.podman import Connection as PodmanConnection

DOCUMENTATION = """
    name: podman
    short_description: containers.podman.podman with pipelining (ddtree.sglang test harness)
    description:
        - Runs commands in an existing podman container like containers.podman.podman,
          with stdin attached so Ansible can pipeline modules.
    options:
      remote_addr:
        description: The ID of the container you want to access.
        default: inventory_hostname
        vars:
          - name: ansible_host
          - name: inventory_hostname
          - name: ansible_podman_host
      remote_user:
        description: User inside the container.
        ini:
          - section: defaults
            key: remote_user
        env:
          - name: ANSIBLE_REMOTE_USER
        vars:
          - name: ansible_user
      podman_extra_args:
        description: Extra arguments to pass to the podman command line.
        default: ''
        ini:
          - section: defaults
            key: podman_extra_args
        vars:
          - name: ansible_podman_extra_args
        env:
          - name: ANSIBLE_PODMAN_EXTRA_ARGS
      podman_executable:
        description: Executable for podman command.
        default: podman
        vars:
          - name: ansible_podman_executable
        env:
          - name: ANSIBLE_PODMAN_EXECUTABLE
"""


class Connection(PodmanConnection):
    transport = "podman"
    has_pipelining = True

    def _connect(self):
        # The parent mounts the container's file system on every connect (a podman call
        # per task); only file transfers use the mount, so mount when one happens.
        self._connected = True
        return self

    def _ensure_mount(self):
        if self._mount_point is None:
            PodmanConnection._connect(self)

    def put_file(self, in_path, out_path):
        self._ensure_mount()
        super().put_file(in_path, out_path)

    def fetch_file(self, in_path, out_path):
        self._ensure_mount()
        super().fetch_file(in_path, out_path)

    def exec_command(self, cmd, in_data=None, sudoable=False):
        # ConnectionBase.exec_command only logs; the parent's would drop stdin (no -i).
        args = shlex.split(to_native(cmd, errors="surrogate_or_strict"))
        exec_args = ["exec", "-i"] if in_data is not None else ["exec"]
        if self.user:
            exec_args += ["--user", self.user]
        return self._podman(exec_args, args, in_data)
