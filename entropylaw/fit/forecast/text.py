"""A forecast as the CLI prints it: ``str(forecast)`` (one run) and ``str(Forecasts)`` (several).

The header says what was forecast from which window and, when the law does not describe the
window, says so (the plateaus are then a trend, not a ceiling); then one row per method, the
methods' warnings, and the decision ("can I stop?", "will it reach the target?").
"""

from __future__ import annotations

import numpy as np

from entropylaw.fit.applicability import DOES_NOT_APPLY, law_applies
from entropylaw.fit.forecast.decide import decision_lines
from entropylaw.fit.forecast.final import describe
from entropylaw.fit.text_table import fmt_table
from entropylaw.terminal import wrap

COLUMNS = [("method", "method"), ("step", "step"), ("forecast", "forecast"), ("interval", "interval"),
           ("observed", "observed"), ("plateau", "plateau"), ("plateau_ci", "plateau_ci"), ("90%_step", "t90"),
           ("90%_step_ci", "t90_ci"), ("note", "note")]
# what a narrow terminal leaves out first (the JSON output has every column)
OPTIONAL = ("90%_step_ci", "plateau_ci", "observed", "step")
KIND_PLURAL = {"validation": "validation scores", "training score": "training scores"}


def law_verdict(run, end: float) -> str | None:
    """The law's verdict on the window alone (no later information), when it does not apply:
    the curve methods' plateaus then describe a trend, not the law's ceiling."""
    if run.entropy is None:
        return None
    h_in, y_in = run.entropy.steps <= end, run.target.steps <= end
    verdict, reasons = law_applies(run.entropy.steps[h_in], run.entropy.values[h_in], run.target.values[y_in],
                                   score_range=run.bounds, score_steps=run.target.steps[y_in])
    if verdict != DOES_NOT_APPLY:
        return None
    return f"law: does not apply to steps up to {end:g} ({'; '.join(reasons)}): read the plateau as a trend, not a ceiling"


def observed_at(fc, step) -> float | None:
    """The target as logged at ``step`` (None where the run logged none there)."""
    obs = fc.observed
    if obs is None:
        return None
    hit = np.nonzero(obs["step"].to_numpy() == step)[0]
    return float(obs["value"].to_numpy()[hit[0]]) if len(hit) else None


def header(fc) -> str:
    share = "" if fc.fit_frac is None else f" ({fc.fit_frac:.0%} of the run, a backtest)"
    lines = [f"run {fc.run_id}: forecasting {fc.target_key} ({fc.target_kind}) from steps {fc.origin:g}..{fc.window_end:g}"
             f"{share}, {fc.n_window} point(s); the log starts at step {fc.origin:g} and ends at step {fc.run_last:g}; "
             f"{fc.conf:.0%} intervals; no information after step {fc.window_end:g} is used"]
    if fc.note:
        lines.append(f"note: {fc.note}")
    if fc.target_kind != "validation" and fc.final_steps is not None:
        lines.append(f"final score: {describe(fc.target_kind, fc.final_steps)}")
    if fc.law_verdict:
        lines.append(fc.law_verdict)
    return "\n".join(lines)


def _steps_ci(ci):
    if ci is None:
        return None
    return "[" + ", ".join("inf" if v is None else f"{v:.0f}" for v in ci) + "]"


def rows(fc) -> list[dict]:
    """One row per method at the last forecast step."""
    step = float(fc.at_steps[-1])
    out = []
    for name, r in fc.methods.items():
        row = {"method": name}
        if not r.ok:
            row["note"] = f"cannot run: {r.reason}"
        else:
            f = r.forecast.iloc[-1]
            fin = r.final or {}
            steps = fin.get("steps") or [step, step]
            row.update(step=f"{f['step']:g}" if steps[0] == steps[-1] else f"{steps[0]:g}..{steps[-1]:g}",
                       forecast=float(fin.get("forecast", f["forecast"])),
                       interval=[float(fin.get("lo", f["lo"])), float(fin.get("hi", f["hi"]))],
                       observed=fc.final_observed if r.final else observed_at(fc, step), plateau=r.plateau,
                       plateau_ci=r.plateau_ci, t90=None if r.t90 is None else f"{r.t90:.0f}",
                       t90_ci=_steps_ci(r.t90_ci), note=r.note)
            if "prior_shift" in r.forecast:
                row["note"] = f"prior moved the forecast by {float(f['prior_shift']):+.4f}"
            if fin.get("no_forecast"):
                row["note"] = fin["no_forecast"]
        out.append(row)
    return out


def forecast_text(fc) -> str:
    lines = [wrap(header(fc)), fmt_table(rows(fc), COLUMNS, note="note", optional=OPTIONAL)]
    lines += [f"  {r.method}: {w}" for r in fc.methods.values() for w in r.warnings]
    lines += [line[2:] for line in decision_lines(fc.decision)]
    return wrap("\n".join(lines))


class Forecasts(dict):
    """``{run_id: Forecast}`` for several runs (:func:`entropylaw.forecast_all`); ``str()`` is what
    ``entropylaw forecast`` prints, ``left_out`` the runs that could not be forecast, with why."""

    def __init__(self, forecasts: dict, left_out: dict | None = None, default_said: str | None = None):
        super().__init__(forecasts)
        self.left_out = dict(left_out or {})
        self.default_said = default_said  # the default method was asked for: which, by kind of score

    def to_dict(self):
        """One forecast's dict, or a list of them (the CLI's ``--json``)."""
        docs = [fc.to_dict() for fc in self.values()]
        return docs if len(docs) > 1 else docs[0]

    def report(self, every_method: str = "`methods` None gives every method") -> str:
        """The forecasts as text; ``every_method`` says how to ask for every method (a caller's own words)."""
        text = "\n\n".join(forecast_text(fc) for fc in self.values())
        if self.default_said:
            text += (f"\n\n(default method {self.default_said}, last-value where "
                     "it cannot run: chosen by a rule fixed in advance on the backtest of the real runs at 15 % of their "
                     f"steps, which bounds the worst run's error as well as the median's; {every_method}, with the "
                     "plateau and the 90 % step of the curve methods)")
        return wrap(text)

    def __str__(self) -> str:
        return self.report()
