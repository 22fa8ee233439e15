"""The simulator's scenario set and its fingerprints: a restructuring of the engine keeps them.

Each scenario of :data:`SCENARIOS` runs one model option of the simulator (failure models,
repairs, racks, checkpoint and restart rules, jitter, leftover replicas) under each scheme. Its
fingerprint is a SHA-256 over every field of the :class:`~spare_fast.sim.Report` bit for bit
(floats as ``float.hex``), the timeline's bytes included; only the measured run times are left
out. :data:`RECORDED` holds the fingerprints the engine gave when this file was written.

Re-record (after a change that is meant to move results)::

    PYTHONPATH=. python tests/test_sim_fingerprints.py

The recorded values come from Linux on x86-64: another C library may round the logarithms
and powers behind the Weibull and lognormal draws differently in the last bit, so elsewhere
the test only checks that two runs agree with each other.
"""

from __future__ import annotations

import dataclasses
import hashlib
import platform
import sys
from typing import Any

import numpy as np
import pytest

from spare_fast.sim import Report, Scenario, simulate
from spare_fast.sim import engine as sim_engine

BASE = Scenario(
    groups=60, steps=150, compute=8.0, allreduce=1.0, mtbf=40.0, restart=120.0, save=5.0
)

# (name, Scenario changes) for each model option; every one runs under every scheme.
OPTIONS: list[tuple[str, dict[str, Any]]] = [
    ("per_group", {}),
    ("renewal", {"failure_model": "renewal"}),
    ("per_gpu", {"failure_model": "per_gpu", "gpus": 120}),
    ("units", {"failure_units": 300}),
    ("renew_failed", {"restart_renews": "failed"}),
    ("aging", {"restart_aging": True}),
    ("renew_failed_aging", {"restart_renews": "failed", "restart_aging": True}),
    ("repair", {"repair": 300.0}),
    ("repair_renewal", {"repair": 300.0, "failure_model": "renewal"}),
    ("racks", {"racks": 6, "rack_share": 0.2}),
    ("racks_renewal", {"racks": 6, "rack_share": 0.2, "failure_model": "renewal"}),
    ("dynamic", {"dynamic_checkpoint": True, "repair": 300.0}),
    ("restart_depth", {"restart_depth": 3}),
    ("expected_cost", {"restart_policy": "expected_cost", "repair": 300.0}),
    ("fixed_period", {"period": 150.0}),
    ("no_checkpoint", {"period": float("inf"), "mtbf": 400.0}),
    ("sync_jitter", {"sync_jitter": True}),
    ("no_jitter", {"jitter": 0.0}),
    ("leftover", {"groups": 61, "rep_leftover": "set"}),
    ("zero_save", {"save": 0.0, "mtbf": 200.0}),
    ("horizon", {"mtbf": 5.0, "horizon": 3.0}),
    ("measured_controller", {"controller_time": 0.0, "shrink_time": 0.0}),
]
SCHEMES = [("checkpoint", None), ("replication", 3), ("spare", 5)]
SCENARIOS: list[tuple[str, Scenario, str, int | None, int]] = [
    (f"{name}/{scheme}/{seed}", BASE.replace(**kw), scheme, r, seed)
    for i, (name, kw) in enumerate(OPTIONS)
    for scheme, r in SCHEMES
    for seed in (i % 3,)
]

_UNTIMED = {"sim_seconds", "decision_seconds", "timeline", "scenario"}


def _value_text(v: Any) -> str:
    if isinstance(v, float):
        return v.hex()
    if isinstance(v, dict):
        return "{" + ",".join(f"{k}:{_value_text(v[k])}" for k in sorted(v)) + "}"
    return repr(v)


def fingerprint(rep: Report) -> str:
    """SHA-256 of every field of ``rep`` but its run times, floats bit for bit."""
    h = hashlib.sha256()
    for f in dataclasses.fields(rep):
        if f.name not in _UNTIMED:
            h.update(f"{f.name}={_value_text(getattr(rep, f.name))};".encode())
    tl = rep.timeline
    assert tl is not None
    h.update(np.ascontiguousarray(tl).tobytes())
    return h.hexdigest()[:16]


def fingerprints(batching: bool = True) -> dict[str, str]:
    """The fingerprint of each scenario of :data:`SCENARIOS`."""
    saved = sim_engine._Run.batching
    sim_engine._Run.batching = batching
    try:
        return {
            name: fingerprint(simulate(sc, scheme, redundancy=r, seed=seed))
            for name, sc, scheme, r, seed in SCENARIOS
        }
    finally:
        sim_engine._Run.batching = saved


