"""The forecast's regimes measured leaving whole recipes out (analysis/bench_forecast.py).

Every real run (``data/`` and, where present, ``../shared``: CS336, rasbt) at K % of its steps:
its regime at the window's end (:func:`entropylaw.fit.forecast.regimes.classify`) and what it did
next (:func:`~entropylaw.fit.forecast.regimes.case`). The regimes' rates are learned from the cases
of every other recipe (:func:`loro_rates`); each run is then forecast these ways, as one command
forecasts a sweep (the other runs of its recipe, at the same K, pooled with it):

- ``regimes``: the recommended forecast (the default, last-value where it cannot run), with the
  regime's rates learned without the run's recipe, and its sweep;
- ``regimes, recipe known``: the same with the rates learned from every run but this one (as
  the package forecasts a new run of a recipe its stored rates know);
- ``recipe known, task not named``: the same rates, the run read as a key that names no
  benchmark (``val/accuracy`` with no data set): its task's own rates and prior are not used,
  its model's take-off rates are where 3 runs of the model are among the cases;
- ``recipe known, nothing named``: the same, the model not known either (every recipe's rates);
- ``today``: the same forecast without regimes or sweep (what main printed before);
- ``last-value``: the last observed value, its interval the window's noise.
"""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
import pandas as pd

from entropylaw import table
from entropylaw.errors import EntropyLawError
from entropylaw.fit.forecast import regimes as rg
from entropylaw.fit.forecast.core import forecast
from entropylaw.fit.forecast.data import RunData, window_end
from entropylaw.fit.forecast.takeoff import said

from bench_forecast_runs import recipe_of  # noqa: E402

WAYS = ("regimes", "regimes, recipe known", "recipe known, task not named", "recipe known, nothing named", "today",
        "last-value")
KS = (10, 15, 25, 50)  # the windows (% of a run's steps) the stored rates are learned at
KNOWN = "regimes, recipe known"
UNNAMED = "recipe known, task not named"
NAMELESS = "recipe known, nothing named"
GENERIC_TASK = "accuracy"  # a key that names no benchmark (val/accuracy, no data set): no task, no benchmark size


def all_runs(frames):
    """``[(recipe, RunData)]`` of every run of the tables ``frames`` (one run each, or several)."""
    out = []
    for df in frames:
        meta = table.runs(df)
        for rid, src in zip(meta["run_id"], meta["source"]):
            try:
                out.append((recipe_of(rid, src), RunData.from_table(df, rid)))
            except EntropyLawError:
                continue
    return out


def regime_cases(runs, ks) -> pd.DataFrame:
    """One row per (run, K): its regime at the window's end, and what it did next."""
    rows = []
    for recipe, run in runs:
        final, final_step = float(run.target.values[-1]), float(run.target.steps[-1])
        for k in ks:
            end = window_end(run, fit_frac=k / 100)
            win = run.window(end)
            if len(win.target) < 2 or end >= final_step:
                continue
            regime = rg.classify(win)
            got = rg.case(win, regime, final, final_step) or {}
            rows.append({"recipe": recipe, "run": run.run_id, "kind": run.target_kind, "K": k, "task": run.task,
                         "model": run.model,
                         "regime": regime["name"], "c": regime.get("c"), "c_se": regime.get("c_se"),
                         "takeoff": regime["name"] == "take-off" or bool(regime.get("takeoff")),
                         **{key: got.get(key) for key in ("rho", "reached", "r", "collapsed", "fold", "floor_reached")}})
    return pd.DataFrame(rows)


def _learnable(cases) -> list[dict]:
    """Cases as :func:`~entropylaw.fit.forecast.regimes.learn` reads them: take-off from
    validation scores (a training reward's batch noise is no take-off), instability from both."""
    out = []
    for c in cases.to_dict("records"):
        d = {"recipe": c["recipe"], "run": c["run"]}
        if c["rho"] is not None and np.isfinite(c["rho"]) and c["regime"] == "take-off":
            d.update(rho=c["rho"], task=c["task"], model=c.get("model") or "", reached=c["reached"], fold=c.get("fold"))
        if c["r"] is not None and np.isfinite(c["r"]):
            d.update(r=c["r"], collapsed=bool(c["collapsed"]))
        if c.get("floor_reached") is not None and np.isfinite(c["floor_reached"]):
            d.update(floor_reached=c["floor_reached"])
        if len(d) > 2:
            out.append(d)
    return out


def learn_rates(cases) -> dict:
    """The regimes' rates from every case (what the package stores)."""
    return rg.learn(_learnable(cases))


def loro_rates(cases) -> dict:
    """``{recipe: rates learned from every other recipe}``."""
    return {rec: rg.learn(_learnable(cases[cases["recipe"] != rec])) for rec in cases["recipe"].unique()}


