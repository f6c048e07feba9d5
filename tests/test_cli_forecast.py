"""``entropylaw forecast``: backtests and live use on real runs, resumed logs, bad input."""

import json
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from entropylaw import table
from entropylaw.cli.main import main

from _course_runs import planned_sweep

# prints numbers: run again under another BLAS kernel set (make test, OPENBLAS_CORETYPE=Prescott)
pytestmark = pytest.mark.printed

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT / "data" / "real"
GRPO = REAL / "verl_grpo_deepseek-llm-7b-chat_gsm8k_mi300.parquet"


def _cli(capsys, *args):
    """Run in-process; returns (exit code, stdout, stderr); argparse rejections are SystemExit."""
    with warnings.catch_warnings():
        try:
            code = main(["forecast", *map(str, args)])
        except SystemExit as stop:
            code = stop.code
    out = capsys.readouterr()
    return code, out.out, out.err


def test_backtest_compare_json_on_a_real_run(capsys):
    code, out, err = _cli(capsys, GRPO, "--fit-frac", "0.15", "--compare", "--json", "--n-boot", "30")
    assert code == 0, err
    [doc] = json.loads(out)  # one run: a list of one, as several runs' JSON
    assert doc["log_starts_at"] == 1 and doc["window_end"] == pytest.approx(1 + 0.15 * 1119)
    assert doc["target_key"] == "val/openai/gsm8k" and doc["target_kind"] == "validation"
    assert set(doc["methods"]) >= {"last-value", "law-ceiling", "law+entropy", "exp-saturation", "power", "sigmoid",
                                   "sigmoid-tokens", "joint", "ensemble"}
    final = doc["at_steps"][-1]
    assert final == 1120 and doc["observed"][str(final)] == pytest.approx(0.697)
    lv = doc["methods"]["last-value"]["forecast"][-1]
    obs = table.series(table.read(GRPO), table.run_ids(table.read(GRPO))[0], "val/openai/gsm8k")
    assert lv["forecast"] == pytest.approx(obs[obs.index <= doc["window_end"]].iloc[-1])
    assert lv["lo"] < lv["forecast"] < lv["hi"]


def test_live_forecast_with_horizon_prints_a_table(capsys):
    code, out, err = _cli(capsys, GRPO, "--horizon", "200", "--method", "exp-saturation", "--n-boot", "20")
    assert code == 0, err
    assert "no information after step 1120" in out and "the log starts at step 1" in out
    row = [line for line in out.splitlines() if line.startswith("exp-saturation")][0]
    assert " 1320 " in row


def test_resumed_log_with_fit_steps_and_fit_frac(capsys, tmp_path):
    df = table.read(GRPO)
    path = tmp_path / "resumed.parquet"
    table.write(df[df["step"] >= 101], path)
    for opt in (["--fit-steps", "60"], ["--fit-frac", "0.15"]):
        code, out, err = _cli(capsys, path, *opt, "--compare", "--n-boot", "20")
        assert code == 0, err
        assert "the log starts at step 101" in out and "from steps 101.." in out


def test_at_step_before_the_window_end_is_one_line(capsys):
    code, out, err = _cli(capsys, GRPO, "--fit-steps", "100", "--at-step", "50")
    assert code == 2 and out == ""
    assert err.strip().count("\n") == 0
    # the first 100 steps of a log starting at step 1: steps 1 .. 100
    assert "--at-step 50 is not after the window's end (step 100)" in err and "starts at step 1" in err


def test_a_threshold_of_the_whole_range_is_refused(capsys):
    """--threshold 5 on a score in [0, 1] (meant as 5 points) was "below the threshold 500.0 points": stop."""
    code, out, err = _cli(capsys, GRPO, "--fit-frac", "0.5", "--threshold", "5")
    assert code == 2 and out == "" and err.strip().count("\n") == 0, err
    assert "--threshold 5 is 500 points, the score's whole range or more" in err and "0.05 for 5 points" in err
    code, out, err = _cli(capsys, GRPO, "--fit-frac", "0.5", "--threshold", "0.05")
    assert code == 0 and "given (--threshold)" in " ".join(out.split()), err


def test_total_steps_before_a_shares_window_end_names_the_share(capsys):
    """A share's window ends between logged steps ("step 100.5"): said as the share it is."""
    code, out, err = _cli(capsys, GRPO, "--fit-frac", "0.5", "--total-steps", "50")
    assert code == 2 and out == "" and err.strip().count("\n") == 0
    assert "--total-steps 50 is not after the window's end (step" in err and "50 % of the run's steps" in err


@pytest.mark.parametrize("args, msg", [(["--fit-frac", "1.5"], "strictly between 0 and 1"),
                                       (["--fit-frac", "x"], "expected a fraction"),
                                       (["--fit-steps", "-4"], "positive number of steps"),
                                       (["--horizon", "0"], "positive number of steps"),
                                       (["--at-step", "5", "--horizon", "3"], "not allowed with"),
                                       (["--method", "oracle"], "invalid choice"),
                                       (["--conf", "2"], "strictly between 0 and 1"),
                                       (["--method", "prior"], "--method prior needs --prior"),
                                       (["--fit-steps", "5000"], "reaches past the log")])
