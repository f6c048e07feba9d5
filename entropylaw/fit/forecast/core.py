"""Forecast a run from its first steps, with no information past the window.

:func:`forecast` fits every method (or the ones named) on the window of one run and
returns, per method, the score at the requested future steps, the plateau and the step by
which 90 % of the remaining change is made, each with an interval (``conf``, 90 % by
default), or the reason the method cannot run. Unlike :mod:`entropylaw.fit.early` (the
paper's protocol, which reads later scores off the *observed* later entropy), nothing here
sees a value logged after the window: the methods receive the run cut at the window's end.

Methods (listed once in :data:`~.catalog.REGISTRY`, their interface in :mod:`~.methods`; the
table is generated from the registry when the module is imported):

METHODS_TABLE

Runs with no validation score are forecast on their training score (``target_kind``).
The window's regime (take-off, instability or saturation, :mod:`.regimes`) changes the
forecast the output recommends by what real runs in that regime did next, and says so
(``Forecast.regime``, ``Forecast.warnings``). The default method is chosen by a rule fixed
in advance and applied by the backtest of the real runs (``analysis/bench_forecast.py``,
stored in ``calibration.json``; see :func:`default_method`). Every forecast also answers
"can I stop?" and "will it reach a target?" (``Forecast.decision``, :mod:`.decide`).

>>> import numpy as np
>>> from entropylaw.fit.forecast.data import RunData
>>> steps = np.arange(0, 400, 10.0)
>>> y = 0.8 - 0.5 * np.exp(-steps / 80) + 0.004 * np.cos(steps)
>>> fc = forecast(RunData.from_arrays(steps, y), fit_frac=0.5, methods=["exp-saturation", "last-value"],
...               n_boot=50)
>>> fc.window_end, float(fc.at_steps[-1])
(195.0, 390.0)
>>> r = fc.methods["exp-saturation"]
>>> round(float(r.forecast["forecast"].iloc[-1]), 2), round(r.plateau, 2)
(0.8, 0.8)
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from entropylaw.errors import EntropyLawError
from entropylaw.fit import uncertainty as unc
from entropylaw.fit.forecast import calibrate as cal
from entropylaw.fit.forecast.catalog import ALL_METHODS, DECISION_BACKUPS, FALLBACK, METHODS, REGISTRY, methods_table
from entropylaw.fit.forecast.data import RunData, far_start, prior_runs as _prior_runs, window_end, with_problems
from entropylaw.fit.forecast.decide import check_decision_args as _check_decision_args
from entropylaw.fit.forecast.decide import FLOOR, decision_on, final_draws
from entropylaw.fit.forecast.log_facts import log_facts, step_seconds_upto
from entropylaw.fit.forecast.rank_flags import is_constant
from entropylaw.fit.forecast.horizon import ahead_of, to_step_of
from entropylaw.fit.forecast.schedule import lr_note
from entropylaw.fit.forecast import regimes as _regimes
from entropylaw.fit.forecast.regime_words import warnings_for
from entropylaw.fit.forecast.data_switch import data_switch
from entropylaw.fit.forecast import sweep as _sweep
from entropylaw.fit.forecast import text as _text
from entropylaw.fit.forecast.final import final_steps, gap_reason, seen_range
from entropylaw.fit.forecast.names import DEFAULT
from entropylaw.fit.window import check_window
from entropylaw.fit.forecast.option_checks import _check_where_and_how, _is_number
from entropylaw.fit.forecast.result import Forecast, MethodResult  # noqa: F401  (what forecast() returns)
from entropylaw.fit.forecast.text import GUESS_SAID
from entropylaw.fit.forecast.window_hint import longest_step, hinted
from entropylaw.fit.run import each_run, left_out_line, warn_left_out
from entropylaw.readers.dataset_guess import CONFIG_KEY as GUESSED
from entropylaw.terminal import count

__doc__ = __doc__.replace("METHODS_TABLE", methods_table())  # every registered method, never a hand-kept list
# The default is chosen by a rule fixed in advance (analysis/bench_forecast.py RULE: the lowest
# max(median / 1 point, worst / 5 points) of the final score at 15 % of the run, then the other
# ratio, ties to the simpler method), for validation scores and for training scores apart,
# recomputed by every backtest and stored beside the calibration factors.
# The stored choices are read when first asked for, not at import.
def defaults_by_kind() -> dict:
    """The default method for each kind of score ("validation", "training score")."""
    stored = cal.stored()
    return {"validation": stored.get("default_method", FALLBACK), **stored.get("default_method_by_kind", {})}


def default_method(kind: str = "validation") -> str:
    """The default method for a run's kind of score ("validation" or "training score")."""
    by_kind = defaults_by_kind()
    return by_kind.get(kind, by_kind["validation"])


