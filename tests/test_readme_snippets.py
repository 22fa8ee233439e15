"""Every Python and shell snippet of README.md runs, and prints what the README shows.

Conventions (README.md, "Development"):

* ```` ```python ```` blocks run top to bottom in a fresh interpreter. An expression statement
  whose line ends in ``# -> EXPECTED`` (free text may follow a ``;``) must evaluate to
  EXPECTED: every number shown equals the value rounded to the digits shown, in order, and
  every enum name or ``True``/``False`` shown appears in the value.
* ```` ```bash ```` blocks run as one ``bash -e`` script.
* ```` ```console ```` blocks: each ``$ command`` runs and its stdout must be the lines below
  it, exactly (trailing spaces aside).
* A block right after a ``<!-- long -->`` line is not run here: installs, builds that need the
  full toolchain, and runs of minutes.

Everything runs in a fresh temporary folder against the package this test imports (an
installed wheel, or the in-place developer build), with ``python`` and ``spare-fast`` on PATH
pointing at this interpreter and that package.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import spare_fast

README = Path(__file__).resolve().parents[1] / "README.md"
PACKAGE_ROOT = Path(spare_fast.__file__).resolve().parents[1]
LONG = "<!-- long -->"
KINDS = ("python", "bash", "console")


def snippets() -> list[tuple[str, int, str, bool]]:
    """(kind, first line number, code, long) for every python/bash/console block."""
    lines = README.read_text().splitlines()
    out = []
    i = 0
    while i < len(lines):
        m = re.match(r"^```(\w*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        if m.group(1) in KINDS:
            k = i - 1
            while k >= 0 and not lines[k].strip():
                k -= 1
            long = k >= 0 and lines[k].strip() == LONG
            out.append((m.group(1), i + 1, "\n".join(lines[i + 1 : j]) + "\n", long))
        i = j + 1
    return out


ALL = snippets()
RUN = [s for s in ALL if not s[3]]


def test_readme_has_snippets_to_run() -> None:
    kinds = {s[0] for s in RUN}
    assert kinds == set(KINDS), kinds


def _env(tmp: Path) -> dict[str, str]:
    bin_dir = tmp / "_bin"
    bin_dir.mkdir()
    for name, target in (("python", ""), ("spare-fast", "-m spare_fast")):
        f = bin_dir / name
        f.write_text(f'#!/bin/sh\nexec "{sys.executable}" {target} "$@"\n')
        f.chmod(0o755)
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(PACKAGE_ROOT)
    env["MPLBACKEND"] = "Agg"
    env["COLUMNS"] = "100"
    return env


# The driver: runs a Python snippet statement by statement and checks the `# ->` claims.
DRIVER = textwrap.dedent(
    r"""
    import ast, enum, io, re, sys, tokenize
    import numpy as np

    src = open(sys.argv[1]).read()
    comments = {}
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type == tokenize.COMMENT:
            comments[tok.start[0]] = tok.string

    def fmt(v):
        if isinstance(v, enum.Enum):
            return v.name
        if isinstance(v, np.ndarray):
            return fmt(v.tolist())
        if isinstance(v, np.generic):
            return fmt(v.item())
        if isinstance(v, (tuple, list)):
            return ", ".join(fmt(x) for x in v)
        if isinstance(v, float):
            return repr(v)
        return str(v)

    NUM = re.compile(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
    WORD = re.compile(r"\b(?:[A-Z][A-Z_]{1,}|True|False)\b")

    def check(line, claim, value):
        shown = fmt(value)
        want = NUM.findall(claim)
        got = [float(x) for x in NUM.findall(shown)]
        if len(want) != len(got):
            raise SystemExit(f"README line {line}: shows {claim!r}, the value is {shown}")
        for w, g in zip(want, got):
            if "e" in w.lower():  # 1.5e-06: as many significant digits as shown
                mant, exp = w.lower().split("e")
                sig = len(mant.replace("-", "").replace(".", ""))
                ok = abs(g - float(w)) <= 0.5 * 10 ** (int(exp) - sig + 1)
            else:
                digits = len(w.split(".")[1]) if "." in w else 0
                ok = round(g, digits) == float(w.replace(",", ""))
            if not ok:
                raise SystemExit(f"README line {line}: shows {claim!r}, the value is {shown}")
        for word in WORD.findall(claim):
            if word not in shown:
                raise SystemExit(f"README line {line}: shows {word!r}, the value is {shown}")

    first = int(sys.argv[2])
    ns = {"__name__": "__main__"}
    for node in ast.parse(src).body:
        lines = range(node.lineno, node.end_lineno + 1)
        claim = next((comments[n] for n in lines if n in comments and
                      comments[n].lstrip("# ").startswith("->")), None)
        code = ast.get_source_segment(src, node)
        if isinstance(node, ast.Expr) and claim is not None:
            value = eval(compile(ast.Expression(node.value), "README", "eval"), ns)
            text = claim.lstrip("# ")[2:].split(";")[0].strip()
            check(first + node.lineno, text, value)
        else:
            exec(compile(ast.Module([node], []), "README", "exec"), ns)
    print("ok")
    """
)


def _ids() -> list[str]:
    return [f"{kind}-line{line}" for kind, line, _, _ in RUN]


def _run(argv: list[str], work: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=300)


def _bash(code: str) -> list[str]:
    return ["bash", "-e", "-o", "pipefail", "-c", code]


@pytest.mark.parametrize(("kind", "line", "code", "long"), RUN, ids=_ids())
def test_snippet(tmp_path: Path, kind: str, line: int, code: str, long: bool) -> None:
    env = _env(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    if kind == "python":
        (tmp_path / "snippet.py").write_text(code)
        (tmp_path / "driver.py").write_text(DRIVER)
        driver = [sys.executable, str(tmp_path / "driver.py"), str(tmp_path / "snippet.py")]
        p = _run([*driver, str(line)], work, env)
        assert p.returncode == 0, f"README line {line}:\n{p.stdout}\n{p.stderr}"
    elif kind == "bash":
        p = _run(_bash(code), work, env)
        assert p.returncode == 0, f"README line {line}:\n{p.stdout}\n{p.stderr}"
    else:
        for cmd, expected in _console(code):
            p = _run(_bash(cmd), work, env)
            assert p.returncode == 0, f"README line {line}: {cmd}\n{p.stderr}"
            got = [x.rstrip() for x in p.stdout.rstrip("\n").splitlines()]
            assert got == expected, f"README line {line}: {cmd}"


def _console(code: str) -> list[tuple[str, list[str]]]:
    out: list[tuple[str, list[str]]] = []
    for raw in code.rstrip("\n").splitlines():
        if raw.startswith("$ "):
            out.append((raw[2:], []))
        elif out:
            out[-1][1].append(raw.rstrip())
    for _, expected in out:
        while expected and not expected[-1]:
            expected.pop()
    return out
