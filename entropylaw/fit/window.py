"""The fit window: which first steps of a run a fit or a forecast may see (one rule for both).

A window is measured from ``origin``, the first logged step (a run resumed at step 101 starts
there), to the run's last step ``last``:

- ``fit_frac=F`` (0 < F < 1, backtests of finished runs): steps ``origin .. origin + F * (last - origin)``;
- ``fit_steps=K`` (K >= 1): the first K steps, ``origin .. origin + K - 1``;
- neither: everything logged so far (a live forecast), unless the caller needs a window
  (``required=True``: the paper's early prediction has nothing to predict without one).

``leave_some=True`` (early prediction) asks that the window end before ``last``; otherwise a
window may hold the whole log but not reach past it. Messages name the API's parameters in
backticks; the CLI puts its flag names there.

>>> window_end(101, 200, fit_frac=0.5)
150.5
>>> window_end(0, 99, fit_steps=10)
9.0
>>> window_end(0, 99)
99.0
"""

from __future__ import annotations

import numbers

from entropylaw.errors import EntropyLawError

WHAT = {"fit_frac": "the window's share of the run, 0 < F < 1", "fit_steps": "the window's first K steps, K >= 1"}


def check_window(fit_frac: float | None = None, fit_steps: float | None = None, required: bool = False) -> None:
    """The window's own bounds, before any run is read (the CLI checks its flags with this too)."""
    for name, value in (("fit_frac", fit_frac), ("fit_steps", fit_steps)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Real)):
            raise EntropyLawError(f"`{name}` {value!r}: expected a number ({WHAT[name]})")
    if required and (fit_frac is None) == (fit_steps is None):
        raise EntropyLawError("give exactly one of `fit_steps` K or `fit_frac` F")
    if fit_frac is not None and fit_steps is not None:
        raise EntropyLawError("give at most one of `fit_frac` F and `fit_steps` K")
    if fit_frac is not None and not 0 < fit_frac < 1:
        raise EntropyLawError(f"`fit_frac` must lie strictly between 0 and 1 (got {fit_frac:g})")
    if fit_steps is not None and not fit_steps > 0:
        raise EntropyLawError(f"`fit_steps` must be positive (got {fit_steps:g})")


def window_end(origin: float, last: float, fit_frac: float | None = None, fit_steps: float | None = None, *,
               required: bool = False, leave_some: bool = False, start: str | None = None) -> float:
    """The window's last step (module docstring). ``start`` describes where the log starts, for messages."""
    check_window(fit_frac, fit_steps, required)
    origin, last = float(origin), float(last)
    start = start or f"the log starts at step {origin:g}"
    if fit_frac is None and fit_steps is None:
        return last
    span = last - origin
    if fit_frac is not None:
        return origin + fit_frac * span
    end = origin + float(fit_steps) - 1.0  # the first K steps: origin .. origin + K - 1
    if leave_some and end >= last:
        raise EntropyLawError(f"`fit_steps` {fit_steps:g} is not smaller than the run ({start}, last paired step "
                              f"{last:g}): nothing left to predict")
    if end > last:
        raise EntropyLawError(f"`fit_steps` {fit_steps:g} reaches past the log: {start} ({span + 1:g} steps)")
    return end