def loro_run_rates(cases) -> dict:
    """``{run: rates learned from every other run}`` (its recipe's other runs included)."""
    return {r: rg.learn(_learnable(cases[cases["run"] != r])) for r in cases["run"].unique()}


def _shown(fc, run):
    """(forecast, lo, hi, observed) of the final score the forecast recommends."""
    r = fc.methods.get(fc.default) or next(iter(fc.methods.values()))
    if not r.ok:
        return None
    if run.target_kind != "validation" and r.final and fc.final_observed is not None:
        return r.final["forecast"], r.final["lo"], r.final["hi"], fc.final_observed
    f = r.forecast.iloc[-1]
    return float(f["forecast"]), float(f["lo"]), float(f["hi"]), float(run.target.values[-1])


def recipe_backtest(runs, cases, ks, n_boot=200) -> pd.DataFrame:
    """Every run at every K, each way of :data:`WAYS` (module docstring)."""
    rates, known = loro_rates(cases), loro_run_rates(cases)
    rows = []
    by = {(c["run"], c["K"]): c for c in cases.to_dict("records")}
    for recipe, run in runs:
        for k in ks:
            case = by.get((run.run_id, k))
            if case is None:
                continue
            peers = [by.get((r.run_id, k)) for rec, r in runs if rec == recipe and r.run_id != run.run_id]
            peers = [p for p in peers if p is not None]
            sweep = {"recipe": recipe, "runs": len(peers),
                     "rates": [(p["c"], p["c_se"]) for p in peers if p["takeoff"]]} if len(peers) >= 2 else None
            for way in WAYS:
                kw = {"methods": ["last-value" if way == "last-value" else "default"]}
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        fc = forecast(replace(run, task=GENERIC_TASK, target_key="val/" + GENERIC_TASK,
                                              model=run.model if way == UNNAMED else "")
                                      if way in (UNNAMED, NAMELESS) else run,
                                      fit_frac=k / 100, n_boot=n_boot,
                                      regime_rates=(rates.get(recipe, {}) if way == "regimes" else
                                                    known.get(run.run_id, {}) if way in (KNOWN, UNNAMED, NAMELESS)
                                                    else {}),
                                      sweep=sweep if way.startswith(("regimes", "recipe known")) else None, **kw)
                    got = _shown(fc, run)
                except EntropyLawError:
                    got = None
                row = {"recipe": recipe, "run": run.run_id, "kind": run.target_kind, "K": k,
                       "regime": case["regime"], "way": way, "ran": got is not None}
                if got:
                    mid, lo, hi, y = got
                    span = 100 / ((run.bounds[1] - run.bounds[0]) if run.bounds else 1.0)
                    row.update(error=span * abs(mid - y), covered=bool(lo <= y <= hi), width=span * (hi - lo),
                               warned=any("collapse risk" in w for w in (fc.warnings or [])))
                    d = fc.decision or {}
                    inside = run.target.values[run.target.steps <= fc.window_end]
                    row.update(call=d.get("call"), threshold=d.get("threshold"),
                               realised=float(y - inside[-1]) if len(inside) else np.nan)
                rows.append(row)
    return pd.DataFrame(rows)


def _cell(g):
    g = g[g["ran"]]
    if g.empty:
        return "-"
    return (f"{g['error'].median():.1f} / {g['error'].max():.1f} / {g['covered'].sum()} of {len(g)} / "
            f"{g['width'].median():.1f}")


def _calls(g) -> str:
    g = g[g["ran"]]
    if g.empty:
        return "-"
    stop, cont = g[g["call"] == "stop"], g[g["call"] == "continue"]
    return (f"{100 * (len(stop) + len(cont)) / len(g):.0f} % / {len(cont)} ("
            f"{int((cont['realised'] < cont['threshold']).sum())}) / {len(stop)} "
            f"({int((stop['realised'] > stop['threshold']).sum())})")


