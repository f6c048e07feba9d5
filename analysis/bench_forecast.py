"""Backtest of every forecast method on every real run.

    .venv/bin/python analysis/bench_forecast.py [SOURCE...] [--ks 5,10,15,25,50]
        [--out analysis/out/bench_forecast.md] [--figure figures/forecast_backtest.png]
        [--n-boot 200] [--n-problems BENCH=N ...]

Sources default to ``data/real``, ``data/real-sizes`` and, when present, every log under
``../shared/data/real-logs`` (runs already read from ``data/real`` are not read twice;
a log that cannot be read is listed as skipped). For each run and each K (% of the run's
steps, measured from its first logged step) every method forecasts from the window alone
(:func:`entropylaw.fit.forecast.core.forecast`); it is scored on the run's later target points:

- final: |forecast - observed| at the last target point, in points (score x 100);
- last 10 %: |mean forecast - mean observed| over the run's last 10 % of target points;
- RMSE later: over every target point after the window;
- coverage: share of cases whose 90 % interval holds the final observed score;
- rank: the method's rank by final error among the methods that ran on that case.

The paper's protocol (``EarlyPrediction``: the law fitted on the same window, each later
score read off the *observed* later entropy) is reported beside them as ``paper (observed H)``;
it uses information a forecast does not have. Runs without validation are forecast on
their training score and reported in their own tables. ``prior`` uses the other runs of
the same family (model and dataset) as finished runs (leave one out).

Then the regimes (take-off, instability, saturation) on every run, ``data/`` and, where present,
the CS336 and rasbt runs of ``../shared``, leaving whole recipes out
(``bench_forecast_regimes.py``; the recipes in ``bench_forecast_runs.py``); their rates, learned
from every run, are stored in ``calibration.json`` as quantiles and counts with their provenance.

Noise floor: the binomial standard error sqrt(p (1 - p) / n) of the final validation score,
n the benchmark's number of problems (``--n-problems``, else the table ``PROBLEMS``: test
split sizes), combined over benchmarks for ``val/mean``.
"""

from __future__ import annotations

import argparse
import glob
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "analysis"))  # its tables module, also when loaded by path (tests)

from entropylaw import table  # noqa: E402
from entropylaw.errors import EntropyLawError  # noqa: E402
from entropylaw.fit.forecast import calibrate as cal  # noqa: E402
from entropylaw.fit.forecast import problems as pb  # noqa: E402
from entropylaw.fit.forecast.catalog import SIMPLER  # noqa: E402  (each method's rank, on its class)
from entropylaw.fit.forecast.core import ALL_METHODS, forecast  # noqa: E402
from entropylaw.fit.forecast.data import RunData, window_end  # noqa: E402
from entropylaw.fit.forecast.drift import learn_task_priors  # noqa: E402

from bench_forecast_tables import (PAPER, SIZES_PRIOR, bound_checks, entropy_forms, known_task_table,  # noqa: E402
                                   md_table, pivot, shown, summary, task_table)
from bench_forecast_calibration import calibrate_cases, write_calibration  # noqa: E402
from bench_forecast_figure import figure  # noqa: E402
import bench_forecast_regimes as regime_bench  # noqa: E402
import bench_forecast_runs as shared_runs  # noqa: E402
from bench_forecast_sizes import larger_model_cases, larger_model_table, size_law_tables  # noqa: E402

# test-split sizes (number of problems) of the benchmarks in the real logs
PROBLEMS = dict(pb.PROBLEMS)  # one table of benchmark sizes: entropylaw.fit.forecast.problems
PROBLEMS_SOURCE = ("GSM8K test split 1,319 problems; MATH (lighteval) test split 5,000; AIME 2024: 30; "
                   "or --n-problems")


def load_runs(sources):
    from entropylaw.readers.dispatch import load

    frames, seen, skipped = [], set(), []
    files = []
    for src in sources:
        p = Path(src)
        if p.is_dir():
            # offsets/ beside a size series holds where each value sits in its source log, not a run
            files += sorted(str(f) for f in p.rglob("*") if f.is_file() and "offsets" not in f.relative_to(p).parts
                            and f.suffix in (".parquet", ".log", ".json", ".jsonl", ".csv"))
        elif p.exists():
            files.append(str(p))
    for f in files:
        if Path(f).name.lower().startswith("readme"):
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                df = table.read(f) if f.endswith(".parquet") else load([f])[0]
        except Exception as err:  # a reader bug or an unreadable log: the benchmark goes on without it
            skipped.append(f"{f}: {type(err).__name__}: {err}")
            continue
        new = [r for r in table.run_ids(df) if r not in seen]
        seen.update(new)
        if new:
            frames.append(df[df["run_id"].isin(new)])
    return frames, skipped


