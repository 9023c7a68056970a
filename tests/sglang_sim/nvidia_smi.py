# Copyright (c) 2026 ddtree.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A stand-in ``nvidia-smi`` for simulated GPU hosts (test infrastructure).

Answers ``--query-gpu=<fields> --format=csv[,noheader][,nounits]`` (optionally ``-i/--id``),
``--query-compute-apps=...`` (no processes), ``-L`` and a bare call, for the GPU set in
/etc/ddtree-sim/gpus.json (env DDTREE_SIM_GPUS_FILE): ``{"preset": "rtx_a6000x2"}`` or
``{"gpus": [{"model": "rtx_a6000"}, {"name": "...", "memory_total_mib": 1234, ...}]}``.
Without that file it fails as nvidia-smi does when no driver is loaded (exit 9).
Names, memory totals and compute capabilities are what the real nvidia-smi prints.
"""

import json
import os
import sys
import time
import uuid

GPUS_FILE = "/etc/ddtree-sim/gpus.json"
NO_DRIVER = (
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
    "Make sure that the latest NVIDIA driver is installed and running.\n"
)

# model id -> (name, memory.total MiB, compute_cap, power.limit W)
MODELS = {
    "rtx_a6000": ("NVIDIA RTX A6000", 49140, "8.6", 300),
    "a40": ("NVIDIA A40", 46068, "8.6", 300),
    "l40s": ("NVIDIA L40S", 46068, "8.9", 350),
    "rtx_6000_ada": ("NVIDIA RTX 6000 Ada Generation", 49140, "8.9", 300),
    "h100": ("NVIDIA H100 80GB HBM3", 81559, "9.0", 700),
    "h200": ("NVIDIA H200", 143771, "9.0", 700),
    "b200": ("NVIDIA B200", 183359, "10.0", 1000),
    "rtx_pro_6000_bw": ("NVIDIA RTX PRO 6000 Blackwell Server Edition", 97887, "12.0", 600),
}
PRESETS = {
    "rtx_a6000x2": ["rtx_a6000"] * 2,  # ct129
    "rtx_pro_6000_bwx8": ["rtx_pro_6000_bw"] * 8,  # ct200
    "a40x2": ["a40"] * 2,
    "l40sx4": ["l40s"] * 4,
    "rtx_6000_adax2": ["rtx_6000_ada"] * 2,
    "h100x8": ["h100"] * 8,
    "h200x8": ["h200"] * 8,
    "b200x8": ["b200"] * 8,
    "mixed_a6000_l40s": ["rtx_a6000", "l40s"],
}
DEFAULT_DRIVER = "570.172.08"
DEFAULT_CUDA = "12.8"

# field -> (unit shown in the csv header, or None)
FIELDS = {
    "index": None,
    "name": None,
    "uuid": None,
    "serial": None,
    "pci.bus_id": None,
    "driver_version": None,
    "count": None,
    "compute_cap": None,
    "memory.total": "MiB",
    "memory.used": "MiB",
    "memory.free": "MiB",
    "memory.reserved": "MiB",
    "utilization.gpu": "%",
    "utilization.memory": "%",
    "temperature.gpu": None,
    "power.draw": "W",
    "power.limit": "W",
    "persistence_mode": None,
    "pstate": None,
    "mig.mode.current": None,
}
# Models with MIG (their mig.mode.current reads "Disabled" until it is enabled; the others "[N/A]", as a real
# nvidia-smi prints for an RTX: Syllo/nvtop#470).
MIG_MODELS = ("h100", "h200", "b200", "rtx_pro_6000_bw")
ALIASES = {"gpu_name": "name", "gpu_uuid": "uuid", "gpu_bus_id": "pci.bus_id", "compute_capability": "compute_cap"}


def load_gpus():
    path = os.environ.get("DDTREE_SIM_GPUS_FILE", GPUS_FILE)
    if not os.path.exists(path):
        return None, None
    with open(path, encoding="utf-8") as f:
        cfg = json.load(f)
    driver = cfg.get("driver_version", DEFAULT_DRIVER)
    if "preset" in cfg:
        if cfg["preset"] not in PRESETS:
            sys.stderr.write("nvidia-smi (sim): unknown preset {!r} in {}\n".format(cfg["preset"], path))
            sys.exit(3)
        entries = [{"model": m} for m in PRESETS[cfg["preset"]]]
    else:
        entries = cfg.get("gpus", [])
    gpus = []
    for i, e in enumerate(entries):
        name, mem, cc, power = MODELS.get(e.get("model"), (None, None, None, 300))
        name = e.get("name", name)
        mem = int(e.get("memory_total_mib", mem or 0))
        used = int(e.get("memory_used_mib", 1))
        seed = f"{cfg.get('preset', 'custom')}/{name}/{i}"
        gpus.append(
            {
                "index": str(i),
                "name": name,
                "uuid": e.get("uuid", "GPU-" + str(uuid.uuid5(uuid.NAMESPACE_URL, seed))),
                "serial": e.get("serial", "[N/A]"),
                "pci.bus_id": "00000000:%02X:00.0" % (0x01 + i * 0x10 if i < 15 else i),
                "driver_version": driver,
                "count": str(len(entries)),
                "compute_cap": str(e.get("compute_cap", cc)),
                "memory.total": mem,
                "memory.used": used,
                "memory.free": mem - used,
                "memory.reserved": 0,
                "utilization.gpu": int(e.get("utilization_gpu", 0)),
                "utilization.memory": 0,
                "temperature.gpu": str(e.get("temperature_gpu", 34)),
                "power.draw": "{:.2f}".format(float(e.get("power_draw_w", 21.5))),
                "power.limit": "{:.2f}".format(float(e.get("power_limit_w", power))),
                "persistence_mode": "Enabled",
                "pstate": "P8",
                "mig.mode.current": e.get("mig_mode", "Disabled" if e.get("model") in MIG_MODELS else "[N/A]"),
            }
        )
    return gpus, driver


def fmt(field, value, units):
    unit = FIELDS[field]
    if unit is None or not units:
        return str(value)
    return f"{value} {unit}"


def query_gpu(gpus, fields_arg, fmt_arg, ids):
    opts = [o.strip() for o in fmt_arg.split(",")]
    if "csv" not in opts:
        sys.stdout.write('"--format" requires "csv" (the simulator only prints csv).\n')
        return 2
    fields = [ALIASES.get(f.strip(), f.strip()) for f in fields_arg.split(",") if f.strip()]
    for f in fields:
        if f not in FIELDS:
            sys.stdout.write(f'Field "{f}" is not a valid field to query.\n\n')
            return 2
    out = []
    if "noheader" not in opts:
        out.append(", ".join(f"{f} [{FIELDS[f]}]" if FIELDS[f] else f for f in fields))
    for g in gpus:
        if ids is not None and g["index"] not in ids and g["uuid"] not in ids:
            continue
        out.append(", ".join(fmt(f, g[f], "nounits" not in opts) for f in fields))
    sys.stdout.write("\n".join(out) + "\n")
    return 0


def table(gpus, driver):
    lines = [
        "+-----------------------------------------------------------------------------------------+",
        f"| NVIDIA-SMI {driver:<22} Driver Version: {driver:<14} CUDA Version: {DEFAULT_CUDA:<9}|",
        "|-----------------------------------------+------------------------+----------------------+",
    ]
    for g in gpus:
        draw, limit = g["power.draw"].split(".")[0], g["power.limit"].split(".")[0]
        lines.append(f"| {g['index']:>3}  {g['name'][:34]:<34} | {g['pci.bus_id'][4:]} Off | {'Off':>17} |")
        lines.append(
            f"| N/A   {g['temperature.gpu']}C    P8   {draw}W / {limit}W | "
            f"{g['memory.used']:>8} MiB / {g['memory.total']:>6} MiB |      0%      Default |"
        )
        lines.append("+-----------------------------------------+------------------------+----------------------+")
    lines.append("")
    lines.append("| Processes:                                                                              |")
    lines.append("|  No running processes found                                                             |")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


# Every call is appended here (time and arguments), so a scenario can count how often a deploy ran
# nvidia-smi (ddtree_deploy: once per deploy).
CALLS_LOG = "/run/ddtree-sim/nvidia-smi-calls.log"


def record_call(argv):
    path = os.environ.get("DDTREE_SIM_CALLS_LOG", CALLS_LOG)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "a") as log:
            log.write("{:.3f} {}\n".format(time.time(), " ".join(argv)))
    except OSError:
        pass  # counting is for tests; the answer matters more


def main(argv):
    record_call(argv)
    gpus, driver = load_gpus()
    if gpus is None:
        sys.stdout.write(NO_DRIVER)
        return 9
    opts = {}
    i = 0
    while i < len(argv):
        a = argv[i]
        if "=" in a and a.startswith("--"):
            k, v = a.split("=", 1)
            opts[k] = v
        elif a in ("-i", "--id", "--format", "--query-gpu", "--query-compute-apps") and i + 1 < len(argv):
            opts[a] = argv[i + 1]
            i += 1
        else:
            opts[a] = True
        i += 1
    ids = opts.get("-i", opts.get("--id"))
    ids = None if ids is None else set(str(ids).split(","))
    if "-L" in opts or "--list-gpus" in opts:
        for g in gpus:
            sys.stdout.write("GPU {}: {} (UUID: {})\n".format(g["index"], g["name"], g["uuid"]))
        return 0
    if "--query-gpu" in opts:
        return query_gpu(gpus, opts["--query-gpu"], str(opts.get("--format", "csv")), ids)
    if "--query-compute-apps" in opts:
        fmt_opts = str(opts.get("--format", "csv"))
        if "noheader" not in fmt_opts:
            sys.stdout.write(", ".join(f.strip() for f in opts["--query-compute-apps"].split(",")) + "\n")
        return 0  # no processes on a simulated GPU
    if len(argv) == 0:
        return table(gpus, driver)
    sys.stdout.write("nvidia-smi (sim): unsupported arguments: {}\n".format(" ".join(argv)))
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
