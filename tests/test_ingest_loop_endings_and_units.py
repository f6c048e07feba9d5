"""What a custom training loop's printed log shows that was misread:

- a run that diverges to NaN and stops with no traceback (``step 40 | loss nan | entropy nan | reward nan``
  to the log's end): its values were only counted as dropped; every command now says from which step and
  in which keys the run's values turn NaN, beside the dropped count (a stray NaN among finite values later
  is no divergence);
- a file of an evaluation's lines only (a loop's ``eval.log``: ``[Eval] step 10: accuracy=0.31``, ``eval step 10
  acc 0.31``): its keys were read as training keys (a split's word before every step was taken for a prefix of
  the run's own), or not read at all; they are an evaluation's, the score a validation;
- a name with its unit in parentheses (``acc (%): 16.76``, ``reward (mean): 0.41``, ``time (s): 3.1``): not read;
  read under the name without its unit, a percent as a percent, a time no score.
"""

from __future__ import annotations

import json
import math

import pytest

import entropylaw as el
from entropylaw import table
from conftest import logical_lines


def _ent(s: int) -> float:
    return 0.8 * math.exp(-s / 20) + 0.05


def _rew(s: int) -> float:
    return 0.1 + 0.5 * (1 - math.exp(-s / 20))


def _line(s: int, loss="0.1", ent=None, rew=None) -> str:
    ent = f"{_ent(s):.4f}" if ent is None else ent
    rew = f"{_rew(s):.4f}" if rew is None else rew
    return f"step {s} | loss {loss} | entropy {ent} | reward {rew}\n"


def _notes(df) -> list[str]:
    return [n for a in el.row_accounts(df) for n in a["notes"]]


def _nan_said(df) -> list[str]:
    return [n for n in _notes(df) if n.startswith("the run's values turn")]


def _diverged(tmp_path):
    path = tmp_path / "train.log"
    path.write_text("".join(_line(s) for s in range(1, 40))
                    + "".join(_line(s, "nan", "nan", "nan") for s in range(40, 44)))
    return path


def test_a_run_that_diverges_to_nan_says_from_which_step(tmp_path):
    df = el.load(_diverged(tmp_path), warn=False)
    [account] = el.row_accounts(df)
    assert account["dropped"] == {"non-finite value": 12}
    [said] = _nan_said(df)
    assert said.startswith("the run's values turn NaN from step 40 to its last step 43 (loss, entropy, reward)"), said


@pytest.mark.parametrize("command", ["summary", "fit", "forecast"])
def test_every_command_says_the_run_turns_nan_beside_the_dropped_count(tmp_path, cli, command):
    out = cli(command, str(_diverged(tmp_path)))
    assert out.returncode == 0, out.stderr
    [line] = [x for x in logical_lines(out.stderr) if "dropped 12 of" in x]
    assert "the run's values turn NaN from step 40 to its last step 43 (loss, entropy, reward)" in line, out.stderr


@pytest.mark.parametrize("lines", [
    # one stray NaN in one key, finite values after it
    [_line(s, loss="nan" if s == 20 else "0.1") for s in range(1, 44)],
    # a key NaN on every line: no value of it turned NaN
    [_line(s, loss="nan") for s in range(1, 44)],
    # one key NaN at its one last value only, the others finite
    [_line(s, rew="nan" if s == 43 else None) for s in range(1, 44)],
])
def test_a_stray_nan_is_no_divergence(tmp_path, lines):
    path = tmp_path / "train.log"
    path.write_text("".join(lines))
    df = el.load(path, warn=False)
    assert el.row_accounts(df)[0]["dropped"]["non-finite value"] >= 1
    assert _nan_said(df) == []


def _sparse_csv(path, last_val: int):
    """A pandas export (``na_rep='NaN'``) of a run validated every 5 steps, its val/acc NaN between and from
    ``last_val`` on."""
    rows = ["step,entropy,reward,val/acc"]
    rows += [f"{s},{_ent(s):.4f},{_rew(s):.4f},{_rew(s) if s % 5 == 0 and s <= last_val else 'NaN'}"
             for s in range(1, 44)]
    path.write_text("\n".join(rows) + "\n")
    return path


