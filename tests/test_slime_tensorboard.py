"""slime's TensorBoard logs as its processes write them, with the real torch SummaryWriter.

slime (THUDM/slime) sends every metric dict through one function (``slime/observability/logging_utils.py``,
``log(args, metrics, step_key)``): to W&B the whole dict, to TensorBoard each other key as a scalar at the
step key's value (``slime/observability/tensorboard_utils.py``: one ``SummaryWriter`` per process, in
``$TENSORBOARD_DIR`` or ``tensorboard_log/<tb_project_name>/<tb_experiment_name>``). So TensorBoard holds
no step keys of its own: the training process's ``train/*`` are written at the optimizer step
(``rollout_id * steps_per_rollout + step_id``), its training-side ``rollout/*`` (``raw_reward``) before
them and its ``perf/*`` after them at the rollout step; the rollout manager's ``rollout/*`` at the
rollout step and its ``eval/<dataset>`` at the eval step (the rollout step, or ``rollout_id *
steps_per_rollout`` with ``--wandb-always-use-train-step``). Each process's writer is a file of its own
in the one folder.
"""

from __future__ import annotations

import datetime
import json
import math

import numpy as np
import pytest

import entropylaw as el
from entropylaw import table
from entropylaw.readers.tensorboard import read_tensorboard

SummaryWriter = pytest.importorskip("torch.utils.tensorboard").SummaryWriter

R, EVAL = 12, 4


def _entropy(s: float) -> float:
    return 0.9 * math.exp(-s / 20) + 0.1


def _acc(r: float) -> float:
    return 0.7 - 0.5 * math.exp(-r / 6)


def _write(rows: dict, step: int, writer) -> None:
    for key, value in rows.items():
        writer.add_scalar(key, value, step)