def test_bad_options(capsys, args, msg):
    code, out, err = _cli(capsys, GRPO, *args)
    assert code == 2 and msg in err and "Traceback" not in err


def _write(tmp_path, name, recs, run_id):
    path = tmp_path / name
    table.write(table.from_records(recs, run_id=run_id), path)
    return path


def test_no_validation_and_rising_entropy_are_said(capsys, tmp_path):
    s = np.arange(1, 200)
    recs = [(int(i), "entropy", 0.1 + i / 100) for i in s] + [(int(i), "score", 0.6 - i / 500) for i in s]
    path = _write(tmp_path, "explode.parquet", recs, "explode")
    code, out, err = _cli(capsys, path, "--fit-frac", "0.3", "--compare", "--n-boot", "20")
    assert code == 0, err
    assert "note: no validation score in run 'explode': forecasting the training score" in out
    law = [line for line in out.splitlines() if line.startswith("law+entropy")][0]
    mark = law.split()[-1]  # a long note is numbered under the table
    assert mark.startswith("[") and f"\n{mark} cannot run: entropy rises over the window" in out


def test_prior_family_of_one_warns(capsys):
    code, out, err = _cli(capsys, GRPO, "--fit-frac", "0.25", "--method", "prior", "--prior",
                          REAL / "verl_ppo_deepseek-llm-7b-chat_gsm8k_mi300.parquet", "--n-boot", "20")
    assert code == 0, err
    assert "prior: a family of 1 finished run besides" in out and "forecast without a prior" in out


def test_a_prior_run_with_no_score_is_left_out_and_the_forecast_goes_on(capsys, tmp_path):
    """One prior run with no score among good ones stopped the forecast with 'run ...: no score key', a
    line that did not say it came from --prior."""
    bare = _write(tmp_path, "bare.parquet", [(i, "entropy", 1.0 / i) for i in range(1, 50)], "bare")
    code, out, err = _cli(capsys, GRPO, "--fit-frac", "0.25", "--method", "prior", "--prior", bare,
                          REAL / "verl_ppo_deepseek-llm-7b-chat_gsm8k_mi300.parquet", "--n-boot", "20")
    assert code == 0, err
    assert "--prior: run 'bare' left out: no score key" in " ".join(err.split())
    assert out.startswith("run ") and "prior: a family of 1 finished run besides" in out


def test_every_real_log_in_shared(capsys, real_logs):
    """Every real log the project has: forecast from its first 15 % without an error."""
    logs = sorted(p for p in real_logs.rglob("*") if p.suffix in (".log", ".json"))
    assert logs
    for log in logs:
        code, out, err = _cli(capsys, log, "--fit-frac", "0.15", "--method", "exp-saturation", "--n-boot", "10", "-q")
        assert code == 0, f"{log.name}: {err}"
        assert "forecasting" in out


def test_law_verdict_on_the_window_is_printed_and_uses_no_later_steps(capsys, tmp_path):
    """An exploding run: the header says the law does not apply, with the reason; the verdict
    is taken on the window alone (a run that only explodes after the window gets none)."""
    s = np.arange(1, 201)
    rising = [(int(i), "entropy", 0.2 + i / 50) for i in s] + [(int(i), "score", max(0.0, 0.8 - i / 150)) for i in s]
    path = _write(tmp_path, "explode.parquet", rising, "explode")
    code, out, err = _cli(capsys, path, "--fit-frac", "0.3")
    assert code == 0, err
    # the verdict's line, with the lines its wrapping continued it on (indented)
    verdict = re.findall(r"^law: does not apply.*(?:\n  .*)*", out, flags=re.M)
    verdict = [" ".join(v.split()) for v in verdict]
    assert len(verdict) == 1 and "up to 60" in verdict[0] and "entropy rises" in verdict[0], out
    code, out, err = _cli(capsys, path, "--fit-frac", "0.3", "--json")
    assert json.loads(out)[0]["law_on_window"] == verdict[0]
    # falling entropy and rising score inside the window, an explosion only after it: no verdict
    late = [(int(i), "entropy", 1.0 - i / 150 if i < 100 else 0.33 + (i - 100) / 20) for i in s]
    late += [(int(i), "score", 0.3 + i / 300 if i < 100 else 0.63 - (i - 100) / 200) for i in s]
    path = _write(tmp_path, "late.parquet", late, "late")
    code, out, err = _cli(capsys, path, "--fit-frac", "0.3")
    assert code == 0, err
    assert "law: does not apply" not in out
    code, out, err = _cli(capsys, path, "--fit-frac", "0.9")
    assert "law: does not apply" in out


def _live_sweep(root, runs, total=300):
    """A custom GRPO trainer's live sweep: ``runs`` maps a run to (its last step, whether it logs eval rows)."""
    return planned_sweep(root, runs, total=total, seed=3)


