"""The questions a person with a running job asks: "what does the rest of the run add?",
"can I stop it?" and "will it get there?".

From one method's forecast (its expected curve, its predictive draws of the final score):

- **gain to go**: what continuing from the window's end to step N adds to the final score,
  ``final - now`` per draw (the expected final score's draw, without one evaluation's noise,
  minus the same draw's curve at the window's end: joint draws, so the gain's interval is not a
  difference of two intervals; the final score's interval keeps that noise).
  N is the planned last step (``total_steps``; in a backtest, the score's last logged step where
  the log stops before it), else the score's last logged step in a backtest, else the forecast's last step;
- **the call**: ``stop`` when the gain's 90 % upper bound (its 90th percentile over the
  draws; ``conf``) is below the threshold, ``continue`` when its 90 % lower bound (10th
  percentile) is above it, else ``undecided``, with the step at which the call is likely
  made. Where the final score's interval is wider than half the score's range (no forecast,
  :func:`~.final.no_forecast_reason`) the window cannot say where the run ends: no call,
  except ``continue`` when the gain's lower bound alone clears the threshold (a run taking
  off whose upper end is open: "at least +G"; ``no_forecast`` says why the end is open). A
  stop needs the upper bound, which such a window does not give;
- **threshold**: one binomial standard error ``sqrt(p (1 - p) / n)`` of the validation set
  (``n`` problems, ``p`` the expected score at the window's end), else the window's noise
  (a validation score's scatter about its local trend, :func:`~.data.trend_noise`);
  for a score in [0, 1] (or in percent) held between 1 and 3 points (:data:`POINTS_FLOOR`,
  :data:`POINTS_CAP`), for another bounded score between 1 and 3 % of its range, said which;
  or given;
- **cost**: what the rest costs, from a cost per step or the log's own timing;
- **target step**: the first step at which the expected score is at or above ``target``
  (a score is better higher), with the share of draws that reach it within the searched range.

>>> import numpy as np
>>> call_of(0.004, 0.009, threshold=0.01), call_of(0.02, 0.05, 0.01), call_of(0.0, 0.05, 0.01)
('stop', 'continue', 'undecided')
>>> g = gain_summary(np.array([0.01, 0.02, 0.03, 0.04, 0.05]), expected=0.03, conf=0.75)
>>> g["expected"], g["lo"], g["hi"]
(0.03, 0.02, 0.04)
"""

from __future__ import annotations

import numpy as np

from entropylaw.errors import EntropyLawError
from entropylaw.fit.forecast.data import own_noise
from entropylaw.fit.forecast.final import final_steps, gap_reason, hold, no_forecast_reason, seen_range
from entropylaw.fit.forecast.horizon import to_step_of  # noqa: F401 -- callers read it from here
from entropylaw.fit.forecast.problems import check_problems, problems_for, run_problems
from entropylaw.fit.forecast.rank_flags import is_constant
from entropylaw.fit.forecast.regimes import collapsed
from entropylaw.fit.logit import from_logit
from entropylaw.terminal import signed
from entropylaw.fit.forecast.target import target_answer

POINTS_FLOOR, POINTS_CAP = 1.0, 3.0  # the default threshold's range, in points of a score in [0, 1] (or %)
CALLS = ("stop", "continue", "undecided")
CONSTANT = "the score is constant in the window"  # a call's reason; the one-line table says it short
FLOOR = "the score has not left its floor"  # the window's scores all within the threshold of the range's bottom
MIN_DRAWS = 20  # the gain's one-sided 90 % points need a few draws beyond them (2 of 20 in each tail)


def point_size(bounds) -> float | None:
    """One point in the score's units: 0.01 for a score in [0, 1], 1 for one in percent, None
    for a score with no such range (its gains are said in its own units).

    >>> point_size((0.0, 1.0)), point_size((0.0, 100.0)), point_size(None)
    (0.01, 1.0, None)
    """
    if bounds is None:
        return None
    span = float(bounds[1]) - float(bounds[0])
    return span / 100 if span in (1.0, 100.0) and float(bounds[0]) == 0.0 else None


def as_points(value, bounds) -> str:
    """A gain in points (``+1.4``), or in the score's own units where it has no percent scale."""
    unit = point_size(bounds)
    return signed(value, unit)


