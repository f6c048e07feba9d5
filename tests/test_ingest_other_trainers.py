"""Logs of RL trainers other than veRL and TRL, written as each trainer writes them, with the real libraries
(W&B offline runs, torch's SummaryWriter): the entropy, the score and the validation found, on the right steps.

- OpenRLHF: W&B ``train/*`` on ``train/global_step`` and ``eval/*`` on ``eval/epoch`` (never logged; each eval row
  holds ``eval/global_step``), ``train/entropy_loss`` (the entropy), ``train/reward``,
  ``eval/eval_<source>_pass1``; TensorBoard the same keys at the global step.
- slime: W&B ``train/*`` on ``train/step`` (optimizer steps), ``rollout/*`` on ``rollout/step``, ``eval/*`` on
  ``eval/step``: ``train/entropy_loss`` (the entropy), ``rollout/raw_reward``, ``eval/<dataset>``.
- ROLL: ``critic/entropy/mean``, ``critic/score/mean``, ``val_correct/<tag>/mean`` at its global step (from 0).
- NeMo-RL: ``train/*``, ``validation/*``, ``timing/*`` and ``performance/*`` logged with ``step=``; its GPU monitor
  (on by default) declares ``ray/*`` on ``ray/ray_step`` (define_metric), the run's one declaration.
- AReaL: ``ppo_actor/update/entropy/avg``, ``ppo_actor/task_reward/avg``, ``eval-rollout/reward`` at its global step
  (from 0); on the console, a box table of them under 'Train step N/T done.'.
- prime-rl: trainer ``entropy/all/mean``, orchestrator ``train/agg/effective/<agent>/reward/mean``, on ``step``.
- verifiers: a Hugging Face Trainer's log, ``rewards/<func>`` beside ``reward`` (their weighted sum); no entropy.
"""

from __future__ import annotations

import math

import pytest

import entropylaw as el
from _wandb_quiet import quiet_settings
from entropylaw.lab.loggers import wandb_finish as finish

wandb = pytest.importorskip("wandb")
SummaryWriter = pytest.importorskip("torch.utils.tensorboard").SummaryWriter

STEPS = 40


def _entropy(s: float) -> float:
    return 0.9 * math.exp(-s / 15) + 0.1


def _reward(s: float) -> float:
    return 0.7 - 0.5 * math.exp(-s / 10)


def _series(df, metric: str) -> dict[int, float]:
    rows = df[df["metric"] == metric]
    return dict(zip(rows["step"].astype(int), rows["value"]))


def _account(df) -> dict:
    [account] = el.row_accounts(df)
    return account


# --- OpenRLHF ------------------------------------------------------------------------------------------------

def test_openrlhf_wandb_run(tmp_path):
    run = wandb.init(mode="offline", dir=tmp_path, project="openrlhf", name="qwen-grpo", settings=quiet_settings())
    run.define_metric("train/global_step")
    run.define_metric("train/*", step_metric="train/global_step", step_sync=True)
    run.define_metric("eval/epoch")
    run.define_metric("eval/*", step_metric="eval/epoch", step_sync=True)
    for step in range(1, STEPS + 1):
        status = {"policy_loss": 0.01, "entropy_loss": _entropy(step), "reward": _reward(step), "kl": 0.001,
                  "rollout/reward_mean": _reward(step), "rollout/truncated_rate": 0.01, "global_step": step}
        run.log({f"train/{k}": v for k, v in status.items()})
        if step % 5 == 0:
            run.log({"eval/eval_gsm8k_pass1": _reward(step) - 0.1, "eval/eval_gsm8k_pass8": 0.9,
                     "eval/eval_gsm8k_response_length_mean": 280.0, "eval/global_step": step})
    df = el.load(finish(run), warn=False)
    assert _series(df, "entropy") == pytest.approx({s: _entropy(s) for s in range(1, STEPS + 1)}, rel=1e-6)
    assert _series(df, "score")[STEPS] == pytest.approx(_reward(STEPS), rel=1e-6)
    assert _series(df, "val/gsm8k") == pytest.approx({s: _reward(s) - 0.1 for s in range(5, STEPS + 1, 5)}, rel=1e-6)


