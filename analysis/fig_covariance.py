"""Paper Fig. 8: response-level covariance vs the step-wise entropy change, over training
and per step, for two lab runs (baseline GRPO runs first), and the correlation of every lab
run that logs cov/response_level in one figure (data/lab/*.parquet); with the
covariance by prompt difficulty for a GPU run (data/lab/gpu/). Writes
figures/covariance_vs_entropy_change_*.* (screen) and figures/paper/.
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
        raise Skipped("no data/lab/*.parquet (the lab runs log the response-level covariance)")
    built = build("covariance", lab, max_detail=2)
    gpu = read_tables(ROOT / "data/lab/gpu/*.parquet")
    if gpu is not None:  # the 4x-batch GPU runs log the covariance per prompt-difficulty bin (paper Fig. 8, right)
        built += build("covariance", gpu, run_ids=["l-grpo-none-gpu-b64-s0"], max_detail=1)
    return built


if __name__ == "__main__":
    sys.exit(script("fig_covariance", make, OUT))
