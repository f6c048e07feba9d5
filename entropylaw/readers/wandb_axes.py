"""A run's optimizer steps read in the units of its rollouts (slime).

slime (THUDM/slime, ``slime/observability/wandb_utils.py``) declares three step axes:
``train/*`` on ``train/step``, the optimizer step (``rollout_id * steps_per_rollout +
step_id``, ``backends/megatron_utils/model.py``), ``rollout/*`` (its rewards), ``perf/*``,
``passrate/*`` and ``multi_turn/*`` on ``rollout/step``, and ``eval/*`` on ``eval/step`` (both
the rollout id, or ``rollout_id * steps_per_rollout`` with ``--wandb-always-use-train-step``).
With one optimizer step per rollout the axes agree; with several, optimizer step 6 is
rollout 3's second step and would be paired with rollout 6's reward.

The training process logs a rollout's ``rollout/*`` (its ``rollout/step``) before it trains
on it and its ``perf/*`` after, so each ``train/*`` row is read on the value ``rollout/step``
last had in that process, as W&B's step_sync fills it in: the rollout that optimizer step
trained on. The rows of one rollout's optimizer steps are then several rows of one step,
read as their mean (the run's ``repeats`` is "mean"), as veRL's ``actor/entropy`` is the
mean over the mini-batch updates of its step. A file whose ``train/*`` rows do not all
follow a ``rollout/step`` is left as it is.

On TensorBoard slime writes each dict's keys at its step key's value and the step keys not at all
(``slime/observability/logging_utils.py``): ``train/*`` at the optimizer step, ``rollout/*`` at the
rollout step, one event file per process. :func:`rollout_steps_of_file` reads a file's ``train/*``
rows on the step of the ``rollout/*`` rows written before them in that file, where their steps are
slime's numbering of that rollout's optimizer steps.
"""

from __future__ import annotations

from array import array

import numpy as np

from entropylaw.readers.keys import detect_keys, is_candidate
from entropylaw.terminal import count

TRAIN_AXIS = "train/step"
ROLLOUT_AXIS = "rollout/step"


def _per_rollout_note(per_rollout: dict[int, set[int]], how: str) -> str:
    """The note of train/* read on rollout/step: how the rollout was known, and how many optimizer steps each had."""
    sizes = sorted({len(v) for v in per_rollout.values()})
    if sizes == [1]:
        per = "one optimizer step per rollout"
    else:
        k = str(sizes[0]) if len(sizes) == 1 else f"{sizes[0]} to {sizes[-1]}"
        per = (f"{k} optimizer steps per rollout ({count(sum(map(len, per_rollout.values())), 'optimizer step')} "
               f"in {count(len(per_rollout), 'rollout')}): a rollout's entropy is the mean over its optimizer "
               "steps, as veRL's is over the mini-batch updates of its step")
    return ("train/* is logged on train/step (optimizer steps: rollout_id x steps per rollout + step_id, as "
            f"slime numbers them) and read on rollout/step, the rollout each optimizer step trained on ({how}), so "
            f"the entropy pairs with that rollout's reward and evaluation; {per}")


def rollout_steps_of_file(steps: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, str] | None:
    """One TensorBoard file's rows (in the order written, ``keys`` each row's tag): (the steps with each
    ``train/*`` row on its rollout's step, a note), or None where the file is no slime training process's.

    A block of ``train/*`` rows is the rows after a ``rollout/*`` row; its rollout is the step of the last
    ``rollout/*`` row before it. They are moved only where every block is slime's: ``k`` optimizer steps
    (the last block, a rollout still training, may have fewer), numbered ``first, first + 1, ...`` from
    ``rollout * k`` (or from ``rollout``, with ``--wandb-always-use-train-step``), ``k`` above 1.

    >>> s, note = rollout_steps_of_file(np.array([0, 0, 1, 1, 2, 2, 3]),
    ...     np.array(["rollout/raw_reward", "train/entropy_loss", "train/entropy_loss", "rollout/raw_reward",
    ...               "train/entropy_loss", "train/entropy_loss", "perf/train_time"], dtype=object))
    >>> s.tolist(), "2 optimizer steps per rollout" in note
    ([0, 0, 0, 1, 1, 1, 3], True)
    """
    train = np.array([str(k).startswith("train/") for k in keys], dtype=bool)
    rollout = np.array([str(k).startswith("rollout/") for k in keys], dtype=bool)
    if not train.any() or not rollout.any():
        return None
    blocks: list[tuple[int, list[int]]] = []  # (rollout step, the rows of its train/* block)
    last, open_block = None, False
    for i in range(len(keys)):
        if rollout[i]:
            last, open_block = int(steps[i]), False
        elif train[i]:
            if last is None:
                return None  # an optimizer step before any rollout: not slime's order
            if not open_block:
                blocks.append((last, []))
                open_block = True
            blocks[-1][1].append(i)
    numbered = [(r, sorted(set(steps[rows].tolist()))) for r, rows in blocks]
    k = max(len(s) for _r, s in numbered)
    if k < 2:
        return None  # one optimizer step per rollout: on its rollout's step already, or not slime's
    for n, (r, s) in enumerate(numbered):
        full = len(s) == k or n == len(numbered) - 1
        if not full or s != list(range(s[0], s[0] + len(s))) or s[0] not in (r * k, r):
            return None
    out = steps.copy()
    per_rollout: dict[int, set[int]] = {}
    for (r, rows), (_r, s) in zip(blocks, numbered):
        out[rows] = r
        per_rollout.setdefault(r, set()).update(s)
    how = "the step of the rollout/* rows its process wrote before it"
    return out, _per_rollout_note(per_rollout, how)


