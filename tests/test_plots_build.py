"""The figure builders on small synthetic tables: which runs they pick, the numbers they
put on the figure, and the reasons they give when a figure cannot be drawn."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from scipy import stats  # noqa: E402

from entropylaw import table  # noqa: E402
from entropylaw.plots import build as B  # noqa: E402
from entropylaw.plots.build_lab import ladder_parts  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def law_run(run_id, a, b, n_params=np.nan, algorithm="grpo", model="m", tau=50.0):
    steps = np.arange(0, 300, 10)
    H = 1.0 * np.exp(-steps / tau) + 0.1
    R = b - a * np.exp(H) + 0.003 * np.sin(1.7 * steps)
    recs = [(int(s), "entropy", float(h)) for s, h in zip(steps, H)]
    recs += [(int(s), "val/mean", float(r)) for s, r in zip(steps, R)]
    return table.from_records(recs, run_id=run_id, model=model, algorithm=algorithm, dataset="d",
                              n_params_nonembedding=n_params)


def test_scaling_holds_out_the_largest_size_and_predicts_it():
    pytest.importorskip("entropylaw.fit.scaling")
    sizes = np.array([1e8, 4e8, 1.6e9, 6.4e9])
    a_true = 0.05 + 0.04 * np.log10(sizes / 1e8)
    b_true = 0.6 + 0.05 * np.log10(sizes / 1e8)
    t = table.concat([law_run(f"s{i}", a, b, n_params=n, model=f"m{i}")
                      for i, (n, a, b) in enumerate(zip(sizes, a_true, b_true))])
    [built] = B.build("scaling", t)
    assert built.name == "fig07_scaling" and len(built.fig.axes) == 3
    ax_a = built.fig.axes[0]
    note = next(x.get_text() for x in ax_a.texts if x.get_text().startswith("observed"))
    observed = float(note.split("\n")[0].split()[-1])
    predicted = float(note.split("\n")[1].split()[-1])
    # the size law is exact in log10 N: the held-out a is predicted to fitting noise
    assert observed == pytest.approx(a_true[-1], abs=0.01)
    assert predicted == pytest.approx(a_true[-1], abs=0.01)
    assert any("prediction band" in t.get_text() for t in ax_a.get_legend().get_texts())


def test_scaling_needs_three_sizes():
    t = table.concat([law_run("s0", 0.1, 0.7, n_params=1e8), law_run("s1", 0.12, 0.72, n_params=1e9)])
    with pytest.raises(B.Skipped, match="fewer than 3 model sizes"):
        B.build("scaling", t)


def test_algorithms_needs_two_algorithms_on_one_model():
    t = table.concat([law_run("r0", 0.1, 0.7), law_run("r1", 0.1, 0.7, tau=70)])
    with pytest.raises(B.Skipped, match="two or more algorithms"):
        B.build("algorithms", t)


def test_algorithms_draws_the_shared_fit_for_grpo_and_rloo():
    pytest.importorskip("entropylaw.fit.algorithms")
    t = table.concat([law_run("g", 0.2, 0.8), law_run("r", 0.2, 0.8, algorithm="rloo", tau=80)])
    [built] = B.build("algorithms", t)
    ax = built.fig.axes[0]
    box = ax.texts[0].get_text()
    assert "a (shared) = 0.200" in box and "b (shared) = 0.800" in box
    assert len(ax.collections) == 2


def lab_run():
    rng = np.random.default_rng(3)
    steps = np.arange(40)
    cov = 0.02 * np.exp(-steps / 10) + 0.001
    delta = -0.5 * cov + rng.normal(0, 0.001, 40)
    recs = [(int(s), "entropy", float(1 - 0.01 * s)) for s in steps]
    recs += [(int(s), "cov/response_level", float(c)) for s, c in zip(steps, cov)]
    recs += [(int(s), "actor/entropy_delta", float(d)) for s, d in zip(steps, delta)]
    recs += [(int(s), "cov/response_level/hard", float(c / 2)) for s, c in zip(steps, cov)]
    recs += [(int(s), "cov/response_level/easy", float(c * 2)) for s, c in zip(steps, cov)]
    return table.from_records(recs, run_id="lab-grpo"), cov, delta


def test_covariance_uses_the_measured_entropy_change_and_difficulty_groups():
    t, cov, delta = lab_run()
    [built] = B.build("covariance", t)
    left = built.fig.axes[0]
    r = stats.pearsonr(cov, -delta).statistic
    assert f"Pearson r = {r:.3f} over 40 steps" in left.get_legend().get_title().get_text()
    groups = [a for a in built.fig.axes if a.get_title().endswith("covariance by prompt accuracy")][0]
    assert sorted(l.get_label().split(" ")[0] for l in groups.get_lines() if not l.get_label().startswith("_")) \
        == ["easy", "hard"]
    assert "measured" in built.caption


def test_covariance_skips_without_the_metric():
    with pytest.raises(B.Skipped, match="cov/response_level"):
        B.build("covariance", law_run("r", 0.1, 0.7))


def test_ladder_parts_reads_the_probe_layout():
    ladder = {"eta": 0.01, "estimators": {"lemma1": {"pearson": 0.99, "predicted_mean": -0.02, "measured_mean": -0.021},
                                          "theorem2": {"pearson": 0.3, "predicted_mean": -0.005,
                                                       "measured_mean": -0.021}}}
    est, measured = ladder_parts(ladder)
    assert list(est) == ["lemma1", "theorem2"] and measured == -0.021
    flat = {"lemma1": {"pearson": 0.9, "predicted": -0.01}, "measured": -0.012}
    est, measured = ladder_parts(flat)
    assert est["lemma1"]["predicted_mean"] == -0.01 and measured == -0.012


def test_unknown_figure_name_is_a_user_error():
    from entropylaw.errors import EntropyLawError

    with pytest.raises(EntropyLawError, match="unknown figure 'fig99'"):
        B.build("fig99", law_run("r", 0.1, 0.7))
