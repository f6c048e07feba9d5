"""NeMo-RL's logs as its Logger writes them, with the real wandb and TensorBoard libraries.

NeMo-RL (nemo_rl/utils/logger.py, nemo_rl/algorithms/grpo.py) logs with ``step=`` (the GRPO
step; validation before training at step 0): ``train/<k>`` (``reward``, ``approx_entropy``,
``kl_penalty``, ``gen_kl_error`` ...), ``validation/accuracy`` (the mean reward over the
validation set), ``validation/avg_length``, ``timing/train/*``. Its only entropy is
``approx_entropy``, a sampled estimate of the token-mean entropy. The config is the run's
master config (``policy.model_name``, ``grpo.seed``, ``data.train.dataset_name``).
"""

from __future__ import annotations

import json
import math

import pytest

import entropylaw as el
from entropylaw.lab.loggers import wandb_finish
from entropylaw import table

N, VAL = 30, 10


def _train(step: int) -> dict:
    return {"loss": 0.01, "grad_norm": 0.2, "reward": 0.2 + 0.5 * (1 - math.exp(-step / 20)), "lr": 1e-6,
            "kl_penalty": 0.001 * step, "gen_kl_error": 0.001, "policy_kl_error": 0.001, "token_mult_prob_error": 1.01,
            "probs_ratio": 1.0, "approx_entropy": 0.9 * math.exp(-step / 25) + 0.1,
            "mean_gen_tokens_per_sample": 700.0 + step, "global_valid_toks": 4e5}


def _val(step: int) -> dict:
    return {"accuracy": 0.3 + step / 100, "avg_length": 900.0}


def _log_all(log):
    log(_val(0), 0, "validation")
    for step in range(1, N + 1):
        if step % VAL == 0:
            log(_val(step), step, "validation")
        log(_train(step), step, "train")
        log({"total_step_time": 80.0}, step, "timing/train")


def _check(df):
    [run] = table.run_ids(df)
    meta = table.runs(df).iloc[0]
    assert (meta.entropy_key, meta.score_key) == ("train/approx_entropy", "train/reward")
    assert json.loads(meta.val_keys) == {"val/accuracy": "validation/accuracy"}
    assert table.series(df, run, "val/accuracy").index.tolist() == [0, 10, 20, 30]
    assert table.series(df, run, "entropy").index.tolist() == list(range(1, N + 1))
    [account] = el.row_accounts(df)
    assert any("approx_entropy" in n and "estimate" in n for n in account["notes"])
    return meta


def test_nemo_rl_tensorboard_entropy_is_its_approx_entropy(tmp_path):
    """train/approx_entropy was not read: 'no entropy found'."""
    SummaryWriter = pytest.importorskip("torch.utils.tensorboard").SummaryWriter
    writer = SummaryWriter(log_dir=str(tmp_path / "tensorboard"))

    def log(metrics, step, prefix):
        for k, v in metrics.items():
            writer.add_scalar(f"{prefix}/{k}", v, step)

    _log_all(log)
    writer.close()
    _check(el.load([str(tmp_path)]))


def test_nemo_rl_wandb_run_and_its_config(tmp_path):
    wandb = pytest.importorskip("wandb")
    settings = wandb.Settings(x_disable_stats=True, x_disable_meta=True, x_disable_machine_info=True,
                              console="off", save_code=False, disable_git=True, silent=True)
    run = wandb.init(mode="offline", dir=tmp_path, project="nemo-rl", name="grpo-math-1b", settings=settings)
    run.config.update({"policy": {"model_name": "Qwen/Qwen2.5-1.5B"}, "grpo": {"seed": 42, "val_period": VAL},
                       "data": {"train": {"dataset_name": "OpenMathInstruct-2"}}})
    _log_all(lambda metrics, step, prefix: run.log({f"{prefix}/{k}": v for k, v in metrics.items()}, step=step))
    wandb_finish(run)
    meta = _check(el.load([str(tmp_path / "wandb")]))
    assert (meta.model, meta.seed, meta.dataset) == ("Qwen/Qwen2.5-1.5B", 42, "openmathinstruct-2")