class RolloutOfTrain:
    """Remembers, for each row on ``train/step``, the last ``rollout/step`` of the file."""

    def __init__(self):
        self.rows: list[tuple[int, int, float | None]] = []  # (start, end, rollout step) of train/step rows

    def note(self, start: int, axes: list[int], train_code: int, rollout: float | None) -> None:
        on = [start + i for i, code in enumerate(axes) if code == train_code]
        if on:
            self.rows.append((on[0], on[-1] + 1, rollout))

    def apply(self, steps: array, axis_codes: array, train_code: int, rollout_code: int):
        """(steps, axis codes, notes): the train/step rows moved onto rollout/step, where they all can be."""
        if not self.rows or any(r is None or not float(r).is_integer() for *_, r in self.rows):
            return steps, axis_codes, []
        s = np.frombuffer(steps, dtype=np.int64).copy()
        a = np.frombuffer(axis_codes, dtype=np.int32).copy()
        per_rollout: dict[int, set[int]] = {}
        for start, end, rollout in self.rows:
            on = np.flatnonzero(a[start:end] == train_code) + start
            per_rollout.setdefault(int(rollout), set()).update(s[on].tolist())
            s[on] = int(rollout)
            a[on] = rollout_code
        note = _per_rollout_note(per_rollout, "rollout/step's last value in the process that logged it, as W&B's "
                                              "step_sync fills it in")
        return array("q", s.tobytes()), array("i", a.tobytes()), [note]


def on_own_steps(steps: array, axis_codes: array, own_steps: array, axis_names: dict,
                 fractional: dict[str, list]) -> tuple[array, array, list[str]]:
    """(steps, axis codes, notes): every row of a step metric that took fractional values (an ``epoch``
    of 0.125) on W&B's ``_step`` instead, the axis a W&B chart of it falls back to without it.

    Read row by row, its whole values (epoch 1.0, 2.0) were steps 1 and 2 among rows at ``_step`` 0..19:
    two axes in one, read as a resume that dropped most of the run.

    >>> codes = {"epoch": 0}
    >>> s, a, [note] = on_own_steps(array("q", [5, 1, 7]), array("i", [0, 0, 0]), array("q", [5, 6, 7]), codes,
    ...                             {"epoch": [2, 0.5]})
    >>> s.tolist(), [list(codes)[c] for c in a], "fractional" in note
    ([5, 6, 7], [None, None, None], True)
    """
    s = np.frombuffer(steps, dtype=np.int64).copy()
    a = np.frombuffer(axis_codes, dtype=np.int32).copy()
    own = np.frombuffer(own_steps, dtype=np.int64)
    notes = []
    for metric, (n_fractional, first) in sorted(fractional.items()):
        on = a == axis_names[metric]
        s[on] = own[on]
        a[on] = axis_names.setdefault(None, len(axis_names))
        notes.append(f"{metric}, a declared step metric (define_metric), is fractional ({first:g} first, in "
                     f"{count(n_fractional, 'row')}): no step; the {count(int(on.sum()), 'row')} on it are read on "
                     "W&B's _step (the count of log calls, the axis of a W&B chart without it)")
    return array("q", s.tobytes()), array("i", a.tobytes()), notes


UNDECLARED = "no declared step metric (W&B's _step is not a step)"


