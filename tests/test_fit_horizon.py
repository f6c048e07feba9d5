"""Early prediction with the paper's horizon (fit on K steps, score the next N)."""

import numpy as np
import pandas as pd
import pytest

from entropylaw.errors import EntropyLawError
from entropylaw.fit.early import EarlyPrediction


def _run(seed=0):
    rng = np.random.default_rng(seed)
    steps = np.arange(0, 600, 8)
    H = 0.05 + 0.9 * np.exp(-steps / 120)
    R = 0.85 - 0.3 * np.exp(H) + rng.normal(0, 0.015, len(steps))
    return pd.DataFrame({"step": steps, "H": H, "R": R})


def test_horizon_scores_exactly_the_next_n_steps():
    pairs = _run()
    ep = EarlyPrediction(fit_steps=36, predict_steps=200, warn=False).fit(pairs)
    s, H, R = pairs.step.to_numpy(), pairs.H.to_numpy(), pairs.R.to_numpy()
    fit = s <= 36
    X = np.column_stack([-np.exp(H[fit]), np.ones(fit.sum())])
    (a, b), *_ = np.linalg.lstsq(X, R[fit], rcond=None)  # independent least squares
    scored = (s > 36) & (s <= 236)
    pred = b - a * np.exp(H)
    assert ep.n_predicted_ == scored.sum()
    assert ep.rmse_predicted_ == pytest.approx(np.sqrt(np.mean((pred[scored] - R[scored]) ** 2)), rel=1e-9)
    last = np.nonzero(scored)[0][-1]
    assert ep.final_step_ == s[last] == 232
    assert ep.final_observed_ == R[last]
    assert ep.final_predicted_ == pytest.approx(pred[last], rel=1e-9)
    # without the horizon every later point counts: a different number
    every = EarlyPrediction(fit_steps=36, warn=False).fit(pairs)
    assert every.n_predicted_ == (s > 36).sum() > ep.n_predicted_
    assert every.final_step_ == s[-1]


def test_error_vs_k_respects_the_horizon():
    pairs = _run(1)
    ep = EarlyPrediction(fit_steps=36, predict_steps=100, warn=False).fit(pairs)
    curve = ep.error_vs_k_
    s, H, R = pairs.step.to_numpy(), pairs.H.to_numpy(), pairs.R.to_numpy()
    row = curve.iloc[4]  # window of the first fit_n points
    k = int(row.fit_n)
    X = np.column_stack([-np.exp(H[:k]), np.ones(k)])
    (a, b), *_ = np.linalg.lstsq(X, R[:k], rcond=None)
    scored = (np.arange(len(s)) >= k) & (s <= s[k - 1] + 100)
    pred = b - a * np.exp(H)
    assert row.rmse_predicted == pytest.approx(np.sqrt(np.mean((pred[scored] - R[scored]) ** 2)), rel=1e-8)


def test_horizon_with_no_points_is_a_user_error():
    pairs = _run()
    with pytest.raises(EntropyLawError, match="`predict_steps`"):
        EarlyPrediction(fit_steps=36, predict_steps=3, warn=False).fit(pairs)
