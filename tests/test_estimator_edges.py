"""The estimators' edges, as a hostile caller meets them: every mistake one EntropyLawError naming
the option or argument and what is expected, never numpy's or matplotlib's error from deep inside."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import entropylaw as el
from entropylaw.errors import EntropyLawError, EntropyLawWarning
from entropylaw.fit.algorithms import AlgorithmTest
from entropylaw.fit.early import EarlyPrediction
from entropylaw.fit.law import EntropyLawFit

H = 0.05 + 1.2 * np.exp(-np.arange(30) / 10)
R = 0.85 - 0.3 * np.exp(H) + 0.01 * np.sin(np.arange(30))


def _fit(**options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EntropyLawWarning)
        return EntropyLawFit(**options).fit(H, R)


@pytest.mark.parametrize("weights, said", [
    ("x", r"`weights` 'x': expected one positive finite number per point"),
    ([1.0, 2.0], r"`weights`: 2 numbers for 30 points \(expected one positive finite number per point"),
    (-np.ones(30), r"`weights`: -1 at point 0 \(expected one positive finite number per point"),
    (np.r_[np.ones(3), np.nan, np.ones(26)], r"`weights`: nan at point 3 \(expected one positive"),
    ([None] * 30, r"`weights` .*: expected one positive finite number per point"),
    (2.0, r"`weights` 2.0: expected one positive finite number per point"),
])
def test_bad_weights_are_one_error_naming_the_option(weights, said):
    with pytest.raises(EntropyLawError, match=said):
        _fit(weights=weights)


@pytest.mark.parametrize("sd", ["x", -1, float("nan"), [0.1, 0.2], float("inf")])
def test_a_bad_entropy_sd_is_one_error_naming_the_option(sd):
    with pytest.raises(EntropyLawError, match=r"`entropy_sd` .*: expected the logged entropy's noise sd in nats, "
                                              r"a number >= 0"):
        _fit(errors_in_variables=True, entropy_sd=sd)


def test_good_weights_and_entropy_sd_fit_as_before():
    assert _fit(weights=np.ones(30)).a_ == pytest.approx(_fit().a_)
    assert np.isfinite(_fit(errors_in_variables=True, entropy_sd=0).a_)
    assert np.isfinite(_fit(errors_in_variables=True, entropy_sd=0.01).a_)


def test_the_options_are_checked_before_any_run_is_read():
    with pytest.raises(EntropyLawError, match="`weights` 'x'"):
        el.fit(el.table.from_records([(1, "entropy", 0.5)], run_id="r"), run="r", weights="x")


@pytest.mark.parametrize("runs, said", [([0, 1], r"`runs`: 2 labels for 30 points"),
                                        (np.r_[np.zeros(29), np.nan], r"`runs`: no run label at point 29")])
def test_run_labels_that_do_not_match_the_points_are_one_error(runs, said):
    with pytest.raises(EntropyLawError, match=said):
        EntropyLawFit(warn=False).fit(H, R, runs=runs)


def _results():
    """One of each result with a ``plot``, fitted on a small run."""
    steps = 10 * np.arange(30)
    pairs = pd.DataFrame({"step": steps, "H": H, "R": R})
    runs = {k: pairs.assign(R=R + d) for k, d in (("g1", 0.0), ("g2", 0.002), ("r1", 0.004))}
    recs = [(int(s), "val/gsm8k", 0.8 - 0.4 * np.exp(-s / 80)) for s in range(0, 500, 10)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EntropyLawWarning)
        return [_fit(), EarlyPrediction(fit_frac=0.4).fit(pairs),
                AlgorithmTest().fit(runs, {"g1": "grpo", "g2": "grpo", "r1": "rloo"}),
                el.forecast(el.table.from_records(recs, run_id="r"), fit_frac=0.4, n_boot=20)]


@pytest.mark.parametrize("ax", [3, "left", [None]])
def test_a_plot_on_what_is_not_an_axes_is_one_error_naming_ax(ax):
    for result in _results():
        with pytest.raises(EntropyLawError, match=r"`ax` .*: expected a matplotlib Axes"):
            result.plot(ax=ax)


@pytest.mark.parametrize("method", ["predict", "confidence_band", "prediction_band"])
@pytest.mark.parametrize("H_new", ["x", None, ["0.1", None], {"H": 0.1}])
def test_predicting_at_what_is_not_entropies_is_one_error_naming_the_argument(method, H_new):
    with pytest.raises(EntropyLawError, match=r"`H` .*: expected entropies in nats: a number or a 1-D array"):
        getattr(_fit(), method)(H_new)


def test_predicting_at_entropies_gives_what_it_gave():
    f = _fit()
    assert f.predict(0.5) == pytest.approx(f.b_ - f.a_ * np.exp(0.5))
    assert f.predict([0.5, 1.0]) == pytest.approx(f.b_ - f.a_ * np.exp([0.5, 1.0]))
    lo, hi = f.confidence_band(0.5)
    assert lo.shape == hi.shape == (1,) and lo[0] < f.predict(0.5) < hi[0]
    with pytest.raises(EntropyLawError, match=r"`H` of shape \(2, 2\): expected entropies"):
        f.prediction_band([[0.1, 0.2], [0.3, 0.4]])


def _table(H_run, R_run):
    steps = [int(s) for s in 10 * np.arange(1, len(H_run) + 1)]
    return el.table.concat([el.table.from_records([(s, "entropy", h) for s, h in zip(steps, H_run)], run_id="r"),
                            el.table.from_records([(s, "val/gsm8k", r) for s, r in zip(steps, R_run)], run_id="r")])


def test_a_bare_fit_the_law_does_not_describe_says_so_where_el_fit_does():
    """A bare EntropyLawFit with a <= 0 had "trust": null; only its warnings said the law does not describe it."""
    R_up = 0.2 + 0.1 * np.exp(H) + 0.005 * np.sin(np.arange(30))  # the score falls as entropy falls: a < 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EntropyLawWarning)
        bare = EntropyLawFit().fit(H, R_up)
        run = el.fit(_table(H, R_up), run="r")
    d, via_el = bare.to_dict(), run.to_dict()
    assert d["trust"] == via_el["trust"] == "law does not apply"
    assert d["trust_reasons"] and set(d["trust_reasons"]) <= set(via_el["trust_reasons"])
    assert "[[Trust]] law does not apply: a = -0.1" in bare.fit_report()


def test_a_bare_fit_the_law_may_describe_says_it_is_not_judged():
    bare = _fit()
    d = bare.to_dict()
    assert d["trust"] is None and d["trust_reasons"][0].startswith("not judged: a bare fit has its paired points only")
    assert "[[Trust]] not judged: a bare fit" in bare.fit_report()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EntropyLawWarning)
        assert el.fit(_table(H, R + 0.3), run="r").to_dict()["trust"] == "good fit"  # judged where the run is read


@pytest.mark.parametrize("make, call", [(EntropyLawFit, "fit(H, R)"), (EarlyPrediction, "fit(pairs)"),
                                        (AlgorithmTest, "fit(pairs_by_run, algorithm_of_run)")])
def test_an_unfitted_estimator_s_text_says_it_is_not_fitted_yet(make, call):
    """str(EarlyPrediction()) raised NotFittedError where str(EntropyLawFit()) said "not fitted"."""
    est = make()
    assert str(est) == f"{make.__name__} (not fitted yet: call {call})"
    assert repr(est).startswith(f"{make.__name__}(") and repr(est).endswith(")")
    assert est._repr_html_().count(make.__name__) == 1 and "Error" not in est._repr_html_()


def _pairs():
    return pd.DataFrame({"step": 10 * np.arange(30), "H": H, "R": R})


@pytest.mark.parametrize("pairs, said", [
    ([1, 2, 3], r"`pairs` \[1, 2, 3\]: expected a DataFrame with columns step, H, R"),
    (_pairs().to_numpy(), r"`pairs` a ndarray of 90: expected a DataFrame with columns step, H, R"),
    (_pairs().drop(columns="H"), r"`pairs` has no column H \(expected step, H, R"),
    (_pairs().iloc[:0], r"0 paired \(entropy, score\) points; the fit needs at least 3"),
    (_pairs().assign(H=np.r_[H[:20], np.nan, H[21:]]), r"1 non-finite entropy value, first at point 20"),
    (_pairs().assign(step=np.r_[np.arange(20.0), np.nan, np.arange(21.0, 30)]), r"a non-finite step at point 20"),
])
def test_early_prediction_of_what_is_not_pairs_is_one_error(pairs, said):
    """A list raised AttributeError, a missing column KeyError, no rows numpy's ValueError; a NaN entropy after
    the window gave a NaN RMSE, unsaid."""
    with pytest.raises(EntropyLawError, match=said):
        EarlyPrediction(fit_frac=0.4, warn=False).fit(pairs)


@pytest.mark.parametrize("options, said", [
    ({"fit_steps": "x"}, r"`fit_steps` 'x': expected a number"),
    ({"fit_frac": "0.3"}, r"`fit_frac` '0.3': expected a number"),
    ({"fit_frac": 0.4, "predict_steps": "x"}, r"`predict_steps` 'x': expected a positive number of steps"),
    ({"fit_frac": 0.4, "origin": "x"}, r"`origin` 'x': expected the first logged step, a number"),
])
def test_early_prediction_s_bad_options_are_one_error_naming_them(options, said):
    with pytest.raises(EntropyLawError, match=said):
        EarlyPrediction(warn=False, **options).fit(_pairs())


def test_predictions_made_without_a_window_named_still_print():
    from entropylaw.fit.early import EarlyPredictions

    ep = EarlyPrediction(fit_frac=0.4, warn=False).fit(_pairs())
    assert str(EarlyPredictions({"r": ep})).startswith("paper protocol: fit on the early window of each run")
    assert str(EarlyPredictions({})).startswith("paper protocol")
