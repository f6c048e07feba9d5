"""Lines under ``entropylaw forecast``'s one-line view of many runs that say what its rows do not:
which rows forecast which score, where the runs forecast several (a run with no validation score
forecast on its training score beside a sweep's validation scores), the runs at their planned
last step, whose gain runs to the forecast's last step as if they went on, and what ``rank`` says
beside a row's number: a final that is the last value's (the default method could not run on the
window) and a window the law does not describe (before, the one-line view said neither: a
collapsed run's 0.000 read as the default method's forecast of a run the law describes).

A final that is last-value's is marked ``*`` beside its number or its "no forecast" (last-value's interval too
wide as well), by one rule (:func:`fell_back`) and with one footnote (:func:`fell_back_said`) the demo's screen
marks it by too (before, the demo read "no forecast*" where this view read "no forecast"); the line under the
table gives, for a run whose regime moved it
(a take-off's climb carried on), the window's last value it was moved from: before, "0.518" read as
the last value of a run whose window ended at 0.371 (data/real-sizes' 0.5B at 15 %)."""

from __future__ import annotations

from entropylaw.fit.forecast.horizon import NO_PLAN, PAST_PLAN
from entropylaw.fit.forecast.names import LAST_VALUE
from entropylaw.fit.forecast.rank_flags import NO_LAW, law_tag
from entropylaw.terminal import count, some_names


def scores_lines(forecasts) -> list[str]:
    """Which rows forecast which score, where they are several (a run with no validation score beside a sweep's)."""
    by = {}
    for rid, fc in forecasts.items():
        kind = "" if fc.target_kind == "validation" else " (training score)"
        by.setdefault(f"{fc.target_key}{kind}", []).append(rid)
    if len(by) == 1 and next(iter(by)).endswith(" (training score)"):  # rank says it alike
        return [f"no run logs a validation score: forecast on the training score ({next(iter(by))[:-17]})"]
    return [f"the runs forecast {len(by)} scores, not to be compared across: " + "; ".join(
        f"{k}: {', '.join(v) if len(v) <= 3 else count(len(v), 'run')}" for k, v in by.items())] if len(by) > 1 else []


def past_plan_lines(forecasts) -> list[str]:
    """The runs at their planned last step, whose gain runs past it (a row read "600 ... continue", unsaid)."""
    past = [r for r, fc in forecasts.items() if str(((fc.decision or {}).get("gain") or {}).get("to_step_source"))
            .startswith(PAST_PLAN + ": the run has reached")]
    return [f"{count(len(past), 'run')} at the planned last step its log or config states ({', '.join(past[:3])}"
            f"{', ...' if len(past) > 3 else ''}): the gain runs to the forecast's last step, as if the run went on; "
            "give --total-steps if it does"] if past else []


def no_plan_lines(forecasts) -> list[str]:
    """The runs whose gain runs to the step forecast to, no planned last step being known (a "to step"
    of 198 for a log of 100 steps, unsaid), grouped by what that step is."""
    ahead: dict[str, list[str]] = {}
    for rid, fc in forecasts.items():
        source = str(((fc.decision or {}).get("gain") or {}).get("to_step_source"))
        if f": {NO_PLAN}" in source:
            ahead.setdefault(source.split(f": {NO_PLAN}")[0], []).append(rid)
    return [f"to step: {what} ({'every run' if len(ids) == len(forecasts) else some_names(ids)}): {NO_PLAN}; "
            "give `total_steps` N" for what, ids in ahead.items()]


FELL_BACK = "*"  # beside a final that is last-value's, the default method not running on the window
NO_FORECAST_MARKED = "beside 'no forecast': last-value's interval is too wide as well"


