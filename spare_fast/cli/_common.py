"""What every command line of the project shares: one-line usage errors, exit codes, types.

The pattern a subcommand module follows (``spare_fast/cli/<name>.py``):

* ``add_parser(sub)`` adds its parser with ``sub.add_parser(...)``; the parser is then a
  :class:`ArgumentParser`, whose :meth:`~ArgumentParser.error` prints one line
  (``spare-fast simulate: --groups = 0 must be >= 1``) and exits with status 2.
* Option types come from here (:func:`int_at_least`, :func:`number`, :func:`duration`,
  :func:`int_list`, ...), so a bad value is refused while parsing, before any work.
* Checks that span options (``--layout sidon`` with ``--groups 200 -r 15``), memory estimates
  (:func:`check_memory`) and missing optional packages (:func:`require`) raise
  :class:`UsageError` from the subcommand's ``run`` before its work starts;
  :func:`run_main` prints it as one line and returns 2.
* :func:`run_main` also ends quietly on a closed pipe (``spare-fast plan --json | head -1``)
  and on Ctrl-C, and shows tracebacks only under ``--debug``.

Scripts outside the package (``tools/*.py``, ``examples/train_mlp.py``) build their parser
with :class:`ArgumentParser` and call :func:`run_main` the same way.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import math
import os
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any

__all__ = [
    "ArgumentParser",
    "UsageError",
    "check_memory",
    "duration",
    "int_at_least",
    "int_list",
    "number",
    "require",
    "choice_list",
    "run_main",
    "timedelta_arg",
    "usage_from_value_error",
]

EXIT_USAGE = 2

# Which extra installs what an optional feature imports (pyproject.toml's optional-dependencies).
EXTRAS = {
    "matplotlib": "plot",
    "scipy": "peers",
    "networkx": "peers",
    "ortools": "peers",
    "dask": "dask",
    "distributed": "dask",
    "torch": "torch",
    "torchft": "torch",
}


class UsageError(Exception):
    """A user error: printed as one line after the program's name, exit status 2.

    ``UsageError("--groups", 0, "must be >= 1")`` reads ``--groups = 0 must be >= 1``;
    ``UsageError("free text")`` prints the text as it is.
    """

    def __init__(self, option: str, value: Any = None, problem: str | None = None) -> None:
        text = option if problem is None else f"{option} = {value} {problem}"
        super().__init__(text)


class ArgumentParser(argparse.ArgumentParser):
    """argparse with one-line errors (``PROG: --option: problem``) and exit status 2.

    Subparsers made from it (``add_subparsers().add_parser``) are of this class too.
    """

    def error(self, message: str) -> Any:  # argparse's signature says NoReturn
        m = re.match(r"argument ([^:]+): (.*)", message, re.S)
        if m is not None:
            opts = m.group(1).split("/")
            long = [o for o in opts if o.startswith("--")]
            sep = " " if m.group(2).startswith("= ") else ": "
            message = f"{(long or opts)[0]}{sep}{m.group(2)}"
        message = " ".join(message.split())
        self.exit(EXIT_USAGE, f"{self.prog}: {message}\n")


def run_main(
    parser: argparse.ArgumentParser,
    argv: Sequence[str] | None,
    run: Callable[[argparse.Namespace], int | None] | None = None,
) -> int:
    """Parse ``argv`` and run; user errors become one line on stderr and exit status 2.

    ``run`` defaults to the parsed ``func`` (the subcommand's). ``--debug`` anywhere in
    ``argv`` re-raises instead, with the traceback. A closed stdout (``| head -1``) and Ctrl-C
    end quietly (status 0 and 130).
    """
    args_list = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args_list
    if debug:
        args_list = [a for a in args_list if a != "--debug"]
    try:
        args = parser.parse_args(args_list)
        func = run if run is not None else args.func
        code = int(func(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, inside the handler, not at exit
        return code
    except UsageError as e:
        if debug:
            raise
        print(f"{_prog(parser, args_list)}: {e}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        # The reader went away: nothing more to say. Point stdout at devnull so the
        # interpreter's own flush at exit does not raise again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        if debug:
            raise
        print(f"{parser.prog}: interrupted", file=sys.stderr)
        return 130


def _prog(parser: argparse.ArgumentParser, argv: Sequence[str]) -> str:
    """``spare-fast simulate`` for a subcommand's error (the subcommand names come first)."""
    words = [parser.prog]
    p: argparse.ArgumentParser | None = parser
    for a in argv:
        if p is None or a.startswith("-"):
            break
        sub = next((x for x in p._actions if isinstance(x, argparse._SubParsersAction)), None)
        if sub is None or a not in sub.choices:
            break
        words.append(a)
        p = sub.choices[a]
    return " ".join(words)


# -- option types -------------------------------------------------------------------------------
def int_at_least(lo: int, hi: int | None = None) -> Callable[[str], int]:
    """An int option in ``[lo, hi]`` (``hi`` None: no upper bound); accepts ``1e6``."""

    def parse(text: str) -> int:
        try:
            value = float(text) if re.fullmatch(r"[+-]?\d+(\.0*)?[eE]\+?\d+", text) else int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"= {text!r} is not an integer") from None
        if value != int(value):
            raise argparse.ArgumentTypeError(f"= {text!r} is not an integer")
        value = int(value)
        if value < lo:
            raise argparse.ArgumentTypeError(f"= {value} must be >= {lo}")
        if hi is not None and value > hi:
            raise argparse.ArgumentTypeError(f"= {value} must be <= {hi}")
        return value

    parse.__name__ = "integer"
    return parse


