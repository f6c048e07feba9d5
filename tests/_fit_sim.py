"""Simulated runs from known (a, b) for the fit tests (realistic noise and autocorrelation)."""

from __future__ import annotations

import numpy as np


def simulate(rng, n_runs, n_range=(30, 100), phi_range=(0.5, 0.8), sd_range=(0.01, 0.03)):
    """Runs with entropy decaying ~exponentially from 0.5-1.5 nats and AR(1) score noise.

    Returns a list of dicts with H, R, a, b, phi, sd.
    """
    runs = []
    for _ in range(n_runs):
        n = int(rng.integers(n_range[0], n_range[1] + 1))
        h0 = rng.uniform(0.5, 1.5)
        h_end = h0 * rng.uniform(0.03, 0.2)
        tau = rng.uniform(0.1, 0.4) * n
        H = (h_end + (h0 - h_end) * np.exp(-np.arange(n) / tau)) * np.exp(rng.normal(0, 0.05, n))
        a = rng.uniform(0.1, 0.6)
        b = rng.uniform(0.3, 0.8) + a
        phi, sd = rng.uniform(*phi_range), rng.uniform(*sd_range)
        e = np.empty(n)
        e[0] = rng.normal(0, sd)
        z = rng.normal(0, sd * np.sqrt(1 - phi**2), n)
        for i in range(1, n):
            e[i] = phi * e[i - 1] + z[i]
        runs.append({"H": H, "R": b - a * np.exp(H) + e, "a": a, "b": b, "phi": phi, "sd": sd})
    return runs
