"""One method's forecast of one window, as :class:`~.core.Forecast` holds it: the method's
own words (``ok``, ``reason``, ``warnings``) and numbers at the requested steps."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd


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
