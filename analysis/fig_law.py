"""Where each run saturates and the law itself (paper Figs. 1, 3, 4): the ceiling b - a
of every run with its 95 % interval and trust flag, score vs policy entropy with the
fitted law per family of runs, and one panel per run.

Reads the real runs (data/real/*.parquet) and, when present, the lab sweep
(data/lab/*.parquet); writes figures/law_ceilings_per_run_{real,lab}.*,
law_score_vs_entropy_{real,lab_sizes}.* and law_per_run_{real,lab_sizes}.* (the lab's
model-size family: GRPO runs without an intervention, paper Fig. 4), each in the screen
style (figures/) and the paper style (figures/paper/).
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from entropylaw import table  # noqa: E402
from entropylaw.figure_sets.base import Skipped, read_tables, script  # noqa: E402
from entropylaw.figure_sets.build import build  # noqa: E402

OUT = ROOT / "figures"


def suffixed(built, suffix):
    return [b.renamed(f"{b.name}_{suffix}") for b in built]


def make():
    built = []
    real = read_tables(ROOT / "data/real/*.parquet")
    if real is None:
        raise Skipped("no data/real/*.parquet (run the ingest step in data/README.md)")
    built += suffixed(build("ceilings", real) + build("law", real), "real")
    lab = read_tables(ROOT / "data/lab/*.parquet")
    if lab is None:
        print("fig_law: no data/lab/*.parquet yet: lab panels not drawn")
        return built
    built += suffixed(build("ceilings", lab), "lab")
    # paper Fig. 4 is the model-size family: the baseline runs (GRPO, no intervention);
    # the whole lab table is passed so that each run keeps its colour of the other lab figures
    meta = table.runs(lab)
    sizes = list(meta.loc[meta["algorithm"] == "grpo", "run_id"]) or None
    try:
        built += suffixed(build("law", lab, run_ids=sizes), "lab_sizes")
    except Skipped as why:
        print(f"fig_law: lab panels skipped: {why}")
    return built


if __name__ == "__main__":
    sys.exit(script("fig_law", make, OUT))