def number(
    lo: float | None = None,
    hi: float | None = None,
    *,
    lo_open: bool = False,
    allow_inf: bool = False,
    optional: bool = False,
) -> Callable[[str], float | None]:
    """A float option in a range; ``inf`` only with ``allow_inf``; ``none`` with ``optional``."""

    def parse(text: str) -> float | None:
        if optional and text.lower() == "none":
            return None
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"= {text!r} is not a number") from None
        return _in_range(value, text, lo, hi, lo_open, allow_inf)

    parse.__name__ = "number"
    return parse


def duration(
    lo: float = 0.0,
    *,
    lo_open: bool = False,
    allow_inf: bool = False,
    optional: bool = False,
    unit: str = "s",
) -> Callable[[str], float | None]:
    """A duration in seconds: ``60s``, ``5min``, ``1h30min``, ``2d``, ``1e9`` or ``90`` (s).

    The one duration syntax of every command (:func:`spare_fast.theory.plan.parse_duration`).
    """
    from spare_fast.theory.plan import parse_duration

    def parse(text: str) -> float | None:
        t = text.strip()
        if optional and t.lower() == "none":
            return None
        if t.lower() in ("inf", "infinity"):
            value = math.inf
        else:
            sign = -1.0 if t.startswith("-") else 1.0
            try:
                value = sign * parse_duration(t.lstrip("+-")).total_seconds()
            except (ValueError, OverflowError) as e:
                raise argparse.ArgumentTypeError(f"= {text!r}: {e}") from None
        return _in_range(value, text, lo, None, lo_open, allow_inf)

    parse.__name__ = "duration"
    return parse


def timedelta_arg(lo: float = 0.0, *, lo_open: bool = False) -> Callable[[str], dt.timedelta]:
    """As :func:`duration`, returning a :class:`datetime.timedelta`."""
    seconds = duration(lo, lo_open=lo_open)

    def parse(text: str) -> dt.timedelta:
        value = seconds(text)
        assert value is not None
        return dt.timedelta(seconds=value)

    parse.__name__ = "duration"
    return parse


def _in_range(
    value: float, text: str, lo: float | None, hi: float | None, lo_open: bool, allow_inf: bool
) -> float:
    if math.isnan(value) or (math.isinf(value) and not allow_inf):
        raise argparse.ArgumentTypeError(f"= {text!r} must be finite")
    if lo is not None and (value < lo or (lo_open and value == lo)):
        raise argparse.ArgumentTypeError(f"= {text} must be {'>' if lo_open else '>='} {lo:g}")
    if hi is not None and value > hi:
        raise argparse.ArgumentTypeError(f"= {text} must be <= {hi:g}")
    return value


