"""Custom trainers' logs that crashed, were resumed, or were put together wrongly.

- a printed log (a loop's ``step 10 | entropy 0.5`` lines, veRL's console) that ends in a Python
  traceback or ``Killed``: the run stopped there, said by the row account and every command. Before,
  nothing said it, and a forecast of where the run "ends" read as one of a run that finished;
- a run folder's ``metrics.jsonl`` beside the trainer's ``output.log``/``stderr`` holding the traceback:
  said of the run. Before, a run folder given alone with its console output failed to read at all;
- a run resumed into a second file beside its first (``metrics.jsonl`` + ``metrics_resumed.jsonl``,
  ``log.txt`` + ``log.1.txt``, ``train.log`` + ``train.log.1``): one run, the steps both hold taken from
  the later file, each row dropped counted. Before, the second file was a run of its own (``metrics_resumed``,
  ``log.1``), or, named ``train.log.1``, not read at all and not said;
- a run folder's ``train.jsonl`` and ``eval.jsonl`` that are two runs' (their configs' seeds or the run
  names they write differ, their steps lie far apart): not joined, and why said. Before, joined silently
  into one run, one run's evaluations forecast from the other's entropy;
- the numbers the commands take about such a run (``--n-problems``, ``--total-steps``, ``--horizon``,
  ``--score-range`` ...): a value no run can have is one line and exit code 2. Before, ``--n-problems 1e12``,
  ``--total-steps 0.5``/``1e30``, ``--horizon 0.3`` and ``--score-range 0,inf`` were taken (or refused late).
"""

from __future__ import annotations

import json
import math

import pytest

import entropylaw as el
from entropylaw.api.reading import row_accounts

OOM = ('Traceback (most recent call last):\n  File "train.py", line 120, in <module>\n    main()\n'
       '  File "train.py", line 88, in main\n    loss.backward()\n'
       'RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n')


def _h(s):
    return 0.8 * math.exp(-s / 20) + 0.05


def _r(s):
    return 0.1 + 0.5 * (1 - math.exp(-s / 20))


def _printed(steps=range(1, 41), loss=lambda s: 0.1):
    return "".join(f"step {s} | loss {loss(s)} | entropy {_h(s):.4f} | reward {_r(s):.4f}\n" for s in steps)


def _notes(df):
    return [n for a in row_accounts(df) for n in a["notes"]]


def _ends(df):
    return [n for n in _notes(df) if n.startswith("the log ends in an error")]


@pytest.mark.parametrize("tail,line,what", [
    (OOM, 41, "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"),
    ("Killed\n", 41, "Killed"),
    ("/bin/bash: line 1:  4242 Killed                  python train.py\n", 41, "Killed"),
    ("slurmstepd: error: *** JOB 77 ON gpu-3 CANCELLED AT 2026-01-02T03:04:05 DUE TO TIME LIMIT ***\n", 41,
     "the scheduler cancelled the job (time limit)"),
])
def test_a_printed_log_that_ends_in_an_error_says_so(tmp_path, tail, line, what):
    path = tmp_path / "train.log"
    path.write_text(_printed() + tail)
    df = el.load(path, warn=False)
    [end] = _ends(df)
    assert end.startswith(f"the log ends in an error at line {line}, after its last step 40: {what}"), end
    assert len(df[df["metric"] == "entropy"]) == 40  # nothing read differently


def test_the_commands_say_the_error_a_log_ends_in(tmp_path, cli):
    path = tmp_path / "train.log"
    path.write_text(_printed() + OOM)
    for command in ("summary", "forecast"):
        out = cli(command, str(path))
        assert out.returncode == 0, out.stderr
        said = " ".join(out.stderr.split())
        assert ("the log ends in an error at line 41, after its last step 40: RuntimeError: CUDA out of memory"
                in said), out.stderr


def test_a_nan_loss_crash_is_said_with_the_values_it_dropped(tmp_path):
    path = tmp_path / "train.log"
    nan_tail = ('Traceback (most recent call last):\n  File "train.py", line 9, in <module>\n'
                '    raise FloatingPointError(f"loss is {loss}")\nFloatingPointError: loss is nan\n')
    path.write_text(_printed(range(1, 41), loss=lambda s: "nan" if s > 37 else 0.1) + nan_tail)
    df = el.load(path, warn=False)
    [account] = row_accounts(df)
    assert account["dropped"] == {"non-finite value": 3}
    [end] = _ends(df)
    assert "line 41, after its last step 40: FloatingPointError: loss is nan" in end


