"""The runs_over_training figure labels each run's final score as the tables state it: a
training score's mean over its last 5 % of steps, not one step's batch reward (0.850 at step
200 where the tables say 0.900)."""

import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

import entropylaw as el  # noqa: E402
from entropylaw.figure_sets.interventions import END_LABEL, interventions_figure  # noqa: E402
from entropylaw.fit.pairing import pair  # noqa: E402
from entropylaw.results.rows import final_score  # noqa: E402

RUN = "qwen2.5-7b__exp1a__rho1.00_seed44"
FILE = Path(__file__).resolve().parents[1] / "data" / "real" / f"trl_{RUN}.parquet"


def test_the_figures_final_training_score_is_the_tables():
    t = el.load(FILE, warn=False)
    with warnings.catch_warnings():  # its training score is fitted, as said elsewhere
        warnings.simplefilter("ignore", el.EntropyLawWarning)
        table = final_score("score", pair(t, RUN))  # what the tables show (results.rows)
    raw = float(t[(t["metric"] == "score")].sort_values("step")["value"].iloc[-1])
    assert f"{table:.3f}" == "0.900" and f"{raw:.3f}" == "0.850"
    built = interventions_figure(t, [RUN])[0]
    try:
        score_ax = built.fig.axes[1]
        ends = [x.get_text() for x in score_ax.texts if x.get_gid() == END_LABEL]
        legend = [x.get_text() for lg in built.fig.legends for x in lg.get_texts()]
        assert ends == ["0.900"]
        assert any("final score 0.900" in x for x in legend) and not any("final score 0.850" in x for x in legend)
    finally:
        plt.close(built.fig)


def test_a_score_outside_0_1_is_not_labelled_a_fraction():
    """A validation score at -1 (a collapse: data/real's verl_opd run) is in score units, not a fraction: the
    score axis said "(fraction)" over -1.0."""
    import numpy as np

    steps = np.arange(0, 60, 5)
    recs = [(int(s), "entropy", float(0.5 * np.exp(-s / 20) + 0.05)) for s in steps]
    recs += [(int(s), "val/aime_2024", -1.0 if s > 20 else 0.01) for s in steps]
    t = el.table.from_records(recs, run_id="collapse", model="m")
    built = interventions_figure(t)[0]
    try:
        label = built.fig.axes[1].get_ylabel()
        assert "fraction" not in label and "score units" in label, label
    finally:
        plt.close(built.fig)


def test_a_run_that_ends_early_keeps_its_end_label_by_its_line():
    """A run that stopped at step 10 of 50: stacked with the runs that reached step 50, its final
    value was pushed up the panel, over no line (CS336: 0.422 at the top of the entropy panel)."""
    import numpy as np

    def run(rid, last, shift, scale=20.0):  # entropies ending close together (a tall stack at step 50)
        recs = [(s, "entropy", float(0.9 * np.exp(-s / scale) + 0.1 + shift)) for s in range(1, last + 1)]
        return el.table.from_records(recs + [(s, "val/acc", 0.3 + s / 200) for s in range(1, last + 1, 3)],
                                     run_id=rid, model="m")

    # the early run ends among the others' final entropies: stacked with them, it was pushed away
    t = el.table.concat([run(f"r{i:02d}", 50, 0.004 * i) for i in range(12)] + [run("early", 10, 0.08, 4.0)])
    built = interventions_figure(t)[0]
    try:
        ax = built.fig.axes[0]
        ends = [x for x in ax.texts if x.get_gid() == END_LABEL]
        [early] = [x for x in ends if x.xy[0] == 10]
        assert abs(early.xyann[1]) < 12, early.xyann  # by its line's end (points), not up the stack
        late = [x for x in ends if x.xy[0] == 50]
        assert len(late) == 12 and max(abs(x.xyann[1]) for x in late) > 30  # the others stacked apart
    finally:
        plt.close(built.fig)
