"""Intervention dose-response in the lab (figures/fig_lab_dose.*): final entropy and final
validation accuracy against the dose of each method, mean over seeds with the seed range,
the baseline's seed range shaded; from data/lab/dose/lab_dose.parquet and the settings in
analysis/lab_dose.toml. Numbers: ``python analysis/lab_dose.py data/lab/dose/lab_dose.parquet``.
"""

import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "analysis"))

from matplotlib.ticker import NullFormatter  # noqa: E402

from entropylaw import table  # noqa: E402
from entropylaw.figure_sets.base import Built, Skipped, script  # noqa: E402
from entropylaw.draw.style import fs, new_grid  # noqa: E402
from lab_dose import control_of, run_outcomes, summarise  # noqa: E402

OUT = ROOT / "figures"
DATA = ROOT / "data/lab/dose/lab_dose.parquet"
TOML = ROOT / "analysis/lab_dose.toml"
COLUMNS = 4
# the dose's x label, with its unit, by the start of the axis name
DOSE_LABELS = {"AEnt": "c0 (loss weight)", "Clip-Cov ratio": "ratio (fraction of tokens)",
               "KL-Cov ratio": "ratio (fraction of tokens)", "KL-Cov beta": "beta (loss weight)",
               "KL-Cov updates": "minibatches per rollout (count)", "STEER": "w_min (token weight)",
               "clip-higher": "eps_high (ratio bound)", "entropy bonus": "coef (loss weight)"}


def dose_label(axis: str) -> str:
    return next((v for k, v in DOSE_LABELS.items() if axis.startswith(k)), "dose (setting)")


def make():
    if not DATA.exists():
        raise Skipped(f"no {DATA.relative_to(ROOT)}")
    from entropylaw.lab.sweep import load_sweep

    configs, _ = load_sweep(TOML)
    runs = run_outcomes(table.read(DATA), {c.run_name: c.to_dict() for c in configs})
    if runs.empty:
        raise Skipped(f"{DATA}: none of the runs of {TOML}")
    summary = summarise(runs)
    bases = summary[summary["axis"] == "baseline"].set_index("minibatches")
    axes_names = [a for a in dict.fromkeys(summary["axis"]) if a != "baseline"]
    if not axes_names or bases.empty:
        raise Skipped("no intervention doses or no baseline yet")
    blocks = math.ceil(len(axes_names) / COLUMNS)
    fig, grid = new_grid(2 * blocks, COLUMNS, columns=2, panel_aspect=0.8, extra_height=0.6)
    for k in range(len(axes_names), blocks * COLUMNS):
        for r in (0, 1):
            grid[2 * (k // COLUMNS) + r, k % COLUMNS].set_visible(False)
    for k, axis in enumerate(axes_names):
        ctrl = control_of(axis, summary)
        rows = summary[summary["axis"] == axis].sort_values("dose")
        if ctrl is not None:  # the control is drawn as a band, not as dose 0 on a log axis
            rows = rows[rows["dose"] > 0]
        updates_axis = axis.startswith("KL-Cov updates")
        for r, (col, lo, hi, ylabel) in enumerate((("H_end", "H_min", "H_max", "final entropy (nats)"),
                                                   ("acc_end", "acc_min", "acc_max", "final val acc (fraction)"))):
            ax = grid[2 * (k // COLUMNS) + r, k % COLUMNS]
            if updates_axis:  # the baseline depends on the minibatches: draw it per dose
                b = bases.reindex(rows["minibatches"])
                ax.errorbar(rows["dose"], b[col], yerr=[b[col] - b[lo], b[hi] - b[col]], fmt="s--",
                            color="0.5", ms=3, capsize=2, lw=0.8, label="baseline")
            elif 4 in bases.index:
                b = bases.loc[4]
                ax.axhspan(b[lo], b[hi], color="0.85", lw=0)
                ax.axhline(b[col], color="0.5", lw=0.8, label="baseline")
            if ctrl is not None:
                ax.axhspan(ctrl[lo], ctrl[hi], color="C1", alpha=0.15, lw=0)
                ax.axhline(ctrl[col], color="C1", lw=0.8, ls="--", label="method's recipe, selection off")
            ax.errorbar(rows["dose"], rows[col], yerr=[rows[col] - rows[lo], rows[hi] - rows[col]], fmt="o-",
                        color="C0", ms=3, capsize=2, lw=1, label="intervention")
            if (rows["dose"] > 0).all() and rows["dose"].max() / rows["dose"].min() > 8:
                ax.set_xscale("log")
                ax.xaxis.set_minor_formatter(NullFormatter())  # minor labels collide on short spans
            ax.tick_params(labelsize=fs("small"))
            ax.set_ylabel(ylabel, fontsize=fs("small"))
            ax.set_xlabel(dose_label(axis), fontsize=fs("small"))
            if r == 0:
                ax.set_title(axis.replace(" per rollout", ""), fontsize=fs("normal"))
    handles = {}
    for ax in grid.flat:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab, h)
    fig.legend(handles.values(), handles.keys(), loc="outside lower center", ncol=len(handles), fontsize=fs("small"),
               frameon=False)
    title = "Lab intervention dose-response: final entropy and accuracy vs dose"
    fig.suptitle(title, fontsize=fs("title"))
    caption = (f"{title}. Mean over seeds, bars: seed range (min..max); grey band: the baseline's seed "
               "range; orange dashed line and band: the covariance method's own PPO recipe with its token selection "
               "switched off (Clip-Cov: clip 1.0/1.0, no token eligible; KL-Cov: no PPO clip, beta 0). Entropy: mean "
               "of the last 10 steps; accuracy: sampled mean@4, last 3 evaluations.")
    return [Built("fig_lab_dose", fig, caption)]


if __name__ == "__main__":
    sys.exit(script("fig_dose", make, OUT))
