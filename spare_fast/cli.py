"""The ``spare-fast`` command line.

Each subcommand lives in its own module that exposes ``add_parser(subparsers)``; the parser it
adds sets ``func`` to a callable taking the parsed arguments and returning an exit code.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="spare-fast",
        description="SPARe fault-tolerance scheduling core: controller, theory, simulator.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    from spare_fast import _cli_bench, _cli_demo, _cli_plan, _cli_theory

    _cli_demo.add_parser(sub)
    _cli_bench.add_parser(sub)
    _cli_theory.add_parser(sub)
    _cli_plan.add_parser(sub)
    from spare_fast import _cli_sim

    _cli_sim.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