@pytest.mark.parametrize("tail", [
    # a traceback a loop caught and printed, the run going on
    OOM.replace("RuntimeError", "ValueError") + _printed(range(41, 46)),
    # Python's note of an error it went past at exit: the run finished
    "training done\nException ignored in: <function Pool.__del__ at 0x7f>\nTraceback (most recent call last):\n"
    '  File "pool.py", line 3, in __del__\nAttributeError: NoneType object has no attribute close\n',
    "training done\n",
])
def test_a_log_that_goes_on_or_finishes_is_no_crash(tmp_path, tail):
    path = tmp_path / "train.log"
    path.write_text(_printed() + tail)
    assert _ends(el.load(path, warn=False)) == []


def test_a_verl_console_log_ending_in_a_workers_traceback(tmp_path):
    lines = [f"(TaskRunner pid=71) step:{s} - actor/entropy:{_h(s):.4f} - critic/score/mean:{_r(s):.4f}"
             for s in range(1, 31)]
    ray = "\x1b[2m\x1b[36m(TaskRunner pid=71)\x1b[0m "  # Ray's coloured prefix of a worker's lines
    tail = [ray + "Traceback (most recent call last):",
            ray + '  File "verl/trainer/ppo/ray_trainer.py", line 900, in fit',
            ray + "    output = self.actor_rollout_wg.update_actor(batch)",
            ray + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB",
            "Error executing job with overrides: []", "Traceback (most recent call last):",
            '  File "main_ppo.py", line 30, in main', "ray.exceptions.RayTaskError(OutOfMemoryError): ray::run()"]
    path = tmp_path / "verl_grpo.log"
    path.write_text("\n".join(lines + tail) + "\n")
    [end] = _ends(el.load(path, warn=False))
    assert end.startswith("the log ends in an error at line 31, after its last step 30: torch.OutOfMemoryError: "
                          "CUDA out of memory"), end


@pytest.mark.parametrize("console", ["output.log", "stderr"])
def test_a_run_folders_metrics_beside_its_console_output_that_ends_in_an_error(tmp_path, console):
    """A run folder given alone: before, its console output (no metrics in it) failed the whole read."""
    run = tmp_path / "grpo_run"
    run.mkdir()
    (run / "metrics.jsonl").write_text("".join(json.dumps({"step": s, "entropy": _h(s), "reward": _r(s)}) + "\n"
                                               for s in range(1, 41)))
    (run / console).write_text("loading model\nstarting training\n" + OOM)
    for where in (run, tmp_path):  # given alone, and as a sweep's run folder
        df = el.load(where, warn=False)
        assert el.run_ids(df) == ["grpo_run"]
        [end] = _ends(df)
        assert end.startswith(f"the log ends in an error ({console} beside it, line 3): RuntimeError: CUDA out of "
                              "memory"), end
        [account] = [a for a in row_accounts(df) if a["source"].endswith("metrics.jsonl")]
        assert account["rows_read"] == account["rows_kept"] == 80


def test_a_run_folders_console_output_that_ends_well_says_nothing(tmp_path):
    run = tmp_path / "grpo_run"
    run.mkdir()
    (run / "metrics.jsonl").write_text("".join(json.dumps({"step": s, "entropy": _h(s), "reward": _r(s)}) + "\n"
                                               for s in range(1, 41)))
    (run / "output.log").write_text("loading model\n" + OOM + "retrying with a smaller batch\n" * 300 + "done\n")
    assert _ends(el.load(run, warn=False)) == []


def _jsonl(path, steps, scale=1.0):
    path.write_text("".join(json.dumps({"step": s, "entropy": scale * _h(s), "reward": _r(s)}) + "\n" for s in steps))


@pytest.mark.parametrize("first,second", [("metrics.jsonl", "metrics_resumed.jsonl"), ("log.txt", "log.1.txt"),
                                          ("train.log", "train.log.1"), ("grpo_qwen.jsonl", "grpo_qwen-resumed.jsonl")])
def test_a_run_resumed_into_a_second_file_is_one_run(tmp_path, first, second):
    run = tmp_path / "grpo_qwen"
    run.mkdir()
    if first.endswith(".jsonl"):
        _jsonl(run / first, range(1, 50))
        _jsonl(run / second, range(40, 100), scale=0.99)  # steps 40..49 again, from the checkpoint at 39
    else:
        (run / first).write_text(_printed(range(1, 50)))
        (run / second).write_text(_printed(range(40, 100), loss=lambda s: 0.2))
    df = el.load(run, warn=False)
    assert el.run_ids(df) == ["grpo_qwen"]
    assert df[df["metric"] == "entropy"]["step"].tolist() == list(range(1, 100))
    accounts = {a["source"].rsplit("/", 1)[-1]: a for a in row_accounts(df)}
    n = 3 if first.endswith(".txt") or first.endswith(".log") else 2  # loss, entropy, reward printed
    assert accounts[first]["dropped"] == {"superseded by resumed segment": 10 * n}, accounts
    assert accounts[second]["rows_kept"] == accounts[second]["rows_read"] == 60 * n
    assert any(note.startswith(f"resumed at step 40 in {run / second}") for note in accounts[first]["notes"])