def _one_line(capsys, tmp_path):
    sweep = _live_sweep(tmp_path / "sweep", {"a": (120, True), "b": (200, True), "done": (300, True),
                                             "no_eval": (150, False)})
    code, out, err = _cli(capsys, sweep, "--n-boot", "40")
    assert code == 0, err
    return " ".join(out.split())


def test_the_one_line_view_says_which_rows_forecast_another_score_and_which_reached_their_plan(capsys, tmp_path,
                                                                                                monkeypatch):
    """A run with no eval rows was forecast on its training score in the validation scores' columns,
    unsaid; a run at its planned last step (300) read 'to step 600 ... continue', unsaid."""
    monkeypatch.setenv("COLUMNS", "120")
    said = _one_line(capsys, tmp_path)
    assert "the runs forecast 2 scores, not to be compared across: val/answer_accuracy: a, b, done; " \
           "score (training score): no_eval" in said, said
    assert "1 run at the planned last step its log or config states (done): the gain runs to the forecast's last " \
           "step, as if the run went on; give --total-steps if it does" in said, said


def test_runs_without_eval_rows_are_said_to_be_forecast_and_ranked_on_their_training_score(capsys, tmp_path):
    """A sweep none of whose runs logs an eval row was forecast and ranked on its training reward, said
    only in each run's --full text."""
    sweep = _live_sweep(tmp_path / "sweep", {f"r{i}": (300, False) for i in range(4)})
    code, out, err = _cli(capsys, sweep, "--fit-frac", "0.25", "--n-boot", "40")
    assert code == 0, err
    assert "no run logs a validation score: forecast on the training score (score)" in " ".join(out.split())
    code = main(["rank", str(sweep), "--fit-frac", "0.25", "--n-boot", "60"])
    out = capsys.readouterr().out
    assert code == 0 and "no run logs a validation score: ranked on the training score (score)" in " ".join(
        out.split()), out


def test_a_share_of_the_run_is_said_as_given_not_rounded_to_the_whole_run(capsys):
    """--fit-frac 0.999 (99 of 100 steps) was said "(100% of the run, a backtest)"."""
    rc = main(["forecast", str(ROOT / "data/real-sizes/qwen2.5-3b-instruct_grpo-lora_gsm8k.csv"), "--fit-frac", "0.999",
               "-q"])
    out = " ".join(capsys.readouterr().out.split())
    assert rc == 0 and "(99.9% of the run, a backtest)" in out


def test_an_unreadable_file_among_others_says_how_to_read_the_rest(tmp_path, capsys):
    """One broken file in a folder stopped the command with its reason alone: --skip-bad went unsaid."""
    (tmp_path / "good.csv").write_bytes((ROOT / "data/real-sizes/qwen2.5-3b-instruct_grpo-lora_gsm8k.csv").read_bytes())
    (tmp_path / "broken.csv").write_text('step,entropy\n1,"abc\n')
    assert main(["forecast", str(tmp_path), "-q"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "broken.csv: cannot read as a table" in err and "--skip-bad leaves it out and reads the other files" in err
    assert main(["forecast", str(tmp_path / "broken.csv"), "-q"]) == 2  # one file alone: no other to read
    assert "--skip-bad" not in capsys.readouterr().err


def test_a_short_runs_final_step_is_not_said_to_be_logged(tmp_path, capsys):
    """On a 4-step log, forecast said 'the mean training score over step 7 (the one step logged there)',
    though step 7 is the forecast's, never logged."""
    log = tmp_path / "r.log"
    log.write_text("".join(f"step {s} | loss 0.1 | reward {0.3 + 0.03 * s:.2f} | entropy {1.3 - 0.1 * s:.1f}\n"
                           for s in range(1, 5)))
    code, out, err = _cli(capsys, log)
    assert code == 0, err
    text = " ".join(out.split())
    assert "logged there" not in text, text
    assert "final score: the training score at step 7 alone: the last 5% of the steps up to the forecast's end " \
           "holds no other step" in text, text


def test_a_training_score_asked_for_is_not_said_to_stand_in_for_a_missing_validation(capsys, tmp_path):
    """--y-key score on a run that logs a validation score: the note says the training score was
    asked for ("no validation score in run" was false there)."""
    s = np.arange(1, 120)
    recs = [(int(i), "entropy", 1.0 - i / 200) for i in s] + [(int(i), "score", 0.3 + i / 400) for i in s] + \
        [(int(i), "val/gsm8k", 0.4 + i / 500) for i in s[::10]]
    path = _write(tmp_path, "both.parquet", recs, "both")
    code, out, err = _cli(capsys, path, "--fit-frac", "0.3", "--n-boot", "20", "--y-key", "score")
    assert code == 0, err
    assert "forecasting the training score (score) of run 'both', as asked (--y-key)" in out
    assert "no validation score" not in out
    code, out, err = _cli(capsys, path, "--fit-frac", "0.3", "--n-boot", "20")
    assert code == 0 and "no validation score" not in out and "forecasting val/gsm8k" in out, out
