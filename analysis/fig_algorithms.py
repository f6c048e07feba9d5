"""Paper Fig. 6: runs of different algorithms on one model with a shared fit: the real
deepseek-llm-7b-chat GSM8K runs (GRPO and PPO) and the lab's algorithm runs (GRPO, RLOO,
REINFORCE++; interventions such as grpo+clip_cov are not algorithms and are left out).
Writes figures/algorithms_one_curve_{real,lab}.* (screen) and figures/paper/.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from entropylaw.figure_sets.base import Skipped, read_tables, script  # noqa: E402
from entropylaw.figure_sets.build import build  # noqa: E402

OUT = ROOT / "figures"


def make():
    built = []
    reasons = []
    for name, pattern in (("real", "data/real/*.parquet"), ("lab", "data/lab/*.parquet")):
        t = read_tables(ROOT / pattern)
        if t is None:
            reasons.append(f"no {pattern}")
            continue
        try:
            built += [b.renamed(f"{b.name}_{name}") for b in build("algorithms", t)]
        except Skipped as why:
            reasons.append(f"{name}: {why}")
    for r in reasons:
        print(f"fig_algorithms: {r}")
    if not built:
        raise Skipped("; ".join(reasons))
    return built


if __name__ == "__main__":
    sys.exit(script("fig_algorithms", make, OUT))