def int_list(lo: int = 1, hi: int | None = None) -> Callable[[str], list[int]]:
    """``1-20``, ``2,3,8`` or ``1-4,8``: sorted unique ints, each in ``[lo, hi]``."""

    def parse(text: str) -> list[int]:
        out: set[int] = set()
        for part in text.split(","):
            part = part.strip()
            try:
                if re.fullmatch(r"\d+\s*-\s*\d+", part):
                    a, b = (int(x) for x in part.split("-"))
                    if b < a:
                        raise argparse.ArgumentTypeError(f"= {text!r}: range {part!r} is empty")
                    if b - a > 10_000_000:
                        raise argparse.ArgumentTypeError(f"= {text!r}: range {part!r} is too long")
                    out.update(range(a, b + 1))
                elif part:
                    out.add(int(part))
            except ValueError:
                raise argparse.ArgumentTypeError(
                    f"= {text!r} is not a list like 1-20 or 2,3,8"
                ) from None
        if not out:
            raise argparse.ArgumentTypeError(f"= {text!r} is an empty list")
        bad = [v for v in sorted(out) if v < lo or (hi is not None and v > hi)]
        if bad:
            bound = f">= {lo}" if hi is None else f"in [{lo}, {hi}]"
            if len(out) == 1:
                raise argparse.ArgumentTypeError(f"= {text} must be {bound}")
            raise argparse.ArgumentTypeError(f"= {text} has {bad[0]}; each value must be {bound}")
        return sorted(out)

    parse.__name__ = "list"
    return parse


def choice_list(choices: Sequence[str]) -> Callable[[str], list[str]]:
    """A comma-separated list of names from ``choices`` (order kept, repeats dropped)."""

    def parse(text: str) -> list[str]:
        names = list(dict.fromkeys(s.strip() for s in text.split(",") if s.strip()))
        if not names:
            raise argparse.ArgumentTypeError(f"= {text!r} is an empty list")
        for n in names:
            if n not in choices:
                raise argparse.ArgumentTypeError(
                    f"= {text!r}: {n!r} is not one of {', '.join(choices)}"
                )
        return names

    parse.__name__ = "list"
    return parse


# -- checks before the work ------------------------------------------------------------------------
def require(module: str, feature: str) -> None:
    """Raise :class:`UsageError` naming the extra to install when ``module`` is missing."""
    if importlib.util.find_spec(module) is None:
        extra = EXTRAS.get(module)
        how = f"pip install 'spare-fast[{extra}]'" if extra else f"pip install {module}"
        raise UsageError(f"{feature} needs {module}, which is not installed: {how}")


def available_memory() -> int:
    """Bytes this process may still allocate: MemAvailable, capped by an address-space limit."""
    avail = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    avail = int(line.split()[1]) * 1024
                    break
    except OSError:
        pass
    if avail is None:
        try:
            avail = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")
        except (ValueError, OSError, AttributeError):
            avail = 8 << 30
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY:
            avail = min(avail, soft // 2)
    except (ImportError, ValueError, OSError):
        pass
    return int(avail)


def _gib(n: float) -> str:
    return f"{n / 2**30:.1f} GiB" if n >= 2**28 else f"{n / 2**20:.0f} MiB"


def check_memory(
    option: str, value: int, bytes_for: Callable[[int], float], what: str = "this run"
) -> None:
    """Refuse ``value`` up front when ``bytes_for(value)`` exceeds the memory available.

    The message says the largest value that fits (``bytes_for`` must grow with its argument).
    """
    need = bytes_for(value)
    have = available_memory()
    if need <= have:
        return
    lo, hi = 1, max(1, value)
    while lo < hi:  # the largest value that fits
        mid = (lo + hi + 1) // 2
        if bytes_for(mid) <= have:
            lo = mid
        else:
            hi = mid - 1
    raise UsageError(
        option,
        value,
        f"needs about {_gib(need)} for {what}, more than the {_gib(have)} available; "
        f"at most {option} {lo} fits",
    )


def usage_from_value_error(e: Exception, fields: Sequence[str]) -> UsageError:
    """A library ``ValueError`` naming ``field = value`` as a UsageError naming ``--field``."""
    text = str(e)
    for f in sorted(fields, key=len, reverse=True):
        text = re.sub(rf"(?<![\w-]){f}(?= =)", "--" + f.replace("_", "-"), text)
    return UsageError(text)