def refuse_whole_range(threshold: float, whole: float | None, point: float | None, consequence: str) -> None:
    """A given threshold of the score's whole range (``whole``) or more is refused, said in points
    where the score has them (``point``), with what it would do (``consequence``): 5 meant as points
    of a score in [0, 1] is 500 points, and no gain or margin of that score can reach it.

    >>> refuse_whole_range(0.05, 1.0, 0.01, "every call would be stop")
    >>> refuse_whole_range(5, 1.0, 0.01, "every call would be stop")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    entropylaw.errors.EntropyLawError: `threshold` 5 is 500 points, ...: every call would be stop; ...5 points)
    """
    if not whole or threshold < whole:
        return
    said_as = f"{threshold / point:g} points" if point else f"{threshold / whole:.0%} of its range"
    example = f"{5 * point:g} for 5 points" if point else f"{whole / 20:g} for 5 % of its range"
    raise EntropyLawError(f"`threshold` {threshold:g} is {said_as}, the score's whole range or more: {consequence}; "
                          f"give it in the score's units ({example})")


def unit_name(bounds) -> str:
    return "points" if point_size(bounds) else "(score units)"


def threshold_for(level: float, values, target_key: str, target_kind: str, n_problems=None,
                  bounds=(0.0, 1.0), steps=None, source=None) -> tuple[float, str]:
    """The default threshold and where it comes from (module docstring); ``values``: the
    window's target values (its noise is the fallback), at ``steps`` (default evenly spaced),
    ``bounds`` the score's range; ``n_problems`` with its ``source`` where the caller resolved
    it (:func:`run_problems`)."""
    if n_problems and source:
        n, bench = n_problems, source
    elif target_kind == "validation":
        n, bench = problems_for(target_key, values, bounds, n_problems)
    else:
        n, bench = (n_problems, "`n_problems`") if n_problems else (None, None)
    unit, hint = point_size(bounds), ""
    given = n_problems if bench == "`n_problems`" else None  # a size the user gave, not one read or assumed
    if n and target_kind == "validation" and unit:
        scale = 100 * unit
        p = float(np.clip(level / scale, 0.0, 1.0))
        se = scale * float(np.sqrt(max(p * (1 - p), 1e-12) / n))
        why = f"one binomial standard error of the validation set ({n:g} problems, {bench}; p = {p:.3f})"
    else:
        se, trend = own_noise(values, steps, target_kind)
        why = ("the window's noise (its scatter about the local trend: second differences)" if trend else
               "the window's noise (median absolute successive difference of the score)")
        if given and target_kind != "validation":
            hint = f"; `n_problems` applies to a validation score, and this run's target is its {target_kind}"
        elif given and not unit:
            hint = "; `n_problems` applies to a score in [0, 1], and this one is not"
        elif target_kind == "validation":
            hint = "; give `n_problems` N for the binomial standard error of an N-problem validation set"
    if unit is None and bounds is not None:  # a bounded score without a percent scale: 1 % of its range
        span = (float(bounds[1]) - float(bounds[0])) / 100
        if se < POINTS_FLOOR * span:
            return POINTS_FLOOR * span, f"{why}: {se:.3g}, raised to {POINTS_FLOOR:g} % of the score's range{hint}"
        if se > POINTS_CAP * span:
            return POINTS_CAP * span, f"{why}: {se:.3g}, held at {POINTS_CAP:g} % of the score's range{hint}"
    if unit is not None and se < POINTS_FLOOR * unit:
        return POINTS_FLOOR * unit, f"{why}: {se / unit:.2f} points, raised to the {POINTS_FLOOR:g}-point floor{hint}"
    if unit is not None and se > POINTS_CAP * unit:
        return POINTS_CAP * unit, f"{why}: {se / unit:.1f} points, held at the {POINTS_CAP:g}-point cap{hint}"
    return se, why + hint


def call_of(lo: float, hi: float, threshold: float) -> str:
    """stop / continue / undecided from the gain's interval (module docstring)."""
    if hi < threshold:
        return "stop"
    if lo > threshold:
        return "continue"
    return "undecided"


def gain_summary(draws, expected: float, conf: float) -> dict:
    """The gain's expected value and its one-sided ``conf`` bounds from its per-draw values:
    ``lo`` the ``1 - conf`` quantile, ``hi`` the ``conf`` quantile (a 90 % upper bound is
    the 90th percentile; together the two bounds make a ``2 conf - 1`` interval), widened to
    hold the expected gain (:func:`~.final.hold`)."""
    d = np.asarray(draws, float)
    d = d[np.isfinite(d)]
    lo, hi = hold(expected, *np.quantile(d, [1 - conf, conf])) if len(d) else (np.nan, np.nan)
    return {"expected": float(expected), "lo": float(lo), "hi": float(hi)}


