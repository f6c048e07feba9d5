"""Paper Fig. 5: fit the law on the first 15 % of each real run, predict the rest from
the later entropy (the paper's protocol); the fit window is shaded and the RMSE written.
Writes figures/early_prediction_real.* (screen) and figures/paper/.
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
    return [b.renamed(b.name + "_real") for b in build("early", real, fit_frac=0.15)]


if __name__ == "__main__":
    sys.exit(script("fig_early", make, OUT))
