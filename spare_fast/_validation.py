"""One home for argument checks at the Python boundary.

Every public function of the package normalises its arguments through these helpers, so a bad
value is rejected the same way everywhere: ``TypeError`` for the wrong kind of value,
``ValueError`` for a value of the right kind outside its range, each message naming the argument
and the exact offending value (``groups[3] = 18446744073709551615 is not in [0, 6)``).

The helpers never compute with the caller's values before checking them: no ``abs`` of an
``int64`` minimum, no cast that wraps, no float round trip of a large integer, and no allocation
sized by an unchecked value.

The second half holds the parsers of text options (:func:`int_at_least`, :func:`number`,
:func:`duration`, :func:`int_list`, ...), which raise ``argparse.ArgumentTypeError`` with the
text after ``=`` (argparse names the option before it), :class:`UsageError` for a user error
found after parsing, and :func:`require` for a missing optional package.  The command line
(:mod:`spare_fast.cli`) and the library's own harnesses (:mod:`spare_fast.testing.bench_graph`)
take them from here; the command line adds only its one-line printing and exit codes.
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import math
import operator
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from spare_fast._durations import parse_duration

__all__ = [
    "INT_OPTION_MAX",
    "MAX_SEED",
    "UsageError",
    "bool_array",
    "check_int",
    "check_number",
    "check_seed",
    "choice_list",
    "duration",
    "fits_array",
    "index_array",
    "int_array",
    "int_at_least",
    "int_list",
    "number",
    "parse_int",
    "require",
    "stacks_array",
    "timedelta_arg",
]

#: Seeds are unsigned 64-bit integers (numpy's ``SeedSequence`` accepts any of them).
MAX_SEED = 2**64 - 1


def _range_text(lo: int | None, hi: int | None) -> str:
    if lo is not None and hi is not None:
        return f"is not in [{lo}, {hi}]"
    if lo is not None:
        return f"must be >= {lo}"
    return f"must be <= {hi}"


def check_int(name: str, value: Any, *, lo: int | None = None, hi: int | None = None) -> int:
    """``value`` as a Python ``int`` in ``[lo, hi]`` (either bound optional).

    Accepts ``int`` and numpy integer scalars; rejects ``bool``, floats (even whole ones) and
    anything else with ``TypeError``; out-of-range values with ``ValueError``.
    """
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} = {value!r} must be an int, not a bool")
    try:
        v = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} = {value!r} must be an int") from None
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise ValueError(f"{name} = {v} {_range_text(lo, hi)}")
    return v


def check_seed(name: str, value: Any) -> int:
    """A seed: an int in ``[0, 2**64)``."""
    return check_int(name, value, lo=0, hi=MAX_SEED)


def check_number(
    name: str,
    value: Any,
    *,
    lo: float = -math.inf,
    hi: float = math.inf,
    lo_open: bool = False,
    hi_open: bool = False,
    allow_inf: bool = False,
) -> float:
    """``value`` as a ``float`` in the interval from ``lo`` to ``hi``.

    Accepts ints, floats and numpy real scalars; rejects ``bool`` and non-numbers with
    ``TypeError``; NaN, infinities (unless ``allow_inf``) and out-of-range values with
    ``ValueError``. ``lo_open``/``hi_open`` exclude the bound itself.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, (int, float, np.integer, np.floating)
    ):
        raise TypeError(f"{name} = {value!r} must be a number")
    v = float(value)
    if math.isnan(v):
        raise ValueError(f"{name} = {value!r} must not be NaN")
    if math.isinf(v) and not allow_inf:
        raise ValueError(f"{name} = {value!r} must be finite")
    if v < lo or (lo_open and v == lo) or v > hi or (hi_open and v == hi):
        left = "(" if lo_open else "["
        right = ")" if hi_open else "]"
        raise ValueError(f"{name} = {value!r} is not in {left}{lo}, {hi}{right}")
    return v


def _index_text(name: str, index: tuple[int, ...]) -> str:
    return f"{name}[{', '.join(str(i) for i in index)}]"


def _exact_from_sequence(name: str, values: Any, shape: tuple[int, ...]) -> np.ndarray:
    """Python integers that numpy could not hold exactly (it made floats or objects).

    Returns them as an object array of exact ints, or raises ``TypeError`` naming the first
    element that is not an integer.
    """
    obj = np.empty(shape, dtype=object)
    obj[...] = np.asarray(values, dtype=object)
    for index in np.ndindex(*shape):
        item = obj[index]
        if isinstance(item, (bool, np.bool_)):
            raise TypeError(f"{_index_text(name, index)} = {item!r} must be an int, not a bool")
        try:
            obj[index] = operator.index(item)
        except TypeError:
            raise TypeError(
                f"{name} must hold integers, got dtype {np.asarray(values).dtype} "
                f"({_index_text(name, index)} = {item!r})"
            ) from None
    return obj


