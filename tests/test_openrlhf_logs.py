"""OpenRLHF's logs as its loggers write them, with the real wandb and TensorBoard libraries.

OpenRLHF (openrlhf/utils/logging_utils.py, trainer/ppo_trainer.py) logs without ``step=``:
train rows are ``train/<k>`` with ``train/global_step``, eval rows ``eval/eval_<source>_pass1``
(``_pass<n>``, ``_response_length_mean``...) with ``eval/global_step``; to W&B it declares
``train/*`` on ``train/global_step`` and ``eval/*`` on ``eval/epoch``, which it never logs
(W&B's step_sync writes 0 in every eval row). The table of samples is a log call of its own.
``train/entropy_loss`` is the token-mean policy entropy, logged only with ``--actor.entropy_coef``.
"""

from __future__ import annotations

import json
import math

import pytest

import entropylaw as el
from entropylaw.lab.loggers import wandb_finish
from entropylaw import table
from entropylaw.fit.run_summary import not_found

SOURCES = {"aime24": 0.1, "math500": 0.5}
EVAL_EVERY, N = 5, 30


def _train(step: int, entropy: bool) -> dict:
    acc = 0.2 + 0.5 * (1 - math.exp(-step / 20))
    row = {"policy_loss": 0.01, "actor_lr": 1e-6, "actor_grad_norm": 0.3, "ppo_clip_ratio": 0.002, "ppo_kl": 1e-4,
           "kl": 0.001 * step, "reward": acc, "return": acc, "response_length": 800.0 + step,
           "rollout/reward_mean": acc, "rollout/response_length_mean": 800.0 + step, "timing/ppo_train": 20.0}
    if entropy:
        row["entropy_loss"] = 0.9 * math.exp(-step / 25) + 0.1
    return row


def _eval(step: int) -> dict:
    logs = {}
    for source, base in SOURCES.items():
        logs[f"eval_{source}_pass8"] = base + 0.3
        logs[f"eval_{source}_pass1"] = base + step / 100
        logs[f"eval_{source}_response_length_mean"] = 900.0
    logs["eval_response_length_mean"] = 900.0
    return logs


def _wandb_run(root, entropy=True):
    wandb = pytest.importorskip("wandb")
    settings = wandb.Settings(x_disable_stats=True, x_disable_meta=True, x_disable_machine_info=True,
                              console="off", save_code=False, disable_git=True, silent=True)
    run = wandb.init(mode="offline", dir=root, project="openrlhf", name="orl-grpo", settings=settings)
    run.define_metric("train/global_step")
    run.define_metric("train/*", step_metric="train/global_step", step_sync=True)
    run.define_metric("eval/epoch")
    run.define_metric("eval/*", step_metric="eval/epoch", step_sync=True)
    for step in range(1, N + 1):
        run.log({"train/generated_samples": wandb.Table(columns=["global_step", "text", "reward"],
                                                        data=[[step, "sample", 1.0]])})
        run.log({f"train/{k}": v for k, v in {**_train(step, entropy), "global_step": step}.items()})
        if step % EVAL_EVERY == 0:
            run.log({f"eval/{k}": v for k, v in {**_eval(step), "global_step": step}.items()})
    wandb_finish(run)
    return root / "wandb"


def _tensorboard_run(root):
    SummaryWriter = pytest.importorskip("torch.utils.tensorboard").SummaryWriter
    writer = SummaryWriter(log_dir=str(root / "orl-grpo"))
    for step in range(1, N + 1):
        writer.add_text("train/generated_samples", "Sample:\\nx\\n\\nReward: 1.0000", step)
        for k, v in _train(step, True).items():
            writer.add_scalar(f"train/{k}", v, step)
        if step % EVAL_EVERY == 0:
            for k, v in _eval(step).items():
                writer.add_scalar(f"eval/{k}", v, step)
    writer.close()
    return root


def _check(df):
    [run] = table.run_ids(df)
    meta = table.runs(df).iloc[0]
    assert (meta.entropy_key, meta.score_key) == ("train/entropy_loss", "train/reward")
    assert json.loads(meta.val_keys) == {f"val/{s}": f"eval/eval_{s}_pass1" for s in SOURCES}
    evals = list(range(EVAL_EVERY, N + 1, EVAL_EVERY))
    for source, base in SOURCES.items():  # each evaluation at the training step it followed
        got = table.series(df, run, f"val/{source}")
        assert got.index.tolist() == evals
        assert got.to_numpy() == pytest.approx([base + s / 100 for s in evals])
    assert table.series(df, run, "entropy").index.tolist() == list(range(1, N + 1))


def test_openrlhf_wandb_evals_are_on_their_training_steps(tmp_path):
    """eval/* on eval/epoch (0 in every row): every evaluation was read at step 0 and averaged into one."""
    df = el.load([str(_wandb_run(tmp_path))])
    _check(df)
    [account] = el.row_accounts(df)
    assert any("eval/epoch" in n and "eval/global_step" in n for n in account["notes"])


def test_a_wandb_table_written_field_by_field_is_no_metric(tmp_path):
    """The samples table's nrows/ncols/size were read as metrics (on the step before: a step 0 of its own)."""
    df = el.load([str(_wandb_run(tmp_path))])
    assert not [m for m in df["metric"].astype(str).unique() if "generated_samples" in m]
    assert df["step"].min() == 1


def test_openrlhf_tensorboard_benchmarks_are_named_by_their_source(tmp_path):
    """eval/eval_<source>_pass1 was read as val/eval_<source>."""
    _check(el.load([str(_tensorboard_run(tmp_path))]))


def test_openrlhf_without_entropy_coef_logs_no_entropy(tmp_path):
    df = el.load([str(_wandb_run(tmp_path, entropy=False))])
    [line] = not_found(df)
    assert "no entropy found" in line and "entropy_key" in line
    assert table.runs(df).iloc[0].score_key == "train/reward"


def test_openrlhf_without_a_datasource_names_no_task():
    """With no datasource column OpenRLHF logs eval/eval_default_pass1: 'default' was read as a task,
    so the forecast neither used a task's rates nor said to name the benchmark."""
    from entropylaw.fit.forecast.tasks import generic_note, is_generic

    assert is_generic("default") and "give `dataset` NAME" in generic_note("default")


def test_a_live_openrlhf_run_evaluated_once_has_its_evaluation_on_its_training_step(tmp_path):
    """A run being written, its file ending after the first evaluation (as `watch` reads it while it
    trains): that evaluation was read at step 0 (eval/epoch, 0 in the row) until a second one came, so
    watch showed the run's one validation point at step 0, before any training."""
    from entropylaw.readers.leveldb_log import Damage, iter_records

    [file] = (_wandb_run(tmp_path)).glob("offline-run-*/*.wandb")
    data = file.read_bytes()
    with open(file, "rb") as stream:
        offsets = [offset for offset, _ in iter_records(stream, Damage())]
    seen = []
    for offset in offsets:  # the file as it stood when each record was about to be written
        file.write_bytes(data[:offset])
        try:
            df = el.load([str(file)], warn=False)
        except Exception:  # nothing to read yet
            continue
        [run] = table.run_ids(df)
        if "val/math500" in set(df["metric"].astype(str)):
            seen.append(table.series(df, run, "val/math500").index.tolist())
    assert [5] in seen  # the stage with one evaluation was read
    for steps in seen:
        assert steps == list(range(EVAL_EVERY, EVAL_EVERY * len(steps) + 1, EVAL_EVERY)), steps
