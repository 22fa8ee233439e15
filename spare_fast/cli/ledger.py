"""``spare-fast ledger check DIR``: verify a run's step ledgers.

Every group of a run started with ``SpareGroup(..., ledger=DIR)`` writes one JSON line per
committed step to ``DIR``. The check reads every ``.jsonl`` file there and verifies that each
shard type of each committed step was summed exactly once: exit 0 with one summary line, or
exit 1 with one line naming the step and the type that fails.
"""

from __future__ import annotations

import argparse
import os
import sys

from spare_fast.cli._common import UsageError, require


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ledger", help="verify the step ledgers of a SpareGroup run")
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    c = actions.add_parser(
        "check", help="verify that every type of every committed step was summed exactly once"
    )
    c.add_argument("folder", metavar="DIR", help="the folder given as SpareGroup(ledger=...)")
    c.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    require("torch", "spare-fast ledger")
    if not os.path.isdir(args.folder):
        raise UsageError(f"DIR = {args.folder!r} is not a folder")
    from spare_fast.torch._ledger import LedgerError, check

    try:
        found = check(args.folder)
    except LedgerError as exc:
        print(f"ledger check FAILED: {exc}", file=sys.stderr)
        return 1
    print(
        f"ledger check ok: {found['steps']} committed steps, every type summed exactly once "
        f"({found['files']} files, {found['epochs']} epochs, {found['patched']} patched sums)"
    )
    return 0