# "Can I stop?" needs a curve that can change: last-value answers "now" by construction. The
# same rule among the methods that model change picks the curve the decision reads.
CALLS_CURVE = "the curve the call reads (fitted for it: not among the methods asked for)"
FLAT_NO_T90 = "no 90 % step: the score is constant in the window, with no climb to reach 90 % of"


def decision_method(kind: str = "validation") -> str:
    """The curve the decision reads for a run's kind of score."""
    stored = cal.stored()
    by_kind = {"validation": stored.get("decision_method", DECISION_BACKUPS[0]),
               **stored.get("decision_method_by_kind", {})}
    return by_kind.get(kind, by_kind["validation"])


def _build(method, conf, n_boot, seed, given, fitted):
    """``method`` built with what it needs of ``given``; ``members``: the methods in
    ``fitted`` that are not made of members themselves."""
    given = {**given, "members": [m for m in fitted.values() if "members" not in m.needs]}
    return method.build(conf, n_boot, seed, **{k: given[k] for k in method.needs})


def forecast(run: RunData, fit_frac=None, fit_steps=None, at_steps=None, horizon=None, methods=None, conf=0.9,
             prior_runs=(), prior_base=None, n_boot=200, seed=0, target=None, threshold=None,
             n_problems=None, total_steps=None, shape_prior=None, calibrated=True, step_cost=None,
             log=None, regime_rates=None, sweep=None) -> Forecast:
    """Forecast ``run`` from its window (see :mod:`entropylaw.fit.forecast.data` for windows).

    ``at_steps``: steps to forecast (after the window), or ``horizon``: N steps after the
    window's end (its whole step: a backtest's 62.7 counts from 62). Default: the run's later
    target steps when the window ends before the run does (a backtest), else its planned total
    steps where its log's config (or its run folder's: :mod:`entropylaw.readers.run_config`)
    says them, else as far ahead as the window is long. ``methods``: names from
    :data:`ALL_METHODS` (default: all whose required inputs are given: ``prior`` only with
    ``prior_runs``). Each method is handed what it declares it needs of ``prior_runs``,
    ``prior_base`` (the method a prior acts on; None: law+entropy), ``shape_prior`` and
    ``total_steps``; a method made of others is fitted after them.

    The forecast's ``decision`` says what continuing adds, stop / continue / undecided, and
    "will it reach ``target``?", from the draws of the one method asked for that models
    change (not last-value or law-ceiling), else of :func:`decision_method`, else of any
    other that ran; none: it says so (:mod:`.decide`). The gain runs to ``total_steps`` (the
    planned last step), else the planned length the log states (``log``: :func:`~.log_facts.log_facts`),
    else the score's last logged step in a backtest, else the last forecast step; ``threshold``
    (default: one binomial SE of ``n_problems``, the validation set's size, which also weighs
    the points and reads the regime; else of the benchmark the target key names,
    else the window's noise, held between 1 and 3 points); ``step_cost`` GPU-hours a step
    (default: the log's own timing, in hours). ``calibrated=False``: the methods' raw
    intervals, without the factors the backtest stored (the backtest measures them so).

    The window's **regime** (:mod:`.regimes`: take-off, instability, saturation) changes the
    forecast the output recommends (the default, or its fallback) by what runs of other
    recipes in that regime did next: ``regime_rates`` (default: those stored by the backtest).
    ``sweep``: the climb rates of other runs of the same recipe at the same point
    (``{"rates": [(c, se), ...], "recipe": name}``, as :func:`forecast_table` finds them): a
    run in take-off pools its own rate with theirs."""
    check_options(conf=conf, n_boot=n_boot)
    # what a method may ask to be handed (entropylaw.fit.forecast.methods.INPUTS); the notes are
    # the methods' lines printed under the forecast
    given = {"run": run, "prior_runs": tuple(prior_runs), "prior_base": prior_base, "shape_prior": shape_prior,
             "total_steps": total_steps, "notes": [], "methods": METHODS}
    chosen = default_method(run.target_kind)
    methods = [methods] if isinstance(methods, str) else methods  # one method named alone, not its letters
    names = list(methods) if methods else [n for n, m in REGISTRY.items() if all(given[k] for k in m.requires)]
    names = list(dict.fromkeys(chosen if n == DEFAULT else n for n in names))
    if chosen in names and FALLBACK not in names:  # where the default cannot run, the fallback is shown
        names.append(FALLBACK)
    unknown = [n for n in names if n not in REGISTRY]
    if unknown:
        raise EntropyLawError(f"unknown method {unknown[0]!r} (expected one of {', '.join([DEFAULT, *ALL_METHODS])})")
    end = window_end(run, fit_frac, fit_steps)
    # before fitting
    _check_decision_args(target, threshold, n_problems, total_steps, end, step_cost, fit_frac, run.last)
    run = with_problems(run, n_problems)
    win = run.window(end)
    if len(win.target) == 0:
        raise EntropyLawError(f"run {run.run_id!r}: the window (steps {run.origin:g}..{win.last:g}) holds no "
                              f"{run.target_kind} point; {run.describe_start()}, its first {run.target_key} "
                              f"is at step {run.target.steps[0]:g}: choose a larger `fit_frac`/`fit_steps`")
    ahead = ahead_of(run.origin, horizon, at_steps is not None)  # the forecast's last step, in words
    if horizon is not None:
        if at_steps is not None:
            raise EntropyLawError("give at most one of `at_steps` and `horizon`")
        # from the window's last whole step (a backtest's end, 60.7, put the forecast at step 1060.7)
        at_steps = [(np.floor(end) if np.floor(end) + horizon > end else end) + horizon]
    planned = total_steps or (run.config or {}).get("total_steps")
    if at_steps is None:
        later = run.target.steps[run.target.steps > end]
        if total_steps is not None and len(later) and later[-1] > total_steps:  # the table ends where the call does
            later = np.unique(np.r_[later[later <= total_steps], float(total_steps)])
            given["notes"].append(f"the log goes on past `total_steps` {total_steps:g} (to step "
                                  f"{run.target.steps[-1]:g}): forecast to step {total_steps:g}")
        if not len(later) and planned and planned > end:  # live: the run's planned last step
            at_steps = np.array([float(planned)])
            given["notes"].append(f"forecast to step {planned:g}, the run's planned total "
                                  + ("(`total_steps`)" if total_steps else "(its log's or its run's config)"))
        else:
            at_steps = later if len(later) else np.array([end + max(end - run.origin, 1.0)])
    at_steps = np.atleast_1d(np.asarray(at_steps, float))
    if (at_steps <= end).any():
        bad = float(at_steps[at_steps <= end][0])
        raise EntropyLawError(f"`at_steps` {bad:g} is not after the window's end (step {end:g}); "
                              f"{run.describe_start()}: forecast a later step")
    # a method made of the others fitted here comes after them, in the catalog's order
    order = [n for n in names if "members" not in REGISTRY[n].needs] + [n for n in REGISTRY if n in names
                                                                         and "members" in REGISTRY[n].needs]
    fitted = {}
    for name in order:
        fitted[name] = _build(REGISTRY[name], conf, n_boot, seed, given, fitted)
        fitted[name].calibrated = calibrated
        fitted[name].fit(win)
    regime, said = _regime(win, regime_rates, sweep, [fitted.get(chosen), fitted.get(FALLBACK)],
                           lr_note((log or {}).get("lr"), end, win.config))
    spacing = float(np.median(np.diff(win.target.steps))) if len(win.target) > 1 else 1.0
    fin_steps = final_steps(run.target_kind, run.origin, float(at_steps[-1]), spacing)
    seen = seen_range(win.target.values)
    results = {name: m.result(at_steps, (run.target_kind, fin_steps, win.bounds, seen)) for name, m in fitted.items()}
    if not any(r.ok for r in results.values()):
        why = "; ".join(f"{r.method}: {r.reason}" for r in results.values())
        held = count(len(win.target), f"{run.target_kind} point")
        raise EntropyLawError(f"run {run.run_id!r}: no method can forecast from the window "
                              f"(steps {run.origin:g}..{win.last:g}, {held}): {why}")
    notes = list(given["notes"]) + far_start(run, end)
    if regime["name"] != "saturation" or regime.get("sweep_note"):
        notes.append(f"regime at step {win.last:g}: {regime['name']}" + (f"; {regime['sweep_note']}"
                                                                     if regime.get("sweep_note") else ""))
    if run.target_kind != "validation" and run.target_asked:
        notes.insert(0, f"forecasting the training score ({run.target_key}) of run {run.run_id!r}, as asked (`y_key`)")
    elif run.target_kind != "validation":
        notes.insert(0, f"no validation score in run {run.run_id!r}: forecasting the training score "
                        f"({run.target_key}) instead")
    default = chosen if chosen in names else names[0]  # the recommended of the methods asked for
    if chosen in results and not results[chosen].ok and results.get(FALLBACK) \
            and results[FALLBACK].ok:
        default = FALLBACK
        notes.append(f"the default method {chosen} cannot run on this window "
                     f"({results[chosen].reason}): {FALLBACK} is recommended instead")
    note = "; ".join(notes) or None
    observed = pd.DataFrame({"step": run.target.steps, "value": run.target.values})
    decided = dict(fitted)
    curve = decision_method(run.target_kind)
    own = [n for n in names if REGISTRY[n].models_change]
    first = own[0] if len(own) == 1 else curve  # one curve asked for: its own
    # the methods the call reads before any other: one shown beside them (watch's law+entropy) stops no backup
    chain = (first, curve, chosen, FALLBACK, *DECISION_BACKUPS)
    for i, backup in enumerate((curve, *DECISION_BACKUPS)):  # fitted for the decision only, until one runs
        if i and any(decided[n].ok_ and decided[n].moves() for n in chain if n in decided):
            break
        if backup not in decided and backup in METHODS:  # a combination is not fitted for the decision alone
            decided[backup] = _build(METHODS[backup], conf, n_boot, seed, {**given, "notes": []}, {}).fit(win)
    # the call reads the chain's methods in its order whichever others are shown beside them (watch shows
    # law+entropy too, and read its gain first where the default's curve could not run; --compare read
    # joint's where none of the chain could, a call the default forecast did not make)
    decided = {n: decided[n] for n in dict.fromkeys(chain) if n in decided}
    log = log or {}
    planned = log.get("planned_steps") or (run.config or {}).get("total_steps")  # a metric, else the printed config
    # a backtest's truth is the score's last value, which a log may hold steps before its own end
    scored = float(run.target.steps[-1]) if len(run.target) and run.target.steps[-1] > end else run.last
    to = to_step_of(total_steps, planned, scored, end < run.last, float(at_steps[-1]), end, ahead)
    decision, draws = decision_on(win, decided, conf, target, threshold, n_problems, first, curve, to, step_cost,
                                  step_seconds_upto(log.get("timing"), end), log.get("timing_what"))
    read = decision.get("method")
    if read and read not in results and read in decided:  # the call's curve is shown: its numbers are on the page
        results[read] = decided[read].result(at_steps, (run.target_kind, fin_steps, win.bounds, seen))
        results[read].note = "; ".join(filter(None, [results[read].note, CALLS_CURVE]))
    point = (decision.get("final") or {}).get("expected")
    shown = fitted.get(default)
    if shown is not None and shown.ok_ and shown.name != decision.get("method"):  # what rank compares: the shown
        point, draws = final_draws(shown, run.target_kind, run.origin, to[0], spacing)
    gap = gap_reason(run.target_kind, win.target.steps, end)
    if not gap and str(decision.get("reason", "")).startswith(FLOOR):  # a curve through the floor is no forecast
        gap = f"no forecast: {decision['reason']}"
    for r in results.values():  # no width says it: the window's scores end long before the window does
        if gap and r.final:
            r.final["no_forecast"] = gap
        if r.t90 is not None and is_constant(win.target.values):  # a flat line climbs to nothing: its 90 % step
            r.t90, r.t90_ci = None, None  # was a curve fit's artefact (step 627 [627, 627] of a score stuck at 0.5)
            r.note = "; ".join(filter(None, [r.note, FLAT_NO_T90]))
    law = _text.law_reasons(run, end)
    return Forecast(run.run_id, run.target_key, run.target_kind, run.origin, end, win.last, len(win.target), conf,
                    at_steps, results, note, default=default, observed=observed, decision=decision,
                    fit_frac=fit_frac, run_last=run.last, law_verdict=_text.law_verdict(run, end, law, win.last),
                    final_steps=fin_steps, final_draws=draws, final_point=point, regime=regime, warnings=said,
                    law_reasons=law)


