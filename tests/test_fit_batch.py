"""fit_many's closed form (sums only) against an independent per-run weighted lstsq."""

import numpy as np
import pytest

from entropylaw.fit.batch import fit_many


@pytest.mark.parametrize("weighted", [False, True])
def test_fit_many_estimates_match_lstsq_with_padding(weighted):
    rng = np.random.default_rng(7)
    runs, steps = 40, 90
    H = rng.uniform(0.05, 1.3, (runs, steps))
    R = 0.85 - 0.25 * np.exp(H) + rng.normal(0, 0.02, H.shape)
    lengths = rng.integers(5, steps + 1, runs)
    w = rng.uniform(0.3, 3.0, H.shape) if weighted else None
    got = fit_many(H, R, lengths=lengths, weights=w, intervals=False)
    for i in range(runs):
        n = lengths[i]
        X = np.column_stack([-np.exp(H[i, :n]), np.ones(n)])
        sw = np.sqrt(w[i, :n]) if weighted else np.ones(n)
        (a, b), *_ = np.linalg.lstsq(X * sw[:, None], R[i, :n] * sw, rcond=None)
        resid = R[i, :n] - (b - a * np.exp(H[i, :n]))
        ww = sw**2
        rmse = np.sqrt((ww * resid**2).sum() / ww.sum())
        ybar = (ww * R[i, :n]).sum() / ww.sum()
        r2 = 1 - (ww * resid**2).sum() / (ww * (R[i, :n] - ybar) ** 2).sum()
        assert got.a[i] == pytest.approx(a, abs=1e-10)
        assert got.b[i] == pytest.approx(b, abs=1e-10)
        assert got.ceiling[i] == pytest.approx(b - a, abs=1e-10)
        assert got.rmse[i] == pytest.approx(rmse, rel=1e-7)
        assert got.r2[i] == pytest.approx(r2, abs=1e-9)


def test_fit_many_threads_do_not_change_results():
    rng = np.random.default_rng(3)
    H = rng.uniform(0.05, 1.3, (50, 40))
    R = 0.8 - 0.2 * np.exp(H) + rng.normal(0, 0.02, H.shape)
    one = fit_many(H, R, chunk=7, threads=1)
    many = fit_many(H, R, chunk=7, threads=3)
    assert one.equals(many)
