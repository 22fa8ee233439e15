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
import contextlib
import datetime as dt
import importlib.util
import math
import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TextIO, cast

__all__ = [
    "ArgumentParser",
    "OutputError",
    "UsageError",
    "check_memory",
    "check_output_file",
    "check_output_folder",
    "duration",
    "int_at_least",
    "int_list",
    "number",
    "parse_int",
    "require",
    "choice_list",
    "run_main",
    "timedelta_arg",
    "usage_from_value_error",
    "writing",
]

EXIT_USAGE = 2
EXIT_IO = 1

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


class OutputError(Exception):
    """An output that cannot be written: printed as one line, exit status 1.

    ``OutputError("--json", "/dev/full", err)`` reads
    ``--json = /dev/full: cannot write it (No space left on device)``.
    """

    def __init__(
        self, option: str, path: Any, error: OSError | str, *, stdout: bool = False
    ) -> None:
        why = error if isinstance(error, str) else (error.strerror or str(error))
        text = f"{option} = {path}: cannot write it" if option else f"cannot write {path}"
        super().__init__(f"{text} ({why})")
        self.stdout = stdout  # standard output failed: it is silenced before the exit


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
    stdout = sys.stdout
    sys.stdout = cast(TextIO, _CheckedStdout(stdout))
    try:
        return _run(parser, args_list, run, debug)
    finally:
        sys.stdout = stdout


def _run(
    parser: argparse.ArgumentParser,
    args_list: list[str],
    run: Callable[[argparse.Namespace], int | None] | None,
    debug: bool,
) -> int:
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
        # The reader went away: nothing more to say.
        _silence_stdout()
        return 0
    except (OutputError, OSError) as e:
        # An output that cannot be written (a full disk, standard output on /dev/full) or any
        # other I/O failure: one line, exit status 1.
        if debug:
            raise
        if isinstance(e, OutputError) and e.stdout:
            _silence_stdout()
        if isinstance(e, OSError) and e.filename is not None:
            text = f"{e.filename}: {e.strerror or e}"
        else:
            text = str(e)
        print(f"{_prog(parser, args_list)}: {text}", file=sys.stderr)
        return EXIT_IO
    except KeyboardInterrupt:
        if debug:
            raise
        print(f"{parser.prog}: interrupted", file=sys.stderr)
        return 130


class _CheckedStdout:
    """Standard output whose write errors (``> /dev/full``) are :class:`OutputError`.

    A closed pipe stays a ``BrokenPipeError`` (:func:`run_main` ends quietly on it).
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            raise
        except OSError as e:
            raise OutputError("", "standard output", e, stdout=True) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as e:
            raise OutputError("", "standard output", e, stdout=True) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _silence_stdout() -> None:
    """Point stdout at devnull, so that the interpreter's own flush at exit does not fail again."""
    try:
        fd = sys.stdout.fileno()
    except (OSError, ValueError):  # not a file (a test's capture): nothing flushes it at exit
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


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
# The largest int any integer option takes when it states no bound of its own: it fits an int64,
# so no option value overflows a C integer further in.
INT_OPTION_MAX = 2**63 - 1

# ``1e6``, ``2.5e3``: an integer written in scientific notation (ASCII digits only).
_SCIENTIFIC = re.compile(r"([+-]?)(\d+)(?:\.(\d*))?[eE]\+?(\d+)", re.ASCII)


def parse_int(text: str, lo: int = -INT_OPTION_MAX - 1, hi: int = INT_OPTION_MAX) -> int:
    """``text`` as an exact int in ``[lo, hi]``: ASCII digits, or scientific notation (``1e6``).

    Raises ``argparse.ArgumentTypeError`` with the text after ``=`` (argparse puts the option
    before it): ``= '1.5' is not an integer`` for anything that is not an integer, full-width
    and other non-ASCII digits included; ``= 1e400 must be <= ...`` out of range, judged from
    the digit count before any exact value of that size is built.
    """
    t = text.strip()
    m = _SCIENTIFIC.fullmatch(t) if t.isascii() else None
    if m is not None:
        sign, whole, frac, exp = m.groups()
        frac = (frac or "").rstrip("0")
        digits = (whole + frac).lstrip("0") or "0"
        shift = (int(exp) if len(exp.lstrip("0")) <= 6 else 10**7) - len(frac)
    elif t.isascii() and re.fullmatch(r"[+-]?\d+", t, re.ASCII):
        sign, digits, shift = t[0] if t[0] in "+-" else "", t.lstrip("+-").lstrip("0") or "0", 0
    else:
        raise argparse.ArgumentTypeError(f"= {text!r} is not an integer")
    bound = lo if sign == "-" else hi
    if digits != "0" and len(digits) + shift > len(str(abs(bound))):
        raise _out_of_range(text, lo, hi, sign == "-")  # more digits than the bound has
    mantissa = int(digits)
    if shift < 0:
        mantissa, rest = divmod(mantissa, 10**-shift)
        if rest:
            raise argparse.ArgumentTypeError(f"= {text!r} is not an integer")
        shift = 0
    value = mantissa * 10**shift
    value = -value if sign == "-" else value
    if value < lo or value > hi:
        raise _out_of_range(text, lo, hi, value < lo)
    return value


