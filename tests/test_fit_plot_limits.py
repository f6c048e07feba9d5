"""Score axes of the law figures: fitted to the data and the fit, not to a huge band."""

from __future__ import annotations

import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from entropylaw.fit.early import EarlyPrediction  # noqa: E402
from entropylaw.fit.law import EntropyLawFit  # noqa: E402
from entropylaw.draw.law import plot_early, plot_law  # noqa: E402

# five scattered points over a short entropy range: the ceiling's interval runs from
# below 0 to above 2, so does the prediction band near H = 0
H_SHORT = np.array([1.2, 1.1, 1.0, 0.95, 0.9])
R_SHORT = np.array([0.20, 0.60, 0.30, 0.70, 0.45])


def _ls(H, R):
    """Independent least squares for R = b - a exp(H)."""
    (a, b), *_ = np.linalg.lstsq(np.column_stack([-np.exp(H), np.ones(len(H))]), R, rcond=None)
    return a, b


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_law_axis_ignores_a_huge_band_for_a_fraction_score():
    fit = EntropyLawFit(warn=False).fit(H_SHORT, R_SHORT)
    ax = plot_law(H_SHORT, R_SHORT, fit)
    lo, hi = ax.get_ylim()
    # the curve b - a exp(h) is monotone on [0, 1.04 max H]: its extremes are at the ends
    a, b = _ls(H_SHORT, R_SHORT)
    ends = b - a * np.exp(np.array([0.0, 1.04 * H_SHORT.max()]))
    expect_lo = max(min(R_SHORT.min(), ends.min()) - 0.05, -0.05)
    expect_hi = min(max(R_SHORT.max(), ends.max()) + 0.05, 1.05)
    assert (lo, hi) == pytest.approx((expect_lo, expect_hi), abs=1e-9)
    # the band really is wider than the axes (it is drawn, only cut)
    plo, phi = fit.prediction_band(np.linspace(0, H_SHORT.max(), 50))
    assert plo.min() < -0.05 and phi.max() > 1.05


def test_non_fraction_scores_are_not_clipped_to_0_1():
    R = 3.0 + 5 * (R_SHORT - 0.2)  # rewards in [3, 5.5]
    fit = EntropyLawFit(warn=False).fit(H_SHORT, R)
    lo, hi = plot_law(H_SHORT, R, fit, numbers=False).get_ylim()
    a, b = _ls(H_SHORT, R)
    ends = b - a * np.exp(np.array([0.0, 1.04 * H_SHORT.max()]))
    top, bottom = max(R.max(), ends.max()), min(R.min(), ends.min())
    assert hi == pytest.approx(top + 0.05 * (top - bottom)) and lo == pytest.approx(bottom - 0.05 * (top - bottom))
    assert hi > 1.05


def test_shared_axes_keep_every_run_in_view():
    H1 = 0.05 + np.exp(-np.arange(40) / 8)
    R1 = 0.8 - 0.2 * np.exp(H1) + 0.01 * np.sin(np.arange(40))
    H2 = 0.1 + 0.5 * np.exp(-np.arange(30) / 6)
    R2 = 0.35 - 0.1 * np.exp(H2) + 0.01 * np.cos(np.arange(30))
    ax = plot_law(H1, R1, EntropyLawFit(warn=False).fit(H1, R1), numbers=False, bands="confidence")
    plot_law(H2, R2, EntropyLawFit(warn=False).fit(H2, R2), ax=ax, numbers=False, bands="confidence")
    lo, hi = ax.get_ylim()
    assert lo <= min(R1.min(), R2.min()) - 0.05 + 1e-12 and hi >= max(R1.max(), R2.max()) + 0.05 - 1e-12


def _early_run(n=40, seed=3):
    rng = np.random.default_rng(seed)
    steps = np.arange(n) * 10
    H = 0.05 + np.exp(-steps / 80)
    R = np.clip(0.9 - 0.4 * np.exp(H) + 0.04 * rng.standard_normal(n), 0, 1)
    return pd.DataFrame({"step": steps, "H": H, "R": R})


