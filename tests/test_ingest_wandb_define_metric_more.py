"""W&B runs written by the real SDK (offline) with ``define_metric`` step axes as custom trainers
declare them, and percent scores: each run table has the steps a user sees in the W&B chart,
its values in their units, and every dropped row counted with its reason."""

from __future__ import annotations

import json
import math
import time

import pytest

import entropylaw as el
from conftest import run_cli
from entropylaw.lab.loggers import wandb_finish as finish

pytest.importorskip("wandb")


def _entropy(s: int) -> float:
    return round(1.2 * math.exp(-s / 8) + 0.1, 6)


def _score(s: int) -> float:
    return round(1.0 - 0.3 * math.exp(_entropy(s)), 6)


def _init(root, name, **kw):
    import wandb

    settings = wandb.Settings(x_disable_stats=True, x_disable_meta=True, x_disable_machine_info=True,
                              console="off", save_code=False, disable_git=True, silent=True)
    return wandb.init(mode="offline", dir=root, project="p", name=name, settings=settings, **kw)


def _series(df, metric, run=None):
    rows = df[(df["metric"] == metric) & ((df["run_id"] == run) if run else True)]
    return dict(zip(rows["step"].astype(int).tolist(), rows["value"].astype(float).tolist()))


# --- a fractional step metric (epoch) ---------------------------------------------------------------

def test_a_fractional_epoch_step_metric_puts_its_rows_on_wandbs_step_not_on_two_axes(tmp_path):
    """define_metric("*", step_metric="epoch") with epoch = step / 8: an epoch of 1.0 or 2.0 made a
    step of 1 or 2 among rows on W&B's _step (0..19), read as a resume that dropped 29 of 44 rows."""
    run = _init(tmp_path, "epoch-axis")
    run.define_metric("epoch")
    run.define_metric("*", step_metric="epoch")
    w_step, train_at, eval_at = 0, {}, {}
    for s in range(1, 21):
        run.log({"epoch": s / 8, "train/entropy": _entropy(s), "train/reward": _score(s)})
        train_at[w_step] = s
        w_step += 1
        if s % 5 == 0:
            run.log({"epoch": s / 8, "eval/accuracy": _score(s) - 0.1})
            eval_at[w_step] = s
            w_step += 1
    finish(run)
    df = el.load(tmp_path / "wandb", warn=False)
    assert _series(df, "entropy") == pytest.approx({w: _entropy(s) for w, s in train_at.items()})
    assert _series(df, "score") == pytest.approx({w: _score(s) for w, s in train_at.items()})
    assert _series(df, "val/accuracy") == pytest.approx({w: _score(s) - 0.1 for w, s in eval_at.items()})
    [account] = el.row_accounts(df)
    assert account["rows_read"] == account["rows_kept"] == 44 and account["dropped"] == {}
    said = [n for n in account["changed"] if "epoch" in n]
    assert said and "fractional" in said[0] and "_step" in said[0], account["notes"]


def test_an_epoch_that_counts_whole_epochs_is_a_step_axis(tmp_path):
    run = _init(tmp_path, "epoch-int")
    run.define_metric("epoch")
    run.define_metric("*", step_metric="epoch")
    for s in range(1, 11):
        run.log({"epoch": s, "train/entropy": _entropy(s), "train/reward": _score(s)})
    finish(run)
    df = el.load(tmp_path / "wandb", warn=False)
    assert _series(df, "entropy") == pytest.approx({s: _entropy(s) for s in range(1, 11)})
    [account] = el.row_accounts(df)
    assert account["dropped"] == {} and not any("fractional" in n for n in account["notes"])


# --- a run resumed by a second process (resume="allow", the same id) -----------------------------------