@pytest.mark.parametrize("last_val", [40, 20])
def test_a_key_logged_now_and_then_whose_last_rows_are_nan_is_no_divergence(tmp_path, last_val):
    """A CSV export's evaluation column, NaN at the steps between evaluations and at the last rows after the last
    one (or from step 20 on: its evaluation stopped), was said as a run whose values turn NaN: the run diverged."""
    df = el.load(_sparse_csv(tmp_path / "run.csv", last_val), warn=False)
    assert el.row_accounts(df)[0]["dropped"]["non-finite value"] >= 3
    assert _nan_said(df) == []


def test_a_run_of_keys_logged_in_turn_that_diverges_is_said(tmp_path):
    """A pandas export of a loop that logs its keys in turn (each row one key, NaN in the others) that diverges
    from step 40: every key has NaN between its values, the run's values all turn NaN: said."""
    rows = ["step,entropy,reward"]
    for s in range(1, 44):
        ent, rew = ("nan", "nan") if s >= 40 else (f"{_ent(s):.4f}", f"{_rew(s):.4f}")
        rows += [f"{s},{ent},NaN", f"{s},NaN,{rew}"]
    path = tmp_path / "run.csv"
    path.write_text("\n".join(rows) + "\n")
    [said] = _nan_said(el.load(path, warn=False))
    assert said.startswith("the run's values turn NaN from step 40 to its last step 43 (entropy, reward)"), said


def test_a_last_row_of_an_evaluation_that_gave_nan_is_no_divergence(tmp_path):
    """A JSON lines log whose last line is a final evaluation that gave NaN (``{"step": 44, "val/acc": NaN,
    "grad_norm": NaN}``, every value of that step NaN) was said as a run that diverged at its last step."""
    path = tmp_path / "metrics.jsonl"
    lines = [json.dumps({"step": s, "entropy": _ent(s), "reward": _rew(s), "grad_norm": 1.0,
                         **({"val/acc": _acc(s)} if s % 10 == 0 else {})}) for s in range(1, 44)]
    path.write_text("\n".join(lines + [json.dumps({"step": 44, "val/acc": math.nan, "grad_norm": math.nan})]) + "\n")
    df = el.load(path, warn=False)
    assert el.row_accounts(df)[0]["dropped"]["non-finite value"] == 2
    assert _nan_said(df) == []


def test_one_key_that_turns_nan_to_the_end_is_named_alone(tmp_path):
    path = tmp_path / "train.log"
    path.write_text("".join(_line(s, loss="nan" if s >= 38 else "0.1") for s in range(1, 44)))
    [said] = _nan_said(el.load(path, warn=False))
    assert said.startswith("the run's values turn NaN from step 38 to its last step 43 (loss)"), said


def test_a_run_resumed_after_it_diverged_is_no_divergence(tmp_path):
    path = tmp_path / "train.log"
    path.write_text("".join(_line(s) for s in range(1, 30)) + "".join(_line(s, "nan", "nan", "nan")
                                                                      for s in range(30, 36))
                    + "".join(_line(s) for s in range(25, 34)))
    assert _nan_said(el.load(path, warn=False)) == []


def test_a_run_resumed_into_a_second_file_after_it_diverged_went_on(tmp_path):
    """train.log diverged at step 40, the run resumed from step 30 into train.log.1: the run went on, its
    first file's NaN said in that file's account only (every command said the run turned NaN)."""
    _diverged(tmp_path)
    (tmp_path / "train.log.1").write_text("".join(_line(s) for s in range(30, 80)))
    df = el.load(tmp_path, warn=False)
    assert _nan_said(df) == []
    assert any(n.startswith("the file's values turn NaN from step 40 to its last step 43 (loss, entropy, reward); "
                            "the run resumed at step 30 in ") for n in _notes(df)), _notes(df)


