"""``spare-fast demo``: the main job, a tour of the decision core on SPARe-shaped instances."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="run the kernels and the controller on SPARe-shaped instances")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    print("spare_fast demo")
    return 0