def test_openrlhf_tensorboard(tmp_path):
    writer = SummaryWriter(str(tmp_path / "tensorboard" / "qwen-grpo"))
    for step in range(1, STEPS + 1):
        writer.add_scalar("train/entropy_loss", _entropy(step), step)
        writer.add_scalar("train/reward", _reward(step), step)
        if step % 5 == 0:
            writer.add_scalar("eval/eval_math500_pass1", _reward(step) - 0.2, step)
    writer.close()
    df = el.load(tmp_path / "tensorboard" / "qwen-grpo", warn=False)
    assert len(_series(df, "entropy")) == STEPS and sorted(_series(df, "val/math500")) == list(range(5, 41, 5))


# --- slime ---------------------------------------------------------------------------------------------------

def test_slime_wandb_run_with_two_optimizer_steps_a_rollout(tmp_path):
    run = wandb.init(mode="offline", dir=tmp_path, project="slime", name="qwen3-4b", settings=quiet_settings())
    for key, axis in (("train/*", "train/step"), ("rollout/*", "rollout/step"), ("perf/*", "rollout/step"),
                      ("eval/*", "eval/step")):
        run.define_metric(axis)
        run.define_metric(key, step_metric=axis)
    for rollout in range(STEPS):
        if rollout % 5 == 0:
            run.log({"eval/aime": _reward(rollout) / 2, "eval/aime-truncated_ratio": 0.1, "eval/step": rollout})
        run.log({"rollout/rewards": 0.0, "rollout/raw_reward": _reward(rollout), "rollout/step": rollout})
        for i in range(2):
            run.log({"train/entropy_loss": _entropy(rollout) + 0.01 * i, "train/pg_loss": 0.01,
                     "train/step": 2 * rollout + i})
    df = el.load(finish(run), warn=False)
    assert _series(df, "entropy") == pytest.approx({r: _entropy(r) + 0.005 for r in range(STEPS)}, rel=1e-6)
    assert _series(df, "score") == pytest.approx({r: _reward(r) for r in range(STEPS)}, rel=1e-6)
    assert sorted(_series(df, "val/aime")) == list(range(0, STEPS, 5))


# --- ROLL ----------------------------------------------------------------------------------------------------

def test_roll_tensorboard(tmp_path):
    writer = SummaryWriter(str(tmp_path / "tensorboard" / "rlvr"))
    for step in range(STEPS):  # ROLL's global_step counts from 0
        for key, value in {"critic/entropy/mean": _entropy(step), "critic/score/mean": _reward(step),
                           "critic/rewards/mean": _reward(step) - 0.3, "actor/pg_loss": 0.01}.items():
            writer.add_scalar(key, value, step)
        if step % 5 == 0:
            writer.add_scalar("val_correct/all/mean", _reward(step) - 0.1, step)
    writer.close()
    df = el.load(tmp_path / "tensorboard" / "rlvr", warn=False)
    assert _series(df, "score") == pytest.approx({s: _reward(s) for s in range(STEPS)}, rel=1e-6)
    assert len(_series(df, "entropy")) == STEPS and sorted(_series(df, "val/mean")) == list(range(0, STEPS, 5))


# --- NeMo-RL -------------------------------------------------------------------------------------------------

def _nemo_rl_wandb(root, monitor_gpus: bool = True) -> str:
    run = wandb.init(mode="offline", dir=root, project="grpo-dev", name="grpo-qwen2.5-1.5b", settings=quiet_settings(),
                     config={"policy": {"model_name": "Qwen/Qwen2.5-1.5B"}, "grpo": {"val_period": 5}})
    if monitor_gpus:
        run.define_metric("ray/*", step_metric="ray/ray_step")

    def log(metrics, step, prefix):
        run.log({f"{prefix}/{k}": v for k, v in metrics.items()}, step=step)

    def validate(step):
        log({"accuracy": _reward(step) - 0.1, "avg_length": 400.0}, step, "validation")
        log({"total_validation_time": 30.0}, step, "timing/validation")

    validate(0)
    for step in range(1, STEPS + 1):
        if monitor_gpus:  # the monitor's rows: their own step metric, no training step
            run.log({"ray/ray_step": 3 * step, "ray/node.0.gpu.0.util": 90.0}, commit=False)
        if step % 5 == 0:
            validate(step)
        log({"loss": 0.01, "reward": _reward(step), "approx_entropy": _entropy(step), "grad_norm": 0.5,
             "mean_gen_tokens_per_sample": 300.0 + step}, step, "train")
        log({"total_step_time": 40.0}, step, "timing/train")
    return str(finish(run))