def _segment(root, run_id, steps, shift, declared):
    started = time.strftime("%Y%m%d_%H%M%S")
    while time.strftime("%Y%m%d_%H%M%S") == started:  # offline-run-<second>-<id>: one folder per process
        time.sleep(0.05)
    run = _init(root, "grpo-resumed", id=run_id, resume="allow")
    if declared:
        run.define_metric("train/global_step")
        run.define_metric("train/*", step_metric="train/global_step")
    for s in steps:
        row = {"train/entropy": _entropy(s) + shift, "train/reward": _score(s) + shift}
        if declared:
            run.log({**row, "train/global_step": s})
        else:
            run.log(row, step=s)
    finish(run)


@pytest.mark.parametrize("declared", [False, True], ids=["step=", "define_metric"])
@pytest.mark.parametrize("second", [range(9, 21), range(13, 21)], ids=["from a checkpoint", "continued"])
def test_a_run_resumed_by_a_second_process_is_one_run_the_later_segment_winning(tmp_path, declared, second):
    """Two offline folders of one W&B run id, their metrics the same: one run (it was two, 'grpo-resumed'
    and 'grpo-resumed-2', the second holding steps 9..20 of a run that starts at step 1)."""
    _segment(tmp_path, "resumed1", range(1, 13), 0.0, declared)
    _segment(tmp_path, "resumed1", second, 0.01, declared)
    other = _init(tmp_path, "grpo-resumed")  # another run of the same name: still its own
    other.log({"train/entropy": 0.5, "train/reward": 0.5}, step=1)
    finish(other)
    df = el.load(tmp_path / "wandb", warn=False)
    assert sorted(set(df["run_id"])) == ["grpo-resumed", "grpo-resumed-2"]
    [resumed] = [r for r in set(df["run_id"]) if len(df[df["run_id"] == r]) > 2]
    expected = {s: _entropy(s) + (0.01 if s >= second[0] else 0.0) for s in range(1, 21)}
    assert _series(df, "entropy", resumed) == pytest.approx(expected)
    accounts = el.row_accounts(df)
    superseded = 2 * max(0, 13 - second[0])
    assert sum(a["rows_read"] for a in accounts) == 24 + 2 * len(second) + 2
    assert sum(a["dropped"].get("superseded by resumed segment", 0) for a in accounts) == superseded
    assert sum(a["rows_kept"] for a in accounts) == 24 + 2 * len(second) + 2 - superseded


def test_summary_and_forecast_of_a_resumed_run_with_an_epoch_axis(tmp_path):
    for steps, shift in ((range(1, 13), 0.0), (range(9, 21), 0.01)):
        started = time.strftime("%Y%m%d_%H%M%S")
        while time.strftime("%Y%m%d_%H%M%S") == started:
            time.sleep(0.05)
        run = _init(tmp_path, "epochs", id="resumed2", resume="allow")
        run.define_metric("epoch")
        run.define_metric("*", step_metric="epoch")
        for s in steps:
            run.log({"epoch": s / 8, "train/entropy": _entropy(s) + shift, "train/reward": _score(s) + shift}, step=s)
        finish(run)
    summary = run_cli("summary", str(tmp_path / "wandb"), "--json")
    assert summary.returncode == 0, summary.stderr
    out = json.loads(summary.stdout)
    [row] = out["runs"]
    assert row["steps"] == 20 and row["entropy_last"] == pytest.approx(_entropy(20) + 0.01)
    dropped = [a["dropped"] for a in out["row_accounts"]]
    assert {"superseded by resumed segment": 8} in dropped
    assert all("fractional" in " ".join(a["notes"]) for a in out["row_accounts"])
    forecast = run_cli("forecast", str(tmp_path / "wandb"))
    assert forecast.returncode == 0 and "Traceback" not in forecast.stderr, forecast.stderr
    assert "steps 1..20" in forecast.stdout


# --- layouts read right already: kept so (each run written by the real SDK) --------------------------

