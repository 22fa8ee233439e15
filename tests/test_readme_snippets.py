"""Every Python and shell snippet of README.md and of the site's pages runs, and prints what
the page shows.

The pages are the Markdown files under ``docs/`` (the guides, the getting-started pages, the
benchmarks), less the tables that tools write under ``docs/sim``, ``docs/theory`` and
``docs/graph``. Conventions (README.md, "Development"):

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

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
# Written by the measuring tools, not by hand: their blocks are data, not examples.
DATA_DIRS = ("sim", "theory", "graph", "_ext")


def pages() -> list[Path]:
    """README.md, then every Markdown page of the site in path order."""
    docs = ROOT / "docs"
    found = [p for p in sorted(docs.rglob("*.md")) if p.relative_to(docs).parts[0] not in DATA_DIRS]
    return [README, *found]


PACKAGE_ROOT = Path(spare_fast.__file__).resolve().parents[1]
LONG = "<!-- long -->"
KINDS = ("python", "bash", "console")


def snippets(page: Path) -> list[tuple[str, int, str, bool]]:
    """(kind, first line number, code, long) for every python/bash/console block of a page."""
    lines = page.read_text().splitlines()
    out = []
    i = 0
    while i < len(lines):
        # A fence: three or more backticks and an info string without backticks (a MyST
        # directive such as {toctree} is a fence too, so its closing line is not an opening).
        m = re.match(r"^(`{3,})([^`]*)$", lines[i])
        if not m:
            i += 1
            continue
        fence, info = m.group(1), m.group(2).strip()
        j = i + 1
        while j < len(lines) and not re.match(rf"^{fence}\s*$", lines[j]):
            j += 1
        if info in KINDS:
            k = i - 1
            while k >= 0 and not lines[k].strip():
                k -= 1
            long = k >= 0 and lines[k].strip() == LONG
            out.append((info, i + 1, "\n".join(lines[i + 1 : j]) + "\n", long))
        i = j + 1
    return out


def _name(page: Path) -> str:
    return str(page.relative_to(ROOT))


# (page, kind, first line, code) for every block that runs.
RUN = [
    (_name(page), kind, line, code)
    for page in pages()
    for kind, line, code, long in snippets(page)
    if not long
]


def test_pages_have_snippets_to_run() -> None:
    assert {s[1] for s in RUN} == set(KINDS), {s[1] for s in RUN}
    assert any(s[0] == "README.md" and s[1] == "python" for s in RUN)
    # The guides and the getting-started pages show code that runs.
    for page in ("docs/start/controller.md", "docs/guide/controller.md", "docs/guide/theory.md"):
        assert any(s[0] == page for s in RUN), page


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
            raise SystemExit(f"{page} line {line}: shows {claim!r}, the value is {shown}")
        for w, g in zip(want, got):
            if "e" in w.lower():  # 1.5e-06: as many significant digits as shown
                mant, exp = w.lower().split("e")
                sig = len(mant.replace("-", "").replace(".", ""))
                ok = abs(g - float(w)) <= 0.5 * 10 ** (int(exp) - sig + 1)
            else:
                digits = len(w.split(".")[1]) if "." in w else 0
                ok = round(g, digits) == float(w.replace(",", ""))
            if not ok:
                raise SystemExit(f"{page} line {line}: shows {claim!r}, the value is {shown}")
        for word in WORD.findall(claim):
            if word not in shown:
                raise SystemExit(f"{page} line {line}: shows {word!r}, the value is {shown}")

    page = sys.argv[3]
    first = int(sys.argv[2])
    ns = {"__name__": "__main__"}
    for node in ast.parse(src).body:
        lines = range(node.lineno, node.end_lineno + 1)
        claim = next((comments[n] for n in lines if n in comments and
                      comments[n].lstrip("# ").startswith("->")), None)
        code = ast.get_source_segment(src, node)
        if isinstance(node, ast.Expr) and claim is not None:
            value = eval(compile(ast.Expression(node.value), page, "eval"), ns)
            text = claim.lstrip("# ")[2:].split(";")[0].strip()
            check(first + node.lineno, text, value)
        else:
            exec(compile(ast.Module([node], []), page, "exec"), ns)
    print("ok")
    """
)


def _ids() -> list[str]:
    return [f"{page}-{kind}-line{line}" for page, kind, line, _ in RUN]


def _run(argv: list[str], work: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=300)


def _bash(code: str) -> list[str]:
    return ["bash", "-e", "-o", "pipefail", "-c", code]


@pytest.mark.parametrize(("page", "kind", "line", "code"), RUN, ids=_ids())
def test_snippet(tmp_path: Path, page: str, kind: str, line: int, code: str) -> None:
    env = _env(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    if kind == "python":
        (tmp_path / "snippet.py").write_text(code)
        (tmp_path / "driver.py").write_text(DRIVER)
        driver = [sys.executable, str(tmp_path / "driver.py"), str(tmp_path / "snippet.py")]
        p = _run([*driver, str(line), page], work, env)
        assert p.returncode == 0, f"{page} line {line}:\n{p.stdout}\n{p.stderr}"
    elif kind == "bash":
        p = _run(_bash(code), work, env)
        assert p.returncode == 0, f"{page} line {line}:\n{p.stdout}\n{p.stderr}"
    else:
        for cmd, expected in _console(code):
            p = _run(_bash(cmd), work, env)
            assert p.returncode == 0, f"{page} line {line}: {cmd}\n{p.stderr}"
            got = [x.rstrip() for x in p.stdout.rstrip("\n").splitlines()]
            assert got == expected, f"{page} line {line}: {cmd}"


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