def _regime(win, rates, sweep, shown, lr_said=None):
    """The window's regime, pooled with its sweep where given, set on the methods the output
    shows (the default and its fallback) with what it makes them say; a take-off carried on at
    its sweep's rate says so (``carried``: rank ranks it against its sweep however wide);
    ``lr_said``: a learning rate falling after the window (:func:`~.schedule.lr_note`)."""
    regime = _regimes.classify(win)
    switch = data_switch(win.config)
    if switch:
        regime["data_switch"] = switch
    rates = cal.stored().get("regimes", {}) if rates is None else rates
    if sweep:
        regime = _sweep.pool(regime, sweep)
    if _regimes.carries_sweep(rates, regime):
        regime["carried"] = True
    said = warnings_for(regime, rates) + ([lr_said] if lr_said else [])
    guessed = (win.config or {}).get(GUESSED)
    if guessed:  # the task follows from a guess: said beside the numbers it moves
        said.append(f"{GUESS_SAID} {guessed!r} (its log and config name none): its task {win.task} sets the "
                    "rates and priors used; give `dataset` NAME to state it")
    for m in {id(m): m for m in shown}.values():
        if m is not None and getattr(m, "ok_", False) and hasattr(m, "end_"):
            m.regime_, m.regime_rates_ = regime, rates
            m.warnings_.extend(said)
            if regime["name"] == "take-off" and _regimes.takeoff_rates(rates, regime)[0]:
                m.t90_note_ = ("take-off: the forecast mixes the climb carried on at its sweep's rate with what runs "
                               "in take-off did next" if _regimes.carries_sweep(rates, regime) else
                               "take-off: the forecast mixes this method's own climb with what runs in take-off did "
                               "next" if m.models_change else
                               "take-off: the forecast of what runs in take-off did next, not this method's own")
    return regime, said


