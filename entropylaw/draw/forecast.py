"""A forecast drawn: the score the window saw, each method's forecast with its band, the
window's end, and (in a backtest) the later scores the forecast never saw, hollow.
:meth:`entropylaw.fit.forecast.core.Forecast.plot` draws with :func:`plot_forecast`: this
module imports matplotlib, numpy and the figure style only, never :mod:`entropylaw.fit`.

>>> import numpy as np
>>> from entropylaw.fit.forecast.core import forecast
>>> from entropylaw.fit.forecast.data import RunData
>>> steps = np.arange(0, 300, 10.0)
>>> run = RunData.from_arrays(steps, 0.8 - 0.4 * np.exp(-steps / 60))
>>> ax = plot_forecast(forecast(run, fit_frac=0.4, methods=["exp-saturation", "last-value"], n_boot=20))
>>> ax.get_xlabel()
'training step'
"""

from __future__ import annotations

import numpy as np

from entropylaw.draw.style import STEP_LABEL, color as palette, new_axes


def plot_forecast(fc, ax=None, methods=None):
    """Draw :class:`entropylaw.fit.forecast.core.Forecast` ``fc``; ``methods`` default: the
    recommended one (with its band), the ensemble and the law with forecast entropy (lines
    only, so that no band hides another). Returns the axes."""
    fig, ax = new_axes(ax)
    ok = [m for m, r in fc.methods.items() if r.ok]
    default = [fc.default] + [m for m in ("ensemble", "law+entropy") if m != fc.default]
    names = list(dict.fromkeys(m for m in (methods or default) if m in ok))
    if fc.observed is not None and len(fc.observed):
        obs = fc.observed
        seen = obs["step"].to_numpy() <= fc.window_end
        ax.scatter(obs["step"][seen], obs["value"][seen], s=14, color="0.15", zorder=4, label="window (fitted)")
        if (~seen).any():
            ax.scatter(obs["step"][~seen], obs["value"][~seen], s=14, facecolors="none", edgecolors="0.35",
                       zorder=4, label="later scores (not used)")
    ax.axvline(fc.last_logged, color="0.5", lw=0.9, ls="--", label=f"window end (step {fc.last_logged:g})")
    pct = f"{100 * fc.conf:g} %"
    for i, name in enumerate(names):
        f = fc.methods[name].forecast
        c = palette(i)
        width = 2.2 if name == fc.default else 1.2
        ax.plot(f["step"], f["forecast"], color=c, lw=width,
                label=f"{name}{' (recommended)' if name == fc.default else ''}")
        if name == fc.default:
            ax.fill_between(f["step"], f["lo"], f["hi"], color=c, alpha=0.18, lw=0, label=f"{pct} interval")
    ax.set_xlabel(STEP_LABEL)
    kind = "validation score" if fc.target_kind == "validation" else "training score"
    ax.set_ylabel(f"{kind}: {fc.target_key}")
    ax.set_title(f"{fc.run_id}\nforecast from the first {fc.n_window} points", fontsize=8.5)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False)
    if fig is not None and ax.figure.get_figwidth() < 9:
        ax.figure.set_figwidth(ax.figure.get_figwidth() + 2.6)
    return ax