def _value_error(shown: str, v: int, lo: int, hi: int) -> Exception:
    return ValueError(f"{shown} = {v} {_range_text(lo, hi)}")


def int_array(
    name: str,
    values: Any,
    dtype: Any = np.int64,
    *,
    ndim: int | None = 1,
    lo: int | None = None,
    hi: int | None = None,
    scalar_ok: bool = False,
) -> np.ndarray:
    """``values`` as a C-contiguous array of integer ``dtype``, every element in range.

    The range is ``[lo, hi]`` intersected with what ``dtype`` holds. A conforming C-contiguous
    array is returned as is (no copy); anything else is converted once. The first element out
    of range is named with its index and exact value, before any cast that could wrap it.

    Args:
        name: the argument's name, for messages.
        values: an array or a (nested) sequence of ints.
        dtype: the integer dtype the kernel takes.
        ndim: the required number of dimensions (``None``: any).
        lo, hi: optional bounds, inclusive.
        scalar_ok: accept a scalar as a 1-element 1-D array.

    Raises:
        TypeError: a non-integer element or dtype (floats and bools included).
        ValueError: a wrong number of dimensions, or an element out of range.
    """
    return _int_array(name, values, dtype, ndim, lo, hi, scalar_ok, _value_error)


def index_array(name: str, values: Any, n: int) -> np.ndarray:
    """Ids in ``[0, n)`` as a 1-D C-contiguous int32 array; a scalar is one id.

    Raises ``IndexError`` naming the first id out of range with its exact value
    (``groups[0] = 18446744073709551615 is not in [0, 6)``), ``TypeError`` for non-integers
    and ``ValueError`` for a wrong number of dimensions. Conforming int32 input is not copied.
    """
    if isinstance(values, (bool, np.bool_)):
        raise TypeError(f"{name} = {values!r} must be an int or a sequence of ints, not a bool")
    if isinstance(values, (int, np.integer)) and 0 <= values < n:
        return np.array((values,), dtype=np.int32)  # the common single-id call, checked exactly
    if (
        type(values) is np.ndarray
        and values.dtype == np.int32
        and values.ndim == 1
        and values.flags.c_contiguous
    ):
        # Conforming input (the batch and simulator calls): two reductions, no copy. A short
        # array is judged from its Python ints, cheaper than two ufunc reductions.
        ids = values.tolist() if values.size <= 16 else (int(values.min()), int(values.max()))
        if not ids or (min(ids) >= 0 and max(ids) < n):
            return values
    if np.ndim(values) == 0:
        values = [values]

    def fail(shown: str, v: int, lo: int, hi: int) -> Exception:
        return IndexError(f"{shown} = {v} is not in [0, {n}) (index out of range)")

    return _int_array(name, values, np.int32, 1, 0, n - 1, False, fail)


def fits_array(name: str, values: Any, dtype: Any) -> np.ndarray:
    """``values`` as a 1-D C-contiguous array of ``dtype``; ``ValueError`` if an element does
    not fit it (``supply[2] = 9223372036854775808 does not fit int64``, the exact value)."""
    dt = np.dtype(dtype)

    def fail(shown: str, v: int, lo: int, hi: int) -> Exception:
        return ValueError(f"{shown} = {v} does not fit {dt.name}")

    return _int_array(name, values, dt, 1, None, None, False, fail)


def stacks_array(name: str, values: Any) -> np.ndarray:
    """An ``(n_groups, height)`` stacks array as C-contiguous int32, ids bounded first.

    Checks the shape (2-D, at least one group and one layer, ``n_groups * height < 2**31``)
    and that every id is in ``[0, n_groups * height)`` -- a type needs a cell -- before any
    cast or any allocation sized by an id. The remaining invariants (distinct types per
    stack, equal holder counts) are checked by the C++ core's one ``check_stacks``.
    """
    shape = np.shape(values)
    if len(shape) != 2:
        raise ValueError(f"{name} must be 2-D (n_groups, height), got shape {shape}")
    cells = int(shape[0]) * int(shape[1])
    if cells == 0:
        raise ValueError(f"{name} needs at least one group and one layer, got shape {shape}")
    if cells > np.iinfo(np.int32).max:
        raise ValueError(f"{name} has {cells} cells; n_groups * height must be < 2**31")
    return int_array(name, values, np.int32, ndim=2, lo=0, hi=cells - 1)