def final_draws(m, kind: str, origin: float, to_step: float, spacing: float,
                noise: bool = True) -> tuple[float, np.ndarray]:
    """``m``'s final score at ``to_step`` as :mod:`.final` defines it: its point and draws (B,);
    ``noise=False``: of the expected score, without one observation's noise."""
    steps = final_steps(kind, origin, to_step, spacing)
    fmid, fdraws = m.predictive(steps[-1:], noise=noise) if kind == "validation" else \
        m.predictive(steps, average=True, noise=noise)
    return float(np.asarray(fmid)[-1]), np.asarray(fdraws, float)[:, -1]


def anchor(regime, bounds) -> float | None:
    """The level a take-off's draws climb from at the window's end (the fitted logit's end,
    where :func:`~.regimes.apply` starts them), or a collapsed run's floor level there, else None:
    the gain's "now" for a flat method the regime moves, so that its final and its now come from
    one curve (not the window's noise, which a fall to the floor inflates).

    >>> round(anchor({"name": "take-off", "z_end": 0.0}, (0.0, 1.0)), 3), anchor({"name": "saturation"}, (0, 1))
    (0.5, None)
    >>> anchor({"name": "instability", "on_floor": True, "drop": 1.0, "point_sd": 0.05, "floor_points": 3}, (-1, 1))
    -1.0
    """
    if bounds is None or not regime:
        return None
    if collapsed(regime):
        return float(bounds[0])  # the floor a collapsed run's draws start from (regimes.on_floor)
    if regime.get("name") != "take-off" or "z_end" not in regime:
        return None
    return float(np.asarray(from_logit(np.array([regime["z_end"]]), bounds))[0])


def final_and_now(m, kind: str, origin: float, end: float, to_step: float, spacing: float):
    """``m``'s final score at ``to_step`` (:func:`final_draws`) and its level at the window's
    end: (final point, final draws (B,), now point, now draws (B,)), row by row from the same
    parameter draw (where the method's draws do not line up, the now is its point)."""
    final, fdraws = final_draws(m, kind, origin, to_step, spacing)
    flat = not getattr(m, "models_change", True)
    start = anchor(getattr(m, "regime_", None), getattr(m, "bounds_", None)) if flat else None
    if start is not None:  # a flat method a take-off moves: its draws climb from the take-off's anchor
        return final, fdraws, start, np.full(len(fdraws), start)
    nmid, ndraws = m.curve(np.array([float(end)]))
    now = float(np.asarray(nmid)[0])
    ndraws = np.asarray(ndraws, float)[:, 0] if ndraws is not None and len(ndraws) == len(fdraws) \
        else np.full(len(fdraws), now)
    return final, fdraws, now, ndraws


def likely_call(steps, remaining, up: float, down: float, origin: float, threshold: float):
    """Where an undecided call is likely made: the first step ``s`` of ``steps`` (from the
    window's end to N) at which the expected remaining gain ``remaining[s]``, with today's
    interval half-widths ``up``/``down`` narrowed as the square root of the relative horizon
    ``(N - s) / (s - origin)``, falls wholly below or above ``threshold``: (step, call), or None where
    that is only N itself (the run's end: "likely made at step N" was said of no call before it).

    >>> s = np.linspace(100, 1000, 10)
    >>> likely_call(s, 0.05 * (1000 - s) / 900, 0.04, 0.04, 0.0, 0.02)   # at 800: 0.0111 + 0.04 x 0.167 < 0.02
    (800.0, 'stop')
    """
    steps, remaining = np.asarray(steps, float), np.asarray(remaining, float)
    # nothing is left at N: a gain the curve does not place in time (a take-off lift) is spread over the steps left
    remaining = remaining - remaining[-1] * (steps - steps[0]) / max(steps[-1] - steps[0], 1e-12)
    h = (steps[-1] - steps) / np.maximum(steps - origin, 1.0)
    k = np.sqrt(h / h[0]) if h[0] > 0 else np.zeros_like(h)
    for s, g, ki in zip(steps[1:-1], remaining[1:-1], k[1:-1]):
        if g + up * ki < threshold:
            return float(s), "stop"
        if g - down * ki > threshold:
            return float(s), "continue"
    return None


def cost_of(steps_left: float, step_cost=None, step_seconds=None, timing_what=None) -> dict | None:
    """What the rest of the run costs: ``step_cost`` GPU-hours a step (given), else
    ``step_seconds`` of wall time a step (the log's timing; ``timing_what``: which, in words):
    None without either."""
    if step_cost is not None:
        return {"amount": float(steps_left * step_cost), "unit": "GPU-hours", "per_step": float(step_cost),
                "source": "given (`step_cost`, GPU-hours per step)"}
    if step_seconds is not None and np.isfinite(step_seconds) and step_seconds > 0:
        return {"amount": float(steps_left * step_seconds / 3600), "unit": "wall-clock hours",
                "per_step": float(step_seconds),
                "source": f"the log's timing{f' ({timing_what})' if timing_what else ''}, median {step_seconds:.4g} s "
                          "a step in the window (times the run's GPUs for GPU-hours, or give `step_cost`)"}
    return None


