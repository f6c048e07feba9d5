"""From a tidy run table to finished figures: the glue the CLI and ``analysis/`` share.

The pieces every builder uses (:class:`Built`, :class:`Skipped`, :func:`performance_metric`
...) live in :mod:`entropylaw.plots.build_base` and are re-exported here.

Each builder takes a table (and options), picks the runs it can use, calls the fitting
code, and returns :class:`Built` figures; when the inputs cannot give that figure it
raises :class:`Skipped` with the reason (``entropylaw figures`` prints it and goes on).
:data:`BUILDERS` names them all, in paper order.

>>> from entropylaw import table
>>> t = table.from_records([(0, "entropy", 0.5)], run_id="r1")
>>> performance_metric(t, "r1") is None
True
>>> try:
...     build("interventions", t)
... except Skipped as why:
...     print(why)
interventions: no run logs both entropy and a validation or training score
"""

from __future__ import annotations

from typing import Callable

import pandas as pd

from entropylaw.errors import EntropyLawError
from entropylaw.plots import build_lab, build_models, build_progress, build_runs, checkpoints
from entropylaw.plots.build_base import (Built, Skipped, capture, metric_label, performance_metric,  # noqa: F401
                                         read_probe_summary, read_tables, script, tag, usable_runs,
                                         write_figures)
from entropylaw.plots.style import using


def _registry() -> dict[str, Callable]:
    return {
        "ceilings": build_runs.ceilings_figure,
        "law": build_runs.law_figures,
        "forecast": build_progress.forecast_figure,
        "consumption": build_progress.consumption_figure,
        "early": build_progress.early_figures,
        "algorithms": build_models.algorithms_figure,
        "scaling": build_models.scaling_figure,
        "covariance": build_lab.covariance_figure,
        "interventions": build_lab.interventions_figure,
        "checkpoints": checkpoints.checkpoints_figure,
    }


# "checkpoints" (probe-checkpoints --table1 tables) last: the report shows it beside the probe's figures
BUILDERS = ["ceilings", "forecast", "law", "early", "consumption", "algorithms", "scaling", "covariance",
            "interventions", "checkpoints"]
PROBE_BUILDERS = ["table1", "ladder"]


def build(figure: str, t: pd.DataFrame, **options) -> list[Built]:
    """Run one table builder by name; raises :class:`Skipped` when it cannot."""
    registry = _registry()
    if figure not in registry:
        raise EntropyLawError(f"unknown figure {figure!r} (expected one of {', '.join(BUILDERS + PROBE_BUILDERS)})")
    with using():  # the current style's fonts and sizes for every artist the builder makes
        return registry[figure](t, **options)


def build_probe(name: str, summary: dict, **options) -> list[Built]:
    with using():
        return {"table1": build_lab.table1_figure, "ladder": build_lab.ladder_figure}[name](summary, **options)
