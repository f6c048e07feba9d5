"""Intervention dose-response in the lab (data/lab/README.md quotes this output).

    python analysis/lab_dose.py data/lab/dose/lab_dose.parquet [analysis/lab_dose.toml]

Per run: final entropy (token-mean ``entropy``, mean of the last 10 steps) and final
validation accuracy (``val/<task>``, sampled mean@k, mean of the last 3 evaluations).
Per method axis and dose: mean over seeds with the seed range (min..max), against the
baseline with the same number of minibatches. A dose's effect "exceeds the seed spread"
when its seed range and the baseline's do not overlap; the table names, per axis, the
weakest dose where that happens (for entropy and for accuracy).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from entropylaw import table  # noqa: E402

# intervention -> (axis label, intervention_args key holding the dose, stronger when larger?)
DOSE_KEYS = {"clip_cov": ("Clip-Cov ratio", "clip_cov_ratio", True),
             "kl_cov": ("KL-Cov ratio", "kl_cov_ratio", True),
             "entropy_bonus": ("entropy bonus coef", "entropy_coef", True),
             "clip_higher": ("clip-higher eps_high", "clip_high", True),
             "steer": ("STEER w_min", "steer_w_min", False),
             "aent": ("AEnt c0", "aent_coef", True)}
DEFAULT_MINIBATCHES = 4


def dose_of(cfg: dict) -> tuple[str, float] | None:
    """(axis, dose) of one run's settings; None for a baseline.

    >>> dose_of({"intervention": "kl_cov", "minibatches": 4, "intervention_args": {"kl_cov_ratio": 0.03,
    ...          "kl_cov_beta": 4.0}})
    ('KL-Cov beta (ratio 0.03)', 4.0)
    >>> dose_of({"intervention": "steer", "minibatches": 4, "intervention_args": {"steer_w_min": 0.2}})
    ('STEER w_min', 0.2)
    """
    name, args, mb = cfg["intervention"], cfg.get("intervention_args", {}), cfg["minibatches"]
    if name == "none":
        return None
    if name == "clip_cov" and args.get("clip_cov_lb", 1.0) >= 1e8:  # the control: no token eligible
        return DOSE_KEYS["clip_cov"][0], 0.0
    if name == "kl_cov" and mb != DEFAULT_MINIBATCHES:
        return f"KL-Cov updates per rollout (ratio {args['kl_cov_ratio']:g})", float(mb)
    if name == "kl_cov" and "kl_cov_beta" in args:
        return f"KL-Cov beta (ratio {args['kl_cov_ratio']:g})", float(args["kl_cov_beta"])
    label, key, _ = DOSE_KEYS[name]
    return label, float(args[key])


def run_outcomes(t: pd.DataFrame, settings: dict[str, dict], last_steps: int = 10,
                 last_evals: int = 3) -> pd.DataFrame:
    rows = []
    ids = set(table.run_ids(t))
    for run_id, cfg in settings.items():
        if run_id not in ids:
            continue
        h = table.series(t, run_id, "entropy")
        h = h[h.index >= 1]
        vals = [v for v in table.val_metrics(t, run_id) if v != "val/mean"]
        acc = table.series(t, run_id, vals[0]) if vals else pd.Series(dtype=float)
        axis = dose_of(cfg)
        rows.append({"run_id": run_id, "seed": cfg["seed"], "minibatches": cfg["minibatches"],
                     "intervention": cfg["intervention"], "axis": axis[0] if axis else "baseline",
                     "dose": axis[1] if axis else np.nan, "steps": int(h.index.max()) if len(h) else 0,
                     "H_start": float(h.iloc[:5].mean()), "H_end": float(h.iloc[-last_steps:].mean()),
                     "acc_end": float(acc.iloc[-last_evals:].mean()) if len(acc) else np.nan})
    out = pd.DataFrame(rows)
    if not out.empty:
        out["drop_pct"] = 100 * (1 - out["H_end"] / out["H_start"])
    return out


def summarise(runs: pd.DataFrame) -> pd.DataFrame:
    g = runs.groupby(["axis", "dose", "minibatches"], dropna=False)
    return g.agg(seeds=("seed", "nunique"), H_end=("H_end", "mean"), H_min=("H_end", "min"),
                 H_max=("H_end", "max"), acc_end=("acc_end", "mean"), acc_min=("acc_end", "min"),
                 acc_max=("acc_end", "max"), drop_pct=("drop_pct", "mean")).reset_index()


def control_of(axis: str, summary: pd.DataFrame):
    """The row of ``axis``'s recipe control (the method's PPO settings, selection off), or None:
    Clip-Cov's is its own dose 0; every KL-Cov ratio or beta axis shares the beta-0 runs."""
    if axis.startswith("KL-Cov") and "updates" not in axis:
        hit = summary[summary["axis"].str.startswith("KL-Cov beta") & (summary["dose"] == 0)]
    elif axis.startswith("Clip-Cov"):
        hit = summary[(summary["axis"] == axis) & (summary["dose"] == 0)]
    else:
        return None
    return hit.iloc[0] if len(hit) else None


