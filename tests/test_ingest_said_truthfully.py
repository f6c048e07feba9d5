"""What reading says about a log: which step an eval line is read on, where the unparseable
lines are, what a drop counts, a file named twice, a reward that may be in percent."""

from __future__ import annotations

import json
import math
import warnings

import pandas as pd
import pytest

import entropylaw as el
from entropylaw.api.reading import loss_lines


def _series(df, metric: str) -> dict:
    rows = df[df["metric"] == metric]
    return dict(zip(rows["step"].tolist(), rows["value"].tolist()))


def _train_and_eval_steps(path):
    """A trainer that declared ``eval/*`` on ``eval/step``: its eval lines lack ``train/step``."""
    lines = []
    for s in range(1, 41):
        lines.append({"train/step": s, "actor/entropy": math.exp(-s / 20), "critic/score/mean": 0.2 + s / 100,
                      "timing_s/step": 30.0})
        if s % 5 == 0:
            lines.append({"eval/step": s, "eval/accuracy": 0.1 + s / 100})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


@pytest.mark.parametrize("step_key", ["train/step", None])
def test_jsonl_eval_lines_without_the_step_key_are_read_on_their_own_step(tmp_path, step_key):
    """`--step-key train/step` dropped every eval line (no train/step) as unparseable."""
    path = _train_and_eval_steps(tmp_path / "run.jsonl")
    df = el.load(path, step_key=step_key, warn=False)
    assert _series(df, "val/accuracy") == pytest.approx({s: 0.1 + s / 100 for s in range(5, 41, 5)})
    assert len(_series(df, "timing_s/step")) == 40  # seconds a step, not a step axis
    [account] = el.row_accounts(df)
    assert account["dropped"] == {} and account["rows_read"] == account["rows_kept"] == 40 * 3 + 8
    if step_key:
        assert any("8 lines without 'train/step' read on their own step key (eval/step)" in n
                   for n in account["notes"]), account["notes"]


def test_jsonl_eval_steps_counting_evals_are_no_restart_of_the_train_steps(tmp_path):
    lines = [{"train/step": s, "actor/entropy": math.exp(-s / 20), "critic/score/mean": 0.2 + s / 100}
             for s in range(1, 41)]
    for n in range(1, 5):  # eval/step counts evals: 1..4, below the train steps already read
        lines.insert(10 * n + n - 1, {"eval/step": n, "eval/accuracy": 0.1 * n})
    (tmp_path / "run.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    df = el.load(tmp_path / "run.jsonl", step_key="train/step", warn=False)
    assert len(_series(df, "entropy")) == 40
    assert _series(df, "val/accuracy") == pytest.approx({1: .1, 2: .2, 3: .3, 4: .4})


def test_a_table_with_train_and_eval_step_columns_reads_the_eval_rows_on_eval_step(tmp_path):
    """The same log as a CSV: `--step-key train/step` dropped its eval rows (no train/step)."""
    rows = [json.loads(x) for x in _train_and_eval_steps(tmp_path / "run.jsonl").read_text().splitlines()]
    pd.DataFrame(rows).to_csv(tmp_path / "run.csv", index=False)
    df = el.load(tmp_path / "run.csv", step_key="train/step", warn=False)
    assert _series(df, "val/accuracy") == pytest.approx({s: 0.1 + s / 100 for s in range(5, 41, 5)})
    assert len(_series(df, "timing_s/step")) == 40  # seconds a step, not a step column
    [account] = el.row_accounts(df)
    assert account["dropped"] == {}, account
    assert any("lacking 'train/step': eval/accuracy on eval/step" in n for n in account["notes"]), account["notes"]


def test_the_drop_warning_names_the_unparseable_lines_and_counts_values_not_rows(tmp_path):
    """The warning said "dropped 5 of 121 rows (unparseable line: 5)" of 3 lines, naming none."""
    lines = [json.dumps({"step": s, "actor/entropy": math.exp(-s / 20), "critic/score/mean": 0.2 + s / 100})
             for s in range(1, 61)]
    lines[16] = '{"step": 17, "actor/entropy": 0.5, "critic/score/mean": oops}'
    lines[29] = '{"step": 30, "actor/entropy": 0.5, "critic/score/mean": oops}'
    (tmp_path / "run.jsonl").write_text("\n".join(lines + ["garbage"]) + "\n")
    with pytest.warns(el.RowsDroppedWarning) as said:
        el.load(tmp_path / "run.jsonl")
    assert any("dropped 5 of 121 values (unparseable line: 5 values on 3 lines, at lines 17, 30, 61)" in str(w.message)
               for w in said), [str(w.message) for w in said]


def test_a_table_row_without_a_step_is_one_line_of_its_values(tmp_path):
    """A CSV row of 3 metrics without a step was said as 3 "rows" dropped."""
    steps = [float(s) for s in range(1, 31)]
    steps[4] = steps[9] = float("nan")
    pd.DataFrame({"step": steps, "entropy": [math.exp(-s / 20) for s in range(30)], "reward": 0.5,
                  "val/acc": [0.1 + s / 200 for s in range(30)]}).to_csv(tmp_path / "run.csv", index=False)
    [line] = loss_lines(el.load(tmp_path / "run.csv", warn=False))
    assert line.endswith("dropped 6 of 90 values (missing or non-integer step: 6 values on 2 lines, at lines 6, 11)")


@pytest.mark.parametrize("file_first", [False, True])
def test_a_file_inside_a_folder_given_with_it_is_read_once(tmp_path, file_first):
    """`summary dir dir/run.csv` read run.csv twice: two runs, the second named run-2."""
    for name in ("run", "other"):
        pd.DataFrame({"step": range(1, 31), "entropy": [math.exp(-s / 20) for s in range(1, 31)],
                      "val/acc": [0.1 + s / 200 for s in range(1, 31)]}).to_csv(tmp_path / f"{name}.csv", index=False)
    sources = [str(tmp_path), str(tmp_path / "run.csv")]
    with pytest.warns(el.EntropyLawWarning, match=r"run.csv: given twice \(read from .*\): read once"):
        df = el.load(*(sources[::-1] if file_first else sources))
    assert sorted(el.run_ids(df)) == sorted(["other", tmp_path.name])  # run.csv names no run: its folder does


@pytest.mark.parametrize("lo, hi, hinted", [(6, 65, True), (0.5, 9.5, False), (-1, 1, False), (0.1, 0.9, False),
                                            (-20, 60, False)])
def test_a_training_reward_that_may_be_a_percent_is_said_with_the_flag(tmp_path, lo, hi, hinted):
    """A reward climbing to 65 got no --score-scale percent hint while an accuracy key did;
    a reward in [-1, 1] or [0, 10] is a reward's own scale: no hint."""
    rows = [{"step": s, "actor/entropy": 0.9 / s ** 0.3, "critic/score/mean": lo + (hi - lo) * (s - 1) / 59}
            for s in range(1, 61)]
    (tmp_path / "run.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        el.load(tmp_path / "run.jsonl")
    hints = [str(w.message) for w in said if "--score-scale percent" in str(w.message)]
    assert bool(hints) == hinted, hints
    if hinted:
        assert "'critic/score/mean' ranges 6..65: read in its own units" in hints[0]
        df = el.load(tmp_path / "run.jsonl", score_scale="percent", warn=False)
        assert df[df["metric"] == "score"]["value"].max() == pytest.approx(0.65)
