"""Lines under ``entropylaw forecast``'s one-line view of many runs that say what its rows do not:
which rows forecast which score, where the runs forecast several (a run with no validation score
forecast on its training score beside a sweep's validation scores), and the runs at their planned
last step, whose gain runs to the forecast's last step as if they went on."""

from __future__ import annotations

from entropylaw.fit.forecast.decide import PAST_PLAN
from entropylaw.terminal import count


def scores_lines(forecasts) -> list[str]:
    """Which rows forecast which score, where they are several (a run with no validation score beside a sweep's)."""
    by = {}
    for rid, fc in forecasts.items():
        kind = "" if fc.target_kind == "validation" else " (training score)"
        by.setdefault(f"{fc.target_key}{kind}", []).append(rid)
    if len(by) == 1 and next(iter(by)).endswith(" (training score)"):  # rank says it alike
        return [f"no run logs a validation score: forecast on the training score ({next(iter(by))[:-17]})"]
    return [f"the runs forecast {len(by)} scores, not to be compared across: " + "; ".join(
        f"{k}: {', '.join(v) if len(v) <= 3 else count(len(v), 'run')}" for k, v in by.items())] if len(by) > 1 else []


def past_plan_lines(forecasts) -> list[str]:
    """The runs at their planned last step, whose gain runs past it (a row read "600 ... continue", unsaid)."""
    past = [r for r, fc in forecasts.items() if str(((fc.decision or {}).get("gain") or {}).get("to_step_source"))
            .startswith(PAST_PLAN + ": the run has reached")]
    return [f"{count(len(past), 'run')} at the planned last step its log or config states ({', '.join(past[:3])}"
            f"{', ...' if len(past) > 3 else ''}): the gain runs to the forecast's last step, as if the run went on; "
            "give --total-steps if it does"] if past else []
