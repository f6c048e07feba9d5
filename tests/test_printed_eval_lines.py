"""A printed log's evaluation lines that name no step of their own (``eval accuracy 0.40`` after ``step 10 reward
0.31 entropy 0.81``): read at the step line above them as validation keys. Before, they were silently ignored (or
said as "numbers without a step": not read), the run read with no validation series."""

from __future__ import annotations

import json

import pytest

import entropylaw as el
from conftest import run_cli
from entropylaw.api.reading import row_accounts
from entropylaw.readers.printed_evals import BEFORE_STEPS

READ_AT_STEP = "an evaluation printed without a step of its own"


def _log(path, evals, before=None, steps=(10, 20, 30)):
    """Step lines with named numbers, each but the last followed by an evaluation's line (``evals``: its text for a
    value); ``before``: an evaluation's line printed before the first step line."""
    lines = [before] if before else []
    for i, s in enumerate(steps):
        lines.append(f"step {s} reward {0.31 + i / 100:.2f} entropy {0.81 - i / 100:.2f}")
        if i < len(steps) - 1:
            lines.append(evals(0.40 + i * 0.05))
    path.write_text("\n".join(lines) + "\n")
    return path


def _series(df, metric):
    rows = df[df["metric"] == metric]
    return rows["step"].tolist(), rows["value"].tolist()


def test_the_briefs_log_reads_its_evaluations_at_the_step_above(tmp_path):
    path = tmp_path / "x.log"
    path.write_text("step 10 reward 0.31 entropy 0.81\neval accuracy 0.40\n"
                    "step 20 reward 0.35 entropy 0.78\neval accuracy 0.45\n")
    df = el.load(path, warn=False)
    steps, values = _series(df, "val/accuracy")
    assert steps == [10, 20] and values == pytest.approx([0.40, 0.45])
    assert _series(df, "entropy") == ([10, 20], pytest.approx([0.81, 0.78]))
    [account] = row_accounts(df)
    assert account["dropped"] == {} and account["rows_read"] == account["rows_kept"] == 6, account
    assert any(n.startswith(f"2 lines {READ_AT_STEP} (the first at line 2): read at the step line above")
               for n in account["notes"]), account["notes"]
    assert not any("without a step (a config echo" in n for n in account["notes"]), account["notes"]


@pytest.mark.parametrize("printed, metric", [
    (lambda v: f"eval accuracy {v:.2f}", "val/accuracy"),
    (lambda v: f"Validation: acc={v:.2f}", "val/acc"),
    (lambda v: f"[eval] accuracy: {100 * v:.1f}%", "val/accuracy"),  # a percent: read as its fraction
    (lambda v: f"test_acc {v:.2f}", "val/acc"),  # a key naming its split: an evaluation's as printed
    (lambda v: f"2026-11-30 10:00:01 INFO eval accuracy {v:.2f}", "val/accuracy"),
])
def test_each_evaluation_shape_is_a_validation_series(tmp_path, printed, metric):
    df = el.load(_log(tmp_path / "train.log", printed), warn=False)
    steps, values = _series(df, metric)
    assert steps == [10, 20] and values == pytest.approx([0.40, 0.45]), df[["step", "metric", "value"]]
    [account] = row_accounts(df)
    assert account["dropped"] == {} and account["rows_read"] == account["rows_kept"], account
    assert any(READ_AT_STEP in n for n in account["notes"]), account["notes"]


def test_an_evaluation_before_the_first_step_is_counted_dropped(tmp_path):
    df = el.load(_log(tmp_path / "train.log", lambda v: f"eval accuracy {v:.2f}", before="eval accuracy 0.30"),
                 warn=False)
    steps, values = _series(df, "val/accuracy")
    assert steps == [10, 20] and values == pytest.approx([0.40, 0.45])
    [account] = row_accounts(df)
    assert account["dropped"] == {BEFORE_STEPS: 1}, account
    assert account["rows_read"] == account["rows_kept"] + 1
    assert account["at"][BEFORE_STEPS] == [1, [1]]  # one line lost, line 1


def test_the_command_reads_the_validation_series_and_says_the_drop(tmp_path):
    path = _log(tmp_path / "train.log", lambda v: f"Validation: acc={v:.2f}", before="[eval] accuracy: 30.0%")
    out = run_cli("summary", str(path), "--json")
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    [run] = got["runs"]
    assert (run["val"], run["val_first"], run["val_last"]) == ("val/acc", 0.40, 0.45), run
    [account] = got["row_accounts"]
    assert account["dropped"] == {BEFORE_STEPS: 1}, account
    assert any(n.startswith(f"2 lines {READ_AT_STEP} (the first at line 3)") for n in account["notes"])
    assert "dropped 1 of" in out.stderr and BEFORE_STEPS in out.stderr.replace("\n  ", " "), out.stderr


def test_a_line_of_numbers_that_is_no_evaluations_is_still_not_read(tmp_path):
    """A config echo between the step lines names no evaluation: said, not read at a step (as before)."""
    df = el.load(_log(tmp_path / "train.log", lambda v: "lr=1e-05 batch=8"), warn=False)
    assert set(df["metric"]) == {"score", "entropy"}
    [account] = row_accounts(df)
    assert "2 lines print numbers without a step (a config echo, a summary): not read, the first at line 2" in \
        account["notes"], account["notes"]
    assert not any(READ_AT_STEP in n for n in account["notes"])


def test_an_existing_printed_shape_reads_as_before(tmp_path):
    """tests/test_ingest_kv_console.py's "bars" shape: a config echo before the steps, evaluations on step lines
    of their own (``step 10 | eval_acc 45.3%``)."""
    lines = ["loading model Qwen2.5-Math-1.5B ...", "lr=1e-05 batch=8"]
    for s in range(1, 21):
        lines.append(f"step {s}/20 | entropy {0.8 - s / 100:.4f} | reward {0.1 + s / 100:.4f} | lr 1e-06")
        if s % 10 == 0:
            lines.append(f"step {s} | eval_acc {40 + s / 2:.1f}%")
    (tmp_path / "run.log").write_text("\n".join(lines) + "\n")
    df = el.load(tmp_path / "run.log", warn=False)
    assert _series(df, "val/acc") == ([10, 20], pytest.approx([0.45, 0.50]))
    assert _series(df, "entropy")[0] == list(range(1, 21))
    [account] = row_accounts(df)
    assert account["rows_read"] == account["rows_kept"] and account["dropped"] == {}, account
    assert "1 line print numbers without a step (a config echo, a summary): not read, the first at line 2" in \
        account["notes"], account["notes"]
    assert not any(READ_AT_STEP in n for n in account["notes"])
    assert json.loads(el.table.runs(df)["config"].iloc[0]) == {"total_steps": 20}
