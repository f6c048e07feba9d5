"""el.predict / el.predict_all as a demanding user meets them: a mistake of the call (an unknown
keyword, a window that is no number or out of bounds, a bad horizon, level, pairing or range) is one
error naming the option, said once before any run; never a TypeError from inside, never every run
"left out" for it."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pandas as pd
import pytest

import entropylaw as el
from entropylaw import api


def _runs():
    parts = []
    for i, rid in enumerate("abc"):
        s = np.arange(0, 200, 5.0)
        h = 1.0 * np.exp(-s / 40) + 0.1
        recs = [(t, "entropy", v) for t, v in zip(s, h)]
        recs += [(t, "val/gsm8k", 0.9 + 0.01 * i - 0.3 * np.exp(v)) for t, v in zip(s, h)]
        parts.append(el.table.from_records(recs, run_id=rid))
    return pd.concat(parts, ignore_index=True)


@pytest.mark.parametrize("kw, said", [
    (dict(fit_frac=0), "`fit_frac` must lie strictly between 0 and 1"),
    (dict(fit_frac=1.5), "`fit_frac` must lie strictly between 0 and 1"),
    (dict(fit_frac="0.5"), "`fit_frac` '0.5': expected a number"),
    (dict(fit_steps="10"), "`fit_steps` '10': expected a number"),
    (dict(fit_steps=-3), "`fit_steps` must be positive"),
    (dict(), "give exactly one of `fit_steps` K or `fit_frac` F"),
    (dict(fit_frac=0.3, predict_steps=-1), "`predict_steps` must be positive"),
    (dict(fit_frac=0.3, conf=2), "conf = 2"),
    (dict(fit_frac=0.3, pairing="x"), "unknown pairing 'x'"),
    (dict(fit_frac=0.3, score_range="0,1"), "`score_range` '0,1': expected"),
    (dict(fitfrac=0.3), "unknown option `fitfrac`"),
])
def test_predict_all_refuses_a_bad_option_at_once(kw, said):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no run is left out for it (a warning each) first
        with pytest.raises(el.EntropyLawError, match=f"^{said}"):
            el.predict_all(_runs(), **kw)


def test_predict_refuses_a_window_that_is_no_number():
    with pytest.raises(el.EntropyLawError, match="^`fit_frac` '0.5': expected a number"):
        el.predict(_runs(), "a", fit_frac="0.5")


def test_the_options_checked_are_predicts_own():
    own = [k for k in inspect.signature(api.predict).parameters if k not in ("df", "run")]
    assert sorted(own) == sorted(api._PREDICT_OPTIONS)
    assert len(el.predict_all(_runs(), fit_frac=0.3)) == 3


def _up_and_down():
    """A run whose score first falls as entropy falls (a <= 0 on the first windows), then follows the law."""
    s = np.arange(0, 300, 5.0)
    h = 0.05 + np.exp(-s / 75)
    r = np.where(s < 60, 0.6 + 0.2 * (np.exp(h) - np.exp(h[0])), 0.9 - 0.3 * np.exp(h))
    recs = [(t, "entropy", v) for t, v in zip(s, h)] + [(t, "val/gsm8k", v) for t, v in zip(s, r)]
    return el.table.from_records(recs, run_id="u")


def test_each_windows_ceiling_in_the_curve_says_where_the_law_does_not_apply():
    """The error-vs-window curve (--curve, JSON error_vs_k) gave a ceiling for every window, those
    whose a <= 0 (the law does not describe them) unmarked beside the others."""
    ep = el.predict(_up_and_down(), fit_frac=0.5)
    curve = ep.error_vs_k_
    p = ep.pairs_
    for row in curve.itertuples():  # each window's a, refitted by least squares here
        k = row.fit_n
        X = np.column_stack([-np.exp(p["H"][:k]), np.ones(k)])
        a = np.linalg.lstsq(X, p["R"][:k], rcond=None)[0][0]
        if a <= 0:
            assert row.law == "does not apply", (k, a)
    assert (curve["law"] == "does not apply").any() and (curve["law"] == "applies").any()
    assert {r["law"] for r in ep.to_dict()["error_vs_k"]} == {"applies", "does not apply"}
    assert "does not apply" in ep.report(curve=True)