def exceeds(row, base, lo: str, hi: str) -> str:
    """'+' above / '-' below the baseline's seed range (no overlap), '' when they overlap."""
    if row[lo] > base[hi]:
        return "+"
    if row[hi] < base[lo]:
        return "-"
    return ""


def axis_table(summary: pd.DataFrame) -> pd.DataFrame:
    bases = summary[summary["axis"] == "baseline"].set_index("minibatches")
    rows = []
    for _, row in summary[summary["axis"] != "baseline"].iterrows():
        if row["minibatches"] not in bases.index:
            continue
        base = bases.loc[row["minibatches"]]
        ctrl = control_of(row["axis"], summary)
        is_ctrl = ctrl is not None and row["dose"] == 0
        rows.append({**row.to_dict(), "base_H": base["H_end"], "base_acc": base["acc_end"],
                     "H_effect": row["H_end"] - base["H_end"], "acc_effect": row["acc_end"] - base["acc_end"],
                     "H_beyond": exceeds(row, base, "H_min", "H_max"),
                     "acc_beyond": exceeds(row, base, "acc_min", "acc_max"),
                     "H_beyond_ctrl": exceeds(row, ctrl, "H_min", "H_max") if ctrl is not None and not is_ctrl else "",
                     "acc_beyond_ctrl": (exceeds(row, ctrl, "acc_min", "acc_max")
                                         if ctrl is not None and not is_ctrl else ""),
                     "has_ctrl": ctrl is not None, "is_ctrl": is_ctrl})
    return pd.DataFrame(rows)


def weakest_beyond(axes: pd.DataFrame, column: str) -> dict[str, str]:
    out = {}
    if "is_ctrl" in axes:  # a control is no dose of its axis
        axes = axes[~axes["is_ctrl"].astype(bool)]
    for axis, rows in axes.groupby("axis"):
        stronger_when_larger = not axis.startswith("STEER")
        rows = rows.sort_values("dose", ascending=stronger_when_larger)
        hit = rows[rows[column] != ""]
        out[axis] = f"{hit['dose'].iloc[0]:g} ({hit[column].iloc[0]})" if len(hit) else "none"
    return out


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    from entropylaw.lab.sweep import load_sweep

    t = table.read(argv[0])
    configs, _ = load_sweep(argv[1] if len(argv) > 1 else ROOT / "analysis/lab_dose.toml")
    runs = run_outcomes(t, {c.run_name: c.to_dict() for c in configs})
    if runs.empty:
        print(f"{argv[0]}: no runs of the dose sweep")
        return 1
    summary = summarise(runs)
    print("| baseline minibatches | seeds | H end (min..max) | drop % | acc end (min..max) |")
    print("|---:|---:|---|---:|---|")
    for _, b in summary[summary["axis"] == "baseline"].iterrows():
        print(f"| {b.minibatches} | {b.seeds} | {b.H_end:.3f} ({b.H_min:.3f}..{b.H_max:.3f}) | {b.drop_pct:.0f} "
              f"| {b.acc_end:.3f} ({b.acc_min:.3f}..{b.acc_max:.3f}) |")
    axes = axis_table(summary)
    if axes.empty:
        return 0
    print("\n| method axis | dose | seeds | H end (min..max) | dH vs base | beyond | acc end (min..max) "
          "| dacc vs base | beyond | beyond control (H / acc) |")
    print("|---|---:|---:|---|---:|:-:|---|---:|:-:|:-:|")
    for _, r in axes.sort_values(["axis", "dose"]).iterrows():
        dose = "0 (control)" if r.is_ctrl else f"{r.dose:g}"
        vs_ctrl = f"{r.H_beyond_ctrl or '·'} / {r.acc_beyond_ctrl or '·'}" if r.has_ctrl and not r.is_ctrl else ""
        print(f"| {r.axis} | {dose} | {r.seeds} | {r.H_end:.3f} ({r.H_min:.3f}..{r.H_max:.3f}) "
              f"| {r.H_effect:+.3f} | {r.H_beyond} | {r.acc_end:.3f} ({r.acc_min:.3f}..{r.acc_max:.3f}) "
              f"| {r.acc_effect:+.3f} | {r.acc_beyond} | {vs_ctrl} |")
    h, a = weakest_beyond(axes, "H_beyond"), weakest_beyond(axes, "acc_beyond")
    with_ctrl = axes[axes["has_ctrl"]]
    hc, ac = weakest_beyond(with_ctrl, "H_beyond_ctrl"), weakest_beyond(with_ctrl, "acc_beyond_ctrl")
    print("\n| method axis | weakest dose beyond the seed spread: entropy | accuracy "
          "| vs the recipe control: entropy | accuracy |")
    print("|---|---|---|---|---|")
    for axis in h:
        print(f"| {axis} | {h[axis]} | {a[axis]} | {hc.get(axis, 'n/a')} | {ac.get(axis, 'n/a')} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