def _acc(s: int) -> float:
    return 0.2 + 0.4 * (1 - math.exp(-s / 60))


def _val_keys(df) -> dict:
    [row] = table.runs(df).to_dict("records")
    return json.loads(row["val_keys"])


def _metric(df, name):
    return df[df["metric"] == name].set_index("step")["value"].sort_index()


@pytest.mark.parametrize("shape", ["[Eval] step {s}: accuracy={a:.3f}", "eval step {s} accuracy {a:.3f}",
                                   "Validation at step {s}: accuracy={a:.3f}",
                                   "2026-11-30 10:00:01 INFO [Eval] step {s}: accuracy={a:.3f}"])
def test_a_file_of_an_evaluations_lines_only_is_read_as_evaluation(tmp_path, shape):
    path = tmp_path / "eval.log"
    path.write_text("".join(shape.format(s=s, a=_acc(s)) + "\n" for s in range(10, 210, 10)))
    df = el.load(path, warn=False)
    assert _val_keys(df) == {"val/accuracy": "eval/accuracy"}
    assert _metric(df, "val/accuracy").to_dict() == pytest.approx({s: round(_acc(s), 3) for s in range(10, 210, 10)})
    assert "evaluation" in " ".join(_notes(df))


def test_a_run_folders_eval_log_beside_its_training_log_is_its_validation(tmp_path):
    folder = tmp_path / "qwen-grpo"
    folder.mkdir()
    (folder / "train.log").write_text("".join(_line(s) for s in range(1, 201)))
    (folder / "eval.log").write_text("".join(f"[Eval] step {s}: accuracy={_acc(s):.3f}\n" for s in range(20, 201, 20)))
    df = el.load(folder, warn=False)
    assert el.run_ids(df) == ["qwen-grpo"]
    [row] = table.runs(df).to_dict("records")
    assert (row["entropy_key"], row["score_key"]) == ("entropy", "reward")
    assert json.loads(row["val_keys"]) == {"val/accuracy": "eval/accuracy"}


def test_a_training_log_with_a_few_eval_lines_reads_as_before(tmp_path):
    path = tmp_path / "train.log"
    path.write_text("".join(_line(s) + (f"[Eval] step {s}: accuracy={_acc(s):.3f}\n" if s % 20 == 0 else "")
                            for s in range(1, 101)))
    df = el.load(path, warn=False)
    [row] = table.runs(df).to_dict("records")
    assert (row["entropy_key"], row["score_key"]) == ("entropy", "reward")
    assert json.loads(row["val_keys"]) == {"val/accuracy": "eval/accuracy"}
    assert len(_metric(df, "entropy")) == 100 and len(_metric(df, "val/accuracy")) == 5


def _units_log(path, sep, acc="acc (%): {:.2f}"):
    path.write_text("".join(sep.join([f"step {s}", f"entropy (nats): {_ent(s):.4f}", f"reward (mean): {_rew(s):.4f}",
                                      acc.format(100 * _acc(s)), "time (s): 3.1", "eval (s): 12.5"]) + "\n"
                            for s in range(1, 61)))
    return path


@pytest.mark.parametrize("sep", [" | ", " "])
def test_a_name_with_its_unit_in_parentheses_is_read(tmp_path, sep):
    df = el.load(_units_log(tmp_path / "train.log", sep), warn=False)
    [row] = table.runs(df).to_dict("records")
    assert (row["entropy_key"], row["score_key"]) == ("entropy", "reward")
    assert _metric(df, "entropy")[60] == pytest.approx(round(_ent(60), 4))
    # the accuracy printed in percent: read as the same accuracy printed with its % sign is
    signed = el.load(_units_log(tmp_path / "signed.log", sep, acc="acc: {:.2f}%"), warn=False)
    assert _metric(df, "acc").to_dict() == _metric(signed, "acc").to_dict()
    # seconds are no score: the time of an evaluation is no validation
    assert json.loads(row["val_keys"]) == {}
    assert set(_metric(df, "time")) == {3.1} and set(_metric(df, "eval_time")) == {12.5}
    said = " ".join(_notes(df))
    assert "unit in parentheses" in said and "'time (s)' as 'time'" in said, said
    assert el.row_accounts(df)[0]["dropped"] == {}


