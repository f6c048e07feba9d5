"""Collapse at every size and the size law refit (data/lab/README.md quotes this output).

    python analysis/lab_collapse.py data/lab/collapse/lab_collapse.parquet

Per baseline run: entropy at the start (mean of steps 1-5) and the end (mean of the last
10 steps), the drop in %, final sampled validation accuracy (mean of the last 3
evaluations). Then ``entropylaw scale`` (``el.scale``) on every run (a, b, ceiling per run
and their lines in log10 N over the runs whose law fit is good or weak: a run the law does
not describe is named and left out, as ``scale`` does) and on all runs but the largest
size, predicting at the largest size's N: does each held-out run's a, b and ceiling land
inside the 95 % prediction interval?
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import entropylaw as el  # noqa: E402
from entropylaw import table  # noqa: E402

# the intervals this script (and the README) quote; el.scale's own default is 0.9
CONF = 0.95


def outcomes(t: pd.DataFrame) -> pd.DataFrame:
    meta = table.runs(t).set_index("run_id")
    rows = []
    for run_id in table.run_ids(t):
        h = table.series(t, run_id, "entropy")
        h = h[h.index >= 1]
        vals = [v for v in table.val_metrics(t, run_id) if v != "val/mean"]
        acc = table.series(t, run_id, vals[0]) if vals else pd.Series(dtype=float)
        rows.append({"run_id": run_id, "model": meta.loc[run_id, "model"],
                     "N": meta.loc[run_id, "n_params_nonembedding"], "seed": meta.loc[run_id, "seed"],
                     "steps": int(h.index.max()), "H_start": float(h.iloc[:5].mean()),
                     "H_end": float(h.iloc[-10:].mean()), "acc_0": float(acc.iloc[0]) if len(acc) else float("nan"),
                     "acc_end": float(acc.iloc[-3:].mean()) if len(acc) else float("nan")})
    out = pd.DataFrame(rows)
    out["drop_pct"] = 100 * (1 - out["H_end"] / out["H_start"])
    return out.sort_values(["N", "seed"])


def left_out(runs: pd.DataFrame, law, fits: pd.DataFrame) -> str:
    """"\nleft out: RUN (trust)" for the runs the coefficient law did not use: their law fit is
    not good or weak (the law does not describe them), so the text says so instead of hiding them."""
    out = [f"{r} ({fits.loc[r, 'trust']})" for r in runs["run_id"] if r not in law.labels_]
    return f"\nleft out: {', '.join(out)}" if out else ""


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    path = argv[0]
    # both el.scale calls fit the same small runs: say each fit warning once, not once per call
    warnings.simplefilter("once", el.EntropyLawWarning)
    t = table.read(path)
    runs = outcomes(t)
    print("| run | N non-emb | steps | H start | H end | drop % | acc step 0 | acc end |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for _, r in runs.iterrows():
        print(f"| {r.run_id} | {r.N:,.0f} | {r.steps} | {r.H_start:.3f} | {r.H_end:.3f} | {r.drop_pct:.0f} "
              f"| {r.acc_0:.3f} | {r.acc_end:.3f} |")
    # the public API, not `entropylaw scale --json`: its keys moved once already (n_runs, lines)
    full = el.scale(t, list(runs["run_id"]), conf=CONF)
    fits = full.runs.set_index("run_id")
    print("\n| run | a | b | ceiling b-a | law fit |")
    print("|---|---:|---:|---:|---|")
    for run_id in runs["run_id"]:
        if run_id in fits.index:
            f = fits.loc[run_id]
            print(f"| {run_id} | {f.a:.3f} | {f.b:.3f} | {f.ceiling:.3f} | {f.trust} |")
    law = full.coefficient_law
    if law is None:
        print(f"\nno coefficient law: {full.coefficient_refused}")
        return 0
    print(f"\n{len(law.labels_)} of {len(runs)} runs, y = intercept + slope * log10 N:{left_out(runs, law, fits)}")
    loo = law.leave_one_out_ if law.leave_one_out_ is not None else pd.DataFrame()
    for name, line in law.lines_.items():
        inside = int(loo[f"{name}_inside"].fillna(False).astype(bool).sum()) if len(loo) else 0
        print(f"- {name}: intercept {line['intercept']:.3f}, slope {line['slope']:.3f} per decade, residual sd "
              f"{line['s']:.3f}; leave-one-out inside {100 * CONF:.0f} % PI: {inside}/{len(loo)}")
    largest = runs["N"].max()
    held = runs[runs["N"] == largest]
    train = runs[runs["N"] < largest]
    if train["N"].nunique() < 2:
        print("\nfewer than two smaller sizes: no leave-largest-out prediction")
        return 0
    part = el.scale(t, list(train["run_id"]), conf=CONF)
    if part.coefficient_law is None:
        print(f"\nno leave-largest-out prediction: {part.coefficient_refused}")
        return 0
    # SizeLaw.predict: a and b carry intervals too (ScaleResult.predict gives the ceiling's only, clipped)
    pred = part.coefficient_law.predict(float(largest))
    used = part.coefficient_law.labels_
    print(f"\nLeave the largest size out (fit on {len(used)} runs of {train['N'].nunique()} sizes, predict "
          f"N = {largest:,.0f}):{left_out(train, part.coefficient_law, fits)}\n")
    print(f"| coefficient | predicted | {100 * CONF:.0f} % PI | held-out runs (inside?) |")
    print("|---|---:|---|---|")
    for name in ("a", "b", "ceiling"):
        lo, hi = pred[f"{name}_lo"], pred[f"{name}_hi"]
        obs = [f"{fits.loc[r, name]:.3f} ({'yes' if lo <= fits.loc[r, name] <= hi else 'no'})"
               for r in held["run_id"] if r in fits.index]
        print(f"| {name} | {pred[name]:.3f} | {lo:.3f} .. {hi:.3f} | {', '.join(obs)} |")
    lo, hi = part.bounds
    if pred["ceiling_lo"] < lo or pred["ceiling_hi"] > hi:
        print(f"(the ceiling's interval leaves the score's range [{lo:g}, {hi:g}]; `entropylaw scale` shows it "
              "clipped to that range)")
    fs = part.predict(float(largest))
    if fs["final_score"] is not None:
        obs = ", ".join(f"{fits.loc[r, 'final_score']:.3f}" for r in held["run_id"] if r in fits.index)
        print(f"\nFinal-score law (no entropy needed) at N = {largest:,.0f}: {fs['final_score']:.3f}, "
              f"{100 * CONF:.0f} % PI {fs['final_score_lo']:.3f} .. {fs['final_score_hi']:.3f}\n"
              f"held-out final scores (last evaluation): {obs}")
        if fs.get("no_prediction"):  # the CLI's own verdict on an interval this wide
            print(f"entropylaw scale: {fs['no_prediction']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
