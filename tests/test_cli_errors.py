"""Every command answers a user error with one line on stderr naming the option, exit 2.

Most cases run in this process through the command's ``main(argv)`` (the ``run_cli`` fixture;
each fails while parsing or in the checks before any work, so the whole file takes seconds); a
few run as real processes: the console script's path, a closed pipe, ``--debug``, standard
output on a full disk, and the scripts under ``tools/`` and ``examples/``.  An output that
cannot be written is one line too, with exit status 1, found before the work where it can be.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import spare_fast

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_ROOT = Path(spare_fast.__file__).resolve().parents[1]
HUGE = "1000000000"

# The conftest.py fixture: run_cli(*argv) -> (exit status, stdout, stderr).
RunCli = Callable[..., tuple[int, str, str]]

# (argv, the option the one line must name)
CASES = [
    # simulate: every scenario field's range, cross-option checks, outputs, huge inputs
    ("simulate --groups 0", "--groups"),
    ("simulate -r 700", "--redundancy"),
    ("simulate -r 0", "--redundancy"),
    ("simulate --mtbf -300", "--mtbf"),
    ("simulate --mtbf 0", "--mtbf"),
    ("simulate --mtbf 5x", "--mtbf"),
    ("simulate --steps 0", "--steps"),
    ("simulate --steps 1.5", "--steps"),
    ("simulate --save -60", "--save"),
    ("simulate --jitter 5", "--jitter"),
    ("simulate --weibull-shape 0", "--weibull-shape"),
    ("simulate --racks 0", "--racks"),
    ("simulate --racks 700", "--racks"),
    ("simulate --rack-share 2", "--rack-share"),
    ("simulate --failure-units 0", "--failure-units"),
    ("simulate --failure-units 10", "--failure-units"),
    ("simulate --horizon 0", "--horizon"),
    ("simulate --layout sidon --groups 200 -r 15", "--layout sidon"),
    ("simulate --json /nonexistent/dir/x.json", "--json"),
    ("simulate --timeline-png /nonexistent/dir/x.png", "--timeline-png"),
    ("simulate --scheme foo", "--scheme"),
    (f"simulate --groups {HUGE} --gpus {HUGE}", "--groups"),
    # sweep
    ("sweep --n 0", "--n"),
    ("sweep --n abc", "--n"),
    ("sweep --redundancy 0-2", "--redundancy"),
    ("sweep --redundancy 5-2", "--redundancy"),
    ("sweep --schemes foo", "--schemes"),
    ("sweep --seeds 0", "--seeds"),
    ("sweep --n 200 --redundancy 300", "--redundancy"),
    ("sweep --workers 0", "--workers"),
    ("sweep --workers -1", "--workers"),
    ("sweep --mtbf 0", "--mtbf"),
    ("sweep --layout sidon --n 200 -r 15", "--layout sidon"),
    ("sweep --out /nonexistent/dir/out", "--out"),
    ("sweep --replot /nonexistent/dir", "--replot"),
    (f"sweep --n {HUGE} --gpus {HUGE}", "--n"),
    # bench and bench graph
    ("bench --groups 0", "--groups"),
    ("bench --redundancy 2000", "--redundancy"),
    ("bench --groups 100 --redundancy 200 --layouts random", "--redundancy"),
    ("bench --layouts foo", "--layouts"),
    ("bench --json /nonexistent/dir/x.json", "--json"),
    (f"bench --groups {HUGE}", "--groups"),
    ("bench graph --families foo", "--families"),
    ("bench graph --sizes abc", "--sizes"),
    ("bench graph --repeats 0", "--repeats"),
    # theory
    ("theory --groups 0", "--groups"),
    ("theory --redundancy 700", "--redundancy"),
    ("theory --redundancy 0", "--redundancy"),
    (f"theory --groups {HUGE}", "--groups"),
    ("theory --validate --trials 1", "--trials"),
    ("theory --validate --groups-grid 0", "--groups-grid"),
    ("theory --validate --out /nonexistent/dir/v", "--out"),
    # plan
    ("plan --groups 0 --mtbf 5min --restart 1h --save 60s", "--groups"),
    ("plan --groups 600 --mtbf 5min --restart 1h --save 0", "--save"),
    ("plan --groups 600 --gpus -1 --mtbf 5min --restart 1h --save 60s", "--gpus"),
    ("plan --groups 600 --gpus 10 --mtbf 5min --restart 1h --save 60s", "--gpus"),
    ("plan --groups 600 --mtbf 0 --restart 1h --save 60s", "--mtbf"),
    ("plan --groups 600 --mtbf 5x --restart 1h --save 60s", "--mtbf"),
    ("plan --groups 600 --mtbf 5min --restart 1h", "--save"),
    (f"plan --groups {HUGE}0 --mtbf 5min --restart 1h --save 60s", "--groups"),
    # demo and the command itself
    ("demo --seed -1", "--seed"),
    ("nosuchcommand", "nosuchcommand"),
    # a number too large for any integer option, checked before it is built
    ("simulate --groups 1e400", "--groups"),
    ("simulate --steps 1e400", "--steps"),
    ("simulate --racks -1e400", "--racks"),
    ("sweep --seeds 1e400", "--seeds"),
    ("sweep --seeds 1e7", "--seeds"),
    ("bench --groups 1e400", "--groups"),
    ("theory --groups 1e99999999999", "--groups"),
    ("plan --groups 1e400 --mtbf 5min --restart 1h --save 60s", "--groups"),
    ("lighthouse --bind 127.0.0.1:0 --join-timeout-ms 1e400", "--join-timeout-ms"),
    # seeds are unsigned 64-bit (demo also runs SEED + 1)
    ("demo --seed 18446744073709551616", "--seed"),
    ("demo --seed 18446744073709551615", "--seed"),
    ("simulate --seed 18446744073709551616", "--seed"),
    ("theory --seed 1e400", "--seed"),
    ("theory --seed -1", "--seed"),
    # durations beyond what a timedelta holds
    ("simulate --mtbf 1e308", "--mtbf"),
    ("simulate --restart 1e400", "--restart"),
    ("plan --groups 600 --mtbf 1e308 --restart 1h --save 60s", "--mtbf"),
    # only ASCII digits are numbers
    ("simulate --groups \uff11\uff12", "--groups"),
    ("simulate --mtbf \uff15min", "--mtbf"),
    ("simulate --jitter \uff10.1", "--jitter"),
    ("sweep --n \uff12\uff10\uff10", "--n"),
    ("plan --groups \uff16\uff10\uff10 --mtbf 5min --restart 1h --save 60s", "--groups"),
    ("lighthouse --bind 127.0.0.1:\uff12\uff19", "--bind"),
]


@pytest.mark.parametrize(("argv", "option"), CASES, ids=[c[0] for c in CASES])
def test_user_error_is_one_line_exit_2(argv: str, option: str, run_cli: RunCli) -> None:
    code, _, err = run_cli(*argv.split())
    assert code == 2, err
    lines = err.strip("\n").splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("spare-fast"), err
    assert option in lines[0], err
    assert "Traceback" not in err


def test_an_oversized_lighthouse_option_is_not_blamed_on_bind(
    run_cli: RunCli,
) -> None:
    for option in ("--quorum-tick-ms", "--heartbeat-timeout-ms", "--min-replicas"):
        code, _, err = run_cli("lighthouse", "--bind", "127.0.0.1:0", option, "1e30")
        assert code == 2, err
        assert err.startswith(f"spare-fast lighthouse: {option} = 1e30 must be <= ") and (
            "--bind" not in err
        ), err


def test_a_long_duration_does_not_leak_a_c_int_message(run_cli: RunCli) -> None:
    code, _, err = run_cli("simulate", "--mtbf", "1e308")
    assert code == 2
    assert err.strip() == (
        "spare-fast simulate: --mtbf = 1e308 is too long: at most 8.64e+13 s (999999999 days); "
        "inf means never"
    )


@pytest.fixture
def no_long_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if a command starts its simulation, sweep or validation."""
    import spare_fast.cli.theory
    import spare_fast.sim
    import spare_fast.sim.sweep  # noqa: F401  (the package re-exports a function of this name)

    def started(*args: object, **kwargs: object) -> None:
        raise AssertionError("the long work started before the output was checked")

    monkeypatch.setattr(spare_fast.sim, "simulate", started)
    monkeypatch.setattr(sys.modules["spare_fast.sim.sweep"], "sweep", started)
    monkeypatch.setattr(spare_fast.cli.theory, "validate", started)


