"""`report` forecasts from the first 15 % of each run: a short custom loop (45 steps, validated
every 5) has one score there, and every run's row said "no forecast" with the methods' needs and
nothing of what to do. Where the window is too short, the page and the command's lines say which
--fit-frac holds enough points and what half the run holds (computed in the results, shown by the
page)."""

from __future__ import annotations

import json
import math

from conftest import run_cli

HINT = "raise --fit-frac: the first 15 % of this run holds 1 validation point; at 0.4 it holds 3, at 0.5 4"


def _short_loop(folder, rates=(12.0, 18.0)):
    """Runs of a custom loop: 45 steps with loss and entropy, a validation accuracy every 5 steps."""
    folder.mkdir()
    for i, rate in enumerate(rates):
        with open(folder / f"run{i}.jsonl", "w") as f:
            for s in range(1, 46):
                d = {"step": s, "loss": 1.0 / s, "entropy": 0.2 + 0.9 * math.exp(-s / 15)}
                if s % 5 == 0:
                    d["val/accuracy"] = round(0.2 + 0.5 * (1 - math.exp(-s / rate)), 4)
                f.write(json.dumps(d) + "\n")
    return folder


def test_a_short_loop_says_which_fit_frac_gives_a_forecast(tmp_path):
    runs = _short_loop(tmp_path / "loop")
    out = run_cli("report", str(runs), "--out", str(tmp_path / "page"))
    assert out.returncode == 0, out.stderr
    err = " ".join(out.stderr.split())
    assert "skipped forecast: no run could be forecast" in err and HINT in err, out.stderr
    html = (tmp_path / "page" / "report.html").read_text()
    assert html.count(HINT) >= 2, "each run's row says how to get its forecast"
    # the hint holds: at 0.4 every run is forecast, and nothing is said of the window
    wider = run_cli("report", str(runs), "--out", str(tmp_path / "wider"), "--fit-frac", "0.4")
    assert wider.returncode == 0 and "skipped forecast" not in wider.stderr, wider.stderr
    assert "raise --fit-frac" not in (tmp_path / "wider" / "report.html").read_text()


def test_forecast_and_rank_refused_for_a_short_window_say_which_fit_frac_holds_enough(tmp_path):
    runs = _short_loop(tmp_path / "loop")
    one = run_cli("forecast", str(runs / "run0.jsonl"), "--fit-frac", "0.15")
    assert one.returncode == 2 and "Traceback" not in one.stderr
    assert HINT in " ".join(one.stderr.split()), one.stderr
    both = run_cli("forecast", str(runs), "--fit-frac", "0.15")
    said = " ".join(both.stderr.split())
    assert both.returncode == 2 and "left out (2 runs: run0, run1)" in said and HINT in said, both.stderr
    ranked = run_cli("rank", str(runs), "--fit-frac", "0.15")
    assert HINT in " ".join((ranked.stdout + ranked.stderr).split()), ranked.stdout + ranked.stderr
    assert run_cli("forecast", str(runs), "--fit-frac", "0.4").returncode == 0
