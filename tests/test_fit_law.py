"""EntropyLawFit against independent computations, on real runs and simulated ones."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import optimize

from entropylaw import table
from entropylaw.errors import EntropyLawError, EntropyLawWarning
from entropylaw.fit import uncertainty as unc
from entropylaw.fit.law import EntropyLawFit, fit_family, fit_table
from entropylaw.fit.pairing import pair

from _fit_sim import simulate

REAL = Path(__file__).resolve().parents[1] / "data" / "real"


@pytest.fixture(scope="module")
def real_table():
    files = sorted(REAL.glob("*.parquet"))
    if not files:
        pytest.skip("data/real/*.parquet not built")
    return table.concat([table.read(f) for f in files])


def quiet_fit(H, R, **kw):
    return EntropyLawFit(warn=False, **kw).fit(H, R)


def test_closed_form_lmfit_numpy_curve_fit_agree_on_real_runs(real_table):
    for run_id in table.run_ids(real_table):
        p = pair(real_table, run_id)
        H, R = p["H"].to_numpy(), p["R"].to_numpy()
        fit = quiet_fit(H, R)
        X = np.column_stack([-np.exp(H), np.ones_like(H)])
        lstsq, *_ = np.linalg.lstsq(X, R, rcond=None)
        lm = fit.to_lmfit()
        cf, _ = optimize.curve_fit(lambda h, a, b: b - a * np.exp(h), H, R, p0=[0.1, 0.5])
        for other in (lstsq, [lm.params["a"].value, lm.params["b"].value]):
            np.testing.assert_allclose([fit.a_, fit.b_], other, rtol=0, atol=1e-9)
        np.testing.assert_allclose([fit.a_, fit.b_], cf, atol=1e-7)  # iterative solver tolerance
        # iid covariance = lmfit's own covariance (both: (X'X)^-1 * RSS / (n - 2))
        iid = quiet_fit(H, R, interval="iid")
        np.testing.assert_allclose(iid.cov_, lm.lmfit_covar, rtol=1e-6, atol=1e-13)  # atol: a run with RSS ~ 0
        # ... and the ModelResult carries the covariance the tool reports (AR(1) by default)
        np.testing.assert_allclose(lm.covar, fit.cov_, rtol=1e-12)
        assert lm.params["a"].stderr == pytest.approx(fit.a_stderr_, rel=1e-12)
        assert lm.params["b"].stderr == pytest.approx(fit.b_stderr_, rel=1e-12)


def test_iid_bands_match_lmfit_eval_uncertainty():
    s = simulate(np.random.default_rng(3), 1)[0]
    fit = quiet_fit(s["H"], s["R"], interval="iid")
    lm = fit.to_lmfit()
    grid = np.linspace(0.05, 1.2, 7)
    # lmfit: sigma < 1 is a probability, turned into a t quantile with n - 2 dof, like ours
    lo, hi = fit.confidence_band(grid)
    np.testing.assert_allclose((hi - lo) / 2, lm.eval_uncertainty(H=grid, sigma=0.95), rtol=1e-5)


def _dense_ar1(x, y, phi):
    """Dense-matrix AR(1) REML log-likelihood and OLS sandwich at one phi (independent route)."""
    n = len(x)
    X = np.column_stack([-x, np.ones(n)])
    C = phi ** np.abs(np.subtract.outer(np.arange(n), np.arange(n)))
    V = C / (1 - phi**2)
    Vi = np.linalg.inv(V)
    A = X.T @ Vi @ X
    bg = np.linalg.solve(A, X.T @ Vi @ y)
    r = y - X @ bg
    rss = r @ Vi @ r
    loglik = -0.5 * (np.linalg.slogdet(V)[1] + np.linalg.slogdet(A)[1] + (n - 2) * np.log(rss))
    XtXi = np.linalg.inv(X.T @ X)
    cov = XtXi @ X.T @ (V * rss / (n - 2)) @ X @ XtXi
    return loglik, cov


def test_ar1_core_matches_dense_matrices():
    s = simulate(np.random.default_rng(11), 1)[0]
    x, y = np.exp(s["H"]), s["R"]
    grid = np.array([-0.5, 0.0, 0.3, 0.7, 0.95])
    lls, covs = zip(*(_dense_ar1(x, y, p) for p in grid))
    w = np.exp(np.array(lls) - max(lls))
    w /= w.sum()
    roots = []
    for c in covs:  # matrix square roots by eigendecomposition (not the closed form used in the code)
        val, vec = np.linalg.eigh(c)
        roots.append(vec @ np.diag(np.sqrt(val)) @ vec.T)
    root = np.tensordot(w, np.array(roots), axes=1)
    out = unc.ar1_ols(x[None], y[None], grid=grid)
    np.testing.assert_allclose(out["cov"][0], root @ root, rtol=1e-8)
    np.testing.assert_allclose(out["phi"][0], w @ grid, rtol=1e-8)


def test_weights_are_weighted_least_squares():
    s = simulate(np.random.default_rng(5), 1)[0]
    w = np.linspace(1, 3, len(s["H"]))
    fit = quiet_fit(s["H"], s["R"], weights=w)
    X = np.column_stack([-np.exp(s["H"]), np.ones_like(s["H"])])
    W = np.diag(w)
    np.testing.assert_allclose([fit.a_, fit.b_], np.linalg.solve(X.T @ W @ X, X.T @ W @ s["R"]), atol=1e-10)


def test_ceiling_stderr_is_from_the_covariance():
    s = simulate(np.random.default_rng(2), 1)[0]
    f = quiet_fit(s["H"], s["R"])
    assert f.ceiling_stderr_ == pytest.approx(np.sqrt(f.a_stderr_**2 + f.b_stderr_**2 - 2 * f.cov_ab_), rel=1e-9)
    lo, hi = f.confidence_band(0.0)
    assert (lo[0], hi[0]) == pytest.approx(f.ceiling_ci_, rel=1e-9)  # ceiling = curve at H = 0
    plo, phi_ = f.prediction_band(0.5)
    clo, chi = f.confidence_band(0.5)
    assert plo[0] < clo[0] and phi_[0] > chi[0]
    json.dumps(f.to_dict(), allow_nan=False)


def test_robust_fit_resists_outliers_and_reports_shift():
    rng = np.random.default_rng(4)
    H = 0.05 + np.exp(-np.arange(60) / 15)
    R = 0.9 - 0.3 * np.exp(H) + 0.005 * rng.standard_normal(60)
    R[[10, 30, 45]] -= 0.25  # crashed evaluations
    ols = quiet_fit(H, R)
    rob = quiet_fit(H, R, robust="huber")
    soft = quiet_fit(H, R, robust="soft_l1")
    assert abs(rob.a_ - 0.3) < abs(ols.a_ - 0.3) / 3 and abs(soft.a_ - 0.3) < abs(ols.a_ - 0.3) / 3
    assert rob.shift_["a"] == pytest.approx(rob.a_ - ols.a_)


def test_errors_in_variables_corrects_attenuation():
    """With noisy entropy, least squares flattens the slope; ODR (true entropy sd) recovers it."""
    rng = np.random.default_rng(8)
    ols_a, odr_a = [], []
    for _ in range(40):
        H_true = np.linspace(1.2, 0.05, 80)
        R = 0.9 - 0.3 * np.exp(H_true) + 0.01 * rng.standard_normal(80)
        H_obs = H_true + 0.12 * rng.standard_normal(80)
        ols_a.append(quiet_fit(np.clip(H_obs, 0, None), R).a_)
        odr_a.append(quiet_fit(np.clip(H_obs, 0, None), R, errors_in_variables=True, entropy_sd=0.12).a_)
    assert abs(np.mean(odr_a) - 0.3) < abs(np.mean(ols_a) - 0.3) / 2


def test_bootstrap_intervals():
    s = simulate(np.random.default_rng(9), 1)[0]
    f = quiet_fit(s["H"], s["R"], interval="block-bootstrap", n_boot=400)
    assert f.ceiling_ci_[0] < f.ceiling_ < f.ceiling_ci_[1]
    runs = simulate(np.random.default_rng(10), 6)
    for r in runs:
        r["R"] = r["R"] - r["b"] + 0.9 - (0.3 - r["a"]) * np.exp(r["H"])  # same (a, b) = (0.3, 0.9)
    import pandas as pd

    pairs = [pd.DataFrame({"step": np.arange(len(r["H"])), "H": r["H"], "R": r["R"]}) for r in runs]
    fam = fit_family(pairs, interval="run-bootstrap", n_boot=500, warn=False)
    assert fam.n_runs_ == 6 and fam.a_ci_[0] < 0.3 < fam.a_ci_[1]


@pytest.mark.parametrize("H,R,msg", [
    ([0.5, 0.4], [0.1, 0.2], "at least 3"),
    ([0.5, 0.5, 0.5, 0.5], [0.1, 0.2, 0.3, 0.4], "constant"),
    ([0.5, np.nan, 0.3], [0.1, 0.2, 0.3], "non-finite entropy"),
    ([0.5, 0.4, 0.3], [0.1, np.inf, 0.3], "non-finite score"),
    ([0.5, -0.1, 0.3], [0.1, 0.2, 0.3], "negative entropy"),
    ([31.0, 24.5, 18.2], [0.1, 0.2, 0.3], "above any per-token entropy"),  # a sum over responses
    (["a", "b", "c"], [0.1, 0.2, 0.3], "entropy and score must be numbers"),  # was numpy's ValueError
])
def test_bad_input_is_one_line_error(H, R, msg):
    with pytest.raises(EntropyLawError, match=msg) as err:
        EntropyLawFit().fit(np.array(H), np.array(R))
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("kw, msg", [
    (dict(seed="x"), "seed = 'x': expected a whole number >= 0"),  # was numpy's TypeError from SeedSequence
    (dict(seed=-1), "seed = -1: expected a whole number >= 0"),
    (dict(block="x"), "block = 'x': expected a whole number of points >= 1"),  # was TypeError: int // str
    (dict(block=2.5), "block = 2.5: expected a whole number of points >= 1"),
    (dict(block=500), "block = 500: longer than the run's 40 points"),  # was numpy's ValueError: high <= 0
])
def test_bad_bootstrap_options_are_one_line_errors(kw, msg):
    H = 0.05 + np.exp(-np.arange(40) / 10)
    R = 0.8 - 0.2 * np.exp(H) + 0.01 * np.random.default_rng(0).standard_normal(40)
    with pytest.raises(EntropyLawError, match=msg):
        EntropyLawFit(interval="block-bootstrap", n_boot=50, **kw).fit(H, R)


def test_score_range():
    with pytest.raises(EntropyLawError, match="outside `score_range`"):
        EntropyLawFit(score_range=(0, 1)).fit(np.array([0.5, 0.4, 0.3]), np.array([0.1, 1.2, 0.3]))


def test_warnings_for_suspect_fits():
    rng = np.random.default_rng(1)
    H = np.linspace(1.0, 0.1, 40)
    with pytest.warns(EntropyLawWarning, match="<= 0"):
        EntropyLawFit().fit(H, 0.3 + 0.2 * np.exp(H) + 0.01 * rng.standard_normal(40))
    with pytest.warns(EntropyLawWarning, match="not distinguishable from 0"):
        h = np.linspace(0.50, 0.49, 40)
        EntropyLawFit().fit(h, 0.5 + 0.05 * rng.standard_normal(40))
    with pytest.warns(EntropyLawWarning, match="extrapolated"):
        h = np.linspace(1.5, 1.2, 40)
        EntropyLawFit().fit(h, 0.9 - 0.2 * np.exp(h) + 0.001 * rng.standard_normal(40))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        EntropyLawFit().fit(H, 0.9 - 0.3 * np.exp(H) + 0.005 * rng.standard_normal(40))


def test_fit_table_on_real_runs(real_table):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EntropyLawWarning)
        df = fit_table(real_table)
    assert len(df) == len(table.run_ids(real_table))
    assert set(["run_id", "n", "a", "b", "a_stderr", "b_stderr", "cov_ab", "ceiling", "ceiling_stderr",
                "ceiling_ci", "r2", "rmse", "x_key", "y_key", "form"]) <= set(df.columns)
    assert (df["ceiling_ci"].map(lambda c: c[0] < c[1])).all()


def test_a_wide_entropy_range_is_not_called_small():
    """A run whose entropy ran from 1e-12 to 8 nats and whose score did not follow it was told 'the
    entropy range (1.1e-12-8.23 nats) is small relative to the score noise'; an 8-nat range is no small
    one: the score does not follow the entropy."""
    rng = np.random.default_rng(3)
    H = np.concatenate([np.linspace(8.2, 1.0, 20), np.geomspace(0.9, 1e-12, 20)])
    fit = EntropyLawFit(warn=False).fit(H, 0.5 - 5e-6 * np.exp(H) + 0.05 * rng.standard_normal(40))
    said = [w for w in fit.warnings_ if "not distinguishable from 0" in w]
    assert said and "small relative to the score noise" not in said[0], fit.warnings_
    assert "the score does not follow the entropy, though the entropy ranges widely (1e-12 to 8.2 nats, " \
           "13 orders of magnitude; R²" in said[0], said
    H = np.linspace(0.5, 0.3, 40)
    narrow = EntropyLawFit(warn=False).fit(H, 0.9 - 0.1 * np.exp(H) + 0.05 * rng.standard_normal(40))
    assert any("small relative to the score noise" in w for w in narrow.warnings_), narrow.warnings_
