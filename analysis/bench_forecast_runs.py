"""Every real run the forecast learns its regimes from, each tagged with its **recipe**.

A recipe is one training setup run several times (a sweep): the same task and model family and
the same trainer, whatever the hyperparameters. Backtests leave whole recipes out, so a regime's
rates are never measured on runs of the recipe they forecast.

- ``data/`` (ships with the package): the veRL and TRL runs of ``data/real`` (one recipe per
  trainer + model + task), the size series (``data/real-sizes``, one recipe at five sizes),
  code generation, Countdown;
- ``../shared`` (no licence for CS336: only fitted numbers learned from them are stored):
  the 28 CS336 GRPO runs (Qwen2.5-Math-1.5B on MATH, one grid = one recipe; ``4c2lw1ul``
  starts resumed) and rasbt's GRPO runs (Qwen3-0.6B on MATH-500, ``eval_acc`` in percent,
  scaled to a fraction here; ``ch06`` repeats 7_3's validation without entropy: left out).
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
CS336 = "cs336 grpo qwen2.5-math-1.5b math"
RASBT = "rasbt grpo qwen3-0.6b math500"
CS336_MODEL = "Qwen2.5-Math-1.5B"  # real-cs336-wandb/README.md


def recipe_of(run_id: str, source: str) -> str:
    """The recipe of a run of ``data/`` or ``../shared`` (see the module docstring); the
    source is where the run was read from (a ``data/`` table keeps its original log's path)."""
    src = str(source)
    if "real-cs336" in src:
        return CS336
    if "real-rasbt" in src:
        return RASBT
    if run_id.startswith("trl_"):
        return "trl " + run_id.split("__")[0][4:]  # trl_qwen2.5-7b__exp1a__...: one model's sweeps
    if run_id.startswith("verl_"):
        return "verl " + re.sub(r"_(resp\d+|mi300|fsdp|verl-data|collapse)", "", run_id.removeprefix("verl_"))
    if "grpo-lora_gsm8k" in run_id:
        return "verl grpo-lora qwen2.5 gsm8k (sizes)"
    return Path(src).parent.name + " " + run_id.split("_")[0]  # code generation, Countdown: one run each


def read_rasbt(path) -> pd.DataFrame:
    """One rasbt metrics CSV as a run table: eval_acc (percent) as a fraction, a restart's
    repeated steps keeping their later rows."""
    from entropylaw import table

    d = pd.read_csv(path)
    recs = []
    for col, metric, scale in (("entropy_avg", table.ENTROPY, 1.0), ("reward_avg", table.SCORE, 1.0),
                               ("eval_acc", "val/math500", 0.01)):
        if col in d:  # a restart's repeated step: its later value (a value only the first time logged: that one)
            s = d[["step", col]].dropna().drop_duplicates("step", keep="last")
            recs += [(int(a), metric, float(b) * scale) for a, b in zip(s["step"], s[col])]
    return table.from_records(recs, run_id=Path(path).stem.removesuffix("_metrics"), model="Qwen3-0.6B",
                              dataset="math500", source=str(path))


def shared_sources() -> list[Path]:
    """The shared runs' files (none where ``../shared`` is absent)."""
    out = sorted((SHARED / "real-cs336-wandb" / "reference").glob("*.csv"))
    out += [p for p in sorted((SHARED / "real-rasbt").glob("*_metrics.csv")) if not p.name.startswith("ch06")]
    return out


def read_shared(path) -> pd.DataFrame:
    from entropylaw.readers.dispatch import load

    if "real-rasbt" in str(path):
        return read_rasbt(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        df = load([str(path)])[0]
    if "real-cs336" in str(path):  # the W&B config is empty; the shared README names the model
        model = df["model"].astype(str)
        df["model"] = model.where(model != "", CS336_MODEL).astype(df["model"].dtype.name)
    return df


def with_recipes(frames) -> dict:
    """``{run_id: recipe}`` of every run in the tables ``frames``."""
    from entropylaw import table

    out = {}
    for df in frames:
        meta = table.runs(df)
        out.update({r: recipe_of(r, s) for r, s in zip(meta["run_id"], meta["source"])})
    return out


def finals(frame, run_id, key) -> float:
    v = frame[(frame["run_id"] == run_id) & (frame["metric"] == key)].sort_values("step")["value"]
    return float(v.iloc[-1]) if len(v) else np.nan
