"""``make figures``: regenerate every figure in figures/ from data/, in both styles.

Runs each ``analysis/fig_*.py`` in its own process (one figure family per script, so a
failure in one does not stop the others); each script draws its figures twice: the
screen style into figures/ (PNG + PDF) and the paper style (3.5 / 7 in wide, fonts of
7 pt and more, TrueType fonts in the PDF) into figures/paper/. Prints what each wrote or
why it skipped a figure, and exits non-zero only when a script crashed. Output is
deterministic: the same data gives the same bytes (``entropylaw.draw.style.save``
strips timestamps).

    .venv/bin/python analysis/make_figures.py [fig_law fig_early ...]
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ["fig_law", "fig_forecast", "fig_consumption", "fig_early", "fig_algorithms", "fig_scaling",
           "fig_covariance", "fig_interventions", "fig_probe", "fig_lab_theory", "fig_dose", "fig_trl"]


def main(argv: list[str]) -> int:
    names = argv or SCRIPTS
    unknown = [n for n in names if n not in SCRIPTS]
    if unknown:
        print(f"make_figures: unknown script(s) {unknown} (expected {SCRIPTS})", file=sys.stderr)
        return 2
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONHASHSEED="0")
    failed, skipped = [], []
    start = time.time()
    for name in names:
        t0 = time.time()
        res = subprocess.run([sys.executable, str(ROOT / "analysis" / f"{name}.py")], cwd=ROOT, env=env,
                             capture_output=True, text=True)
        sys.stdout.write(res.stdout)
        print(f"make_figures: {name} took {time.time() - t0:.0f} s")
        if res.returncode != 0:
            sys.stdout.write(res.stderr)
            failed.append(name)
        elif "SKIPPED" in res.stdout:
            skipped.append(name)
    screen = len(list((ROOT / "figures").glob("*.png")))
    paper = len(list((ROOT / "figures" / "paper").glob("*.pdf")))
    print(f"make_figures: {len(names) - len(failed) - len(skipped)} scripts drew figures, "
          f"{len(skipped)} skipped ({', '.join(skipped) or 'none'}), {len(failed)} failed "
          f"({', '.join(failed) or 'none'}) in {time.time() - start:.0f} s; figures/ holds {screen} PNG files, "
          f"figures/paper/ {paper} PDF files")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
