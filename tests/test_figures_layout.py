"""Every figure ``make figures`` draws, in both styles, read as a reader would
(:mod:`figure_checks`): no legend or text box over data, no text outside the figure or
over another text, every axis labelled with its unit, and no text under 7 pt in the paper
style. Drawn here from data/ with the analysis scripts' own ``make()``, without saving.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from entropylaw.figure_sets.base import Skipped  # noqa: E402
from entropylaw.draw.style import using  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from figure_checks import problems  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _script(name):
    spec = importlib.util.spec_from_file_location(f"analysis_{name}", ROOT / "analysis" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _scripts():
    return _script("make_figures").SCRIPTS


@pytest.mark.skipif(not (ROOT / "data" / "real").is_dir(), reason="no data/real")
@pytest.mark.parametrize("style", ["screen", "paper"])
def test_every_make_figures_figure_reads_cleanly(style, capsys):
    found, names = {}, []
    for name in _scripts():
        with using(style):
            try:
                built = _script(name).make()
            except Skipped:
                continue
            for b in built:
                names.append(b.name)
                bad = problems(b.fig, paper=style == "paper")
                if bad:
                    found[b.name] = bad
                plt.close(b.fig)
    assert len(names) >= 10, names
    assert not found, "\n".join(f"{name}: {p}" for name, ps in found.items() for p in ps[:8])


@pytest.mark.skipif(not (ROOT / "data" / "real").is_dir(), reason="no data/real")
@pytest.mark.parametrize("style", ["screen", "paper"])
def test_one_run_alone_is_no_thin_strip(style):
    """The per-run figures of a single run: the axes at least 0.4 inch high (a strip of one
    row put the forecast's and the law's markers on each other), and the x label, whose long
    score name ran off the figure's right edge, broken into lines inside it."""
    from entropylaw import load
    from entropylaw.figure_sets.ceilings import ceilings_figure, forecast_figure

    t = load(str(ROOT / "data" / "real" / "verl_ppo_qwen2.5-0.5b-instruct_gsm8k_resp512_verl-data.parquet"))
    with using(style):
        for build in (ceilings_figure, forecast_figure):
            [b] = build(t, n_boot=50)
            ax = b.fig.axes[0]
            b.fig.draw_without_rendering()
            assert ax.get_window_extent().height >= 0.4 * b.fig.dpi, b.name
            assert not problems(b.fig, paper=style == "paper"), (b.name, problems(b.fig))
            plt.close(b.fig)


@pytest.mark.skipif(not (ROOT / "data" / "real").is_dir(), reason="no data/real")
def test_the_legend_over_a_one_run_grid_fits_its_narrow_figure():
    """law_per_run and early_prediction of one run: their legend, set out in 4 columns over a
    one-panel figure, ran past both edges ("law does nc", "n band")."""
    from entropylaw import load
    from entropylaw.figure_sets.law import early_figures, law_figures

    t = load(str(ROOT / "data" / "real" / "verl_ppo_qwen2.5-0.5b-instruct_gsm8k_resp512_verl-data.parquet"))
    with using("screen"):
        built = [b for b in law_figures(t) + early_figures(t) if b.name in ("law_per_run", "early_prediction")]
        assert len(built) == 2
        for b in built:
            assert not problems(b.fig), (b.name, problems(b.fig))
            plt.close(b.fig)


@pytest.mark.parametrize("style", ["screen", "paper"])
def test_a_fit_whose_points_fill_every_corner_keeps_its_numbers_off_its_legend(style):
    """A fit the law does not describe (a < 0, a band wider than the axes): the numbers box went right
    of the axes, onto the legend there ("confidence band", "ceiling" hidden under a, b, R²). The
    legend is under the plot. In the paper style (one column) the y label, longer than the axes
    are tall, ran off the figure: it is broken into lines."""
    import numpy as np

    from entropylaw.draw.law import plot_fit
    from entropylaw.draw.style import settle
    from entropylaw.fit.law import EntropyLawFit

    H = 0.07 + 0.97 * np.exp(-np.arange(5, 65, 5) / 16)
    R = np.array([0.17, 0.28, 0.36, 0.41, 0.48, 0.46, 0.32, 0.16, 0, 0, 0, 0])
    for score in (R, 0.8 - 0.3 * np.exp(H)):  # the law not describing the run, and a good fit
        with using(style):  # screen: what `fit --plot` draws
            fig = plot_fit(EntropyLawFit().fit(H, score))
            settle(fig)
            assert not problems(fig, paper=style == "paper"), problems(fig, paper=style == "paper")
            plt.close(fig)
