"""What :class:`~entropylaw.fit.law.EntropyLawFit` is given besides its points, checked: the
``weights`` and ``entropy_sd`` options, the ``runs`` labels of a family, the entropies a band is
asked at. Each mistake is one :class:`EntropyLawError` naming the option or argument and what is
expected (numpy's "could not convert string to float" from deep inside said neither).

>>> run_labels(["a", "a", "b"], 3, "family")
array([0, 0, 1])
>>> check_numbers([1.0, -1.0], None)
Traceback (most recent call last):
...
entropylaw.errors.EntropyLawError: `weights`: -1 at point 1 (expected one positive finite number per point fitted)
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from entropylaw.errors import EntropyLawError
from entropylaw.fit.estimator import as_numbers, shown

ENTROPIES = "entropies in nats: a number or a 1-D array of numbers"
WEIGHTS = "one positive finite number per point fitted"
ENTROPY_SD = "the logged entropy's noise sd in nats, a number >= 0 (None: estimated from the series)"


def check_numbers(weights, entropy_sd) -> None:
    """``weights`` and ``entropy_sd``: numbers where numbers are expected, each mistake naming its option."""
    if weights is not None:
        w = as_numbers(weights, "weights", WEIGHTS)
        bad = ~np.isfinite(w) | (w <= 0) if w.ndim == 1 else None
        if bad is None:
            raise EntropyLawError(f"`weights` {shown(weights)}: expected {WEIGHTS}")
        if bad.any():
            i = int(np.argmax(bad))
            raise EntropyLawError(f"`weights`: {w[i]:g} at point {i} (expected {WEIGHTS})")
    if entropy_sd is not None:
        sd = as_numbers(entropy_sd, "entropy_sd", ENTROPY_SD)
        if sd.ndim != 0 or not (np.isfinite(sd) and sd >= 0):
            raise EntropyLawError(f"`entropy_sd` {shown(entropy_sd)}: expected {ENTROPY_SD}")


def band_points(H) -> np.ndarray:
    """Entropies for a band: a number or a 1-D array (a band is a pair of 1-D arrays)."""
    arr = as_numbers(H, "H", ENTROPIES)
    if arr.ndim > 1:
        raise EntropyLawError(f"`H` of shape {arr.shape}: expected {ENTROPIES}")
    return np.atleast_1d(arr)


def run_labels(runs, n: int, where: str) -> np.ndarray:
    """``runs`` (one label per point, or None: one run) as run numbers 0, 1, ... in order of appearance."""
    if runs is None:
        return np.zeros(n, dtype=int)
    labels = np.asarray(runs)
    if labels.shape != (n,):
        raise EntropyLawError(f"{where}: `runs`: {labels.size} labels for {n} points "
                              "(expected one run label per point)")
    codes = pd.factorize(labels)[0]
    if (codes < 0).any():  # factorize codes a missing label -1: its points were left out of the fit, unsaid
        raise EntropyLawError(f"{where}: `runs`: no run label at point {int(np.argmax(codes < 0))}")
    return codes
