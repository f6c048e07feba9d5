"""Figures read at a glance, and say what the tables say: the forecast figure's rows have room
for their marks (rasbt's four runs were squeezed until a bar sat nearer the row above), no law
ceiling where the forecast table withholds it, a legend entry for the edge triangles, panel titles
cut to fit that still tell runs apart, score units where a panel's score leaves [0, 1], and one
number format in a legend."""

import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import entropylaw as el  # noqa: E402
from entropylaw.figure_sets.ceilings import plot_ceilings, plot_forecasts  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data"
NO_FORECAST = "no forecast: the window holds too few validation points"


def _rasbt_rows():
    """rasbt's four runs as the forecast figure gets them: two not forecast, with a law ceiling each."""
    rows = []
    for k, (label, f) in enumerate([("3 tracking", None), ("4 clip_ratio", 0.657), ("5 kl", None),
                                    ("6 format_reward", 0.599)]):
        row = {"run_id": label, "label": label, "family": "all runs", "color": f"C{k}", "marker": "o",
               "final_observed": 0.3 + 0.03 * k, "law_ceiling": 0.4, "law_ceiling_ci": (0.3, 0.5)}
        if f is None:
            row["reason"] = NO_FORECAST
        else:
            row.update(forecast=f, forecast_ci=(f - 0.1, f + 0.07))
        rows.append(row)
    return rows


def test_the_forecast_figures_rows_have_room_for_their_marks():
    ax = plot_forecasts(_rasbt_rows(), method="logit-drift")
    try:
        fig = ax.figure
        fig.draw_without_rendering()
        lo, hi = sorted(ax.get_ylim())
        per_row = ax.get_position().height * fig.get_figheight() / (hi - lo)  # inches
        assert per_row >= 0.28, per_row
        # each forecast bar nearer its own row than the row above
        bars = [c for c in ax.containers if c.lines[0].get_marker() != "D"]
        for bar in bars:
            y = float(bar.lines[0].get_ydata()[0])
            assert abs(y - round(y)) < 0.3
    finally:
        plt.close(ax.figure)


def test_no_law_ceiling_on_a_row_the_forecast_table_marks_no_forecast():
    """The table writes "no forecast: <why>" over the law ceiling's column: the figure drew its diamond."""
    ax = plot_forecasts(_rasbt_rows(), method="logit-drift")
    try:
        diamonds = [float(c.lines[0].get_ydata()[0]) for c in ax.containers if c.lines[0].get_marker() == "D"]
        assert len(diamonds) == 2, diamonds  # the two runs forecast, not the two "no forecast"
        assert all(round(y) in (1, 3) for y in diamonds), diamonds
    finally:
        plt.close(ax.figure)


def test_the_ceiling_figures_legend_names_the_edge_triangles():
    rows = [{"label": "r1", "family": "m", "color": "C0", "ceiling": 0.7, "ceiling_ci": (0.65, 0.75),
             "final_observed": 0.68, "trust": "good fit"},
            {"label": "r2", "family": "m", "color": "C1", "ceiling": 0.9, "ceiling_ci": (0.6, 1.9),
             "final_observed": 0.85, "trust": "weak fit"}]
    ax = plot_ceilings(rows)
    try:
        texts = [t.get_text() for lg in ax.figure.legends for t in lg.get_texts()]
        assert any("beyond the axes" in t for t in texts), texts
    finally:
        plt.close(ax.figure)


def test_the_ceiling_figures_trust_words_leave_the_data_room_and_clear_the_edge():
    """Beside 28-character run names, "law does not apply" left the data 115 pixels of the figure, and
    the trust words at 4.5 % of the axes' width touched the edge's triangles ("▷weak fit")."""
    rows = [{"label": "sweep_coarse__rho0.70_seed44", "family": "m", "color": "C0", "ceiling": 0.7,
             "ceiling_ci": (0.65, 0.75), "final_observed": 0.68, "trust": "law does not apply"},
            {"label": "sweep_coarse__rho1.00_seed43", "family": "m", "color": "C1", "ceiling": 0.9,
             "ceiling_ci": (0.6, 1.9), "final_observed": 0.85, "trust": "weak fit"}]
    ax = plot_ceilings(rows)
    try:
        fig = ax.figure
        fig.draw_without_rendering()
        words = {t.get_text(): t for t in ax.texts}
        assert set(words) == {"law n/a", "weak fit †"}, set(words)
        legend = [t.get_text() for lg in fig.legends for t in lg.get_texts()]
        assert any("law does not apply (law n/a)" in t for t in legend), legend
        edge = ax.get_window_extent().x1
        gap = min(w.get_window_extent().x0 for w in words.values()) - edge
        assert gap >= 10 * fig.dpi / 72 - 1, gap  # 10 points right of the axes, however narrow they are
        assert ax.get_window_extent().width >= 1.3 * fig.dpi, ax.get_window_extent().width  # was 1.06 inches
    finally:
        plt.close(ax.figure)


