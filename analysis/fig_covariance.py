"""Paper Fig. 8: response-level covariance vs the step-wise entropy change, over training
and per step, for two lab runs (baseline GRPO runs first), and the correlation of every lab
run that logs cov/response_level in one figure (data/lab/*.parquet). Writes
figures/covariance_vs_entropy_change_*.* (screen) and figures/paper/.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from entropylaw.plots.build import Skipped, build, read_tables, script  # noqa: E402

OUT = ROOT / "figures"


def make():
    lab = read_tables(ROOT / "data/lab/*.parquet")
    if lab is None:
        raise Skipped("no data/lab/*.parquet (the lab runs log the response-level covariance)")
    return build("covariance", lab, max_detail=2)


if __name__ == "__main__":
    sys.exit(script("fig_covariance", make, OUT))
