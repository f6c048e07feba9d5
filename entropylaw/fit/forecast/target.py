"""Will the run reach a target score, and when: the step at which the expected curve first
reaches it, that step's interval from the curve's draws, and the share of draws that reach it
(:func:`target_step`; what ``forecast --target`` prints under the call).

>>> import numpy as np
>>> steps = np.linspace(0, 100, 101)
>>> target_step(steps, steps / 100, (steps / 100)[None, :], 0.5)["target_step"]
50.0
"""

from __future__ import annotations

import numpy as np


MET = "already reached at the window's end"


def _first_at_or_above(curves, steps, level):
    """Per row: the first step at which the curve is at or above ``level`` (interpolated), inf if never."""
    out = np.full(len(curves), np.inf)
    for i, c in enumerate(curves):
        ok = np.isfinite(c)
        s, c = steps[ok], c[ok]
        hit = np.nonzero(c >= level)[0]
        if len(hit) == 0:
            continue
        j = hit[0]
        out[i] = s[0] if j == 0 else s[j - 1] + (level - c[j - 1]) / (c[j] - c[j - 1]) * (s[j] - s[j - 1])
    return out


def target_step(steps, mid, draws, target: float, conf: float = 0.9) -> dict:
    """The step at which the expected curve ``mid`` (m,) on ``steps`` reaches ``target``, its
    interval from the curve ``draws`` (B, m), and the share of draws that reach it.

    >>> steps = np.linspace(100, 2000, 400)
    >>> curve = 0.8 - 0.4 * np.exp(-steps / 200)
    >>> round(target_step(steps, curve, curve[None, :], 0.75)["target_step"]), round(float(-200 * np.log(0.05 / 0.4)))
    (416, 416)
    """
    steps = np.asarray(steps, float)
    curves = np.vstack([np.asarray(mid, float)[None, :], np.asarray(draws, float)])
    at = _first_at_or_above(curves, steps, target)
    out = {"target": float(target), "target_searched_to": float(steps[-1]), "target_step": _finite(at[0]),
           "target_step_ci": _ci(at[1:], conf), "p_reach": float(np.mean(np.isfinite(at[1:]))) if len(at) > 1 else None}
    if at[0] == steps[0]:
        out.update(target_met=True, target_note=MET)
    elif not np.isfinite(at[0]):
        finite = curves[0][np.isfinite(curves[0])]
        level = f"is {finite[-1]:.3f} there" if len(finite) else "is not defined there"
        out["target_note"] = f"not reached by step {steps[-1]:g}: the expected score {level}"
    return out


def target_answer(steps, mid, draws, target: float, conf: float = 0.9, bounds=None, stuck=None,
                  open_end: str | None = None) -> dict:
    """:func:`target_step`, and what the score's range says of it: a target above it cannot be
    reached, one below it is met already; ``stuck``: the one value of a constant window, which says
    nothing of whether or when the run moves to a target above it (no answer, not "0 % of draws");
    ``open_end``: why the window cannot say where the run ends (no forecast), nor so when it reaches a
    target (no answer).

    >>> d = target_answer(np.linspace(0, 10, 11), np.full(11, 0.5), np.full((4, 11), 0.5), 0.8, stuck=0.5)
    >>> d["target_step"], d["p_reach"], d["target_unknown"]
    (None, None, True)
    """
    out = target_step(steps, mid, draws, target, conf)
    if bounds is not None and target > bounds[1]:
        out.update(target_step=None, target_step_ci=None, p_reach=0.0, target_above_range=True,
                   target_note=f"the target {target:g} lies above the score's range {list(bounds)}: "
                               "it cannot be reached")
    elif bounds is not None and target < bounds[0]:
        out["target_note"] = f"the target {target:g} lies below the score's range {list(bounds)}: it is met already"
    elif stuck is not None and target > stuck:
        out.update(target_step=None, target_step_ci=None, p_reach=None, target_unknown=True,
                   target_note=f"the score is constant in the window ({stuck:g}): nothing in it says whether or "
                               f"when it reaches {target:g}")
    elif open_end and not out.get("target_met"):  # a target the window has met is met, whatever its end
        out.update(target_step=None, target_step_ci=None, p_reach=None, target_unknown=True,
                   target_note=f"{open_end}: nor when it reaches {target:g}")
    return out