def describe_method(name: str) -> str:
    """One line on what a method (a combination included) does."""
    return getattr(REGISTRY.get(name), "description", name)


def forecast_table(df: pd.DataFrame, run_ids=None, y_key=None, x_key="entropy", prior=None, sweep=True,
                   recipes=None, none_ok=False, **kwargs) -> _text.Forecasts:
    """:func:`forecast` for every run (or ``run_ids``) of a tidy table: ``{run_id: Forecast}``
    (:class:`~entropylaw.fit.forecast.text.Forecasts`; ``str()`` is what ``entropylaw forecast`` prints).

    With several runs, a run that cannot be forecast is left out with its reason (a warning;
    ``.left_out``). ``prior``: a tidy table of finished runs for logit-drift's prior and the
    ``prior`` method (the run itself is left out of its own prior). Other keywords go to
    :func:`forecast`. ``none_ok``: no run forecast (every one left out, a lone run too) is no error
    (``rank`` beside runs that have finished).

    **A sweep informs its own runs** (``sweep=True``): runs of one recipe in ``df`` (3 or more:
    each then has 2 others; among ``run_ids`` or not) share their climb rates, each run's own
    left out of the prior it is pooled with (:func:`~.sweep.pool`). One recipe is the same task and the
    same model (and data set), as the log names them; where it names no model, the same task
    in the same folder. ``recipes``: ``{run_id: recipe}`` to say it yourself.

    >>> import numpy as np
    >>> from entropylaw import table
    >>> recs = [(s, "val/gsm8k", 0.7 - 0.4 * np.exp(-s / 60)) for s in range(0, 400, 10)]
    >>> out = forecast_table(table.from_records(recs, run_id="r"), fit_frac=0.3, methods=["exp-saturation"], n_boot=20)
    >>> round(out["r"].methods["exp-saturation"].plateau, 3)
    0.7
    """
    import entropylaw.table as table

    if isinstance(kwargs.get("methods"), str):  # one method named alone: ["default"] is said as such
        kwargs["methods"] = [kwargs["methods"]]
    check_options(**kwargs)  # once, before any run: not each run left out for a mistake of the call's
    if prior is not None and not (isinstance(prior, pd.DataFrame) and table.is_table(prior)):
        raise EntropyLawError("`prior`: expected the tidy run table from entropylaw.load (columns run_id, step, metric, "
                              f"value) of finished runs, got a {type(prior).__name__}")
    ids = list(run_ids) if run_ids is not None else table.run_ids(df)
    prior_runs = _prior_runs(prior, x_key)  # a prior run with no score is left out, said
    everyone = table.run_ids(df)  # a run of a sweep is pooled with its peers in the table, forecast or not
    parts = table.split_runs(df)  # each run's rows sliced once, not the whole table masked per run and metric
    sweeps = _sweep.sweeps(df, everyone, y_key, x_key, recipes, kwargs, parts) if sweep and len(everyone) >= 3 else {}
    one = hinted(lambda rid: forecast(RunData.from_table(parts.get(rid, df), rid, y_key=y_key, x_key=x_key),
                                      prior_runs=prior_runs, log=log_facts(parts.get(rid, df), rid),
                                      sweep=sweeps.get(rid), **kwargs), lambda rid: parts.get(rid, df),
                 kwargs.get("fit_frac"), y_key, longest_step(df))
    out, left_out = _each_run(one, ids, none_ok)
    said = None
    if list(kwargs.get("methods") or []) == [DEFAULT]:
        kinds = sorted({fc.target_kind for fc in out.values()})
        said = ", ".join(f"{default_method(k)} for {_text.KIND_PLURAL.get(k, k)}" for k in kinds)
    return _text.Forecasts(out, left_out, said)