def _two_axes(run):
    """train/* on train/global_step, eval/* on eval/step (the training step), eval every 5 steps: W&B's
    _step counts 24 log calls, 0..23."""
    run.define_metric("train/global_step")
    run.define_metric("train/*", step_metric="train/global_step")
    run.define_metric("eval/step")
    run.define_metric("eval/*", step_metric="eval/step")
    for s in range(1, 21):
        run.log({"train/global_step": s, "train/entropy": _entropy(s), "train/reward": _score(s)})
        if s % 5 == 0:
            run.log({"eval/step": s, "eval/accuracy": _score(s) - 0.1})


def _float_global_step(run):
    """define_metric("*", step_metric="global_step"), global_step logged as 10.0, 20.0, ..."""
    run.define_metric("global_step")
    run.define_metric("*", step_metric="global_step")
    for s in range(1, 21):
        run.log({"global_step": 10.0 * s, "entropy": _entropy(s), "reward": _score(s)})
        if s % 5 == 0:
            run.log({"global_step": 10.0 * s, "eval/accuracy": _score(s) - 0.1})


def _hf_trainer(run):
    """The HF Trainer's step metric, train/epoch and eval/epoch (fractional) logged as metrics."""
    run.define_metric("trainer/global_step")
    run.define_metric("*", step_metric="trainer/global_step", step_sync=True)
    for s in range(1, 21):
        run.log({"train/entropy": _entropy(s), "train/reward": _score(s), "train/epoch": s / 20,
                 "trainer/global_step": s})
        if s % 5 == 0:
            run.log({"eval/accuracy": _score(s) - 0.1, "eval/epoch": s / 20, "trainer/global_step": s})


def _step_sync(run):
    """The eval rows hold no step metric: step_sync's last value, as W&B fills it in."""
    run.define_metric("train/global_step")
    run.define_metric("*", step_metric="train/global_step", step_sync=True)
    for s in range(1, 21):
        run.log({"train/global_step": s, "train/entropy": _entropy(s), "train/reward": _score(s)})
        if s % 5 == 0:
            run.log({"eval/accuracy": _score(s) - 0.1})


def _hidden(run):
    run.define_metric("step")
    run.define_metric("*", step_metric="step")
    run.define_metric("train/entropy", step_metric="step", hidden=True)
    run.define_metric("eval/accuracy", summary="max")  # no step metric of its own: the glob's
    for s in range(1, 21):
        run.log({"step": s, "train/entropy": _entropy(s), "train/reward": _score(s)})
        if s % 5 == 0:
            run.log({"step": s, "eval/accuracy": _score(s) - 0.1})


def _step_then_plain(run):
    """wandb.log(..., step=N) for training, a plain wandb.log for the evaluation: W&B puts it at step N."""
    for s in range(1, 21):
        run.log({"actor/entropy": _entropy(s), "critic/score/mean": _score(s)}, step=s)
        if s % 5 == 0:
            run.log({"val/acc": _score(s) - 0.1})


TRAINING = {s: _entropy(s) for s in range(1, 21)}
EVAL = {s: _score(s) - 0.1 for s in (5, 10, 15, 20)}


@pytest.mark.parametrize("write, steps_of, val", [
    (_two_axes, lambda s: s, "val/accuracy"),
    (_float_global_step, lambda s: 10 * s, "val/accuracy"),
    (_hf_trainer, lambda s: s, "val/accuracy"),
    (_step_sync, lambda s: s, "val/accuracy"),
    (_hidden, lambda s: s, "val/accuracy"),
    (_step_then_plain, lambda s: s, "val/acc"),
], ids=["two axes", "float global_step", "hf trainer", "step_sync", "hidden", "step= then plain"])
def test_declared_step_axes_as_the_w_and_b_chart_shows_them(tmp_path, write, steps_of, val):
    run = _init(tmp_path, "axes")
    write(run)
    finish(run)
    df = el.load(tmp_path / "wandb", warn=False)
    assert _series(df, "entropy") == pytest.approx({steps_of(s): v for s, v in TRAINING.items()})
    assert _series(df, "score") == pytest.approx({steps_of(s): _score(s) for s in TRAINING})
    assert _series(df, val) == pytest.approx({steps_of(s): v for s, v in EVAL.items()})
    [account] = el.row_accounts(df)
    assert account["rows_read"] == account["rows_kept"] and account["dropped"] == {}


