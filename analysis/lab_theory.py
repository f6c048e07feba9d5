"""Theory mode and its degradation ladder: how well each batch-level prediction tracks the
measured entropy change across steps (data/lab/README.md quotes this output).

    python analysis/lab_theory.py data/lab/theory/lab_theory.parquet [analysis/lab_theory.toml] [--long]

For every setting (the sweep's ``tag``) and every prediction (``theory/dH_*``, see
:mod:`entropylaw.lab.theory`), across the steps of each run: the Pearson correlation with
the measured change ``actor/entropy_delta`` (same batch, entropy before and after the
update), the least-squares slope of measured on predicted (1 = right scale) and the
fraction of steps whose signs agree; mean over seeds, with the smallest and largest seed.
Also checks that KL-Cov in theory mode reproduced the plain runs.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from entropylaw import table  # noqa: E402

MEASURED = "actor/entropy_delta"
PREDICTIONS = {"theory/dH_lemma1": "Lemma 1 (actual dz)", "theory/dH_thm1_sampled": "Thm 1, sampled-token",
               "theory/dH_thm1_batchcov": "Thm 1, -eta Cov(log p, pA)", "theory/dH_cov": "-eta Cov(log p, A)"}


def run_settings(toml_path: str | Path) -> dict[str, dict]:
    """run_id -> the sweep's settings of that run (tag, optimizer, lr, minibatches ...)."""
    from entropylaw.lab.sweep import load_sweep

    configs, _ = load_sweep(toml_path)
    return {c.run_name: c.to_dict() for c in configs}


def steps_frame(t: pd.DataFrame, run_id: str) -> pd.DataFrame:
    """Training steps (>= 1) of one run with the measured change and every prediction."""
    w = table.wide(t, run_id, [MEASURED, *PREDICTIONS, "entropy"])
    return w[w.index >= 1].dropna(subset=[MEASURED, *PREDICTIONS])


def agreement(pred: np.ndarray, measured: np.ndarray) -> dict[str, float]:
    """Pearson r, slope of measured on predicted, sign agreement.

    >>> agreement(np.array([1.0, 2.0, 3.0]), np.array([2.0, 4.0, 6.5]))["slope"]
    2.25
    """
    r = float(np.corrcoef(pred, measured)[0, 1]) if np.std(pred) > 0 and np.std(measured) > 0 else float("nan")
    slope = float(np.polyfit(pred, measured, 1)[0]) if np.std(pred) > 0 else float("nan")
    return {"r": r, "slope": slope, "sign": float(np.mean(np.sign(pred) == np.sign(measured)))}


def per_run(t: pd.DataFrame, settings: dict[str, dict]) -> pd.DataFrame:
    rows = []
    for run_id in table.run_ids(t):
        cfg = settings.get(run_id)
        if cfg is None:
            continue
        w = steps_frame(t, run_id)
        if len(w) < 3:
            continue
        label = cfg["tag"] + ("" if cfg["intervention"] == "none" else f"+{cfg['intervention']}")
        for key in PREDICTIONS:
            rows.append({"setting": label, "seed": cfg["seed"], "prediction": key, "n": len(w),
                         "mean_abs_dH": float(w[MEASURED].abs().mean()),
                         **agreement(w[key].to_numpy(), w[MEASURED].to_numpy())})
    return pd.DataFrame(rows)


def summary(runs: pd.DataFrame, order: list[str]) -> pd.DataFrame:
    g = runs.groupby(["setting", "prediction"])
    out = g.agg(seeds=("seed", "nunique"), steps=("n", "sum"), mean_abs_dH=("mean_abs_dH", "mean"),
                r=("r", "mean"), r_min=("r", "min"), r_max=("r", "max"), slope=("slope", "mean"),
                slope_min=("slope", "min"), slope_max=("slope", "max"), sign=("sign", "mean")).reset_index()
    out["order"] = out["setting"].map({s: i for i, s in enumerate(order)})
    return out.sort_values(["order", "prediction"]).drop(columns="order")


def setting_order(settings: dict[str, dict]) -> list[str]:
    seen = []
    for cfg in settings.values():
        label = cfg["tag"] + ("" if cfg["intervention"] == "none" else f"+{cfg['intervention']}")
        if label not in seen:
            seen.append(label)
    return seen


