"""Each plot function drawn from small data; checks content (labels, curves, numbers), not pixels.

Expected numbers come from closed forms or numpy/scipy computed here, never from the
plot modules' own helpers.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from scipy import stats  # noqa: E402

from entropylaw import table  # noqa: E402
from entropylaw.figure_sets import comparisons, consumption, covariance, interventions, probe_tables  # noqa: E402
from entropylaw.draw import sizes as size_plot, style  # noqa: E402

# prints numbers: run again under another BLAS kernel set (make test, OPENBLAS_CORETYPE=Prescott)
pytestmark = pytest.mark.printed


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def texts(ax) -> list[str]:
    return [t.get_text() for t in ax.texts]


def legend_labels(ax) -> list[str]:
    leg = ax.get_legend()
    return [t.get_text() for t in leg.get_texts()] if leg else []


def exp_run(steps, tau_h, tau_r):
    e = 1 - np.exp(-steps / tau_h)
    g = 1 - np.exp(-steps / tau_r)
    return pd.DataFrame({"step": steps, "entropy_consumed": e / e[-1], "performance_gain": g / g[-1]})


def _legend_title(ax) -> str:
    leg = ax.get_legend() or (ax.figure.legends[0] if ax.figure.legends else None)
    return leg.get_title().get_text() if leg else ""


def test_consumption_single_run_marks_show_the_interpolated_shares():
    steps = np.arange(0, 1001, 10)
    run = exp_run(steps, 100, 150)
    ax = consumption.plot_consumption({"r1": run}, marks=(0.2, 0.8))
    assert ax.get_xlabel() == consumption.X_LABEL and "(%)" in ax.get_ylabel()
    assert len(ax.get_lines()) == 2 + 2  # two curves + two mark lines
    # 20 % of training is step 200 (on the grid): the share is the closed form itself
    e200 = (1 - np.exp(-2)) / (1 - np.exp(-10))
    g200 = (1 - np.exp(-200 / 150)) / (1 - np.exp(-1000 / 150))
    text = _legend_title(ax)
    assert f"at 20 % of training: entropy {100 * e200:.0f} %, gain {100 * g200:.0f} %" in text
    assert "by construction" in text  # the trivially-true end is explained, not read
    labels = [t.get_text() for t in ax.figure.legends[0].get_texts()]
    assert labels == ["entropy consumed (r1)", "performance gained (r1)"]


def test_consumption_several_runs_share_the_fraction_axis_to_the_end():
    # runs of different lengths: on the fraction axis both reach 100 % of training
    runs = {"a": exp_run(np.arange(0, 301, 10), 50, 60), "b": exp_run(np.arange(0, 1201, 10), 200, 240)}
    ax = consumption.plot_consumption(runs, marks=(1 / 12, 1 / 3))
    mean = [ln for ln in ax.get_lines() if "median of 2 runs" in ln.get_label()]
    assert len(mean) == 2 and max(mean[0].get_xdata()) == pytest.approx(100)
    # the median of two runs is their mean; 1/12 of training: step 25 of 300 and step 100 of 1200
    e = np.mean([(1 - np.exp(-25 / 50)) / (1 - np.exp(-300 / 50)), (1 - np.exp(-100 / 200)) / (1 - np.exp(-6))])
    text = _legend_title(ax)
    assert f"at 8 % of training: entropy {100 * e:.0f} %" in text and "paper, step 200 of 2400: 73 %, 76 %" in text


def test_algorithms_shared_curve_and_test_numbers():
    H = np.linspace(0.1, 1.0, 10)
    pts = {f"run{i}": pd.DataFrame({"H": H, "R": -0.2 * np.exp(H) + 0.9}) for i in range(3)}
    alg = {"run0": "grpo", "run1": "rloo", "run2": "grpo"}
    ax = comparisons.plot_algorithms(pts, alg, {"a": 0.2, "b": 0.9}, per_algorithm={"grpo": {"a": 0.21, "b": 0.91}},
                                    test={"f_stat": 2.5, "p_value": 0.091, "verdict": "one curve"})
    shared = ax.get_lines()[0]
    x = np.asarray(shared.get_xdata())
    np.testing.assert_allclose(shared.get_ydata(), 0.9 - 0.2 * np.exp(x))
    assert len(ax.collections) == 3  # one scatter per run
    colors = [tuple(c.get_facecolor()[0]) for c in ax.collections]
    assert colors[0] == colors[2] != colors[1]  # without run colours: one colour per algorithm
    markers = [c.get_paths()[0].vertices.tobytes() for c in ax.collections]
    assert markers[0] == markers[2] != markers[1]  # and the marker follows the algorithm
    numbers = ax.figure.legends[0].get_title().get_text()
    assert "F = 2.500" in numbers and "p = 0.091" in numbers and "ceiling b-a = 0.700" in numbers
    assert "one curve" in numbers and ax.get_xlabel() == style.ENTROPY_LABEL and "fraction" in ax.get_ylabel()
    assert sum("alone" in t.get_text() for t in ax.figure.legends[0].get_texts()) == 1
    # with run colours (the report's), each run keeps its own colour
    ax = comparisons.plot_algorithms(pts, alg, {"a": 0.2, "b": 0.9}, run_colors={"run0": "#111111", "run2": "#222222"})
    assert [matplotlib.colors.to_hex(c.get_facecolor()[0]) for c in ax.collections][::2] == ["#111111", "#222222"]


def test_scaling_held_out_prediction_is_written():
    N = np.array([1e8, 3e8, 1e9, 3e9])
    slope, icpt = 0.04, -0.5
    sizes = pd.DataFrame({"n_params": N, "a": slope * np.log(N) + icpt, "b": 0.5 + 0 * N,
                          "held_out": [False, False, False, True]})
    sizes.loc[3, "a"] += 0.02  # the held-out model beats its prediction by 0.02
    grid = np.geomspace(5e7, 6e9, 40)
    curve = pd.DataFrame({"n_params": grid, "a": slope * np.log(grid) + icpt})
    curve["a_lo"], curve["a_hi"] = curve["a"] - 0.01, curve["a"] + 0.01
    fig = size_plot.plot_size_law(sizes, curve, equation={"a": (slope, icpt)}, coefs=["a"])
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and "parameters" in ax.get_xlabel() and ax.get_ylabel().startswith("coefficient a")
    note = ax.get_legend().get_title().get_text()  # under the panel, where it covers no point
    predicted = slope * np.log(3e9) + icpt
    assert f"predicted {predicted:.3f}" in note and "error -0.020" in note
    labels = legend_labels(ax)
    assert any(l.startswith("a = 0.040·log10 N - 0.500") for l in labels) and "95 % prediction band" in labels
    assert any(l.startswith("held out") for l in labels)


def _scaling_runs(spread):
    """Two runs per size around a = 0.1 log10 N - 0.5; the largest size held out."""
    N = np.repeat([1e8, 3e8, 1e9, 3e9], 2)
    a = 0.1 * np.log10(N) - 0.5 + np.tile([-spread, spread], 4)
    a[N == N.max()] += 0.03  # the held-out size beats the line by 0.03
    return pd.DataFrame({"n_params": N, "a": a, "b": 0.5 + 0 * N, "label": np.repeat(["s", "m", "l", "xl"], 2),
                         "held_out": N == N.max()})


def _band_curve(sizes, half):
    train = sizes[~sizes["held_out"]]
    slope, icpt = np.polyfit(np.log10(train["n_params"]), train["a"], 1)
    grid = np.geomspace(5e7, 5e9, 40)
    curve = pd.DataFrame({"n_params": grid, "a": slope * np.log10(grid) + icpt})
    curve["a_lo"], curve["a_hi"] = curve["a"] - half, curve["a"] + half
    return curve, slope, icpt


def test_scaling_per_run_points_and_ylim_clip_a_wide_band():
    sizes = _scaling_runs(0.01)
    curve, slope, icpt = _band_curve(sizes, half=5.0)  # a t band with few dof: far wider than the data
    ax = size_plot.plot_coefficient(sizes, "a", curve=curve, equation={"a": (slope, icpt)})
    fitted, held = [c.lines[0] for c in ax.containers]
    assert len(fitted.get_xdata()) == 6 and len(held.get_xdata()) == 2
    lo, hi = ax.get_ylim()
    shown = list(sizes["a"]) + list(curve["a"]) + [slope * np.log10(3e9) + icpt]
    assert lo < min(shown) and hi > max(shown)
    span = max(shown) - min(shown)
    assert hi - lo == pytest.approx(1.3 * span)  # padded 15 % each side
    assert hi - lo < curve["a_hi"].max() - curve["a_lo"].min()
    assert "95 % prediction band (cut)" in legend_labels(ax)
    box = ax.get_legend().get_title().get_text()  # the numbers head the legend under the panel
    assert f"slope {slope:.3f} per decade" in box and "6 runs of 3 sizes, 1 dof" in box
    note = box.split("held out: ")[1]
    observed = sizes.loc[sizes["held_out"], "a"].mean()
    predicted = slope * np.log10(3e9) + icpt
    assert f"observed {observed:.3f} (mean of 2)" in note and f"error {predicted - observed:.3f}" in note


def test_scaling_narrow_band_is_not_called_clipped():
    sizes = _scaling_runs(0.01)
    curve, slope, icpt = _band_curve(sizes, half=0.005)
    ax = size_plot.plot_coefficient(sizes, "a", curve=curve, equation={"a": (slope, icpt)})
    assert "95 % prediction band" in legend_labels(ax)
    lo, hi = ax.get_ylim()
    assert lo < curve["a_lo"].min() and hi > curve["a_hi"].max()


def test_covariance_correlation_and_twin_axis():
    rng = np.random.default_rng(1)
    steps = np.arange(30)
    cov = np.exp(-steps / 8) + rng.normal(0, 0.05, 30)
    dh = -0.3 * cov + rng.normal(0, 0.05, 30)
    ax = covariance.plot_cov_vs_entropy_change(steps, cov, dh)
    r = stats.pearsonr(cov, -dh).statistic
    title = _legend_title(ax)
    assert f"Pearson r = {r:.3f} over 30 steps" in title
    assert f"Cov > 0 at {100 * np.mean(cov > 0):.0f} %" in title
    twin = [a for a in ax.figure.axes if a is not ax][0]
    np.testing.assert_allclose(twin.get_lines()[0].get_ydata(), -dh)
    assert "nats" in twin.get_ylabel() and ax.get_xlabel() == style.STEP_LABEL
    # zero sits at the same height on both y axes
    f1 = -ax.get_ylim()[0] / np.ptp(ax.get_ylim())
    f2 = -twin.get_ylim()[0] / np.ptp(twin.get_ylim())
    assert f1 == pytest.approx(f2)
    # and neither curve is squeezed into a strip: each spans most of its own axis
    for axis, y in ((ax, cov), (twin, -dh)):
        assert np.ptp(y) / np.ptp(axis.get_ylim()) > 0.6


def test_align_zero_gives_a_small_curve_its_axis():
    # a real probe's case: Cov all positive, -ΔH 20x smaller and partly negative
    fig, left = style.new_axes()
    right = left.twinx()
    cov, neg = np.array([0.03, 0.28, 0.1]), np.array([-0.006, 0.015, 0.004])
    covariance.align_zero(left, right, cov, neg)
    (l0, l1), (r0, r1) = left.get_ylim(), right.get_ylim()
    assert -l0 / (l1 - l0) == pytest.approx(-r0 / (r1 - r0))  # zero at the same height
    # both fill most of their axis (with zero in view): the old rule left -ΔH 12 % of its axis
    spans = [(max(y.max(), 0) - min(y.min(), 0)) / (hi - lo) for y, (lo, hi) in ((cov, (l0, l1)), (neg, (r0, r1)))]
    assert min(spans) > 0.65


def test_entropy_change_matches_numpy_diff():
    H = pd.Series([1.0, 0.8, 0.75, 0.7], index=[0, 2, 4, 6])
    d = covariance.entropy_change(H)
    np.testing.assert_allclose(d.to_numpy(), np.diff(H.to_numpy()))
    assert d.index.tolist() == [0, 2, 4]


def test_cov_by_difficulty_one_line_per_group_with_means():
    groups = {"easy": pd.Series([1.0, 2.0]), "other": pd.Series([5.0, 7.0]), "hard": pd.Series([0.1, 0.2, 0.3])}
    ax = covariance.plot_cov_by_difficulty(groups)
    labels = [t.get_text() for t in ax.figure.legends[0].get_texts()]
    # hard first, then easy (the paper's order), unknown groups after, each with its mean
    assert labels == ["hard: acc < 1/3, mean 0.200", "easy: acc > 2/3, mean 1.500", "other, mean 6.000"]


def _runs_table(with_length=True):
    parts = []
    for k, name in enumerate(["GRPO", "KL-Cov"]):
        recs = [(s, "entropy", 1.0 / (s + 1) + 0.1 * k) for s in range(20)]
        recs += [(s, "val/mean", 0.3 + 0.01 * s + 0.05 * k) for s in range(0, 20, 5)]
        if with_length:
            recs += [(s, "response_length", 200.0 + 10 * s) for s in range(20)]
        parts.append(table.from_records(recs, run_id=name))
    return table.concat(parts)


@pytest.mark.parametrize("with_length,n_panels", [(True, 3), (False, 2)])
def test_interventions_panels_lines_and_final_values(with_length, n_panels):
    t = _runs_table(with_length)
    fig = interventions.plot_interventions(t, "val/mean")
    assert len(fig.axes) == n_panels
    ent, acc = fig.axes[0], fig.axes[1]
    assert ent.get_ylabel().replace("\n", " ") == style.ENTROPY_LABEL and "fraction" in acc.get_ylabel()
    assert len(ent.get_lines()) == 2 and len(acc.get_lines()) == 2
    final_kl = 0.3 + 0.01 * 15 + 0.05
    final_h = 1.0 / 20 + 0.1
    assert [l.get_label() for l in acc.get_lines()][1] == f"KL-Cov (final {final_kl:.3f})"
    assert f"{final_kl:.3f}" in texts(acc) and f"{final_h:.3f}" in texts(ent)
    shared = [t.get_text() for t in fig.legends[0].get_texts()]
    assert shared[1] == f"KL-Cov: final H {final_h:.3f}, final score {final_kl:.3f}"
    if with_length:
        assert "390" in texts(fig.axes[2])


def test_end_labels_do_not_overlap():
    steps = np.arange(10)
    curves = {f"r{k}": pd.Series(0.5 + 0 * steps, index=steps) for k in range(3)}
    curves["top"] = pd.Series(0.9 + 0 * steps, index=steps)
    ax = interventions.plot_over_steps(curves, "accuracy (fraction)")
    to_points = 72.0 / ax.figure.dpi
    placed = sorted(ax.transData.transform(t.xy)[1] * to_points + t.xyann[1] for t in ax.texts)
    assert len(placed) == 4 and np.all(np.diff(placed) >= 9.0 - 1e-6)


def test_table1_bars_and_numbers():
    ours = {"0.0002": 4.0, "0.002": 2.0, "0.02": 1.0, "0.2": 0.3, "0.5": 0.1, "all": 0.002}
    ax = probe_tables.plot_table1(ours, n_tokens=1426)
    assert len(ax.patches) == 12  # ours + paper, six fractions each
    labels = [t.get_text() for t in ax.get_xticklabels()]
    # each fraction says how many of the 1426 tokens it holds: max(1, floor(f * 1426))
    assert labels == ["0.02 %\n1 tok.", "0.2 %\n2 tok.", "2 %\n28 tok.", "20 %\n285 tok.", "50 %\n713 tok.",
                      "all\n1426 tok."]
    assert "5.65" in texts(ax) and "0.002" in texts(ax) and "4" in texts(ax)
    legend = [t.get_text() for t in ax.figure.legends[0].get_texts()]
    assert ax.get_yscale() == "log" and legend == ["this probe", "paper, Qwen2.5-7B step 1"]


def test_parse_fraction_forms():
    assert probe_tables.parse_fraction("top 0.2%") == pytest.approx(0.002)
    assert probe_tables.parse_fraction("2e-4") == pytest.approx(2e-4)
    assert probe_tables.parse_fraction("all") == 1.0
    with pytest.raises(ValueError):
        probe_tables.parse_fraction("most")


LADDER = {"lemma1": {"pearson": 0.99, "spearman": 0.97, "sign_agreement": 0.98, "predicted_mean": -0.0112},
          "theorem2": {"pearson": 0.4, "spearman": 0.35, "sign_agreement": 0.7, "predicted_mean": -4e-7}}


def test_ladder_draws_only_lemma1_against_the_measured_change():
    fig = probe_tables.plot_ladder(LADDER, measured=-0.01)
    left, right = fig.axes
    assert len(left.patches) == 6 and "0.99" in texts(left)
    assert [t.get_text() for t in left.get_yticklabels()] == ["lemma1", "theorem2"]
    # the tabular estimator is off the measured scale: not a bar on the right, named in the note
    assert [t.get_text() for t in right.get_yticklabels()] == ["measured", "lemma1"]
    widths = sorted(bar.get_width() for bar in right.patches)
    assert widths == pytest.approx([-0.0112, -0.01])
    measured_text = next(t for t in texts(right) if t.startswith("measured"))
    lemma_text = next(t for t in texts(right) if t.startswith("lemma1"))
    assert "-0.0100" in measured_text
    # predicted - measured = -0.0012, 12 % of |measured|
    assert "-0.0112" in lemma_text and "error -0.0012" in lemma_text and "-12 %" in lemma_text
    assert "nats" in right.get_xlabel()


def test_ladder_small_values_get_few_ticks_in_a_named_unit():
    fig = probe_tables.plot_ladder({"lemma1": {"predicted_mean": -0.00337}}, measured=-0.00276)
    right = fig.axes[1]
    fig.canvas.draw()
    labels = [t.get_text() for t in right.get_xticklabels() if t.get_text()]
    lo, hi = right.get_xlim()
    assert sum(lo <= x <= hi for x in right.get_xticks()) <= 5
    # the 10^-3 goes into the axis label (no offset text to collide with it): short tick numbers
    assert "10⁻³ nats" in right.get_xlabel() and right.xaxis.get_offset_text().get_text() == ""
    assert [float(t.replace("−", "-")) for t in labels] == pytest.approx([x * 1e3 for x in right.get_xticks()])
    assert all(len(t) <= 4 for t in labels), labels


def test_ladder_eta_check_panel_shows_the_loglog_slope():
    etas = np.array([0.004, 0.002, 0.001])
    errors = 3.0 * etas ** 2 * np.exp([0.05, -0.02, 0.0])  # second order, a little noise
    slope = np.polyfit(np.log(etas), np.log(errors), 1)[0]
    check = {"etas": list(etas), "lemma1_mean_abs_error": list(errors), "loglog_slope": slope}
    fig = probe_tables.plot_ladder(LADDER, measured=-0.01, eta_check=check)
    assert len(fig.axes) == 3
    ax = fig.axes[2]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    points = ax.get_lines()[0]
    np.testing.assert_allclose(points.get_xdata(), etas)
    np.testing.assert_allclose(points.get_ydata(), errors)
    assert f"fitted slope {slope:.2f}" in legend_labels(ax)
    assert f"log-log slope {slope:.2f}" in ax.get_legend().get_title().get_text()
    # a check with fewer than two usable points draws no third panel
    bad = {"etas": [0.01, 0.005], "lemma1_mean_abs_error": [1e-4, 0.0]}
    assert len(probe_tables.plot_ladder(LADDER, measured=-0.01, eta_check=bad).axes) == 2


def test_saving_twice_gives_identical_bytes(tmp_path):
    steps = np.arange(0, 401, 10)
    outs = []
    for k in range(2):
        ax = consumption.plot_consumption({"a": exp_run(steps, 50, 70), "b": exp_run(steps, 60, 40)})
        outs.append(style.save(ax.figure, tmp_path / f"c{k}"))
        plt.close(ax.figure)
    for first, second in zip(*outs):
        assert first.read_bytes() == second.read_bytes()
