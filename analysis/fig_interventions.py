"""Paper Figs. 9-13 style: entropy, score (and response length) over steps, one line per
run: the real runs, one row of panels per model (figures/runs_over_training_real.*), and,
when present, the lab's intervention runs (GRPO and GRPO with each intervention) of one
model and seed (figures/interventions_over_training_lab.*). Screen style in figures/,
paper style in figures/paper/.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from entropylaw import table  # noqa: E402
from entropylaw.figure_sets.base import Skipped, read_tables, script  # noqa: E402
from entropylaw.figure_sets.build import build  # noqa: E402

OUT = ROOT / "figures"


def make():
    built = []
    real = read_tables(ROOT / "data/real/*.parquet")
    if real is None:
        raise Skipped("no data/real/*.parquet")
    built += build("interventions", real, name="runs_over_training_real", smooth=9,
                   title="Real runs: entropy, score and response length over training")
    lab = read_tables(ROOT / "data/lab/*.parquet")
    if lab is None:
        print("fig_interventions: no data/lab/*.parquet yet: lab intervention figure not drawn")
        return built
    meta = table.runs(lab)
    # interventions are changes to GRPO (algorithm "grpo+<intervention>"), next to plain GRPO
    rows = meta[meta["algorithm"].astype(str).str.startswith("grpo")]
    model = rows["model"].value_counts().index[0]
    rows = rows[rows["model"] == model]
    seed = rows["seed"].min()
    if seed == seed:
        rows = rows[rows["seed"] == seed]
    labels = {r: (a or r) for r, a in zip(rows["run_id"], rows["algorithm"])}
    if len(set(labels.values())) < len(labels):
        labels = None
    try:
        built += build("interventions", lab, run_ids=list(rows["run_id"]), labels=labels,
                       name="interventions_over_training_lab", smooth=5,
                       title=f"Lab, {model or 'one model'}: entropy and score with each intervention on GRPO")
    except Skipped as why:
        print(f"fig_interventions: lab figure skipped: {why}")
    return built


if __name__ == "__main__":
    sys.exit(script("fig_interventions", make, OUT))
