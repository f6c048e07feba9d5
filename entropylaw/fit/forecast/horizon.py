"""The step N the gain to go and the call run to (:mod:`.decide`), and why, in a user's words: the
planned last step (given, or stated by the log or its config), the score's last logged step in a
backtest, else the step forecast, said as what it is (twice the steps logged, ``horizon`` steps
past the last logged step, the step asked for)."""

from __future__ import annotations

PAST_PLAN = "the forecast's last step"  # where a live run has reached its planned last step: N, said so
NO_PLAN = "no planned last step is in the log or its config"  # the gain runs to the forecast's own step: said


def to_step_of(total_steps, planned, last, backtest: bool, at_last: float, end: float,
               ahead: str = "the forecast's last step") -> tuple[float, str]:
    """The step N the gain runs to, and why (module docstring); ``ahead``: what the forecast's
    last step ``at_last`` is, in a user's words (:func:`ahead_of`), said where N is that step.

    >>> to_step_of(None, None, 99.0, False, 198.0, 99.0, "twice the steps logged")[1]
    'twice the steps logged: no planned last step is in the log or its config; give `total_steps` N'
    """
    if total_steps is not None:
        return float(total_steps), "the planned last step, `total_steps`"
    if backtest and planned is not None and planned > last:  # the run's end is its truth, and its table's last row
        return float(last), (f"the score's last logged step, a backtest: its log stops before the planned last step "
                             f"{planned:g} its log or config states")
    if planned is not None and planned > end and planned >= last:  # a plan the run went past is not its end
        return float(planned), "the planned last step the log or the run's config states"
    if backtest:
        return float(last), "the score's last logged step, a backtest"
    if planned is not None and planned <= end:  # the run reached (or passed) its plan: no step of it is left
        return float(at_last), (f"{PAST_PLAN}: the run has reached the planned last step {planned:g} "
                                "its log or config states; give `total_steps` if it goes on")
    return float(at_last), f"{ahead}: {NO_PLAN}; give `total_steps` N"


def ahead_of(origin: float, horizon=None, asked: bool = False) -> str:
    """What the forecast's last step is, in a user's words: ``horizon`` steps past the window's
    end, the step asked for (``asked``: ``at_steps``), else (the rule of :func:`~.core.forecast`:
    as many steps past the window's end as it holds) twice the steps logged.

    >>> ahead_of(0.0), ahead_of(1000.0), ahead_of(0.0, horizon=50)
    ('twice the steps logged', 'as many steps again as logged (from step 1000)', '50 steps past the last logged step')
    """
    if horizon is not None:
        return f"{horizon:g} steps past the last logged step"
    if asked:
        return "the step asked for"
    return "twice the steps logged" if origin == 0 else f"as many steps again as logged (from step {origin:g})"
