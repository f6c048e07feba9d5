"""What the learning-rate schedule means for a forecast: the methods extrapolate the window,
which trained at the window's learning rate. Where that rate is already falling (the log's
own learning-rate metric: TRL's ``learning_rate``, veRL's ``actor/lr``), or, where the log
records no rate, the printed config names a decaying schedule (veRL's ``warmup_style`` /
``lr_scheduler_type``), the later steps train at lower rates and may climb more slowly than
the window did. No run at hand measures by how much, so the forecast is not changed: it says
so beside its numbers (:func:`lr_note`).

>>> steps = np.arange(5.0, 35.0, 5.0)
>>> lr = np.array([4e-5, 8e-5, 9.8e-5, 9.5e-5, 9.2e-5, 8.9e-5])   # warm-up to step 15, then a straight line
>>> lr_note((steps, lr), end=30.0).split(";")[1]
' on a straight line it reaches 0 near step 178'
>>> lr_note((steps, np.full(6, 1e-6)), end=30.0) is None   # constant: nothing to say
True
"""

from __future__ import annotations

import numpy as np

from entropylaw.fit.forecast.data import Series

LR_KEYS = ("actor/lr", "learning_rate", "train/learning_rate", "optimizer/lr", "lr")
# a learning rate is set, not measured: falling step after step since its peak (2 steps or more), by
# 1 % or more, it is a schedule decaying (a linear decay to 0 over the run is still at 85-90 % of its
# peak at 15 % of the run)
FALLING = 0.99
# the points since the peak on one straight line (each within 1 % of the fall): a linear schedule, whose
# line gives the step where it reaches 0; a cosine's or an exponential's does not
STRAIGHT = 0.01
LR_SAID = "learning rate falling"  # how the note starts: the one-line view groups the runs that say it
# a config's schedule that decays (transformers' SchedulerType and veRL's warmup_style); any other says nothing
DECAYING = ("linear", "cosine", "cosine_with_restarts", "cosine_with_min_lr", "polynomial", "inverse_sqrt",
            "warmup_stable_decay", "exponential")


def lr_series(steps, rates, end: float):
    """The log's learning rates up to ``end`` as a metric's :class:`~.data.Series` holds them (in
    step order, one a step: a step logged twice, its last), those above 0 (veRL logs 0 where no
    rate is set): (steps, rates)."""
    s = Series.of(steps, rates).upto(end)
    return s.steps[s.values > 0], s.values[s.values > 0]


def lr_note(lr, end: float, config=None) -> str | None:
    """A warning where the learning rate falls after the window, else None. ``lr``: (steps,
    rates) of the log's learning-rate metric (:func:`~.log_facts.log_facts`), read up to ``end``;
    ``config``: the printed config (its ``lr_schedule``), read only where the log records no
    rate in the window (3 points or more)."""
    steps, rates = lr_series(*lr, end) if lr is not None else (np.array([]), np.array([]))
    if len(rates) >= 3:
        said = _from_log(steps, rates)
    else:
        schedule = str((config or {}).get("lr_schedule") or "").strip().lower()
        said = f"the config's learning-rate schedule is {schedule}" if schedule in DECAYING else None
    if said is None:
        return None
    return (f"{LR_SAID}: {said}; later steps train at lower rates and may climb more slowly than the window "
            "did, while the forecast extrapolates the window as it trained (no run at hand measures the difference): "
            "it may overstate what the rest adds")


def _from_log(steps, rates):
    i = int(np.argmax(rates))
    peak, now = float(rates[i]), float(rates[-1])
    after, at = rates[i:], steps[i:]
    if len(after) < 3 or now >= FALLING * peak or np.any(np.diff(after) > 1e-12 * peak):
        return None
    said = f"the log's learning rate fell from {peak:.3g} (step {steps[i]:g}) to {now:.3g} (step {steps[-1]:g})"
    slope, icpt = np.polyfit(at, after, 1)
    if np.max(np.abs(icpt + slope * at - after)) <= STRAIGHT * (peak - now) and slope < 0:
        said += f"; on a straight line it reaches 0 near step {-icpt / slope:.0f}"
    return said
