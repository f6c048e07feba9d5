"""One refresh of ``entropylaw watch``: read a growing log and fit and forecast its run, as plain data.

>>> snap = el.snapshot("train.log")                      # doctest: +SKIP
>>> snap["ceiling"], snap["decision"]["call"]             # doctest: +SKIP
"""

from __future__ import annotations

import os
import warnings

import entropylaw.table as table
from entropylaw.api.reading import load, row_accounts, target_as_read, target_range_line, unit_lines
from entropylaw.errors import EntropyLawError, EntropyLawWarning, RowsDroppedWarning
from entropylaw.fit.forecast.core import DEFAULT, forecast_table
from entropylaw.fit.forecast.horizon import NO_PLAN
from entropylaw.fit.forecast.problems import check_problems
from entropylaw.fit.forecast.sweep import sweep_lines
from entropylaw.fit.run import fit_run
from entropylaw.readers.accounts import IngestReport, source_files
from entropylaw.readers.leveldb_log import TRUNCATED
from entropylaw.readers.verl_jsonl import CUT_LAST
from entropylaw.terminal import not_found


def _last_written(df, ids) -> str:
    """The run whose source file changed last: a live sweep's running one (the last by name was often a
    finished run, or one not started); the last read where no file says when it was written."""
    meta = table.runs(df)
    written = {}
    for rid, source in zip(meta["run_id"], meta["source"]):
        times = []
        for file in source_files(source):  # a run of several files (processes, segments): the last written
            try:
                times.append(os.path.getmtime(file))
            except (OSError, TypeError, ValueError):
                continue
        if times:
            written[rid] = max(times)
    return max(ids, key=lambda r: (written.get(r, float("-inf")), ids.index(r)))


def snapshot(path, *, run=None, methods=None, horizon=None, total_steps=None, target=None, n_boot=200,
             step_cost=None, n_problems=None, sweep=True, **load_options) -> dict:
    """Read ``path`` and fit it: the fields of one refresh (raises EntropyLawError). ``run``: the
    run to follow (default: the last); ``methods`` (default: the default and law+entropy),
    ``horizon`` steps ahead (default: as far as the log is long), ``total_steps`` the planned
    last step the gain runs to (passed: the forecast step instead), ``target`` a score to
    reach (a percent, above 1, where the scores were read from percent: :func:`~.reading.target_as_read`),
    ``step_cost`` GPU-hours a step, ``n_problems`` the validation set's size (default: read
    off the scores, else known benchmarks by name); ``sweep``: the run pooled with the other runs of its
    recipe read beside it, as :func:`entropylaw.forecast_all` pools them (False: alone); ``load_options``
    as for :func:`entropylaw.load`."""
    check_problems(n_problems)  # a user's mistake, not a state of the log: raised, as forecast raises it
    if not isinstance(path, (str, os.PathLike)):  # a table already read has no file to follow
        raise EntropyLawError(f"`path`: expected the path of a log file or a run directory to follow, got a "
                              f"{type(path).__name__}" + (" (el.forecast reads a table already loaded)"
                                                         if hasattr(path, "columns") else ""))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = load(str(path), warn=False, **load_options)
        # what the reader did to the values (a percent read as a fraction, a sweep's runs made to share a unit)
        # is said at each refresh, as `forecast` says it: a growing log's cut line is a row account, not one of these
        read_notes = list(dict.fromkeys(str(w.message) for w in caught
                                          if issubclass(w.category, EntropyLawWarning)
                                          and not issubclass(w.category, RowsDroppedWarning)))
        ids = table.run_ids(df)
        if not ids:
            raise EntropyLawError(f"{path}: no runs yet")
        if run and run not in ids:
            raise EntropyLawError(f"`run` ({path}): {not_found('run', run, ids)}")
        rid = run or _last_written(df, ids)
        asked, (target, target_said) = target, target_as_read(df, target)
        out = {"run_id": rid, "n_runs": len(ids), "rows": int((df["run_id"] == rid).sum()), "target_note": target_said,
               "read_notes": read_notes + unit_lines(df)}
        outside = target_range_line(df, target, asked, runs=[rid])
        if outside:  # a target the score cannot take: a user's mistake, said before any fit (`target_error`)
            out["target_error"] = outside
            return out
        if len(ids) > 1:  # one run is followed: the others are not dropped unsaid
            out["runs_note"] = (f"{len(ids)} runs read; following {rid!r}"
                                + ("" if run else ", the one whose file was written last (--run ID follows another)"))
        # rows dropped and a damaged region are said at each refresh, as `summary` says them; a text log's cut
        # last line is normal here, and a W&B or TensorBoard record cut at the file's end is said as what it likely
        # is, the record being written (read whole at the next refresh), apart from damage inside a file
        reports = [IngestReport.from_dict(d) for d in row_accounts(df)]
        said = [f"{r.source}: {d}" for r in reports for d in r.damage()]
        out["damaged"] = [d for d in said if not _being_written(d)]
        out["cut_at_end"] = [f"{d} (the record being written: read whole at the next refresh if the file grows)"
                             for d in said if _being_written(d)]
        out["dropped"] = [line for r in reports if (line := _drops(r))]
        ent = table.series(df, rid, table.ENTROPY) if table.ENTROPY in set(df["metric"]) else None
        mine = df[df["run_id"] == rid]
        # the last step of entropy, score or validation, as `forecast` reads where the log ends: a line cut while
        # written may hold only a timing of the next step
        metric = mine["metric"].astype(str)
        roles = mine[metric.isin([table.ENTROPY, table.SCORE]) | metric.str.startswith("val/")]
        out["last_step"] = int((roles if len(roles) else mine)["step"].max())
        out["entropy_now"] = None if ent is None or not len(ent) else float(ent.iloc[-1])
        out["entropy_points"] = 0 if ent is None else int(len(ent))
        try:
            fit = fit_run(df, rid, compare=False, warn=False)
        except EntropyLawError as err:
            out["fit_error"] = str(err)
            fit = None
        y_key = None
        if fit is not None:
            y_key = fit.meta_.get("y_key")
            score = table.series(df, rid, y_key)
            out.update(a=fit.a_, b=fit.b_, ceiling=fit.ceiling_, ceiling_ci=tuple(fit.ceiling_ci_), r2=fit.r2_,
                       trust=fit.trust_, reasons=list(fit.trust_reasons_), points=int(fit.n_), y_key=y_key,
                       score_kind=fit.meta_.get("score_kind"), score_now=float(score.iloc[-1]))
        # the forecast needs no law (no entropy, too few pairs): made as `forecast` makes it, its own score
        _forecast(out, df, rid, y_key, methods or [DEFAULT, "law+entropy"], n_boot=n_boot, horizon=horizon,
                  target=target, total_steps=total_steps, step_cost=step_cost, n_problems=n_problems, sweep=sweep)
    del caught  # the reader's row accounts: a growing log cut mid-line is normal here
    return out


