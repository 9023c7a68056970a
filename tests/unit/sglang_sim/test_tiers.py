# Copyright: (c) 2026, ddtree.sglang developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The simulator's adaptive speculation and no speculation (tests/sglang_sim/tiers.py, README)."""

import importlib.util
import json
import threading
from pathlib import Path

import pytest
import requests
from test_launch_server import _decode_rate, _stream, launch

TIERS = Path(__file__).resolve().parents[2] / "sglang_sim" / "tiers.py"
_spec = importlib.util.spec_from_file_location("sglang_sim_tiers_under_test", TIERS)
tiers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tiers)

NEXTN = ["--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"]
# A NEXTN unit and no speculation, with their batching curves; one draft step between the two.
BEHAVIOUR = {
    "NEXTN": {
        "mode": "healthy",
        "accept_length": 2.4,
        "rates": {"1": 40, "16": 32, "64": 20},
        "steps": {"1": {"rates": {"1": 34, "16": 30, "64": 24}}},
    },
    "NONE": {"mode": "healthy", "rates": {"1": 30, "16": 28, "64": 25}},
}


def test_the_chain_model_keeps_the_units_own_accept_length():
    assert tiers.accept_length_of(3, 2.4, 3) == pytest.approx(2.4)
    one = tiers.accept_length_of(1, 2.4, 3)
    assert 1.6 < one < 1.7  # p ~ 0.66: one draft accepted two times in three
    assert tiers.accept_length_of(0, 2.4, 3) == 1.0
    assert tiers.accept_length_of(7, 2.4, 3) > 2.4


@pytest.mark.parametrize(
    ("candidates", "initial", "accepted", "settled"),
    [
        # DEFAULT_ADAPTIVE_CONFIG's tiers of 0.5.23 with NEXTN's 1.4 drafts accepted of 3 (accept length 2.4):
        ([1, 3, 5, 7], 3, {1: 0.66, 3: 1.4, 5: 1.6, 7: 1.7}, 3),  # rise needs more than 2.5, a drop 0.25 or less
        ([0, 1, 3], 3, {1: 0.66, 3: 1.4}, 3),
        ([0, 1], 3, {1: 0.66}, 1),  # 3 is no candidate: the middle one, 1, and 0.66 > 0.5 keeps it
        ([0], 3, {}, 0),
        # a draft that is rarely right: down to 0, whose probes of 1 drop back to 0
        ([0, 1, 3], 3, {1: 0.3, 3: 0.4}, 0),
    ],
)
def test_each_tier_settles_as_the_releases_slot_does(candidates, initial, accepted, settled):
    slot = {"down_hysteresis": -0.25} if candidates == [1, 3, 5, 7] else {"down_hysteresis": 0.0}
    assert tiers.settled_step(candidates, initial, lambda s: accepted.get(s, 0.0), slot) == settled


def test_an_adaptive_nextn_unit_runs_its_tiers(sglang_sim):
    sim = sglang_sim(algorithm="NEXTN", args=[*NEXTN, "--speculative-adaptive"], behaviour=BEHAVIOUR, mode=None)
    logs = sim.logs()
    # adaptive_spec_params.py:297-303, the first tier's candidates of DEFAULT_ADAPTIVE_CONFIG (0.5.23)
    assert "AdaptiveSpeculativeParams initialized: steps=3, candidate_steps=[1, 3, 5, 7]" in logs
    assert " adaptive_steps=1:3,8:3,32:1,64:0" in logs
    info = requests.get(sim.base_url + "/server_info", timeout=5).json()
    assert info["speculative_adaptive"] is True


@pytest.mark.parametrize("algorithm", ["DDTREE", "DFLASH"])
def test_an_adaptive_unit_the_release_does_not_adapt_runs_static_with_its_warning(sglang_sim, algorithm):
    sim = sglang_sim(algorithm=algorithm, args=["--speculative-adaptive"], mode="healthy")
    reason = f"speculative_algorithm={algorithm} (only EAGLE/EAGLE3 are supported)"
    assert f"speculative_adaptive disabled: {reason}. Falling back to static speculative params." in sim.logs()
    assert "adaptive_steps=" not in sim.logs()
    assert requests.get(sim.base_url + "/server_info", timeout=5).json()["speculative_adaptive"] is False


def test_num_steps_outside_the_tiers_stops_the_start(tmp_path):
    proc = launch(["--model-path", "/m", "--speculative-algorithm", "NEXTN", "--speculative-num-steps", "4",
                   "--speculative-adaptive"])  # fmt: skip
    assert proc.returncode == 1
    assert proc.stderr.rstrip().endswith(
        "ValueError: --speculative-num-steps=4 is not in the adaptive config candidate_steps [0, 1, 3, 5, 7]. "
        "Pass one of those values."
    )
    assert "in _init_adaptive_speculative_params" in proc.stderr


