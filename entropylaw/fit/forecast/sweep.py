"""A sweep informs its own runs: several runs of one recipe forecast together (a directory, a
list) share their climb rates, each run left out of the prior it is pooled with (partial
pooling).

One **recipe** is the same task and the same model (and data set), as the logs name them;
where a log names no model, the same task in the same folder (:func:`recipe_of`); a caller may
say it (``forecast_table(..., recipes={run: name})``). A sweep starts together, so its runs are
at the same point: each run's climb rate (the late half of its window, on the logit scale,
:func:`~.regimes.climb`) is pooled with the others' at the same point (:func:`pool`), and the
forecast says so.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

import entropylaw.table as table
from entropylaw.errors import EntropyLawError
from entropylaw.fit.forecast.data import RunData, window_end, with_problems
from entropylaw.fit.forecast.regimes import classify
from entropylaw.fit.robust import mad_sigma
from entropylaw.terminal import some_names

MIN_OTHERS = 2  # a run pools with 2 other runs of its recipe or more


def recipe_of(df: pd.DataFrame, run: RunData, sources=None) -> str:
    """A run's recipe: its task and model (and data set) as the log names them; without a
    model, its task and the folder it was read from.

    >>> recs = [(s, "val/math", 0.1) for s in range(5)]
    >>> df = table.from_records(recs, run_id="a", model="Qwen2.5-Math-1.5B", source="/runs/a.log")
    >>> recipe_of(df, RunData.from_table(df, "a"))
    'math, Qwen2.5-Math-1.5B'
    """
    meta = table.runs(df[df["run_id"] == run.run_id]).iloc[0]
    task = run.task or run.target_key
    if str(meta["model"]):
        return f"{task}, {meta['model']}" + (f"/{meta['dataset']}" if str(meta["dataset"]) else "")
    if sources is None:
        sources = table.runs(df)["source"].astype(str).tolist()
    return f"{task} in {_sweep_folder(sources, str(meta['source'])) or 'one folder'}"


def _sweep_folder(sources, source: str) -> str:
    """The folder a run's sweep lies in: its file's folder, or, where no other run's source
    (``sources``: every run's) comes from that folder (a run folder of its own:
    ``runs/<name>/metrics.jsonl``, W&B's ``wandb/offline-run-*/``), the folder that holds it.

    >>> _sweep_folder(["/s/a/metrics.jsonl", "/s/b/metrics.jsonl"], "/s/a/metrics.jsonl")
    '/s'
    >>> _sweep_folder(["/s/a.log", "/s/b.log"], "/s/a.log")
    '/s'
    """
    folder = source.rsplit("/", 1)[0] if "/" in source else ""
    shared = sum(s.rsplit("/", 1)[0] == folder for s in sources if "/" in s)
    return folder.rsplit("/", 1)[0] if folder and shared <= 1 and "/" in folder else folder


def sweeps(df, ids, y_key, x_key, recipes, kwargs, parts=None) -> dict:
    """Per run of a recipe with 3 runs or more: the others' climb rates at the same point
    (``parts``: each run's rows, :func:`~entropylaw.table.split_runs`, where the caller has them)."""
    stats, names = {}, {}
    sources = table.runs(df)["source"].astype(str).tolist()
    parts = parts or {}
    for rid in ids:
        rows = parts.get(rid, df)
        try:
            run = with_problems(RunData.from_table(rows, rid, y_key=y_key, x_key=x_key), kwargs.get("n_problems"))
            end = window_end(run, kwargs.get("fit_frac"), kwargs.get("fit_steps"))
        except EntropyLawError:
            continue
        names[rid] = (recipes or {}).get(rid) or recipe_of(rows, run, sources)
        win = run.window(end)
        regime = classify(win)
        if regime["name"] == "take-off" or regime.get("takeoff"):
            stats[rid] = (regime["c"], regime["c_se"])
    out = {}
    for rid, name in names.items():
        peers = [r for r, n in names.items() if n == name and r != rid]
        if len(peers) >= MIN_OTHERS:
            out[rid] = {"recipe": name, "rates": [stats[r] for r in peers if r in stats], "runs": len(peers),
                        "with": [r for r in peers if r in stats]}
    return out


def pool(regime, sweep, min_sd=0.05) -> dict:
    """Partial pooling of the climb rate with the other runs of a sweep (``sweep["rates"]``:
    their ``(c, se)`` at the same point, the run itself left out): their median and robust
    spread ``sd`` (at least ``min_sd``) are a Gaussian prior on this run's rate, combined with its
    own by precision, its own standard error taken as at least ``sd``. The regime then says so
    (``sweep_note``); a run not in take-off, or with fewer than 2 others in take-off, is left as it is.

    >>> r = pool({"name": "take-off", "c": 1.0, "c_se": 0.01}, {"rates": [(0.5, 0.1), (0.7, 0.1), (0.6, 0.1)]})
    >>> round(r["pooled_c"], 3), r["sweep_runs"]
    (0.8, 3)
    """
    rates = [c for c, _ in sweep.get("rates", ())]
    out = dict(regime)
    n, runs = len(rates), sweep.get("runs", len(rates))
    what = (f"forecast with {runs} other run{'s' if runs != 1 else ''} of this sweep "
            f"({sweep.get('recipe', 'one recipe')})")
    if n < MIN_OTHERS or "c" not in regime or regime["name"] != "take-off":
        return out  # nothing pooled: nothing said
    m, sd = float(np.median(rates)), max(mad_sigma(np.asarray(rates)), min_sd)
    # the window's own rate foretells the later climb no better than the sweep's spread (on the CS336
    # sweep, its correlation with the rate the run went on at is -0.20 at 15 %, -0.04 at 25 %):
    # it weighs at most as one more run of the sweep would
    se = max(regime["c_se"], sd)
    prec = 1 / se ** 2 + 1 / sd ** 2
    pooled = (regime["c"] / se ** 2 + m / sd ** 2) / prec
    out.update(pooled_c=float(pooled), sweep_rate=[m, sd], sweep_runs=n, sweep_recipe=sweep.get("recipe"),
               sweep_with=list(sweep.get("with", ())))
    out["sweep_note"] = (f"{what}: its climb rate {regime['c']:.2f} pooled with the {n} taking off (median "
                         f"{m:.2f}, spread {sd:.2f}) to {pooled:.2f}")
    return out


def sweep_lines(forecasts, alone: str = "`sweep=False`") -> list[str]:
    """One line per recipe whose runs among ``forecasts`` (``{run_id: Forecast}``) were forecast
    as one sweep (:func:`pool`): which runs, that their take-off climbs share a rate learned from
    each other, and ``alone``, how to forecast each alone (the caller's words). A run's forecast
    changes with the other runs read beside it: the output says so first.

    >>> class F: regime = {"sweep_note": "...", "sweep_recipe": "math", "sweep_with": ["b", "c"]}
    >>> sweep_lines({"a": F()}, "--no-sweep")[0].split(":")[0]
    'forecast as one sweep (math)'
    """
    groups: dict = {}
    for rid, fc in forecasts.items():
        regime = getattr(fc, "regime", None) or {}
        if regime.get("sweep_note"):
            runs = groups.setdefault(regime.get("sweep_recipe") or "one recipe", [])
            runs += [r for r in (rid, *regime.get("sweep_with", ())) if r not in runs]
    return [f"forecast as one sweep ({recipe}): {some_names(runs, 6)} share a take-off climb rate, each run's "
            f"learned from the others' (not its own); {alone} forecasts each alone" for recipe, runs in groups.items()]
