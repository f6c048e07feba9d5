"""``make figures``: regenerate every figure in figures/ from data/.

Runs each ``analysis/fig_*.py`` in its own process (one figure family per script, so a
failure in one does not stop the others), prints what each wrote or why it skipped a
figure, and exits non-zero only when a script crashed. Output is deterministic: the same
data gives the same bytes (``entropylaw.plots.style.save`` strips timestamps).

    .venv/bin/python analysis/make_figures.py [fig_law fig_early ...]
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ["fig_law", "fig_consumption", "fig_early", "fig_algorithms", "fig_scaling", "fig_covariance",
           "fig_interventions", "fig_probe"]


def main(argv: list[str]) -> int:
    names = argv or SCRIPTS
    unknown = [n for n in names if n not in SCRIPTS]
    if unknown:
        print(f"make_figures: unknown script(s) {unknown} (expected {SCRIPTS})", file=sys.stderr)
        return 2
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONHASHSEED="0")
    failed, skipped = [], []
    for name in names:
        res = subprocess.run([sys.executable, str(ROOT / "analysis" / f"{name}.py")], cwd=ROOT, env=env,
                             capture_output=True, text=True)
        sys.stdout.write(res.stdout)
        if res.returncode != 0:
            sys.stdout.write(res.stderr)
            failed.append(name)
        elif "SKIPPED" in res.stdout:
            skipped.append(name)
    n_files = len(list((ROOT / "figures").glob("*.png")))
    print(f"make_figures: {len(names) - len(failed) - len(skipped)} scripts drew figures, "
          f"{len(skipped)} skipped ({', '.join(skipped) or 'none'}), {len(failed)} failed "
          f"({', '.join(failed) or 'none'}); figures/ holds {n_files} PNG files")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
