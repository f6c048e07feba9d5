"""What every figure builder shares: :class:`Built` figures, :class:`Skipped` with its
reason, the score a run's law is fitted to, and writing figures out.

>>> from entropylaw import table
>>> t = table.from_records([(0, "entropy", 0.5), (0, "score", 0.1)], run_id="r1")
>>> performance_metric(t, "r1"), usable_runs(t)
('score', ['r1'])
"""

from __future__ import annotations

import glob
import json
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import matplotlib.pyplot as plt
import pandas as pd

import entropylaw.table as tt
from entropylaw.fit.pairing import fitted_score_key
from entropylaw.errors import EntropyLawError
from entropylaw.plots.placement import settle
from entropylaw.plots.style import RunStyles, save, using


class Skipped(Exception):
    """This figure cannot be drawn from these inputs; the message says why."""


@dataclass
class Built:
    """A finished figure: file stem, the matplotlib Figure, a caption, warnings raised, and
    a title that says what it shows (the report's heading). Laid out and its boxes placed
    (:func:`entropylaw.plots.placement.settle`) as it is made."""

    name: str
    fig: object
    caption: str
    warnings: list[str] = field(default_factory=list)
    title: str = ""

    def __post_init__(self):
        settle(self.fig)
        if not self.title:
            self.title = self.caption.split(". ")[0].rstrip(".")

    def renamed(self, name: str) -> "Built":
        return Built(name, self.fig, self.caption, list(self.warnings), self.title)


def performance_metric(t: pd.DataFrame, run_id: str) -> str | None:
    """The score the law is fitted to (the fit's own rule, :func:`entropylaw.fit.pairing.score_key`),
    or None when the run has none."""
    return fitted_score_key(t, run_id) or None


def metric_label(metric: str) -> str:
    """A short axis label with its unit (short: it must fit along a small panel)."""
    if metric == "score":
        return "training score (reward)"
    if metric == "val/mean":
        return "val. accuracy, mean (fraction)"
    if metric.startswith("val/"):
        return f"accuracy {metric[4:].split('/')[-1]} (fraction)"
    return metric


def run_styles(t: pd.DataFrame) -> RunStyles:
    """One look per run of the table (colour, then line style and marker past 8 runs)."""
    return RunStyles(tt.run_ids(t))


_USABLE: list = []  # [(table, runs)]: the last few tables asked about (held, so ids stay unique)


def usable_runs(t: pd.DataFrame) -> list[str]:
    """Runs with an entropy series and a score to pair it with."""
    for table, runs in _USABLE:
        if table is t and len(table) == len(t):
            return list(runs)
    with_entropy = set(t.loc[t["metric"] == "entropy", "run_id"])
    parts = tt.split_runs(t, with_entropy)  # the score rule on each run's own rows, not the whole table's
    out = [r for r in tt.run_ids(t) if r in with_entropy and performance_metric(parts.get(r, t), r)]
    _USABLE.insert(0, (t, out))
    del _USABLE[4:]
    return list(out)


def capture(fn: Callable, *args, **kwargs):
    """Call ``fn`` and return ``(result, [warning messages])`` (all warning categories)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn(*args, **kwargs)
    return result, [str(w.message) for w in caught]


def read_probe_summary(path: str | Path) -> dict:
    """The probe's summary JSON (``table1``, ``ladder`` ...); one-line error when unreadable."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise EntropyLawError(f"{path}: no such file (expected the probe's summary JSON)") from None
    except (OSError, ValueError) as err:
        raise EntropyLawError(f"{path}: not a JSON file ({err})") from None
    if not isinstance(data, dict) or not ({"table1", "ladder", "audit"} & set(data)):
        raise EntropyLawError(f"{path}: expected a JSON object with 'table1' and/or 'ladder' (the probe summary), "
                              "or 'audit' (entropylaw audit --out)")
    return data


def tag(run_id: str, messages) -> list[str]:
    """Prefix each message with its run unless it already names it; drop repeats."""
    out = [m if f"'{run_id}'" in m or m.startswith(f"{run_id}:") else f"{run_id}: {m}" for m in messages]
    return list(dict.fromkeys(out))


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