def default_sources() -> list[str]:
    """The runs the backtest reads by default: ``data/``'s real runs and ``../shared``'s logs."""
    return [*(str(ROOT / "data" / d) for d in ("real", "real-sizes", "real-codegen", "real-tasks")
              if (ROOT / "data" / d).is_dir()), *glob.glob(str(ROOT.parent / "shared/data/real-logs"))]


def run_data(frames, say: bool = True) -> list:
    """``[(table, RunData)]`` of every run of ``frames`` that can be forecast (the runs the backtest
    calibrates on; one that cannot is said on stderr where ``say``)."""
    runs = []
    for df in frames:
        for rid in table.run_ids(df):
            try:
                runs.append((df, RunData.from_table(df, rid)))
            except EntropyLawError as err:
                if say:
                    print(f"skipped run {rid}: {err}", file=sys.stderr)
    return runs


def noise_floor(df, run: RunData, problems) -> float | None:
    """Binomial SE (points) of the final target value; None when n is unknown."""
    if run.target_kind != "validation" or run.bounds != (0.0, 1.0):  # a reward, not an accuracy: no binomial floor
        return None
    keys = [run.target_key]
    if run.target_key == table.VAL_MEAN:
        keys = [m for m in table.val_metrics(df, run.run_id) if m != table.VAL_MEAN]
    var = []
    for k in keys:
        n, _ = pb.problems_of(k[len(table.VAL_PREFIX):], problems)
        if n is None:
            return None
        p = float(np.clip(table.series(df, run.run_id, k).iloc[-1], 0, 1))
        var.append(p * (1 - p) / n)
    return 100 * float(np.sqrt(np.sum(var)) / len(var))


def score(pred_steps, pred, lo, hi, run: RunData, end):
    """Errors (points) of a forecast at the run's later target points."""
    later = run.target.steps > end
    ys, yv = run.target.steps[later], run.target.values[later]
    idx = np.searchsorted(pred_steps, ys)
    ok = (idx < len(pred_steps)) & (pred_steps[np.minimum(idx, len(pred_steps) - 1)] == ys)
    if not ok.any() or not ok[-1]:
        return None
    f, y = pred[idx[ok]], yv[ok]
    n10 = max(1, int(np.ceil(0.1 * len(run.target))))
    tail = ys[ok] >= run.target.steps[-n10]
    out = {"final": 100 * abs(f[-1] - y[-1]), "last10": 100 * abs(f[tail].mean() - y[tail].mean()),
           "rmse": 100 * float(np.sqrt(np.mean((f - y) ** 2)))}
    if lo is not None:  # the raw interval; calibrated leave-one-run-out in calibrate_cases
        a, b = lo[idx[ok]][-1], hi[idx[ok]][-1]
        out.update(y=y[-1], mid=f[-1], lo=a, hi=b, raw_covered=bool(a <= y[-1] <= b),
                   e=float(cal.normalized_error(y[-1], f[-1], a, b, run.bounds)))
    return out


def final_score(s, final, observed, run: RunData):
    """A training score's case scored on its final score, the mean over the run's last 5 % of
    steps (:mod:`entropylaw.fit.forecast.final`), not one batch's reward; a validation case as is."""
    if s is None or run.target_kind == "validation" or not final or observed is None:
        return s
    y, mid, lo, hi = observed, final["forecast"], final["lo"], final["hi"]
    return {**s, "final": 100 * abs(mid - y), "y": y, "mid": mid, "lo": lo, "hi": hi,
            "raw_covered": bool(lo <= y <= hi), "e": float(cal.normalized_error(y, mid, lo, hi, run.bounds))}


def paper_protocol(df, run: RunData, end, conf):
    from entropylaw.fit.early import EarlyPrediction
    from entropylaw.fit.pairing import pair

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            p = pair(df, run.run_id, y=run.target_key)
            # the window holds the steps origin .. end: the first end - origin + 1 steps
            ep = EarlyPrediction(fit_steps=end - run.origin + 1, origin=run.origin, conf=conf, warn=False).fit(p)
    except EntropyLawError as err:
        return None, str(err)
    t = ep.predicted_
    return (t["step"].to_numpy(float), t["R_pred"].to_numpy(), t["pred_lo"].to_numpy(), t["pred_hi"].to_numpy()), None


