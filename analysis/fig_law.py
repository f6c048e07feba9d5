"""Paper Figs. 1, 3, 4: score vs policy entropy with the fitted law R = -a exp(H) + b,
its 95 % confidence and prediction bands and the ceiling b - a, one colour per run.

Reads the real veRL runs (data/real/*.parquet) and, when present, the lab sweep
(data/lab/*.parquet); writes figures/fig01_law_all_runs.*, fig03_law_per_run.* (real) and
fig04_law_lab_*.* (the lab's model-size family: GRPO runs without an intervention).
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from entropylaw.plots.build import Skipped, build, read_tables, script  # noqa: E402

OUT = ROOT / "figures"


def make():
    built = []
    real = read_tables(ROOT / "data/real/*.parquet")
    if real is None:
        raise Skipped("no data/real/*.parquet (run the ingest step in data/README.md)")
    built += build("law", real)
    lab = read_tables(ROOT / "data/lab/*.parquet")
    if lab is None:
        print("fig_law: no data/lab/*.parquet yet: lab panels not drawn")
    else:
        # paper Fig. 4 is the model-size family: the baseline runs (GRPO, no intervention);
        # interventions are drawn in fig10, algorithms in fig06
        family = lab[lab["algorithm"] == "grpo"]
        lab = family if len(family) else lab
        try:
            built += [b.renamed(b.name.replace("fig01_law_all_runs", "fig04_law_lab_all_runs")
                                .replace("fig03_law_per_run", "fig04_law_lab_per_run")) for b in build("law", lab)]
        except Skipped as why:
            print(f"fig_law: lab panels skipped: {why}")
    return built


if __name__ == "__main__":
    sys.exit(script("fig_law", make, OUT))
