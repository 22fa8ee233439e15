"""The ``spare-fast`` command line: one module per subcommand, argparse and printing only.

Each subcommand module (:mod:`~spare_fast.cli.demo`, :mod:`~spare_fast.cli.bench`,
:mod:`~spare_fast.cli.theory`, :mod:`~spare_fast.cli.plan`, :mod:`~spare_fast.cli.simulate`,
:mod:`~spare_fast.cli.sweep`) exposes ``add_parser(subparsers)``; the parser it adds sets
``func`` to a callable taking the parsed arguments and returning an exit code. The work itself
is done by the library (:mod:`spare_fast.theory`, :mod:`spare_fast.sim`,
:mod:`spare_fast.testing.bench`). A new subcommand is one more module in :data:`SUBCOMMANDS`.

Errors follow :mod:`spare_fast.cli._common`: option types from there refuse bad values while
parsing, ``run`` raises :class:`~spare_fast.cli._common.UsageError` for checks across options
before any work, and :func:`main` prints either as one line on stderr with exit status 2
(``--debug`` shows the traceback instead).
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

from spare_fast.cli._common import ArgumentParser, run_main

__all__ = ["SUBCOMMANDS", "build_parser", "main"]

# The subcommand modules under spare_fast.cli, in the order `spare-fast --help` lists them.
SUBCOMMANDS = ("demo", "bench", "theory", "plan", "simulate", "sweep", "lighthouse", "ledger")


def build_parser() -> ArgumentParser:
    from spare_fast import __version__

    parser = ArgumentParser(
        prog="spare-fast",
        description="SPARe fault-tolerance scheduling core: controller, theory, simulator.",
        epilog="--debug (anywhere): show the traceback of an error instead of one line.",
    )
    parser.add_argument("--version", action="version", version=f"spare-fast {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    # Imported here: `spare-fast --help` should not pay for numpy-heavy imports it never uses.
    for name in SUBCOMMANDS:
        importlib.import_module(f"spare_fast.cli.{name}").add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``spare-fast`` with ``argv`` (default ``sys.argv[1:]``); returns the exit status."""
    return run_main(build_parser(), argv)


if __name__ == "__main__":
    raise SystemExit(main())
