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
"""

from __future__ import annotations

from array import array

import numpy as np

from entropylaw.terminal import count

TRAIN_AXIS = "train/step"
ROLLOUT_AXIS = "rollout/step"


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
        sizes = sorted({len(v) for v in per_rollout.values()})
        if sizes == [1]:
            per = "one optimizer step per rollout"
        else:
            k = str(sizes[0]) if len(sizes) == 1 else f"{sizes[0]} to {sizes[-1]}"
            per = (f"{k} optimizer steps per rollout ({count(sum(map(len, per_rollout.values())), 'optimizer step')} "
                   f"in {count(len(per_rollout), 'rollout')}): a rollout's entropy is the mean over its optimizer "
                   "steps, as veRL's is over the mini-batch updates of its step")
        note = ("train/* is logged on train/step (optimizer steps: rollout_id x steps per rollout + step_id, as "
                "slime numbers them) and read on rollout/step, the rollout each optimizer step trained on "
                "(rollout/step's last value in the process that logged it, as W&B's step_sync fills it in), so "
                f"the entropy pairs with that rollout's reward and evaluation; {per}")
        return array("q", s.tobytes()), array("i", a.tobytes()), [note]
