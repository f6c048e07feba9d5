"""Which of a sweep's runs are on which scale, in words, where ``entropylaw rank`` finds them on
several (a fraction beside a percent, or beside a score outside [0, 1]): the runs cannot be
compared, and what the user can do depends on which run is off and by how much. A percent read
as one (divided by 100) is a fraction like the others; ``--score-scale percent`` is suggested only
where a run's scores lie in [0, 100] past 1, the one case it would mend.

>>> scale_word(0.01, None), scale_word(1.0, None), scale_word(None, (-0.2, 0.34))
('in [0, 1]', 'in percent', 'outside [0, 1] (-0.2 to 0.34)')
"""

from __future__ import annotations

import numpy as np


def scale_word(point, span) -> str:
    """A run's scale: its point (0.01 a fraction, 1 a percent, None neither) and its scores' range."""
    if point == 0.01:
        return "in [0, 1]"
    if point == 1.0:
        return "in percent"
    return "outside [0, 1]" + (f" ({span[0]:.3g} to {span[1]:.3g})" if span else "")


def _span(values):
    v = np.asarray(values, float)
    v = v[np.isfinite(v)]
    return (float(v.min()), float(v.max())) if len(v) else None


def run_scales(fcs, done) -> dict:
    """``{run_id: (point, (lo, hi) of its logged scores or None)}`` for the runs with a decision
    (forecast) and the runs finished."""
    out = {}
    for fc in fcs:
        d = fc.decision or {}
        if d.get("method"):
            obs = getattr(fc, "observed", None)
            out[fc.run_id] = (d.get("point"), _span(obs["value"]) if obs is not None else None)
    for f in done:
        out[f.run_id] = (f.point, _span([f.score]))
    return out


# scores in their own units (a reward of no known scale) whose largest magnitudes differ this many times over are
# not compared: 0..2 beside 0..40 is two rewards, or one run far behind, and the numbers cannot tell which
APART = 10.0


def own_units_apart(scales: dict) -> list[list[str]]:
    """The runs whose scores are in their own units (neither a fraction nor a percent), grouped by the largest
    magnitude each logged: a run joins a group where its magnitude is under :data:`APART` times the group's
    smallest. More than one group: runs of different scales, as a percent beside a fraction. A run whose scores
    are all 0 has no magnitude to tell its scale by, and joins none.

    >>> own_units_apart({"a": (None, (0.1, 2.2)), "b": (None, (0.5, 28.7)), "c": (None, (1.4, 29.6))})
    [['a'], ['b', 'c']]
    >>> own_units_apart({"a": (None, (0.1, 12.0)), "b": (None, (0.5, 28.7)), "f": (0.01, (0.1, 0.9))})
    [['a', 'b']]
    """
    sized = sorted((max(abs(span[0]), abs(span[1])), rid) for rid, (point, span) in scales.items()
                   if point not in (0.01, 1.0) and span and max(abs(span[0]), abs(span[1])) > 0)
    groups: list = []
    for size, rid in sized:
        if groups and size < APART * groups[-1][0]:
            groups[-1][1].append(rid)
        else:
            groups.append((size, [rid]))
    return [runs for _, runs in groups]


def scales_said(scales: dict) -> str:
    """The runs on each scale: ``a, b in [0, 1]; c outside [0, 1] (-0.2 to 0.34)``."""
    groups: dict = {}
    for rid, (point, span) in scales.items():
        groups.setdefault(point if point in (0.01, 1.0) else None, []).append((rid, span))
    parts = []
    for point in (0.01, 1.0, None):
        runs = groups.get(point)
        if not runs:
            continue
        if point is None:  # each scale its own range: two runs outside [0, 1] need not share one
            spans = dict(runs)
            apart = own_units_apart({rid: (None, span) for rid, span in runs})
            parts += [", ".join(group) + " " + scale_word(None, (min(spans[r][0] for r in group),
                                                                 max(spans[r][1] for r in group)))
                      for group in apart]
            parts += [f"{rid} {scale_word(None, span)}" for rid, span in runs if not any(rid in g for g in apart)]
        else:
            parts.append(", ".join(rid for rid, _ in runs) + " " + scale_word(point, None))
    return "; ".join(parts)


def scales_note(scales: dict) -> str:
    """The note under the table (the runs on each scale are named in the keep line above it):
    nothing pruned, p_best across units, and what would mend it."""
    pct = [rid for rid, (point, span) in scales.items()
           if point == 1.0 or (point is None and span and span[0] >= 0 and 1 < span[1] <= 100)]
    odd = [rid for rid, (point, _) in scales.items() if point not in (0.01, 1.0)]
    fix = []
    if pct and any(point in (0.01, 1.0) for point, _ in scales.values()):  # beside a fraction it mends; alone not
        fix.append(f"--score-scale percent reads a percent as a fraction ({', '.join(pct)} "
                   f"{'looks' if len(pct) == 1 else 'look'} like one)")
    apart = own_units_apart(scales)
    if len(apart) > 1:  # rewards of no known scale, 10 times apart: which runs share one
        fix.append("rank the runs of one scale together (" + "; ".join(", ".join(g) for g in apart) + ")")
    elif [r for r in odd if r not in pct]:
        fix.append("rank the runs of one scale together")
    return ("the runs' scores are on different scales (named above): nothing is pruned, and "
            "p_best compares numbers of different units; " + "; or ".join(fix or ["rank runs of one sweep, on one "
                                                                                   "score"]))


def threshold_unit(fcs, done, thr, scales: dict) -> tuple:
    """``(point, words)``: the threshold's unit where the runs are on several scales, that of the run
    whose own threshold it is (``thr``, the largest): a point where that run's scale has one, else
    its own units, named."""
    own = [(fc.run_id, (fc.decision or {}).get("threshold")) for fc in fcs] + [(f.run_id, f.threshold) for f in done]
    at = [r for r, t in own if t is not None and np.isclose(t, thr) and r in scales]
    rid = next((r for r in at if scales[r][0] in (0.01, 1.0)), at[0] if at else None)  # a point, where tied
    if rid is None:
        return None, "in the scores' own units"
    point, span = scales[rid]
    if point in (0.01, 1.0):
        return point, f"on the scale of {rid}, {scale_word(point, None)}"
    return None, f"in the units of {rid}, whose scores lie outside [0, 1]"


__all__ = ["APART", "own_units_apart", "run_scales", "scale_word", "scales_note", "scales_said", "threshold_unit"]
