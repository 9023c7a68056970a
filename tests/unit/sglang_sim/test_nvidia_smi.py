# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The stand-in nvidia-smi prints what the real one prints for each preset, and fails like it without a driver."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hang_guard import hang_guard

SMI = str(Path(__file__).resolve().parents[2] / "sglang_sim" / "nvidia_smi.py")
QUERY = "--query-gpu=index,name,memory.total,memory.used,compute_cap,driver_version,uuid"


def smi(tmp_path, cfg, *args):
    f = tmp_path / "gpus.json"
    if cfg is not None:
        f.write_text(json.dumps(cfg))
    env = dict(os.environ, DDTREE_SIM_GPUS_FILE=str(f))
    return subprocess.run(
        [sys.executable, SMI, *args], env=env, capture_output=True, text=True, timeout=hang_guard(10), check=False
    )


def test_no_driver(tmp_path):
    p = smi(tmp_path, None, "-L")
    assert p.returncode == 9
    assert p.stdout == (
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
        "Make sure that the latest NVIDIA driver is installed and running.\n"
    )


@pytest.mark.parametrize(
    ("preset", "count", "name", "mib", "cc"),
    [
        ("rtx_a6000x2", 2, "NVIDIA RTX A6000", 49140, "8.6"),
        ("rtx_pro_6000_bwx8", 8, "NVIDIA RTX PRO 6000 Blackwell Server Edition", 97887, "12.0"),
        ("a40x2", 2, "NVIDIA A40", 46068, "8.6"),
        ("l40sx4", 4, "NVIDIA L40S", 46068, "8.9"),
        ("rtx_6000_adax2", 2, "NVIDIA RTX 6000 Ada Generation", 49140, "8.9"),
        ("h100x8", 8, "NVIDIA H100 80GB HBM3", 81559, "9.0"),
        ("h200x8", 8, "NVIDIA H200", 143771, "9.0"),
        ("b200x8", 8, "NVIDIA B200", 183359, "10.0"),
    ],
)
def test_presets_csv(tmp_path, preset, count, name, mib, cc):
    p = smi(tmp_path, {"preset": preset}, QUERY, "--format=csv")
    assert p.returncode == 0
    out = p.stdout.splitlines()
    assert out[0] == "index, name, memory.total [MiB], memory.used [MiB], compute_cap, driver_version, uuid"
    assert len(out) == count + 1
    fields = out[1].split(", ")
    assert fields[:5] == ["0", name, f"{mib} MiB", "1 MiB", cc]
    assert fields[6].startswith("GPU-")
    assert len({line.split(", ")[6] for line in out[1:]}) == count  # distinct UUIDs


def test_noheader_nounits_and_id(tmp_path):
    p = smi(
        tmp_path, {"preset": "mixed_a6000_l40s"}, "--query-gpu=index,name,memory.total", "--format=csv,noheader,nounits"
    )
    assert p.stdout == "0, NVIDIA RTX A6000, 49140\n1, NVIDIA L40S, 46068\n"
    p = smi(tmp_path, {"preset": "mixed_a6000_l40s"}, "-i", "1", "--query-gpu=name", "--format=csv,noheader")
    assert p.stdout == "NVIDIA L40S\n"


def test_list_gpus(tmp_path):
    p = smi(tmp_path, {"preset": "rtx_a6000x2"}, "-L")
    lines = p.stdout.splitlines()
    assert len(lines) == 2 and lines[1].startswith("GPU 1: NVIDIA RTX A6000 (UUID: GPU-")


def test_custom_gpu_list(tmp_path):
    cfg = {
        "gpus": [
            {"model": "h100"},
            {"name": "NVIDIA Test GPU", "memory_total_mib": 1000, "compute_cap": "7.5", "memory_used_mib": 10},
        ],
        "driver_version": "550.1",
    }
    p = smi(tmp_path, cfg, "--query-gpu=name,memory.free,compute_cap,driver_version", "--format=csv,noheader")
    assert p.stdout.splitlines() == [
        "NVIDIA H100 80GB HBM3, 81558 MiB, 9.0, 550.1",
        "NVIDIA Test GPU, 990 MiB, 7.5, 550.1",
    ]


def test_unknown_field(tmp_path):
    p = smi(tmp_path, {"preset": "h100x8"}, "--query-gpu=index,bogus", "--format=csv")
    assert p.returncode == 2 and 'Field "bogus" is not a valid field to query.' in p.stdout


def test_compute_apps_empty_and_bare_table(tmp_path):
    p = smi(tmp_path, {"preset": "h100x8"}, "--query-compute-apps=pid,used_memory", "--format=csv,noheader")
    assert p.returncode == 0 and p.stdout == ""
    p = smi(tmp_path, {"preset": "h100x8"})
    assert p.returncode == 0 and "NVIDIA H100 80GB HBM3" in p.stdout and "No running processes found" in p.stdout


def test_mig_mode_is_disabled_on_gpus_with_mig_and_na_on_the_others(tmp_path):
    q = ("--query-gpu=index,mig.mode.current", "--format=csv,noheader,nounits")
    assert smi(tmp_path, {"preset": "h100x8"}, *q).stdout.splitlines()[0] == "0, Disabled"
    assert smi(tmp_path, {"preset": "rtx_a6000x2"}, *q).stdout.splitlines()[0] == "0, [N/A]"
    cfg = {"gpus": [{"model": "h100", "mig_mode": "Enabled"}]}
    assert smi(tmp_path, cfg, *q).stdout == "0, Enabled\n"
