"""Collapse at every size and the size law refit (data/lab/README.md quotes this output).

    python analysis/lab_collapse.py data/lab/collapse/lab_collapse.parquet

Per baseline run: entropy at the start (mean of steps 1-5) and the end (mean of the last
10 steps), the drop in %, final sampled validation accuracy (mean of the last 3
evaluations). Then ``entropylaw scale`` on every run (a, b, ceiling per run and their
lines in log10 N) and on all runs but the largest size with ``--predict`` at the largest
size's N: does each held-out run's a, b and ceiling land inside the 95 % prediction
interval?
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from entropylaw import table  # noqa: E402


def scale_json(path: str, run_ids: list[str], predict: float | None = None) -> dict:
    args = [sys.executable, "-m", "entropylaw", "scale", path, "--json"]
    for r in run_ids:
        args += ["--run", r]
    if predict is not None:
        args += ["--predict", repr(predict)]
    res = subprocess.run(args, capture_output=True, text=True, cwd=ROOT)
    if res.returncode != 0:
        raise SystemExit(f"entropylaw scale failed: {res.stderr.strip().splitlines()[-1:]}")
    return json.loads(res.stdout)


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


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    path = argv[0]
    t = table.read(path)
    runs = outcomes(t)
    print("| run | N non-emb | steps | H start | H end | drop % | acc step 0 | acc end |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for _, r in runs.iterrows():
        print(f"| {r.run_id} | {r.N:,.0f} | {r.steps} | {r.H_start:.3f} | {r.H_end:.3f} | {r.drop_pct:.0f} "
              f"| {r.acc_0:.3f} | {r.acc_end:.3f} |")
    full = scale_json(path, list(runs["run_id"]))
    fits = pd.DataFrame(full["runs"]).set_index("run_id")
    print("\n| run | a | b | ceiling b-a |")
    print("|---|---:|---:|---:|")
    for run_id in runs["run_id"]:
        if run_id in fits.index:
            f = fits.loc[run_id]
            print(f"| {run_id} | {f.a:.3f} | {f.b:.3f} | {f.ceiling:.3f} |")
    print(f"\nAll {full['n_runs']} runs, y = intercept + slope * log10 N:")
    for name, line in full["lines"].items():
        inside = sum(bool(x[f"{name}_inside"]) for x in full["leave_one_out"])
        print(f"- {name}: intercept {line['intercept']:.3f}, slope {line['slope']:.3f} per decade, residual sd "
              f"{line['s']:.3f}; leave-one-out inside 95 % PI: {inside}/{len(full['leave_one_out'])}")
    largest = runs["N"].max()
    held = runs[runs["N"] == largest]
    train = runs[runs["N"] < largest]
    if train["N"].nunique() < 2:
        print("\nfewer than two smaller sizes: no leave-largest-out prediction")
        return 0
    pred = scale_json(path, list(train["run_id"]), predict=float(largest))["predictions"][0]
    print(f"\nLeave the largest size out (fit on {len(train)} runs of {train['N'].nunique()} sizes, "
          f"predict N = {largest:,.0f}):")
    print("| coefficient | predicted | 95 % PI | held-out runs (inside?) |")
    print("|---|---:|---|---|")
    for name in ("a", "b", "ceiling"):
        lo, hi = pred[f"{name}_lo"], pred[f"{name}_hi"]
        obs = [f"{fits.loc[r, name]:.3f} ({'yes' if lo <= fits.loc[r, name] <= hi else 'no'})"
               for r in held["run_id"] if r in fits.index]
        print(f"| {name} | {pred[name]:.3f} | {lo:.3f} .. {hi:.3f} | {', '.join(obs)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
