"""The simulator measurements quoted in the README's ``## Simulator`` section.

Usage: ``PYTHONPATH=. python tools/sim_experiments.py [--rows DIR] [PART]...`` with PART in
layouts, domains, rejoin, policy, dynamic, models, availability (no argument: all).  With
``--rows DIR`` every run's summary row (with its table label) is also written to
``DIR/<PART>.csv``, so the tables and plots can be rebuilt without re-running.  Every number
is a mean over 5 seeds (0..4) of the paper's scenario unless the table says otherwise; runs go
through :func:`spare_fast.sim.sweep.sweep` on all cores.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from spare_fast.sim import Scenario
from spare_fast.sim.sweep import PAPER_TABLE, mean_rows, sweep, write_csv

SEEDS = range(5)
# Every run of the part in progress: its summary row with the table label first.
RAW: list[dict] = []


def _table(title: str, header: list[str], rows: list[list[str]]) -> None:
    print(f"\n### {title}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in rows:
        print("| " + " | ".join(r) + " |")


def _run(configs: list[tuple[str, Scenario, str, int | None, str | None]]) -> dict[str, dict]:
    """configs: (label, scenario, scheme, r, layout) -> label -> seed-mean row (+ raw rows)."""
    tasks, labels = [], []
    for label, sc, scheme, r, lay in configs:
        for s in SEEDS:
            tasks.append((sc, scheme, r, lay, s))
            labels.append(label)
    rows = sweep(tasks)
    RAW.extend({"label": lab, **row} for row, lab in zip(rows, labels, strict=True))
    out: dict[str, dict] = {}
    for label in dict.fromkeys(labels):
        mine = [row for row, lab in zip(rows, labels, strict=True) if lab == label]
        m = mean_rows(mine)[0]
        for key in (
            "planned_restarts",
            "rejoins",
            "checkpoints",
            "loss_recovery",
            "loss_rework",
            "loss_restart",
            "restart_availability",
        ):
            m[key] = sum(x[key] for x in mine) / len(mine)
        out[label] = m
    return out


def _fmt(m: dict) -> list[str]:
    return [
        f"{m['normalized']:.3f} ± {m['normalized_std']:.3f}",
        f"{100 * m['availability']:.2f}%",
        f"{m['restarts']:.1f}",
        f"{m['mean_depth']:.2f}",
    ]


HEAD = ["TTT/T0 (± sd)", "availability", "restarts", "mean depth"]
LAYOUT_R = range(4, 13)


def layouts() -> None:
    configs = []
    for n in (200, 600, 1000):
        for r in LAYOUT_R:
            for lay in ("cyclic", "sidon", "random"):
                configs.append((f"{n}/{r}/{lay}", Scenario(groups=n), "spare", r, lay))
    res = _run(configs)
    rows = []
    for n in (200, 600, 1000):
        for r in LAYOUT_R:
            cells = [
                f"{res[f'{n}/{r}/{lay}']['normalized']:.3f}"
                for lay in ("cyclic", "sidon", "random")
            ]
            rows.append([str(n), str(r)] + cells)
        best = {
            lay: min(res[f"{n}/{r}/{lay}"]["normalized"] for r in LAYOUT_R)
            for lay in ("cyclic", "sidon", "random")
        }
        rows.append(
            [str(n), "best"] + [f"**{best[lay]:.3f}**" for lay in ("cyclic", "sidon", "random")]
        )
    _table(
        "Layouts: SPARe+CKPT TTT/T0 by layout (5 seeds)",
        ["N", "r", "cyclic", "sidon", "random"],
        rows,
    )


def domains() -> None:
    sc = Scenario(groups=600, racks=60, rack_share=0.1)
    configs = [
        ("plain cyclic, no rack failures", Scenario(groups=600), "spare", 6, "cyclic"),
        ("cyclic", sc, "spare", 6, "cyclic"),
        ("domain-aware", sc, "spare", 6, "domain"),
        ("random", sc, "spare", 6, "random"),
        ("replication r=3", sc, "replication", 3, None),
    ]
    res = _run(configs)
    _table(
        "Failure domains: N=600, 60 racks of 10 groups, 10% of failure events take a whole "
        "rack (SPARe r=6)",
        ["layout"] + HEAD,
        [[k] + _fmt(v) for k, v in res.items()],
    )


def rejoin() -> None:
    configs = [("no repair (paper)", Scenario(groups=600), "spare", 6, None)]
    for hours in (0.5, 2.0, 8.0):
        configs.append(
            (
                f"repair mean {hours:g} h",
                Scenario(groups=600, repair=hours * 3600),
                "spare",
                6,
                None,
            )
        )
    configs.append(("Rep r=3, no repair", Scenario(groups=600), "replication", 3, None))
    configs.append(
        ("Rep r=3, repair 2 h", Scenario(groups=600, repair=7200.0), "replication", 3, None)
    )
    res = _run(configs)
    _table(
        "Repair and rejoin: N=600, SPARe r=6, lognormal repair times (sigma 0.5)",
        ["scenario"] + HEAD + ["rejoins"],
        [[k] + _fmt(v) + [f"{v['rejoins']:.0f}"] for k, v in res.items()],
    )


def policy() -> None:
    configs = []
    for r in (6, 8, 12, 20):
        for lab_p, kw in (
            ("wait for wipe-out (paper)", {}),
            ("restart at depth 4", {"restart_depth": 4}),
            ("restart at depth 3", {"restart_depth": 3}),
            ("expected-cost rule", {"restart_policy": "expected_cost"}),
        ):
            configs.append((f"SPARe r={r}, {lab_p}", Scenario(groups=600, **kw), "spare", r, None))
    for r in (2, 3, 4):
        for lab_p, kw in (
            ("wait for wipe-out (paper)", {}),
            ("expected-cost rule", {"restart_policy": "expected_cost"}),
        ):
            sc = Scenario(groups=600, **kw)
            configs.append((f"Rep r={r}, {lab_p}", sc, "replication", r, None))
    res = _run(configs)
    _table(
        "Restart policy: N=600, planned restart (checkpoint, then restart) once the depth "
        "reaches d, or when the expected-cost rule says so",
        ["policy"] + HEAD + ["planned"],
        [[k] + _fmt(v) + [f"{v['planned_restarts']:.1f}"] for k, v in res.items()],
    )
    # Best SPARe+CKPT over r with and without the rule, at every N of the paper.
    configs = []
    for n in (200, 600, 1000):
        for r in range(4, 21):
            for pol in ("wipeout", "expected_cost"):
                lab = f"{n}|{pol}|{r}"
                configs.append((lab, Scenario(groups=n, restart_policy=pol), "spare", r, None))
    res = _run(configs)
    rows = []
    for n in (200, 600, 1000):
        cells = []
        for pol in ("wipeout", "expected_cost"):
            best_r = min(range(4, 21), key=lambda r, p=pol: res[f"{n}|{p}|{r}"]["normalized"])
            m = res[f"{n}|{pol}|{best_r}"]
            cells.append((m["normalized"], f"{m['normalized']:.3f} (r={best_r})"))
        gain = 100 * (1 - cells[1][0] / cells[0][0])
        rows.append([str(n), cells[0][1], cells[1][1], f"{gain:.1f}%"])
    _table(
        "Expected-cost rule: best SPARe+CKPT TTT/T0 over r in 4..20",
        ["N", "wait for wipe-out (paper)", "expected-cost rule", "gain"],
        rows,
    )


def dynamic() -> None:
    configs = []
    for scheme, r in (
        ("spare", 2),
        ("spare", 3),
        ("spare", 6),
        ("replication", 2),
        ("replication", 3),
    ):
        for dyn in (False, True):
            lab = f"{scheme} r={r}, " + ("dynamic" if dyn else "fixed T_c* (paper)")
            configs.append((lab, Scenario(groups=600, dynamic_checkpoint=dyn), scheme, r, None))
    res = _run(configs)
    _table(
        "Dynamic checkpointing: N=600",
        ["scheme"] + HEAD + ["checkpoints"],
        [[k] + _fmt(v) + [f"{v['checkpoints']:.0f}"] for k, v in res.items()],
    )


def _best_cell(m: dict) -> str:
    return f"{m['normalized']:.2f} ({100 * m['availability']:.1f}%, r={m['redundancy']})"


#: The failure models compared by :func:`models`: (label, Scenario fields).
MODELS = (
    ("renewal", {"failure_model": "renewal"}),
    ("per_group, one unit per group (U = N)", {"failure_units": "N"}),
    ("per_group, U = 1500 (default)", {}),
)


def _model_scenario(n: int, fields: dict) -> Scenario:
    kw = {k: (n if v == "N" else v) for k, v in fields.items()}
    return Scenario(groups=n, **kw)


def models() -> None:
    configs = []
    for label, fields in MODELS:
        for n in (200, 600, 1000):
            sc = _model_scenario(n, fields)
            for r in (2, 3, 4):
                configs.append((f"{label}/{n}/rep/{r}", sc, "replication", r, None))
            for r in range(4, 13):
                configs.append((f"{label}/{n}/spare/{r}", sc, "spare", r, None))
    res = _run(configs)
    rows = []
    for label, _fields in MODELS:
        for n in (200, 600, 1000):
            rep = min(
                (res[f"{label}/{n}/rep/{r}"] for r in (2, 3, 4)), key=lambda m: m["normalized"]
            )
            sp = min(
                (res[f"{label}/{n}/spare/{r}"] for r in range(4, 13)),
                key=lambda m: m["normalized"],
            )
            red = 100 * (1 - sp["normalized"] / rep["normalized"])
            rows.append([label, str(n), _best_cell(rep), _best_cell(sp), f"{red:.1f}%"])
    _table(
        "Failure models: best Rep+CKPT (r in 2..4) and SPARe+CKPT (r in 4..12)",
        ["failure model", "N", "Rep+CKPT", "SPARe+CKPT", "reduction"],
        rows,
    )


def availability() -> None:
    """Both readings of "availability = uptime / wall clock" against the paper's table.

    Rep+CKPT and SPARe+CKPT at their best r of the default sweep (``docs/sim/table.md``: Rep
    4 / 3 / 3, SPARe 11 / 8 / 9).  Under the restart-only reading, the paper's own (TTT/T0,
    availability) pair gives its restart downtime (1 - A) TTT, hence its number of 60-min
    restarts.
    """
    best = {200: (4, 11), 600: (3, 8), 1000: (3, 9)}
    configs = []
    for n in (200, 600, 1000):
        configs.append((f"{n}/rep", Scenario(groups=n), "replication", best[n][0], None))
        configs.append((f"{n}/spare", Scenario(groups=n), "spare", best[n][1], None))
    res = _run(configs)
    rows = []
    for n in (200, 600, 1000):
        rep_ttt, rep_a, sp_ttt, sp_a, _ = PAPER_TABLE[n]
        sc = Scenario(groups=n)
        for scheme, ttt, a in (("rep", rep_ttt, rep_a), ("spare", sp_ttt, sp_a)):
            m = res[f"{n}/{scheme}"]
            paper_restarts = (1 - a) * ttt * sc.t0 / sc.restart
            rows.append(
                [
                    str(n),
                    f"{'Rep' if scheme == 'rep' else 'SPARe'} r={m['redundancy']}",
                    f"{m['normalized']:.2f} / {ttt:.2f}",
                    f"{100 * m['availability']:.1f}% / {100 * m['restart_availability']:.1f}%"
                    f" / {100 * a:.1f}%",
                    f"{m['normalized'] * m['availability']:.2f}"
                    f" / {m['normalized'] * m['restart_availability']:.2f} / {ttt * a:.2f}",
                    f"{m['restarts']:.1f} / {paper_restarts:.0f}",
                ]
            )
    _table(
        "Availability readings (ours, restart-only / paper)",
        [
            "N",
            "scheme",
            "TTT/T0 ours / paper",
            "availability: ours / restart-only / paper",
            "TTT/T0 x availability: ours / restart-only / paper",
            "restarts: ours / paper if restart-only",
        ],
        rows,
    )


PARTS = {
    "layouts": layouts,
    "domains": domains,
    "rejoin": rejoin,
    "policy": policy,
    "dynamic": dynamic,
    "models": models,
    "availability": availability,
}


def main(argv: list[str] | None = None) -> int:
    """``tools/sim_experiments.py [PART ...]``: one line and exit 2 on an unknown part."""
    from spare_fast.cli._common import ArgumentParser, UsageError, run_main

    parser = ArgumentParser(prog="sim_experiments.py", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--rows",
        metavar="DIR",
        help="also write every run's row to DIR/PART.csv (DIR is created)",
    )
    parser.add_argument(
        "parts",
        nargs="*",
        metavar="PART",
        help=f"experiments to run (default all): {', '.join(PARTS)}",
    )

    def go(args: argparse.Namespace) -> int:
        known = list(PARTS)
        for name in args.parts:
            if name not in known:
                raise UsageError(f"{name!r} is not one of {', '.join(known)}")
        if args.rows is not None:
            os.makedirs(args.rows, exist_ok=True)
        for name in args.parts or list(PARTS):
            t = time.perf_counter()
            RAW.clear()
            PARTS[name]()
            if args.rows is not None:
                write_csv(RAW, os.path.join(args.rows, f"{name}.csv"))
            print(f"\n({name}: {time.perf_counter() - t:.0f} s)", file=sys.stderr)
        return 0

    return run_main(parser, argv, go)


if __name__ == "__main__":
    raise SystemExit(main())
