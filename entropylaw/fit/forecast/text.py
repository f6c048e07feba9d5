"""A forecast as the CLI prints it: ``str(forecast)`` (one run) and ``str(Forecasts)`` (several).

The header says what was forecast from which window and, when the law does not describe the
window, says so (the plateaus are then a trend, not a ceiling); then one row per method, the
methods' warnings, and the decision: what continuing adds, the call, the target step.
Above :data:`FEW` runs, one line per run (``full=True``: every run's own text).
"""

from __future__ import annotations

import numpy as np

from entropylaw.fit.applicability import DOES_NOT_APPLY, law_applies
from entropylaw.fit.forecast.decide import CONSTANT, FLOOR
from entropylaw.fit.forecast.line_notes import (FELL_BACK, fallback_lines, fell_back, law_lines, no_plan_lines,
                                                past_plan_lines, scores_lines)
from entropylaw.fit.forecast.line_table import line_table
from entropylaw.fit.forecast.final import describe, observed_lines, observed_words
from entropylaw.fit.forecast.takeoff import CARRIED
from entropylaw.fit.forecast.target import target_lines
from entropylaw.fit.forecast.schedule import LR_SAID
from entropylaw.fit.forecast.sweep import sweep_lines
from entropylaw.fit.forecast.tasks import generic_notes
from entropylaw.fit.text_table import fmt_table
from entropylaw.terminal import count, gain, points, wrap

COLUMNS = [("method", "method"), ("step", "step"), ("forecast", "forecast"), ("interval", "interval"),
           ("observed", "observed"), ("plateau", "plateau"), ("plateau_ci", "plateau_ci"), ("90%_step", "t90"),
           ("90%_step_ci", "t90_ci"), ("note", "note")]
# what a narrow terminal leaves out first (the JSON output has every column)
OPTIONAL = ("90%_step_ci", "plateau_ci", "observed", "step")
KIND_PLURAL = {"validation": "validation scores", "training score": "training scores"}
FEW = 3  # above this many runs, one line per run


def gain_text(d: dict) -> str:
    """``+G [lo, hi]`` of a decision's gain, in points where the score has them."""
    g, p = d["gain"], d.get("point")
    return f"{gain(g['expected'], p)} [{gain(g['lo'], p)}, {gain(g['hi'], p)}]"


def call_text(d: dict) -> str:
    """The call in a few words: stop, continue, undecided (likely: stop at step S), or none."""
    if not d or d.get("call") is None:
        why = str(d.get("reason", ""))
        return "no call (constant score)" if why.startswith(CONSTANT) else "no call (at its floor)" \
            if why.startswith(FLOOR) else "no call"
    if d["call"] == "undecided":
        likely = d.get("likely")
        return "undecided" + ("" if not likely else f" ({likely['call']} ~{likely['step']:.0f})")
    return d["call"]


def decision_lines(d) -> list[str]:
    """The decision as report lines (the CLI's forecast and watch): the gain to go, the call,
    the target step."""
    if not d:
        return []
    if d.get("method") is None:
        return [f"    call: none: {d.get('reason', 'no curve')}"]
    g, p, units = d["gain"], d.get("point"), d.get("display_units", "points")
    cost = d.get("cost")
    spend = "" if not cost else f" for {cost['amount']:.3g} {cost['unit']}"
    since = g.get("from_logged_step", g["from_step"])
    lines = [f"    gain ({d['method']}): continuing from step {since:g} to step {g['to_step']:g} adds "
             f"{gain_text(d)} {units}{spend} ({100 * d.get('conf', 0.9):g} % bounds; step {g['to_step']:g}: "
             f"{g['to_step_source']})"]
    if cost:
        lines.append(f"      cost: {cost['source']}")
    size = points(d["threshold"] / p) if p else gain(d["threshold"]).lstrip("+")
    size = size if float(size) > 0 else f"{d['threshold']:.2g}"  # below the printed precision: no 0
    thr = f"the threshold {size} {units} ({d['threshold_source']})"
    call = d.get("call")
    if call is None:
        lines.append(f"    call: none: {d.get('reason')}")
    elif call == "stop":
        lines.append(f"    call: stop: the gain's upper bound {gain(g['hi'], p)} is below {thr}")
    elif call == "continue" and d.get("no_forecast"):
        lines.append(f"    call: continue: at least {gain(g['lo'], p)} {units} (the gain's lower bound), above {thr}; "
                     f"{d['no_forecast']}")
    elif call == "continue":
        lines.append(f"    call: continue: the gain's lower bound {gain(g['lo'], p)} is above {thr}")
    else:
        likely = d.get("likely")
        when = ("; no call is likely before the run's end" if not likely else
                f"; the call is likely made at step {likely['step']:.0f} ({likely['call']}), as the interval narrows")
        lines.append(f"    call: undecided: the gain's interval holds {thr}{when}")
    if d.get("curve_note"):
        lines.append(f"      {d['curve_note']}")
    if "target" in d:
        lines += target_lines(d)
    return lines


