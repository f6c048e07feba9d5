"""Paper Fig. 8: response-level covariance vs the step-wise entropy change over training,
and by prompt difficulty, from the lab runs that log cov/response_level
(data/lab/*.parquet; at most two runs, baseline runs first). Writes figures/fig08_covariance_*.*.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from entropylaw.plots.build import Skipped, build, read_tables, script  # noqa: E402

OUT = ROOT / "figures"

from entropylaw import table  # noqa: E402

MAX_RUNS = 2


def make():
    lab = read_tables(ROOT / "data/lab/*.parquet")
    if lab is None:
        raise Skipped("no data/lab/*.parquet (the lab runs log the response-level covariance)")
    with_cov = [r for r in table.run_ids(lab) if len(table.series(lab, r, "cov/response_level"))]
    # baseline GRPO runs first: Fig. 8 is about the unregularised dynamics
    meta = table.runs(lab).set_index("run_id")
    ranked = sorted(with_cov, key=lambda r: (meta.at[r, "algorithm"] not in ("grpo", ""), r))
    return build("covariance", lab, run_ids=ranked[:MAX_RUNS] or None)


if __name__ == "__main__":
    sys.exit(script("fig_covariance", make, OUT))
