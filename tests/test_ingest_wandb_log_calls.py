"""W&B runs written by the real SDK (offline) whose steps are W&B's count of ``wandb.log`` calls (no ``step=``,
no ``define_metric``): a loop that logs one training step in several calls, and a run resumed by a second
process, whose count restarts at 0."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time

import pytest

import entropylaw as el
from _wandb_quiet import quiet_settings
from entropylaw.lab.loggers import wandb_finish as finish

wandb = pytest.importorskip("wandb")

STEPS = 20


def _entropy(s: int) -> float:
    return round(1.1 * math.exp(-s / 9) + 0.1, 6)


def _reward(s: int) -> float:
    return round(0.8 - 0.6 * math.exp(-s / 7), 6)


def _init(root, name="split", **kw):
    return wandb.init(mode="offline", dir=root, project="p", name=name, settings=quiet_settings(), **kw)


def _series(df, metric):
    rows = df[df["metric"] == metric]
    return dict(zip(rows["step"].astype(int).tolist(), rows["value"].astype(float).tolist()))


def _account(df):
    [account] = el.row_accounts(df)
    return account


# --- several log calls per training step -------------------------------------------------------------

def test_a_step_logged_in_two_calls_is_one_step(tmp_path):
    """wandb.log({"train/entropy": e}) then wandb.log({"train/reward": r}): W&B counts 40 steps, the entropy on
    the even ones and the reward on the odd ones, never paired (it read 40 steps, said nothing)."""
    run = _init(tmp_path)
    for s in range(STEPS):
        run.log({"train/entropy": _entropy(s)})
        run.log({"train/reward": _reward(s)})
    finish(run)
    df = el.load(tmp_path / "wandb", warn=False)
    assert _series(df, "entropy") == pytest.approx({s: _entropy(s) for s in range(STEPS)})
    assert _series(df, "score") == pytest.approx({s: _reward(s) for s in range(STEPS)})
    account = _account(df)
    assert account["rows_read"] == account["rows_kept"] == 2 * STEPS
    said = [n for n in account["changed"] if n.startswith("2 log calls per step: joined")]
    assert said and "40" in said[0] and "20 steps" in said[0], account["notes"]


def test_three_calls_per_step_with_an_evaluation_now_and_then_and_a_cut_last_step(tmp_path):
    """Three calls per step (entropy, reward, learning rate), an evaluation call every 5 steps after them, the run
    stopped after the last step's first call: the evaluation at its training step, the cut step kept."""
    run = _init(tmp_path)
    for s in range(STEPS):
        run.log({"train/entropy": _entropy(s), "train/loss": 0.1})
        run.log({"train/reward": _reward(s)})
        run.log({"train/lr": 1e-6})
        if s % 5 == 4:
            run.log({"eval/accuracy": _reward(s) - 0.1})
    run.log({"train/entropy": _entropy(STEPS), "train/loss": 0.1})
    finish(run)
    df = el.load(tmp_path / "wandb", warn=False)
    assert _series(df, "entropy") == pytest.approx({s: _entropy(s) for s in range(STEPS + 1)})
    assert _series(df, "score") == pytest.approx({s: _reward(s) for s in range(STEPS)})
    assert _series(df, "val/accuracy") == pytest.approx({s: _reward(s) - 0.1 for s in range(4, STEPS, 5)})
    account = _account(df)
    assert account["rows_read"] == account["rows_kept"] == 4 * STEPS + 4 + 2
    [said] = [n for n in account["changed"] if n.startswith("3 log calls per step: joined")]
    assert "1 of its 3 calls" in said and "4 calls of other keys" in said, said


def test_an_evaluation_before_training_and_after_each_step_pairs_with_its_step(tmp_path):
    """log(evaluate()) before the loop, then each step log(train) and log(evaluate()): the evaluation, logged first,
    was taken as each cycle's first call, the evaluation after step s read at step s + 1 beside the next step's
    entropy, and the run said to stop between a step's calls; it is read at the step it follows, the first at 0."""
    run = _init(tmp_path)
    run.log({"eval/accuracy": 0.1})
    for s in range(1, STEPS + 1):
        run.log({"train/entropy": _entropy(s), "train/reward": _reward(s)})
        run.log({"eval/accuracy": _reward(s) - 0.1})
    finish(run)
    df = el.load(tmp_path / "wandb", warn=False)
    assert _series(df, "entropy") == pytest.approx({s: _entropy(s) for s in range(1, STEPS + 1)})
    assert _series(df, "val/accuracy") == pytest.approx({0: 0.1, **{s: _reward(s) - 0.1 for s in range(1, STEPS + 1)}})
    [said] = [n for n in _account(df)["changed"] if n.startswith("2 log calls per step: joined")]
    assert "before the first step" in said and "stopped between" not in said, said