def _out_of_range(text: str, lo: int, hi: int, below: bool) -> argparse.ArgumentTypeError:
    return argparse.ArgumentTypeError(
        f"= {text.strip()} must be >= {lo}" if below else f"= {text.strip()} must be <= {hi}"
    )


def int_at_least(lo: int, hi: int | None = None) -> Callable[[str], int]:
    """An int option in ``[lo, hi]`` (``hi`` None: up to :data:`INT_OPTION_MAX`).

    Accepts ``1e6``; refuses ``1.5``, ``1e400`` and non-ASCII digits with one line.
    """
    top = INT_OPTION_MAX if hi is None else hi

    def parse(text: str) -> int:
        return parse_int(text, lo, top)

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
            if not text.isascii():  # float() reads full-width and other Unicode digits
                raise ValueError(text)
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
        if not t.isascii():  # the number pattern would read full-width digits
            raise argparse.ArgumentTypeError(f"= {text!r} is not a duration (60s, 5min, 1h)")
        if t.lower() in ("inf", "infinity"):
            value = math.inf
        else:
            sign = -1.0 if t.startswith("-") else 1.0
            try:
                value = sign * parse_duration(t.lstrip("+-")).total_seconds()
            except ValueError as e:
                raise argparse.ArgumentTypeError(f"= {text!r}: {e}") from None
            except OverflowError:  # beyond what datetime.timedelta holds
                longest = f"{dt.timedelta.max.total_seconds():.4g} s (999999999 days)"
                also = "; inf means never" if allow_inf else ""
                raise argparse.ArgumentTypeError(
                    f"= {text} is too long: at most {longest}{also}"
                ) from None
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
        if not text.isascii():  # int() reads full-width and other Unicode digits
            raise argparse.ArgumentTypeError(f"= {text!r} is not a list like 1-20 or 2,3,8")
        for part in text.split(","):
            part = part.strip()
            try:
                if re.fullmatch(r"\d+\s*-\s*\d+", part, re.ASCII):
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


def check_output_file(option: str, path: str | os.PathLike[str] | None) -> None:
    """Refuse an output file before the work: a missing folder or a folder given (exit 2),
    or a place that cannot be written (exit 1, :class:`OutputError`).

    Opens the file for appending and closes it again, so nothing is truncated; a file that
    did not exist before is removed again.
    """
    if path is None:
        return
    text = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(text))
    if not os.path.isdir(folder):
        raise UsageError(option, text, f"is in a folder that does not exist ({folder})")
    if os.path.isdir(text):
        raise UsageError(option, text, "is a folder, not a file")
    existed = os.path.lexists(text)
    try:
        with open(text, "ab"):
            pass
    except OSError as e:
        raise OutputError(option, text, e) from None
    if not existed:
        with contextlib.suppress(OSError):
            os.remove(text)


def check_output_folder(option: str, path: str | os.PathLike[str]) -> None:
    """Make the output folder ``path`` and check it takes files, before the work.

    A missing parent folder is a :class:`UsageError` (exit 2); a file in the way or a folder
    that cannot be written is an :class:`OutputError` (exit 1).
    """
    text = os.fspath(path)
    parent = os.path.dirname(os.path.abspath(text))
    if not os.path.isdir(parent):
        raise UsageError(option, text, f"is in a folder that does not exist ({parent})")
    if os.path.lexists(text) and not os.path.isdir(text):
        raise OutputError(option, text, "it is a file, not a folder")
    try:
        os.makedirs(text, exist_ok=True)
        with tempfile.TemporaryFile(dir=text):
            pass
    except OSError as e:
        raise OutputError(option, text, e) from None


@contextlib.contextmanager
def writing(option: str, path: str | os.PathLike[str]) -> Iterator[None]:
    """Turn an ``OSError`` in the block (a full disk) into :class:`OutputError` for ``option``."""
    try:
        yield
    except BrokenPipeError:
        raise
    except OSError as e:
        raise OutputError(option, os.fspath(path), e) from None


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
