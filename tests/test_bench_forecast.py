"""analysis/bench_forecast.py: its noise floor and error metrics against hand computations."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from entropylaw import table
from entropylaw.fit.forecast.data import RunData

# prints numbers: run again under another BLAS kernel set (make test, OPENBLAS_CORETYPE=Prescott)
pytestmark = pytest.mark.printed

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("bench_forecast", ROOT / "analysis" / "bench_forecast.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def test_noise_floor_of_one_benchmark_and_of_a_mean():
    recs = [(s, "val/openai/gsm8k", 0.7) for s in (0, 10)] + [(s, "val/math", 0.4) for s in (0, 10)]
    recs += [(s, "val/mean", 0.55) for s in (0, 10)]
    df = table.from_records(recs, run_id="r")
    run = RunData.from_table(df, "r")
    se_gsm8k, se_math = np.sqrt(0.7 * 0.3 / 1319), np.sqrt(0.4 * 0.6 / 5000)
    assert bench.noise_floor(df, run, bench.PROBLEMS) == pytest.approx(100 * np.hypot(se_gsm8k, se_math) / 2)
    one = RunData.from_table(df, "r", y_key="val/openai/gsm8k")
    assert bench.noise_floor(df, one, bench.PROBLEMS) == pytest.approx(100 * se_gsm8k)
    assert bench.noise_floor(df, one, {}) is None  # n unknown: no floor, not a guess


def test_scores_of_a_forecast():
    steps = np.arange(0, 100, 10.0)  # 10 points: the last 10 % is the final point
    y = np.linspace(0.1, 0.55, 10)
    run = RunData.from_arrays(steps, y)
    later = steps[steps > 45]
    pred = y[steps > 45] + 0.02
    s = bench.score(later, pred, pred - 0.01, pred + 0.01, run, 45)
    assert s["final"] == pytest.approx(2.0) and s["last10"] == pytest.approx(2.0) and s["rmse"] == pytest.approx(2.0)
    assert s["raw_covered"] is False and s["e"] > 1
    s = bench.score(later, pred, pred - 0.03, pred + 0.03, run, 45)
    assert s["raw_covered"] is True and s["e"] < 1


def test_noise_floor_reads_the_benchmark_whatever_the_case_of_its_key():
    """veRL names MATH 'DigitalLearningGmbH/MATH-lighteval': a case-sensitive lookup lost its
    5,000 problems and the floor of the GSM8K + MATH run (it said 'n unknown')."""
    key = "val/DigitalLearningGmbH/MATH-lighteval"
    df = table.from_records([(s, key, 0.4) for s in (0, 10)], run_id="r")
    run = RunData.from_table(df, "r", y_key=key)
    assert bench.noise_floor(df, run, bench.PROBLEMS) == pytest.approx(100 * np.sqrt(0.4 * 0.6 / 5000))
