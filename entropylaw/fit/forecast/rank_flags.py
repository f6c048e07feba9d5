"""What ``entropylaw rank`` says beside a run's numbers: its regime, whether the law describes
it, a score that never moved, a run that has finished, and runs that end at different steps.

A row's note is its tags joined: first what its numbers are (``no forecast``, ``last-value``,
``finished``, ``constant score`` ...), then the window's regime where it is not saturation
(``take-off``; ``collapse risk``: the regime instability), then ``law does not apply``, its
reasons in a few words (:func:`law_tag`) in a line under the table (the row stays one line).

A **constant score** (one value at every point of the window) is listed with its interval but
not ranked, never pruned and never the pick: nothing in the window says whether or when it
moves, and its forecast's narrow interval is a flat line's, not evidence of where it ends (a
stuck evaluation, a broken reward). Ranked, it would end "best" on its flat forecast alone
over runs whose forecasts admit their own uncertainty, and push their p_near down.

>>> law_tag(["entropy explodes (0.75 -> peak 4.55 nats at step 50)", "entropy rises (0.75 -> 4.15 nats)"])
'law does not apply: entropy explodes, entropy rises'
>>> law_tag([]) is None, REGIME_WORD["instability"]
(True, 'collapse risk')
>>> is_constant([0.5, 0.5, 0.5]), is_constant([0.5, 0.51]), is_constant([0.7])
(True, False, False)
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from entropylaw.fit.forecast.final import UNBOUNDED_WIDTH
from entropylaw.fit.forecast.rank_table import rows_said  # the table's numbering of rows

PRUNE_BELOW = 0.05
SURE = 0.95  # p_near below PRUNE_BELOW beyond the Monte Carlo error of the joint draws, at this confidence
CONSTANT = "constant score"
NO_FORECAST = "no forecast"
NO_LAW = "law does not apply"
FINISHED = "finished"
SHARED = "wide, shared"  # a carried take-off's note where its interval is no forecast
REGIME_WORD = {"take-off": "take-off", "instability": "collapse risk"}  # saturation: nothing to say


def is_constant(values) -> bool:
    """One value at every point (2 or more): a degenerate score."""
    v = np.asarray(values, float)
    v = v[np.isfinite(v)]
    return bool(len(v) >= 2 and np.ptp(v) <= 1e-9 * max(1.0, float(np.max(np.abs(v)))))


def window_values(fc) -> np.ndarray:
    """The forecast's window's target values (the points it was fitted on)."""
    obs = getattr(fc, "observed", None)
    if obs is None:
        return np.array([])
    return obs["value"].to_numpy(float)[obs["step"].to_numpy(float) <= fc.window_end]


def law_tag(reasons) -> str | None:
    """``law does not apply: ...`` with each reason's head (its words before their numbers)."""
    heads = list(dict.fromkeys(str(r).split(" (")[0] for r in reasons or ()))
    return f"{NO_LAW}: " + ", ".join(heads) if heads else None


def note_of(base: str | None, regime: str | None, law: bool, constant: bool) -> str | None:
    """A row's note: its tags joined (module docstring); a constant score's law reason is the tag itself."""
    tags = [base, REGIME_WORD.get(regime or "")]
    if law and not constant:
        tags.append(NO_LAW)
    return "; ".join(t for t in tags if t) or None


# the line under rank's table for each tag its rows may carry: (the row's field, the tag, the line), in order
EXPLAINED = (
    ("base", "last-value", "last-value: the default method cannot run on the run's window; it is ranked on the last "
                           "value's draws"),
    ("base", SHARED, f"{SHARED}: the interval spans over half the score's range, a width every run of its sweep has "
                     "(its take-offs carried on at the sweep's rate): ranked against its sweep, as wide as its peers"),
    ("base", NO_FORECAST, f"{NO_FORECAST}: the interval spans over half the score's range (a score of no known range: "
                          f"{UNBOUNDED_WIDTH:g} times what its window spanned), or the window ends further past its "
                          "last score than its scores span (a gap in the log's steps), or every score of the window "
                          "lies at the floor of its range (when it takes off is not in it); the run is listed with "
                          "its interval only (its expected score, one the window cannot bound, is no final score to "
                          "compare: `expected` in --json), not ranked against the others (its width alone would "
                          "make it 'best'), and never pruned"),
    ("base", FINISHED, f"{FINISHED}: the run has reached the step compared at (or its own planned total): ranked on "
                       "its observed final score (read at that step where it went past it), its interval the noise "
                       "of its last scores; never pruned (nothing of it is left to stop)"),
    ("base", CONSTANT, f"{CONSTANT}: one value at every point of the window: nothing in it says whether or when it "
                       "moves (a stuck evaluation? a broken reward?), and its forecast's narrow interval is a flat "
                       "line's; listed, not ranked, never pruned nor the pick"),
    ("regime", "take-off", "take-off: the score started near its floor and still climbs fast; where the climb stops "
                           "is not in the window (its forecast follows what runs in take-off did next)"),
    ("regime", "instability", "collapse risk: the entropy rose several-fold or the score fell after a peak in the "
                              "window; runs in that state often collapsed (its interval is widened downward)"),
)


