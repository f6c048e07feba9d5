"""Backtest of the decisions: the call (stop / continue / undecided) and ``rank``, on real runs.

    .venv/bin/python analysis/bench_decide.py [--fracs 0.15,0.25,0.5] [--n-boot 200]
        [--leave-out recipe|run|none] [--out analysis/out/bench_decide.md]

Each run is forecast with the regimes' rates (take-off, instability) learned without its recipe
(``--leave-out recipe``, the default: a recipe never seen), as ``analysis/bench_forecast.py``
measures them (``bench_forecast_regimes.py``); ``run``: without the run alone (a new run of a
recipe the rates know, ``analysis/out/bench_decide_recipe_known.md``); ``none``: the package's
stored rates, which hold the run itself (a leak, for comparison only).

**The call.** Every real run with a validation score (``data/real``'s veRL runs, ``data/real-sizes``,
``data/real-codegen``, ``data/real-tasks`` and, when ``../shared`` is there, the CS336 grid's
reference CSVs and the rasbt runs, whose percent scores the loader reads as fractions) is forecast from
its first 15, 25 and 50 % of steps by the default method, the call read off the forecast's
decision (:mod:`entropylaw.fit.forecast.decide`), and scored on what the run then did: its
*realised gain* is the final score as logged minus the last validation score in the window.

- wrong stop: the call was stop, and the run then gained more than the threshold;
- wrong continue: the call was continue, and the run then gained less than the threshold;
- share called: stop or continue, of every (run, window) pair.

**rank.** On the real sweeps (the CS336 grid's complete runs, the rasbt runs, the TRL sweeps in
``data/real``), at 25 and 50 %: the pick
(``Ranking.top``: the highest expected final score, among the runs with a forecast where they
are half the sweep or more) and how far its final score ended
below the best run's; the pruned runs and those of them that ended within 2 points of the best
(wrong prunes). Against picking the run that is best now (its last validation score, or a
training score's mean over the window's last 5 points) and against the median rule (Optuna's
``MedianPruner``: prune a run below the median of its peers at the same point).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "analysis"))  # the forecast backtest's modules, also when loaded by path (tests)

import entropylaw as el  # noqa: E402
from entropylaw import table  # noqa: E402
from entropylaw.errors import EntropyLawError  # noqa: E402
from entropylaw.fit.forecast import sweep  # noqa: E402
from entropylaw.fit.forecast.core import DEFAULT, forecast, forecast_table  # noqa: E402
from entropylaw.fit.forecast.data import RunData  # noqa: E402
from entropylaw.fit.forecast.log_facts import log_facts  # noqa: E402
from entropylaw.fit.forecast.rank import rank  # noqa: E402

import bench_forecast_regimes as regime_bench  # noqa: E402
import bench_forecast_runs as shared_runs  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"
NEAR = 0.02  # a pruned run that ends within 2 points of the best was pruned wrongly


def rasbt() -> pd.DataFrame:
    """The rasbt runs with entropy (``7_*``; ch06 repeats 7_3's validation without entropy), read
    by the loader, which reads their percent ``eval_acc`` as a fraction."""
    return el.load(*sorted(str(p) for p in (SHARED / "real-rasbt").glob("7_*_metrics.csv")), warn=False)


def validation_sets() -> dict:
    """{group: run table} of the runs with a validation score."""
    out = {}
    real = el.load(str(ROOT / "data/real"), warn=False)
    verl = [r for r in table.run_ids(real) if any(str(m).startswith("val/") for m in
                                                  real.loc[real["run_id"] == r, "metric"].unique())]
    out["veRL (data/real)"] = real[real["run_id"].isin(verl)]
    for name in ("real-sizes", "real-codegen", "real-tasks"):
        out[f"data/{name}"] = el.load(str(ROOT / "data" / name), warn=False)
    cs336 = SHARED / "real-cs336-wandb" / "reference"
    if cs336.is_dir():
        out["CS336 grid (shared)"] = el.load(*sorted(str(p) for p in cs336.glob("*.csv")), warn=False)
    if (SHARED / "real-rasbt").is_dir():
        out["rasbt (shared)"] = rasbt()
    return {k: v for k, v in out.items() if v is not None and len(v)}


def left_out_rates(leave_out: str = "recipe"):
    """``run_id -> the regimes' rates it is forecast with``, learned as ``analysis/bench_forecast.py``
    stores them (every real run at the same windows) without the run's recipe (``leave_out``
    "recipe": a recipe never seen) or without the run alone ("run": a new run of a recipe the
    rates know, its sweep's other runs included)."""
    from bench_forecast import default_sources, load_runs

    frames, _ = load_runs(default_sources())
    shared = [shared_runs.read_shared(p) for p in shared_runs.shared_sources()]
    cases = regime_bench.regime_cases(regime_bench.all_runs(frames + shared), regime_bench.KS)
    by = regime_bench.loro_rates(cases) if leave_out == "recipe" else regime_bench.loro_run_rates(cases)
    said = set()

    def rates_of(run_id, source):
        rid = run_id.removesuffix("_metrics")  # the loader names a rasbt run after its file, the cases without
        key = shared_runs.recipe_of(run_id, source) if leave_out == "recipe" else rid
        if key not in by and key not in said:
            said.add(key)
            print(f"  {run_id}: its {leave_out} is not among the regimes' cases (a run too short to learn from): "
                  "forecast without regime rates", file=sys.stderr)
        return by.get(key, {})
    return rates_of


def forecasts(df, frac, n_boot, rates_of=None):
    """The default method's forecasts of every run of ``df`` from its first ``frac`` of steps, as
    ``forecast_table`` makes them (a sweep's runs pooled), each with the regime rates
    ``rates_of(run_id, source)`` (:func:`left_out_rates`; None: the stored rates, which hold every
    run's own recipe)."""
    if rates_of is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return forecast_table(df, methods=[DEFAULT], fit_frac=frac, n_boot=n_boot)
    meta = table.runs(df)
    ids = list(meta["run_id"])
    kw = {"methods": [DEFAULT], "fit_frac": frac, "n_boot": n_boot}
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pooled = sweep.sweeps(df, ids, None, "entropy", None, kw) if len(ids) >= 3 else {}
        for rid, src in zip(ids, meta["source"]):
            try:
                out[rid] = forecast(RunData.from_table(df, rid), log=log_facts(df, rid), sweep=pooled.get(rid),
                                    regime_rates=rates_of(rid, src), **kw)
            except EntropyLawError as err:
                print(f"  at {frac:.0%}, {rid} left out: {err}", file=sys.stderr)
    if not out:
        raise EntropyLawError("no run could be forecast")
    return out


def now_value(fc) -> float:
    """The last score in the window (a training score: the mean of its last 5 points)."""
    obs = fc.observed
    inside = obs[obs["step"] <= fc.window_end]["value"].to_numpy(float)
    return float(inside[-1]) if fc.target_kind == "validation" else float(np.mean(inside[-5:]))


def call_cases(sets: dict, fracs, n_boot: int, rates_of=None) -> pd.DataFrame:
    rows = []
    for group, df in sets.items():
        for frac in fracs:
            try:
                fcs = forecasts(df, frac, n_boot, rates_of)
            except EntropyLawError as err:
                print(f"  {group} at {frac:.0%}: {err}", file=sys.stderr)
                continue
            for rid, fc in fcs.items():
                d, final = fc.decision or {}, fc.final_observed
                if fc.target_kind != "validation" or final is None:
                    continue
                realised = final - now_value(fc)
                rows.append({"group": group, "run": rid, "frac": frac, "call": d.get("call"),
                             "threshold": d.get("threshold"), "expected": (d.get("gain") or {}).get("expected"),
                             "lo": (d.get("gain") or {}).get("lo"), "hi": (d.get("gain") or {}).get("hi"),
                             "realised": realised, "point": d.get("point"), "open": bool(d.get("no_forecast"))})
    return pd.DataFrame(rows)


def call_table(cases: pd.DataFrame) -> list[str]:
    lines = ["| window | pairs | stop | wrong stops | continue | wrong continues | undecided | no call | called |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for frac, g in [*cases.groupby("frac"), ("all", cases)]:
        stop, cont = g[g["call"] == "stop"], g[g["call"] == "continue"]
        wrong_stop = int((stop["realised"] > stop["threshold"]).sum())
        wrong_cont = int((cont["realised"] < cont["threshold"]).sum())
        called = len(stop) + len(cont)
        label = frac if frac == "all" else f"{100 * frac:g} %"
        lines.append(f"| {label} | {len(g)} | {len(stop)} | {wrong_stop} | {len(cont)} | {wrong_cont} | "
                     f"{int((g['call'] == 'undecided').sum())} | {int(g['call'].isna().sum())} | "
                     f"{100 * called / max(len(g), 1):.0f} % |")
    pts = cases[cases["point"].notna()]
    thr = pts["threshold"] / pts["point"]
    none = int(cases["threshold"].isna().sum())
    inside = float(np.mean((cases["realised"] >= cases["lo"]) & (cases["realised"] <= cases["hi"])))
    opened = cases[(cases["call"] == "continue") & cases.get("open", pd.Series(False, index=cases.index))]
    lines += ["", f"Threshold, scores in [0, 1]: {thr.min():.2f} to {thr.max():.2f} points "
              f"(median {thr.median():.2f}); "
              f"{len(cases) - len(pts) - none} pairs of a score in [-1, 1] have the window's noise, "
              "held between 1 and 3 % "
              f"of its range; {none} pair{'s' if none != 1 else ''} had no method that models change (no call).",
              f"Continue calls with an open end (no forecast of where the run ends: the gain's lower bound alone "
              f"clears the threshold): {len(opened)}, "
              f"of which wrong {int((opened['realised'] < opened['threshold']).sum())}.",
              f"Realised gain between the gain's 90 % bounds (an 80 % interval): {100 * inside:.0f} % of {len(cases)} "
              "pairs (the realised gain is of two observed scores, the window's last and the final, each with its "
              "evaluation's noise; the gain's bounds are of the expected score, without it)."]
    return lines


def sweeps() -> dict:
    """{name: run table} of the real sweeps."""
    real = el.load(str(ROOT / "data/real"), warn=False)
    ids = table.run_ids(real)
    out = {"TRL qwen2.5-7b exp1a (data/real)": real[real["run_id"].isin([r for r in ids if "exp1a" in r])],
           "TRL qwen3.5-9b (data/real)": real[real["run_id"].isin([r for r in ids if "qwen3.5-9b" in r])]}
    cs336 = SHARED / "real-cs336-wandb" / "reference"
    if cs336.is_dir():
        df = el.load(*sorted(str(p) for p in cs336.glob("*.csv")), warn=False)
        last = df.groupby("run_id", observed=True)["step"].max()
        out["CS336 grid, complete runs (shared)"] = df[df["run_id"].isin(last[last >= 50].index)]
    if (SHARED / "real-rasbt").is_dir():
        out["rasbt (shared)"] = rasbt()
    return out


def rank_cases(fracs, n_boot: int, rates_of=None) -> list[dict]:
    rows = []
    for name, df in sweeps().items():
        for frac in fracs:
            fcs = forecasts(df, frac, n_boot, rates_of)
            r = rank(fcs)
            final = {rid: fc.final_observed for rid, fc in fcs.items()}
            now = {rid: now_value(fc) for rid, fc in fcs.items()}
            best = max(v for v in final.values() if v is not None)
            top = r.top
            pick_now = max(now, key=now.get)
            med = float(np.median(list(now.values())))
            median_pruned = [k for k, v in now.items() if v < med]
            pruned = [x["run_id"] for x in r.rows if x["prune"]]
            rows.append({"sweep": name, "frac": frac, "runs": len(fcs),
                         "top": None if top is None else best - final[top],
                         "now": best - final[pick_now], "pruned": len(pruned),
                         "wrong": sum(final[k] >= best - NEAR for k in pruned),
                         "median_pruned": len(median_pruned),
                         "median_wrong": sum(final[k] >= best - NEAR for k in median_pruned)})
    return rows


def rank_table(rows) -> list[str]:
    lines = ["| sweep | window | runs | top pick below best | best-now below best | pruned (wrong) | "
             "median rule pruned (wrong) |", "|---|---|---:|---:|---:|---:|---:|"]
    for x in rows:
        top = "none" if x["top"] is None else f"{100 * x['top']:.1f}"
        lines.append(f"| {x['sweep']} | {100 * x['frac']:g} % | {x['runs']} | {top} | "
                     f"{100 * x['now']:.1f} | {x['pruned']} ({x['wrong']}) | {x['median_pruned']} "
                     f"({x['median_wrong']}) |")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fracs", default="0.15,0.25,0.5")
    ap.add_argument("--rank-fracs", default="0.25,0.5")
    ap.add_argument("--n-boot", type=int, default=200)
    ap.add_argument("--out", default=str(ROOT / "analysis/out/bench_decide.md"))
    ap.add_argument("--leave-out", choices=("recipe", "run", "none"), default="recipe",
                    help="what each run's regime rates are learned without: its recipe (a recipe never seen; the "
                         "default), the run alone (a new run of a recipe the rates know), or nothing (the package's "
                         "stored rates, which hold the run itself: a leak, for comparison only)")
    args = ap.parse_args(argv)
    t0 = time.time()
    fracs = [float(f) for f in args.fracs.split(",")]
    sets = validation_sets()
    rates_of = None if args.leave_out == "none" else left_out_rates(args.leave_out)
    cases = call_cases(sets, fracs, args.n_boot, rates_of)
    ranks = rank_cases([float(f) for f in args.rank_fracs.split(",")], args.n_boot, rates_of)
    rates = {"none": "the regimes' rates stored in the package, learned from every run, the run itself included "
                     "(a leak)",
             "run": "each run forecast with the regimes' rates learned without it (its recipe's other runs in: a "
                    "new run of a recipe the rates know)",
             "recipe": "each run forecast with the regimes' rates learned without its recipe (a recipe never seen; "
                       "`analysis/bench_forecast_regimes.py`, as the forecast backtest leaves recipes out)"}
    lines = ["# Backtest of the decisions", "",
             f"`python analysis/bench_decide.py --fracs {args.fracs} --n-boot {args.n_boot}"
             f"{'' if args.leave_out == 'recipe' else ' --leave-out ' + args.leave_out}` "
             f"({time.time() - t0:.0f} s); {rates[args.leave_out]}. Runs with validation: "
             + ", ".join(f"{k} ({table.run_ids(v).__len__()})" for k, v in sets.items()) + ".", "",
             "## The call", "", *call_table(cases), "", "## rank", "",
             "Points below the best run's final score (score x 100); pruned: runs pruned, in brackets those that "
             f"ended within {100 * NEAR:g} points of the best.", "", *rank_table(ranks), "",
             "## Every call", "", "| group | run | window | call | gain [90 %] | realised | threshold |",
             "|---|---|---|---|---|---:|---:|"]
    for c in cases.itertuples(index=False):
        scaled = bool(c.point) and c.point == c.point  # a score in [0, 1]: points; else the score's units

        def f(v, sign=True):
            if v is None or v != v:
                return "-"
            return (f"{v / c.point:+.1f}" if sign else f"{v / c.point:.1f}") if scaled else f"{v:+.3f} u"
        gain = "-" if c.expected is None or c.expected != c.expected else f"{f(c.expected)} [{f(c.lo)}, {f(c.hi)}]"
        call = c.call if isinstance(c.call, str) else "no call"
        lines.append(f"| {c.group} | {c.run} | {100 * c.frac:g} % | {call} | {gain} | "
                     f"{f(c.realised)} | {f(c.threshold, False)} |")
    lines.append("")
    lines.append("Gains and thresholds in points (score x 100); `u`: a score in [-1, 1], in its own units.")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:40]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
