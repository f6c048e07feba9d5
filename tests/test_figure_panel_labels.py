"""A panel's title is its run's label as the tables write it: in a sweep of one kind of score,
the kind (" · val") is said once, by the grid's y label, and no longer pushed the label into a cut
(CS336's sweep of 28 runs: "…lr1e epoch3 batch128 4c · val"); a cut never takes the "no_" of
"no_clip" ("…clip_lr1e epoch3 batch128", the setting that run is not)."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import entropylaw as el  # noqa: E402

IDS = ["grpo_grpo_clip_lr1e-05_epoch1_train_batch64__tmeb8iyd",
       "grpo_grpo_clip_lr1e-05_epoch3_train_batch128__4c2lw1ul",
       "grpo_grpo_clip_lr1e-05_epoch3_train_batch128__6sse57zp",
       "grpo_grpo_clip_lr1e-05_epoch3_train_batch128_masked_normalize_use_std_normalization__fje8thep",
       "grpo_grpo_clip_lr2e-05_epoch2_train_batch256__enn7rsbd",
       "grpo_grpo_clip_lr2e-05_epoch2_train_batch256__mvyia6u7",
       "grpo_grpo_no_clip_lr1e-05_epoch3_train_batch128_masked_normalize_use_std_normalization__w13gkcxw",
       "grpo_no_baseline_lr1e-05_epoch1_train_batch256__gl4y2b9j",
       "grpo_reinforce_with_baseline_lr1e-05_epoch1_train_batch256__vsoc7uou"]


def test_a_sweep_of_validation_scores_titles_each_panel_with_its_whole_label():
    from entropylaw.figure_sets.law import law_figures
    from entropylaw.table.labels import run_labels

    steps = np.arange(0, 50, 5)
    rng = np.random.default_rng(0)
    t = None
    for k, run in enumerate(IDS):
        H = 0.8 * np.exp(-steps / (15 + k)) + 0.1
        recs = [(int(s), "entropy", float(h)) for s, h in zip(steps, H)]
        recs += [(int(s), "val/math", float(-0.4 * np.exp(h) + 1.0 + rng.normal(0, 0.005))) for s, h in zip(steps, H)]
        part = el.table.from_records(recs, run_id=run, model="qwen")
        t = part if t is None else el.table.concat([t, part])
    labels = run_labels(t)[1]
    built = law_figures(t)[1]
    try:
        titles = sorted(a.get_title(loc="left") for a in built.fig.axes if a.get_visible())
        assert titles == sorted(labels.values()), titles
        assert built.fig.get_supylabel() == "validation score (fraction correct)", built.fig.get_supylabel()
    finally:
        plt.close(built.fig)


def test_the_over_training_legend_lists_the_runs_in_the_tables_order():
    """One family: the legend read batch128, batch256, batch64 (0.5b, 1.5b, 14b, 3b, 7b), the table
    batch64, batch128, batch256."""
    from entropylaw.figure_sets.interventions import interventions_figure

    steps = np.arange(0, 100, 5)
    t = None
    for k, run in enumerate(["sweep_batch256", "sweep_batch64", "sweep_batch128"]):
        H = 0.8 * np.exp(-steps / (10 + k)) + 0.1
        recs = [(int(s), "entropy", float(h)) for s, h in zip(steps, H)]
        recs += [(int(s), "val/acc", float(0.9 - 0.5 * h)) for s, h in zip(steps, H)]
        part = el.table.from_records(recs, run_id=run, model="m")
        t = part if t is None else el.table.concat([t, part])
    built = interventions_figure(t)[0]
    try:
        texts = [x.get_text().split(":")[0] for lg in built.fig.legends for x in lg.get_texts()]
        assert texts == ["batch64", "batch128", "batch256"], texts
    finally:
        plt.close(built.fig)
