"""Measure the findings of the committed lab sweep (data/lab/README.md quotes this output).

    python analysis/lab_findings.py data/lab/lab_runs.parquet > /tmp/findings.md

- baseline runs (no intervention): token-mean policy entropy at the start (mean of steps
  1-5) and the end (mean of the last 10 steps), the drop in %, the sampled validation
  accuracy (val/<task>, mean@4 at T = 1) at step 0, its maximum and its final value
  (mean of the last 3 evaluations), and the greedy accuracy at step 0 and at the end;
- the entropy-law fit of each baseline run (``entropylaw fit``: a, b, ceiling, R^2) and the
  early prediction (``entropylaw predict --fit-frac 0.25``: RMSE over the later points);
- coefficients vs size (``entropylaw scale`` over the GRPO baselines);
- per algorithm and intervention at one size: final entropy against the GRPO baseline of
  the same size and seed, and final accuracy.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import entropylaw as el  # noqa: E402
from entropylaw import table  # noqa: E402
from entropylaw.errors import EntropyLawError  # noqa: E402

# the intervals the README quotes; el.scale's own default is 0.9
CONF = 0.95


def api(call, *args, **kwargs) -> dict:
    """``call(...).to_dict()``, or ``{"error": message}``: a run the law cannot fit is a row of
    the table, not the end of the script. The public API, not the CLI's JSON: the script broke
    when ``--only`` became ``--run`` and ``scale --json`` moved its keys."""
    try:
        return call(*args, **kwargs).to_dict()
    except EntropyLawError as err:
        return {"error": str(err)}


def run_stats(t: pd.DataFrame, run: str, val: str, greedy: str) -> dict:
    ent = table.series(t, run, "entropy")
    acc = table.series(t, run, val)
    grd = table.series(t, run, greedy)
    h0, h1 = ent.iloc[:5].mean(), ent.iloc[-10:].mean()
    return {"run": run, "H_start": h0, "H_end": h1, "H_last50": ent.iloc[-50:].mean(),
            "drop_pct": 100 * (h0 - h1) / h0,
            "acc0": acc.iloc[0], "acc_max": acc.max(), "acc_end": acc.iloc[-3:].mean(),
            "greedy0": grd.iloc[0], "greedy_end": grd.iloc[-3:].mean()}


def main(path: str) -> None:
    # fit, predict and scale refit the same runs: say each fit warning once
    warnings.simplefilter("once", el.EntropyLawWarning)
    t = table.read(path)
    meta = table.runs(t).set_index("run_id")
    val = next(m for m in table.val_metrics(t) if m != "val/mean")
    task = val.split("/", 1)[1]
    greedy = f"val-aux/{task}/acc/greedy"
    base = [r for r in meta.index if meta.loc[r, "algorithm"] == "grpo"]
    print(f"## Baseline GRPO runs ({val} = sampled accuracy mean@4 at T = 1)\n")
    print("| run | N non-emb | H start | H end | drop % | acc step 0 | acc max | acc end | greedy 0 | greedy end |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    stats = {}
    for r in sorted(base, key=lambda r: (meta.loc[r, "n_params_nonembedding"], r)):
        s = stats[r] = run_stats(t, r, val, greedy)
        print(f"| {r} | {meta.loc[r, 'n_params_nonembedding']:,.0f} | {s['H_start']:.3f} | {s['H_end']:.3f} | "
              f"{s['drop_pct']:.0f} | {s['acc0']:.3f} | {s['acc_max']:.3f} | {s['acc_end']:.3f} | "
              f"{s['greedy0']:.3f} | {s['greedy_end']:.3f} |")
    print("\n## Entropy-law fit per baseline run (entropylaw fit / predict --fit-frac 0.25)\n")
    print("| run | n | a | b | ceiling b-a | R^2 | RMSE | early-fit RMSE on later points | final-step error "
          "| law fit |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in sorted(base, key=lambda r: (meta.loc[r, "n_params_nonembedding"], r)):
        f = api(el.fit, t, run=r)
        p = api(el.predict, t, r, fit_frac=0.25)
        if "error" in f:
            print(f"| {r} | fit failed: {f['error']} |")
            continue
        pe = "n/a" if "error" in p else f"{p['rmse_predicted']:.3f}"
        fe = "n/a" if "error" in p else f"{p['final_error']:+.3f}"
        print(f"| {r} | {f['n']} | {f['a']:.3f} | {f['b']:.3f} | {f['ceiling']:.3f} | {f['r2']:.2f} | "
              f"{f['rmse']:.3f} | {pe} | {fe} | {f['trust']} |")
    print("\n## Does the covariance track the measured entropy change? (Pearson r over the steps)\n")
    print("| run | r(cov/response_level, actor/entropy_delta) | r(cov/token_mean, actor/entropy_delta) |")
    print("|---|---:|---:|")
    for r in sorted(base, key=lambda r: (meta.loc[r, "n_params_nonembedding"], r)):
        w = table.wide(t, r, ["cov/response_level", "cov/token_mean", "actor/entropy_delta"]).dropna()
        c1 = np.corrcoef(w["cov/response_level"], w["actor/entropy_delta"])[0, 1]
        c2 = np.corrcoef(w["cov/token_mean"], w["actor/entropy_delta"])[0, 1]
        print(f"| {r} | {c1:+.2f} | {c2:+.2f} |")
    print("\n## Coefficients vs size (entropylaw scale over the GRPO baselines)\n")
    try:
        sc = el.scale(t, base, conf=CONF)
    except EntropyLawError as err:
        sc = None
        print(f"scale failed: {err}")
    law = sc.coefficient_law if sc is not None else None
    if sc is not None and law is None:
        print(f"no coefficient law: {sc.coefficient_refused}")
    elif law is not None:
        trust = sc.runs.set_index("run_id")["trust"]
        out = [f"{r} ({trust[r]})" for r in base if r not in law.labels_]
        # a run the law does not describe has no a, b to scale: name it rather than drop it silently
        note = f"\nleft out: {', '.join(out)}" if out else ""
        print(f"{len(law.labels_)} of {len(base)} runs, fits of y = intercept + slope * log10 of non-embedding "
              f"parameters{note}\n")
        print("| coefficient | intercept | slope per decade | residual sd | "
              f"leave-one-out inside {100 * CONF:.0f} % PI |")
        print("|---|---:|---:|---:|---:|")
        loo = law.leave_one_out_ if law.leave_one_out_ is not None else pd.DataFrame()
        for name in ("a", "b", "ceiling"):
            line = law.lines_[name]
            inside = int(loo[f"{name}_inside"].fillna(False).astype(bool).sum()) if len(loo) else 0
            print(f"| {name} | {line['intercept']:.3f} | {line['slope']:.3f} | {line['s']:.3f} | "
                  f"{inside}/{len(loo)} |")
    print("\n## Algorithms and interventions at one size (final = mean of the last 10 steps / 3 evals)\n")
    others = [r for r in meta.index if r not in base]
    sizes = {meta.loc[r, "model"] for r in others}
    print("| run | H end | baseline H end (same size, seed) | kept entropy above baseline? | H last 50 | "
          "baseline H last 50 | acc end | baseline acc end |")
    print("|---|---:|---:|---|---:|---:|---:|---:|")
    for r in sorted(others):
        s = run_stats(t, r, val, greedy)
        ref = next((b for b in base if meta.loc[b, "model"] == meta.loc[r, "model"]
                    and meta.loc[b, "seed"] == meta.loc[r, "seed"]), None)
        if ref is None:
            print(f"| {r} | {s['H_end']:.3f} | (no baseline) | | {s['acc_end']:.3f} | |")
            continue
        rs = stats.get(ref) or run_stats(t, ref, val, greedy)
        print(f"| {r} | {s['H_end']:.4f} | {rs['H_end']:.4f} | {'yes' if s['H_end'] > rs['H_end'] else 'no'} | "
              f"{s['H_last50']:.4f} | {rs['H_last50']:.4f} | {s['acc_end']:.3f} | {rs['acc_end']:.3f} |")
    del sizes


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "data/lab/lab_runs.parquet")
