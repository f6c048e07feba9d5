"""AReaL's logs as its trackers write them, with the real wandb and TensorBoard libraries.

AReaL (inclusionAI/AReaL) commits one dict per training step in ``StatsLogger.commit``
(``areal/utils/stats_logger.py``): ``wandb.log(item, step=...)`` and, where a TensorBoard path is set,
tensorboardX's ``add_scalar(key, value, step)`` (the same event files torch's SummaryWriter writes), at
``step = max(global_step, last step + 1)``, global_step from 0. The dict is ``export_all`` of its stats
trackers (``areal/utils/stats_tracker.py``; ``areal/trainer/rl_trainer.py``: ``_export_and_commit_stats``):
a stat with a denominator is ``<key>/avg``, ``<key>/min``, ``<key>/max``; a scalar is its mean (its
``__count`` dropped). The actor's (``areal/trainer/ppo/actor.py``) are under ``ppo_actor/``:
``ppo_actor/update/entropy/avg`` (the token-mean entropy over the update's micro-batches),
``ppo_actor/task_reward/avg`` (the mean reward of the trajectories trained on); the workflows'
(``areal/workflow/rlvr.py``) ``rollout/reward``, and at the steps the evaluator runs (after the step's
update) ``eval-rollout/reward``, the mean reward over the whole validation set. The config (``asdict`` of
the experiment's) goes to W&B's config: ``actor.path`` the model, ``train_dataset.path`` the data.
TensorBoard gets no config; rank 0 saves it (``areal/api/cli_args.py``: ``load_expr_config`` calls
``save_config``, a ``yaml.dump`` of ``asdict``) to ``config.yaml`` in the run's log directory,
``<fileroot>/logs/<user>/<experiment_name>/<trial_name>`` (``StatsLogger.get_log_path``), where W&B's
files go too; the TensorBoard folder is wherever ``stats_logger.tensorboard.path`` says.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import entropylaw as el
from entropylaw.lab.loggers import wandb_finish
from entropylaw import table
from entropylaw.readers.keys import detect_keys

N, EVAL = 30, 5
EVALS = [s for s in range(N) if (s + 1) % EVAL == 0]


def _entropy(s: int) -> float:
    return 0.9 * math.exp(-s / 20) + 0.1


def _acc(s: int) -> float:
    return 0.7 - 0.5 * math.exp(-s / 8)


def _avg_min_max(key: str, avg: float, lo: float, hi: float) -> dict:
    return {f"{key}/avg": avg, f"{key}/min": lo, f"{key}/max": hi}


def _metrics(s: int) -> dict:
    m = {"ppo_actor/n_seqs": 256.0, "ppo_actor/n_tokens": 2.0e5, "ppo_actor/n_valid_tokens": 1.5e5,
         "ppo_actor/correct_n_seqs": 256 * _acc(s), "ppo_actor/incorrect_n_seqs": 256 * (1 - _acc(s)),
         "ppo_actor/eps_clip": 0.4, "ppo_actor/mask_no_eos_with_zero": 0.0, "ppo_actor/use_dual_clip": 0.0,
         "ppo_actor/update/grad_norm": 0.3, "ppo_actor/update/lr": 1.7e-5, "ppo_actor/update/n_tokens": 1.5e5,
         "ppo_actor/update/n_valid_tokens": 1.5e5, "ppo_actor/update/clipped_tokens": 100.0,
         "rollout/reward": _acc(s) - 0.01, "rollout/accepted": 1.0,
         "timeperf/rollout": 50.0, "timeperf/train_step": 30.0, "timeperf/eval": 0.0}
    m.update(_avg_min_max("ppo_actor/update/entropy", _entropy(s), 0.0, 5.0))
    m.update(_avg_min_max("ppo_actor/update/actor_loss", 0.01, -1.0, 1.0))
    m.update(_avg_min_max("ppo_actor/update/approx_kl", 0.001, -0.1, 0.1))
    m.update(_avg_min_max("ppo_actor/update/importance_weight", 1.0, 0.8, 1.2))
    m.update(_avg_min_max("ppo_actor/update/new_logp", -_entropy(s), -9.0, 0.0))
    m.update(_avg_min_max("ppo_actor/update/old_logp", -_entropy(s), -9.0, 0.0))
    m.update(_avg_min_max("ppo_actor/update/clip_ratio", 0.01, 0.0, 1.0))
    m.update(_avg_min_max("ppo_actor/task_reward", _acc(s), 0.0, 1.0))
    m.update(_avg_min_max("ppo_actor/final_reward", 0.1, -5.0, 5.0))
    m.update(_avg_min_max("ppo_actor/advantages", 0.0, -2.0, 2.0))
    m.update(_avg_min_max("ppo_actor/kl_rewards", 0.0, 0.0, 0.0))
    m.update(_avg_min_max("ppo_actor/seq_len", 900.0 + s, 100.0, 2048.0))
    m.update(_avg_min_max("ppo_actor/prompt_len", 100.0, 50.0, 300.0))
    m.update(_avg_min_max("ppo_actor/no_eos_ratios", 0.02, 0.0, 1.0))
    if s in EVALS:
        m["eval-rollout/reward"] = 0.8 * _acc(s + 1)
    return m


CONFIG = {"experiment_name": "gsm8k-grpo", "trial_name": "trial0", "seed": 1, "total_train_epochs": 10,
          "tokenizer_path": "Qwen/Qwen2.5-1.5B-Instruct",
          "actor": {"path": "Qwen/Qwen2.5-1.5B-Instruct", "experiment_name": "gsm8k-grpo", "eps_clip": 0.4,
                    "reward_scaling": 10.0, "reward_bias": -0.5, "optimizer": {"type": "adam", "lr": 1.7e-5}},
          "train_dataset": {"path": "openai/gsm8k", "type": "rl", "batch_size": 256},
          "valid_dataset": {"path": "openai/gsm8k", "type": "rl", "batch_size": 256},
          "evaluator": {"freq_epochs": None, "freq_steps": EVAL},
          "version_info": {"commit_id": "4aef98d8d", "branch": "main", "is_dirty": False}}


def _wandb(tmp_path) -> str:
    wandb = pytest.importorskip("wandb")
    settings = wandb.Settings(x_disable_stats=True, x_disable_meta=True, x_disable_machine_info=True,
                              console="off", save_code=False, disable_git=True, silent=True)
    run = wandb.init(project="gsm8k-grpo", name="trial0", group="gsm8k-grpo_trial0", dir=tmp_path,
                     mode="offline", id="gsm8k-grpo_trial0_train", config=CONFIG, settings=settings)
    last = -1
    for s in range(N):
        step = max(s, last + 1)
        run.log(_metrics(s), step=step)
        last = step
    wandb_finish(run)  # the service writes the file's last records after finish() returns
    return str(tmp_path / "wandb")


def _tensorboard(tmp_path) -> str:
    SummaryWriter = pytest.importorskip("torch.utils.tensorboard").SummaryWriter
    writer = SummaryWriter(log_dir=str(tmp_path / "areal_tb"))
    for s in range(N):
        for k, v in _metrics(s).items():
            writer.add_scalar(k, v, s)
    writer.close()
    return str(tmp_path / "areal_tb")


@pytest.mark.parametrize("write", [_wandb, _tensorboard])
def test_areal_entropy_is_update_entropy_avg(tmp_path, write):
    """ppo_actor/update/entropy/avg was not read: 'no entropy found'."""
    df = el.load([write(tmp_path)])
    [run] = table.run_ids(df)
    assert table.runs(df).iloc[0].entropy_key == "ppo_actor/update/entropy/avg"
    entropy = table.series(df, run, "entropy")
    assert entropy.index.tolist() == list(range(N))
    assert np.allclose(entropy.to_numpy(), [_entropy(s) for s in range(N)])


def test_areal_entropy_takes_no_other_trainers_place():
    """Other trainers' entropies stay theirs beside AReaL's; its /min, /max and other scopes are no entropy."""
    for key in ("actor/entropy", "entropy", "train/entropy_loss", "train/approx_entropy", "critic/entropy/mean"):
        assert detect_keys([key, "ppo_actor/update/entropy/avg", "critic/score/mean"]).entropy == key
    assert detect_keys(["ppo_actor/update/entropy/max", "ppo_actor/update/entropy/min",
                        "ppo_critic/update/entropy/avg"]).entropy == ""


@pytest.mark.parametrize("write", [_wandb, _tensorboard])
def test_areal_score_is_task_reward_avg(tmp_path, write):
    """The score was rollout/reward, taken by its name: the reward of every rollout gathered, not of the
    trajectories the step trained on (whose entropy is the step's)."""
    df = el.load([write(tmp_path)])
    [run] = table.run_ids(df)
    assert table.runs(df).iloc[0].score_key == "ppo_actor/task_reward/avg"
    assert np.allclose(table.series(df, run, "score").to_numpy(), [_acc(s) for s in range(N)])


def test_task_reward_takes_no_other_trainers_place():
    """veRL's, TRL's, OpenRLHF's, slime's scores stay theirs beside AReaL's; AReaL's other rewards are no score."""
    for key in ("critic/score/mean", "reward", "train/reward", "rollout/raw_reward"):
        assert detect_keys([key, "ppo_actor/task_reward/avg"]).score == key
    km = detect_keys(["ppo_actor/final_reward/avg", "ppo_actor/task_reward/max", "ppo_actor/kl_rewards/avg"])
    assert km.score != "ppo_actor/task_reward/max"


@pytest.mark.parametrize("write", [_wandb, _tensorboard])
def test_areal_eval_rollout_reward_is_validation(tmp_path, write):
    """eval-rollout/reward was no validation: the fit fell back on the training score."""
    df = el.load([write(tmp_path)])
    [run] = table.run_ids(df)
    assert json.loads(table.runs(df).iloc[0].val_keys) == {"val/mean": "eval-rollout/reward"}
    val = table.series(df, run, "val/mean")
    assert val.index.tolist() == EVALS
    assert np.allclose(val.to_numpy(), [0.8 * _acc(s + 1) for s in EVALS])


def test_eval_rollout_pattern_takes_no_other_trainers_keys():
    """Other trainers' validations stay theirs; AReaL's other eval-rollout statistics are none."""
    verl = ["actor/entropy", "critic/score/mean", "val-core/openai/gsm8k/acc/mean@1"]
    assert detect_keys([*verl, "eval-rollout/reward"]).val["val/openai/gsm8k"] == "val-core/openai/gsm8k/acc/mean@1"
    assert detect_keys(["val_correct/all/mean", "eval-rollout/reward"]).val == {"val/mean": "val_correct/all/mean"}
    assert detect_keys(["eval/reward", "eval-rollout/reward"]).val == {"val/mean": "eval/reward"}
    assert detect_keys(["eval-rollout/num_turns", "eval-rollout/accepted", "rollout/reward"]).val == {}


def test_areal_config_names_the_model_and_data(tmp_path):
    """AReaL's config (asdict of its experiment's, in W&B's config) names its model at actor.path and its
    data at train_dataset.path: its runs had neither."""
    df = el.load([_wandb(tmp_path)])
    meta = table.runs(df).iloc[0]
    assert meta.model == "Qwen/Qwen2.5-1.5B-Instruct"
    assert meta.dataset == "gsm8k"


def test_areal_config_keys_take_no_other_trainers_place():
    """veRL's, OpenRLHF's, slime's, ROLL's model and data stay theirs beside an actor.path/train_dataset.path."""
    from entropylaw.readers.config_meta import meta_from_config
    areal = {"actor": {"path": "/ckpt/areal"}, "train_dataset": {"path": "areal/data"}}
    verl = {"actor_rollout_ref": {"model": {"path": "/ckpt/Qwen2.5-7B"}}, "data": {"train_files": "/d/gsm8k/train.parquet"}}
    meta = meta_from_config({**areal, **verl})
    assert meta["model"] == "Qwen2.5-7B" and meta["dataset"] == "gsm8k"
    assert meta_from_config({**areal, "pretrain": "Qwen/Qwen2.5-7B", "prompt_data": "math"})["model"] == "Qwen/Qwen2.5-7B"
    assert "model" not in meta_from_config({"actor": {"lr": 1e-6}, "train_dataset": {"type": "rl"}})


def _log_dir(tmp_path, trial: str = "trial0", model: str = "Qwen/Qwen2.5-1.5B-Instruct"):
    """AReaL's log directory of one trial: its config.yaml (rank 0's save_config) and, with
    stats_logger.tensorboard.path set under it, the TensorBoard folder beside it."""
    import yaml

    SummaryWriter = pytest.importorskip("torch.utils.tensorboard").SummaryWriter
    fileroot = tmp_path / "experiments"
    log_dir = fileroot / "logs" / "root" / "gsm8k-grpo" / trial
    log_dir.mkdir(parents=True)
    config = json.loads(json.dumps(CONFIG))  # asdict: every section written out, references resolved
    config.update(trial_name=trial, tokenizer_path=model,
                  cluster={"n_nodes": 1, "n_gpus_per_node": 8, "fileroot": str(fileroot)},
                  ref={"path": model, "init_from_scratch": False, "optimizer": None},
                  sglang={"model_path": model, "random_seed": 1, "context_length": 32768},
                  vllm={"model": model, "seed": 1},
                  stats_logger={"experiment_name": "gsm8k-grpo", "trial_name": trial, "fileroot": str(fileroot),
                                "wandb": {"mode": "disabled", "project": None},
                                "tensorboard": {"path": str(log_dir / "tensorboard")}})
    config["actor"]["path"] = model
    with open(log_dir / "config.yaml", "w") as f:
        yaml.dump(config, f, default_flow_style=False, sort_keys=False)
    writer = SummaryWriter(log_dir=str(log_dir / "tensorboard"))
    for s in range(N):
        for k, v in _metrics(s).items():
            writer.add_scalar(k, v, s)
    writer.close()
    return log_dir


@pytest.mark.parametrize("given", ["log dir", "tensorboard folder"])
def test_areal_tensorboard_run_takes_its_config_yaml(tmp_path, given):
    """A TensorBoard run under AReaL's log directory had no model and no data: the config.yaml beside its
    events folder (or above the tensorboard/ folder given) was not read."""
    log_dir = _log_dir(tmp_path)
    source = log_dir if given == "log dir" else log_dir / "tensorboard"
    df = el.load([str(source)])
    [run] = table.run_ids(df)
    meta = table.runs(df).iloc[0]
    assert (run, meta.model, meta.dataset, meta.seed) == ("trial0", "Qwen/Qwen2.5-1.5B-Instruct", "gsm8k", 1)
    assert meta.entropy_key == "ppo_actor/update/entropy/avg"
    [account] = el.row_accounts(df)
    assert any("the run's config" in n and "config.yaml" in n for n in account["notes"]), account["notes"]


def test_areal_trials_each_take_their_own_config(tmp_path):
    """An experiment's folder of trials: each trial's TensorBoard run described by its own config.yaml."""
    _log_dir(tmp_path, "trial0", "Qwen/Qwen2.5-1.5B-Instruct")
    experiment = _log_dir(tmp_path, "trial1", "Qwen/Qwen3-4B").parent
    df = el.load([str(experiment)])
    assert table.runs(df).set_index("run_id")["model"].to_dict() == {"trial0": "Qwen/Qwen2.5-1.5B-Instruct",
                                                                     "trial1": "Qwen/Qwen3-4B"}


def test_a_config_yaml_that_does_not_parse_is_said_and_the_run_read(tmp_path):
    """A damaged config.yaml beside the events: one note why, the run read without it."""
    log_dir = _log_dir(tmp_path)
    (log_dir / "config.yaml").write_text("actor: {path: [unclosed\n")
    df = el.load([str(log_dir)], warn=False)
    assert table.runs(df).iloc[0].model == ""
    [account] = el.row_accounts(df)
    assert any("config.yaml: the run's config does not read" in n for n in account["notes"]), account["notes"]
