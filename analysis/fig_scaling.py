"""Paper Fig. 7: coefficients a and b vs model size with the log-linear size law, its
prediction band and the largest size held out. Every run (each seed) is fitted on its own
and is one point of the size law. Needs several model sizes: the lab sweep
(data/lab/*.parquet). Writes figures/scaling_coefficients_vs_size_lab.* (screen) and
figures/paper/.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from entropylaw.figure_sets.base import Skipped, read_tables, script  # noqa: E402
from entropylaw.figure_sets.build import build  # noqa: E402

OUT = ROOT / "figures"


def make():
    lab = read_tables(ROOT / "data/lab/*.parquet")
    if lab is None:
        raise Skipped("no data/lab/*.parquet (the lab sweep over model sizes has not been run)")
    return [b.renamed(b.name + "_lab") for b in build("scaling", lab)]


if __name__ == "__main__":
    sys.exit(script("fig_scaling", make, OUT))
