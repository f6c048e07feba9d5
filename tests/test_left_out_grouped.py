"""Runs left out for one reason are said once, counted, the first few named: a sweep whose
fit windows are all too short printed one error line of 2304 characters, the reason repeated
for each of its 14 runs (and 14 three-line warnings)."""

from pathlib import Path

from conftest import run_cli

from entropylaw.fit.run import left_out_line

ROOT = Path(__file__).resolve().parents[1]


def test_one_reason_for_many_runs_is_said_once():
    why = "the fit window (steps 5..14) holds 2 paired points; the fit needs at least 3"
    line = left_out_line({f"run{i:02d}": f"run 'run{i:02d}': {why}" for i in range(40)}, "no run could be predicted")
    assert line == f"no run could be predicted; left out (40 runs: run00, run01, run02 and 37 more): {why}"


def test_reasons_are_grouped_and_every_run_counted():
    left = {f"r{i}": "no entropy" if i % 2 else f"only {i} points" for i in range(20)}
    left["odd"] = "no score"
    line = left_out_line(left)
    assert line.startswith("left out (21 runs): ")
    assert "no entropy (10 runs: r1, r3, r5 and 7 more)" in line
    assert "only 0–18 points (10 runs: r0, r2, r4 and 7 more)" in line
    assert "odd (no score)" in line and len(line) < 200


def test_predict_on_a_sweep_with_windows_too_short_says_one_short_error_line(tmp_path):
    for f in sorted((ROOT / "data" / "real").glob("trl_*.parquet")):
        (tmp_path / f.name).symlink_to(f)
    out = run_cli("predict", str(tmp_path), "--fit-frac", "0.05")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    errors = [line for line in out.stderr.splitlines() if line.startswith("entropylaw: error:")]
    assert len(errors) == 1 and len(errors[0]) < 400, errors
    assert "left out (14 runs: qwen2.5-7b__exp1a__rho0.10_seed43" in errors[0] and "and 11 more" in errors[0]
    assert out.stderr.count("the fit needs at least 3") == 2  # once in the grouped warning, once in the error
