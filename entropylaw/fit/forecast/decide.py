"""The two questions a person with a running job asks: "can I stop it?" and "will it get there?".

From one method's forecast curve (the expected score, parameter draws for its interval):

- **stop-paying step**: the step after which the expected gain over the next 10 % of the
  run (``lookahead``) stays below ``threshold`` for good (interpolated between grid
  steps); by default one binomial standard error
  ``sqrt(p (1 - p) / n)`` of the validation set (``n`` problems, ``p`` the score at the
  window's end), else the window's own noise (successive differences), said which;
- **target step**: the first step at which the expected score is at or above ``target``
  (a score is better higher), with the share of draws that reach it within the searched
  range.

Each comes with an interval from the same draws (an end is None: never, within the range).

>>> import numpy as np
>>> steps = np.linspace(100, 2000, 400)
>>> curve = lambda s: 0.8 - 0.4 * np.exp(-s / 200)
>>> out = decide(steps, curve(steps), curve(steps)[None, :] + np.zeros((3, 1)), lookahead=100, threshold=0.01,
...              target=0.75)
>>> round(out["stop_step"]), round(float(200 * np.log(0.4 * (1 - np.exp(-0.5)) / 0.01)))   # closed form
(551, 551)
>>> round(out["target_step"]), round(float(-200 * np.log(0.05 / 0.4)))
(416, 416)
"""

from __future__ import annotations

import numpy as np

from entropylaw.errors import EntropyLawError
from entropylaw.fit.forecast.data import robust_noise

# Test-split sizes (number of problems) of common benchmarks: the binomial noise of a score.
PROBLEMS = {"gsm8k": 1319, "math-lighteval": 5000, "math": 5000, "math500": 500, "math-500": 500,
            "aime_2024": 30, "aime24": 30, "aime_2025": 30, "aime25": 30, "amc23": 40, "amc": 83}


def problems_of(target_key: str, problems: dict | None = None) -> tuple[int | None, str | None]:
    """(n, benchmark) for a key naming a benchmark of ``problems`` (default :data:`PROBLEMS`;
    the longest name found in the key wins), else (None, None)."""
    problems = PROBLEMS if problems is None else problems
    key = target_key.lower().replace("digitallearninggmbh/", "")
    for name in sorted(problems, key=len, reverse=True):
        if name.lower().replace("digitallearninggmbh/", "") in key:
            return problems[name], name
    return None, None


def threshold_for(level: float, values, target_key: str, target_kind: str, n_problems=None,
                  bounded=True) -> tuple[float, str]:
    """The default threshold and where it comes from (module docstring); ``values``: the
    window's target values (its noise is the fallback)."""
    n, bench = (n_problems, "`n_problems`") if n_problems else problems_of(target_key)
    if n and target_kind == "validation" and bounded:
        p = float(np.clip(level, 0.0, 1.0))
        se = float(np.sqrt(max(p * (1 - p), 1e-12) / n))
        return se, f"one binomial standard error of the validation set ({n:g} problems, {bench}; p = {p:.3f})"
    why = "the window's noise (median absolute successive difference of the score)"
    if n_problems and target_kind != "validation":
        why += f"; `n_problems` applies to a validation score, and this run's target is its {target_kind}"
    elif n_problems and not bounded:
        why += "; `n_problems` applies to a score in [0, 1], and this one is not"
    else:
        why += "; give `n_problems` N for the binomial standard error of an N-problem validation set"
    return robust_noise(values), why


def _stays_below(gain, steps, threshold):
    """Per row: the step after which ``gain`` stays below ``threshold`` for good (interpolated
    at its last crossing from above); ``steps[0]`` when it never reaches it, inf when it is
    still at or above it at the last finite point."""
    out = np.empty(len(gain))
    for i, g in enumerate(gain):
        ok = np.isfinite(g)
        s, g = steps[ok], g[ok]
        above = np.nonzero(g >= threshold)[0]
        if len(s) == 0:
            out[i] = np.nan  # no finite gain: nothing to say
        elif len(above) == 0:
            out[i] = steps[0]
        elif above[-1] == len(g) - 1:
            out[i] = np.inf
        else:
            j = above[-1]
            out[i] = s[j] + (g[j] - threshold) / (g[j] - g[j + 1]) * (s[j + 1] - s[j])
    return out


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


def decide(steps, mid, draws, lookahead: float, threshold: float, target: float | None = None,
           conf: float = 0.9) -> dict:
    """Stop-paying and target steps on the grid ``steps`` (from the window's end) of the
    expected curve ``mid`` (m,) and its draws (B, m)."""
    steps = np.asarray(steps, float)
    curves = np.vstack([np.asarray(mid, float)[None, :], np.asarray(draws, float)])
    ahead = np.array([np.interp(steps + lookahead, steps, c, right=np.nan) for c in curves])
    gain = ahead - curves
    inside = np.isfinite(gain[0])
    stops = _stays_below(gain, steps, threshold)
    out = {"lookahead_steps": float(lookahead), "threshold": float(threshold),
           "searched_to": float(steps[inside][-1]) if inside.any() else float(steps[0]),
           "stop_step": _finite(stops[0]), "stop_step_ci": _ci(stops[1:], conf)}
    if np.isnan(stops[0]):
        out["stop_note"] = "cannot say: the forecast curve has no finite value in the searched range"
    elif stops[0] == steps[0]:
        out["stop_note"] = "already: the expected gain stays below the threshold from the window's end on"
    elif not np.isfinite(stops[0]):
        out["stop_note"] = f"still paying at step {out['searched_to']:g}, the end of the searched range"
    if target is not None:
        at = _first_at_or_above(curves, steps, target)
        out.update(target=float(target), target_searched_to=float(steps[-1]), target_step=_finite(at[0]),
                   target_step_ci=_ci(at[1:], conf),
                   p_reach=float(np.mean(np.isfinite(at[1:]))) if len(at) > 1 else None)
        if at[0] == steps[0]:
            out["target_note"] = "already reached at the window's end"
        elif not np.isfinite(at[0]):
            finite = curves[0][np.isfinite(curves[0])]
            level = f"levels off at {finite[-1]:.3f}" if len(finite) else "is not defined there"
            out["target_note"] = f"not reached by step {steps[-1]:g}: the expected score {level}"
    return out