def _int_array(
    name: str,
    values: Any,
    dtype: Any,
    ndim: int | None,
    lo: int | None,
    hi: int | None,
    scalar_ok: bool,
    fail: Any,
) -> np.ndarray:
    dt = np.dtype(dtype)
    info = np.iinfo(dt)
    lo_eff = info.min if lo is None else max(lo, int(info.min))
    hi_eff = info.max if hi is None else min(hi, int(info.max))
    if values is None:
        raise TypeError(f"{name} must be an array of integers, got None")
    if isinstance(values, (bool, np.bool_)):
        raise TypeError(f"{name} = {values!r} must be an int or an array of ints, not a bool")
    arr = np.asarray(values)
    if arr.ndim == 0 and scalar_ok:
        arr = arr.reshape(1)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {arr.shape}")
    if arr.size == 0:
        return np.zeros(arr.shape, dtype=dt)  # np.asarray([]) is float64: any empty input will do
    if arr.dtype.kind == "b":
        raise TypeError(f"{name} must hold integers, got dtype bool")
    if arr.dtype.kind not in "iu":
        if isinstance(values, np.ndarray) or arr.dtype.kind not in "fO":
            raise TypeError(f"{name} must hold integers, got dtype {arr.dtype}")
        # A Python sequence of ints beyond int64/uint64 (or mixing signs with values above
        # 2**63) comes out as float64 or object: recover the exact values before judging them.
        exact = _exact_from_sequence(name, values if arr.ndim else [values], arr.shape)
        for index in np.ndindex(*arr.shape):
            v = exact[index]
            if v < lo_eff or v > hi_eff:
                shown = name if (scalar_ok and np.ndim(values) == 0) else _index_text(name, index)
                raise fail(shown, v, lo_eff, hi_eff)
        return np.ascontiguousarray(exact.astype(dt))
    # A dtype whose every value is in range needs no look at the values (int32 ids into
    # int32: the common case, where the scan below would cost as much as a kernel call).
    src = np.iinfo(arr.dtype)
    if int(src.min) >= lo_eff and int(src.max) <= hi_eff:
        return np.ascontiguousarray(arr, dtype=dt)
    # Comparisons of integers with Python ints are exact in numpy >= 2 (no wrap). Two
    # reductions, and the element-wise mask only to name the culprit.
    if int(arr.min()) < lo_eff or int(arr.max()) > hi_eff:
        bad = (arr < lo_eff) | (arr > hi_eff)
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        shown = name if (scalar_ok and np.ndim(values) == 0) else _index_text(name, index)
        raise fail(shown, int(arr[index]), lo_eff, hi_eff)
    return np.ascontiguousarray(arr, dtype=dt)


def bool_array(name: str, values: Any, *, length: int | None = None) -> np.ndarray:
    """``values`` as a 1-D C-contiguous ``uint8`` array of 0/1 flags.

    Accepts booleans and the integers 0 and 1; ``length`` fixes the size.
    """
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if length is not None and arr.shape[0] != length:
        raise ValueError(f"{name} has length {arr.shape[0]}, expected {length}")
    if arr.dtype != np.bool_:
        if arr.size and arr.dtype.kind not in "iu":
            raise TypeError(f"{name} must be booleans, got dtype {arr.dtype}")
        bad = (arr != 0) & (arr != 1)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{name}[{i}] = {arr[i]} is not a boolean")
    return np.ascontiguousarray(arr, dtype=np.uint8)


# -- user errors and optional packages ------------------------------------------------------------
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


def require(module: str, feature: str) -> None:
    """Raise :class:`UsageError` naming the extra to install when ``module`` is missing."""
    if importlib.util.find_spec(module) is None:
        extra = EXTRAS.get(module)
        how = f"pip install 'spare-fast[{extra}]'" if extra else f"pip install {module}"
        raise UsageError(f"{feature} needs {module}, which is not installed: {how}")


# -- option types -------------------------------------------------------------------------------
# The largest int any integer option takes when it states no bound of its own: it fits an int64,
# so no option value overflows a C integer further in.
INT_OPTION_MAX = 2**63 - 1

# ``1e6``, ``2.5e3``: an integer written in scientific notation (ASCII digits only).
_SCIENTIFIC = re.compile(r"([+-]?)(\d+)(?:\.(\d*))?[eE]\+?(\d+)", re.ASCII)


