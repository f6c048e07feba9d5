"""Benchmark (not a test): how often each interval of the entropy-law fit covers the true ceiling.

    .venv/bin/python analysis/bench_fit_coverage.py [--seeds 7] [--sims 1000]

Simulated runs from known (a, b), as ``tests/test_fit_coverage.py`` draws them
(``tests/_fit_sim.py``: entropy decaying from 0.5-1.5 nats, n 30-100 validation points, AR(1)
score noise with phi 0.5-0.8 and sd 0.01-0.03). For each seed, the share of runs whose 95 %
interval of the ceiling b - a holds the truth, for: the default (least-squares covariance under
AR(1) residuals, phi by REML averaged over its likelihood, t quantile); the textbook iid
covariance; Newey-West (Bartlett kernel, lag floor(4 (n / 100)^(2/9)), t quantile). Prints one
line per seed and the range over seeds; writes nothing. ``docs/guide/fit.md`` quotes it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from _fit_sim import simulate  # noqa: E402
from entropylaw.fit import uncertainty as unc  # noqa: E402
from entropylaw.fit.batch import fit_many  # noqa: E402


def newey_west_covers(sims, conf: float = 0.95) -> np.ndarray:
    """Per run: does the Newey-West interval of the ceiling hold the truth?"""
    out = []
    for s in sims:
        x, y = np.exp(s["H"]), s["R"]
        n = len(y)
        X = np.column_stack([-x, np.ones(n)])  # beta = (a, b)
        beta, *_ = np.linalg.lstsq(X, y, rcond=None)
        u = y - X @ beta
        g = X * u[:, None]
        meat = g.T @ g
        lag = int(np.floor(4 * (n / 100) ** (2 / 9)))
        for j in range(1, lag + 1):
            w = 1 - j / (lag + 1)
            c = g[j:].T @ g[:-j]
            meat += w * (c + c.T)
        bread = np.linalg.inv(X.T @ X)
        cov = bread @ meat @ bread
        c = np.array([-1.0, 1.0])
        se = float(np.sqrt(c @ cov @ c))
        tq = stats.t.ppf(0.5 + conf / 2, n - 2)
        out.append(abs((beta[1] - beta[0]) - (s["b"] - s["a"])) <= tq * se)
    return np.array(out)


def coverage(seed: int, n_sims: int) -> dict:
    sims = simulate(np.random.default_rng(seed), n_sims)
    H, lengths = unc._pad([s["H"] for s in sims])
    R, _ = unc._pad([s["R"] for s in sims])
    truth = np.array([s["b"] - s["a"] for s in sims])
    res = fit_many(H, R, lengths)
    ar1 = np.mean((res["ceiling_lo"] <= truth) & (truth <= res["ceiling_hi"]))
    out = unc.ar1_ols(np.exp(np.where(H > 0, H, 0)), R, lengths=lengths)
    se = unc.combo_stderr(out["cov_iid"], [-1.0, 1.0])
    est = out["beta"][:, 1] - out["beta"][:, 0]
    iid = np.mean(np.abs(est - truth) <= out["tq"] * se)
    return {"ar1": float(ar1), "iid": float(iid), "newey-west": float(newey_west_covers(sims).mean())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=7, help="seeds 0 .. N-1")
    ap.add_argument("--sims", type=int, default=1000, help="simulated runs per seed")
    args = ap.parse_args()
    rows = []
    for seed in range(args.seeds):
        r = coverage(seed, args.sims)
        rows.append(r)
        print(f"seed {seed}: " + ", ".join(f"{k} {100 * v:.1f} %" for k, v in r.items()), flush=True)
    for k in rows[0]:
        v = [100 * r[k] for r in rows]
        print(f"{k}: {min(v):.1f}-{max(v):.1f} % (mean {np.mean(v):.1f} %) over {args.seeds} seeds x {args.sims} runs")


if __name__ == "__main__":
    main()