def describe(cfg: dict) -> str:
    clip = "PPO clip" if cfg["ppo_clip"] else "no clip"
    norm = f"norm clip {cfg['max_grad_norm']:g}" if cfg["max_grad_norm"] > 0 else "no norm clip"
    return f"{cfg['optimizer']} lr {cfg['lr']:g}, {cfg['minibatches']} mb, {clip}, {norm}"


def kl_cov_identity(t: pd.DataFrame, settings: dict[str, dict]) -> list[str]:
    lines = []
    for run_id, cfg in settings.items():
        if cfg["intervention"] != "kl_cov" or cfg["tag"] != "theory":
            continue
        twin = run_id.replace("-kl_cov-", "-none-")
        if twin not in table.run_ids(t) or run_id not in table.run_ids(t):
            continue
        a, b = table.series(t, run_id, "entropy"), table.series(t, twin, "entropy")
        n = min(len(a), len(b))
        diff = float(np.max(np.abs(a.to_numpy()[:n] - b.to_numpy()[:n])))
        lines.append(f"- {run_id} vs {twin}: {n} steps, max |entropy difference| = {diff:.3g}")
    return lines


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    t = table.read(argv[0])
    rest = [a for a in argv[1:] if a != "--long"]
    toml_path = rest[0] if rest else ROOT / "analysis/lab_theory.toml"
    settings = run_settings(toml_path)
    runs = per_run(t, settings)
    if runs.empty:
        print(f"{argv[0]}: no runs of {toml_path} with >= 3 steps")
        return 1
    order = setting_order(settings)
    desc = {}
    for cfg in settings.values():
        desc.setdefault(cfg["tag"] + ("" if cfg["intervention"] == "none" else f"+{cfg['intervention']}"),
                        describe(cfg))
    s = summary(runs, order)
    print("| setting | update | seeds | mean abs dH | Lemma 1: r (min..max), slope | Thm 1 sampled: r (min..max), "
          "sign | Thm 1 -eta Cov(log p, pA): r | -eta Cov(log p, A): r, sign |")
    print("|---|---|---:|---:|---|---|---:|---|")
    for setting in [x for x in order if x in set(s["setting"])]:
        rows = s[s["setting"] == setting].set_index("prediction")
        l1, ts = rows.loc["theory/dH_lemma1"], rows.loc["theory/dH_thm1_sampled"]
        bc, cv = rows.loc["theory/dH_thm1_batchcov"], rows.loc["theory/dH_cov"]
        print(f"| {setting} | {desc.get(setting, '')} | {l1.seeds} | {l1.mean_abs_dH:.1e} "
              f"| {l1.r:.3f} ({l1.r_min:.2f}..{l1.r_max:.2f}), {l1.slope:.2f} "
              f"| {ts.r:.2f} ({ts.r_min:.2f}..{ts.r_max:.2f}), {ts.sign:.2f} | {bc.r:.2f} "
              f"| {cv.r:.2f}, {cv.sign:.2f} |")
    if "--long" not in argv:
        lines = kl_cov_identity(t, settings)
        if lines:
            print("\nKL-Cov in theory mode against the plain theory runs:")
            print("\n".join(lines))
        return 0
    print()
    print("| setting | update | prediction | seeds | steps | mean abs dH | Pearson r (min..max) "
          "| slope (min..max) | sign agree |")
    print("|---|---|---|---:|---:|---:|---|---|---:|")
    for _, row in s.iterrows():
        print(f"| {row.setting} | {desc.get(row.setting, '')} | {PREDICTIONS[row.prediction]} | {row.seeds} "
              f"| {row.steps} | {row.mean_abs_dH:.2e} | {row.r:.3f} ({row.r_min:.2f}..{row.r_max:.2f}) "
              f"| {row.slope:.3g} ({row.slope_min:.3g}..{row.slope_max:.3g}) | {row.sign:.2f} |")
    lines = kl_cov_identity(t, settings)
    if lines:
        print("\nKL-Cov in theory mode against the plain theory runs:")
        print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
