"""What a forecast calls a run's *final score*: one rule for every command and the backtest.

- A **validation score** is one pass over a fixed set of problems: its final score is its
  value at the run's last step.
- A **training score** is the reward of one step's batch of prompts (a few dozen problems,
  new ones every step): one step's value swings by tens of points and says little about
  where the run ended. Its final score is the **mean over the run's last 5 % of steps**
  (:data:`FINAL_SHARE`), forecast as a mean (:meth:`~.methods.ForecastMethod.predict_mean`:
  the batch noise shrinks with the steps averaged, the model error does not).

A 90 % interval that spans more than half the score's range (:data:`NO_FORECAST_WIDTH`)
says nothing about where the run ends: it is reported as **no forecast**, with its reason,
and its numbers stay in the JSON.

>>> import numpy as np
>>> final_steps("training score", origin=0.0, last=200.0, spacing=5.0)
array([190., 195., 200.])
>>> final_steps("validation", origin=0.0, last=200.0, spacing=5.0)
array([200.])
>>> round(observed_final("training score", np.arange(0, 201, 5.0), np.r_[np.zeros(38), 0.5, 1.0, 0.9],
...                      [190.0, 200.0]), 6)
0.8
"""

from __future__ import annotations

import numpy as np

from entropylaw.terminal import some_names

FINAL_SHARE = 0.05
# the most steps a final mean is read at: a run forecast to step 1e9 read its mean at 5e7 steps a draw (11 GiB
# at 30 draws, an out-of-memory error); a curve's mean over its last 5 % is as well read at 400 steps across it
MAX_FINAL_STEPS = 400
NAMED = 6  # the most runs a line names (a sweep of 50 read alike is one line, not 50 names)
NO_FORECAST_WIDTH = 0.5  # of the score's range
UNBOUNDED_WIDTH = 10.0  # a score of no known range: times the spread of the window's scores


def final_span(kind: str, origin: float, last: float) -> tuple[float, float]:
    """``(first, last)`` step of what makes the final score: the last step alone for a
    validation score, the last :data:`FINAL_SHARE` of ``origin .. last`` for a training score."""
    last = float(last)
    return (last, last) if kind == "validation" else (last - FINAL_SHARE * (last - float(origin)), last)


def final_steps(kind: str, origin: float, last: float, spacing: float) -> np.ndarray:
    """The steps whose score makes the final score (:func:`final_span`): for a training score
    every ``spacing`` steps (the window's own logging interval), back from ``last``."""
    if kind == "validation":
        return np.array([float(last)])
    start, _ = final_span(kind, origin, last)
    spacing = max(float(spacing), 1.0, (float(last) - start) / (MAX_FINAL_STEPS - 1))
    return np.arange(float(last), start - 1e-9, -spacing)[::-1]


def describe(kind: str, steps) -> str:
    """What the final score is, in words (``steps``: :func:`final_steps`, forecast as well as logged).

    >>> describe("training score", [7.0])[:58]
    'the training score at step 7 alone: the last 5% of the ste'
    """
    steps = np.asarray(steps, float)
    if kind == "validation" or len(steps) == 0:
        return f"the validation score at step {steps[-1]:g}" if len(steps) else "the validation score at the last step"
    if len(steps) == 1:  # a short run's last 5 %: less than one logging interval, whether logged there or not
        return (f"the training score at step {steps[-1]:g} alone: the last {FINAL_SHARE:.0%} of the steps up to the "
                "forecast's end holds no other step (over a longer run it is the mean of several: one step's batch "
                "reward is noisy)")
    return (f"the mean training score over steps {steps[0]:g}..{steps[-1]:g}: the last {FINAL_SHARE:.0%} of the "
            "steps up to the forecast's end (one step's batch reward is too noisy to call final)")


def logged_interval(steps) -> float:
    """The steps between a score's points as logged (their median spacing; 0 for fewer than 2 points)."""
    steps = np.unique(np.asarray(steps, float))
    return float(np.median(np.diff(steps))) if len(steps) > 1 else 0.0


