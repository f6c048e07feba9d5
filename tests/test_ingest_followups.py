"""Small shapes of custom loops' logs that reviewers found read wrongly: text that names the run on every JSON
line, a printed summary dict without a step, an evaluation's word after the step, a log of epochs with no step."""

from __future__ import annotations

import json
import math

import pytest

import entropylaw as el
from entropylaw import table


def _ent(s: int) -> float:
    return 0.8 * math.exp(-s / 20) + 0.05


def _notes(df) -> str:
    return " ".join(n for a in el.row_accounts(df) for n in a["notes"])


def test_a_text_on_every_json_line_is_the_runs_name_not_a_dropped_value(tmp_path):
    """``"run_name": "grpo-lr1e-6"`` on each line was "dropped 99 values: non-numeric", a warning on every command,
    and the model each line names went unread; a sample's text, which changes line to line, is still counted."""
    lines = [{"step": s, "run_name": "grpo-lr1e-6", "model": "Qwen/Qwen2.5-0.5B", "split": "train",
              "entropy": _ent(s), "reward": 0.2 + s / 200} for s in range(1, 100)]
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    df = el.load(tmp_path / "metrics.jsonl", warn=False)
    [acct] = el.row_accounts(df)
    assert acct["dropped"] == {} and acct["rows_read"] == acct["rows_kept"] == 198
    assert "the same text on every line" in _notes(df) and "'run_name' ('grpo-lr1e-6', 99 lines)" in _notes(df)
    [row] = table.runs(df).to_dict("records")
    assert row["model"] == "Qwen/Qwen2.5-0.5B"
    # a sample's text changes line to line: each a value dropped as non-numeric, as before
    (tmp_path / "samples.jsonl").write_text("".join(json.dumps({**x, "answer": f"x = {x['step']}"}) + "\n"
                                                    for x in lines))
    df = el.load(tmp_path / "samples.jsonl", warn=False)
    [acct] = el.row_accounts(df)
    assert acct["dropped"] == {"non-numeric value": 99}
    assert "line 1: key 'answer' has non-numeric value 'x = 1' (dropped)" in _notes(df)
    assert "... and 94 more non-numeric values" in _notes(df)
    # a text on one line only, or not on every line, is no name of the run: dropped and counted
    (tmp_path / "once.jsonl").write_text("".join(json.dumps({**x, "note": "lr warmup done"} if x["step"] in (5, 9)
                                                            else x) + "\n" for x in lines))
    assert el.row_accounts(el.load(tmp_path / "once.jsonl", warn=False))[0]["dropped"] == {"non-numeric value": 2}


def test_a_summary_dict_without_the_step_takes_the_last_step(tmp_path):
    """A loop's ``print({'global_step': 20, ...})`` then a final ``{'train_runtime': ..., 'train_loss': ...}``:
    the one dict without the step dropped the whole file back to record indices 1, 2, 3 ..."""
    lines = [str({"global_step": s, "loss": 0.1, "entropy": round(_ent(s / 10), 4), "reward": 0.2 + s / 1000})
             for s in range(10, 210, 10)]
    (tmp_path / "out.log").write_text("\n".join(lines + [str({"train_runtime": 123.4, "train_loss": 0.1})]) + "\n")
    df = el.load(tmp_path / "out.log", warn=False)
    entropy = df[df["metric"] == "entropy"]
    assert entropy["step"].tolist() == list(range(10, 210, 10))
    assert "record indices" not in _notes(df)
    assert "1 record after the last with 'global_step' (a summary: train_loss, train_runtime) read at its last " \
           "step 200" in _notes(df)
    # records without the step in the middle of the log: no summary, the steps are still the records' indices
    (tmp_path / "mixed.log").write_text("\n".join(lines[:5] + [str({"loss": 0.1, "reward": 0.3})] * 3 + lines[5:]))
    assert "record indices" in _notes(el.load(tmp_path / "mixed.log", warn=False))


def _eval_lines(after_step: str) -> list[str]:
    lines = []
    for s in range(1, 41):
        lines.append(f"Step {s} - train: loss=0.1000, entropy={_ent(s):.4f}, reward={0.1 + s / 100:.4f}")
        if s % 10 == 0:
            lines.append(f"Step {s}{after_step}accuracy={0.2 + s / 200:.3f}")
    return lines