def law_reasons(run, end: float) -> list:
    """Why the law does not describe the window (steps up to ``end``), one reason each; [] where
    it applies or the run logs no entropy to judge it by."""
    if run.entropy is None:
        return []
    h_in, y_in = run.entropy.steps <= end, run.target.steps <= end
    # a validation score is an accuracy, as the run's own verdict reads it (fit.run.run_verdict): one
    # outside [0, 1] is no score the law describes, in the window as over the whole run
    rng = run.bounds or ((0.0, 1.0) if run.target_kind == "validation" else None)
    verdict, reasons = law_applies(run.entropy.steps[h_in], run.entropy.values[h_in], run.target.values[y_in],
                                   score_range=rng, score_steps=run.target.steps[y_in])
    return list(reasons) if verdict == DOES_NOT_APPLY else []


def law_verdict(run, end: float, reasons: list | None = None, shown: float | None = None) -> str | None:
    """The law's verdict on the window alone (no later information), when it does not apply:
    the curve methods' plateaus then describe a trend, not the law's ceiling (``reasons``:
    :func:`law_reasons`, where the caller has them). ``shown``: the window's last logged step,
    named in place of ``end`` (a fraction of the run: 130.2)."""
    reasons = law_reasons(run, end) if reasons is None else reasons
    if not reasons:
        return None
    return (f"law: does not apply to steps up to {end if shown is None else shown:g} ({'; '.join(reasons)}): "
            "read the plateau as a trend, not a ceiling")


def observed_at(fc, step) -> float | None:
    """The target as logged at ``step`` (None where the run logged none there)."""
    obs = fc.observed
    if obs is None:
        return None
    hit = np.nonzero(obs["step"].to_numpy() == step)[0]
    return float(obs["value"].to_numpy()[hit[0]]) if len(hit) else None


def header(fc) -> str:
    share = "" if fc.fit_frac is None else f" ({100 * fc.fit_frac:g}% of the run, a backtest)"
    lines = [f"run {fc.run_id}: forecasting {fc.target_key} ({fc.target_kind}) "
             f"from steps {fc.origin:g}..{fc.last_logged:g}"
             f"{share}, {count(fc.n_window, 'point')}; the log starts at step {fc.origin:g} "
             f"and ends at step {fc.run_last:g}; "
             f"{fc.conf:.0%} intervals; no information after step {fc.last_logged:g} is used"]
    if fc.note:
        lines.append(f"note: {fc.note}")
    if fc.target_kind != "validation" and fc.final_steps is not None:
        lines.append(f"final score: {describe(fc.target_kind, fc.final_steps)}")
    if fc.law_verdict:
        lines.append(fc.law_verdict)
    return "\n".join(lines)


def _steps_ci(ci):
    """A step's interval; an end the draws never reach within the steps searched is "never".

    >>> _steps_ci([120.4, None]), _steps_ci([None, None]), _steps_ci(None)
    ('[120, never]', 'never', None)
    """
    if ci is None:
        return None
    if all(v is None for v in ci):
        return "never"
    return "[" + ", ".join("never" if v is None else f"{v:.0f}" for v in ci) + "]"


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


def method_notes(results) -> list[str]:
    """Each method's notes, a note several methods share (the regime's take-off paragraph, on the
    default and its fallback) once, naming them: before, the same six lines once per method.

    >>> class R:
    ...     def __init__(self, method, warnings): self.method, self.warnings = method, warnings
    >>> method_notes([R("logit-drift", ["own", "take-off: ..."]), R("last-value", ["take-off: ..."])])
    ['  logit-drift: own', '  logit-drift, last-value: take-off: ...']
    """
    by: dict[str, list[str]] = {}
    for r in results:
        for w in r.warnings:
            if r.method not in by.setdefault(w, []):
                by[w].append(r.method)
    return [f"  {', '.join(methods)}: {w}" for w, methods in by.items()]


def forecast_text(fc) -> str:
    lines = [wrap(header(fc)), fmt_table(rows(fc), COLUMNS, note="note", optional=OPTIONAL)]
    read = observed_words(fc.target_kind, fc.final_observed_step, fc.final_step)
    lines += [read] if read and fc.final_observed is not None else []
    lines += method_notes(fc.methods.values())
    lines += [line[2:] for line in decision_lines(fc.decision)]
    return wrap("\n".join(lines))