def _cases(fc, base, run, end):
    """One row per method of a forecast, scored on the run's later points."""
    rows = []
    base = {**base, "h": (float(fc.at_steps[-1]) - end) / max(end - run.origin, 1.0)}
    for name, r in fc.methods.items():
        row = {**base, "method": name, "ran": r.ok, "reason": r.reason,
               "bound_said": any("bound" in w and "search range" not in w for w in r.warnings),
               "prior_kind": (r.params or {}).get("prior_kind")}
        if r.ok:
            f = r.forecast
            s = score(f["step"].to_numpy(), f["forecast"].to_numpy(), f["lo"].to_numpy(), f["hi"].to_numpy(), run, end)
            row.update(final_score(s, r.final, fc.final_observed, run) or
                       {"ran": False, "reason": "no later point scored"})
        rows.append(row)
    return rows


def backtest(frames, ks, conf, n_boot, problems):
    """Every method on every run and window, in two protocols (column ``mode``):

    - ``loto`` (leave one task out): logit-drift's prior learned from the runs of *other* tasks
      only, as a run of a task never seen gets it; every method runs;
    - ``loro`` (leave one run out): the prior learned from every other run, as the product
      forecasts a run of a task it knows; only logit-drift (and its fallback) runs.
    """
    runs = run_data(frames)
    rows, floors = [], {}
    folder = {}  # each run's source folder: the table's run metadata read once per frame
    for df in frames:
        meta = table.runs(df)
        folder.update({r: str(Path(str(s)).parent) for r, s in zip(meta["run_id"], meta["source"])})
    for df, run in runs:
        # a recipe run at other sizes (same folder, same score, a known other size): the prior with size
        peers = [r for _, r in runs if folder[r.run_id] == folder[run.run_id] and r.run_id != run.run_id
                 and r.target_key == run.target_key and np.isfinite(r.size) and r.size != run.size]
        family = [r for _, r in runs if r.family == run.family and r.run_id != run.run_id] if run.family else []
        kin = [r for _, r in runs if r.target_kind == run.target_kind and r.run_id != run.run_id]
        priors = {"loto": learn_task_priors([r for r in kin if r.task != run.task]),
                  "loro": learn_task_priors(kin)}
        floors[run.run_id] = noise_floor(df, run, problems)
        for k in ks:
            end = window_end(run, fit_frac=k / 100)
            base = {"run": run.run_id, "task": run.task, "kind": run.target_kind, "K": k, "bounds": run.bounds}
            for mode, prior in priors.items():
                methods = None if mode == "loto" else ["logit-drift", "logit-drift+train"]
                kin_family = [r for r in family if r.task != run.task] if mode == "loto" else family
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        fc = forecast(run, fit_frac=k / 100, conf=conf, n_boot=n_boot, prior_runs=kin_family,
                                      methods=methods, shape_prior=prior, calibrated=False, regime_rates={})
                    rows += _cases(fc, {**base, "mode": mode}, run, end)
                except EntropyLawError as err:
                    rows += [{**base, "mode": mode, "method": m, "ran": False, "reason": str(err)}
                             for m in (methods or ALL_METHODS)]
            if len({r.size for r in peers}) >= 2 and np.isfinite(run.size):
                row = {**base, "mode": "given", "method": SIZES_PRIOR}
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        sp = forecast(run, fit_frac=k / 100, conf=conf, n_boot=n_boot, prior_runs=peers,
                                      methods=["logit-drift"], calibrated=False,
                                      regime_rates={}).methods["logit-drift"]
                    row.update(ran=sp.ok, reason=sp.reason)
                    if sp.ok:
                        f = sp.forecast
                        row.update(score(f["step"].to_numpy(), f["forecast"].to_numpy(), f["lo"].to_numpy(),
                                         f["hi"].to_numpy(), run, end) or {"ran": False, "reason": "no later point"})
                except EntropyLawError as err:
                    row.update(ran=False, reason=str(err))
                rows.append(row)
            smaller = [r for r in peers if r.size < run.size]
            if len({r.size for r in smaller}) >= 3:
                rows += larger_model_cases(run, smaller, k, end, conf, n_boot, base)
            pp, why = paper_protocol(df, run, end, conf)
            row = {**base, "mode": "loto", "method": PAPER, "ran": pp is not None, "reason": why}
            if pp is not None:
                row.update(score(*pp, run, end) or {"ran": False, "reason": "no later point scored"})
            rows.append(row)
    out = pd.DataFrame(rows)
    ran = out[out["ran"] & out["final"].notna()].copy()
    ran["rank"] = ran.groupby(["run", "K", "mode"])["final"].rank(method="average")
    out = out.merge(ran[["run", "K", "mode", "method", "rank"]], on=["run", "K", "mode", "method"], how="left")
    return out, floors, runs