def explain(rows, lifted=None) -> list:
    """The lines under the table for the tags its rows carry (:data:`EXPLAINED`, then the runs the
    law does not describe); ``lifted``: tag -> the rows that carry it, where the table says it
    here, not on each row (:mod:`.rank_table`)."""
    lifted = lifted or {}
    lines = [_with_rows(line, lifted) for field, tag, line in EXPLAINED if any(r.get(field) == tag for r in rows)]
    why = {}  # the same reasons for many runs are said once, with the rows (a sweep's every run: "too few points")
    for i, r in enumerate(rows):
        if r.get("law") and not r.get("constant"):
            why.setdefault(law_tag(r["law"])[len(NO_LAW) + 2:], []).append(i)
    said = [", ".join(f"{rows[i]['run_id']} ({reasons})" for i in idx) if len(idx) <= 3
            else f"{rows_said(idx, len(rows))} ({reasons})" for reasons, idx in why.items()]
    if len(why) == 1 and said[0].startswith("every run"):  # one reason for them all: the tag's rows say who
        said = [next(iter(why))]
    if said:
        lines.append(_with_rows(f"{NO_LAW}: in the forecast's window, the run does not consume entropy to gain score "
                                f"as the law describes, its forecast extrapolates a trend, not the law's ceiling: "
                                f"{', '.join(said)}", lifted))
    return lines


def _with_rows(line: str, lifted: dict) -> str:
    """``line`` (``tag: what it means``) with the rows that carry its tag where the table lifted it."""
    tag = line.split(": ", 1)[0]
    return f"{tag} ({lifted[tag]}): {line[len(tag) + 2:]}" if tag in lifted else line


def ends_note(rows) -> str | None:
    """Where the runs ranked are compared at different steps: which, and what that means."""
    ends = {}
    for r in rows:
        if r.get("p_best") is not None and r.get("to_step") is not None:
            ends.setdefault(float(r["to_step"]), []).append(r["run_id"])
    if len(ends) < 2:
        return None
    order = {r["run_id"]: i for i, r in enumerate(rows)}  # many runs at one step: their rows, not their names
    said = ", ".join(f"{', '.join(ids) if len(ids) <= 3 else rows_said([order[i] for i in ids], len(rows))} at step "
                     f"{s:g}" for s, ids in sorted(ends.items(), reverse=True))
    if len(ends) > 3:  # 21 ends of 30 runs named one by one took 12 lines: the table's column says each
        said = f"{len(ends)} steps, from {min(ends):g} to {max(ends):g}: each run's in the column 'end'"
    return (f"the runs end at different steps ({said}): each final score is the run's own, at its own last step, "
            "so a run that ends earlier has had fewer steps to climb; p_best and the pick favour the runs that end "
            "later, and a run is pruned only where the runs that end no later than it would prune it")


def starts_note(fcs, step) -> list:
    """Where runs compared at one step N start at steps over a quarter of the way to N apart (a log
    that counts from 5000 beside one from 1, compared at 5238; not 1 and 5 at 395): what that does
    to the contest, in a line."""
    if not step or step[0] is None or len(fcs) < 2:
        return []
    starts = {}
    for fc in fcs:
        starts.setdefault(float(fc.origin), []).append(fc.run_id)
    if max(starts) - min(starts) <= 0.25 * (step[0] - min(starts)):
        return []
    said = "; ".join(f"{', '.join(ids[:3])}{f' and {len(ids) - 3} more' if len(ids) > 3 else ''} at step {s:g}"
                     for s, ids in sorted(starts.items(), reverse=True))
    return [f"the runs start at steps far apart ({said}): compared at step {step[0]:g}, a run that starts earlier "
            "is forecast further past its log, and the steps of one whose log starts later are counted from 0, as a "
            "run resumed there (its forecast's note says so); rank runs whose logs count steps alike"]


def surely_below(p: float, n: int, level: float = PRUNE_BELOW, conf: float = SURE) -> bool:
    """Whether a share ``p`` of ``n`` joint draws lies below ``level`` beyond their Monte Carlo
    error: its one-sided ``conf`` Clopper-Pearson upper bound is under ``level``. With 200
    draws, 4 near the best (2 %) prune, 5 (2.5 %) do not; with 20, none do.

    >>> surely_below(4 / 200, 200), surely_below(5 / 200, 200), surely_below(0.0, 20)
    (True, False, False)
    """
    k = int(round(p * n))
    return bool(k < n and stats.beta.ppf(conf, k + 1, n - k) < level)


# the fewest joint draws that can prune: none of them near the best, (1 - conf)^(1/n) above 1 - level
PRUNE_DRAWS = int(np.ceil(np.log(1 - SURE) / np.log(1 - PRUNE_BELOW)))  # 59
