"""A score written with a percent sign is a percent whatever its values: ``"6.2%"`` in a JSON line or a
CSV cell, ``val_acc 0.5%`` in a printed log, a column named ``val_acc (%)``. Custom trainers format their
scores so; they were dropped as text (JSON, CSV), not found (the header), or read 100 times too high
(``0.5%`` printed: the fraction 0.5)."""

from __future__ import annotations

import json
import math

import pytest

import entropylaw as el
from entropylaw.readers.percent_text import percent_number


def _acc(s: int) -> float:
    return 0.05 + 0.6 * (1 - math.exp(-s / 20))  # a fraction


def _val(df, key="val/accuracy"):
    return df[df["metric"] == key].set_index("step")["value"]


def _notes(df) -> str:
    return " ".join(el.row_accounts(df)[0]["notes"])


def test_percent_number_reads_a_number_with_its_sign_only():
    assert percent_number("6.2%") == 6.2 and percent_number(" 45 % ") == 45.0 and percent_number("-1.5e1%") == -15.0
    for text in ("6.2", "%", "6.2%%", "abc%", "6.2% done", ""):
        assert percent_number(text) is None, text


def test_json_values_written_with_a_percent_sign_are_read_as_a_percent(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_text("".join(json.dumps({"step": s, "entropy": 0.6 * math.exp(-s / 40),
                                        "eval_accuracy": f"{100 * _acc(s):.1f}%"}) + "\n" for s in range(1, 41)))
    df = el.load(path, warn=False)
    val = _val(df)
    assert len(val) == 40 and val.iloc[-1] == pytest.approx(round(100 * _acc(40), 1) / 100, abs=1e-9)
    [acct] = el.row_accounts(df)
    assert acct["dropped"] == {} and "written as a percent" in _notes(df)


def test_a_percent_below_one_is_not_read_as_a_fraction(tmp_path):
    """0.5% .. 1.9%: by its values a fraction (and 1.2 an accuracy above 1, dropped); by its sign a percent."""
    path = tmp_path / "log.jsonl"
    vals = ["0.5%", "0.8%", "1.2%", "1.9%"]
    path.write_text("".join(json.dumps({"step": s, "entropy": 0.5 - 0.05 * s, "eval_accuracy": v}) + "\n"
                            for s, v in enumerate(vals, 1)))
    df = el.load(path, warn=False)
    assert list(_val(df).round(6)) == [0.005, 0.008, 0.012, 0.019]
    assert el.row_accounts(df)[0]["dropped"] == {}


def test_csv_cells_with_a_percent_sign_are_numbers(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text("step,entropy,val_acc\n" + "".join(f"{s},{0.6 * math.exp(-s / 40):.4f},{100 * _acc(s):.2f}%\n"
                                                       for s in range(1, 31)))
    df = el.load(path, warn=False)
    val = _val(df, "val/acc")
    assert len(val) == 30 and val.iloc[0] == pytest.approx(round(100 * _acc(1), 2) / 100, abs=1e-9)
    assert "val_acc (text)" not in _notes(df)


def test_a_column_named_with_a_percent_unit_is_a_percent_score(tmp_path):
    path = tmp_path / "metrics.tsv"
    path.write_text("step\tentropy\tval_acc (%)\n" + "".join(f"{s}\t{0.6 * math.exp(-s / 40):.4f}\t{100 * _acc(s):.2f}\n"
                                                            for s in range(1, 31)))
    df = el.load(path, warn=False)
    val = _val(df, "val/acc")
    assert len(val) == 30 and val.max() <= 1 and val.iloc[-1] == pytest.approx(round(100 * _acc(30), 2) / 100)
    assert "'val_acc (%)' as 'val_acc'" in _notes(df)


def test_a_printed_percent_below_one_is_a_percent(tmp_path):
    path = tmp_path / "train.log"
    path.write_text("".join(f"step {s} | entropy {0.9 - 0.1 * s:.2f} | val_acc {0.1 * s:.1f}%\n" for s in range(1, 7)))
    df = el.load(path, warn=False)
    assert list(_val(df, "val/acc").round(6)) == [0.001, 0.002, 0.003, 0.004, 0.005, 0.006]


def test_what_a_percent_sign_does_not_change(tmp_path):
    """A key that is no score keeps its printed number; a percent above 100 is no accuracy's; a name
    with a percent unit beside the same name without it is left as written (no two keys made one)."""
    path = tmp_path / "log.jsonl"
    path.write_text("".join(json.dumps({"step": s, "entropy": 0.5, "gpu_util": "85%", "eval_accuracy": f"{40 + s}%",
                                        "growth": "150%", "acc %": 3.0, "acc": 0.2}) + "\n" for s in range(1, 6)))
    df = el.load(path, warn=False)
    by = df.groupby("metric")["value"].last()
    assert by["gpu_util"] == 85.0 and by["growth"] == 150.0
    assert _val(df).iloc[-1] == pytest.approx(0.45)
    assert by["acc %"] == 3.0 and by["acc"] == 0.2


def test_a_given_score_scale_wins_over_the_sign(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_text("".join(json.dumps({"step": s, "entropy": 0.5, "eval_accuracy": f"{0.1 * s:.1f}%"}) + "\n"
                            for s in range(1, 6)))
    df = el.load(path, warn=False, score_scale=1.0)
    assert _val(df).iloc[-1] == pytest.approx(0.5)


@pytest.mark.parametrize("key", ["val/math", "eval/gsm8k", "test/aime24", "val/openai/gsm8k"])
def test_a_benchmarks_validation_in_percent_is_read_as_one(tmp_path, key):
    """``val/math`` at 4.9 .. 44.7: a benchmark's validation is a share of its problems solved; it was
    read in its own units, no forecast on the logit scale and the law "not an accuracy"."""
    path = tmp_path / "run.csv"
    path.write_text(f"step,entropy,{key}\n" + "".join(f"{s},{0.6 * math.exp(-s / 40):.4f},{100 * _acc(s):.3f}\n"
                                                      for s in range(1, 41)))
    df = el.load(path, warn=False)
    val = df[df["metric"].str.startswith("val/")]["value"]
    assert len(val) == 40 and val.max() == pytest.approx(round(100 * _acc(40), 3) / 100)


def test_a_benchmarks_reward_keeps_its_scale(tmp_path):
    """veRL's ``val/test_score/gsm8k`` is a reward's mean, on the trainer's scale (0 .. 10 here)."""
    path = tmp_path / "run.csv"
    path.write_text("step,entropy,val/test_score/gsm8k\n" + "".join(
        f"{s},{0.6 * math.exp(-s / 40):.4f},{10 * _acc(s):.3f}\n" for s in range(1, 41)))
    df = el.load(path, warn=False)
    assert df[df["metric"].str.startswith("val/")]["value"].max() == pytest.approx(round(10 * _acc(40), 3))