def fell_back(fc) -> bool:
    """Whether ``fc``'s final is last-value's because the method it would recommend cannot run on its
    window (where the default cannot run, last-value is recommended instead: :func:`~.core.forecast`):
    what ``demo``'s screen and ``forecast``'s one-line view mark :data:`FELL_BACK`, beside a number or
    a "no forecast" alike.

    >>> from types import SimpleNamespace as N
    >>> fell_back(N(default="last-value", methods={"logit-drift": N(ok=False), "last-value": N(ok=True)}))
    True
    >>> fell_back(N(default="last-value", methods={"last-value": N(ok=True)}))  # asked for, not fallen back to
    False
    """
    return fc.default == LAST_VALUE and any(not r.ok for name, r in fc.methods.items() if name != LAST_VALUE)


def no_forecast(fc) -> bool:
    """Whether ``fc``'s final is shown as "no forecast" (the default's interval too wide to say where the run ends)."""
    r = fc.methods.get(fc.default)
    return bool(r is not None and r.ok and (r.final or {}).get("no_forecast"))


def fell_back_said(names: str = "", blank: bool = False, why: str = "") -> str:
    """What :data:`FELL_BACK` means, in the words of both the demo's screen and ``forecast``'s one-line
    view: ``names``, the runs marked (none named: the demo's rows are numbered); ``blank``, whether a
    row marked shows "no forecast"; ``why``, where the reason is said.

    >>> fell_back_said("a, b", blank=True)
    "*: last-value (a, b): the default method cannot run on the window; beside 'no forecast': last-value's \
interval is too wide as well"
    """
    return (f"{FELL_BACK}: {LAST_VALUE}{f' ({names})' if names else ''}: the default method cannot run on the window"
            + (f" ({why})" if why else "") + (f"; {NO_FORECAST_MARKED}" if blank else ""))


def moved_from(fc) -> float | None:
    """The window's last value (a training score's: the mean of its last points) where the final shown
    differs from it at the 3 decimals shown: last-value moved by its regime (a take-off's climb carried
    on, a collapse's floor); None where it is not last-value's or not moved."""
    r = fc.methods.get(LAST_VALUE)
    last = (getattr(r, "params", None) or {}).get("last")
    final = ((getattr(r, "final", None) or {}) if r is not None and r.ok else {}).get("forecast")
    return None if last is None or final is None or f"{final:.3f}" == f"{last:.3f}" else float(last)


def fallback_lines(forecasts) -> list[str]:
    """What :data:`FELL_BACK` beside a final means, naming the runs marked (every run :func:`fell_back`),
    with the last value of each whose regime moved its final (a final shown: "no forecast" moved nothing)."""
    fell = [rid for rid, fc in forecasts.items() if fell_back(fc)]
    if not fell:
        return []
    blank = {rid for rid in fell if no_forecast(forecasts[rid])}
    moved = [(rid, last) for rid in fell if rid not in blank and (last := moved_from(forecasts[rid])) is not None]
    line = fell_back_said(some_names(fell), bool(blank), why="--full says why")
    if len(blank) < len(fell):
        line += "; the final is the window's last value carried on"
    if moved:
        said = ", ".join(f"{rid} from {last:.3f}" for rid, last in moved[:3])
        line += (", except where the run's regime moves it (a take-off's climb carried on as such runs' did; a "
                 f"collapse, to where such runs ended), from the window's last value: {said}"
                 + (f" and {len(moved) - 3} more" if len(moved) > 3 else ""))
    return [line]


def law_lines(forecasts) -> list[str]:
    """The runs whose window the law does not describe, grouped by their reasons' heads (as ``rank`` says them)."""
    why: dict[str, list[str]] = {}
    for rid, fc in forecasts.items():
        tag = law_tag(getattr(fc, "law_reasons", None))
        if tag:
            why.setdefault(tag[len(NO_LAW) + 2:], []).append(rid)
    if not why:
        return []
    said = "; ".join(f"{', '.join(ids) if len(ids) <= 3 else some_names(ids)} ({reasons})"
                     if len(why) > 1 or len(ids) < len(forecasts) else f"every run ({reasons})"
                     for reasons, ids in why.items())
    return [f"{NO_LAW}: {said}: in the forecast's window the run does not consume entropy to gain score as the law "
            "describes (the fit of the whole run may judge otherwise); its forecast extrapolates a trend, not the "
            "law's ceiling"]