def test_a_step_without_rates_is_the_behaviours_gap_not_sglangs(tmp_path):
    behaviour = tmp_path / "b.json"
    behaviour.write_text(json.dumps({"NEXTN": {"rates": {"1": 40}}}))
    proc = launch(["--model-path", "/m", "--speculative-algorithm", "NEXTN", *NEXTN, "--speculative-adaptive"],
                  env={"DDTREE_SIM_BEHAVIOUR_FILE": str(behaviour)})  # fmt: skip
    assert proc.returncode == 70
    assert "settles on 1 step(s) at a running batch of 32 or more (tier 32)" in proc.stderr


@pytest.mark.wallclock
def test_the_rate_follows_the_tier_of_the_running_batch(sglang_sim, tmp_path):
    """A tiers file (the release's shape): 3 steps alone, speculation off from 2 in flight. One stream decodes at
    NEXTN's rate; two streams at no speculation's, with accept length 1."""
    config = tmp_path / "tiers.json"
    config.write_text(json.dumps({"1": {"candidate_steps": [3]}, "2": {"candidate_steps": [0]}}))
    args = [*NEXTN, "--speculative-adaptive", "--speculative-adaptive-config", str(config)]
    sim = sglang_sim(algorithm="NEXTN", args=args, behaviour=BEHAVIOUR, mode=None)
    assert " adaptive_steps=1:3,2:0" in sim.logs()
    alone = {}
    _stream(sim.base_url, 61, alone)
    assert _decode_rate(alone[0][0]) == pytest.approx(40, rel=0.06)
    two = {}
    threads = [threading.Thread(target=_stream, args=(sim.base_url, 41, two, i)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert _decode_rate(two[1][0]) == pytest.approx(30 - 2 / 15, rel=0.08)  # NONE's curve at 2: 29.87


def test_plain_runs_without_speculation_at_its_own_curve(sglang_sim):
    sim = sglang_sim(algorithm=None, behaviour=BEHAVIOUR, mode=None)
    assert "rates=1:30,16:28,64:25" in sim.logs()
    meta = requests.post(sim.base_url + "/generate", json={"text": "Hi", "sampling_params": {"max_new_tokens": 4}},
                         timeout=10).json()["meta_info"]  # fmt: skip
    assert "spec_accept_length" not in meta


BEHAVIOURS = Path(__file__).resolve().parents[2] / "sglang_sim" / "behaviours"


def _curve(entry, n):
    from test_launch_server import _sim_module

    sim = _sim_module()
    return sim.rate_at(sim._rate_table(entry["rates"]), n)


def test_the_holdout_host_has_issue_35s_figures():
    """DDTree +32 % / -31 % and DFLASH +16 % / -6 % against NEXTN at 1 and 16 streams."""
    entry = json.loads((BEHAVIOURS / "ampere_48g_gain_turns_negative.json").read_text())
    gains = {a: [_curve(entry[a], n) / _curve(entry["NEXTN"], n) - 1 for n in (1, 16)] for a in ("DDTREE", "DFLASH")}
    assert gains == {
        "DDTREE": [pytest.approx(0.32), pytest.approx(-0.31)],
        "DFLASH": [pytest.approx(0.16), pytest.approx(-0.06)],
    }


@pytest.mark.parametrize("name", ["ampere_48g_gain_turns_negative.json", "ct129_batched.json"])
def test_no_speculation_is_nextn_over_the_papers_speedup(name):
    """NONE = NEXTN / the EAGLE-3 paper's RTX-3090 speedups over no speculation (Tables 3 and 5), point by point."""
    entry = json.loads((BEHAVIOURS / name).read_text())
    row = {1: 1.30, 2: 1.30, 8: 1.21, 16: 1.10, 24: 1.03, 32: 0.93, 56: 0.71}
    assert {n: round(_curve(entry["NEXTN"], n) / _curve(entry["NONE"], n), 2) for n in row} == row


def test_adaptive_nextn_on_the_ampere_curves_is_nextn_below_32_and_plain_from_64():
    """The release's default tiers on this class: 3 steps below 32 streams (no change), 1 from 32, off from 64."""
    from test_launch_server import _sim_module

    sim = _sim_module()
    entry = json.loads((BEHAVIOURS / "ampere_48g_gain_turns_negative.json").read_text())
    with open(sim.CLI_TABLE_PLACES[1], encoding="utf-8") as handle:
        table = json.load(handle)
    args = type("Args", (), {"speculative_num_steps": 3})()
    rules = table["adaptive"]
    config = rules["default_config"]
    tiers_of = {int(k): v["candidate_steps"] for k, v in config.items()}
    behaviour = dict(entry["NEXTN"], rates=sim._rate_table(entry["NEXTN"]["rates"]), tok_s=40.0)
    steps = tiers.Steps(args, behaviour, entry["NONE"], tiers_of, config, sim._rate_table, sim.rate_at)
    assert steps.by_tier == {1: 3, 8: 3, 32: 1, 64: 0}
    assert [steps.rate(n) for n in (1, 16)] == [40, 32]
    assert steps.rate(40) == pytest.approx(_curve(entry["NEXTN"]["steps"]["1"], 40))
    assert steps.rate(64) == pytest.approx(_curve(entry["NONE"], 64)) and steps.accept_length(0) == 1.0