def test_commit_false_rows_are_one_step_each_commit(tmp_path):
    run = _init(tmp_path, "commits")
    for s in range(20):
        run.log({"actor/entropy": _entropy(s + 1)}, commit=False)
        run.log({"critic/score/mean": _score(s + 1)}, commit=False)
        if s % 5 == 4:
            run.log({"val/acc": _score(s + 1) - 0.1}, commit=False)
        run.log({})
    finish(run)
    df = el.load(tmp_path / "wandb", warn=False)
    assert _series(df, "entropy") == pytest.approx({s - 1: v for s, v in TRAINING.items()})
    assert _series(df, "val/acc") == pytest.approx({s - 1: v for s, v in EVAL.items()})


@pytest.mark.parametrize("key, metric", [("eval/accuracy", "val/accuracy"), ("val/acc", "val/acc"),
                                         ("eval/gsm8k_acc", "val/gsm8k"), ("max", "val/accuracy")])
def test_a_validation_accuracy_in_percent_is_read_as_a_fraction_said(tmp_path, key, metric):
    run = _init(tmp_path, "percent")
    run.define_metric("step")
    run.define_metric("*", step_metric="step")
    if key == "max":
        key = "eval/accuracy"
        run.define_metric(key, step_metric="step", summary="max")
    for s in range(1, 21):
        run.log({"step": s, "train/entropy": _entropy(s), "train/reward": _score(s)})
        if s % 5 == 0:
            run.log({"step": s, key: round(100 * (_score(s) - 0.1), 4)})
    finish(run)
    df = el.load(tmp_path / "wandb", warn=False)
    assert _series(df, metric) == pytest.approx(EVAL, abs=1e-6)
    [account] = el.row_accounts(df)
    assert any(key in n and "percent" in n for n in account["changed"]), account["notes"]


def test_a_training_reward_in_percent_is_read_in_its_units_and_the_remedy_said(tmp_path):
    run = _init(tmp_path, "percent-reward")
    run.define_metric("step")
    run.define_metric("*", step_metric="step")
    for s in range(1, 21):
        run.log({"step": s, "train/entropy": _entropy(s), "train/reward": round(100 * _score(s), 4)})
    finish(run)
    with pytest.warns(Warning, match="--score-scale percent"):
        df = el.load(tmp_path / "wandb")
    assert _series(df, "score") == pytest.approx({s: 100 * _score(s) for s in TRAINING}, abs=1e-6)
    percent = el.load(tmp_path / "wandb", score_scale="percent", warn=False)
    assert _series(percent, "score") == pytest.approx({s: _score(s) for s in TRAINING}, abs=1e-6)


def test_keys_the_user_names_on_a_declared_axis_are_read_beside_an_undeclared_reward(tmp_path):
    """A loop declares its own metrics on its own step (``rl/*`` on ``rl/iter``), names no one entropylaw knows,
    and a reward server logs ``reward`` with no step (W&B's _step, two log calls a step). Named by the user
    (``entropy_key``, ``score_key``), the declared keys were dropped as 'on its own step axis' and the run refused
    ('not found; available keys: reward'); they are read on their declared step, the undeclared rows dropped."""
    run = _init(tmp_path, "named")
    run.define_metric("rl/iter")
    run.define_metric("rl/*", step_metric="rl/iter")
    for s in range(1, 21):
        run.log({"rl/H": _entropy(s), "rl/solved": _score(s), "rl/iter": s})
        run.log({"reward": _score(s) + 0.2})
    path = finish(run)
    df = el.load(path, entropy_key="rl/H", score_key="rl/solved", warn=False)
    assert _series(df, "entropy") == pytest.approx({s: _entropy(s) for s in range(1, 21)})
    assert _series(df, "score") == pytest.approx({s: _score(s) for s in range(1, 21)})
    [account] = el.row_accounts(df)
    assert sum(account["dropped"].values()) == 20  # the reward's rows, on no declared step