def test_a_second_file_that_only_goes_on_is_appended(tmp_path):
    _jsonl(tmp_path / "metrics.jsonl", range(1, 50))
    _jsonl(tmp_path / "metrics_resumed.jsonl", range(50, 100))
    df = el.load(tmp_path, warn=False)
    assert el.run_ids(df) == [tmp_path.name]
    accounts = row_accounts(df)
    assert all(a["rows_read"] == a["rows_kept"] for a in accounts)
    assert any(note == f"continued at step 50 in {tmp_path / 'metrics_resumed.jsonl'}: appended (no step logged in "
               "both)" for a in accounts for note in a["notes"])


def test_a_second_file_that_counts_its_steps_again_stays_a_run_of_its_own(tmp_path):
    """Both files start at step 1: a second run, or a resume that counted again; no evidence joins them."""
    (tmp_path / "log.txt").write_text(_printed(range(1, 50)))
    (tmp_path / "log.1.txt").write_text(_printed(range(1, 50), loss=lambda s: 0.3))
    df = el.load(tmp_path, warn=False)
    assert sorted(el.run_ids(df)) == [tmp_path.name, f"{tmp_path.name}-2"]
    assert any(f"read as '{tmp_path.name}-2'" in n for n in _notes(df))


def test_a_file_named_as_a_resume_alone_keeps_its_name(tmp_path):
    (tmp_path / "grpo_resume.log").write_text(_printed())
    (tmp_path / "ppo.log").write_text(_printed())
    assert sorted(el.run_ids(el.load(tmp_path, warn=False))) == ["grpo_resume", "ppo"]


def _train_eval(folder, train_head=None, eval_head=None, eval_steps=range(0, 100, 10), train_extra=None,
                eval_extra=None):
    folder.mkdir()
    head = [json.dumps(train_head) + "\n"] if train_head else []
    (folder / "train.jsonl").write_text("".join(head) + "".join(
        json.dumps({"step": s, "entropy": _h(s), "reward": _r(s), **(train_extra or {})}) + "\n"
        for s in range(1, 100)))
    head = [json.dumps(eval_head) + "\n"] if eval_head else []
    (folder / "eval.jsonl").write_text("".join(head) + "".join(
        json.dumps({"step": s, "accuracy": _r(s) - 0.05, **(eval_extra or {})}) + "\n" for s in eval_steps))
    return folder


@pytest.mark.parametrize("case,why", [
    (dict(train_head={"seed": 1, "model": "Qwen/Qwen2.5-0.5B"}, eval_head={"seed": 2, "model": "Qwen/Qwen2.5-0.5B"}),
     "its config's seed 1 is not eval.jsonl's 2"),
    (dict(train_head={"model": "Qwen/Qwen2.5-0.5B"}, eval_head={"model": "Qwen/Qwen2.5-7B"}),
     "its config's model Qwen/Qwen2.5-0.5B is not eval.jsonl's Qwen/Qwen2.5-7B"),
    (dict(train_extra={"run_name": "grpo-a"}, eval_extra={"run_name": "grpo-b"}),
     "its run_name 'grpo-a' is not eval.jsonl's 'grpo-b'"),
    (dict(eval_steps=range(5000, 6000, 100)), "its steps 5000..5900 lie far after train.jsonl's last step 99"),
])
def test_a_run_folders_train_and_eval_files_of_two_runs_are_not_joined(tmp_path, case, why):
    folder = _train_eval(tmp_path / "grpo", **case)
    df = el.load(folder, warn=False)
    assert sorted(el.run_ids(df)) == ["grpo", "grpo-2"]
    [said] = [n for n in _notes(df) if n.startswith("not joined with")]
    assert why in said and said.endswith("read as a run of its own"), said
    assert all(a["rows_read"] == a["rows_kept"] + sum(a["dropped"].values()) for a in row_accounts(df))


def test_the_commands_say_why_two_files_were_not_joined(tmp_path, cli):
    folder = _train_eval(tmp_path / "grpo", eval_steps=range(5000, 6000, 100))
    out = cli("summary", str(folder))
    assert out.returncode == 0, out.stderr
    assert "its steps 5000..5900 lie far after train.jsonl's last step 99" in " ".join(out.stderr.split())


def test_a_run_folders_files_whose_steps_do_not_meet_are_joined_and_said(tmp_path):
    df = el.load(_train_eval(tmp_path / "grpo", eval_steps=range(110, 200, 10)), warn=False)
    assert el.run_ids(df) == ["grpo"]
    [said] = [n for n in _notes(df) if n.startswith("joined with")]
    assert "as one run, though unsure: its steps 110..190 lie after train.jsonl's last step 99" in said, said