def _finite(v):
    return float(v) if np.isfinite(v) else None  # inf: never within the range; nan: cannot say


def _ci(draws, conf):
    d = np.asarray(draws, float)
    d = np.sort(d[~np.isnan(d)])  # a draw with no finite curve says nothing either way
    if len(d) == 0:
        return None
    i_lo, i_hi = (int(np.clip(np.round(q * (len(d) - 1)), 0, len(d) - 1)) for q in ((1 - conf) / 2, (1 + conf) / 2))
    return [_finite(d[i_lo]), _finite(d[i_hi])]


def check_decision_args(target, threshold, n_problems, total_steps, end) -> None:
    if target is not None and not np.isfinite(target):
        raise EntropyLawError(f"`target` {target!r}: expected a finite score")
    if threshold is not None and not threshold > 0:
        raise EntropyLawError(f"`threshold` {threshold!r}: expected a gain above 0")
    if n_problems is not None and (n_problems < 1 or n_problems != int(n_problems)):
        raise EntropyLawError(f"`n_problems` {n_problems!r}: expected a whole number of problems, 1 or more")
    if total_steps is not None and total_steps <= end:
        raise EntropyLawError(f"`total_steps` {total_steps:g} is not after the window's end (step {end:g})")


def decision_lines(d) -> list[str]:
    """The decision as report lines (shared by the text report and the CLI)."""
    if not d:
        return []
    if d.get("method") is None:
        return [f"    stop paying: cannot say: {d.get('reason', 'no curve')}"]

    def ci(c):
        return "" if c is None else " [" + ", ".join("never" if v is None else f"{v:.0f}" for v in c) + "]"
    stop = "-" if d["stop_step"] is None else f"step {d['stop_step']:.0f}{ci(d['stop_step_ci'])}"
    lines = [f"    stop paying ({d['method']}): {stop}: the expected gain over the next {d['lookahead_steps']:g} steps "
             f"stays below {d['threshold']:.4f}, {d['threshold_source']}"]
    if d.get("stop_note"):
        lines.append(f"      {d['stop_note']}")
    if d.get("curve_note"):
        lines.append(f"      {d['curve_note']}")
    if "target" in d:
        at = "not reached" if d["target_step"] is None else f"step {d['target_step']:.0f}{ci(d['target_step_ci'])}"
        p = "" if d.get("p_reach") is None else f" (reached in {100 * d['p_reach']:.0f} % of draws by step " \
                                                f"{d['target_searched_to']:g})"
        lines.append(f"    target {d['target']:g} ({d['method']}): {at}{p}")
        if d.get("target_note"):
            lines.append(f"      {d['target_note']}")
    return lines


# a method whose curve cannot change (models_change False) answers "now" by construction: skipped
def decision_on(win, at_steps, fitted, conf, target, threshold, n_problems, total_steps, first, curve):
    """The decision on ``win`` (the run cut at the window's end) from the first curve in order."""
    order = [first, curve, *fitted]
    m = next((fitted[n] for n in order if n in fitted and fitted[n].models_change and fitted[n].ok_), None)
    if m is None:
        return {"method": None, "reason": "no method that models change could run on this window "
                                          "(last-value and law-ceiling answer 'now' by construction)"}
    end, bounds = win.end, win.bounds
    run_end = float(total_steps if total_steps is not None else max(at_steps))
    lookahead = 0.1 * max(run_end - win.origin, 1.0)
    far = max(win.origin + 20 * max(end - win.origin, 1.0), run_end + lookahead)
    steps = np.linspace(end, far, 600)
    mid, draws = m.curve(steps)
    if threshold is None:
        threshold, source = threshold_for(mid[0], win.target.values, win.target_key, win.target_kind, n_problems,
                                             bounds == (0.0, 1.0))
    else:
        source = "given (`threshold`)"
    out = {"method": m.name, "threshold_source": source, **decide(steps, mid, draws, lookahead, threshold,
                                                                       target, conf)}
    raw = m._mid(steps) if hasattr(m, "_mid") else mid
    if bounds is not None and ((raw < bounds[0]) | (raw > bounds[1])).any():
        i = int(np.argmax((raw < bounds[0]) | (raw > bounds[1])))
        out["curve_note"] = (f"the {m.name} curve reaches the score's bound at step {steps[i]:.0f} "
                             f"({raw[i]:.3f} before clipping): read on past it, it is held at the bound")
    if target is not None and bounds is not None and target > bounds[1]:
        out.update(target_step=None, target_step_ci=None, p_reach=0.0,
                   target_note=f"the target {target:g} lies above the score's range {list(bounds)}: it cannot be reached")
    elif target is not None and bounds is not None and target < bounds[0]:
        out["target_note"] = f"the target {target:g} lies below the score's range {list(bounds)}: it is met already"
    return out