@pytest.mark.parametrize(
    ("name", "problem"),
    [("run", "has no suffix"), ("run.foo", "has an unknown suffix .foo")],
)
def test_timeline_file_needs_a_known_suffix_before_the_run(
    name: str,
    problem: str,
    tmp_path: Path,
    run_cli: RunCli,
    no_long_work: None,
) -> None:
    path = tmp_path / name
    code, _, err = run_cli("simulate", "--timeline-png", str(path))
    assert code == 2, err
    assert err.strip().startswith(f"spare-fast simulate: --timeline-png = {path} {problem}"), err
    assert list(tmp_path.iterdir()) == []


@pytest.fixture
def unwritable_folder(tmp_path: Path) -> Path:
    """A folder in which no file can be made: read-only, or under /proc for root."""
    if os.geteuid() != 0:
        folder = tmp_path / "read-only"
        folder.mkdir()
        folder.chmod(0o500)
        return folder
    if not Path("/proc/self").is_dir():
        pytest.skip("root ignores permissions and there is no /proc")
    return Path("/proc")


def _one_io_error(code: int, err: str, prog: str, option: str, path: object) -> None:
    assert code == 1, err
    lines = err.strip("\n").splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith(f"{prog}: {option} = {path}: cannot write it ("), err


def test_output_file_in_an_unwritable_folder_fails_before_the_run(
    unwritable_folder: Path, run_cli: RunCli, no_long_work: None
) -> None:
    path = unwritable_folder / "spare-fast-test.json"
    for argv in (["simulate", "--json", str(path)], ["bench", "--json", str(path)]):
        code, _, err = run_cli(*argv)
        _one_io_error(code, err, f"spare-fast {argv[0]}", "--json", path)
    png = unwritable_folder / "spare-fast-test.png"
    code, _, err = run_cli("simulate", "--timeline-png", str(png))
    _one_io_error(code, err, "spare-fast simulate", "--timeline-png", png)


