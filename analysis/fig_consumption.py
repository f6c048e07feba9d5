"""Paper Fig. 2: normalised entropy consumption and performance gain vs training step,
for the real veRL runs (data/real/); writes figures/fig02_consumption.* (and
fig02_consumption_lab.* from data/lab/ when present).
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from entropylaw.plots.build import Skipped, build, read_tables, script  # noqa: E402

OUT = ROOT / "figures"


def make():
    real = read_tables(ROOT / "data/real/*.parquet")
    if real is None:
        raise Skipped("no data/real/*.parquet")
    built = build("consumption", real)
    lab = read_tables(ROOT / "data/lab/*.parquet")
    if lab is not None:
        try:
            built += [b.renamed(b.name + "_lab") for b in build("consumption", lab)]
        except Skipped as why:
            print(f"fig_consumption: lab curve skipped: {why}")
    return built


if __name__ == "__main__":
    sys.exit(script("fig_consumption", make, OUT))
