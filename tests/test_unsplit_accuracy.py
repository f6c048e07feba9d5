"""A custom loop's ``accuracy`` column, which names no split (no ``val/`` or ``eval`` prefix, no
train/eval rows): it was not read and nothing said so ("no score key ...; name it with
--score-key", or the training reward forecast as "no validation score"). An ``accuracy`` logged at
sparse steps, as evaluations are, is the validation score, said; one logged as often as the
training metrics is not taken (the training batch's, beside a reward), and a warning says in one
line how to forecast it as the validation score (``--val-key accuracy``), which works end to end."""

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import run_main

import entropylaw as el

pytestmark = pytest.mark.printed

HINT = "give --val-key accuracy to forecast it as the validation score (--score-key accuracy: the training score)"


def _h(s):
    return 1.2 * np.exp(-s / 50) + 0.15


def _acc(s):
    return round(0.8 - 0.4 * _h(s), 4)


def _csv(path, every=1, reward_every=None):
    head = "step,loss,entropy" + (",reward" if reward_every else "") + ",accuracy\n"
    lines = [head]
    for s in range(1, 201):
        reward = ("," + (f"{0.5 - 0.2 * _h(s):.4f}" if s % reward_every == 0 else "")) if reward_every else ""
        lines.append(f"{s},{2 * _h(s):.4f},{_h(s):.4f}{reward},{_acc(s) if s % every == 0 else ''}\n")
    path.write_text("".join(lines))
    return path


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("kind", ["csv", "jsonl"])
def test_an_accuracy_at_every_step_is_not_taken_and_the_warning_says_how_to_forecast_it(tmp_path, capsys, kind):
    path = _csv(tmp_path / "run.csv") if kind == "csv" else _jsonl(
        tmp_path / "run.jsonl", [{"step": s, "entropy": _h(s), "accuracy": _acc(s)} for s in range(10, 201, 10)])
    code, out, err = run_main(capsys, "forecast", path, "--fit-frac", "0.25", "--n-boot", "30")
    assert code != 0 and "Traceback" not in err
    assert "'accuracy' names no split (training or evaluation)" in err and HINT in err, err
    code, out, err = run_main(capsys, "summary", path)
    assert code == 0 and HINT in err
    code, out, err = run_main(capsys, "forecast", path, "--fit-frac", "0.25", "--n-boot", "30", "--val-key", "accuracy")
    assert code == 0, err
    assert "forecasting val/accuracy (validation)" in " ".join(out.split()) and "names no split" not in err
    code, out, err = run_main(capsys, "rank", path, "--fit-frac", "0.25", "--n-boot", "30", "--val-key", "accuracy",
                              "--json")
    assert code == 0 and json.loads(out)[0]["score"] == "val/accuracy", err


@pytest.mark.parametrize("kind", ["csv", "jsonl"])
def test_an_accuracy_logged_every_10_steps_is_the_validation_score_said(tmp_path, capsys, kind):
    if kind == "csv":
        path = _csv(tmp_path / "run.csv", every=10)
    else:
        rows = [{"step": s, "entropy": _h(s), "reward": 0.5 - 0.2 * _h(s)} for s in range(1, 201)]
        path = _jsonl(tmp_path / "run.jsonl", rows + [{"step": s, "accuracy": _acc(s)} for s in range(10, 201, 10)])
    code, out, err = run_main(capsys, "forecast", path, "--fit-frac", "0.25", "--n-boot", "30", "--json")
    assert code == 0, err
    [doc] = json.loads(out)
    assert doc["target_key"] == "val/accuracy" and doc["target_kind"] == "validation"
    assert doc["final"]["observed"] == pytest.approx(_acc(200))
    assert ("validation read from 'accuracy' as 'val/accuracy': its name says no split, but it is logged at 20 steps "
            "and 'entropy' at 200, as evaluations are (give --score-key accuracy if it is the training batch's)") in err
    # the user's word wins: named the training score, it is one, and nothing is guessed
    code, out, err = run_main(capsys, "forecast", path, "--fit-frac", "0.25", "--n-boot", "30", "--score-key",
                              "accuracy", "--json")
    assert code == 0 and json.loads(out)[0]["target_kind"] == "training score", err
    assert "names no split" not in err and "validation read from" not in err
    # named by the log's own name with --y-key, the score the reader read as validation is that one (it said
    # "no metric 'accuracy' (has ..., val/accuracy, ...)")
    code, out, err = run_main(capsys, "forecast", path, "--fit-frac", "0.25", "--n-boot", "30", "--y-key", "accuracy",
                              "--json")
    assert code == 0, err
    assert json.loads(out)[0]["target_key"] == "val/accuracy" and json.loads(out)[0]["target_kind"] == "validation"