def test_early_axis_ignores_the_band_and_marks_the_horizon():
    p = _early_run()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ep = EarlyPrediction(fit_steps=31, predict_steps=100, warn=False).fit(p)  # the first 31 steps: 0 .. 30
    assert ep.predicted_["pred_lo"].min() < -0.05  # an early window: the band runs far below 0
    fig, ax = plt.subplots()
    plot_early(p, ep, ax=ax)
    lo, hi = ax.get_ylim()
    a, b = _ls(p.H[p.step <= 30].to_numpy(), p.R[p.step <= 30].to_numpy())
    curve = np.append(b - a * np.exp(p.H.to_numpy()), b - a)  # predictions at every step, and the ceiling
    assert lo == pytest.approx(max(min(p.R.min(), curve.min()) - 0.05, -0.05), abs=1e-9)
    assert hi == pytest.approx(min(max(p.R.max(), curve.max()) + 0.05, 1.05), abs=1e-9)
    # the horizon line sits at window end + N; the points after it are drawn apart
    vlines = [ln for ln in ax.get_lines() if ln.get_label().startswith("horizon")]
    assert len(vlines) == 1 and vlines[0].get_xdata()[0] == 130
    after = [c for c in ax.collections if "after the horizon" in str(c.get_label())]
    assert len(after) == 1 and len(after[0].get_offsets()) == int((p.step > 130).sum())


def _run_records(run_id, H, R):
    steps = np.arange(len(H)) * 10
    return [(int(s), "entropy", float(h)) for s, h in zip(steps, H)] + \
        [(int(s), "val/mean", float(r)) for s, r in zip(steps, R)]


def test_family_panel_keeps_a_run_the_law_does_not_describe_in_view():
    """A run the law does not describe (its entropy rises) whose scores lie in [0, 1] beside fractions stays on
    the family panel's score axis: the axis was cut to the other run's scores (its points above it hidden)."""
    import entropylaw.table as tt
    from entropylaw.figure_sets.law import law_figures

    n = np.arange(30)
    H1 = 0.05 + np.exp(-n / 8)
    R1 = 0.6 - 0.15 * np.exp(H1) + 0.01 * np.sin(n)
    H2 = 0.2 + 0.01 * n  # rises: the law does not apply
    R2 = 0.9 + 0.02 * np.cos(n)
    t = pd.concat([tt.from_records(_run_records("good", H1, R1), run_id="good", model="m"),
                   tt.from_records(_run_records("rising", H2, R2), run_id="rising", model="m")])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        family = law_figures(t)[0]
    ax = family.fig.axes[0]
    lo, hi = ax.get_ylim()
    xlo, xhi = ax.get_xlim()
    shown = R2[H2 <= xhi]
    assert len(shown) and hi >= shown.max() and lo <= R1.min(), (lo, hi)


def test_a_panels_numbers_lose_words_before_they_are_cut():
    """Above a narrow panel the numbers' shorter wording is shown whole: the middle cut of the long one took the
    words that say what the numbers are ("law does not ap… 0.975 vs 0.340")."""
    from entropylaw.figure_sets.law import panel_title

    fig, ax = plt.subplots()
    long = "law does not apply · RMSE 0.123 · end 0.975 vs 0.340"
    panel_title(ax, "run", "fit ≤ step 30", [long, "law n/a · RMSE 0.123 · end 0.975 vs 0.340",
                                             "law n/a · end 0.975 vs 0.340"], "C3", width_pt=210)
    assert [t.get_text() for t in ax.texts] == ["law n/a · end 0.975 vs 0.340"]


def test_early_figure_says_beside_its_ceiling_where_the_law_does_not_apply():
    """The early-prediction figure printed 'ceiling = 0.654' for a window with a <= 0 (entropy rising)
    and nothing else; the text and JSON say 'law does not apply' beside it, as the law's figure does."""
    steps = np.arange(0, 300, 5.0)
    H = (0.05 + np.exp(-steps / 75))[::-1]  # entropy rises
    p = pd.DataFrame({"step": steps, "H": H, "R": 0.9 - 0.3 * np.exp(H[::-1])})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ep = EarlyPrediction(fit_frac=0.3, warn=False).fit(p)
    assert ep.fit_.trust_ == "law does not apply"
    fig, ax = plt.subplots()
    plot_early(p, ep, ax=ax)
    box = " ".join(t.get_text() for t in ax.texts)
    assert "ceiling = " in box and "trust = law does not apply" in box
    plt.close(fig)