def _final(fc):
    """(forecast, lo, hi, no-forecast reason) of the default method's final score."""
    r = fc.methods.get(fc.default)
    fin = (r.final or {}) if r is not None and r.ok else {}
    return fin.get("forecast"), fin.get("lo"), fin.get("hi"), fin.get("no_forecast")


def one_line_rows(forecasts) -> list[dict]:
    """One row per run: window, final forecast, observed final (a backtest), gain to go, call."""
    rows = []
    for rid, fc in forecasts.items():
        mid, lo, hi, nofc = _final(fc)
        d = fc.decision or {}
        obs = fc.final_observed if fc.fit_frac is not None or fc.window_end < (fc.run_last or fc.window_end) else None
        # a gain read from a curve whose interval says nothing (the call refused: no forecast) is no gain; one read
        # from another method than the final's is named (the collapsed run's final was last-value's 0.000, its gain
        # power's -7.7 [-7.7, +59.6], unnamed)
        refused = d.get("call") is None and str(d.get("reason") or "").startswith("no forecast")
        other = f" ({d['method']})" if d.get("method") not in (None, fc.default) else ""
        # last-value's final where the default cannot run: marked as demo marks it (line_notes.fell_back), its
        # "no forecast" too (before, "no forecast" here beside the demo's "no forecast*" for one run)
        mark = FELL_BACK if fell_back(fc) else ""
        final = "-" if mid is None else ("no forecast" if nofc else f"{mid:.3f} [{lo:.3f}, {hi:.3f}]") + mark
        rows.append({"run": rid, "window": f"<= {fc.last_logged:g}", "final": final,
                     "observed": None if obs is None else f"{obs:.3f}",
                     "to": "-" if "gain" not in d else f"{d['gain']['to_step']:g}",
                     "gain": "-" if "gain" not in d or refused else gain_text(d) + other,
                     "call": f"no call ({d['method'] + ': ' if other else ''}no forecast)" if refused else call_text(d),
                     "regime": "" if fc.regime_name == "saturation" else fc.regime_name})
    return rows


ONE_LINE = [("run", "run"), ("window", "window"), ("final [90 %]", "final"), ("observed", "observed"),
            ("to step", "to"), ("gain", "gain"), ("call", "call"), ("regime", "regime")]


GUESS_SAID = "data set read off the run's name"  # a forecast whose task follows from that guess says so


def guess_lines(forecasts) -> list[str]:
    """One line for the runs among ``forecasts`` whose task follows from a data set read off
    their names (:mod:`entropylaw.readers.dataset_guess`): what the one-line view and ``rank`` say."""
    said = [w for fc in forecasts for w in (getattr(fc, "warnings", None) or []) if w.startswith(GUESS_SAID)]
    names = sorted({w[len(GUESS_SAID):].split(" (", 1)[0].strip() for w in said})
    if not names:
        return []
    return [f"{count(len(said), 'run')}: data set read off the name{'s' if len(names) > 1 else ''} "
            f"{', '.join(names[:3])}{', ...' if len(names) > 3 else ''} (their logs and configs name none): its task "
            "sets the rates and priors used; give --dataset NAME to state it"]


def _regime_lines(forecasts, limit: int = 6) -> list[str]:
    """What the regimes make the one-line view say: each run's warnings (collapse risk, data that changes), and
    a validation key that names no benchmark."""
    out = []  # the runs pooled as one sweep: said first, above the table (Forecasts.report)
    said = [(rid, w) for rid, fc in forecasts.items() for w in (fc.warnings or [])]
    takeoff = [rid for rid, w in said if w.startswith("take-off")]  # one line for them all; --full says each
    if takeoff:
        carried = sum(CARRIED in w for _rid, w in said if w.startswith("take-off"))
        mixed = ("the climb carried on at their sweep's rate: a curve fitted to their windows stops the climb "
                 "too soon" if carried == len(takeoff) else
                 f"its own climb; {carried} of them with the climb carried on at their sweep's rate" if carried
                 else "its own climb")
        out.append(f"{count(len(takeoff), 'run')} in take-off: each follows what runs in take-off did next (mixed with "
                   f"{mixed}), its interval opened upward (--full says each)")
    out += guess_lines(forecasts.values())
    falling = [rid for rid, w in said if w.startswith(LR_SAID)]  # one line for them all, as for take-off
    if falling:
        out.append(f"{count(len(falling), 'run')} with the learning rate falling after the window "
                   f"({', '.join(falling[:3])}{', ...' if len(falling) > 3 else ''}): later steps train at lower "
                   "rates and may climb more slowly; the forecasts extrapolate the windows as they trained and may "
                   "overstate what the rest adds (--full says each)")
    # collapse risk, data that changes
    said = [(rid, w) for rid, w in said if not w.startswith(("take-off", GUESS_SAID, LR_SAID))]
    out += [f"{rid}: {w}" for rid, w in said[:limit]]
    if len(said) > limit:
        out.append(f"... and {len(said) - limit} more warnings (--full)")
    return out + generic_notes(forecasts.values())


