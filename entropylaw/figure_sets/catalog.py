"""Every figure, declared once: its name (the file stem's family, ``--which``), what it is
built from (the run table or a probe's summary), its builder (from that input to finished
:class:`~entropylaw.figure_sets.base.Built` figures, or :class:`~entropylaw.figure_sets.base.Skipped`
with the reason) and its drawer (the function that draws it on matplotlib axes, for use on
its own). The order is the paper's, and the report's.

Each figure names its builder and drawer as (module, function): the module is reached by a
plain import in one small function per module, run only when a figure is built or drawn, so
that ``import entropylaw`` (which reads the names for the API and the CLI) loads no figure
module and no matplotlib.

To add a figure: its builder and drawer in a module of ``entropylaw/figure_sets/`` (or the
drawer in ``entropylaw/draw/``), and one line in :data:`FIGURES`.

>>> names()[:3], by_name("table1").source
(['ceilings', 'forecast', 'law'], 'probe summary')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

TABLE, PROBE = "table", "probe summary"


@dataclass(frozen=True)
class Figure:
    name: str
    builder: tuple  # (the function that imports its module, the function's name)
    drawer: tuple
    source: str = TABLE


def _draw_law():
    from entropylaw.draw import law

    return law


def _draw_sizes():
    from entropylaw.draw import sizes

    return sizes


def _figure_sets_ceilings():
    from entropylaw.figure_sets import ceilings

    return ceilings


def _figure_sets_checkpoints():
    from entropylaw.figure_sets import checkpoints

    return checkpoints


def _figure_sets_comparisons():
    from entropylaw.figure_sets import comparisons

    return comparisons


def _figure_sets_consumption():
    from entropylaw.figure_sets import consumption

    return consumption


def _figure_sets_covariance():
    from entropylaw.figure_sets import covariance

    return covariance


def _figure_sets_interventions():
    from entropylaw.figure_sets import interventions

    return interventions


def _figure_sets_law():
    from entropylaw.figure_sets import law

    return law


def _figure_sets_probe_tables():
    from entropylaw.figure_sets import probe_tables

    return probe_tables


FIGURES = (
    Figure("ceilings", (_figure_sets_ceilings, "ceilings_figure"), (_figure_sets_ceilings, "plot_ceilings")),
    Figure("forecast", (_figure_sets_ceilings, "forecast_figure"), (_figure_sets_ceilings, "plot_forecasts")),
    Figure("law", (_figure_sets_law, "law_figures"), (_draw_law, "plot_law")),
    Figure("early", (_figure_sets_law, "early_figures"), (_draw_law, "plot_early")),
    Figure("consumption", (_figure_sets_consumption, "consumption_figure"), (_figure_sets_consumption, "plot_consumption")),
    Figure("algorithms", (_figure_sets_comparisons, "algorithms_figure"), (_figure_sets_comparisons, "plot_algorithms")),
    Figure("scaling", (_figure_sets_comparisons, "scaling_figure"), (_draw_sizes, "plot_size_law")),
    Figure("covariance", (_figure_sets_covariance, "covariance_figure"), (_figure_sets_covariance, "plot_cov_vs_entropy_change")),
    Figure("interventions", (_figure_sets_interventions, "interventions_figure"), (_figure_sets_interventions, "plot_interventions")),
    # probe-checkpoints --table1 tables: last of the table's figures, so the report shows it beside the probe's
    Figure("checkpoints", (_figure_sets_checkpoints, "checkpoints_figure"), (_figure_sets_checkpoints, "plot_checkpoints")),
    Figure("table1", (_figure_sets_probe_tables, "table1_figure"), (_figure_sets_probe_tables, "plot_table1"), PROBE),
    Figure("ladder", (_figure_sets_probe_tables, "ladder_figure"), (_figure_sets_probe_tables, "plot_ladder"), PROBE),
)


# figures drawn from what a probe or the lab logs, which most runs have not: where that data is absent, the
# commands say them in one line, not one each (unless asked for by name)
PROBE_OR_LAB = ("covariance", "checkpoints", "table1", "ladder")


def names(source: str | None = None) -> list[str]:
    """The figures' names in order (``source``: those built from it only)."""
    return [f.name for f in FIGURES if source is None or f.source == source]


def by_name(name: str) -> Figure | None:
    return next((f for f in FIGURES if f.name == name), None)


def function(ref: tuple) -> Callable:
    """The function a (module loader, name) pair names; its module is imported now."""
    load, name = ref
    return getattr(load(), name)
