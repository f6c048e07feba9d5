"""An evaluation's own W&B step metric that counts evaluations (``eval/step`` 1, 2, 3 while training is at 5, 10,
15), written by the real SDK offline: read at the training step each evaluation was logged at. Axes that are the
training step under another name stay as they are."""

from __future__ import annotations

import math

import pytest

import entropylaw as el
from _wandb_quiet import quiet_settings
from entropylaw.lab.loggers import wandb_finish as finish

wandb = pytest.importorskip("wandb")

STEPS = 50


def _entropy(s: float) -> float:
    return 1.2 * math.exp(-s / 20) + 0.1


def _acc(s: float) -> float:
    return 0.65 - 0.5 * math.exp(-s / 15)


def _val(df) -> dict[int, float]:
    rows = df[df["metric"].astype(str).str.startswith("val/")]
    return dict(zip(rows["step"].astype(int), rows["value"]))


def _changed(df) -> str:
    return " ".join(n for a in el.row_accounts(df) for n in a["changed"])


def _loop(root, eval_step, every=5, train_axis="train/step", first=False, monitor=False):
    """A loop that declares train/* on ``train_axis`` and eval/* on eval/step, logging eval/step as ``eval_step(k,
    step)`` at its k-th evaluation (every ``every`` steps; ``first``: evaluation 0 too, before training;
    ``monitor``: a GPU monitor's rows on a clock of its own, ray/ray_step, 3 a step, as NeMo-RL's)."""
    run = wandb.init(mode="offline", dir=root, project="p", name="loop", settings=quiet_settings())
    run.define_metric(train_axis)
    run.define_metric("train/*", step_metric=train_axis)
    run.define_metric("eval/step")
    run.define_metric("eval/*", step_metric="eval/step")
    if monitor:
        run.define_metric("ray/ray_step")
        run.define_metric("ray/*", step_metric="ray/ray_step")
    k = 0
    if first:
        run.log({"eval/step": eval_step(0, 0), "eval/accuracy": _acc(0)})
    for step in range(1, STEPS + 1):
        for tick in range(3 if monitor else 0):
            run.log({"ray/ray_step": 3 * (step - 1) + tick + 1, "ray/gpu_util": 0.9})
        run.log({train_axis: step, "train/entropy": _entropy(step), "train/reward": _acc(step) + 0.05})
        if step % every == 0:
            k += 1
            run.log({"eval/step": eval_step(k, step), "eval/accuracy": _acc(step)})
    return finish(run)


def test_an_evaluation_counter_is_read_at_the_training_step_it_was_logged_at(tmp_path):
    """eval/step 1..10 while train/step went 5..50: evaluation 2 was read at step 2 and paired with step 2's
    entropy, nothing said. Each evaluation is read at the training step it was logged at, said."""
    df = el.load(_loop(tmp_path, lambda k, step: k), warn=False)
    assert _val(df) == pytest.approx({s: _acc(s) for s in range(5, STEPS + 1, 5)}, rel=1e-6)
    assert "eval/step counts evaluations (1 to 10, one by one) while train/step moved 5 to 50" in _changed(df)
    pairs = el.fit(df, warn=False).pairs_
    assert pairs["step"].tolist() == list(range(5, STEPS + 1, 5))


def test_an_evaluation_axis_that_is_the_training_step_stays(tmp_path):
    """The CS336 course's eval_step is the training step (evaluations at 5, 10, ...): read as logged."""
    df = el.load(_loop(tmp_path, lambda k, step: step), warn=False)
    assert sorted(_val(df)) == list(range(5, STEPS + 1, 5))
    assert "counts evaluations" not in _changed(df)


def test_an_evaluation_at_every_step_numbered_by_one_stays(tmp_path):
    """slime's eval/step is the rollout id; evaluated at every rollout it counts by one as the training step does:
    nothing to move (the training step moved by one between evaluations too)."""
    df = el.load(_loop(tmp_path, lambda k, step: step, every=1, train_axis="rollout/step"), warn=False)
    assert sorted(_val(df)) == list(range(1, STEPS + 1))
    assert "counts evaluations" not in _changed(df)


def test_two_evaluations_are_too_few_to_tell_a_counter(tmp_path):
    """Two evaluations numbered 1 and 2 could be steps 1 and 2: left as logged (3 are needed)."""
    df = el.load(_loop(tmp_path, lambda k, step: k, every=20), warn=False)
    assert sorted(_val(df)) == [1, 2]


def test_an_evaluation_counter_from_an_evaluation_before_training_is_read_at_the_training_step(tmp_path):
    """A loop evaluating the model before its first step (eval/step 0, no train/step logged yet), then every 5
    steps (eval/step 1..10 while train/step went 5..50): the row with no training step left every evaluation on
    eval/step, evaluation 2 paired with step 2's entropy, nothing said. The first is read at step 0, before
    training; the others at the training step each was logged at, said."""
    df = el.load(_loop(tmp_path, lambda k, step: k, first=True), warn=False)
    assert _val(df) == pytest.approx({s: _acc(s) for s in range(0, STEPS + 1, 5)}, rel=1e-6)
    assert "eval/step counts evaluations (0 to 10, one by one) while train/step moved 0 to 50" in _changed(df)


def test_an_evaluation_axis_is_read_beside_a_monitors_clock_on_the_training_step(tmp_path):
    """Beside a GPU monitor's ray/ray_step (3 ticks a step): an eval/step that is the training step, evaluated at
    every step, was moved onto ray/ray_step (evaluation 40 read at step 120, past the run's end), and one that
    counts evaluations every 5 steps onto it too (step 15 for step 5): the first step metric by name that moved
    more than the count. An axis moving with the training step stays; a count goes to the step metric that moved
    least between evaluations, the training step."""
    df = el.load(_loop(tmp_path / "every", lambda k, step: step, every=1, monitor=True), warn=False)
    assert sorted(_val(df)) == list(range(1, STEPS + 1)) and "counts evaluations" not in _changed(df)
    df = el.load(_loop(tmp_path / "count", lambda k, step: k, monitor=True), warn=False)
    assert _val(df) == pytest.approx({s: _acc(s) for s in range(5, STEPS + 1, 5)}, rel=1e-6)
    assert "eval/step counts evaluations (1 to 10, one by one) while train/step moved 5 to 50" in _changed(df)