def test_an_accuracy_every_step_beside_a_reward_is_the_batchs_and_the_reward_is_forecast_said(tmp_path, capsys):
    path = _csv(tmp_path / "run.csv", reward_every=1)
    df = el.load(path, warn=False)
    assert "val/accuracy" not in set(df["metric"]) and "accuracy" in set(df["metric"])
    code, out, err = run_main(capsys, "forecast", path, "--fit-frac", "0.25", "--n-boot", "30")
    assert code == 0 and "forecasting score (training score)" in " ".join(out.split())
    assert HINT in err and "logged at 200 steps and 'entropy' at 200" in err, err


def test_an_accuracy_as_sparse_as_the_reward_beside_it_is_no_evaluation(tmp_path):
    """Rollout statistics logged every 10 steps (the reward and the accuracy alike) under an entropy logged every
    step: the accuracy keeps the training reward's steps, so it is the batch's."""
    with pytest.warns(Warning, match=r"logged at 20 steps and 'reward' at 20, not as sparsely as evaluations are"):
        df = el.load(_csv(tmp_path / "run.csv", every=10, reward_every=10))
    assert "val/accuracy" not in set(df["metric"]) and "score" in set(df["metric"])


def test_two_unsplit_accuracies_are_neither_taken_and_a_named_validation_is_left_alone(tmp_path):
    rows = [{"step": s, "entropy": _h(s)} for s in range(1, 201)]
    rows += [{"step": s, "accuracy": _acc(s), "acc": _acc(s)} for s in range(10, 201, 10)]
    with pytest.warns(Warning, match=r"'accuracy', 'acc' name an accuracy and no split"):
        df = el.load(_jsonl(tmp_path / "two.jsonl", rows))
    assert not any(str(m).startswith("val/") for m in set(df["metric"]))
    rows = [{"step": s, "entropy": _h(s), "accuracy": _acc(s)} for s in range(1, 201)]
    rows += [{"step": s, "eval/accuracy": _acc(s)} for s in range(10, 201, 10)]
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        df = el.load(_jsonl(tmp_path / "named.jsonl", rows))
    metrics = set(map(str, df["metric"]))
    assert "val/accuracy" in metrics and "accuracy" in metrics  # eval/accuracy is it; the bare one stays as it is
    assert not [w for w in said if "no split" in str(w.message)]


def test_the_warning_says_why_an_accuracy_was_not_taken_one_evaluation_nothing_beside_or_every_other_step():
    """Every refusal said "not as sparsely as evaluations are", also for a live run's one evaluation so far and a
    log of nothing else; and an accuracy every 2nd step beside per-step entropy (half as often) was taken."""
    from entropylaw.readers.eval_cadence import by_cadence
    from entropylaw.readers.keys import KeyMap

    one = by_cadence(KeyMap(entropy="entropy"), {"entropy": 15, "accuracy": 1})
    assert not one.val and "is logged at 1 step only: too few to tell an evaluation's steps" in one.warnings[0]
    alone = by_cadence(KeyMap(), {"accuracy": 40})
    assert not alone.val and "logged at 40 steps, and nothing else to compare its steps with" in alone.warnings[0]
    half = by_cadence(KeyMap(entropy="entropy"), {"entropy": 200, "accuracy": 100})
    assert not half.val and "not as sparsely as evaluations are" in half.warnings[0]
    assert by_cadence(KeyMap(entropy="entropy"), {"entropy": 200, "accuracy": 99}).val == {"val/accuracy": "accuracy"}


def test_an_out_directory_with_a_trailing_slash_is_one_whatever_its_name(tmp_path):
    from entropylaw.errors import EntropyLawError
    from entropylaw.fileio import check_out_dir

    assert check_out_dir(f"{tmp_path}/pages.html/") is not None
    with pytest.raises(EntropyLawError, match=r"a file's name \(\.html\)"):
        check_out_dir(tmp_path / "pages.html")


def test_a_folder_read_twice_for_its_percent_check_says_each_warning_once(tmp_path, capsys, monkeypatch):
    """A folder with one file in percent and one in fractions is read again to put them on one scale: each file's
    reader warnings printed twice."""
    for name, scale in (("a", 1.0), ("b", 100.0)):
        lines = ["step,entropy,reward,accuracy"] + [
            f"{s},{_h(s):.4f},{0.5 - 0.2 * _h(s):.4f}," + (f"{scale * _acc(s):.4f}" if s % 10 == 0 else "")
            for s in range(1, 201)]
        (tmp_path / f"{name}.csv").write_text("\n".join(lines) + "\n")
    # the folder by a short name: a path longer than a line (a temporary one on macOS under xdist) is folded
    # at its slashes, and joined back it would read with spaces in it
    monkeypatch.chdir(tmp_path.parent)
    code, out, err = run_main(capsys, "summary", tmp_path.name)
    assert code == 0 and err.count("validation read from 'accuracy'") == 2, err  # one per file
    assert err.count(f"{Path(tmp_path.name, 'a.csv')}: validation read from") == 1, err
