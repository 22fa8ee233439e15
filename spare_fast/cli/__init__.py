"""The ``spare-fast`` command line: one module per subcommand, argparse and printing only.

Each subcommand module (:mod:`~spare_fast.cli.demo`, :mod:`~spare_fast.cli.bench`,
:mod:`~spare_fast.cli.theory`, :mod:`~spare_fast.cli.plan`, :mod:`~spare_fast.cli.simulate`,
:mod:`~spare_fast.cli.sweep`) exposes ``add_parser(subparsers)``; the parser it adds sets
``func`` to a callable taking the parsed arguments and returning an exit code. The work itself
is done by the library (:mod:`spare_fast.theory`, :mod:`spare_fast.sim`,
:mod:`spare_fast.testing.bench`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="spare-fast",
        description="SPARe fault-tolerance scheduling core: controller, theory, simulator.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    # Imported here: `spare-fast --help` should not pay for numpy-heavy imports it never uses.
    from spare_fast.cli import bench, demo, lighthouse, plan, simulate, sweep, theory

    for module in (demo, bench, theory, plan, simulate, sweep, lighthouse):
        module.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
