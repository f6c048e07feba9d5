"""Build every figure: from a tidy run table (and the probe's summaries) to finished figures,
the entry the CLI, the report and ``analysis/`` share.

Each builder (in the module of its figure) takes a table (and options), picks the runs it
can use, calls the fitting code, and returns :class:`~entropylaw.figure_sets.base.Built`
figures; when the inputs cannot give that figure it raises
:class:`~entropylaw.figure_sets.base.Skipped` with the reason (``entropylaw figures`` prints it
and goes on). :mod:`entropylaw.figure_sets.catalog` declares them all, in paper order;
:func:`build_all` runs them.

>>> from entropylaw import table
>>> t = table.from_records([(0, "entropy", 0.5)], run_id="r1")
>>> try:
...     build("interventions", t)
... except Skipped as why:
...     print(why)
interventions: no run logs both entropy and a validation or training score
>>> built, skipped = build_all(t, which=["ceilings", "table1"])
>>> built, skipped[1]
([], 'table1: no probe summary given (the summary.json that entropylaw probe writes)')
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Sequence

import pandas as pd

from entropylaw.errors import EntropyLawError
from entropylaw.figure_sets import catalog
from entropylaw.figure_sets.base import Built, Skipped
from entropylaw.draw.style import using

# the names of the figures built from the run table, and from a probe's summary
BUILDERS = catalog.names(catalog.TABLE)
PROBE_BUILDERS = catalog.names(catalog.PROBE)


def builder(name: str) -> Callable:
    """The function that builds the figure ``name`` (its module loaded now)."""
    return catalog.function(_figure(name).builder)


def drawer(name: str) -> Callable:
    """The function that draws the figure ``name`` on matplotlib axes."""
    return catalog.function(_figure(name).drawer)


def _figure(name: str) -> catalog.Figure:
    figure = catalog.by_name(name)
    if figure is None:
        raise EntropyLawError(f"unknown figure {name!r} (expected one of {', '.join(catalog.names())})")
    return figure


def build(figure: str, t: pd.DataFrame, **options) -> list[Built]:
    """Run one table builder by name; raises :class:`Skipped` when it cannot."""
    if figure not in BUILDERS:
        raise EntropyLawError(f"unknown figure {figure!r} (expected one of {', '.join(catalog.names())})")
    with using():  # the current style's fonts and sizes for every artist the builder makes
        return builder(figure)(t, **options)


def build_probe(name: str, summary: dict, **options) -> list[Built]:
    if name not in PROBE_BUILDERS:
        raise EntropyLawError(f"unknown probe figure {name!r} (expected one of {', '.join(PROBE_BUILDERS)})")
    with using():
        return builder(name)(summary, **options)


def build_all(t: pd.DataFrame | None, probe_summaries: Sequence[dict] = (), which: Sequence[str] | None = None,
              **options) -> tuple[list[Built], list[str]]:
    """Every figure that can be drawn (``which``: these only; ``[]``: none), and a
    ``name: reason`` line per skipped one."""
    built, skipped = [], []
    names = catalog.names() if which is None else list(which)
    for name in names:
        try:
            if name in PROBE_BUILDERS:
                if not probe_summaries:
                    raise Skipped(f"{name}: no probe summary given (the summary.json that entropylaw probe writes)")
                if all(set(p) <= {"audit"} for p in probe_summaries):  # `audit --out`: its own section, no figure
                    raise Skipped(f"{name}: the summary holds an audit only (the audit has its own section; the "
                                  "figure needs the summary.json that entropylaw probe writes)")
                for summary in probe_summaries:
                    built += build_probe(name, summary)
            elif t is None or not len(t):
                raise Skipped(f"{name}: no run table given")
            else:
                built += build(name, t, **options)
        except Skipped as why:
            text = str(why)
            skipped.append(text if text.startswith(f"{name}:") else f"{name}: {text}")
    return built, skipped


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
                              "or 'audit' (an audit's summary.json)")
    return data