# The rule that picks the default, fixed before the numbers it is applied to (it
# bounds the worst run as well as the median). A method is scored on what the product shows
# when it is the default: its own forecast where it runs, last-value's where it refuses.
RULE_K = 15
GOAL_MEDIAN, GOAL_WORST = 1.0, 5.0
RULE = (f"at K = {RULE_K} % of the run, on every run of one kind (validation scores and training scores apart), "
        "each method scored on what it shows as the default "
        "(its forecast where it runs, last-value's where it refuses): the lowest max(median |error| / "
        f"{GOAL_MEDIAN:g} point, worst |error| / {GOAL_WORST:g} points) wins (both goals at once), then, among "
        "those within 0.05 of it, the lowest other ratio (the worst run is often one no method forecasts, "
        "shared through the fallback); within 0.05 on both counts as tied, and a tie goes to the simpler "
        "method (order: " + ", ".join(SIMPLER) + ")")


def as_default(sub):
    """Per method, its final errors on every case with last-value's where it did not run."""
    lv = sub[sub["method"] == "last-value"].set_index("run")["final"]
    out = {}
    for m, g in sub.groupby("method"):
        own = g.set_index("run")["final"]
        out[m] = pd.concat([own[own.notna()], lv[~lv.index.isin(own[own.notna()].index)]])
    return out


def decide(res, kind="validation"):
    """The default by RULE for runs of ``kind``, and the lines that say how it was reached."""
    sub = res[(res["K"] == RULE_K) & (res["kind"] == kind) & ~res["method"].isin([PAPER, SIZES_PRIOR])]
    if sub.empty or not (sub["method"] == "last-value").any():
        return None, [f"- no {kind} run: the rule cannot be applied"]
    errs = as_default(sub)
    ratios = {m: sorted([e.median() / GOAL_MEDIAN, e.max() / GOAL_WORST], reverse=True)
              for m, e in errs.items() if len(e)}
    score = pd.Series({m: r[0] for m, r in ratios.items()})

    def pick(names):
        first = min(ratios[m][0] for m in names)
        near = [m for m in names if ratios[m][0] <= first + 0.05]
        second = min(ratios[m][1] for m in near)
        return [m for m in SIMPLER if m in near and ratios[m][1] <= second + 0.05], first, second

    tied, best, second = pick(list(ratios))
    choice = tied[0]
    curves = [m for m in ratios if m not in ("last-value", "law-ceiling")]
    curve = pick(curves)[0][0] if curves else None
    lines = [f"- rule: {RULE}.",
             f"- at K = {RULE_K} % on the {sub['run'].nunique()} {kind} runs (score; median / worst |error|, "
             "points): " + ", ".join(f"{m} {v:.2f} ({errs[m].median():.2f} / {errs[m].max():.1f})"
                                     for m, v in score.sort_values().items()),
             f"- default: **{choice}** (lowest {best:.2f}, then {second:.2f}; tied within 0.05: {', '.join(tied)})",
             f"- the stop-paying and target steps read a curve that can change: the same rule without last-value "
             f"and law-ceiling gives **{curve}**"]
    return (choice, curve), lines


