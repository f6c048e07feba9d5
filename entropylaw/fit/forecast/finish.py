"""A live sweep compared at one step, and the runs of it that have finished (``entropylaw rank``).

Runs of one sweep logged to different steps are compared at **one step** N (:func:`common_step`):
``total_steps`` where given, else the furthest of the runs' ends, each run's end being its
planned total (the one its log or config states), else the step its live forecast runs to by
default (as far ahead as it has run). A run forecast to its own horizon would be compared at
its own step: the youngest, forecast the shortest way, would end lowest for its youth alone.

A run that has reached N, or its own planned total, has **finished** (:func:`finished`): it is
ranked on its observed final score (:mod:`.final`'s rule; at N where it went past N), its draws
that score plus the noise of its last validation scores (normal; one binomial standard error
where the set's size is known, else their scatter about the local trend), and never pruned
(nothing of it is left to stop). Runs of different scores (a folder of unrelated runs) are
compared each score's runs at their own step N.

>>> import numpy as np
>>> from entropylaw.fit.forecast.data import RunData
>>> s = np.arange(0.0, 101.0, 5.0)
>>> run = RunData.from_arrays(s, 0.7 - 0.4 * np.exp(-s / 30), run_id="a", target_key="val/x")
>>> reach(run, {}), reach(run, {"planned_steps": 300.0})
(200.0, 300.0)
>>> common_step({"a": run}, {"a": {}})[0], common_step({"a": run}, {"a": {}}, 100)[0]
(200.0, 100.0)
>>> done = finished(run, n_boot=200)
>>> round(done.score, 3), done.step, len(done.draws)
(0.686, 100.0, 200)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import entropylaw.table as table
from entropylaw.errors import EntropyLawError
from entropylaw.fit.forecast.core import forecast_table
from entropylaw.fit.forecast.data import RunData, own_noise, with_problems
from entropylaw.fit.forecast.decide import point_size, threshold_for
from entropylaw.fit.forecast.log_facts import log_facts
from entropylaw.fit.forecast.final import final_span, logged_interval
from entropylaw.fit.forecast.problems import check_problems, noise_floor, run_problems
from entropylaw.fit.forecast.text import Forecasts, law_reasons
from entropylaw.fit.run import left_out_line, warn_left_out

NOISE_POINTS = 10  # the last target points whose scatter is a finished run's noise


def planned(run, log) -> float | None:
    """The run's planned last step, as its log (``planned_steps``) or its config (``total_steps``) states it."""
    p = (log or {}).get("planned_steps") or (run.config or {}).get("total_steps")
    try:
        p = float(p)
    except (TypeError, ValueError):
        return None
    return p if np.isfinite(p) and p > run.origin else None


def reach(run, log) -> float:
    """Where the run ends: its planned total, else as far ahead as it has run (a live forecast's
    default horizon)."""
    plan = planned(run, log)
    return plan if plan is not None else float(run.last + max(run.last - run.origin, 1.0))


def common_step(runs: dict, logs: dict, total_steps=None) -> tuple[float, str]:
    """The one step N the runs are compared at, and why (module docstring)."""
    if total_steps is not None:
        return float(total_steps), "the planned last step, `total_steps`"
    ends = {rid: reach(run, logs.get(rid)) for rid, run in runs.items()}
    far = max(ends, key=ends.get)
    if planned(runs[far], logs.get(far)) is not None:
        return ends[far], "the largest planned total the runs' logs or configs state"
    if len(runs) == 1:
        return ends[far], "as far ahead as it has run (its log states no planned total; give `total_steps`)"
    return ends[far], ("the furthest step any run is forecast to (as far ahead as it has run: no log states a "
                       "planned total; give `total_steps`)")


def is_finished(run, log, step: float) -> bool:
    """Whether the run has reached ``step`` or its own planned total, its score too (within one of its
    intervals): a run whose evaluations stopped at step 5 of 300 was "finished" on its score of step 5."""
    plan = planned(run, log)
    t = run.target.steps
    last = min(run.last, t[-1] + logged_interval(t)) if len(t) else run.last
    return bool(last >= step or (plan is not None and last >= plan))


def check_total(runs: dict, total_steps) -> None:
    """``total_steps`` before every run's last logged step is refused, as ``forecast`` refuses one before its
    run's window's end: no run has anything left to forecast, and each would be read at a step it has passed.
    Where only some runs went past it, they are read there (:func:`live_sweep`), said in the ranking."""
    if total_steps is None or not runs or any(run.last <= total_steps for run in runs.values()):
        return
    lasts = sorted({run.last for run in runs.values()})
    ends = f"step {lasts[0]:g}" if len(lasts) == 1 else f"steps {lasts[0]:g}–{lasts[-1]:g}"
    raise EntropyLawError(f"`total_steps` {total_steps:g} is not after the window's end of any run (their logs go "
                          f"on to {ends}): nothing is left to forecast; give the runs' planned last step "
                          "(`fit_frac` backtests a forecast from their first steps)")


@dataclass
class Finished:
    """A run that has finished: its observed final score and draws of it (its noise)."""

    run_id: str
    target_key: str
    target_kind: str
    step: float  # its last step
    score: float  # its final score as logged (:mod:`.final`)
    sd: float  # the final score's noise
    draws: np.ndarray
    threshold: float
    point: float | None
    law: list = field(default_factory=list)  # why the law does not describe the run ([] where it does)
    logged_to: float | None = None  # its log's last step, where it goes on past the step it is read at


