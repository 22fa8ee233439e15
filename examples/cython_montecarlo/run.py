"""Runs the Cython example: checks it against the Python controller, then times a trajectory.

Usage: python run.py BUILD_DIR [N] [r]   (defaults N = 100,000, r = 20, a Sidon layout)
"""

import sys

import numpy as np

from spare_fast import Controller, Layout

sys.path.insert(0, sys.argv[1])
import cython_montecarlo  # noqa: E402

n = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
r = int(sys.argv[3]) if len(sys.argv) > 3 else 20

# Same decisions as the Python controller on the same order.
small = Layout.sidon(2_000, 8, seed=1)
order = np.random.default_rng(0).permutation(small.n_groups).astype(np.int32)
depths = cython_montecarlo.fail_sequence(small.stacks, order)
assert depths == Controller(small).fail_each(order).depth.tolist(), "Cython != Python"

out = cython_montecarlo.trajectories(Layout.sidon(n, r, seed=0).stacks, trials=1, seed=0)
print(
    f"Cython, N = {n:,}, r = {r}: {out['failures'][0]:,} failures survived, "
    f"{out['decisions']:,} decisions in {out['total_s']:.2f} s; per decision median "
    f"{out['median_us']:.2f} us, p99 {out['p99_us']:.1f} us, max {out['max_us']:.0f} us; "
    f"mean depth {out['mean_depth']:.3f}"
)