# Recorded on Linux x86-64 (see the module docstring).
RECORDED: dict[str, str] = {
    "per_group/checkpoint/0": "a4956ba806cc6ca8",
    "per_group/replication/0": "2546086a7b2847f1",
    "per_group/spare/0": "82a18e80e6ebef8d",
    "renewal/checkpoint/1": "3219e72030fdfebd",
    "renewal/replication/1": "a4e4decfb5ff807c",
    "renewal/spare/1": "fbcee7dca5b0e41d",
    "per_gpu/checkpoint/2": "6127de895d60a6f6",
    "per_gpu/replication/2": "6deff6b184418e5d",
    "per_gpu/spare/2": "2e1e3a6223b6bf67",
    "units/checkpoint/0": "5621bab975a5b79e",
    "units/replication/0": "2cccd1cb1104dbfc",
    "units/spare/0": "50f938a576b87515",
    "renew_failed/checkpoint/1": "4c60fdd1516682a3",
    "renew_failed/replication/1": "b95bc24d34e7686a",
    "renew_failed/spare/1": "8cc813e5ff12c08d",
    "aging/checkpoint/2": "36efcbf7564c1a05",
    "aging/replication/2": "2f66160a3b38ff50",
    "aging/spare/2": "810b2f191b1026ef",
    "renew_failed_aging/checkpoint/0": "6b670fea2ac66a84",
    "renew_failed_aging/replication/0": "32082c754c6cef02",
    "renew_failed_aging/spare/0": "b1caab55364c37fa",
    "repair/checkpoint/1": "4d35e7ce7da737a1",
    "repair/replication/1": "754332a240861159",
    "repair/spare/1": "54caf2a531b91581",
    "repair_renewal/checkpoint/2": "9e448ef7f26fe594",
    "repair_renewal/replication/2": "b018d928febdf3ba",
    "repair_renewal/spare/2": "9b4a8d733a43f3d1",
    "racks/checkpoint/0": "fabd446fec2a3ea3",
    "racks/replication/0": "2ea25f537ef46b28",
    "racks/spare/0": "5baedab669744999",
    "racks_renewal/checkpoint/1": "45acd97b74a5f445",
    "racks_renewal/replication/1": "78e9347e0dc0edaf",
    "racks_renewal/spare/1": "dfebac43869703ad",
    "dynamic/checkpoint/2": "1111f7de8e73bd9a",
    "dynamic/replication/2": "1ee92bdfc943b800",
    "dynamic/spare/2": "d97fdfd243f71ab1",
    "restart_depth/checkpoint/0": "a4956ba806cc6ca8",
    "restart_depth/replication/0": "2546086a7b2847f1",
    "restart_depth/spare/0": "82a18e80e6ebef8d",
    "expected_cost/checkpoint/1": "4d35e7ce7da737a1",
    "expected_cost/replication/1": "ded5df297ef79817",
    "expected_cost/spare/1": "54caf2a531b91581",
    "fixed_period/checkpoint/2": "83d350ef1fd0ffe6",
    "fixed_period/replication/2": "e5442e1445003fb7",
    "fixed_period/spare/2": "ec2cc23c6d9ec310",
    "no_checkpoint/checkpoint/0": "2d4e7ef17fdd3a6f",
    "no_checkpoint/replication/0": "ea0486edbebf7e56",
    "no_checkpoint/spare/0": "457e828cdb99dbce",
    "sync_jitter/checkpoint/1": "6d65e767c43ddd59",
    "sync_jitter/replication/1": "a2aedfb3e6e21c17",
    "sync_jitter/spare/1": "7ad8ce526abd40b4",
    "no_jitter/checkpoint/2": "3b7bbfa4e5e2fbac",
    "no_jitter/replication/2": "d4191622960c9cbf",
    "no_jitter/spare/2": "33420230600ca8a6",
    "leftover/checkpoint/0": "b0b237d88b6d791c",
    "leftover/replication/0": "47759cea07951c35",
    "leftover/spare/0": "8905bd0adc2b401c",
    "zero_save/checkpoint/1": "a7156f115d4244b2",
    "zero_save/replication/1": "74dbe9986ea4deaa",
    "zero_save/spare/1": "6846798e10fbb180",
    "horizon/checkpoint/2": "7265cbfa52113142",
    "horizon/replication/2": "864be7038c8c9bea",
    "horizon/spare/2": "5088f33f9d498c2f",
    "measured_controller/checkpoint/0": "a4956ba806cc6ca8",
    "measured_controller/replication/0": "2a9da3158dad99c7",
    "measured_controller/spare/0": "46cd749b9952e019",
}

_RECORDED_HERE = platform.system() == "Linux" and platform.machine() in ("x86_64", "AMD64")


@pytest.mark.skipif(
    not _RECORDED_HERE, reason="the fingerprints were recorded on Linux x86-64 (libm rounding)"
)
def test_scenario_fingerprints_are_the_recorded_ones() -> None:
    got = fingerprints()
    changed = {k: (RECORDED[k], got[k]) for k in RECORDED if got.get(k) != RECORDED[k]}
    assert not changed, f"{len(changed)} of {len(RECORDED)} fingerprints moved: {changed}"
    assert set(got) == set(RECORDED)


def test_scenario_fingerprints_repeat() -> None:
    some = SCENARIOS[::7]
    for name, sc, scheme, r, seed in some:
        a = fingerprint(simulate(sc, scheme, redundancy=r, seed=seed))
        assert a == fingerprint(simulate(sc, scheme, redundancy=r, seed=seed)), name


if __name__ == "__main__":
    batching = "--stepwise" not in sys.argv[1:]
    for key, value in fingerprints(batching).items():
        print(f'    "{key}": "{value}",')