def _emit(tmp_path, k: int, always: bool = False) -> str:
    """One slime run: the training process's writer and the rollout manager's, in one folder."""
    folder = tmp_path / "tensorboard_log" / "slime" / "qwen3-4b"
    trainer = SummaryWriter(str(folder))
    manager = SummaryWriter(str(folder))
    step = (lambda r: r * k) if always else (lambda r: r)

    def evaluate(r):
        _write({"eval/aime": _acc(r) / 3, "eval/aime-truncated_ratio": 0.1,
                        "eval/math500": _acc(r), "eval/math500-truncated_ratio": 0.02,
                        "eval/math500/response_len/mean": 1500.0}, step(r), manager)

    for r in range(R):
        if r == 0:
            evaluate(0)
        _write({"rollout/response_len/mean": 1000.0 + r, "rollout/truncated_ratio": 0.02,
                        "perf/rollout_time": 60.0}, step(r), manager)
        _write({"rollout/log_probs": -0.5, "rollout/rewards": 1e-8, "rollout/raw_reward": _acc(r) - 0.1,
                        "rollout/response_lengths": 1000.0 + r, "rollout/advantages": 0.0}, step(r), trainer)
        for j in range(k):
            _write({"train/loss": 0.01, "train/pg_loss": 0.01, "train/entropy_loss": _entropy(r * k + j),
                            "train/pg_clipfrac": 0.001, "train/grad_norm": 0.3, "train/lr-pg_0": 1e-6,
                            "train/global_batch_size": 256 // k}, r * k + j, trainer)
        _write({"perf/actor_train_time": 30.0, "perf/train_time": 40.0}, step(r), trainer)
        if (r + 1) % EVAL == 0 or r == R - 1:
            evaluate(r)
    trainer.close()
    manager.close()
    return str(folder)


@pytest.mark.parametrize("always", [False, True])
def test_slime_tensorboard_optimizer_steps_are_read_per_rollout(tmp_path, always):
    """With 2 optimizer steps per rollout, the entropy at optimizer step 6 (rollout 3's second step) was
    paired with rollout 6's reward: TensorBoard holds no train/step or rollout/step to move it by."""
    k = 2
    df = el.load([_emit(tmp_path, k, always=always)])
    [run] = table.run_ids(df)
    meta = table.runs(df).iloc[0]
    assert (meta.entropy_key, meta.score_key) == ("train/entropy_loss", "rollout/raw_reward")
    steps = [r * k if always else r for r in range(R)]
    entropy = table.series(df, run, "entropy")
    assert entropy.index.tolist() == steps
    assert np.allclose(entropy.to_numpy(), [np.mean([_entropy(r * k + j) for j in range(k)]) for r in range(R)],
                       atol=1e-6)
    score = table.series(df, run, "score")
    assert score.index.tolist() == steps
    assert np.allclose(score.to_numpy(), [_acc(r) - 0.1 for r in range(R)], atol=1e-6)
    evals = sorted({0, *[r for r in range(R) if (r + 1) % EVAL == 0], R - 1})
    assert json.loads(meta.val_keys) == {"val/aime": "eval/aime", "val/math500": "eval/math500"}
    assert table.series(df, run, "val/math500").index.tolist() == [step for r, step in enumerate(steps) if r in evals]
    [account] = el.row_accounts(df)
    assert any("2 optimizer steps per rollout" in n for n in account["notes"]), account["notes"]


def test_slime_tensorboard_one_optimizer_step_per_rollout_reads_as_written(tmp_path):
    """One optimizer step per rollout: the axes agree, every row stays where it was written."""
    df = el.load([_emit(tmp_path, 1)])
    [run] = table.run_ids(df)
    assert table.series(df, run, "entropy").index.tolist() == list(range(R))
    assert np.allclose(table.series(df, run, "entropy").to_numpy(), [_entropy(r) for r in range(R)], atol=1e-6)
    assert table.series(df, run, "score").index.tolist() == list(range(R))


def test_other_trainers_train_keys_stay_on_their_steps(tmp_path):
    """A writer whose train/* follow rollout/* rows of an earlier step but do not step k at a time per
    rollout (another trainer's own numbering) is left as written."""
    folder = tmp_path / "tb"
    writer = SummaryWriter(str(folder))
    for s in range(10):
        writer.add_scalar("rollout/raw_reward", _acc(s), s)
        writer.add_scalar("train/entropy_loss", _entropy(s), s + 1)  # logged after, on the next step
    writer.close()
    df = el.load([str(folder)])
    [run] = table.run_ids(df)
    assert table.series(df, run, "entropy").index.tolist() == list(range(1, 11))


# slime's default naming (``--tb-experiment-name`` unset): each process's writer is made at its first metric,
# in tensorboard_log/<tb_project_name>/<that moment, %Y%m%d_%H%M%S>: the rollout manager's folder (its first
# rollout, or the evaluation before training) and the training process's (after its first log-prob pass)
# are two sibling folders.
ROLLOUT_S = 300.0


def _stamp(t: float) -> str:
    return datetime.datetime.fromtimestamp(t).strftime("%Y%m%d_%H%M%S")


def _emit_split(project, start: float, k: int = 2, offset: float = 0.0) -> int:
    """One slime run as its two processes write it with no --tb-experiment-name; the scalars written."""
    manager = SummaryWriter(str(project / _stamp(start)))
    trainer = SummaryWriter(str(project / _stamp(start + 190)))
    written = 0

    def write(rows, step, writer, t):
        nonlocal written
        for key, value in rows.items():
            writer.add_scalar(key, value + offset, step, walltime=t)
        written += len(rows)

    def evaluate(r, t):
        write({"eval/aime": _acc(r) / 3, "eval/math500": _acc(r), "eval/math500-truncated_ratio": 0.02}, r,
              manager, t)

    for r in range(R):
        t = start + r * ROLLOUT_S
        if r == 0:
            evaluate(0, t)
        write({"rollout/response_len/mean": 1000.0 + r, "rollout/truncated_ratio": 0.02,
               "perf/rollout_time": 60.0}, r, manager, t + 60)
        write({"rollout/log_probs": -0.5, "rollout/raw_reward": _acc(r) - 0.1,
               "rollout/response_lengths": 1000.0 + r}, r, trainer, t + 190)
        for j in range(k):
            write({"train/pg_loss": 0.01, "train/entropy_loss": _entropy(r * k + j), "train/grad_norm": 0.3},
                  r * k + j, trainer, t + 200 + j)
        write({"perf/actor_train_time": 30.0}, r, trainer, t + 250)
        if (r + 1) % EVAL == 0:
            evaluate(r, t + 280)
    trainer.close()
    manager.close()
    return written


def _check_one_run(df, run, k=2, offset=0.0):
    assert np.allclose(table.series(df, run, "entropy").to_numpy(),
                       [np.mean([_entropy(r * k + j) for j in range(k)]) + offset for r in range(R)], atol=1e-6)
    assert table.series(df, run, "score").index.tolist() == list(range(R))
    assert table.series(df, run, "val/math500").index.tolist() == [0, *[r for r in range(R) if (r + 1) % EVAL == 0]]


def test_slime_processes_in_folders_of_their_own_are_one_run(tmp_path):
    """slime without --tb-experiment-name: the trainer's folder (the entropy) and the rollout manager's (the
    validation), named by each one's first log, were read as two runs, neither with both."""
    project = tmp_path / "tensorboard_log" / "qwen3-4b-grpo"
    start = datetime.datetime(2026, 3, 1, 10, 15, 2).timestamp()
    written = _emit_split(project, start)
    df = el.load([str(tmp_path / "tensorboard_log")])
    [run] = table.run_ids(df)
    assert run == f"qwen3-4b-grpo/{_stamp(start)}"
    _check_one_run(df, run)
    assert json.loads(table.runs(df).iloc[0].val_keys)["val/math500"] == "eval/math500"
    [account] = el.row_accounts(df)
    assert account["rows_read"] == written
    note = next(n for n in account["notes"] if "read as one run" in n)
    assert _stamp(start) in note and _stamp(start + 190) in note and "--tb-experiment-name" in note


def test_a_sweeps_runs_one_after_another_pair_by_time(tmp_path):
    """Two runs of one project, the second started after the first ended: each trainer joins the manager
    written beside it at the time, never the other run's."""
    project = tmp_path / "tensorboard_log" / "sweep"
    first = datetime.datetime(2026, 3, 1, 10, 0, 0).timestamp()
    second = first + R * ROLLOUT_S + 600
    _emit_split(project, first)
    _emit_split(project, second, offset=0.05)
    df = el.load([str(project)])
    assert sorted(table.run_ids(df)) == [_stamp(first), _stamp(second)]
    _check_one_run(df, _stamp(first))
    _check_one_run(df, _stamp(second), offset=0.05)


def test_runs_written_at_the_same_time_are_not_guessed_apart(tmp_path):
    """Two runs of one project at the same time: each trainer has two candidate managers; none is joined
    and one line says which folders and what to do."""
    project = tmp_path / "tensorboard_log" / "sweep"
    first = datetime.datetime(2026, 3, 1, 10, 0, 0).timestamp()
    _emit_split(project, first)
    _emit_split(project, first + 30, offset=0.05)
    with pytest.warns(el.EntropyLawWarning, match="--tb-experiment-name") as caught:
        raws = read_tensorboard(project)
    assert len(raws) == 4
    [line] = [str(w.message) for w in caught if "--tb-experiment-name" in str(w.message)]
    assert "\n" not in line and all(_stamp(t) in line for t in (first, first + 190, first + 30, first + 220))
