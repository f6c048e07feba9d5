"""The forecast of each run's final score from its first 15 % of steps (the default
method, with its 90 % interval), the law's ceiling from the same steps, and the score
then observed: figures/forecast_final_score_{real,lab}.* (screen) and figures/paper/.
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
    for name in ("real", "lab"):
        t = read_tables(ROOT / f"data/{name}/*.parquet")
        if t is None:
            print(f"fig_forecast: no data/{name}/*.parquet")
            continue
        try:
            built += [b.renamed(f"{b.name}_{name}") for b in build("forecast", t, fit_frac=0.15)]
        except Skipped as why:
            print(f"fig_forecast: {name}: {why}")
    if not built:
        raise Skipped("no run table in data/real or data/lab")
    return built


if __name__ == "__main__":
    sys.exit(script("fig_forecast", make, OUT))
