"""Paper Fig. 2: entropy consumed and score gained over the fraction of each run's
training, read at 1/12 and 1/3 of training (the paper's step 200 and 800 of 2400), for the
real runs and the lab sweep: figures/consumption_entropy_and_gain_{real,lab}.* (screen)
and figures/paper/.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from entropylaw.figure_sets.base import Skipped, read_tables, script  # noqa: E402
from entropylaw.figure_sets.build import build  # noqa: E402

OUT = ROOT / "figures"


def make():
    real = read_tables(ROOT / "data/real/*.parquet")
    if real is None:
        raise Skipped("no data/real/*.parquet")
    built = [b.renamed(b.name + "_real") for b in build("consumption", real)]
    lab = read_tables(ROOT / "data/lab/*.parquet")
    if lab is not None:
        try:
            built += [b.renamed(b.name + "_lab") for b in build("consumption", lab)]
        except Skipped as why:
            print(f"fig_consumption: lab curve skipped: {why}")
    return built


if __name__ == "__main__":
    sys.exit(script("fig_consumption", make, OUT))
