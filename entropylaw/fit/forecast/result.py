"""What a forecast returns: one method's forecast of one window (:class:`MethodResult`: the
method's own words, ``ok``, ``reason``, ``warnings``, and numbers at the requested steps), and
every method's forecast of one run with its decision (:class:`Forecast`; ``str()`` is what
``entropylaw forecast`` prints, :mod:`.text`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from entropylaw.fit.forecast import text as _text
from entropylaw.fit.forecast.final import describe, observed_final_at


@dataclass
class MethodResult:
    method: str
    ok: bool
    reason: str | None = None
    forecast: pd.DataFrame | None = None  # step, forecast, lo, hi (and a method's own columns: prior_shift)
    plateau: float | None = None
    plateau_ci: list | None = None
    t90: float | None = None
    t90_ci: list | None = None
    params: dict = field(default_factory=dict)
    warnings: list = field(default_factory=list)
    late_rmse: float | None = None
    note: str | None = None
    final: dict | None = None  # the final score's forecast (entropylaw.fit.forecast.final)

    def to_dict(self) -> dict:
        out = {k: getattr(self, k) for k in ("method", "ok", "reason", "plateau", "plateau_ci", "t90", "t90_ci",
                                             "params", "warnings", "late_rmse", "note", "final")}
        out["forecast"] = None if self.forecast is None else self.forecast.to_dict(orient="records")
        return out


@dataclass
class Forecast:
    """Every method's forecast of one run from one window (see :func:`~.core.forecast`)."""

    run_id: str
    target_key: str
    target_kind: str
    origin: float
    window_end: float
    last_logged: float
    n_window: int
    conf: float
    at_steps: np.ndarray
    methods: dict
    note: str | None = None
    default: str = "last-value"  # the method recommended for this window (set by forecast())
    # the gain to go, the call and the target step from one method's draws (entropylaw.fit.forecast.decide)
    decision: dict | None = None
    # the target series as logged, for plots and backtests only (later points are never fitted)
    observed: pd.DataFrame | None = None
    fit_frac: float | None = None  # the window as a share of the run (a backtest), when given so
    run_last: float | None = None  # the run's last logged step
    law_verdict: str | None = None  # the law's verdict on the window, where it does not apply
    final_steps: np.ndarray | None = None  # the steps whose score makes the final score
    # the shown (default) method's final score at the gain's last step, its point and draws (what rank compares)
    final_draws: np.ndarray | None = None
    final_point: float | None = None
    regime: dict | None = None  # the window's regime (entropylaw.fit.forecast.regimes.classify)
    warnings: list | None = None  # what the regime and the run's config make the forecast say
    law_reasons: list | None = None  # why the law does not describe the window ([] where it does)
    source: str | None = None  # the file the run was read from (set by the API: run and run-2 are two files)

    @property
    def regime_name(self) -> str:
        """take-off, instability or saturation (:mod:`.regimes`)."""
        return (self.regime or {}).get("name", "saturation")

    @property
    def final_observed_at(self) -> tuple[float, float] | None:
        """The final score as logged (a backtest) and the last step it was read at, by the rule of
        :mod:`.final` (a validation score not logged at the final step: the last before it)."""
        if self.observed is None or self.final_steps is None:
            return None
        return observed_final_at(self.target_kind, self.observed["step"], self.observed["value"],
                                 (self.final_steps[0], self.final_steps[-1]), self.run_last)

    @property
    def final_observed(self) -> float | None:
        """The final score as logged (a backtest): :attr:`final_observed_at`'s score."""
        got = self.final_observed_at
        return None if got is None else got[0]

    @property
    def final_step(self) -> float | None:
        """The step the final score is at (its last step: a training score's is a mean up to it)."""
        return None if self.final_steps is None or not len(self.final_steps) else float(self.final_steps[-1])

    @property
    def final_observed_step(self) -> float | None:
        """The last step :attr:`final_observed` was read at (None where there is none)."""
        got = self.final_observed_at
        return None if got is None else got[1]

    def table(self, step=None) -> pd.DataFrame:
        """One row per method: forecast and interval at ``step`` (default: the last requested)."""
        step = self.at_steps[-1] if step is None else step
        rows = []
        for name, r in self.methods.items():
            row = {"method": name, "ok": r.ok, "reason": r.reason, "plateau": r.plateau, "plateau_ci": r.plateau_ci,
                   "t90": r.t90, "t90_ci": r.t90_ci, "late_rmse": r.late_rmse}
            if r.ok:
                f = r.forecast.iloc[int(np.argmin(np.abs(r.forecast["step"].to_numpy() - step)))]
                row.update(step=float(f["step"]), forecast=float(f["forecast"]), lo=float(f["lo"]), hi=float(f["hi"]))
            rows.append(row)
        return pd.DataFrame(rows)

    def __str__(self) -> str:
        """What ``entropylaw forecast`` prints: the window, every method's row, the gain and the call."""
        return _text.forecast_text(self)

    def plot(self, ax=None, methods=None):
        """Draw the window, the forecasts and their bands (``methods``: these of :attr:`methods`, one name or a
        list; "default" the recommended one); returns the axes."""
        from entropylaw.draw.forecast import plot_forecast  # matplotlib: loaded on the first plot
        from entropylaw.errors import EntropyLawError

        if methods is not None:  # a name not among the forecast's was drawn as nothing, unsaid
            methods = [self.default if m == "default" else m for m in ([methods] if isinstance(methods, str)
                                                                         else methods)]
            unknown = [m for m in methods if m not in self.methods]
            if unknown:
                raise EntropyLawError(f"`methods`: {unknown[0]!r} is not among this forecast's methods "
                                      f"({', '.join(self.methods)})")
        return plot_forecast(self, ax=ax, methods=methods)

    def to_dict(self) -> dict:
        return {"run_id": self.run_id, "source": self.source, "target_key": self.target_key,
                "target_kind": self.target_kind, "note": self.note, "log_starts_at": self.origin,
                "window_end": self.window_end,
                "last_logged_step": self.last_logged, "run_last_step": self.run_last,
                "n_window_points": self.n_window, "conf": self.conf,
                "at_steps": [float(s) for s in self.at_steps], "default_method": self.default,
                "methods": {k: v.to_dict() for k, v in self.methods.items()}, "decision": self.decision,
                "observed": {str(s): v for s in self.at_steps if (v := _text.observed_at(self, s)) is not None},
                "final": {"what": describe(self.target_kind, self.final_steps), "observed": self.final_observed,
                          "observed_step": self.final_observed_step},
                "law_on_window": self.law_verdict or "applies",
                "regime": self.regime_name, "regime_why": (self.regime or {}).get("why"),
                "warnings": list(self.warnings or [])}
