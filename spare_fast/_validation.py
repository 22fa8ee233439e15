"""One home for argument checks at the Python boundary.

Every public function of the package normalises its arguments through these helpers, so a bad
value is rejected the same way everywhere: ``TypeError`` for the wrong kind of value,
``ValueError`` for a value of the right kind outside its range, each message naming the argument
and the exact offending value (``groups[3] = 18446744073709551615 is not in [0, 6)``).

The helpers never compute with the caller's values before checking them: no ``abs`` of an
``int64`` minimum, no cast that wraps, no float round trip of a large integer, and no allocation
sized by an unchecked value.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

__all__ = [
    "bool_array",
    "check_int",
    "check_number",
    "check_seed",
    "fits_array",
    "index_array",
    "int_array",
    "stacks_array",
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
    # Comparisons of an integer array with Python ints are exact in numpy >= 2 (no wrap).
    bad = (arr < lo_eff) | (arr > hi_eff)
    if bad.any():
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