def check_options(**options) -> None:
    """What :func:`forecast` is given that no run can change, checked once: an unknown keyword, the
    interval level, the draws, the window's bounds, the decision's numbers (``total_steps`` beyond 0;
    each run checks it against its own window)."""
    import inspect

    # forecast_table's own keywords, then forecast's (read off their signatures: no method named here)
    own = [k for k, p in inspect.signature(forecast_table).parameters.items()
           if p.kind is not inspect.Parameter.VAR_KEYWORD and k not in ("df", "run_ids")]
    known = own + [k for k in inspect.signature(forecast).parameters if k not in (*own, "run", "prior_runs", "log")]
    unknown = [k for k in options if k not in known]
    if unknown:
        raise EntropyLawError(f"unknown option `{unknown[0]}` (expected one of {', '.join(known)})")
    unc.check_conf(options.get("conf", 0.9))
    n_boot = options.get("n_boot", 200)
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 2:
        raise EntropyLawError(f"n_boot = {n_boot!r}: expected a whole number >= 2")
    for k in ("fit_frac", "fit_steps", "threshold", "target", "step_cost", "total_steps", "horizon"):
        v = options.get(k)
        if v is not None and not _is_number(v):
            raise EntropyLawError(f"`{k}` {v!r}: expected a number")
    check_window(options.get("fit_frac"), options.get("fit_steps"))
    _check_where_and_how(options)
    total = options.get("total_steps")
    if total is not None and not (np.isfinite(total) and total > 0):
        raise EntropyLawError(f"`total_steps` {total!r}: expected the run's planned last step, above 0")
    _check_decision_args(options.get("target"), options.get("threshold"), options.get("n_problems"), None, 0.0,
                         options.get("step_cost"))


def _each_run(one, run_ids: list, none_ok: bool = False) -> tuple[dict, dict]:
    """:func:`~entropylaw.fit.run.each_run`; none left is one error naming each run with why (not a
    warning a run, then an error), unless ``none_ok``: then the caller says the runs left out."""
    out, left_out = each_run(one, run_ids, alone_raises=not none_ok, warn=False)
    if not out and not none_ok:
        raise EntropyLawError(left_out_line(left_out, "no run could be forecast"))
    if not none_ok:
        warn_left_out(left_out, stacklevel=4)
    return out, left_out
