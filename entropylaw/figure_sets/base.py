"""What every figure builder shares: :class:`Built` figures, :class:`Skipped` with its
reason, axis labels of metrics, reading run tables and writing figures out. Which runs can
be used, their score and look are the results layer's (:mod:`entropylaw.results.runs`).

>>> metric_label("val/mean"), first_reasons(["r1: only 4 points"]), slug("Qwen2.5 7B/x")
('val. accuracy, mean (fraction)', ' (r1: only 4 points)', 'Qwen2.5_7B_x')
"""

from __future__ import annotations

import glob
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import matplotlib.pyplot as plt
import pandas as pd

import entropylaw.table as tt
from entropylaw.draw.placement import settle
from entropylaw.draw.style import rc, save, using
from entropylaw.terminal import count


class Skipped(Exception):
    """This figure cannot be drawn from these inputs; the message says why."""


@dataclass
class Built:
    """A finished figure: file stem, the matplotlib Figure, a caption, warnings raised, and
    a title that says what it shows (the report's heading). Laid out and its boxes placed
    (:func:`entropylaw.draw.placement.settle`) as it is made."""

    name: str
    fig: object
    caption: str
    warnings: list[str] = field(default_factory=list)
    title: str = ""

    def __post_init__(self):
        settle(self.fig)
        if not self.title:
            self.title = self.caption.split(". ")[0].rstrip(".")

    def png(self) -> bytes:
        """The figure as PNG bytes (closed after)."""
        return figure_png(self.fig)

    def renamed(self, name: str) -> "Built":
        return Built(name, self.fig, self.caption, list(self.warnings), self.title)


def figure_png(fig, close: bool = True) -> bytes:
    """The figure as PNG bytes without a timestamp (same figure, same bytes)."""
    settle(fig)
    buf = io.BytesIO()
    with plt.rc_context(rc()):
        fig.savefig(buf, format="png", metadata={"Software": None})
    if close:
        plt.close(fig)
    return buf.getvalue()


MEASURES = ("acc", "accuracy")  # a validation key's last part that names the measure, not a benchmark


def metric_label(metric: str) -> str:
    """A short axis label with its unit (short: it must fit along a small panel); a key naming
    the measure, no benchmark (``val/accuracy``), is not said twice ("accuracy accuracy").

    >>> metric_label("val/gsm8k"), metric_label("val/accuracy"), metric_label("val/math/acc")
    ('accuracy gsm8k (fraction)', 'val. accuracy (fraction)', 'val. accuracy (fraction)')
    """
    if metric == "score":
        return "training score (reward)"
    if metric == "val/mean":
        return "val. accuracy, mean (fraction)"
    if metric.startswith("val/"):
        name = metric[4:].split('/')[-1]
        return "val. accuracy (fraction)" if name.lower() in MEASURES else f"accuracy {name} (fraction)"
    return metric


def slug(text: str) -> str:
    """``text`` (a run id, a model name) as part of a file name: other characters than
    letters, digits and ``-_.`` become ``_``."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in str(text))


def first_reasons(notes) -> str:
    """The first three notes in brackets, after a space, for a skip's message ("" when none)."""
    return f" ({'; '.join(notes[:3])})" if notes else ""


def left_out_note(by_reason: dict) -> str:
    """" Left out (N): ..." for a figure of one panel or line per run: every run it does not
    draw, counted by reason (``{reason: count}``; "" when none).

    >>> left_out_note({"the law does not describe": 1, "with too few points": 1, "with no score": 0})
    ' Left out (2): 1 run the law does not describe, 1 with too few points.'
    >>> left_out_note({"the law does not describe": 3, "with no score": 0})
    ' Left out: 3 runs the law does not describe.'
    """
    shown = {why: n for why, n in by_reason.items() if n}
    if not shown:
        return ""
    parts = [f"{count(n, 'run') if i == 0 else n} {why}" for i, (why, n) in enumerate(shown.items())]
    total = f" ({sum(shown.values())})" if len(shown) > 1 else ""
    return f" Left out{total}: {', '.join(parts)}."


_TABLES: dict = {}


def read_tables(*patterns: str | Path) -> pd.DataFrame | None:
    """Concatenate the run tables matching glob ``patterns`` (sorted); None when none match.
    The same files unchanged (paths, sizes, times) are read once per process: the table
    returned is shared, so callers must not modify it in place."""
    paths = sorted({p for pattern in patterns for p in glob.glob(str(pattern))})
    if not paths:
        return None
    key = tuple((p, Path(p).stat().st_mtime_ns, Path(p).stat().st_size) for p in paths)
    if key not in _TABLES:
        while len(_TABLES) >= 4:  # a few sets at a time: they can be large
            _TABLES.pop(next(iter(_TABLES)))
        _TABLES[key] = tt.concat([tt.read(p) for p in paths])
    return _TABLES[key]


def write_figures(built: list[Built], out_dir: str | Path, formats=("png", "pdf")) -> list[Path]:
    """Save each figure (reproducible bytes) and close it; returns the files written."""
    written = []
    for b in built:
        written += save(b.fig, Path(out_dir) / b.name, formats=formats)
        plt.close(b.fig)
    return written


STYLE_DIRS = {"screen": "", "paper": "paper"}  # figures/ and figures/paper/


def script(name: str, make: Callable[[], list[Built]], out_dir: str | Path, styles=("screen", "paper")) -> int:
    """Body of an ``analysis/fig_*.py`` script: build and save each figure in each style
    (screen: ``out_dir``; paper: ``out_dir/paper``), say what happened; never crash on a skip."""
    for style in styles:
        with using(style):
            try:
                built = make()
            except Skipped as why:
                print(f"{name}: SKIPPED: {why}")
                return 0
            for path in write_figures(built, Path(out_dir) / STYLE_DIRS[style]):
                print(f"{name}: wrote {path}")
        if style == styles[0]:
            for b in built:
                for w in b.warnings:
                    print(f"{name}: warning: {w}")
    return 0
