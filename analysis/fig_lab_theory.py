"""Theory mode: predicted vs measured entropy change per step, one panel per setting
(figures/fig_lab_theory_lemma1.*: Lemma 1 with the actual logit change;
figures/fig_lab_theory_thm1.*: Theorem 1's sampled-token batch form), from
data/lab/theory/lab_theory.parquet and the settings in analysis/lab_theory.toml.
Numbers: ``python analysis/lab_theory.py data/lab/theory/lab_theory.parquet``.
"""

import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "analysis"))

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from entropylaw import table  # noqa: E402
from entropylaw.figure_sets.base import Built, Skipped, script  # noqa: E402
from lab_theory import MEASURED, PREDICTIONS, agreement, run_settings, setting_order, steps_frame  # noqa: E402

OUT = ROOT / "figures"
DATA = ROOT / "data/lab/theory/lab_theory.parquet"
TOML = ROOT / "analysis/lab_theory.toml"
COLUMNS = 5


def panels(t, settings, key: str, name: str, title: str, identity: bool) -> Built:
    by_setting: dict[str, list[str]] = {}
    ids = set(table.run_ids(t))
    for run_id, cfg in settings.items():
        if run_id in ids:
            label = cfg["tag"] + ("" if cfg["intervention"] == "none" else f"+{cfg['intervention']}")
            by_setting.setdefault(label, []).append(run_id)
    order = [s for s in setting_order(settings) if s in by_setting]
    if not order:
        raise Skipped(f"{DATA}: none of the runs of {TOML}")
    rows = math.ceil(len(order) / COLUMNS)
    fig, axes = plt.subplots(rows, COLUMNS, figsize=(2.3 * COLUMNS, 2.4 * rows + 0.5), squeeze=False,
                             layout="constrained")
    for ax in axes.flat[len(order):]:
        ax.set_visible(False)
    for ax, label in zip(axes.flat, order):
        xs, ys = [], []
        for i, run_id in enumerate(sorted(by_setting[label])):
            w = steps_frame(t, run_id)
            ax.scatter(w[key], w[MEASURED], s=4, alpha=0.5, color=f"C{i}", linewidths=0)
            xs.append(w[key].to_numpy())
            ys.append(w[MEASURED].to_numpy())
        x, y = np.concatenate(xs), np.concatenate(ys)
        stats = agreement(x, y)
        xlim = float(np.nanmax(np.abs(x))) * 1.1 or 1.0
        ylim = float(np.nanmax(np.abs(y))) * 1.1 or 1.0
        if identity:  # Lemma 1 is a prediction in the measured units: y = x
            ax.plot([-xlim, xlim], [-xlim, xlim], color="0.6", lw=0.8, ls="--")
        elif stats["slope"] == stats["slope"]:  # the tabular forms hold up to a scale: the fitted line
            ax.plot([-xlim, xlim], [-xlim * stats["slope"], xlim * stats["slope"]], color="0.6", lw=0.8, ls="--")
        ax.set_xlim(-xlim, xlim)
        ax.set_ylim(-ylim, ylim)
        ax.set_title(f"{label}\nr={stats['r']:.2f}, slope={stats['slope']:.2g}", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.locator_params(nbins=4)
        ax.ticklabel_format(axis="both", style="sci", scilimits=(-2, 2))
        ax.xaxis.get_offset_text().set_fontsize(7)
        ax.yaxis.get_offset_text().set_fontsize(7)
        ax.axhline(0, color="0.85", lw=0.5)
        ax.axvline(0, color="0.85", lw=0.5)
    fig.supylabel("measured entropy change of the batch (nats)", fontsize=8)
    fig.supxlabel(f"predicted entropy change ({PREDICTIONS[key]})", fontsize=8)
    fig.suptitle(title, fontsize=9)
    line = "y = x" if identity else "least-squares line"
    caption = (f"{title}. One point per training step and run (colour: seed), size xs; dashed: {line}. "
               "r and slope (measured on predicted) pool the seeds' steps.")
    return Built(name, fig, caption)


def make():
    if not DATA.exists():
        raise Skipped(f"no {DATA.relative_to(ROOT)}")
    t = table.read(DATA)
    settings = run_settings(TOML)
    return [panels(t, settings, "theory/dH_lemma1", "fig_lab_theory_lemma1",
                   "Lab theory mode: Lemma 1 with the actual logit change vs measured entropy change", True),
            panels(t, settings, "theory/dH_thm1_sampled", "fig_lab_theory_thm1",
                   "Lab theory mode: Theorem 1 (sampled-token batch form) vs measured entropy change", False)]


if __name__ == "__main__":
    sys.exit(script("fig_lab_theory", make, OUT))