def _forecast(out: dict, df, rid: str, y_key, methods, *, n_boot, horizon, target, total_steps, step_cost,
              n_problems, sweep=True) -> None:
    """The forecast and its decision into ``out``, as ``forecast`` on the same log: to the planned
    last step it states, else as many steps ahead as logged; or ``forecast_error``."""
    try:
        total = total_steps
        if total is not None and total <= out["last_step"]:  # the run went past its plan: go on
            total = None  # the forecast's own last step, named as such
            out["total_note"] = (f"`total_steps` {total_steps:g} "
                                 f"{'is reached' if total_steps == out['last_step'] else 'has passed'} "
                                 f"(step {out['last_step']}): the gain to go runs to the forecast's last step instead")
        fc = forecast_table(df, [rid], y_key=y_key, methods=methods, n_boot=max(n_boot, 2), horizon=horizon,
                            target=target, total_steps=total, step_cost=step_cost, n_problems=n_problems,
                            sweep=sweep)[rid]
    except EntropyLawError as err:
        out["forecast_error"] = str(err)
        return
    out["decision"] = fc.decision
    gain = (fc.decision or {}).get("gain") or {}
    if out.get("total_note") and f": {NO_PLAN}" in gain.get("to_step_source", ""):
        # the forecast was given no total (the one given is behind the run): its "no planned last step ...;
        # give `total_steps`" would ask for what the user gave
        ahead = gain["to_step_source"].split(f": {NO_PLAN}")[0]
        gain = {**gain, "to_step_source": f"{ahead}: the run is at or past `total_steps` {total_steps:g}, the "
                                          "planned last step given; give a later one if it goes on"}
        out["decision"] = {**fc.decision, "gain": gain}
    out["sweep_lines"] = sweep_lines({rid: fc})  # the other runs read beside it change its forecast: said
    out.update(default_method=fc.default, regime=fc.regime_name, regime_why=(fc.regime or {}).get("why"),
               forecast_warnings=list(fc.warnings or []), law_on_window=fc.law_verdict)
    out["forecast_step"] = float(fc.at_steps[-1])
    if fc.target_kind != "validation" and fc.final_steps is not None and len(fc.final_steps) > 1:
        out["forecast_from"] = float(fc.final_steps[0])  # the final score's first step: a mean from there
    out["forecast"] = [_row(name, r) for name, r in fc.methods.items()]
    out.setdefault("y_key", fc.target_key)


def _row(name, r) -> tuple:
    """(method, forecast, (lo, hi), why not): a method's forecast of the final score (as ``forecast``
    shows it: a training score's mean over the last steps to the forecast step); an interval
    that says nothing (:func:`~entropylaw.fit.forecast.final.no_forecast_reason`) is none, as in
    ``forecast``, and its reason stands for it."""
    if not r.ok:
        return name, None, None, r.reason
    refused = (r.final or {}).get("no_forecast")
    if refused:
        return name, None, None, refused
    f, fin = r.forecast.iloc[-1], r.final or {}  # a training score's final: its mean over the last steps, as forecast
    return name, float(fin.get("forecast", f["forecast"])), (float(fin.get("lo", f["lo"])),
                                                             float(fin.get("hi", f["hi"]))), None


def _being_written(damage: str) -> bool:
    """Whether a damage note is of one region, a record cut at the file's end: a binary log's record
    caught while its trainer writes it (read whole at the next refresh)."""
    return " in 1 region at byte " in damage and f"({TRUNCATED})" in damage


def _drops(report) -> str | None:
    """The rows a source lost, as ``summary`` says them, but a growing log's line or record cut while
    being written (normal while a trainer writes: read whole at the next refresh)."""
    if report.skipped:
        return f"{report.source}: skipped ({report.skipped})"
    lost = report.lost_text(ignore=(CUT_LAST, *(k for k in report.dropped if TRUNCATED in k)))
    return f"{report.source}: {lost}" if lost else None
