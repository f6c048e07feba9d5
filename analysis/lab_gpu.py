"""The lab's GPU replicate at 4x the batch against the CPU collapse runs (data/lab/README.md).

    python analysis/lab_gpu.py data/lab/gpu/lab_gpu.parquet data/lab/collapse/lab_collapse.parquet

For sizes s and l: per run the entropy drop, the final sampled accuracy and the law's fit
(a, b, ceiling, trust) at 64 prompts x 8 responses per step (GPU, analysis/lab_gpu.toml)
next to 16 x 8 (CPU, analysis/lab_collapse.toml); then the mean per-group covariance of
the three prompt-difficulty bins (logged by the GPU runs only: the CPU runs predate it).
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "analysis"))

import entropylaw as el  # noqa: E402
from entropylaw import table  # noqa: E402
from lab_collapse import outcomes  # noqa: E402

BINS = ("hard", "medium", "easy")


def law_fits(t: pd.DataFrame) -> pd.DataFrame:
    rows = []
    with warnings.catch_warnings():  # the verdict is in the table's trust column
        warnings.simplefilter("ignore")
        fits = el.fit_all(t, skip_errors=True)
    for f in fits:
        rows.append({"run_id": f.run_id_, "a": f.a_, "b": f.b_, "ceiling": f.ceiling_, "trust": f.trust_})
    return pd.DataFrame(rows).set_index("run_id") if rows else pd.DataFrame()


def describe(path: str, batch: str, sizes=("s", "l")) -> pd.DataFrame:
    t = table.read(path)
    runs = outcomes(t)
    runs = runs[runs["run_id"].str.split("-").str[0].isin(sizes)].copy()
    fits = law_fits(t[t["run_id"].isin(runs["run_id"])])
    runs = runs.join(fits, on="run_id")
    runs["size"] = runs["run_id"].str.split("-").str[0]
    runs["batch"] = batch
    for name in BINS:  # the mean of an empty series is NaN: a run that does not log the bin
        runs[f"cov_{name}"] = [float(table.series(t, r, f"cov/response_level/{name}").mean()) for r in runs["run_id"]]
    return runs


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__)
        return 2
    both = pd.concat([describe(argv[1], "16x8 CPU"), describe(argv[0], "64x8 GPU")], ignore_index=True)
    print("| size | batch | run | H start | H end | drop % | acc end | a | b | ceiling | trust |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for _, r in both.sort_values(["size", "batch", "seed"], ascending=[False, True, True]).iterrows():
        print(f"| {r['size']} | {r.batch} | {r.run_id} | {r.H_start:.3f} | {r.H_end:.3f} | {r.drop_pct:.0f} "
              f"| {r.acc_end:.3f} | {r.a:.3f} | {r.b:.3f} | {r.ceiling:.3f} | {r.trust} |")
    print("\n| size | batch | runs | drop % (mean, range) | acc end (mean, range) | ceiling (mean) |")
    print("|---|---|---:|---|---|---:|")
    for (size, batch), g in both.groupby(["size", "batch"], sort=False):
        print(f"| {size} | {batch} | {len(g)} | "
              f"{g.drop_pct.mean():.0f} ({g.drop_pct.min():.0f}..{g.drop_pct.max():.0f}) "
              f"| {g.acc_end.mean():.3f} ({g.acc_end.min():.3f}..{g.acc_end.max():.3f}) | {g.ceiling.mean():.3f} |")
    gpu = both[both["batch"] == "64x8 GPU"]
    if gpu[[f"cov_{b}" for b in BINS]].notna().any().any():
        print("\nMean per-group covariance over training (paper Fig. 8 right: smaller for harder prompts):")
        print("| run | hard (acc < 1/3) | medium | easy (acc > 2/3) |")
        print("|---|---:|---:|---:|")
        for _, r in gpu.iterrows():
            print(f"| {r.run_id} | {r.cov_hard:.4f} | {r.cov_medium:.4f} | {r.cov_easy:.4f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
