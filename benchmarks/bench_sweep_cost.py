# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What one llm_bench sweep costs against the sequential gate it replaces (docs/bench.md).

Through ansible-playbook on this machine against one simulator (NEXTN-like: 40 tok/s, accept
length 2.4, first token after 0.08 s), each timed on the wall clock, Ansible's start included:

- ``sequential``: the old gate's measurement of one side, an Ansible loop of llm_probe calls
  over the gate's prompt set (roles/ddtree_deploy/vars/gate_prompts.yml) x 3 repeats, one
  request at a time (what gate_measure.yml does);
- ``sweep``: one llm_bench call at concurrency [1, 16] (and [1, 4, 16]), warmup 2 s, 8 s each;
  and [1, 16] with warmup 1 s, 4 s each.

Also the issue's "a sweep of 3 levels x 8 s ends within its deadline". Writes
benchmarks/results/bench_sweep_cost_<date>.json. Run from the repository root with the dev venv:
``.venv/bin/python benchmarks/bench_sweep_cost.py`` (about a minute and a half).
"""

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from probe_bench import REPO, Sim  # also puts the collection on sys.path

PROMPTS = yaml.safe_load((REPO / "roles" / "ddtree_deploy" / "vars" / "gate_prompts.yml").read_text())
PROMPTS = PROMPTS["__ddtree_deploy_gate_prompt_set"]
REPEATS = 3  # ddtree_deploy_gate_repeats' default


def playbook(tasks):
    return [{"hosts": "localhost", "gather_facts": False, "tasks": tasks}]


def run(book, workdir):
    path = Path(workdir) / "play.yml"
    path.write_text(yaml.safe_dump(book, sort_keys=False))
    env = dict(
        os.environ,
        ANSIBLE_COLLECTIONS_PATH=str(REPO / ".cache" / "collections"),
        ANSIBLE_NOCOLOR="1",
        ANSIBLE_LOCALHOST_WARNING="False",
        ANSIBLE_INVENTORY_UNPARSED_WARNING="False",
    )
    ansible_playbook = Path(sys.executable).parent / "ansible-playbook"
    t0 = time.monotonic()
    proc = subprocess.run(
        [
            str(ansible_playbook),
            "-i",
            "localhost,",
            "-c",
            "local",
            "-e",
            f"ansible_python_interpreter={sys.executable}",
            str(path),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    took = time.monotonic() - t0
    if proc.returncode != 0:
        raise SystemExit(proc.stdout[-3000:] + proc.stderr[-3000:])
    return round(took, 2)


def main():
    out = {"cpus": os.cpu_count(), "load_average_before": os.getloadavg(), "runs": {}}
    with Sim("healthy", "NEXTN", tok_s=40, accept_length=2.4) as sim, tempfile.TemporaryDirectory() as work:
        items = [{k: p[k] for k in ("api", "prompt", "messages", "max_tokens") if k in p} for p in PROMPTS] * REPEATS
        sequential = playbook(
            [
                {
                    "name": "the old gate: one llm_probe per prompt and repeat",
                    "ddtree.sglang.llm_probe": {
                        "base_url": sim.base_url,
                        "api": "{{ item.api }}",
                        "prompt": "{{ item.prompt | default(omit) }}",
                        "messages": "{{ item.messages | default(omit) }}",
                        "max_tokens": "{{ item.max_tokens }}",
                        "temperature": 0,
                        "min_tokens_per_second": 0,
                        "max_ttft": 0,
                    },
                    "loop": items,
                }
            ]
        )
        out["runs"]["sequential"] = {"module_calls": len(items), "seconds": run(sequential, work)}
        for levels, warmup, duration in (([1, 16], 2, 8), ([1, 4, 16], 2, 8), ([1, 16], 1, 4)):
            sweep = playbook(
                [
                    {
                        "name": "one sweep",
                        "ddtree.sglang.llm_bench": {
                            "base_url": sim.base_url,
                            "concurrency": levels,
                            "warmup": warmup,
                            "duration": duration,
                        },
                        "register": "bench",
                    },
                    {"ansible.builtin.copy": {"content": "{{ bench | to_json }}", "dest": f"{work}/bench.json"}},
                ]
            )
            seconds = run(sweep, work)
            result = json.loads((Path(work) / "bench.json").read_text())
            out["runs"][f"sweep_{'_'.join(map(str, levels))}_{warmup}+{duration}s"] = {
                "module_calls": 1,
                "seconds": seconds,
                "module_elapsed_s": result["elapsed_s"],
                "deadline_s": result["deadline"],
                "deadline_reached": result["deadline_reached"],
                "output_tokens_per_second": [lv["output_tokens_per_second"] for lv in result["levels"]],
            }
    out["load_average_after"] = os.getloadavg()
    path = REPO / "benchmarks" / "results" / f"bench_sweep_cost_{time.strftime('%Y-%m-%d')}.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