def test_an_evaluations_word_right_after_the_step_tags_its_line(tmp_path):
    """``Step 10 - eval: accuracy=0.45`` was read as training (its accuracy no validation, averaged with nothing
    of the evaluation's): the split's word after the step, before the keys, was not looked at."""
    (tmp_path / "train.log").write_text("\n".join(_eval_lines(" - eval: ")) + "\n")
    df = el.load(tmp_path / "train.log", warn=False)
    assert "val/accuracy" in set(df["metric"]) and "accuracy" not in set(df["metric"])
    assert "4 lines an evaluation printed" in _notes(df)
    [row] = table.runs(df).to_dict("records")
    assert row["val_keys"] and "accuracy" in row["val_keys"]
    # the same words after every step are a prefix of each line, no evaluation's tag: read as they were
    every = [f"Step {s} - eval: accuracy={0.2 + s / 200:.3f} entropy={_ent(s):.4f}" for s in range(1, 41)]
    (tmp_path / "every.log").write_text("\n".join(every) + "\n")
    assert {"accuracy", "entropy"} <= set(el.load(tmp_path / "every.log", warn=False)["metric"])
    # fields parted by |, the evaluation's after the training's: the eval field's keys as printed; its `acc`, which
    # names no split, is the validation score by its steps (every 10th, as evaluations are: readers/eval_cadence.py)
    piped = [f"Step {s} | train: reward={0.1 + s / 100:.4f} entropy={_ent(s):.4f}"
             + (f" | eval: acc={0.2 + s / 200:.3f}" if s % 10 == 0 else "") for s in range(1, 41)]
    (tmp_path / "piped.log").write_text("\n".join(piped) + "\n")
    assert sorted(set(el.load(tmp_path / "piped.log", warn=False)["metric"])) == ["entropy", "score", "val/acc"]
    # a | right after the step, then the evaluation's word: its line too
    (tmp_path / "bar.log").write_text("\n".join(_eval_lines(" | eval: ")) + "\n")
    assert "val/accuracy" in set(el.load(tmp_path / "bar.log", warn=False)["metric"])


def test_a_printed_log_of_no_step_reads_its_lines_as_records(tmp_path):
    """``[Epoch 0.60]  loss=0.1234  reward=0.512±0.120  entropy=0.832``, a line an update and no step, was refused
    ("no veRL step lines ... an epoch is no step"); its lines are now records 1, 2, 3 ..., said, the ± not read."""
    config = "lr=1e-06 batch_size=8\nmodel=7 seed=3 group=8\n"
    lines = [f"[Epoch {s / 20:.2f}]  loss={0.2 - s / 1000:.4f}  reward={0.1 + s / 100:.3f}±0.120  "
             f"entropy={_ent(s):.3f}" for s in range(1, 31)]
    (tmp_path / "train.log").write_text(config + "\n".join(lines) + "\n")
    df = el.load(tmp_path / "train.log", warn=False)
    entropy = df[df["metric"] == "entropy"]
    assert entropy["step"].tolist() == list(range(1, 31))
    assert entropy["value"].tolist() == [round(_ent(s), 3) for s in range(1, 31)]
    assert df[df["metric"] == "score"]["value"].iloc[-1] == 0.4  # 0.400±0.120: the number before the ±
    notes = _notes(df)
    assert "the log prints no step: each line of numbers read as the next record, 1 to 30 (lines 3 to 32)" in notes
    assert "the ± part not read" in notes and "2 lines print numbers without a step" in notes
    [acct] = el.row_accounts(df)
    assert acct["dropped"] == {} and acct["rows_read"] == 90
    # a config echo, each line its own keys, is still no log; nor are two lines of one set of keys
    (tmp_path / "echo.log").write_text(config + "temperature=1.0 top_p=0.95\n")
    (tmp_path / "two.log").write_text("\n".join(lines[:2]) + "\n")
    for name in ("echo.log", "two.log"):
        with pytest.raises(el.EntropyLawError, match="no veRL step lines"):
            el.load(tmp_path / name, warn=False)
    # a log that prints its steps: its lines without a step are still not read
    stepped = [f"step {s} | entropy {_ent(s):.4f} | reward 0.3" for s in range(1, 6)]
    (tmp_path / "stepped.log").write_text("\n".join(lines[:3] + stepped) + "\n")
    df = el.load(tmp_path / "stepped.log", warn=False)
    assert sorted(df[df["metric"] == "entropy"]["step"]) == [1, 2, 3, 4, 5] and "3 lines print numbers" in _notes(df)