def test_undeclared_entropy_and_reward_each_in_a_log_call_of_their_own_are_said_to_be_on_log_calls(tmp_path):
    """A loop declares a chart's own step (``perf/*`` on ``custom_step``) and logs its entropy and its reward in two
    wandb.log calls a step, without step=: read on W&B's _step, each a log call apart, entropy and reward were never
    at one step (40 steps read as 80) and only 'read on W&B's _step, as W&B plots them' was said. Said among what
    the reading changed: the two are never at one _step, the steps are log calls, not training steps."""
    run = _init(tmp_path, "calls")
    run.define_metric("custom_step")
    run.define_metric("perf/*", step_metric="custom_step")
    for s in range(20):
        run.log({"entropy": _entropy(s)})
        run.log({"reward": _score(s), "perf/tps": 100.0, "custom_step": 8 * s})
    df = el.load(finish(run), warn=False)
    [account] = el.row_accounts(df)
    [said] = [n for n in account["changed"] if "log calls" in n]
    assert "'entropy'" in said and "'reward'" in said and "_step 0, 2, 4" in said and "_step 1, 3, 5" in said


def test_an_undeclared_validation_in_a_log_call_of_its_own_is_said_to_be_on_log_calls(tmp_path):
    """The same loop logging its entropy and reward in one call and its validation every 5 steps in a call of its own,
    without step=: the validation's _step is never a training row's (each of its calls one more _step, the training
    steps read shifted by as many); said, as for an entropy and a reward logged apart."""
    run = _init(tmp_path, "eval_calls")
    run.define_metric("custom_step")
    run.define_metric("perf/*", step_metric="custom_step")
    for s in range(20):
        run.log({"entropy": _entropy(s), "reward": _score(s), "perf/tps": 100.0, "custom_step": 8 * s})
        if s % 5 == 4:
            run.log({"eval/accuracy": _score(s) - 0.1})
    df = el.load(finish(run), warn=False)
    [account] = el.row_accounts(df)
    [said] = [n for n in account["changed"] if "log calls" in n]
    assert "'eval/accuracy' (at _step 5, 11, 17, ...)" in said and "'reward'" not in said, said


@pytest.mark.parametrize("late", [False, True])
def test_training_rows_logged_with_step_beside_an_eval_axis_at_that_step_are_read(tmp_path, late):
    """A loop declares ``eval/*`` on ``eval/step`` (at its first evaluation, or at the start) and logs ``train/*``
    with step=: every training row after the declaration was dropped as 'no declared step metric' (all 40 steps, or
    31 of them), though each eval row's eval/step is its _step: the run logs with step= the step it declares, and
    its undeclared rows are read on _step, said."""
    run = _init(tmp_path, "eval_axis")
    if not late:
        run.define_metric("eval/step")
        run.define_metric("eval/*", step_metric="eval/step")
    for s in range(1, 41):
        run.log({"train/entropy": _entropy(s), "train/reward": _score(s)}, step=s)
        if s % 10 == 0:
            if late and s == 10:
                run.define_metric("eval/step")
                run.define_metric("eval/*", step_metric="eval/step")
            run.log({"eval/accuracy": _score(s) - 0.1, "eval/step": s}, step=s)
    df = el.load(finish(run), warn=False)
    assert _series(df, "entropy") == pytest.approx({s: _entropy(s) for s in range(1, 41)})
    assert _series(df, "score") == pytest.approx({s: _score(s) for s in range(1, 41)})
    assert _series(df, "val/accuracy") == pytest.approx({s: _score(s) - 0.1 for s in range(10, 41, 10)})
    [account] = el.row_accounts(df)
    assert account["dropped"] == {}
    assert any("eval/step" in n and "_step" in n and "step=" in n for n in account["notes"]), account["notes"]