def test_nemo_rl_wandb_run_with_its_gpu_monitor_keeps_its_training_keys(tmp_path):
    """Its monitor's one define_metric (ray/* on ray/ray_step) dropped every train/ and validation/ row as 'no
    declared step metric': no entropy, no score. Those rows are read on the step they were logged at."""
    df = el.load(_nemo_rl_wandb(tmp_path), warn=False)
    assert _series(df, "entropy") == pytest.approx({s: _entropy(s) for s in range(1, STEPS + 1)}, rel=1e-6)
    assert _series(df, "score") == pytest.approx({s: _reward(s) for s in range(1, STEPS + 1)}, rel=1e-6)
    assert _series(df, "val/accuracy") == pytest.approx({s: _reward(s) - 0.1 for s in range(0, STEPS + 1, 5)},
                                                        rel=1e-6)
    account = _account(df)
    assert account["dropped"] == {"on its own step axis (ray/ray_step), not the run's steps": STEPS}
    assert any("ray/ray_step" in n and "_step" in n for n in account["notes"])
    assert df["step"].max() == STEPS  # the monitor's own steps (3 per training step) are no training steps


def test_nemo_rl_wandb_run_without_its_gpu_monitor(tmp_path):
    df = el.load(_nemo_rl_wandb(tmp_path, monitor_gpus=False), warn=False)
    assert len(_series(df, "entropy")) == STEPS and len(_series(df, "val/accuracy")) == STEPS // 5 + 1


def test_nemo_rl_tensorboard(tmp_path):
    writer = SummaryWriter(str(tmp_path / "logs" / "exp_001" / "tensorboard"))
    for step in range(1, STEPS + 1):
        writer.add_scalar("train/approx_entropy", _entropy(step), step)
        writer.add_scalar("train/reward", _reward(step), step)
        writer.add_scalar("timing/train/total_step_time", 40.0, step)
        if step % 10 == 0:
            writer.add_scalar("validation/accuracy", _reward(step) - 0.1, step)
    writer.close()
    df = el.load(tmp_path / "logs" / "exp_001" / "tensorboard", warn=False)
    assert _series(df, "entropy")[STEPS] == pytest.approx(_entropy(STEPS), rel=1e-6)
    assert sorted(_series(df, "val/accuracy")) == [10, 20, 30, 40]


# --- AReaL ---------------------------------------------------------------------------------------------------

def _areal_stats(step: int) -> dict[str, float]:
    stats = {"ppo_actor/task_reward/avg": _reward(step), "ppo_actor/task_reward/max": 1.0,
             "ppo_actor/update/entropy/avg": _entropy(step), "ppo_actor/update/actor_loss/avg": 0.01,
             "ppo_actor/update/grad_norm": 0.3, "ppo_actor/seq_len/avg": 400.0, "timeperf/train_step": 30.0}
    if step % 5 == 4:
        stats["eval-rollout/reward"] = _reward(step) - 0.1
    return stats


def _grid(stats: dict[str, float], col: int = 4) -> list[str]:
    """The stats as AReaL prints them: tabulate's fancy_grid of (key, value) pairs, ``col`` pairs a row, column-major,
    values in .4e (built here: tabulate is no dependency)."""
    items = list(stats.items())
    n_rows = (len(items) + col - 1) // col
    rows = [sum((list(items[i + j * n_rows]) for j in range(col) if i + j * n_rows < len(items)), [])
            for i in range(n_rows)]
    rows = [[c if n % 2 == 0 else f"{c:.4e}" for n, c in enumerate(r)] for r in rows]
    rows = [r + [""] * (2 * col - len(r)) for r in rows]
    widths = [max(len(r[c]) for r in rows) for c in range(2 * col)]

    def rule(left, mid, right, fill):
        return left + mid.join(fill * (w + 2) for w in widths) + right

    out = [rule("╒", "╤", "╕", "═")]
    for n, r in enumerate(rows):
        out.append("│ " + " │ ".join(v.ljust(w) if c % 2 == 0 else v.rjust(w)
                                      for c, (v, w) in enumerate(zip(r, widths))) + " │")
        out.append(rule("├", "┼", "┤", "─") if n < len(rows) - 1 else rule("╘", "╧", "╛", "═"))
    return out


