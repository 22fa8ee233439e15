"""``spare-fast theory``: print the closed forms, or validate them against Monte Carlo.

``spare-fast theory --validate --out DIR`` runs :func:`spare_fast.theory.validate` over its
grid (N in {200, 600, 1000, 10000, 100000}, r in {2, 4, 8, 12, 16, 20}, layouts cyclic, sidon
where it exists, random) and writes ``validation.csv``, ``validation.md`` and
``validation.png`` to DIR.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from spare_fast import theory as th
from spare_fast._validation import MAX_SEED
from spare_fast.cli._common import (
    UsageError,
    check_memory,
    check_output_folder,
    int_at_least,
    require,
    writing,
)
from spare_fast.theory.validation import (
    GRID_N,
    GRID_R,
    LAYOUTS,
    PAPER_MU_MAPE,
    PAPER_OVERHEAD_MAPE,
    validate,
    write,
)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "theory",
        help="closed forms for one (N, r), or --validate them against Monte Carlo",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--groups", type=int_at_least(1), default=600, help="N for the printout (default 600)"
    )
    p.add_argument(
        "--redundancy",
        type=int_at_least(1),
        default=None,
        help="r, 1..N (default: the rule's r* = floor(log2 N + 0.833))",
    )
    p.add_argument("--validate", action="store_true", help="run the Monte Carlo validation grid")
    p.add_argument("--out", type=Path, default=Path("theory-validation"), help="output directory")
    p.add_argument(
        "--groups-grid", type=int_at_least(1), nargs="+", default=list(GRID_N), metavar="N"
    )
    p.add_argument(
        "--redundancy-grid", type=int_at_least(1), nargs="+", default=list(GRID_R), metavar="R"
    )
    p.add_argument("--layouts", nargs="+", default=list(LAYOUTS), choices=LAYOUTS)
    p.add_argument(
        "--trials", type=int_at_least(2), default=4000, help="mu trials per point (N <= 10000)"
    )
    p.add_argument(
        "--overhead-trials",
        type=int_at_least(2),
        default=100,
        help="controller trajectories (N <= 1000)",
    )
    p.add_argument("--no-overhead", action="store_true", help="skip the controller Monte Carlo")
    p.add_argument("--seed", type=int_at_least(0, MAX_SEED), default=0)
    p.add_argument("--quiet", action="store_true", help="no progress output")
    p.set_defaults(func=run)


def theory_bytes(groups: int) -> float:
    """Memory of the printout at N groups (float arrays over the N failure counts)."""
    return 32.0 * groups + 64e6


def validation_bytes(groups: int, redundancy: int) -> float:
    """Memory of one validation point (a layout and a controller of N x r, per-trial arrays)."""
    return 64.0 * groups * redundancy + 32.0 * groups + 64e6


def run(args: argparse.Namespace) -> int:
    if not args.validate:
        n = args.groups
        if args.redundancy is not None and args.redundancy > n:
            raise UsageError("--redundancy", args.redundancy, f"must be <= --groups = {n}")
        check_memory("--groups", n, theory_bytes, "the closed forms")
        r = args.redundancy if args.redundancy is not None else int(th.optimal_redundancy(n))
        print(f"N = {n}, r = {r}")
        print(f"  mu (formula)          {th.endurable_failures(n, r):.2f}")
        if n <= 200_000:
            print(f"  mu (exact, cyclic)    {th.endurable_failures_exact(n, r):.2f}")
        print(f"  mu_rep (formula)      {th.endurable_failures_replication(n, r):.2f}")
        print(f"  overhead lower bound  {th.overhead_lower_bound(n, r):.4f}")
        print(f"  r* (rule)             {th.optimal_redundancy(n)}")
        return 0
    require("matplotlib", "spare-fast theory --validate (its validation.png)")
    r_max = max(args.redundancy_grid)
    check_memory(
        "--groups-grid",
        max(args.groups_grid),
        lambda n: validation_bytes(n, r_max),
        "the validation",
    )
    if not any(r <= n for n in args.groups_grid for r in args.redundancy_grid):
        raise UsageError(
            "--redundancy-grid",
            " ".join(map(str, args.redundancy_grid)),
            "leaves no point: every r exceeds every N of --groups-grid",
        )
    check_output_folder("--out", args.out)
    rows = validate(
        args.groups_grid,
        args.redundancy_grid,
        args.layouts,
        mu_trials=args.trials,
        overhead_trials=args.overhead_trials,
        seed=args.seed,
        overhead=not args.no_overhead,
        progress=not args.quiet,
    )
    with writing("--out", args.out):
        summary = write(rows, args.out)
    for kind, s in summary.items():
        print(
            f"{kind:7} mu MAPE (r>=8) {s['mu_mape_r8']:.2f}% (paper {PAPER_MU_MAPE}%), all r "
            f"{s['mu_mape_all']:.2f}%; overhead MAPE (r>=8) {s['overhead_mape_r8']:.2f}% "
            f"(paper {PAPER_OVERHEAD_MAPE}%), all r {s['overhead_mape_all']:.2f}%; "
            f"states 0..W-1 (r>=8) {s['overhead_survived_mape_r8']:.2f}%"
        )
    print(f"wrote {args.out}/validation.csv, validation.md, validation.png")
    return 0
