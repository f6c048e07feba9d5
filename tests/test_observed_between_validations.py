"""A backtest's observed final score where ``--total-steps`` N falls between two validations
(validations every 5 steps, N 198): the observed column was blank beside the forecast although the
run logged validations at 195 and 200. The score read is the last logged at or before N, within one
interval of N, and its step is said; forecast, rank and their JSON read it alike (:mod:`.final`)."""

import json

import numpy as np
import pytest
from conftest import run_main

from entropylaw.fit.forecast.final import observed_final_at, observed_lines

pytestmark = pytest.mark.printed


def _val(step):
    return round(0.3 + 0.4 * (1 - np.exp(-step / 60)) + 0.01 * np.sin(step), 6)


def _run(path, last=200, val_steps=None, shift=0.0):
    val_steps = set(range(5, last + 1, 5)) if val_steps is None else set(val_steps)
    with open(path, "w") as f:
        for s in range(1, last + 1):
            row = {"step": s, "actor/entropy": 1.2 * np.exp(-s / 50) + 0.15 + shift,
                   "critic/score/mean": 0.5 - 0.2 * np.exp(-s / 50)}
            if s in val_steps:
                row["val-core/gsm8k/acc/mean@1"] = _val(s) - shift
            f.write(json.dumps(row) + "\n")
    return path


def test_the_rule_reads_the_last_validation_before_n_within_one_interval():
    s = np.arange(5.0, 201, 5.0)
    v = s / 1000
    assert observed_final_at("validation", s, v, (198.0, 198.0)) == (0.195, 195.0)
    assert observed_final_at("validation", s, v, (200.0, 200.0)) == (0.2, 200.0)  # logged at N: N's own
    # the run's log stopped before N (at 196): it has no score at N, though 195 lies within an interval
    assert observed_final_at("validation", s, v, (198.0, 198.0), reached=196.0) is None
    assert observed_final_at("validation", s, v, (198.0, 198.0), reached=230.0) == (0.195, 195.0)
    # a gap in the evaluations (every 5 steps to 100, then 200 alone): step 100's is no score at 150
    gap = np.r_[np.arange(5.0, 101, 5.0), 200.0]
    assert observed_final_at("validation", gap, gap / 1000, (150.0, 150.0)) is None
    # a training score's final is a mean over its span, unchanged
    got = observed_final_at("training score", s, v, (188.1, 198.0))
    assert got == (pytest.approx(0.1925), 195.0)
    assert observed_lines([("a", "validation", 200.0, 200.0), ("b", "training score", 195.0, 198.0)]) == []
    many = observed_lines([(f"r{i}", "validation", 195.0, 198.0) for i in range(9)])
    assert many == ["observed (r0, r1, r2, r3, r4, r5 and 3 more): the validation score at step 195, the last they "
                    "logged at or before step 198 (none at 198)"]


def test_forecast_and_rank_show_the_validation_at_195_for_n_198_and_say_so(tmp_path, capsys):
    a, b = _run(tmp_path / "a.jsonl"), _run(tmp_path / "b.jsonl", shift=0.05)
    code, out, err = run_main(capsys, "forecast", a, "--fit-frac", "0.25", "--total-steps", "198", "--n-boot", "30")
    assert code == 0, err
    table_row = next(line for line in out.splitlines() if line.startswith("last-value"))
    assert f"{_val(195):.4f}" in table_row.split("]")[1], out
    flat = " ".join(out.split())
    assert ("observed: the validation score at step 195, the last the run logged at or before step 198 "
            "(none at 198)") in flat
    code, out, err = run_main(capsys, "forecast", a, "--fit-frac", "0.25", "--total-steps", "198", "--n-boot", "30",
                              "--json")
    [doc] = json.loads(out)
    assert doc["final"]["observed"] == pytest.approx(_val(195)) and doc["final"]["observed_step"] == 195.0
    code, out, err = run_main(capsys, "rank", a, b, "--fit-frac", "0.25", "--total-steps", "198", "--n-boot", "30")
    assert code == 0, err
    flat = " ".join(out.split())
    assert f"{_val(195):.3f}" in out and f"{_val(195) - 0.05:.3f}" in out
    assert "note: observed (a, b): the validation score at step 195, the last they logged at or before step 198" in flat
    code, out, err = run_main(capsys, "rank", a, b, "--fit-frac", "0.25", "--total-steps", "198", "--n-boot", "30",
                              "--json")
    rows = {r["run_id"]: r for r in json.loads(out)}
    assert rows["a"]["observed"] == pytest.approx(doc["final"]["observed"], abs=1e-12)  # rank's and forecast's
    assert rows["a"]["observed_step"] == rows["b"]["observed_step"] == 195.0


def test_n_at_a_validation_says_nothing_more_and_a_gap_shows_no_score_from_far_back(tmp_path, capsys):
    a = _run(tmp_path / "a.jsonl")
    code, out, err = run_main(capsys, "forecast", a, "--fit-frac", "0.25", "--total-steps", "200", "--n-boot", "30")
    assert code == 0 and f"{_val(200):.4f}" in out and "observed:" not in out, out
    # evaluations every 5 steps to 100, then one at 200: at N 150 the last before is 50 steps back
    gap = _run(tmp_path / "gap.jsonl", val_steps=[*range(5, 101, 5), 200])
    code, out, err = run_main(capsys, "forecast", gap, "--fit-frac", "0.3", "--total-steps", "150", "--n-boot", "30",
                              "--json")
    assert code == 0, err
    [doc] = json.loads(out)
    assert doc["final"]["observed"] is None and doc["final"]["observed_step"] is None, doc["final"]
    code, out, err = run_main(capsys, "forecast", gap, "--fit-frac", "0.3", "--total-steps", "150", "--n-boot", "30")
    row = next(line for line in out.splitlines() if line.startswith("last-value"))
    assert "observed:" not in out and row.split("]")[1].split()[0] == "-", out