def one_line_text(forecasts) -> str:
    """The one-line-per-run table, and what its columns mean."""
    pct = next((f"{100 * fc.conf:g} %" for fc in forecasts.values()), "90 %")
    rows = one_line_rows(forecasts)
    cols = [(h.replace("90 %", pct), k) for h, k in ONE_LINE]
    if all(r["observed"] is None for r in rows):
        cols = [c for c in cols if c[1] != "observed"]
    if not any(r["regime"] for r in rows):
        cols = [c for c in cols if c[1] != "regime"]
    fracs = {fc.fit_frac for fc in forecasts.values()}
    head = f"{len(rows)} runs, one line each"
    if len(fracs) == 1 and None not in fracs:  # one share for every run: said once
        cols = [c for c in cols if c[1] != "window"]
        head += f": forecast from the first {100 * fracs.pop():g} % of each run's steps (a backtest)"
    units = {(fc.decision or {}).get("display_units") for fc in forecasts.values()} - {None}
    said = ("final: the default method's final score; gain: what continuing from the window's end to that step "
            f"adds, in {' or '.join(sorted(u.strip('()') for u in units)) or 'points'}, with its {pct} lower and "
            "upper bounds; "
            "call: stop / continue / undecided (the likely call "
            "and its step) against each run's threshold; a method named beside a gain: the call's, where it is not "
            "the final's; --full: every run's forecast, threshold and reasons")
    shown = {r["run"] for r in rows if r["observed"] is not None}
    regimes = (scores_lines(forecasts) + fallback_lines(forecasts) + law_lines(forecasts)
               + past_plan_lines(forecasts) + no_plan_lines(forecasts) + _regime_lines(forecasts)
               + observed_lines((rid, fc.target_kind, fc.final_observed_step, fc.final_step)
                                for rid, fc in forecasts.items() if rid in shown))
    if any(r["regime"] for r in rows):
        said += ("; regime: take-off (still climbing fast from its floor: the interval opens upward) or instability "
                 "(collapse risk: widened downward); blank: saturation")
    return (head + "\n" + line_table(rows, cols) + "\n" + wrap(said)
            + ("\n" + wrap("\n".join(regimes)) if regimes else ""))


class Forecasts(dict):
    """``{run_id: Forecast}`` for several runs (:func:`entropylaw.forecast_all`); ``str()`` is what
    ``entropylaw forecast`` prints (one line per run above :data:`FEW` runs), ``left_out`` the
    runs that could not be forecast, with why."""

    def __init__(self, forecasts: dict, left_out: dict | None = None, default_said: str | None = None):
        super().__init__(forecasts)
        self.left_out = dict(left_out or {})
        self.default_said = default_said  # the default method was asked for: which, by kind of score

    def to_dict(self) -> list:
        """A list of the forecasts' dicts (the CLI's ``--json``), however many runs: one run is a
        list of one. A run left out is an entry of the list, ``{"run_id", "left_out": why}``, after
        the forecasts (a script reading the list sees every run it gave, not only those forecast).

        >>> Forecasts({}, {"tiny": "1 point"}).to_dict()
        [{'run_id': 'tiny', 'left_out': '1 point'}]
        """
        docs = [fc.to_dict() for fc in self.values()]
        return docs + [{"run_id": rid, "left_out": why} for rid, why in self.left_out.items()]

    def report(self, every_method: str = "`methods` None gives every method", full: bool | None = None) -> str:
        """The forecasts as text; ``every_method`` says how to ask for every method (a caller's own
        words); ``full``: every run's own text (default: above :data:`FEW` runs, one line per run).
        Runs forecast as one sweep say so first: each one's forecast changes with the others read."""
        full = len(self) <= FEW if full is None else full
        text = "\n\n".join(forecast_text(fc) for fc in self.values()) if full else one_line_text(self)
        text = "\n".join([*sweep_lines(self), text])
        if self.left_out:
            text += "\n" + "\n".join(f"left out: {rid}: {why}" for rid, why in self.left_out.items())
        if self.default_said:
            text += (f"\n\n(default method {self.default_said}, last-value where it cannot run: "
                     "chosen by a rule fixed in advance on the backtest of the real runs at 15 % of their "
                     f"steps, which bounds the worst run's error as well as the median's; {every_method}, with the "
                     "plateau and the 90 % step of the curve methods)")
        return wrap(text)

    def __str__(self) -> str:
        return self.report()