def test_panel_titles_cut_to_fit_still_tell_runs_apart():
    """data/real and data/real-sizes: the 0.5b and 1.5b runs were both "qwen2.5…_gsm8k", three sweep
    runs "sweep_c…_seed42/43"."""
    from entropylaw.figure_sets.law import early_figures

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = el.load(DATA / "real", DATA / "real-sizes", warn=False)
        built = early_figures(t)[0]
    try:
        titles = [a.get_title(loc="left") for a in built.fig.axes if a.get_visible()]
        assert len(titles) >= 8 and len(set(titles)) == len(titles), titles
        assert any("0.5b" in t for t in titles) and any("1.5b" in t for t in titles), titles
    finally:
        plt.close(built.fig)


def test_a_panel_whose_score_leaves_0_1_says_score_units():
    """A validation score at -1 (data/real's verl_opd run) beside fractions: the grid's label said
    "validation (fraction correct)" over it."""
    from entropylaw.figure_sets.law import law_figures

    steps = np.arange(0, 200, 5)
    H = 1.0 * np.exp(-steps / 60) + 0.05
    rng = np.random.default_rng(0)
    recs, t = [], None
    for run, (a, b) in {"frac": (0.2, 0.8), "reward": (0.05, -0.9)}.items():
        recs = [(int(s), "entropy", float(h)) for s, h in zip(steps, H)]
        recs += [(int(s), "val/acc", float(-a * np.exp(h) + b + rng.normal(0, 0.005))) for s, h in zip(steps, H)]
        part = el.table.from_records(recs, run_id=run, model=run)
        t = part if t is None else el.table.concat([t, part])
    built = law_figures(t)[1]
    try:
        fig = built.fig
        assert "score units" in fig.get_supylabel(), fig.get_supylabel()
        units = {a.get_title(loc="left").split(" · ")[0]: a.get_ylabel() for a in fig.axes if a.get_visible()}
        assert units == {"frac": "", "reward": "score (score units)"}, units
    finally:
        plt.close(built.fig)


def test_the_over_training_legend_writes_its_numbers_one_way():
    """"final H 6.25e-03" stood next to "final score 0.000"."""
    from entropylaw.figure_sets.interventions import interventions_figure

    steps = np.arange(0, 100, 5)
    t = None
    for run, model, end in [("a", "m1", 0.00625), ("b", "m2", 0.3), ("c", "m2", 0.2)]:
        H = (0.8 - end) * np.exp(-steps / 5) + end
        recs = [(int(s), "entropy", float(h)) for s, h in zip(steps, H)]
        recs += [(int(s), "val/acc", float(0.9 - 0.5 * h)) for s, h in zip(steps, H)]
        part = el.table.from_records(recs, run_id=run, model=model)
        t = part if t is None else el.table.concat([t, part])
    built = interventions_figure(t)[0]
    try:
        texts = [x.get_text() for ax in built.fig.axes for lg in [ax.get_legend()] if lg for x in lg.get_texts()]
        texts += [x.get_text() for lg in built.fig.legends for x in lg.get_texts()]
        assert any("final H" in x for x in texts), texts
        assert not any("e-0" in x for x in texts), texts
        assert any("final H 0.006" in x for x in texts), texts
    finally:
        plt.close(built.fig)


def test_a_law_ceiling_past_the_range_points_out_of_it_and_is_keyed():
    """A law ceiling the window's fit put past 1 was a diamond at 1.0 with no interval, read as a
    ceiling of exactly 1; the table marks it ‡. It is a triangle pointing out, with its legend entry."""
    rows = _rasbt_rows()
    rows[1].update(law_ceiling=1.0, law_ceiling_ci=(1.0, 1.0), law_ceiling_beyond=True, bounds=(0.0, 1.0))
    ax = plot_forecasts(rows, method="logit-drift")
    try:
        marks = [c.lines[0].get_marker() for c in ax.containers if c.lines[0].get_marker() in ("D", ">", "<")]
        assert sorted(marks) == [">", "D"], marks
        labels = [t.get_text() for t in ax.figure.legends[0].get_texts()] if ax.figure.legends else \
            [t.get_text() for t in ax.get_legend().get_texts()]
        assert any("past the score's range" in x for x in labels), labels
    finally:
        plt.close(ax.figure)
    ax = plot_forecasts(_rasbt_rows(), method="logit-drift")  # none past the range: no such entry
    try:
        labels = [t.get_text() for t in (ax.figure.legends[0] if ax.figure.legends else ax.get_legend()).get_texts()]
        assert not any("past the score's range" in x for x in labels), labels
    finally:
        plt.close(ax.figure)


def test_a_validation_key_naming_the_measure_is_not_said_twice_on_the_axis():
    """A custom loop's ``val/accuracy`` was drawn over steps as 'accuracy accuracy (fraction)'."""
    from entropylaw.figure_sets.base import metric_label

    assert metric_label("val/accuracy") == "val. accuracy (fraction)" == metric_label("val/acc")
    assert metric_label("val/gsm8k") == "accuracy gsm8k (fraction)"


def test_the_early_figure_says_which_end_number_is_observed_when_saved_alone():
    """Panel titles 'end 0.975 vs 0.340' said which was observed only in the report's caption."""
    from entropylaw.figure_sets.law import early_figures

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        built = early_figures(el.load(DATA / "real-sizes", warn=False))[0]
    try:
        said = [t.get_text() for legend in built.fig.legends for t in legend.get_texts()]
        assert "end A vs B: final score observed vs predicted" in said, said
    finally:
        plt.close(built.fig)