def check_decision_args(target, threshold, n_problems, total_steps, end, step_cost=None, fit_frac=None,
                        last=None) -> None:
    """Each decision argument checked before fitting, in one line. ``last``: the run's last logged step (a
    ``total_steps`` at the window's end is the run's end only where the window holds all of it, not a backtest's)."""
    if target is not None and not np.isfinite(target):
        raise EntropyLawError(f"`target` {target!r}: expected a finite score")
    if threshold is not None and not threshold > 0:
        raise EntropyLawError(f"`threshold` {threshold!r}: expected a gain above 0")
    check_problems(n_problems)
    if total_steps is not None and total_steps <= end:
        share = f": {100 * fit_frac:g} % of the run's steps" if fit_frac else ""  # a share's end falls between steps
        there = ("the run has reached that step: nothing is left to forecast or to decide (its final score is the one "
                 "logged; `fit_frac` backtests a forecast from its first steps)") \
            if total_steps == end and (last is None or end >= last) else \
            "give the run's planned last step"  # not asked again of a user who gave the step the run is at
        raise EntropyLawError(f"`total_steps` {total_steps:g} is not after the window's end (step {end:g}{share}); "
                              + there)
    if step_cost is not None and not (np.isfinite(step_cost) and step_cost > 0):
        raise EntropyLawError(f"`step_cost` {step_cost!r}: expected GPU-hours per step above 0")


