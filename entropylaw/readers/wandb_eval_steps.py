"""An evaluation's own step metric that is not the training step: one that never moves, or one that counts
evaluations.

OpenRLHF declares ``eval/*`` on ``eval/epoch`` and never logs it (W&B's step_sync fills in 0 in every
evaluation row) while each evaluation row holds ``eval/global_step``, the training step: those rows
are read there (:func:`eval_axes`). A custom loop declares ``define_metric("eval/*", step_metric="eval/step")`` and logs
``eval/step`` as the evaluation's number (1, 2, 3, ...) while its training step metric is at
5, 10, 15. Read on its own axis, evaluation 2 pairs with training step 2's entropy. The
evaluation rows are read instead on the training step metric's value when each was logged
(as W&B's step_sync holds it: its last value in the file; 0 before its first value, an evaluation
before training), where the evaluation axis counts by one and the training axis moved by more
between evaluations (:func:`counted`): the step metric that moved least (a GPU monitor's clock beside it
ticks more often). An axis
that is the training step under another name (the CS336 course's ``eval_step``, evaluations at
training steps 1, 5, 10; slime's ``eval/step``, the rollout id) does not count by one, or moves
with a training step metric, and is left as it is.

>>> rows = [(0, 1, "eval/step", 1.0, {"train/step": 5.0}), (1, 2, "eval/step", 2.0, {"train/step": 10.0}),
...         (2, 3, "eval/step", 3.0, {"train/step": 15.0})]
>>> counted(rows)
{'eval/step': ('train/step', [5, 10, 15])}
"""

from __future__ import annotations

import re
from array import array

import numpy as np

EVAL_AXIS = re.compile(r"^(?:eval|evals|evaluation|val|valid|validation|test)(?:[/_.]|$)", re.IGNORECASE)
MIN_EVALS = 3  # a count by one needs 3 evaluations to be told from two steps that happen to be 1 apart


def is_eval_axis(metric: str) -> bool:
    """Whether a step metric is an evaluation's own (``eval/step``, ``eval_step``, ``val/iter``)."""
    return bool(EVAL_AXIS.match(metric))


def counted(rows: list) -> dict[str, tuple[str, list[int]]]:
    """Per evaluation axis that counts evaluations: (the training step metric, each row's training step). ``rows``:
    ``(start, end, axis, its value, {other step metric: its last value})`` per history row on an evaluation axis."""
    out: dict[str, tuple[str, list[int]]] = {}
    for axis in dict.fromkeys(r[2] for r in rows):
        mine = [r for r in rows if r[2] == axis]
        values = np.array([r[3] for r in mine], float)
        evals = np.unique(values)
        if len(evals) < MIN_EVALS or not np.all(np.diff(evals) == 1):
            continue
        declared = sorted({m for r in mine for m in r[4]} - {"_step"})
        moved: dict[str, tuple[float, list[int]]] = {}
        for other in declared or ["_step"]:  # W&B's _step only where no training step metric is declared
            at = [r[4].get(other) for r in mine]
            # an evaluation logged before the training step metric's first value evaluated the model before
            # training: step 0 (left unread, it left every evaluation on its count, evaluation 2 at step 2)
            before = next((i for i, v in enumerate(at) if v is not None), len(at))
            at = [0.0] * before + at[before:]
            if any(v is None or not float(v).is_integer() for v in at):
                continue
            at_evals = np.array([at[int(np.flatnonzero(values == v)[0])] for v in evals], float)  # each evaluation's
            if np.all(np.diff(at_evals) == 1):  # a step metric moving with the count: the axis is that step
                moved.clear()
                break
            if np.all(np.diff(at_evals) > 1):  # the training step moved more than the count between evaluations
                moved[other] = (at_evals[-1] - at_evals[0], [int(v) for v in at])
        if moved:  # a monitor's clock (NeMo-RL's ray/ray_step) ticks more often than the training step
            other = min(moved, key=lambda m: moved[m][0])
            out[axis] = (other, moved[other][1])
    return out


def move(steps: np.ndarray, axis_codes: np.ndarray, rows: list, axis_code) -> list[str]:
    """Move (in place) the rows of each evaluation axis that counts evaluations onto the training step they were
    logged at (:func:`counted`); the notes saying so. ``axis_code``: a step metric's code."""
    notes = []
    for axis, (other, at) in counted(rows).items():
        code, to = axis_code(axis), axis_code(other)
        mine = [r for r in rows if r[2] == axis]
        for (start, end, *_), step in zip(mine, at):
            on = np.flatnonzero(axis_codes[start:end] == code) + start
            steps[on], axis_codes[on] = step, to
        first, last = mine[0][3], mine[-1][3]
        notes.append(f"{axis} counts evaluations ({first:g} to {last:g}, one by one) while {other} moved "
                     f"{at[0]} to {at[-1]} over them: the {len(mine)} evaluation rows are read on {other}, the "
                     f"training step each was logged at (on {axis}, evaluation 2 would pair with training step 2)")
    return notes


def eval_axes(axis_seen: dict, siblings: list, rows: list, steps: array, axis_codes: array, axis_code):
    """(steps, axis codes, notes, notes of what the reading changed): the rows of an evaluation's step metric that
    never moves read on the
    ``<prefix>global_step`` each holds, and those of one that counts evaluations on the training step (:func:`move`).
    ``axis_seen``: each step metric's values (two at most); ``siblings``: ``(start, end, global_step, metric)``."""
    s = np.frombuffer(steps, dtype=np.int64).copy()
    a = np.frombuffer(axis_codes, dtype=np.int32).copy()
    stuck = {m for m, seen in axis_seen.items() if len(seen) == 1}
    spans = [x for x in siblings if x[3] in stuck]
    moved: dict[str, str] = {}
    for metric in stuck:
        alts = {alt for *_, alt, m in spans if m == metric}
        # one row so far (a live run evaluated once): step_sync's 0 beside a training step other than 0 is
        # the axis never logged, as the second row shows; read there from the first, not at step 0 until then
        if len(alts) >= 2 or (alts and axis_seen[metric] == {0} and alts != {0}):
            head, sep, _ = metric.rpartition("/")
            moved[metric] = f"{head}{sep}global_step"
    for start, end, alt, metric in spans:
        if metric in moved:
            on = np.flatnonzero(a[start:end] == axis_code(metric)) + start
            s[on], a[on] = alt, axis_code(moved[metric])
    notes = [f"{metric} (the declared step of its keys) is {next(iter(axis_seen[metric])):g} in every row: "
             f"read those rows on {sibling}, which each of them holds (OpenRLHF declares eval/* on eval/epoch "
             "and never logs it)" for metric, sibling in sorted(moved.items())]
    changed = move(s, a, [r for r in rows if r[2] not in moved], lambda m: axis_code(None if m == "_step" else m))
    return array("q", s.tobytes()), array("i", a.tobytes()), notes, changed
