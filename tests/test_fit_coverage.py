"""Parameter recovery and interval coverage of the entropy-law fit on simulated runs.

Runs are simulated from known (a, b): entropy decaying from 0.5-1.5 nats, n 30-100
validation points, AR(1) score noise with phi 0.5-0.8 and sd 0.01-0.03 (tests/_fit_sim.py).
The default interval ("ar1") must cover a, b and the ceiling 93-97 % of the time; the
textbook iid interval must not (it is what the AR(1) treatment is for).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from entropylaw.fit import uncertainty as unc
from entropylaw.fit.batch import fit_many
from entropylaw.fit.law import EntropyLawFit

from _fit_sim import simulate

N_SIM = 1000


@pytest.fixture(scope="module")
def sims():
    return simulate(np.random.default_rng(20240611), N_SIM)


def _padded(sims):
    H, lengths = unc._pad([s["H"] for s in sims])
    R, _ = unc._pad([s["R"] for s in sims])
    return H, R, lengths


def test_estimates_are_unbiased(sims):
    H, R, lengths = _padded(sims)
    res = fit_many(H, R, lengths)
    for name, truth in (("a", [s["a"] for s in sims]), ("b", [s["b"] for s in sims])):
        err = res[name].to_numpy() - np.array(truth)
        # mean error within 3 Monte-Carlo standard errors of zero
        assert abs(err.mean()) < 3 * err.std(ddof=1) / np.sqrt(len(err)), name


def test_ar1_intervals_cover_95_percent(sims):
    H, R, lengths = _padded(sims)
    res = fit_many(H, R, lengths)
    a = np.array([s["a"] for s in sims])
    b = np.array([s["b"] for s in sims])
    tq = stats.t.ppf(0.975, lengths - 2)  # scipy.stats here: an independent quantile
    cover = {
        "a": np.abs(res["a"] - a) <= tq * res["a_stderr"],
        "b": np.abs(res["b"] - b) <= tq * res["b_stderr"],
        "ceiling": (res["ceiling_lo"] <= b - a) & (b - a <= res["ceiling_hi"]),
    }
    rates = {k: float(v.mean()) for k, v in cover.items()}
    assert all(0.93 <= r <= 0.97 for r in rates.values()), rates


def test_iid_intervals_under_cover(sims):
    """The textbook interval ignores autocorrelation: far below 95 % on these runs."""
    H, R, lengths = _padded(sims)
    out = unc.ar1_ols(np.exp(np.where(H > 0, H, 0)), R, lengths=lengths)
    se = unc.combo_stderr(out["cov_iid"], [-1.0, 1.0])
    truth = np.array([s["b"] - s["a"] for s in sims])
    est = out["beta"][:, 1] - out["beta"][:, 0]
    assert np.mean(np.abs(est - truth) <= out["tq"] * se) < 0.85


def test_batch_equals_single_run_fit(sims):
    """The vectorised many-run fit and EntropyLawFit give the same numbers."""
    H, R, lengths = _padded(sims[:5])
    res = fit_many(H, R, lengths)
    for i, s in enumerate(sims[:5]):
        f = EntropyLawFit(warn=False).fit(s["H"], s["R"])
        np.testing.assert_allclose([f.a_, f.b_, f.ceiling_stderr_, f.ceiling_ci_[0]],
                                   res.loc[i, ["a", "b", "ceiling_stderr", "ceiling_lo"]].to_numpy(float), rtol=1e-9)


def test_coverage_holds_without_autocorrelation():
    """phi = 0 (independent noise): the AR(1) interval still covers about 95 %."""
    sims = simulate(np.random.default_rng(7), 600, phi_range=(0.0, 0.0))
    H, R, lengths = _padded(sims)
    res = fit_many(H, R, lengths)
    truth = np.array([s["b"] - s["a"] for s in sims])
    rate = np.mean((res["ceiling_lo"] <= truth) & (truth <= res["ceiling_hi"]))
    assert 0.92 <= rate <= 0.975