def test_output_folder_that_cannot_be_made_fails_before_the_work(
    unwritable_folder: Path, run_cli: RunCli, no_long_work: None
) -> None:
    out = unwritable_folder / "spare-fast-test-out"
    for argv in (["sweep", "--out", str(out)], ["theory", "--validate", "--out", str(out)]):
        code, _, err = run_cli(*argv)
        _one_io_error(code, err, f"spare-fast {argv[0]}", "--out", out)


def test_a_file_given_as_out_folder_fails_before_the_work(
    tmp_path: Path, run_cli: RunCli, no_long_work: None
) -> None:
    path = tmp_path / "a-file"
    path.write_text("kept\n")
    for argv in (["sweep", "--out", str(path)], ["theory", "--validate", "--out", str(path)]):
        code, _, err = run_cli(*argv)
        _one_io_error(code, err, f"spare-fast {argv[0]}", "--out", path)
        assert "a file, not a folder" in err
    assert path.read_text() == "kept\n"


def test_checking_an_output_file_keeps_what_it_holds(tmp_path: Path) -> None:
    from spare_fast.cli._common import check_output_file

    kept = tmp_path / "kept.json"
    kept.write_text("old\n")
    check_output_file("--json", str(kept))
    assert kept.read_text() == "old\n"
    check_output_file("--json", str(tmp_path / "new.json"))
    assert not (tmp_path / "new.json").exists()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_disk_is_one_line_exit_1(run_cli: RunCli) -> None:
    argv = ["simulate", "--groups", "10", "--steps", "10", "--json", "/dev/full"]
    code, _, err = run_cli(*argv)
    _one_io_error(code, err, "spare-fast simulate", "--json", "/dev/full")
    assert "No space left on device" in err


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_standard_output_on_a_full_disk_is_one_line_exit_1() -> None:
    cmd = (
        f"{sys.executable} -m spare_fast plan --groups 600 --mtbf 5min --restart 1h "
        "--save 60s > /dev/full"
    )
    p = _proc(["bash", "-c", cmd])
    assert p.returncode == 1, p.stderr
    assert p.stderr == "spare-fast plan: cannot write standard output (No space left on device)\n"


