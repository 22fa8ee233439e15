"""The shared argument checks: exact messages, no wrap-around, no copies of conforming input."""

import numpy as np
import pytest

from spare_fast._validation import bool_array, check_int, check_number, check_seed, int_array


def test_check_int_accepts_ints_and_numpy_scalars():
    assert check_int("n", 3, lo=1) == 3
    assert check_int("n", np.int16(7), lo=1, hi=7) == 7
    assert type(check_int("n", np.uint64(2**64 - 1))) is int


@pytest.mark.parametrize("bad", [True, np.bool_(False), 1.0, "3", None])
def test_check_int_rejects_non_ints(bad):
    with pytest.raises(TypeError, match="n = .* must be an int"):
        check_int("n", bad)


def test_check_int_names_the_value_out_of_range():
    with pytest.raises(ValueError, match=r"^n = 0 must be >= 1$"):
        check_int("n", 0, lo=1)
    with pytest.raises(ValueError, match=r"^n = 9 is not in \[1, 8\]$"):
        check_int("n", 9, lo=1, hi=8)


def test_check_seed_range():
    assert check_seed("seed", 2**64 - 1) == 2**64 - 1
    with pytest.raises(ValueError, match="seed = -1"):
        check_seed("seed", -1)
    with pytest.raises(ValueError, match="seed = 18446744073709551616"):
        check_seed("seed", 2**64)


def test_check_number():
    assert check_number("x", 2, lo=0, lo_open=True) == 2.0
    with pytest.raises(ValueError, match=r"x = 0 is not in \(0"):
        check_number("x", 0, lo=0, lo_open=True)
    with pytest.raises(ValueError, match="NaN"):
        check_number("x", float("nan"))
    with pytest.raises(ValueError, match="finite"):
        check_number("x", float("inf"))
    assert check_number("x", float("inf"), allow_inf=True) == float("inf")
    with pytest.raises(TypeError):
        check_number("x", True)


def test_int_array_no_copy_when_conforming():
    a = np.arange(6, dtype=np.int32)
    assert int_array("a", a, np.int32) is a
    assert a.flags.writeable


@pytest.mark.parametrize(
    ("values", "dtype", "message"),
    [
        (np.array([-(2**63), 1], np.int64), np.int32, r"a\[0\] = -9223372036854775808 is not"),
        (np.array([2**63], np.uint64), np.int32, r"a\[0\] = 9223372036854775808 is not"),
        ([1, 2**64 - 1], np.int32, r"a\[1\] = 18446744073709551615 is not"),
        ([1, -1, 2**63], np.int64, r"a\[2\] = 9223372036854775808 is not"),
        ([2**70], np.int64, r"a\[0\] = 1180591620717411303424 is not"),
    ],
)
def test_int_array_names_exact_value(values, dtype, message):
    with pytest.raises(ValueError, match=message):
        int_array("a", values, dtype)


def test_int_array_bounds_and_2d_index():
    with pytest.raises(ValueError, match=r"^s\[1, 0\] = 5 is not in \[0, 4\]$"):
        int_array("s", [[0, 1], [5, 2]], np.int32, ndim=2, lo=0, hi=4)
    with pytest.raises(ValueError, match="must be 2-D"):
        int_array("s", [1, 2], np.int32, ndim=2)


def test_int_array_scalar():
    assert int_array("g", 3, np.int32, scalar_ok=True).tolist() == [3]
    with pytest.raises(ValueError, match=r"^g = 18446744073709551615 is not"):
        int_array("g", np.uint64(2**64 - 1), np.int32, scalar_ok=True, lo=0, hi=5)


@pytest.mark.parametrize("bad", [[1.5], np.array([1.0]), [True], ["x"], None])
def test_int_array_rejects_non_integers(bad):
    with pytest.raises(TypeError):
        int_array("a", bad)


def test_int_array_empty():
    out = int_array("a", [], np.int32)
    assert out.dtype == np.int32 and out.shape == (0,)


def test_bool_array():
    assert bool_array("alive", [True, 0, 1]).tolist() == [1, 0, 1]
    with pytest.raises(ValueError, match=r"alive\[0\] = 2 is not a boolean"):
        bool_array("alive", [2])
    with pytest.raises(ValueError, match="expected 3"):
        bool_array("alive", [1, 1], length=3)