@pytest.mark.parametrize("case", [dict(), dict(eval_steps=[100]), dict(train_head={"seed": 3}, eval_head={"seed": 3}),
                                  dict(train_head={"seed": 3}), dict(train_head={"model": "Qwen/Qwen2.5-7B"})])
def test_a_run_folders_files_of_one_run_are_joined_without_a_word(tmp_path, case):
    """The folder's name guesses a model (qwen2.5-7b_grpo): no evidence against the config's."""
    df = el.load(_train_eval(tmp_path / "qwen2.5-7b_grpo", **case), warn=False)
    assert el.run_ids(df) == ["qwen2.5-7b_grpo"]
    assert not [n for n in _notes(df) if n.startswith(("joined with", "not joined with"))]


TOO_MANY = "expected a whole number of problems, 2 to 10,000,000"


@pytest.mark.parametrize("args,says", [
    (("forecast", "--n-problems", "1e12"), f"--n-problems: '1e12': {TOO_MANY}"),
    (("rank", "--n-problems", "1e8"), f"--n-problems: '1e8': {TOO_MANY}"),
    (("watch", "--n-problems", "1e12"), f"--n-problems: '1e12': {TOO_MANY}"),
    (("forecast", "--total-steps", "0.5"), "--total-steps: '0.5': expected a whole number of steps"),
    (("forecast", "--total-steps", "1e30"), "--total-steps: '1e30': past any run's step"),
    (("forecast", "--horizon", "0.3"), "--horizon: '0.3': expected a whole number of steps"),
    (("forecast", "--fit-steps", "2.5"), "--fit-steps: '2.5': expected a whole number of steps"),
    (("forecast", "--at-step", "1e30"), "--at-step: '1e30': past any run's step"),
    (("rank", "--total-steps", "2.5"), "--total-steps: '2.5': expected a whole number of steps"),
    (("watch", "--total-steps", "1.5"), "--total-steps: '1.5': expected a whole number of steps"),
    (("fit", "--score-range", "0,inf"), "--score-range: '0,inf': expected two finite numbers LO,HI"),
    (("fit", "--score-range", "nan,1"), "--score-range: 'nan,1': expected two finite numbers LO,HI"),
    # already refused so: kept so
    (("forecast", "--n-problems", "0"), "--n-problems: '0': expected a whole number of problems, 2 or more"),
    (("forecast", "--n-problems", "-5"), "--n-problems: '-5': expected a whole number of problems, 2 or more"),
    (("forecast", "--n-problems", "abc"), "--n-problems: 'abc': expected a whole number of problems"),
    (("forecast", "--total-steps", "0"), "--total-steps: '0': must be a positive number of steps"),
    (("forecast", "--threshold", "-1"), "--threshold: '-1': expected a gain above 0"),
    (("forecast", "--step-cost", "nan"), "--step-cost: 'nan': expected a finite number of GPU-hours per step"),
    (("rank", "--threshold", "0"), "--threshold: '0': expected a gain above 0"),
    (("summary", "--logging-steps", "0"), "--logging-steps: '0': must be at least 1"),
    (("summary", "--score-scale", "-1"), "--score-scale '-1': expected a positive factor"),
    (("forecast", "--n-boot", "2.5"), "--n-boot: '2.5': expected a whole number such as 1000"),
    (("forecast", "--n-boot", "1e30"), "--n-boot: '1e30': expected a whole number such as 1000"),
    (("forecast", "--n-boot", "1"), "--n-boot: '1': a bootstrap needs at least 2 resamples"),
])
def test_a_number_no_run_can_have_is_one_line_and_exit_code_2(tmp_path, cli, args, says):
    path = tmp_path / "train.log"
    path.write_text(_printed())
    bounded = ("--max-refreshes", "1", "--interval", "0.1") if args[0] == "watch" else ()  # a value taken: once
    out = cli(args[0], str(path), *args[1:], *bounded)
    assert out.returncode == 2, (out.stdout, out.stderr)
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("entropylaw: error:") and "Traceback" not in out.stderr, out.stderr
    assert says in lines[0], lines[0]


def test_the_api_takes_the_same_rule_for_n_problems(tmp_path):
    path = tmp_path / "train.log"
    path.write_text(_printed())
    with pytest.raises(el.EntropyLawError, match="expected a whole number of problems, 2 to 10,000,000"):
        el.forecast(el.load(path, warn=False), n_problems=1e12)


@pytest.mark.parametrize("args", [("forecast", "--total-steps", "1e3"), ("forecast", "--n-problems", "1319"),
                                  ("forecast", "--horizon", "20"), ("forecast", "--n-boot", "1e2"),
                                  ("forecast", "--seed", "0.0")])
def test_whole_numbers_written_any_way_are_taken(tmp_path, cli, args):
    path = tmp_path / "train.log"
    path.write_text(_printed())
    out = cli(args[0], str(path), *args[1:])
    assert out.returncode == 0, out.stderr