def tables(res, cases, rates) -> list[str]:
    """The markdown of the section: per regime, per way, per K; the CS336 sweep; the stored rates."""
    ks = sorted(res["K"].unique())
    out = ["## Regimes, leaving whole recipes out", "",
           "Each run's regime at the window's end (take-off, instability, saturation; "
           "`entropylaw/fit/forecast/regimes.py`), its rates learned from the other recipes only, and the run "
           "forecast with the other runs of its recipe at the same point (a sweep forecast together). Ways: "
           "`regimes` (the recommended forecast with its regime and sweep), `regimes, recipe known` (rates learned "
           "from every other run), `recipe known, task not named` (the same, the run's key naming no benchmark: its "
           "model's take-off rates where 3 runs of the model are known), `recipe known, nothing named` "
           "(the same, "
           "the model not known either), `today` (the same without regimes or sweep), "
           "`last-value`. Cells: median / worst |error| of the final score (points) / intervals holding it / "
           "median width (points).", ""]
    recipes = cases.groupby("recipe")["run"].nunique()
    out += ["Recipes (runs): " + "; ".join(f"{r} ({n})" for r, n in recipes.items()) + ".", ""]
    val = res[res["kind"] == "validation"]
    for title, sub in (("validation scores, every recipe", val),
                       (f"the CS336 sweep ({val[val['recipe'].str.startswith('cs336')]['run'].nunique()} runs of one "
                        "recipe forecast together; the stand-in for a sweep of a new recipe, and with `recipe "
                        "known` for a sweep of a recipe like it)", val[val["recipe"].str.startswith("cs336")]),
                       ("validation scores of GSM8K (data/)", val[val["run"].isin(
                           cases[cases["run"].str.contains("gsm8k") & ~cases["run"].str.contains("math")]["run"])]),
                       ("training scores (TRL)", res[res["kind"] != "validation"])):
        if sub.empty:
            continue
        out += [f"### {title}", "", "| regime | way | " + " | ".join(f"{k} %" for k in ks) + " |",
                "|---|---|" + "---|" * len(ks)]
        for regime in ("all", *rg.REGIMES):
            part = sub if regime == "all" else sub[sub["regime"] == regime]
            if part.empty:
                continue
            for way in WAYS:
                w = part[part["way"] == way]
                out.append(f"| {regime} | {way} | " + " | ".join(_cell(w[w["K"] == k]) for k in ks) + " |")
        out.append("")
    cs = val[val["recipe"].str.startswith("cs336") & (val["way"] != "last-value")]
    if not cs.empty and "call" in cs:
        out += ["### The call on the CS336 sweep, by way", "",
                "Cells: share of (run, window) pairs given a call (stop or continue) / continues (wrong: the run then "
                "gained less than the threshold) / stops (wrong: it gained more). The way `recipe known, nothing "
                "named` is a sweep of this recipe whose log names neither task nor model (a custom trainer's "
                "`answer_accuracy`, no config).", "",
                "| way | " + " | ".join(f"{k} %" for k in ks) + " |", "|---|" + "---|" * len(ks)]
        for way in WAYS[:-1]:
            out.append(f"| {way} | " + " | ".join(_calls(cs[(cs["way"] == way) & (cs["K"] == k)]) for k in ks) + " |")
        out.append("")
    warned = res[(res["way"] == "regimes") & (res["regime"] == "instability")]
    if len(warned):
        out += [f"Collapse risk warned on {int(warned['warned'].sum())} of {len(warned)} instability cases (where "
                "the other recipes give fewer than 3 such cases, the warning says that no rates are stored and the "
                "interval is not widened).", ""]
    out += ["Stored rates (every recipe): " + describe_rates(rates), ""]
    return out


def describe_rates(rates) -> str:
    parts = []
    if "take-off" in rates:
        t = rates["take-off"]
        parts.append(f"take-off: {said(t['rho'][10], went=True)} (5-95 %: {said(t['rho'][1])} to "
                     f"{said(t['rho'][19])}; {t['cases']} windows, {t['runs']} runs, {len(t['recipes'])} recipes)")
        for by in ("tasks", "models"):
            for name, g in (t.get(by) or {}).items():
                parts.append(f"take-off of {by[:-1]} {name}: {said(g['rho'][10], went=True)} (5-95 %: "
                             f"{said(g['rho'][1])} to {said(g['rho'][19])}; {g['cases']} windows, "
                             f"{g['runs']} runs)")
    if "instability" in rates:
        i = rates["instability"]
        parts.append(f"instability: {i['collapsed']} of {i['cases']} windows collapsed ({i['collapsed_runs']} of "
                     f"{i['runs']} runs, {len(i['recipes'])} recipes), kept level r median {i['r'][10]:.2f}, "
                     f"5 % {i['r'][1]:.2f}")
    if "floor" in rates:
        f = rates["floor"]
        parts.append(f"on the floor after a collapse: {f['stayed']} of {f['cases']} windows stayed there ({f['runs']} "
                     f"runs, {len(f['recipes'])} recipes), 95 % of the range reached {f['reached'][19]:.2f}")
    return "; ".join(parts) or "none"


def provenance(cases, shared) -> str:
    """Where the stored rates come from, in words (stored beside them in calibration.json)."""
    n = cases.groupby("recipe")["run"].nunique()
    cs336 = int(n[[r for r in n.index if r.startswith("cs336")]].sum())
    return (f"learned by analysis/bench_forecast.py from {int(n.sum())} real runs of {len(n)} recipes at 10, 15, 25 "
            f"and 50 % of their steps: data/ (shipped) and, from ../shared ({len(shared)} files), {cs336} CS336 runs "
            "(no licence: only these fitted quantiles and counts are stored, never the runs) and rasbt's runs "
            "(Apache-2.0, eval_acc read as a fraction); recipes: " + ", ".join(f"{r} ({k})" for r, k in n.items()))
