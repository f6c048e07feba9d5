"""Entropy consumption and performance gain over training (paper Fig. 2).

Normalised entropy consumption at step t: ``(H_0 - H_t) / (H_0 - H_T)``; normalised
performance gain: ``(R_t - R_0) / (R_T - R_0)`` (first and last logged values of the run).
Both are 0 at the start and 1 at the end; single noisy steps can leave [0, 1].
:func:`share_within` answers "x % of the entropy consumption happened in the first y % of
steps" (paper: 73 % of consumption and 76 % of gain in the first 1/12 of training).

>>> from entropylaw import table
>>> t = table.from_records([(s, "entropy", 1.0 - 0.1 * s) for s in range(11)]
...                        + [(s, "score", 0.05 * s) for s in range(0, 11, 5)], run_id="r")
>>> c = consumption(t, "r")
>>> c.loc[c.step == 5, ["entropy_consumed", "performance_gain"]].values.round(2).tolist()
[[0.5, 0.5]]
>>> share_within(c, 0.5)
{'frac': 0.5, 'step': 5.0, 'entropy': 0.5, 'performance': 0.5}
"""

from __future__ import annotations

import numpy as np
import pandas as pd

import entropylaw.table as table
from entropylaw.errors import EntropyLawError
from entropylaw.fit.pairing import score_key


def _normalised(s: pd.Series, rising: bool) -> pd.Series:
    span = s.iloc[-1] - s.iloc[0]
    if span == 0:
        return pd.Series(np.nan, index=s.index)
    return (s - s.iloc[0]) / span if rising else (s.iloc[0] - s) / (s.iloc[0] - s.iloc[-1])


def consumption(df: pd.DataFrame, run_id: str, y: str | None = None, x: str = table.ENTROPY) -> pd.DataFrame:
    """``DataFrame[step, entropy_consumed, performance_gain]`` (NaN where a metric was not logged)."""
    h = table.series(df, run_id, x)
    if len(h) < 2:
        raise EntropyLawError(f"run {run_id!r}: needs at least 2 entropy values for consumption (has {len(h)})")
    ykey = score_key(df, run_id, y)
    r = table.series(df, run_id, ykey)
    out = pd.DataFrame({"entropy_consumed": _normalised(h, rising=False)})
    out = out.join(_normalised(r, rising=True).rename("performance_gain") if len(r) >= 2
                   else pd.Series(dtype=float, name="performance_gain"), how="outer")
    out = out.rename_axis("step").reset_index()
    out.attrs.update(run_id=run_id, x_key=x, y_key=ykey)
    return out


def share_within(cons: pd.DataFrame, frac: float) -> dict:
    """Normalised consumption and gain reached by the step at fraction ``frac`` of the run."""
    if not 0 < frac <= 1:
        raise EntropyLawError(f"fraction of steps must lie in (0, 1] (got {frac})")
    steps = cons["step"].to_numpy(dtype=float)
    cut = steps[0] + frac * (steps[-1] - steps[0])
    upto = cons[steps <= cut + 1e-9]
    res = {"frac": float(frac), "step": float(cut)}
    for col, name in (("entropy_consumed", "entropy"), ("performance_gain", "performance")):
        vals = upto[col].dropna()
        res[name] = float(vals.iloc[-1]) if len(vals) else float("nan")
    return res


def steps_to_share(cons: pd.DataFrame, share: float, column: str = "entropy_consumed") -> float:
    """Fraction of the run's steps after which ``column`` first reaches ``share``."""
    vals = cons[["step", column]].dropna()
    steps = vals["step"].to_numpy(dtype=float)
    hit = np.nonzero(vals[column].to_numpy() >= share)[0]
    if len(hit) == 0:
        return float("nan")
    return float((steps[hit[0]] - steps[0]) / (steps[-1] - steps[0]))


def average_curve(df: pd.DataFrame, run_ids=None, n_grid: int = 101, y: str | None = None) -> pd.DataFrame:
    """Mean normalised consumption and gain over runs on a common grid of step fractions."""
    ids = list(run_ids) if run_ids is not None else table.run_ids(df)
    grid = np.linspace(0, 1, n_grid)
    curves = {"entropy_consumed": [], "performance_gain": []}
    for rid in ids:
        c = consumption(df, rid, y=y)
        for col in curves:
            v = c[["step", col]].dropna()
            s = v["step"].to_numpy(dtype=float)
            if len(s) >= 2:
                curves[col].append(np.interp(grid, (s - s[0]) / (s[-1] - s[0]), v[col].to_numpy()))
    return pd.DataFrame({"frac": grid, **{k: np.mean(v, axis=0) if v else np.nan for k, v in curves.items()},
                         "n_runs": len(ids)})