def test_one_call_per_step_beside_evaluation_calls_is_read_at_the_loops_steps(tmp_path):
    """A training call holding entropy and reward, an evaluation call every 5 steps, no step=: W&B counts the
    evaluation calls as steps too, so 20 training steps were read as 0..23 (each evaluation between two training
    steps, the later ones pushed on by 1, 2, 3). Each evaluation is read at the step of the training call before
    it, the training calls at 0..19, said."""
    run = _init(tmp_path)
    for s in range(STEPS):
        run.log({"train/entropy": _entropy(s), "train/reward": _reward(s)})
        if s % 5 == 4:
            run.log({"eval/accuracy": 0.5 + s / 100})
    finish(run)
    df = el.load(tmp_path / "wandb", warn=False)
    assert _series(df, "entropy") == {s: _entropy(s) for s in range(STEPS)}
    assert _series(df, "val/accuracy") == {s: pytest.approx(0.5 + s / 100) for s in (4, 9, 14, 19)}
    [said] = [n for n in _account(df)["changed"] if n.startswith("one training call a step")]
    assert "which W&B counts as steps too (24 in all): read as 20 steps (0..19)" in said, said
    assert "4 calls of other keys ({eval/accuracy}) read at the step of the calls before them" in said, said


@pytest.mark.parametrize("calls", [1, 2])
def test_an_evaluation_logged_before_its_steps_training_is_read_at_that_step(tmp_path, calls):
    """Each 5th step logs its evaluation, then its training (in one call or two): the evaluation was read at the
    step of the training call before it, one step early (0, 4, 9, 14: the first at 0, before any training)."""
    run = _init(tmp_path)
    for s in range(STEPS):
        if s % 5 == 0:
            run.log({"eval/accuracy": 0.5 + s / 100})
        if calls == 1:
            run.log({"train/entropy": _entropy(s), "train/reward": _reward(s)})
        else:
            run.log({"train/entropy": _entropy(s)})
            run.log({"train/reward": _reward(s)})
    finish(run)
    df = el.load(tmp_path / "wandb", warn=False)
    assert _series(df, "entropy") == pytest.approx({s: _entropy(s) for s in range(STEPS)})
    assert _series(df, "score") == pytest.approx({s: _reward(s) for s in range(STEPS)})
    assert _series(df, "val/accuracy") == pytest.approx({s: 0.5 + s / 100 for s in range(0, STEPS, 5)})
    [said] = [n for n in _account(df)["changed"] if "read as 20 steps (0..19)" in n]
    assert "4 calls of other keys ({eval/accuracy}) read at the step of the calls after them" in said, said


def test_an_evaluation_before_training_and_after_every_fifth_step_is_read_at_the_step_before_it(tmp_path):
    """log(evaluate()) before the loop, then log(train) and every 5th step log(evaluate()) after it: the run ends
    with an evaluation, so each is one after its step's training (not one before the next step's): read at the step
    of the training call before it (the first, before any, at 0)."""
    run = _init(tmp_path)
    run.log({"eval/accuracy": 0.5})
    for s in range(STEPS):
        run.log({"train/entropy": _entropy(s), "train/reward": _reward(s)})
        if s % 5 == 4:
            run.log({"eval/accuracy": 0.5 + s / 100})
    finish(run)
    df = el.load(tmp_path / "wandb", warn=False)
    assert _series(df, "entropy") == pytest.approx({s: _entropy(s) for s in range(STEPS)})
    assert _series(df, "val/accuracy") == pytest.approx({0: 0.5, **{s: 0.5 + s / 100 for s in range(4, STEPS, 5)}})


@pytest.mark.parametrize("how", ["step=", "define_metric"])
def test_calls_on_a_step_of_the_runs_own_are_read_as_before(tmp_path, how):
    run = _init(tmp_path)
    if how == "define_metric":
        run.define_metric("train/step")
        run.define_metric("train/*", step_metric="train/step")
    for s in range(1, STEPS + 1):
        if how == "step=":
            run.log({"train/entropy": _entropy(s)}, step=s, commit=False)
            run.log({"train/reward": _reward(s)}, step=s)
        else:
            run.log({"train/entropy": _entropy(s), "train/step": s})
            run.log({"train/reward": _reward(s), "train/step": s})
    finish(run)
    df = el.load(tmp_path / "wandb", warn=False)
    assert _series(df, "entropy") == pytest.approx({s: _entropy(s) for s in range(1, STEPS + 1)})
    assert _series(df, "score") == pytest.approx({s: _reward(s) for s in range(1, STEPS + 1)})
    assert not any("log call" in n for n in _account(df)["notes"])


def test_calls_in_no_fixed_cycle_are_read_on_wandbs_count_and_said(tmp_path):
    """The reward logged only on some steps, in a call of its own: which entropy it goes with is not known."""
    run = _init(tmp_path)
    for s in range(STEPS):
        run.log({"train/entropy": _entropy(s)})
        if s % 3:
            run.log({"train/reward": _reward(s)})
    finish(run)
    df = el.load(tmp_path / "wandb", warn=False)
    assert len(_series(df, "entropy")) == STEPS and max(_series(df, "entropy")) > STEPS
    [said] = [n for n in _account(df)["notes"] if "wandb.log call" in n]
    assert "do not pair" in said and "no fixed cycle" in said, said