def test_words_in_parentheses_that_are_no_unit_are_not_said_taken_off(tmp_path):
    """'acc (pass@1): 0.4' and 'kl (beta=0.1): 0.02' are read under their names as printed; the row account said
    them read without their unit ("'acc (pass@1)' as 'acc (pass@1)'"), a unit taken off that was not."""
    path = tmp_path / "train.log"
    path.write_text("".join(f"step {s} | entropy (nats): {_ent(s):.4f} | reward: {_rew(s):.4f} | acc (pass@1): "
                            f"{_acc(s):.4f} | kl (beta=0.1): 0.02\n" for s in range(1, 61)))
    df = el.load(path, warn=False)
    assert {"acc (pass@1)", "kl (beta=0.1)", "entropy"} <= set(df["metric"])
    [said] = [n for n in _notes(df) if "unit in parentheses" in n]
    assert said == "names printed with a unit in parentheses read without it: 'entropy (nats)' as 'entropy'", said


def test_a_unit_in_parentheses_of_a_validation_accuracy(tmp_path):
    path = tmp_path / "train.log"
    path.write_text("".join(f"step {s} | entropy {_ent(s):.4f} | reward {_rew(s):.4f}"
                            + (f" | val acc (%): {100 * _acc(s):.2f}" if s % 10 == 0 else "") + "\n"
                            for s in range(1, 61)))
    df = el.load(path, warn=False)
    assert _val_keys(df) == {"val/acc": "val acc"}
    # a fraction, as 'Val Accuracy=52.3' and '52.3%' are
    assert _metric(df, "val/acc")[60] == pytest.approx(round(100 * _acc(60), 2) / 100)
    assert "'val acc (%)' as 'val acc' (a percent)" in " ".join(_notes(df))


def test_words_in_parentheses_that_are_no_unit_are_not_said_to_be_read_without_it(tmp_path):
    """'val acc (pass@1): 0.31' is kept under its name as printed (its parentheses no unit); it was said among the
    names 'read without' their unit, as 'val acc (pass@1)' as 'val acc (pass@1)'."""
    path = tmp_path / "train.log"
    path.write_text("".join(f"step {s} | entropy {_ent(s):.4f} | reward (mean): {_rew(s):.4f}"
                            + (f" | val acc (pass@1): {_acc(s):.4f}" if s % 10 == 0 else "") + "\n"
                            for s in range(1, 61)))
    said = " ".join(_notes(el.load(path, warn=False)))
    assert "'reward (mean)' as 'reward'" in said and "as 'val acc (pass@1)'" not in said, said
    assert "'val acc (pass@1)' kept as printed" in said, said


def test_a_name_printed_with_and_without_its_unit_keeps_the_one_without(tmp_path):
    """``entropy: 0.5 | entropy (nats): 0.52`` read both as ``entropy``, the later silently winning: the line's
    two fields are said, and the value printed without a unit is kept, whichever comes first."""
    path = tmp_path / "train.log"
    path.write_text("".join(f"step {s} | entropy: {_ent(s):.4f} | entropy (nats): {_ent(s) + 0.02:.4f} | "
                            f"reward (mean): {_rew(s) + 0.1:.4f} | reward: {_rew(s):.4f}\n" for s in range(1, 41)))
    df = el.load(path, warn=False)
    assert _metric(df, "entropy")[40] == pytest.approx(round(_ent(40), 4))
    assert _metric(df, "score")[40] == pytest.approx(round(_rew(40), 4))
    said = " ".join(_notes(df))
    assert (f"40 lines print a name with and without a unit (the first at line 1: 'entropy: {_ent(1):.4f}' and "
            f"'entropy (nats): {_ent(1) + 0.02:.4f}')") in said, said
    assert "read as one key, the value printed without a unit kept" in said