@pytest.mark.parametrize("epochs", [1, 2])
def test_areal_console_log_of_stats_tables(tmp_path, epochs):
    """AReaL's StatsLogger prints 'Epoch e/E Step s/S Train step N/T done.' and then each step's stats as a box
    table (its W&B and TensorBoard are off by default, so the console is often its only log): refused ('no veRL
    step lines ...'); each table's pairs are read at the train step of the line above it (with two epochs, the
    epoch's step restarting at 1 was read as a resume, the first epoch dropped)."""
    lines, per_epoch = [], STEPS // epochs
    for step in range(STEPS):  # AReaL's global_step counts from 0, the line from 1
        stamp = f"20260521-10:{step:02d}:00.000 StatsLogger INFO: "
        epoch, in_epoch = divmod(step, per_epoch)
        lines += [stamp + f"Epoch {epoch + 1}/{epochs} Step {in_epoch + 1}/{per_epoch} Train step {step + 1}/{STEPS}"
                  " done.", stamp + "Stats (1/1):", stamp, *_grid(_areal_stats(step))]
    path = tmp_path / "main.log"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    df = el.load(path, warn=False)
    assert _series(df, "entropy") == pytest.approx({s + 1: _entropy(s) for s in range(STEPS)}, rel=1e-4)
    assert _series(df, "score") == pytest.approx({s + 1: _reward(s) for s in range(STEPS)}, rel=1e-4)
    assert sorted(_series(df, "val/mean")) == list(range(5, STEPS + 1, 5))
    assert _account(df)["rows_dropped"] == 0


def test_areal_wandb_run(tmp_path):
    run = wandb.init(mode="offline", dir=tmp_path, project="gsm8k-grpo", name="trial0", settings=quiet_settings())
    for step in range(STEPS):
        run.log(_areal_stats(step), step=step)
    df = el.load(finish(run), warn=False)
    assert _series(df, "entropy") == pytest.approx({s: _entropy(s) for s in range(STEPS)}, rel=1e-6)
    assert _series(df, "score")[STEPS - 1] == pytest.approx(_reward(STEPS - 1), rel=1e-6)
    assert sorted(_series(df, "val/mean")) == list(range(4, STEPS, 5))


# --- prime-rl ------------------------------------------------------------------------------------------------

def test_prime_rl_trainer_and_orchestrator_runs(tmp_path):
    """prime-rl's trainer and orchestrator log to W&B each on the declared ``step`` (define_metric("*")): the
    trainer its entropy over all environments, ``entropy/all/mean``, the orchestrator each cohort's reward,
    ``train/agg/<all|effective>/<agent>/reward/mean`` (``effective``: the rollouts the step trained on). Neither was
    found, nor its validation where an environment's rewards are not 0 or 1 (no pass@k: the mean reward of k
    samples, ``eval/<env>/effective/<agent>/avg@k``); each is read."""
    trainer = wandb.init(mode="offline", dir=tmp_path, project="p", name="reverse-text-trainer", settings=quiet_settings())
    trainer.define_metric("*", step_metric="step")
    for step in range(1, STEPS + 1):
        trainer.log({"entropy/all/mean": _entropy(step), "entropy/all/max": 3.0, "loss/mean": 0.01, "step": step})
        trainer.log({"optim/lr": 1e-6, "optim/grad_norm": 0.3, "step": step})
    trainer_file = finish(trainer)
    orchestrator = wandb.init(mode="offline", dir=tmp_path, project="p", name="reverse-text-orchestrator",
                              settings=quiet_settings())
    orchestrator.define_metric("*", step_metric="step")
    for step in range(STEPS):
        row = {f"train/{cohort}/{subset}/policy/reward/mean": _reward(step) - (subset == "all") * 0.05
               for cohort in ("agg", "reverse-text") for subset in ("all", "effective")}
        orchestrator.log({**row, "progress/tokens": 1e5, "step": step})
        if step % 5 == 0:  # an environment of rewards in [0, 1], not 0 or 1: no pass@k, its avg@k the score
            orchestrator.log({f"eval/reverse-text/{subset}/policy/{key}": _reward(step) - 0.1
                              for subset in ("all", "effective") for key in ("avg@4", "reward/mean")} | {"step": step})
    orchestrator_file = finish(orchestrator)
    df = el.load(trainer_file, warn=False)
    assert _series(df, "entropy") == pytest.approx({s: _entropy(s) for s in range(1, STEPS + 1)}, rel=1e-6)
    df = el.load(orchestrator_file, warn=False)
    assert _series(df, "score") == pytest.approx({s: _reward(s) for s in range(STEPS)}, rel=1e-6)
    assert _series(df, "val/reverse-text") == pytest.approx({s: _reward(s) - 0.1 for s in range(0, STEPS, 5)},
                                                            rel=1e-6)