# --- a run resumed by a second process, each logging without step= -----------------------------------

def _process(root, steps, resume, with_step=False):
    """One process of run 'resumed' (its own offline-run-<second>-<id> folder: a new second each)."""
    started = time.strftime("%Y%m%d_%H%M%S")
    while time.strftime("%Y%m%d_%H%M%S") == started:
        time.sleep(0.05)
    run = _init(root, "grpo-resumed", id="resumed9", resume=resume)
    for s in steps:
        run.log({"train/entropy": _entropy(s), "train/reward": _reward(s)}, **({"step": s} if with_step else {}))
    finish(run)


@pytest.mark.parametrize("resume, processes", [("allow", 2), ("must", 3)])
def test_a_run_resumed_without_step_is_one_run_each_process_after_the_one_before(tmp_path, resume, processes):
    """Offline, W&B's _step starts again at 0 in the second process: read as two runs ('grpo-resumed' and
    'grpo-resumed-2', both at steps 0..9)."""
    for i in range(processes):
        _process(tmp_path, range(10 * i, 10 * i + 10), "allow" if i == 0 else resume)
    df = el.load(tmp_path / "wandb", warn=False)
    assert set(df["run_id"]) == {"grpo-resumed"}
    assert _series(df, "entropy") == pytest.approx({s: _entropy(s) for s in range(10 * processes)})
    account = _account(df)
    assert account["rows_read"] == account["rows_kept"] == 20 * processes
    [said] = [n for n in account["changed"] if "resumed in" in n]
    assert f"{processes} processes" in said and "20 rows at steps 10..19" in said, said


def test_processes_that_log_with_step_are_read_as_before(tmp_path):
    """Both processes give step= (the second from 0 again): their steps are the run's own, not W&B's count."""
    _process(tmp_path, range(10), "allow", with_step=True)
    _process(tmp_path, range(10), "allow", with_step=True)
    df = el.load(tmp_path / "wandb", warn=False)
    assert sorted(set(df["run_id"])) == ["grpo-resumed", "grpo-resumed-2"]
    assert not any("resumed in" in n for a in el.row_accounts(df) for n in a["notes"])


def test_a_finished_process_is_said_to_run_at_least_until_its_last_row(tmp_path):
    """The exit record's runtime is whole seconds, cut down: a process whose last row was logged at 3.8 s was said
    to end at 3 s, so a rank starting at 3.2 s was not seen to run beside it (CI read two ranks of one job as a
    resume once)."""
    from entropylaw.readers.wandb_offline import read_wandb_file
    run = _init(tmp_path, "timed")
    time.sleep(0.6)
    before_row = time.time()
    run.log({"train/entropy": _entropy(0), "train/reward": _reward(0)})
    finish(run)
    [file] = (tmp_path / "wandb").glob("offline-run-*/*.wandb")
    start, end = read_wandb_file(file).meta["wandb_span"]
    assert start < before_row <= end <= time.time()


_RANK = """
import math, sys, wandb
run = wandb.init(mode="offline", dir=sys.argv[1], project="p", name="ddp", id="ranks7", resume="allow",
                 settings=wandb.Settings(x_disable_stats=True, x_disable_meta=True, x_disable_machine_info=True,
                                         console="off", save_code=False, disable_git=True, silent=True))
for s in range(10):
    run.log({"train/entropy": round(1.1 * math.exp(-s / 9) + 0.11, 6), "train/reward": 0.5})
run.finish()
"""


def test_processes_of_one_id_that_ran_at_once_are_no_resume(tmp_path):
    """Two ranks of one job, each calling wandb.init(id=...) and logging its own values without step=, ran at once:
    they were joined as a resume, rank 1's steps 0..9 read as 10..19 after rank 0's (the entropy back up at step
    10); they are read apart, as before the resume was joined."""
    run = _init(tmp_path, "ddp", id="ranks7", resume="allow")
    started = time.strftime("%Y%m%d_%H%M%S")
    while time.strftime("%Y%m%d_%H%M%S") == started:  # a folder of its own: offline-run-<second>-<id>
        time.sleep(0.05)
    own = {k: v for k, v in os.environ.items() if not k.startswith("WANDB_")}  # its own W&B service, as a rank's
    rank1 = subprocess.run([sys.executable, "-c", _RANK, str(tmp_path)], capture_output=True, text=True, timeout=300,
                           env=own)
    assert rank1.returncode == 0, rank1.stderr[-2000:]
    for s in range(10):
        run.log({"train/entropy": _entropy(s), "train/reward": _reward(s)})
    finish(run)  # after rank 1 ended: the two ran at once
    df = el.load(tmp_path / "wandb", warn=False)
    assert df["run_id"].nunique() == 2
    for _, rows in df[df["metric"] == "entropy"].groupby("run_id"):
        assert sorted(rows["step"].astype(int)) == list(range(10))
    assert not any("resumed in" in n for a in el.row_accounts(df) for n in a["changed"])