def loto_rule(res) -> list[str]:
    """The default rule itself left one task out: per validation task, the method the rule picks
    on the other tasks, and its errors on the task left out (K = RULE_K)."""
    out = ["", "The rule left one task out (validation; the default picked without the task, then scored on it at "
           f"K = {RULE_K} %):"]
    val = res[res["kind"] == "validation"]
    for task in sorted(val["task"].unique()):
        pick, _ = decide(val[val["task"] != task])
        if not pick:
            out.append(f"- {task}: no other task to pick on")
            continue
        e = shown(val[(val["task"] == task) & (val["K"] == RULE_K)], pick[0])["final"]
        if e.empty:
            out.append(f"- {task}: picks {pick[0]}; no run of {task} could be forecast at K = {RULE_K} %")
            continue
        out.append(f"- {task}: picks {pick[0]}; on {task}: median {e.median():.1f}, worst {e.max():.1f} points "
                   f"({len(e)} runs)")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sources", nargs="*")
    ap.add_argument("--ks", default="5,10,15,25,50")
    ap.add_argument("--conf", type=float, default=0.9)
    ap.add_argument("--n-boot", type=int, default=200)
    ap.add_argument("--n-problems", action="append", default=[], metavar="BENCH=N")
    ap.add_argument("--out", default=str(ROOT / "analysis" / "out" / "bench_forecast.md"))
    ap.add_argument("--figure", default=str(ROOT / "figures" / "forecast_backtest.png"))
    ap.add_argument("--csv", help="also write every (run, K, method) row here")
    ap.add_argument("--no-write-calibration", dest="write_calibration", action="store_false",
                    help="do not store the default method and the calibration factors in the package")
    args = ap.parse_args(argv)
    problems = dict(PROBLEMS)
    for item in args.n_problems:
        bench, _, n = item.partition("=")
        problems[bench] = int(n)
    sources = args.sources or default_sources()
    ks = [int(k) for k in args.ks.split(",")]
    t0 = time.time()
    frames, skipped = load_runs(sources)
    # raw intervals (forecast(..., calibrated=False)): the calibration is measured here, leaving each task out (or
    # each run, for a task known to the prior)
    res, floors, runs = backtest(frames, ks, args.conf, args.n_boot, problems)
    res, factors = calibrate_cases(res, args.conf)
    # the tables below: every task left out of its own forecast (and the given-prior variant)
    everything, res = res, res[res["mode"].isin(["loto", "given"])]
    default, decision = decide(res)
    train_default, train_decision = decide(res, "training score")
    decision += loto_rule(res)
    decision += ["", "Training-score runs (the rule applied to them alone):", *train_decision]
    secs = time.time() - t0
    cmd = "python analysis/bench_forecast.py " + " ".join(argv if argv is not None else sys.argv[1:])
    lines = [f"# Forecast backtest ({len(runs)} real runs, {secs:.0f} s)", "",
             f"Command: `{cmd.strip()}`; {args.conf:.0%} intervals, {args.n_boot} bootstrap draws. Errors in points "
             "(score x 100), median over runs; in brackets the number of runs the method ran on.", ""]
    for kind in ("validation", "training score"):
        sub = res[res["kind"] == kind]
        if sub.empty:
            continue
        names = sorted(sub["run"].unique())
        lines += [f"## {kind} runs ({len(names)}): {', '.join(names)}", ""]
        if kind == "validation":
            fl = {r: floors[r] for r in names}
            lines += ["Noise floor (binomial SE of the final score, " + PROBLEMS_SOURCE + "): "
                      + ", ".join(f"{r} {v:.2f}" if v is not None else f"{r} n unknown" for r, v in fl.items()), ""]
        else:
            lines += ["No validation in these runs: the training score (the rollouts' reward) is forecast.", ""]
        for title, value, agg in (("|error| of the final score", "final", "median"),
                                  ("|error| of the mean of the last 10 % of points", "last10", "median"),
                                  ("RMSE over every later point", "rmse", "median"),
                                  ("worst |error| of the final score (any run)", "final", "max"),
                                  ("90 % interval covers the final score (calibrated leaving each task out; "
                                   "one task alone: each run)",
                                   "covered", "coverage"),
                                  ("median width of the calibrated 90 % interval (points)", "width", "median"),
                                  ("median rank by final error", "rank", "median")):
            lines += [f"### {title}", "", md_table(pivot(sub, value, agg)), ""]
    tasks = everything.groupby(["kind", "task"])["run"].nunique()
    lines += ["## Leave one task out", "",
              "Each run is forecast as a run of a task never seen: logit-drift's prior comes from the runs of other "
              "tasks only (the new-task prior where its own task is left out), and every calibration factor is "
              "measured on the other tasks' cases, each task weighing the same, never below 1 (a kind of score with "
              "one task alone, the training scores here, is calibrated leaving each run out instead). Tasks (runs): "
              + "; ".join(f"{k}: " + ", ".join(f"{t} ({n})" for t, n in g.droplevel(0).items())
                          for k, g in tasks.groupby(level=0)) + ".", ""]
    for kind, d in (("validation", default), ("training score", train_default)):
        if d and (res["kind"] == kind).any():
            lines += [f"### {kind}: the default ({d[0]}) per task and window: median / worst |error| (points) / "
                      "calibrated 90 % coverage / median width (points) (runs)", "", task_table(res, d[0], kind), ""]
    known = [t for t, n in tasks.get("validation", pd.Series(dtype=int)).items() if n >= 3]
    lines += ["### A task the prior knows (leave one run out): logit-drift as the default on "
              + ", ".join(known), "", known_task_table(everything, known), ""]
    for kind in ("validation", "training score"):
        if (res["kind"] == kind).any():
            lines += [f"## Summary, {kind} runs: median / worst |error| of the final score (points) / calibrated 90 % "
                      "coverage (each task left out; one task alone: each run) / median interval width (points) "
                      "(runs)", "", summary(res, kind), ""]
    # the regimes, leaving whole recipes out, on every run (data/ and ../shared where present)
    shared = [shared_runs.read_shared(p) for p in shared_runs.shared_sources()]
    every = regime_bench.all_runs(frames + shared)
    cases = regime_bench.regime_cases(every, regime_bench.KS)
    rates = regime_bench.learn_rates(cases)
    # stored before the tables below are measured: they forecast with the stored calibration (cal.stored),
    # which before read the one this run replaces
    if args.write_calibration:
        shape_prior = {kind: learn_task_priors([r for _, r in runs if r.target_kind == kind])
                       for kind in ("validation", "training score")}
        doc = {"default_method": default[0] if default else "last-value", "shape_prior": shape_prior,
               "default_method_by_kind": {"validation": default[0] if default else "last-value",
                                          "training score": train_default[0] if train_default else "last-value"},
               "decision_method_by_kind": {"validation": default[1] if default and default[1] else "power",
                                           "training score": train_default[1] if train_default and train_default[1]
                                           else "power"},
               "decision_method": default[1] if default and default[1] else "power", "rule": RULE, "conf": args.conf,
               "factors": factors,
               "command": cmd.strip(), "runs": len(runs), "ks": ks,
               "run_ids": sorted(run.run_id for _, run in runs),
               "regimes": {**rates, "provenance": regime_bench.provenance(cases, shared)}}
        write_calibration(ROOT, doc)
        print(f"wrote {cal.PATH}", file=sys.stderr)
        cal.stored.cache_clear()
    regime_res = regime_bench.recipe_backtest(every, cases, [k for k in ks if k in (15, 25, 50)] or ks, args.n_boot)
    lines += regime_bench.tables(regime_res, cases, rates)
    lines += size_law_tables(frames)
    lines += larger_model_table(everything)
    lines += entropy_forms(runs, ks)
    lines += bound_checks(res)
    lines += ["## Decision", "", *decision, "",
              *[f"Calibration factors, {kind} (interval half-width multipliers on the bounded scale, on all runs): "
                + ", ".join(f"{m} {f['factor']:.2f}" for m, f in fs.items()) for kind, fs in factors.items()], ""]
    per_run = res[(res["K"] == 15) & res["ran"]].pivot_table(index="run", columns="method", values="final")
    per_run = per_run[[m for m in [*ALL_METHODS, PAPER] if m in per_run.columns]].round(1)
    lines += ["## Per run at K = 15 % (|error| of the final score, points)", "",
              md_table(per_run.fillna("-").astype(str), first="run"), ""]
    def reasons(v):
        kinds = pd.Series([str(x).split(" (")[0].split(": the")[0] for x in v]).value_counts()
        return "; ".join(f"{why} ({n} run{'s' if n > 1 else ''})" for why, n in kinds.items())

    why = res[(res["K"] == 15) & ~res["ran"]].groupby("method")["reason"].apply(reasons)
    if len(why):
        lines += ["## Why methods did not run (K = 15 %)", ""] + [f"- {m}: {r}" for m, r in why.items()] + [""]
    if skipped:
        lines += ["## Sources skipped", ""] + [f"- {s}" for s in skipped] + [""]
    text = "\n".join(lines)
    print(text)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text + "\n")
    if args.csv:
        everything.to_csv(args.csv, index=False)
    figure(res, floors, args.figure, {"validation": default[0] if default else None,
                                      "training score": train_default[0] if train_default else None})
    print(f"\nwrote {args.out} and {args.figure}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
