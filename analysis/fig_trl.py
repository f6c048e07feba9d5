"""The real RL run by a real trainer (data/trl): TRL's GRPOTrainer on SmolLM2-135M-Instruct,
on CPU (data/trl/smollm2_grpo.parquet) and the 4x-batch GPU replicate (data/trl/gpu/):
held-out accuracy vs policy entropy with each run's fitted law (figures/trl_law_*), and
``probe-checkpoints --table1`` over the CPU run's checkpoints on one fixed prompt batch
(data/trl/probe_checkpoints.parquet): Table 1 and the covariance across training
(figures/covariance_across_checkpoints_*). Screen style in figures/, paper in figures/paper/.
Numbers: data/trl/README.md (``analysis/trl_findings.py``).
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from entropylaw.figure_sets.base import Skipped, read_tables, script  # noqa: E402
from entropylaw.figure_sets.build import build  # noqa: E402

OUT = ROOT / "figures"
RUNS = (ROOT / "data/trl/smollm2_grpo.parquet", ROOT / "data/trl/gpu/smollm2_grpo.parquet")
PROBE = ROOT / "data/trl/probe_checkpoints.parquet"


def make():
    built, why = [], []
    runs = read_tables(*RUNS)
    if runs is None:
        why.append("no data/trl/smollm2_grpo.parquet (analysis/trl_run.py --export data/trl)")
    else:  # named trl_*: the law figures of data/real keep their own names
        built += [b.renamed(f"trl_{b.name}") for b in build("law", runs)]
    probe = read_tables(PROBE)
    if probe is None:
        why.append(f"no {PROBE.relative_to(ROOT)} (entropylaw probe-checkpoints --table1)")
    else:
        built += build("checkpoints", probe)
    if not built:
        raise Skipped("; ".join(why))
    for line in why:
        print(f"fig_trl: {line}")
    return built


if __name__ == "__main__":
    sys.exit(script("fig_trl", make, OUT))
