"""``entropylaw rank``: which runs of a sweep to keep, from their forecasts' joint draws.

>>> r = el.rank(el.load("data/real"), fit_frac=0.25)            # doctest: +SKIP
>>> print(r)                              # one line per run: final [90 %], p_best, prune  # doctest: +SKIP
"""

from __future__ import annotations

import numpy as np
import pandas as pd

import entropylaw.table as table
from entropylaw.api.checks import entropy_key, runs_of
from entropylaw.errors import EntropyLawError
from entropylaw.fit.forecast.core import DEFAULT, check_options, forecast_table
from entropylaw.fit.forecast.finish import live_sweep
from entropylaw.fit.forecast.rank import Ranking
from entropylaw.fit.forecast.rank_groups import ScoreRankings, rank_by_score
from entropylaw.fit.pairing import score_key
from entropylaw.readers.score_scales import names_no_highest_best

LIVE_OFF = ("fit_frac", "fit_steps", "at_steps", "horizon")  # any of them given: each run's window is cut (a backtest)


def rank(df: pd.DataFrame, runs=None, *, threshold: float | None = None, seed: int = 0,
         **options) -> Ranking | ScoreRankings:
    """Rank the runs of ``df`` (or ``runs``; one sweep, each at the same share ``fit_frac`` or
    live) by the chance that each ends best, from each run's default forecast
    (:func:`entropylaw.forecast_all`'s ``options``); prune a run whose chance of ending within
    ``threshold`` of the best is below 5 % (:mod:`entropylaw.fit.forecast.rank`). A run that
    cannot be forecast is left out with a warning (``.left_out``: run -> why; said in ``.notes``).
    Runs of several scores are ranked apart, each score's runs among themselves
    (:class:`~entropylaw.fit.forecast.rank_groups.ScoreRankings`).

    Live (no ``fit_frac``, ``fit_steps``, ``at_steps`` or ``horizon``), the runs are compared at one
    step (:mod:`entropylaw.fit.forecast.finish`): ``total_steps``, else the largest planned total
    their logs state, else the furthest step any is forecast to; a run that has reached it (or its
    own planned total) has finished, and is ranked on its observed final score. A ``total_steps``
    before every run's last logged step is refused, as :func:`entropylaw.forecast_all` refuses one
    before a run's window's end; the runs whose logs go on past it are said in ``.notes``."""
    ids = runs_of(df, runs)
    if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, (int, float, np.number))
                                  or not (np.isfinite(threshold) and threshold > 0)):
        raise EntropyLawError(f"`threshold` {threshold!r}: expected a gain above 0 in the score's units, such as 0.01")
    options.setdefault("methods", [DEFAULT])
    check_options(seed=seed, **options)  # a mistake of the call's, before any run is forecast or read as finished
    _check_ranked_keys(df, ids, options.get("y_key"))
    entropy_key(df, ids, options.get("x_key"))
    if all(options.get(k) is None for k in LIVE_OFF):
        forecasts, finished, step = live_sweep(df, ids, seed=seed, **options)
    else:
        forecasts, finished, step = forecast_table(df, ids, seed=seed, **options), {}, None
    out = rank_by_score(forecasts, threshold=threshold, seed=seed, finished=finished, step=step)
    sources = table.runs(df).set_index("run_id")["source"].astype(str).to_dict()
    for r in out.rows:  # runs of one name in two folders are run and run-2: where each is from
        r["source"] = sources.get(r["run_id"], "")
    # not each run's last step: said in each score's table (a backtest's `total_steps` 200 of 50-step runs read
    # "the final score is each run's own (its last step)" over forecasts at step 200)
    given = ("`horizon` after each run's window" if options.get("horizon") is not None else "`at_steps`"
             if options.get("at_steps") is not None else "`total_steps`"
             if options.get("total_steps") is not None and step is None else None)
    for ranking in ([r for _, r in out.groups] if isinstance(out, ScoreRankings) else [out]) if given else []:
        tos = {r["to_step"] for r in ranking.rows if r.get("to_step") is not None}
        ranking.forecast_to = (f"at step {tos.pop():g} ({given})" if len(tos) == 1 else
                               f"each run's at the step it is forecast to ({given}: the column 'end')")
    # with `horizon` or `at_steps` the forecasts run there, not to `total_steps`
    total = options.get("total_steps") if options.get("horizon") is None and options.get("at_steps") is None else None
    past = _past_total(forecasts, finished, total, backtest=step is None)
    out.notes += [past] if past else []
    out.left_out = dict(forecasts.left_out)
    out.left_out_sources = {rid: sources.get(rid) for rid in out.left_out}
    out.notes += [f"left out: {rid}: {why}" for rid, why in forecasts.left_out.items()]
    return out


def _past_total(forecasts, finished: dict, total, backtest: bool) -> str | None:
    """The runs whose logs go on past ``total_steps``, as ``forecast`` says it of its run: a backtest forecasts
    them to it, a live rank reads them at it; their later steps are no part of the ranking."""
    if total is None:
        return None
    past = {rid: fc.run_last for rid, fc in forecasts.items() if fc.run_last is not None and fc.run_last > total}
    past.update({rid: f.logged_to for rid, f in finished.items() if f.logged_to is not None})
    if not past:
        return None
    names = [f"{rid} to step {last:g}" for rid, last in sorted(past.items(), key=lambda kv: str(kv[0]))]
    said = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    return (f"the {'log' if len(past) == 1 else 'logs'} go{'es' if len(past) == 1 else ''} on past `total_steps` "
            f"{total:g} ({said}): {'forecast to' if backtest else 'read at'} step {total:g}, the later steps no "
            "part of the ranking")


def _check_ranked_keys(df: pd.DataFrame, ids, y_key) -> None:
    """A rank keeps the run that ends highest: on a loss or a length (a run that logs no score but
    its ``val/loss``, or ``y_key="val/loss"``) that is the worst run, so it is refused, naming the key."""
    for rid in ids:
        try:
            key = score_key(df, rid, y_key, warn=False)
        except EntropyLawError:
            continue  # the run is left out by its forecast, which says why
        if names_no_highest_best(key):
            raise EntropyLawError(f"run {rid!r} would be ranked on {key}, which is no score by its name (a loss, "
                                  "length, KL or time): a rank keeps the run that ends highest, the worst run on "
                                  "it; rank a score (`y_key`)")
