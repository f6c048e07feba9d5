"""A W&B run whose steps are W&B's count of ``wandb.log`` calls, and a loop that logs one step in several calls.

A loop that calls ``wandb.log`` without ``step=`` and declares no step metric (``define_metric``) gets W&B's
``_step``: one per call. A loop that logs a training step in two calls (``wandb.log({"train/entropy": e})``, then
``wandb.log({"train/reward": r})``) has its entropy and reward on different ``_step``s: read so they never pair.
Where every call logs its own keys (no key in two kinds of call) in a fixed cycle, each cycle is one step
(:func:`join_log_calls`); calls of other keys logged now and then (an evaluation every few steps) are read at the
step of the cycle before them, or, where such a key's first call comes before any training call and its last before
another (an evaluation logged before its step's training), at the step of the cycle after them; so are an
evaluation's calls beside one training call a step (W&B counts them as steps too: 20 training steps read as 24).
Where the calls come in no fixed cycle, the run is read on W&B's count and a note says why its values do not pair.

The SDK's telemetry records whether the run called ``wandb.log`` with ``step=`` (its ``set_step_log``); a file
without telemetry is read on the count where its steps are 0, 1, 2 ... one per row.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from entropylaw.readers.common import RawRun
from entropylaw.readers.key_names import entropy_by_name, score_by_name
from entropylaw.terminal import count

SHOWN = 4


def on_call_counter(raw: RawRun, step_log: bool | None) -> bool:
    """Whether the run's steps are W&B's count of log calls: no declared step metric and no ``step=`` (the
    telemetry's ``step_log``; None: no telemetry, then steps 0, 1, 2 ... with none missing)."""
    if raw.axes is not None or not len(raw.steps):
        return False
    if step_log is not None:
        return not step_log
    steps = np.unique(np.asarray(raw.steps))
    return int(steps[0]) == 0 and int(steps[-1]) == len(steps) - 1


def _calls(steps: np.ndarray, keys: np.ndarray) -> tuple:
    """(each call's first row, each call's kind (an index into the kinds), the kinds: the keys a call logs, each
    kind's calls, each kind's first call); rows of one step are one call. A call's kind is told by a sum of
    random weights of its keys (one pass over the rows, whatever their number)."""
    starts = np.concatenate([[0], np.flatnonzero(np.diff(steps)) + 1])
    codes, _ = pd.factorize(keys)
    weights = np.random.default_rng(0).integers(1, 2 ** 62, size=int(codes.max()) + 1, dtype=np.uint64)
    sums = np.add.reduceat(weights[codes], starts)
    _, first, kind_of, counts = np.unique(sums, return_index=True, return_inverse=True, return_counts=True)
    ends = np.concatenate([starts[1:], [len(steps)]])
    kinds = [frozenset(map(str, keys[starts[i]:ends[i]])) for i in first]
    return starts, kind_of.ravel(), kinds, counts, first


def _apart(kinds) -> bool:
    """Whether two kinds of call or more, each logging keys no other logs."""
    union = set().union(*kinds)
    return len(kinds) > 1 and sum(len(k) for k in kinds) == len(union)


def _shown(kind: frozenset) -> str:
    names = sorted(kind)
    return "{" + ", ".join(names[:SHOWN]) + (", ..." if len(names) > SHOWN else "") + "}"


def join_log_calls(raw: RawRun, some_keys: bool = False) -> None:
    """Read each cycle of log calls as one step where a loop logs one step in several calls (the module
    docstring); where the calls come in no fixed cycle, say why the values do not pair. ``raw`` is on the count.
    ``some_keys``: only some of the run's keys were read (a ``wandb://`` run's): the calls of the others are not
    seen, and W&B's count is the span of the steps read."""
    steps, keys = np.asarray(raw.steps, dtype=np.int64), np.asarray(raw.keys, dtype=object)
    if len(steps) < 2 or np.any(np.diff(steps) < 0):
        return
    starts, kind_of, kinds, counts, first_call = _calls(steps, keys)
    if not _apart(kinds):
        return
    most = int(counts.max())
    in_cycle = counts >= most - 1
    order = sorted(np.flatnonzero(in_cycle).tolist(), key=lambda k: first_call[k])  # the cycle's kinds, as logged
    period = len(order)
    cycle_calls = in_cycle[kind_of]
    seq = kind_of[cycle_calls]
    fixed = most > 1 and bool(np.all(seq == np.asarray(order)[np.arange(len(seq)) % period]))
    # one training call a step, an evaluation's call now and then: W&B counts both, so the evaluations lie between
    # the training steps and push them on (a run of 200 steps read as 220); each is read at the step before it
    # (an evaluation's: at most every other step, naming no training entropy or score, whose pairing is unknown)
    others = [k for k in range(len(kinds)) if not in_cycle[k]]
    fixed = fixed and (period > 1 or (bool(others) and _names_a_role(kinds[order[0]]) and all(
        2 * counts[k] <= most and not _names_a_role(kinds[k]) for k in others)))
    if not fixed:
        if not _pair_apart(kinds):  # a training call beside an evaluation's calls: no step in two calls
            return
        ranked = np.argsort(-counts, kind="stable")[:SHOWN]
        shown = ", ".join(f"{_shown(kinds[k])} in {count(int(counts[k]), 'call')}" for k in ranked)
        raw.report.note(f"each wandb.log call logs keys of its own ({shown}{', ...' if len(kinds) > SHOWN else ''}), "
                        "without step= or a step metric: W&B's _step counts the calls, so values logged in two calls "
                        "of one training step are on two steps and do not pair; the calls come in no fixed cycle, "
                        "so they are read on W&B's count (log them in one call, or with step=)")
        return
    first = int(steps[0])
    lead = _lead(order, kinds, len(seq) % period)
    # a call of the cycle: its place in it // period; another call: the cycle before it (0 before any)
    cycle = np.where(cycle_calls, (np.cumsum(cycle_calls) - 1 + (period - lead) % period) // period, -1)
    extras = [k for k in range(len(kinds)) if not in_cycle[k]]
    # an evaluation whose first call comes before the first training call, and each call before a training call,
    # is logged before its step's training (``if s % 5 == 0: log(evaluate())`` then ``log(train)``): read at the
    # step of the training call after it (it was read one step early, but for the first: 0, 4, 9, 14). One whose
    # last call follows the last training call is one after its step's training (``log(evaluate())`` before the
    # loop, then ``log(train)`` and every 5th step ``log(evaluate())``): read at the step before it, as _lead does
    calls = np.flatnonzero(cycle_calls)
    ahead = [k for k in extras if first_call[k] < calls[0] and np.flatnonzero(kind_of == k)[-1] < calls[-1]]
    cycle = _at_steps(cycle, np.isin(kind_of, ahead))
    raw.steps = first + np.repeat(cycle, np.diff(np.concatenate([starts, [len(steps)]])))
    cycles = -(-(len(seq) + (period - lead) % period) // period)
    order = order[lead:] + order[:lead]
    counted = int(steps[-1]) - first + 1 if some_keys else len(starts)  # W&B's count of the calls
    if period > 1:
        said = (f"{period} log calls per step: joined (the run logs each step in {period} wandb.log calls"
                f"{' of the keys read' if some_keys else ''} without step=, "
                f"{' then '.join(_shown(kinds[k]) for k in order)}, which W&B counts as {counted} steps): "
                f"read as {count(cycles, 'step')} ({first}..{first + cycles - 1})")
    else:
        said = (f"one training call a step, {_shown(kinds[order[0]])}, without step=, beside calls of other keys, "
                f"which W&B counts as steps too ({counted} in all): read as {count(cycles, 'step')} "
                f"({first}..{first + cycles - 1})")
    if lead:
        said += (f"; {' and '.join(_shown(kinds[k]) for k in order[-lead:])} logged once more, before the first "
                 f"step's training values (an evaluation before training): read at step {first}, alone")
    elif len(seq) % period:
        said += f"; the last step has {len(seq) % period} of its {period} calls (the run stopped between them)"
    for group, where in ((extras if not ahead else [k for k in extras if k not in ahead], "before them"),
                         (ahead, "after them (logged before each step's training calls, the first before any)")):
        if group:
            said += (f"; {count(int(counts[group].sum()), 'call')} of other keys "
                     f"({', '.join(_shown(kinds[k]) for k in group[:SHOWN])}) read at the step of the calls {where}")
    raw.report.note(said, changed=True)


def _at_steps(cycle: np.ndarray, ahead: np.ndarray) -> np.ndarray:
    """Each call's step: a training call's cycle (``cycle`` >= 0); another call's, the cycle of the training call
    before it (0 before any), or where ``ahead`` (each such call has a training call after it), of the one after."""
    before = np.maximum(np.maximum.accumulate(cycle), 0)
    if not ahead.any():
        return before
    after = np.minimum.accumulate(np.where(cycle >= 0, cycle, np.iinfo(np.int64).max)[::-1])[::-1]
    return np.where(ahead & (cycle < 0), after, before)


def _lead(order: list[int], kinds: list[frozenset], extra: int) -> int:
    """How many kinds at the cycle's start, logged once more than the rest, are an evaluation's before each training
    step's calls (``log(evaluate())`` once before the loop, then ``log(train)``, ``log(evaluate())`` each step): the
    ``extra`` calls of the last cycle cut short, where they hold no entropy or score by name and a later kind does.
    0: the cycle starts with its first call (a last step cut short is the run stopping between its calls)."""
    if not extra:
        return 0
    trains = [bool(entropy_by_name(sorted(kinds[k]), []) or score_by_name(sorted(kinds[k]), [])) for k in order]
    return extra if not any(trains[:extra]) and any(trains[extra:]) else 0


def _names_a_role(kind: frozenset) -> bool:
    """Whether a call's keys name an entropy or a score: a training step's call."""
    return bool(entropy_by_name(sorted(kind), []) or score_by_name(sorted(kind), []))


def _pair_apart(kinds: list[frozenset]) -> bool:
    """Whether the entropy and the score (as their names say) are logged in calls of their own."""
    names = sorted(set().union(*kinds))
    entropy, score = entropy_by_name(names, []), score_by_name(names, [])
    return bool(entropy and score) and not any(entropy in k and score in k for k in kinds)