def test_huge_input_says_what_fits(run_cli: RunCli) -> None:
    code, _, err = run_cli("theory", "--groups", HUGE + "00")
    assert code == 2
    assert "GiB" in err and "at most --groups" in err


def test_missing_extra_is_named_before_the_work(
    monkeypatch: pytest.MonkeyPatch, run_cli: RunCli, tmp_path: Path
) -> None:
    real = importlib.util.find_spec

    def no_matplotlib(name: str, *a: object, **k: object) -> object:
        return None if name == "matplotlib" else real(name, *a, **k)

    monkeypatch.setattr(importlib.util, "find_spec", no_matplotlib)
    png = str(tmp_path / "t.png")
    for argv in (["simulate", "--timeline-png", png], ["sweep"], ["theory", "--validate"]):
        code, _, err = run_cli(*argv)
        assert code == 2, err
        assert "pip install 'spare-fast[plot]'" in err and len(err.splitlines()) == 1, err


def test_durations_parse_the_same_everywhere() -> None:
    from spare_fast.cli._common import duration

    d = duration(0)
    assert [d(x) for x in ("60s", "5min", "1h30min", "90", "1e9", "2d")] == [
        60.0,
        300.0,
        5400.0,
        90.0,
        1e9,
        172800.0,
    ]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(PACKAGE_ROOT)}


def _proc(args: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, capture_output=True, text=True, env=_env(), timeout=120, cwd=ROOT, **kw
    )  # type: ignore[call-overload]


def test_subprocess_one_line_and_debug_traceback() -> None:
    p = _proc([sys.executable, "-m", "spare_fast", "simulate", "--groups", "0"])
    assert p.returncode == 2
    assert p.stderr.strip() == "spare-fast simulate: --groups = 0 must be >= 1"
    p = _proc(
        [
            sys.executable,
            "-m",
            "spare_fast",
            "--debug",
            "bench",
            "--layouts",
            "sidon",
            "--redundancy",
            "2000",
        ]
    )
    assert p.returncode == 1 and "Traceback" in p.stderr and "UsageError" in p.stderr


def test_version_and_closed_pipe() -> None:
    p = _proc([sys.executable, "-m", "spare_fast", "--version"])
    assert p.returncode == 0 and p.stdout.strip() == f"spare-fast {spare_fast.__version__}"
    cmd = (
        f"{sys.executable} -m spare_fast plan --groups 600 --mtbf 5min --restart 1h "
        "--save 60s --json | head -1"
    )
    p = _proc(["bash", "-o", "pipefail", "-c", cmd])
    assert p.stdout == "{\n"
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""


@pytest.mark.parametrize(
    ("script", "argv", "option"),
    [
        ("tools/sim_candidates.py", ["foo"], "'foo'"),
        ("tools/sim_experiments.py", ["foo"], "'foo'"),
        ("examples/train_mlp.py", ["--kill", "abc"], "--kill"),
        ("examples/train_mlp.py", ["--steps", "0"], "--steps"),
    ],
)
def test_scripts_one_line_exit_2(
    script: str, argv: list[str], option: str, request: pytest.FixtureRequest
) -> None:
    if "train_mlp" in script:
        request.getfixturevalue("requires_torch")  # examples/train_mlp.py needs the torch extra
    p = _proc([sys.executable, str(ROOT / script), *argv])
    assert p.returncode == 2, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and option in p.stderr, p.stderr
    assert "Traceback" not in p.stderr


@pytest.mark.parametrize("script", ["tools/sim_candidates.py", "tools/sim_experiments.py"])
def test_scripts_help(script: str) -> None:
    p = _proc([sys.executable, str(ROOT / script), "--help"])
    assert p.returncode == 0 and p.stdout.startswith("usage:"), p.stderr


def test_every_subcommand_parser_has_the_one_line_errors() -> None:
    # A new subcommand module (one more name in spare_fast.cli.SUBCOMMANDS) inherits them.
    import argparse

    from spare_fast.cli import SUBCOMMANDS, build_parser
    from spare_fast.cli._common import ArgumentParser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert set(SUBCOMMANDS) <= set(sub.choices)
    assert all(isinstance(p, ArgumentParser) for p in sub.choices.values())