def finished(run, n_boot: int = 200, seed: int = 0, n_problems=None) -> Finished:
    """The finished ``run``'s final score with ``n_boot`` draws of its noise (module docstring)."""
    run = with_problems(run, n_problems)
    t = run.target
    lo, hi = final_span(run.target_kind, run.origin, t.steps[-1])
    inside = t.steps >= lo - 1e-9
    score = float(np.mean(t.values[inside]))
    tail, steps = t.values[-NOISE_POINTS:], t.steps[-NOISE_POINTS:]
    n, said = run_problems(run) if run.target_kind == "validation" else (n_problems, None)
    unit = point_size(run.bounds)
    if n and run.target_kind == "validation" and unit:
        p = float(np.clip(score / (100 * unit), 0.0, 1.0))
        sd = 100 * unit * float(np.sqrt(p * (1 - p) / n))
    else:
        # repeats of one score (a small set's 0.6333 held) read as no noise: never below its resolution
        sd = max(own_noise(tail, steps, run.target_kind)[0] if len(tail) > 1 else 0.0, noise_floor(run))
    sd = float(sd) / np.sqrt(int(inside.sum()))  # a training score's final is a mean over its last steps
    draws = score + sd * np.random.default_rng(seed).standard_normal(n_boot)
    if run.bounds is not None:
        draws = np.clip(draws, *run.bounds)
    thr, _ = threshold_for(score, tail, run.target_key, run.target_kind, n, run.bounds, steps, said)
    return Finished(run.run_id, run.target_key, run.target_kind, float(t.steps[-1]), score, sd, draws, float(thr),
                    unit, law_reasons(run, run.last))


def live_sweep(df, ids: list, seed: int = 0, **options):
    """``ids`` of the tidy table ``df`` at one step (live): ``(forecasts, finished, (N, why))``,
    the runs not finished forecast to N (:func:`~.core.forecast_table`'s ``options``, with
    ``total_steps`` and ``at_steps`` N), those finished read (:func:`finished`)."""
    check_problems(options.get("n_problems"))  # before any run is read or forecast
    parts = table.split_runs(df)
    runs, logs = {}, {}
    for rid in ids:
        try:
            runs[rid] = RunData.from_table(parts.get(rid, df), rid, y_key=options.get("y_key"),
                                           x_key=options.get("x_key", "entropy"))
        except EntropyLawError:  # forecast_table says why
            continue
        logs[rid] = log_facts(parts.get(rid, df), rid)
    if not runs:
        return forecast_table(df, ids, seed=seed, **options), {}, None
    check_total(runs, options.get("total_steps"))
    # runs of one score are one contest: runs of others (a folder of unrelated runs) are not
    # forecast out to another score's runs' end (200-step runs to step 2239)
    keys: dict[str, list[str]] = {}
    for rid, run in runs.items():
        keys.setdefault(run.target_key, []).append(rid)
    steps = {key: common_step({r: runs[r] for r in members}, logs, options.get("total_steps"))
             for key, members in keys.items()}
    at = {rid: steps[runs[rid].target_key][0] for rid in runs}
    done = [rid for rid in runs if is_finished(runs[rid], logs[rid], at[rid])]
    # its log at the step compared at, its score stopped long before: no final score, nothing left to forecast
    stale = {rid: f"its log reaches step {run.last:g}, its {run.target_key} stops at step {run.target.steps[-1]:g}: no "
                  f"final score was logged, and the run has no steps left to forecast"
             for rid, run in runs.items() if rid not in done and run.last >= at[rid] and len(run.target)}
    # the step compared at comes before the run's first score (a log resumed at step 1001, `total_steps` 500):
    # it has nothing to be read on there (it was read on an empty window: an internal error)
    early = {rid: f"its first {runs[rid].target_key} is at step {runs[rid].target.steps[0]:g}, after step {at[rid]:g} "
                  f"where the runs are compared: it has no score there" for rid in done
             if runs[rid].target.steps[0] > at[rid]}
    done = [rid for rid in done if rid not in early]
    fcs = Forecasts({}, {**stale, **early})
    for key, members in keys.items():
        rest = [rid for rid in members if rid not in done and rid not in fcs.left_out]
        if rest:
            got = forecast_table(df, rest, seed=seed, none_ok=True, **{**options, "total_steps": steps[key][0],
                                                                          "at_steps": [steps[key][0]]})
            fcs = Forecasts({**fcs, **got}, {**fcs.left_out, **got.left_out},
                            fcs.default_said or got.default_said)
    unread = [rid for rid in ids if rid not in runs]  # no run data: forecast_table says why
    if unread:
        got = forecast_table(df, unread, seed=seed, none_ok=True, **options)
        fcs = Forecasts(dict(fcs), {**fcs.left_out, **got.left_out}, fcs.default_said)
    forecasted = {rid: why for rid, why in fcs.left_out.items() if rid not in stale and rid not in early}
    if not fcs and not done:  # one line naming each run with why (it was said a run twice, then an error)
        alone = [f"run {rid!r}: {why}" for rid, why in fcs.left_out.items()] if len(fcs.left_out) == 1 else None
        raise EntropyLawError(alone[0] if alone else left_out_line(fcs.left_out, "no run could be forecast"))
    warn_left_out(forecasted)  # forecast_table left them to be said here: once, where some run is ranked
    # a run gone past the step compared at is read there: its later steps are no part of the contest
    out = {rid: finished(runs[rid].window(at[rid]) if runs[rid].last > at[rid] else runs[rid],
                         options.get("n_boot", 200), seed, options.get("n_problems")) for rid in done}
    for rid, f in out.items():
        if runs[rid].last > at[rid]:
            f.logged_to = runs[rid].last
    if len(steps) == 1:
        return fcs, out, next(iter(steps.values()))
    return fcs, out, (None, "; ".join(f"the runs of {key} at step {n:g}" for key, (n, _) in sorted(steps.items())),
                      steps)  # each score's own step: its runs are ranked apart (rank_groups)
