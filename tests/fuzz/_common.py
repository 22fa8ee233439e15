"""Shared pieces of the atheris harnesses: decoding fuzz bytes into layouts and arrays.

Each harness is run as ``python tests/fuzz/fuzz_<name>.py [libFuzzer flags] [corpus dir]``;
``.ci/run`` runs each for a bounded time under AddressSanitizer and UndefinedBehaviorSanitizer
(README, "Reliability"). Inputs that the package rejects must raise ``ValueError``,
``IndexError`` or ``TypeError`` (the documented exceptions); anything else, a crash, a
sanitizer report or a wrong answer is a finding.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: snapshot_format

EXPECTED = (ValueError, IndexError, TypeError)

#: Integers a fuzzer should try at every boundary.
EDGES = [
    0,
    1,
    -1,
    2,
    2**31 - 1,
    -(2**31),
    2**31,
    2**32,
    2**40,
    2**63 - 1,
    -(2**63),
    2**63,
    2**64 - 1,
]


def pick_int(fdp, lo: int, hi: int) -> int:
    """Mostly in [lo, hi], sometimes a boundary value outside it."""
    if fdp.ConsumeProbability() < 0.05:
        return EDGES[fdp.ConsumeIntInRange(0, len(EDGES) - 1)]
    return fdp.ConsumeIntInRange(lo, hi)


def small_layout(fdp):
    """A valid layout of at most 12 groups: cyclic, random, sidon-free custom permutations."""
    from spare_fast import Layout

    n = fdp.ConsumeIntInRange(1, 12)
    r = fdp.ConsumeIntInRange(1, n)
    kind = fdp.ConsumeIntInRange(0, 2)
    if kind == 0:
        return Layout.cyclic(n, r)
    if kind == 1:
        try:
            return Layout.random(n, r, seed=fdp.ConsumeIntInRange(0, 2**16))
        except ValueError:  # r close to n: the random draw may give up; not this harness's object
            return Layout.cyclic(n, r)
    base = Layout.cyclic(n, r).stacks.copy()
    rng = np.random.default_rng(fdp.ConsumeIntInRange(0, 2**16))
    for row in base:
        rng.shuffle(row)
    return Layout.from_stacks(base)


def int_list(fdp, n: int, lo: int, hi: int) -> list[int]:
    return [pick_int(fdp, lo, hi) for _ in range(n)]
