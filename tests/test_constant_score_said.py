"""A score stuck at one value: every form of the law fits it exactly (each AIC -inf), and `fit` named the first
form of its table ("power") the best; `watch` printed "R² nan" where `fit` prints "-"."""

from __future__ import annotations

import numpy as np

import entropylaw as el
from entropylaw.cli.main import main


def _log(path):
    path.write_text("".join(f"step {s} | entropy {1.2 * np.exp(-s / 20) + 0.1:.4f} | reward 0.5\n"
                            for s in range(1, 41)))
    return path


def test_a_constant_score_has_no_best_form_and_no_r2(tmp_path, capsys):
    log = _log(tmp_path / "run.log")
    fit = el.fit(el.load(str(log), warn=False))
    assert fit.best_form_aic_ is None and fit.best_form_bic_ is None and np.isnan(fit.r2_)
    assert main(["watch", str(log), "--plain", "--max-refreshes", "1", "--n-boot", "20"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "R² - points 40" in out and "R² nan" not in out, out
    # a score that moves keeps its best form
    path = tmp_path / "moving.log"
    path.write_text("".join(f"step {s} | entropy {1.2 * np.exp(-s / 20) + 0.1:.4f} | reward "
                            f"{0.8 - 0.3 * np.exp(1.2 * np.exp(-s / 20) + 0.1) + 0.01 * np.sin(s):.4f}\n"
                            for s in range(1, 41)))
    assert el.fit(el.load(str(path), warn=False)).best_form_aic_