class Undeclared:
    """A run's rows of keys with no declared step metric where it declares some (define_metric): W&B plots them
    on ``_step``, which is a step only where the run passed ``step=`` (NeMo-RL logs every dict so, and declares
    only its GPU monitor's ``ray/*`` on ``ray/ray_step``); without ``step=`` it counts log calls (a loop that
    declares ``train/*`` on its own step). Where no declared key is one entropylaw reads (an entropy, a score, a
    validation) and some undeclared key is, the undeclared rows are read on ``_step``, said; else dropped, counted.
    A key the user names (``named``: ``entropy_key`` ...) is one entropylaw reads, whatever its name.

    >>> u = Undeclared()
    >>> u.counts, u.rows = {"train/reward": 2, "timing/x": 1}, array("q", [0, 1, 3])
    >>> u.settle(np.array(["train/reward", "train/reward", "ray/util", "timing/x"], object),
    ...          {"ray/util": "ray/step"}).tolist(), u.kept_on_step
    ([True, True, False, True], True)
    >>> u.settle(np.array(["train/reward", "train/reward", "ray/util", "timing/x"], object), {"eval/acc": "e"}).tolist()
    [False, False, True, False]
    """

    def __init__(self, named=()):
        self.named = frozenset(named)
        self.counts: dict[str, int] = {}  # rows per key
        self.rows = array("q")  # their indices among the run's values
        self.declared: list[str] = []
        self.kept_on_step = False
        self.off_axis = 0  # values of the declared keys not read, where the undeclared are
        self.apart = ""  # where read on _step: the entropy and the score never at one _step, said
        self.on_step = False  # the declared steps are W&B's _step: the run logs with step= (every row read)

    def settle(self, keys: np.ndarray, declared: dict[str, str], steps=None, on_step=False) -> np.ndarray | None:
        """The mask of the values kept (None: all of them); ``steps``: each value's step; ``on_step``: each row on
        a declared step metric is at W&B's _step too (:func:`declared_on_step`), which is then the run's step."""
        if not self.rows:
            return None
        self.declared = sorted(set(declared.values()))
        if on_step:
            self.on_step = True
            return None
        if not any(k in self.named or is_candidate(k) for k in declared) and any(map(is_candidate, self.counts)):
            self.kept_on_step = True  # the declared keys, a monitor's on its own axis, are then no training step
            if steps is not None:
                self.apart = _apart(keys, steps, detect_keys(list(self.counts)))
            off = np.isin(keys, list(declared))
            self.off_axis = int(off.sum())
            return ~off if self.off_axis else None
        kept = np.ones(len(keys), dtype=bool)
        kept[np.frombuffer(self.rows, dtype=np.int64)] = False
        return kept

    def report(self, report) -> None:
        if not self.counts:
            return
        n, shown = sum(self.counts.values()), ", ".join(sorted(self.counts)[:6]) + (", ..." if len(self.counts) > 6
                                                                                    else "")
        if self.on_step:
            report.note(f"{count(n, 'row')} of {count(len(self.counts), 'key')} with no declared step metric "
                        f"({shown}) read on W&B's _step: in each row on a declared step ({', '.join(self.declared)}) "
                        "it is W&B's _step, the run logging with step= the step it declares")
            return
        if self.kept_on_step:
            report.note(f"{count(n, 'row')} of {count(len(self.counts), 'key')} with no declared step metric "
                        f"({shown}) read on W&B's _step, as W&B plots them: the run declares steps only for keys "
                        f"entropylaw does not read (on {', '.join(self.declared)})")
            if self.apart:
                report.note(self.apart, changed=True)
            if self.off_axis:
                report.drop(f"on its own step axis ({', '.join(self.declared)}), not the run's steps", self.off_axis)
            return
        report.drop(UNDECLARED, n)
        report.note(f"dropped {count(n, 'row')} of {count(len(self.counts), 'key')} with no declared step metric "
                    f"({shown}): the run declares its steps, and W&B's _step counts log calls, not steps")


def _apart(keys: np.ndarray, steps: np.ndarray, km) -> str:
    """What to say where the score or a validation read on ``_step`` is never at a ``_step`` of the entropy: each was
    logged in a wandb.log call of its own, without step=, and ``_step`` then counts log calls, not training steps."""
    if not km.entropy:
        return ""
    entropy = np.unique(steps[keys == km.entropy])
    others = {key: np.unique(steps[keys == key]) for key in (km.score, *km.val.values()) if key}
    apart = {key: at for key, at in others.items() if len(at) >= 3 and not np.intersect1d(entropy, at).size}
    if len(entropy) < 3 or not apart:  # a validation before training and one after it share no step: no sign
        return ""

    def shown(key, at):
        return f"{key!r} (at _step {', '.join(map(str, at[:3].tolist()))}{', ...' if len(at) > 3 else ''})"

    return (f"{shown(km.entropy, entropy)} and {' and '.join(shown(k, a) for k, a in apart.items())} are never at one "
            "_step: each was logged in a wandb.log call of its own, without step=, so their steps are W&B's count of "
            "log calls, not training steps (log a step's metrics in one call, or with step=)")


def declared_on_step(steps: np.ndarray, own_steps: array, axis_codes: array, undeclared_code: int | None) -> bool:
    """Whether every row on a declared step metric is at that step on W&B's ``_step`` too, at two steps at least: the
    run passes ``step=`` the step it declares (``eval/*`` on ``eval/step``, ``train/*`` logged with step=)."""
    if not len(axis_codes) or len(own_steps) != len(steps):
        return False
    declared = np.frombuffer(axis_codes, dtype=np.int32) != (-1 if undeclared_code is None else undeclared_code)
    at = steps[declared]
    return len(np.unique(at)) >= 2 and bool((at == np.frombuffer(own_steps, dtype=np.int64)[declared]).all())