def observed_final_at(kind: str, steps, values, span, reached=None) -> tuple[float, float] | None:
    """The final score as logged and the last step it was read at, or None where nothing was logged there.

    A validation score: its value at ``span``'s last step N or, where none was logged at N (validations
    every 5 steps, N 198), at the last step logged before N, no further back than one interval
    between its points (:func:`logged_interval`): the run's score at N as its log knows it, the step
    named (:func:`observed_words`); one from further back (a gap in its evaluations) is none. A
    training score: the mean over ``span``'s steps. ``reached``: the run's last logged step, any
    metric's (default: the score's own last): a run that stopped before N has no final score at N.

    >>> s = np.arange(5.0, 201, 5.0)
    >>> observed_final_at("validation", s, s / 200, (198.0, 198.0))
    (0.975, 195.0)
    >>> observed_final_at("validation", s, s / 200, (198.0, 198.0), reached=196.0) is None
    True
    >>> observed_final_at("validation", [5.0, 10.0, 15.0, 100.0, 200.0], [0.1, 0.2, 0.3, 0.4, 0.5], (150, 150)) is None
    True
    """
    steps, values = np.asarray(steps, float), np.asarray(values, float)
    lo, hi = float(span[0]), float(span[-1])
    end = float(steps[-1]) if reached is None and len(steps) else -np.inf if reached is None else float(reached)
    if end < hi - 1e-9:
        return None
    if kind == "validation":
        before = np.nonzero(steps <= hi + 1e-9)[0]
        if not len(before) or hi - steps[before[-1]] > logged_interval(steps) + 1e-9:
            return None
        return float(values[before[-1]]), float(steps[before[-1]])
    inside = (steps >= lo - 1e-9) & (steps <= hi + 1e-9)
    return (float(np.mean(values[inside])), float(steps[inside][-1])) if inside.any() else None


def observed_final(kind: str, steps, values, span, reached=None) -> float | None:
    """The final score as logged (:func:`observed_final_at`'s score)."""
    got = observed_final_at(kind, steps, values, span, reached)
    return None if got is None else got[0]


def observed_words(kind: str, read: float | None, step: float, runs=None) -> str | None:
    """The line saying a validation score observed at an earlier step than the final's ``step`` was
    read at ``read`` (:func:`observed_final_at`), or None where it was read at ``step`` itself; ``runs``:
    the runs it holds for, named where given.

    >>> observed_words("validation", 195.0, 198.0)
    'observed: the validation score at step 195, the last the run logged at or before step 198 (none at 198)'
    >>> observed_words("validation", 198.0, 198.0) is None
    True
    """
    if kind != "validation" or read is None or read >= step - 1e-9:
        return None
    runs = list(runs or [])
    who = f" ({some_names(runs, NAMED)})" if runs else ""
    return (f"observed{who}: the validation score at step {read:g}, the last "
            f"{'they' if runs and len(runs) > 1 else 'the run'} logged at or before step {step:g} (none at {step:g})")


def observed_lines(reads) -> list[str]:
    """:func:`observed_words` for several runs, ``reads``: ``(run_id, kind, read, step)`` each; one line
    for the runs read at one step before one final step, each naming its runs.

    >>> observed_lines([("a", "validation", 195.0, 198.0), ("b", "validation", 195.0, 198.0)])[0][:52]
    'observed (a, b): the validation score at step 195, t'
    """
    groups: dict[tuple, list[str]] = {}
    for rid, kind, read, step in reads:
        if observed_words(kind, read, step):
            groups.setdefault((kind, read, step), []).append(str(rid))
    return [observed_words(kind, read, step, runs) for (kind, read, step), runs in groups.items()]


def final_value(key: str, steps, values) -> float:
    """A run's final score as logged, its kind read off its key (``val/...``: validation): the
    rule above for every table and figure that shows one (a validation score's last value, a
    training score's mean over its last 5 % of steps).

    >>> round(final_value("score", np.arange(0, 201, 5.0), np.r_[np.zeros(38), 0.5, 1.0, 0.9]), 6)
    0.8
    >>> final_value("val/gsm8k", [0, 10, 20], [0.2, 0.4, 0.5])
    0.5
    """
    kind = "validation" if str(key).startswith("val/") else "training score"
    steps, values = np.asarray(steps, float), np.asarray(values, float)
    out = observed_final(kind, steps, values, final_span(kind, steps[0], steps[-1]))
    return float(values[-1]) if out is None else float(out)


