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


# -- option parsers (the command line's types, shared with the library's harnesses) --------------
def _option_error(parse, text):
    import argparse

    with pytest.raises(argparse.ArgumentTypeError) as info:
        parse(text)
    return str(info.value)


@pytest.mark.parametrize(
    ("text", "value"),
    [("0", 0), ("12", 12), (" 7 ", 7), ("+5", 5), ("1e6", 10**6), ("1.5e3", 1500), ("2.50e1", 25)],
)
def test_int_option_reads_exact_integers(text, value):
    from spare_fast._validation import int_at_least

    got = int_at_least(0)(text)
    assert got == value and type(got) is int


def test_int_option_judges_a_huge_exponent_before_building_it():
    from spare_fast._validation import INT_OPTION_MAX, int_at_least

    parse = int_at_least(0)
    assert _option_error(parse, "1e400") == f"= 1e400 must be <= {INT_OPTION_MAX}"
    assert _option_error(parse, "1e999999999999") == f"= 1e999999999999 must be <= {INT_OPTION_MAX}"
    assert _option_error(parse, "-1e400") == "= -1e400 must be >= 0"
    assert _option_error(int_at_least(1, 10), "11") == "= 11 must be <= 10"
    assert parse("0e999999999999") == 0


@pytest.mark.parametrize("text", ["1.5", "1e-3", "abc", "", "1_000", "\uff11\uff12", "\u0661"])
def test_int_option_refuses_what_is_not_an_ascii_integer(text):
    from spare_fast._validation import int_at_least

    assert _option_error(int_at_least(0), text) == f"= {text!r} is not an integer"


@pytest.mark.parametrize(
    ("parser", "text"),
    [
        ("number", "\uff10.5"),
        ("duration", "\uff15min"),
        ("int_list", "\uff12,3"),
    ],
)
def test_options_take_only_ascii_digits(parser, text):
    import spare_fast._validation as v

    parse = {"number": v.number(0), "duration": v.duration(0), "int_list": v.int_list()}[parser]
    assert repr(text) in _option_error(parse, text)


def test_a_duration_beyond_a_timedelta_says_the_longest():
    from spare_fast._validation import duration, timedelta_arg

    assert _option_error(duration(0), "1e308") == (
        "= 1e308 is too long: at most 8.64e+13 s (999999999 days)"
    )
    assert _option_error(duration(0, allow_inf=True), "1e400").endswith("; inf means never")
    assert duration(0, allow_inf=True)("inf") == float("inf")
    assert "too long" in _option_error(timedelta_arg(0), "1e20")


def test_library_harness_does_not_import_the_command_line():
    import subprocess
    import sys

    code = (
        "import sys, spare_fast.testing.bench_graph as bg, argparse\n"
        "bg.add_parser(argparse.ArgumentParser().add_subparsers())\n"
        "print(sorted(m for m in sys.modules if m.startswith('spare_fast.cli')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