def _option_error(text: str) -> Exception:
    """argparse's error for a bad option value (imported here: ``import spare_fast`` does not
    pay for argparse)."""
    import argparse

    return argparse.ArgumentTypeError(text)


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
        raise _option_error(f"= {text!r} is not an integer")
    if digits == "0":  # zero, whatever its exponent: no power of ten is built
        if not lo <= 0 <= hi:
            raise _out_of_range(text, lo, hi, 0 < lo)
        return 0
    bound = lo if sign == "-" else hi
    if len(digits) + shift > len(str(abs(bound))):
        raise _out_of_range(text, lo, hi, sign == "-")  # more digits than the bound has
    mantissa = int(digits)
    if shift < 0:
        mantissa, rest = divmod(mantissa, 10**-shift)
        if rest:
            raise _option_error(f"= {text!r} is not an integer")
        shift = 0
    value = mantissa * 10**shift
    value = -value if sign == "-" else value
    if value < lo or value > hi:
        raise _out_of_range(text, lo, hi, value < lo)
    return value


def _out_of_range(text: str, lo: int, hi: int, below: bool) -> Exception:
    return _option_error(
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
            raise _option_error(f"= {text!r} is not a number") from None
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

    def parse(text: str) -> float | None:
        t = text.strip()
        if optional and t.lower() == "none":
            return None
        if not t.isascii():  # the number pattern would read full-width digits
            raise _option_error(f"= {text!r} is not a duration (60s, 5min, 1h)")
        if t.lower() in ("inf", "infinity"):
            value = math.inf
        else:
            sign = -1.0 if t.startswith("-") else 1.0
            try:
                value = sign * parse_duration(t.lstrip("+-")).total_seconds()
            except ValueError as e:
                raise _option_error(f"= {text!r}: {e}") from None
            except OverflowError:  # beyond what datetime.timedelta holds
                longest = f"{dt.timedelta.max.total_seconds():.4g} s (999999999 days)"
                also = "; inf means never" if allow_inf else ""
                raise _option_error(f"= {text} is too long: at most {longest}{also}") from None
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
        raise _option_error(f"= {text!r} must be finite")
    if lo is not None and (value < lo or (lo_open and value == lo)):
        raise _option_error(f"= {text} must be {'>' if lo_open else '>='} {lo:g}")
    if hi is not None and value > hi:
        raise _option_error(f"= {text} must be <= {hi:g}")
    return value


def int_list(lo: int = 1, hi: int | None = None) -> Callable[[str], list[int]]:
    """``1-20``, ``2,3,8`` or ``1-4,8``: sorted unique ints, each in ``[lo, hi]``."""

    def parse(text: str) -> list[int]:
        out: set[int] = set()
        if not text.isascii():  # int() reads full-width and other Unicode digits
            raise _option_error(f"= {text!r} is not a list like 1-20 or 2,3,8")
        for part in text.split(","):
            part = part.strip()
            try:
                if re.fullmatch(r"\d+\s*-\s*\d+", part, re.ASCII):
                    a, b = (int(x) for x in part.split("-"))
                    if b < a:
                        raise _option_error(f"= {text!r}: range {part!r} is empty")
                    if b - a > 10_000_000:
                        raise _option_error(f"= {text!r}: range {part!r} is too long")
                    out.update(range(a, b + 1))
                elif part:
                    out.add(int(part))
            except ValueError:
                raise _option_error(f"= {text!r} is not a list like 1-20 or 2,3,8") from None
        if not out:
            raise _option_error(f"= {text!r} is an empty list")
        bad = [v for v in sorted(out) if v < lo or (hi is not None and v > hi)]
        if bad:
            bound = f">= {lo}" if hi is None else f"in [{lo}, {hi}]"
            if len(out) == 1:
                raise _option_error(f"= {text} must be {bound}")
            raise _option_error(f"= {text} has {bad[0]}; each value must be {bound}")
        return sorted(out)

    parse.__name__ = "list"
    return parse


def choice_list(choices: Sequence[str]) -> Callable[[str], list[str]]:
    """A comma-separated list of names from ``choices`` (order kept, repeats dropped)."""

    def parse(text: str) -> list[str]:
        names = list(dict.fromkeys(s.strip() for s in text.split(",") if s.strip()))
        if not names:
            raise _option_error(f"= {text!r} is an empty list")
        for n in names:
            if n not in choices:
                raise _option_error(f"= {text!r}: {n!r} is not one of {', '.join(choices)}")
        return names

    parse.__name__ = "list"
    return parse