def no_forecast_reason(lo: float, hi: float, bounds, seen=None, whose: str = "the interval") -> str | None:
    """Why an interval is no forecast, or None: wider than :data:`NO_FORECAST_WIDTH` of the
    score's range; for a score of no known range (``bounds`` None), wider than
    :data:`UNBOUNDED_WIDTH` times what the window's scores spanned (``seen``: their lowest and
    highest), an extrapolation the window cannot back. ``whose``: the interval, in words (a
    decision read from another method than the one shown names it).

    >>> no_forecast_reason(-23.9, 12467.5, None, (11.0, 16.5))[:79]
    'no forecast: the interval [-23.9, 1.247e+04] is 2271 times as wide as the score'
    >>> no_forecast_reason(12.6, 43.9, None, (11.0, 16.5)) is None
    True
    """
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return None
    if bounds is None:
        spread = float(seen[1] - seen[0]) if seen is not None else 0.0
        if not spread > 0 or hi - lo <= UNBOUNDED_WIDTH * spread:
            return None
        return (f"no forecast: {whose} [{lo:.4g}, {hi:.4g}] is {(hi - lo) / spread:.0f} times as wide as the "
                f"scores the window saw ({seen[0]:.4g} to {seen[1]:.4g}); the score has no known range and the window "
                "does not say where the run ends")
    share = (hi - lo) / (bounds[1] - bounds[0])
    if share <= NO_FORECAST_WIDTH:
        return None
    return (f"no forecast: {whose} [{lo:.2f}, {hi:.2f}] spans {share:.0%} of the score's range; the window "
            "does not say where the run ends")


def gap_reason(kind: str, steps, end: float) -> str | None:
    """Why a window's scores say nothing at its end, or None: it ends further past its last score
    than its scores span (a gap in the log's steps, or one row logged far out of line: step 1e9
    after step 199). Whatever a method carries across that gap (a take-off's climb) is not in the
    log, nor is where the run stands at the window's end.

    >>> gap_reason("validation", [1, 6, 196], 200.0) is None
    True
    >>> gap_reason("validation", [1, 6, 196], 1e9)[:75]
    'no forecast: the window ends at step 1e+09, 1e+09 steps past its last valid'
    """
    steps = np.asarray(steps, float)
    if len(steps) < 2 or not end - steps[-1] > steps[-1] - steps[0]:
        return None
    return (f"no forecast: the window ends at step {end:g}, {end - steps[-1]:.3g} steps past its last {kind} point "
            f"(step {steps[-1]:g}), further than its points span (steps {steps[0]:g}..{steps[-1]:g}): the log says "
            "nothing of the score in between (a gap in its steps, or a step logged far out of line)")


def seen_range(values) -> tuple[float, float] | None:
    """The lowest and highest finite score of a window (None: none)."""
    v = np.asarray(values, float)
    v = v[np.isfinite(v)]
    return (float(v.min()), float(v.max())) if len(v) else None


def hold(point, lo, hi):
    """An interval ``[lo, hi]`` widened to hold its ``point``. A percentile interval of refits
    can lie to one side of the fit itself, where the window does not pin the curve down (a
    straight climb read by a saturating curve); an interval that leaves out its own forecast
    is not shown. An interval that holds its point is unchanged.

    >>> hold(0.96, 0.67, 0.85), hold(0.5, 0.4, 0.6)
    ((0.67, 0.96), (0.4, 0.6))
    """
    if np.ndim(point) == 0:
        return (float(min(lo, point)), float(max(hi, point))) if np.isfinite(point) else (lo, hi)
    point = np.asarray(point, float)
    return np.fmin(lo, point), np.fmax(hi, point)  # a nan point leaves its interval as it is


def final_of(method, kind: str, steps, bounds, seen=None, forecast=None) -> dict:
    """``method``'s forecast of the final score over ``steps``: forecast, lo, hi, the steps, and
    ``no_forecast`` (the reason) where the interval says nothing (``seen``: the lowest and highest
    score of the window, for a score of no known range). ``forecast``: the method's forecast
    table already drawn, whose last row is a validation score's final score."""
    steps = np.asarray(steps, float)
    if kind == "validation":
        table = method.predict(steps[-1:]) if forecast is None else forecast
        f = table.iloc[-1]
        mid, lo, hi, draws = float(f["forecast"]), float(f["lo"]), float(f["hi"]), table.attrs.get("draws_interval")
    else:
        mid, lo, hi, draws = method.predict_mean(steps, draws_interval=True)
    out = {"forecast": mid, "lo": lo, "hi": hi, "steps": [float(steps[0]), float(steps[-1])],
           "what": describe(kind, steps), "no_forecast": no_forecast_reason(lo, hi, bounds, seen)}
    if draws:  # the interval was widened to hold the forecast (:func:`hold`): the draws' own
        out["draws_interval"] = draws
    return out
