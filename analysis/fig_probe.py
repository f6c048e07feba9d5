"""Paper Table 1 (covariance of the top tokens) and the entropy-change ladder (per-token
agreement of each estimator, Lemma 1's batch-mean dH vs the measured one, Lemma 1's error
vs the step size), from the probe's summary JSON (the first of
data/probe/**/summary.json, data/**/summary.json). Writes figures/table1_covariance_top_tokens.* and
figures/ladder_entropy_change.* (screen; paper style in figures/paper/).
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from entropylaw.figure_sets.base import Skipped, script  # noqa: E402

OUT = ROOT / "figures"

from entropylaw.figure_sets.build import build_probe, read_probe_summary  # noqa: E402


def find_summary():
    for pattern in ("data/probe/**/summary.json", "data/**/summary.json"):
        found = sorted(p for p in ROOT.glob(pattern) if p.is_file())
        if found:
            return found[0]
    return None


def make():
    path = find_summary()
    if path is None:
        raise Skipped("no probe summary (expected data/probe/.../summary.json from `entropylaw probe`)")
    summary = read_probe_summary(path)
    print(f"fig_probe: using {path.relative_to(ROOT)}")
    built = []
    for name in ("table1", "ladder"):
        try:
            built += build_probe(name, summary)
        except Skipped as why:
            print(f"fig_probe: {why}")
    if not built:
        raise Skipped("the probe summary has neither table1 nor ladder")
    return built


if __name__ == "__main__":
    sys.exit(script("fig_probe", make, OUT))
