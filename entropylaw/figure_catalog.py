"""Every figure, declared once: its name (the file stem's family, ``--which``), what it is
built from (the run table or a probe's summary), its builder (from that input to finished
:class:`~entropylaw.figures.base.Built` figures, or :class:`~entropylaw.figures.base.Skipped`
with the reason) and its drawer (the function that draws it on matplotlib axes, for use on
its own). The order is the paper's, and the report's.

Plain data, importing nothing of the package: ``import entropylaw`` reads the names for the
API and the CLI without loading matplotlib or the figures' modules (which
:mod:`entropylaw.figures.build` loads when a figure is built), and without importing the
``entropylaw.figures`` package, whose name ``entropylaw`` binds to the API function.

To add a figure: its builder and drawer in a module of ``entropylaw/figures/`` (or the
drawer in ``entropylaw/draw/``), and one line below.

>>> names()[:3], by_name("table1").source
(['ceilings', 'forecast', 'law'], 'probe summary')
"""

from __future__ import annotations

from dataclasses import dataclass

TABLE, PROBE = "table", "probe summary"


@dataclass(frozen=True)
class Figure:
    name: str
    builder: str  # "module:function", the module's path under entropylaw/
    drawer: str  # "module:function"
    source: str = TABLE


FIGURES = (
    Figure("ceilings", "figures.ceilings:ceilings_figure", "figures.ceilings:plot_ceilings"),
    Figure("forecast", "figures.ceilings:forecast_figure", "figures.ceilings:plot_forecasts"),
    Figure("law", "figures.law:law_figures", "draw.law:plot_law"),
    Figure("early", "figures.law:early_figures", "draw.law:plot_early"),
    Figure("consumption", "figures.consumption:consumption_figure", "figures.consumption:plot_consumption"),
    Figure("algorithms", "figures.comparisons:algorithms_figure", "figures.comparisons:plot_algorithms"),
    Figure("scaling", "figures.comparisons:scaling_figure", "draw.sizes:plot_size_law"),
    Figure("covariance", "figures.covariance:covariance_figure", "figures.covariance:plot_cov_vs_entropy_change"),
    Figure("interventions", "figures.interventions:interventions_figure", "figures.interventions:plot_interventions"),
    # probe-checkpoints --table1 tables: last of the table's figures, so the report shows it beside the probe's
    Figure("checkpoints", "figures.checkpoints:checkpoints_figure", "figures.checkpoints:plot_checkpoints"),
    Figure("table1", "figures.probe_tables:table1_figure", "figures.probe_tables:plot_table1", PROBE),
    Figure("ladder", "figures.probe_tables:ladder_figure", "figures.probe_tables:plot_ladder", PROBE),
)


def names(source: str | None = None) -> list[str]:
    """The figures' names in order (``source``: those built from it only)."""
    return [f.name for f in FIGURES if source is None or f.source == source]


def by_name(name: str) -> Figure | None:
    return next((f for f in FIGURES if f.name == name), None)
