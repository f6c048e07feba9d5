"""One run's entropy, score and response length over training (one row of three panels, as
``entropylaw report`` draws a run given alone): the entropy panel's y label, "policy entropy H
(nats, token mean)", was taller than the panel and the figure cut its closing bracket. Every y
label lies inside the figure."""

from __future__ import annotations

import matplotlib
import numpy as np

matplotlib.use("Agg")

import entropylaw.table as table  # noqa: E402
from entropylaw.draw.style import using  # noqa: E402
from entropylaw.figure_sets.interventions import interventions_figure  # noqa: E402


def test_one_runs_y_labels_are_not_cut_by_the_figure():
    steps = np.arange(0, 260, 5)
    h = 0.25 * np.exp(-steps / 40) + 0.01
    recs = [(int(s), "entropy", float(v)) for s, v in zip(steps, h)]
    recs += [(int(s), "val/score", float(0.8 - 0.3 * np.exp(v))) for s, v in zip(steps, h)]
    recs += [(int(s), "response_length", float(400 + 3 * s)) for s in steps]
    with using("screen"):
        [built] = interventions_figure(table.from_records(recs, run_id="alone"))
    fig = built.fig
    fig.canvas.draw()
    renderer, page = fig.canvas.get_renderer(), fig.bbox
    labels = [ax.yaxis.label for ax in fig.axes if ax.get_visible() and ax.get_ylabel()]
    assert len(labels) == 3, [lab.get_text() for lab in labels]
    for lab in labels:
        e = lab.get_window_extent(renderer)
        assert page.y0 - 0.5 <= e.y0 and e.y1 <= page.y1 + 0.5, (lab.get_text(), e, page)
