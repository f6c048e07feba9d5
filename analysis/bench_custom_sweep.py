"""The CS336 grid as another trainer writes it: does reading it that way change the forecast?

    .venv/bin/python analysis/bench_custom_sweep.py [--fracs 0.15,0.25,0.5] [--n-boot 200]

The shared CS336 sweep (``../shared/data/real-cs336-wandb/reference``, 28 real GRPO runs of
Qwen2.5-Math-1.5B on MATH, validation on 1,024 problems) is written the way a custom GRPO loop
leaves a sweep: one folder per run, a ``metrics.jsonl`` of ``{"type": "train", "grpo_step",
"token_entropy", "train_reward"}`` and ``{"type": "eval", "grpo_step", "answer_accuracy",
"num_examples": 1024}`` rows, the accuracy once as a fraction and once in percent. Each layout
is forecast as one sweep (``entropylaw forecast DIR --fit-frac F``) and compared, run by run,
with the CSVs read as they are (whose key ``val/math`` names the benchmark; the custom key names
none). Median |error| of the default method's final score against the run's final score, in
points; the share of intervals holding it; the largest difference from the CSVs' forecast.

What it measures is the reading and the task's name, not the forecast method: the percent and
the fraction layouts must give the same numbers, and the difference from the CSVs is what the
benchmark's name is worth (the rates and priors of a task the package knows). The rates the
package stores were learned on these runs, so neither column is a held-out error.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import entropylaw as el  # noqa: E402

REFERENCE = ROOT.parent / "shared" / "data" / "real-cs336-wandb" / "reference"


def write_sweep(out: Path, percent: bool) -> Path:
    """Each reference CSV as a custom trainer's run folder."""
    for f in sorted(REFERENCE.glob("*.csv")):
        df = pd.read_csv(f)
        run = out / f.stem.split("__")[0]
        run.mkdir(parents=True, exist_ok=True)
        with open(run / "metrics.jsonl", "w") as fh:
            for step, h, score, val in df[["step", "entropy", "score", "val/math"]].itertuples(index=False):
                if not math.isnan(h):
                    fh.write(json.dumps({"type": "train", "grpo_step": int(step), "token_entropy": h,
                                         "train_reward": score}) + "\n")
                if not math.isnan(val):
                    fh.write(json.dumps({"type": "eval", "grpo_step": int(step),
                                         "answer_accuracy": 100 * val if percent else val,
                                         "num_examples": 1024}) + "\n")
    return out


def finals(source: Path, frac: float, n_boot: int) -> dict:
    """{run: (forecast, lo, hi, observed)} of the default method's final score."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fcs = el.forecast_all(el.load(str(source), warn=False), fit_frac=frac, n_boot=n_boot)
    out = {}
    for rid, fc in fcs.items():
        fin = (fc.methods[fc.default].final or {}) if fc.default in fc.methods else {}
        if fin.get("forecast") is not None and fc.final_observed is not None:
            out[rid.split("__")[0]] = (fin["forecast"], fin["lo"], fin["hi"], fc.final_observed)
    return out


def summary(rows: dict) -> str:
    err = [abs(f - o) for f, _, _, o in rows.values()]
    held = sum(lo <= o <= hi for _, lo, hi, o in rows.values())
    return f"{100 * statistics.median(err):.1f} / {held} of {len(rows)}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fracs", default="0.15,0.25,0.5")
    ap.add_argument("--n-boot", type=int, default=200)
    args = ap.parse_args(argv)
    if not REFERENCE.is_dir():
        print(f"{REFERENCE}: not here (the shared data sit beside the repository); nothing to measure")
        return 0
    start = time.time()
    print("| window | CSVs (`val/math`) | custom JSONL, fraction | custom JSONL, percent | largest difference, "
          "percent vs fraction | largest difference, custom vs CSVs |")
    print("|---|---|---|---|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        frac_dir, pct_dir = write_sweep(Path(tmp) / "fraction", False), write_sweep(Path(tmp) / "percent", True)
        for frac in (float(x) for x in args.fracs.split(",")):
            ref, fr, pc = (finals(d, frac, args.n_boot) for d in (REFERENCE, frac_dir, pct_dir))
            same = max(abs(fr[k][0] - pc[k][0]) for k in fr if k in pc)
            moved = max(abs(fr[k][0] - ref[k][0]) for k in fr if k in ref)
            print(f"| {100 * frac:g} % | {summary(ref)} | {summary(fr)} | {summary(pc)} | {100 * same:.2f} | "
                  f"{100 * moved:.1f} |")
    print(f"\nmedian |error| in points / intervals holding the final score; {time.time() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
