"""One refresh of ``entropylaw watch``: read a growing log and fit and forecast its run, as plain data.

>>> snap = el.snapshot("train.log")                      # doctest: +SKIP
>>> snap["ceiling"], snap["decision"]["call"]             # doctest: +SKIP
"""

from __future__ import annotations

import warnings

import numpy as np

import entropylaw.table as table
from entropylaw.api.reading import load, row_accounts
from entropylaw.errors import EntropyLawError
from entropylaw.fit.forecast.core import DEFAULT, forecast_table
from entropylaw.fit.run import fit_run
from entropylaw.readers.accounts import IngestReport


def snapshot(path, *, run=None, methods=None, horizon=None, total_steps=None, target=None, n_boot=200,
             step_cost=None, n_problems=None, **load_options) -> dict:
    """Read ``path`` and fit it: the fields of one refresh (raises EntropyLawError). ``run``: the
    run to follow (default: the last); ``methods`` (default: the default and law+entropy),
    ``horizon`` steps ahead (default: as far as the log is long), ``total_steps`` the planned
    last step the gain runs to (passed: the forecast step instead), ``target`` a score to
    reach, ``step_cost`` GPU-hours a step, ``n_problems`` the validation set's size (default: read
    off the scores, else known benchmarks by name); ``load_options`` as for :func:`entropylaw.load`."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = load(str(path), warn=False, **load_options)
        ids = table.run_ids(df)
        if not ids:
            raise EntropyLawError(f"{path}: no runs yet")
        if run and run not in ids:
            raise EntropyLawError(f"`run` {run}: not in {path} (runs: {', '.join(ids[:8])})")
        rid = run or ids[-1]
        out = {"run_id": rid, "n_runs": len(ids), "rows": int((df["run_id"] == rid).sum())}
        # a growing log's cut last line is normal here; a damaged region is not: said at each refresh
        out["damaged"] = [f"{r.source}: {d}" for r in map(IngestReport.from_dict, row_accounts(df)) for d in r.damage()]
        ent = table.series(df, rid, table.ENTROPY) if table.ENTROPY in set(df["metric"]) else None
        out["last_step"] = int(df.loc[df["run_id"] == rid, "step"].max())
        out["entropy_now"] = None if ent is None or not len(ent) else float(ent.iloc[-1])
        out["entropy_points"] = 0 if ent is None else int(len(ent))
        try:
            fit = fit_run(df, rid, compare=False, warn=False)
        except EntropyLawError as err:
            out["fit_error"] = str(err)
            fit = None
        if fit is not None:
            y_key = fit.meta_.get("y_key")
            score = table.series(df, rid, y_key)
            out.update(a=fit.a_, b=fit.b_, ceiling=fit.ceiling_, ceiling_ci=tuple(fit.ceiling_ci_), r2=fit.r2_,
                       trust=fit.trust_, reasons=list(fit.trust_reasons_), points=int(fit.n_), y_key=y_key,
                       score_kind=fit.meta_.get("score_kind"), score_now=float(score.iloc[-1]))
            methods = methods or [DEFAULT, "law+entropy"]
            horizon = horizon or max(out["last_step"] - float(score.index.min()), 1.0)
            try:
                total = total_steps
                if total is not None and total <= out["last_step"]:  # the run went past its plan: go on
                    total = out["last_step"] + horizon
                    out["total_note"] = (f"`total_steps` {total_steps:g} has passed (step {out['last_step']}): "
                                         f"the gain to go runs to the forecast step {total:g} instead")
                fc = forecast_table(df, [rid], y_key=y_key, methods=methods, n_boot=max(n_boot, 2),
                                    at_steps=np.array([out["last_step"] + horizon]), target=target,
                                    total_steps=total, step_cost=step_cost, n_problems=n_problems)[rid]
                out["decision"] = fc.decision
                rows = fc.table()
                out["forecast_step"] = out["last_step"] + horizon
                out["forecast"] = [(r.method, r.forecast if r.ok else None, (r.lo, r.hi) if r.ok else None,
                                    r.reason) for r in rows.itertuples(index=False)]
            except EntropyLawError as err:
                out["forecast_error"] = str(err)
    del caught  # the reader's row accounts: a growing log cut mid-line is normal here
    return out
