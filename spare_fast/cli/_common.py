"""What every command line of the project shares: one-line errors, exit codes, option types.

The pattern a subcommand module follows (``spare_fast/cli/<name>.py``):

* ``add_parser(sub)`` adds its parser with ``sub.add_parser(...)``; the parser is then a
  :class:`ArgumentParser`, whose :meth:`~ArgumentParser.error` prints one line
  (``spare-fast simulate: --groups = 0 must be >= 1``) and exits with status 2.
* Option types (:func:`int_at_least`, :func:`number`, :func:`duration`, :func:`int_list`,
  ...) are defined in :mod:`spare_fast._validation`, with :class:`UsageError` and
  :func:`require`, and imported here under the same names; a bad value is refused while
  parsing, before any work.
* Checks that span options (``--layout sidon`` with ``--groups 200 -r 15``), memory estimates
  (:func:`check_memory`) and missing optional packages (:func:`require`) raise
  :class:`UsageError` from the subcommand's ``run`` before its work starts;
  :func:`run_main` prints it as one line and returns 2.
* Outputs are checked before the work (:func:`check_output_file`,
  :func:`check_output_folder`) and written inside :func:`writing`; an output that cannot be
  written is :class:`OutputError`, one line and exit status 1, as is any other ``OSError``
  (standard output on a full disk included).
* :func:`run_main` also ends quietly on a closed pipe (``spare-fast plan --json | head -1``)
  and on Ctrl-C, and shows tracebacks only under ``--debug``.

Scripts outside the package (``tools/*.py``, ``examples/train_mlp.py``) build their parser
with :class:`ArgumentParser` and call :func:`run_main` the same way.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TextIO, cast

# The option parsers, UsageError and require live with the library's other checks; the command
# line takes them from there (names kept here for its modules and scripts).
from spare_fast._validation import (
    UsageError,
    choice_list,
    duration,
    int_at_least,
    int_list,
    number,
    parse_int,
    require,
    timedelta_arg,
)

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


# -- checks before the work ------------------------------------------------------------------------
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