# a method whose curve cannot change (models_change False) has no gain by construction: skipped,
# unless the window's regime moves its centre (a take-off: Method.moves); the method the
# output recommends is then read before a curve fitted for the decision alone, which extrapolates the
# window the regime says not to trust
def decision_on(win, fitted, conf, target, threshold, n_problems, first, curve, to, step_cost=None,
                step_seconds=None, timing_what=None) -> tuple[dict, np.ndarray | None]:
    """The decision on ``win`` (the run cut at the window's end) from the first method in order
    that models change (a curve, or a method the window's regime moves: last-value in a
    take-off), and that method's draws of the final score at N; ``to``: (N, why) from
    :func:`~.horizon.to_step_of`."""
    order = [first, curve, *fitted]
    m = next((fitted[n] for n in order if n in fitted and fitted[n].ok_ and fitted[n].moves()), None)
    if m is None:
        return {"method": None, "call": None, "reason": "no method that models change could run on this window "
                                                        "(last-value and law-ceiling have no gain by construction, "
                                                        "unless the window's regime moves them)"}, None
    end, bounds, origin = win.end, win.bounds, win.origin
    to_step, to_why = to
    spacing = float(np.median(np.diff(win.target.steps))) if len(win.target) > 1 else 1.0
    final, fdraws, now, ndraws = final_and_now(m, win.target_kind, origin, end, to_step, spacing)
    # what continuing adds is a change of the expected score: one evaluation's noise at step N is
    # not added by continuing (the final score's interval and rank's draws keep it)
    gdraws = final_draws(m, win.target_kind, origin, to_step, spacing, noise=False)[1]
    n, said = run_problems(win) if win.target_kind == "validation" else (n_problems, None)
    if threshold is None:
        threshold, source = threshold_for(now, win.target.values, win.target_key, win.target_kind, n, bounds,
                                          win.target.steps, said)
    else:
        source = "given (`threshold`)"
        whole = float(bounds[1]) - float(bounds[0]) if bounds is not None else None
        refuse_whole_range(threshold, whole, point_size(bounds), "every call would be stop")
    # the gain is read from the rule's end (130.2 in a backtest); the output names the window's last logged step
    gain = {"from_step": float(end), "from_logged_step": float(win.last), "to_step": to_step, "to_step_source": to_why,
            **gain_summary(gdraws - ndraws, final - now, conf)}
    out = {"method": m.name, "conf": float(conf), "threshold": float(threshold), "threshold_source": source,
           "gain": gain, "display_units": unit_name(bounds), "point": point_size(bounds),
           "cost": cost_of(to_step - end, step_cost, step_seconds, timing_what),
           # the validation set's size the window's noise was read with (the points' weights, the regime)
           "problems": {"n": float(n), "source": said} if n and said else None}
    lo, hi = hold(final, *np.quantile(fdraws, [(1 - conf) / 2, (1 + conf) / 2])) if len(fdraws) else (np.nan, np.nan)
    out["final"] = {"step": to_step, "expected": final, "lo": float(lo), "hi": float(hi)}
    # named: the call may read another method than the one a table recommends (module docstring)
    why_not = no_forecast_reason(float(lo), float(hi), bounds, seen_range(win.target.values),
                                 f"the {m.name} forecast's interval")
    gap = gap_reason(win.target_kind, win.target.steps, end)
    if gap:  # the gain's "now" at the window's end is itself carried across the gap: no bound of it is read
        out.update(call=None, reason=gap)
    elif not np.isfinite([gain["lo"], gain["hi"]]).all():
        out.update(call=None, reason="the forecast has no finite draws")
    elif len(fdraws) < MIN_DRAWS:
        out.update(call=None, reason=f"the forecast has {len(fdraws)} draws (`n_boot`): too few for the gain's 10 "
                                     f"and 90 % points to bound it; a call needs {MIN_DRAWS} or more")
    elif is_constant(win.target.values):  # a zero-width interval of a curve through one value: no forecast
        out.update(call=None, reason=f"{CONSTANT} ({win.target.values[-1]:g} at all "
                                     f"{len(win.target)} points): nothing in it says whether or when it moves")
    elif (floor := floor_said(win.target.values, bounds)) is not None:
        out.update(call=None, reason=floor)  # a run yet to learn its answers' format: when it takes off is unseen
    elif why_not and gain["lo"] > threshold:  # the lower bound is enough for continue; the end stays open
        out.update(call="continue", no_forecast=why_not)
    elif why_not:
        out.update(call=None, reason=why_not)
    else:
        out["call"] = call_of(gain["lo"], gain["hi"], threshold)
    steps = np.linspace(end, to_step, 200)
    mid, _ = m.curve(steps)
    if out["call"] == "undecided":  # skewed draws can put the expected gain outside its bounds: no negative width
        likely = likely_call(steps, final - np.asarray(mid, float), max(gain["hi"] - gain["expected"], 0.0),
                             max(gain["expected"] - gain["lo"], 0.0), origin, threshold)
        # a whole step after the window's end (not "step 100" of an end at 100.497) and before N (nothing is left there)
        at = None if likely is None else float(np.ceil(likely[0] - 1e-9))
        out["likely"] = None if at is None or at >= to_step else {"step": at, "call": likely[1]}
    raw = m._mid(steps) if hasattr(m, "_mid") else mid
    if bounds is not None and ((raw < bounds[0]) | (raw > bounds[1])).any():
        i = int(np.argmax((raw < bounds[0]) | (raw > bounds[1])))
        out["curve_note"] = (f"the {m.name} curve reaches the score's bound at step {steps[i]:.0f} "
                             f"({raw[i]:.3f} before clipping): read on past it, it is held at the bound")
    if target is not None:
        planned = to_why.startswith("the planned")  # the run ends there: a step past it is no answer
        far = np.linspace(end, to_step if planned else max(origin + 20 * max(end - origin, 1.0), to_step), 600)
        stuck = win.target.values[-1] if str(out.get("reason", "")).startswith(CONSTANT) else None
        out.update(target_answer(far, *m.curve(far), target, conf, bounds, stuck, why_not))
    return out, fdraws


def floor_said(values, bounds) -> str | None:
    """Why the window says nothing of where the run goes, where every score of it lies within one point (1 % of the
    score's range; not the call's threshold, which a user may set at will) of the bottom of the range (GSM8K's
    0.000, 0.000, 0.002 in a run's first 22 steps, 0.38 seven steps later: it had yet to learn the answers'
    format), else None.

    >>> floor_said([0.0, 0.0, 0.002], (0.0, 1.0))[:60]
    'the score has not left its floor (0 to 0.002 at all 3 points'
    >>> floor_said([0.0, 0.04], (0.0, 1.0)) is None, floor_said([0.0, 0.0], None) is None
    (True, True)
    """
    v = np.asarray(values, float)
    v = v[np.isfinite(v)]
    if bounds is None or len(v) < 2 or not np.isfinite(bounds).all():
        return None
    point = 0.01 * (float(bounds[1]) - float(bounds[0]))
    if float(v.max()) - float(bounds[0]) > point:
        return None
    return (f"{FLOOR} ({v.min():.3g} to {v.max():.3g} at all {len(v)} points of the window, within one point of "
            f"the range's bottom {float(bounds[0]):g}): nothing in it says whether or when it takes off")