def target_lines(d: dict) -> list:
    """The decision ``d``'s answer for its target, as ``forecast`` prints it under the call. A target
    the expected curve meets at the window's end is said so, once: not also as the step its draws
    reach it by, far ahead, unless some of them reach it only later.

    >>> d = {"target": 0.5, "method": "power", "target_step": 200.0, "target_step_ci": [200.0, 200.0],
    ...      "p_reach": 1.0, "target_searched_to": 3981.0, "target_met": True, "target_note": MET}
    >>> target_lines(d)
    ["    target 0.5 (power): already reached at the window's end (step 200)"]
    """
    def ci(c):
        return "" if c is None else " [" + ", ".join("never" if v is None else f"{v:.0f}" for v in c) + "]"

    c = d.get("target_step_ci")
    reach = "" if d.get("p_reach") is None else \
        f" (reached in {100 * d['p_reach']:.0f} % of draws by step {d['target_searched_to']:g})"
    if d.get("target_met"):
        at = f"{MET} (step {d['target_step']:.0f})"
        if c is not None and c[1] == d["target_step"] and d.get("p_reach") == 1:
            reach = ""  # every draw is there too: the share reached by a far step says nothing more
        else:  # some draws are below it there: when they reach it
            at += f" by the expected curve; its draws reach it at step{ci(c)}"
    else:
        at = ("no answer" if d.get("target_unknown") else "not reached" if d["target_step"] is None
              else f"step {d['target_step']:.0f}{ci(c)}")
    lines = [f"    target {d['target']:g} ({d['method']}): {at}{reach}"]
    if d.get("target_note") and d["target_note"] != MET:
        lines.append(f"      {d['target_note']}")
    return lines


def _finite(v):
    return float(v) if np.isfinite(v) else None  # inf: never within the range; nan: cannot say


def _ci(draws, conf):
    d = np.asarray(draws, float)
    d = np.sort(d[~np.isnan(d)])  # a draw with no finite curve says nothing either way
    if len(d) == 0:
        return None
    i_lo, i_hi = (int(np.clip(np.round(q * (len(d) - 1)), 0, len(d) - 1)) for q in ((1 - conf) / 2, (1 + conf) / 2))
    return [_finite(d[i_lo]), _finite(d[i_hi])]


def range_problem(target: float, bounds, key: str, read_from_percent: bool = False) -> str | None:
    """Why ``target`` cannot be a value of the score ``key`` whose range is ``bounds`` (None: it can,
    or the score has no known range): a target below the range is met by any run, one above it by
    none, so either is a mistake in its units (a percent for a fraction) or its sign, said before
    any fit. ``read_from_percent``: the scores were read from percent, so a percent target is taken.

    >>> range_problem(-5, (0.0, 1.0), "val/mean")
    'the score val/mean lies in [0, 1]: expected a target in that range (a fraction such as 0.85)'
    >>> range_problem(-0.5, (-1.0, 1.0), "reward") is None, range_problem(0.85, None, "loss") is None
    (True, True)
    """
    if bounds is None or bounds[0] <= target <= bounds[1]:
        return None
    lo, hi = (float(b) for b in bounds)
    expected = (f"a fraction in [{lo:g}, {hi:g}] or a percent in [{100 * lo:g}, {100 * hi:g}]" if read_from_percent
                else "a target in that range" + (" (a fraction such as 0.85)" if (lo, hi) == (0.0, 1.0) else ""))
    return f"the score {key} lies in [{lo:g}, {hi:g}]: expected {expected}"