# --- verifiers -----------------------------------------------------------------------------------------------

def test_verifiers_reward_functions_without_mean_suffix(tmp_path):
    """verifiers' GRPOTrainer (a Hugging Face Trainer) logs each reward function as ``rewards/<func>`` (TRL:
    ``rewards/<func>/mean``) beside ``reward``, their weighted sum: the sum was fitted, its format reward in it;
    the accuracy-like function is read, as for TRL. It logs no entropy: said, as a key not found."""
    import json

    history = []
    for step in range(1, STEPS + 1):
        fmt = min(1.0, 0.5 + step / STEPS)
        history.append({"loss": 0.001, "kl": 0.001, "reward": _reward(step) + 0.2 * fmt, "reward_std": 0.3,
                        "rewards/correct_answer_reward_func": _reward(step), "rewards/format_reward_func": fmt,
                        "completions/mean_length": 300.0, "epoch": step / STEPS, "step": step})
        if step % 10 == 0:
            history.append({"eval_reward": _reward(step) + 0.1, "eval_rewards/correct_answer_reward_func":
                            _reward(step) - 0.1, "eval_rewards/format_reward_func": fmt, "step": step})
    path = tmp_path / "checkpoint-40" / "trainer_state.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"global_step": STEPS, "log_history": history}))
    df = el.load(path, warn=False)
    assert _series(df, "score") == pytest.approx({s: _reward(s) for s in range(1, STEPS + 1)})
    assert _series(df, "val/correct_answer_reward_func") == pytest.approx({s: _reward(s) - 0.1
                                                                          for s in range(10, STEPS + 1, 10)})


@pytest.mark.parametrize("stats", [
    {"rewards/median": 0.0, "rewards/p10": -0.3, "rewards/p90": 0.3},  # a loop's reward statistics
    {"rewards/chosen_sum": 12.0, "rewards/rejected_sum": -4.0, "count/chosen": 8.0},  # KTO's sums beside its means
])
def test_statistics_of_the_reward_are_no_reward_functions(tmp_path, stats):
    """``rewards/<name>`` with no /mean is a reward function's (verifiers) only where the name is no statistic of
    the reward (median, p90) nor of KTO's chosen and rejected rewards (``rewards/chosen_sum``): such keys were
    taken for reward functions and fitted ('2 reward functions (median, p10 ...) and none is named like an
    accuracy') in place of the run's ``reward``, the validation ``eval_reward`` dropped."""
    import json

    history = []
    for step in range(1, STEPS + 1):
        history.append({"loss": 0.01, "entropy": _entropy(step), "reward": _reward(step),
                        **{k: v + _reward(step) for k, v in stats.items()}, "step": step})
        if step % 10 == 0:
            history.append({"eval_reward": _reward(step) - 0.1, "step": step})
    path = tmp_path / "checkpoint-40" / "trainer_state.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"global_step": STEPS, "log_history": history}))
    df = el.load(path, warn=False)
    assert _series(df, "score") == pytest.approx({s: _reward(s) for s in range(1, STEPS + 1)})
    assert _series(df, "val/mean") == pytest.approx({s: _reward(s) - 0.1 for s in range(10, STEPS + 1, 10)})
