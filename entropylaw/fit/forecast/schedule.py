"""What the learning-rate schedule means for a forecast: the methods extrapolate the window,
which trained at the window's learning rate. Where that rate is already falling (the log's
own learning-rate metric: TRL's ``learning_rate``, veRL's ``actor/lr``), or the printed config
names a decaying schedule (veRL's ``warmup_style`` / ``lr_scheduler_type``), the later steps
train at lower rates and climb more slowly than the window did. No run at hand measures by how
much, so the forecast is not changed: it says so beside its numbers (:func:`lr_note`).

>>> steps = np.arange(5.0, 35.0, 5.0)
>>> lr = np.array([4e-5, 8e-5, 9.8e-5, 9.5e-5, 9.3e-5, 9.0e-5])   # warm-up to step 15, then a linear fall
>>> lr_note((steps, lr), end=30.0).split(":")[0]
'learning rate falling'
>>> lr_note((steps, np.full(6, 1e-6)), end=30.0) is None   # constant: nothing to say
True
"""

from __future__ import annotations

import numpy as np

LR_KEYS = ("actor/lr", "learning_rate", "train/learning_rate", "optimizer/lr", "lr")
# a learning rate is set, not measured: falling step after step since its peak (2 steps or more), by
# 1 % or more, it is a schedule decaying (a linear decay to 0 over the run is still at 85-90 % of its
# peak at 15 % of the run)
FALLING = 0.99
LR_SAID = "learning rate falling"  # how the note starts: the one-line view groups the runs that say it
CONSTANT = ("constant", "constant_with_warmup", "none")  # a config's schedule that does not decay


def lr_note(lr, end: float, config=None) -> str | None:
    """A warning where the learning rate falls after the window, else None. ``lr``: (steps,
    rates) of the log's learning-rate metric (:func:`~.decide.log_facts`), read up to ``end``;
    ``config``: the printed config (its ``lr_schedule``), said where the log's rate is not."""
    said = _from_log(lr, end)
    schedule = str((config or {}).get("lr_schedule") or "").lower()
    if said is None and schedule and schedule not in CONSTANT:
        said = f"the config's learning-rate schedule is {schedule}"
    if said is None:
        return None
    return (f"{LR_SAID}: {said}; later steps train at lower rates and climb more slowly than the window "
            "did, while the forecast extrapolates the window as it trained (no run at hand measures the difference): "
            "it may overstate what the rest adds")


def _from_log(lr, end):
    if lr is None:
        return None
    steps, rates = (np.asarray(v, float) for v in lr)
    keep = (steps <= end) & np.isfinite(rates) & (rates > 0)
    steps, rates = steps[keep], rates[keep]
    if len(rates) < 3:
        return None
    i = int(np.argmax(rates))
    peak, now = float(rates[i]), float(rates[-1])
    after = rates[i:]
    if len(after) < 3 or now >= FALLING * peak or np.any(np.diff(after) > 1e-12 * peak):
        return None
    said = (f"the log's learning rate fell from {peak:.3g} (step {steps[i]:g}) to {now:.3g} by the window's end "
            f"(step {steps[-1]:g})")
    pace = (now - peak) / (steps[-1] - steps[i])
    return said + f"; at that pace it reaches 0 near step {steps[-1] - now / pace:.0f}"
