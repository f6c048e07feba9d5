"""The documentation's Python examples run as written.

Every ```` ```python ```` block of ``README.md`` and ``docs/**/*.md`` is executed, in order
within its page, in one namespace per page, from the repository root (the paths in the
examples are the repository's: ``data/real``). A block that is meant to be read, not run,
is fenced as ``text`` or ``pycon`` instead. The examples use the core only and run on the CPU
in seconds.
"""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib
import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def python_blocks(text: str) -> list[str]:
    return BLOCK.findall(text)


def test_the_block_finder_reads_only_python_fences():
    text = "```python\nx = 1\n```\n\n```text\nnot run\n```\n```pycon\n>>> 2\n```\n```python\ny = 2\n```\n"
    assert python_blocks(text) == ["x = 1\n", "y = 2\n"]
    assert python_blocks("no code here") == []


def test_there_are_examples_to_run():
    assert sum(len(python_blocks(p.read_text())) for p in PAGES) >= 2


@pytest.mark.parametrize("page", [p for p in PAGES if python_blocks(p.read_text())],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_page_examples_run(page, monkeypatch):
    matplotlib.use("Agg")  # fit.plot() draws without a display
    monkeypatch.chdir(ROOT)
    namespace: dict = {"__name__": "__docs__"}
    for i, code in enumerate(python_blocks(page.read_text())):
        exec(compile(code, f"{page.relative_to(ROOT)} (python block {i + 1})", "exec"), namespace)
