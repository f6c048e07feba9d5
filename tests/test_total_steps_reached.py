"""`--total-steps N` where the run's window already ends at step N: `forecast` said "--total-steps 100 is not
after the window's end (step 100); give the run's planned last step", asking for what the user had just given;
it now says the run has reached that step and nothing is left to forecast. A total before the window's end
still asks for the planned last step."""

from __future__ import annotations


from conftest import verl_log
from entropylaw.cli.main import main


def test_a_total_the_run_has_reached_is_said_as_reached(tmp_path, capsys):
    log = verl_log(tmp_path / "run.jsonl", score_wiggle=0, val_every=5)
    assert main(["forecast", str(log), "--total-steps", "60", "--n-boot", "20"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "--total-steps 60 is not after the window's end (step 60); the run has reached that step" in err, err
    assert "give the run's planned last step" not in err, err


def test_a_total_before_the_windows_end_still_asks_for_the_plan(tmp_path, capsys):
    log = verl_log(tmp_path / "run.jsonl", score_wiggle=0, val_every=5)
    assert main(["forecast", str(log), "--total-steps", "40", "--n-boot", "20"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "--total-steps 40 is not after the window's end (step 60); give the run's planned last step" in err, err


def test_a_backtests_total_at_its_windows_end_asks_for_the_plan(tmp_path, capsys):
    """A backtest's window (--fit-steps 20 of a 60-step log) ending at the total given: the run has not
    reached it, the window has; "the run has reached that step ... its final score is the one logged" was
    wrong there."""
    log = verl_log(tmp_path / "run.jsonl", score_wiggle=0, val_every=5)
    assert main(["forecast", str(log), "--fit-steps", "20", "--total-steps", "20", "--n-boot", "20"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "--total-steps 20 is not after the window's end (step 20); give the run's planned last step" in err, err
    assert "has reached" not in err and "Traceback" not in err, err
