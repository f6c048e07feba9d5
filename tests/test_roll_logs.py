"""ROLL's logs as its trackers write them, with the real wandb and TensorBoard libraries.

ROLL (alibaba/ROLL, ``roll/pipeline/rlvr/rlvr_pipeline.py``) logs one dict per pipeline step with
``tracker.log(metrics, step=global_step)`` (``roll/utils/tracking.py``: W&B ``run.log``, TensorBoard
``add_scalar``; a reducer tag ``@sum`` is cut from a key's name; ``system/step``, the same step, is
added by ``do_checkpoint`` in ``roll/pipeline/base_pipeline.py``). Every step has the metrics of
``MetricsManager.add_values_metrics`` (``roll/utils/metrics/metrics_manager.py``): ``critic/score/mean``,
``critic/entropy/mean`` (the token-mean entropy of the old log-probs ROLL recomputes, 0 when it does
not recompute them) and the same under each domain (``<domain>/critic/...``). Every ``eval_steps``
steps, before the step's rollout (step 0 before any update), ``val()`` adds ``val_correct/all/mean``
(the share of all validation samples scored 1) and ``val_correct/<tag>/mean`` per validation tag.
With ``track_with: stdout`` the same dict is logged as JSON, ``{"step": ..., "metrics": {...}}``, behind
``metrics_tag:`` through ROLL's logger (``roll/utils/logging.py``: a prefix of time, file, level, worker,
rank and pid), to stdout and to ``$ROLL_LOG_DIR/log_rank_DRIVER_0_1.log``; the launch script
(``examples/start_rlvr_pipeline.py``) prints the config as YAML to stdout first.
"""

from __future__ import annotations

import json
import logging
import math

import numpy as np
import pytest

import entropylaw as el
from entropylaw.lab.loggers import wandb_finish
from entropylaw import table
from entropylaw.readers.keys import detect_keys

N, EVAL = 30, 10
TAGS = {"math_benchmarks": 0.9, "aime2024": 0.3}


def _entropy(s: int) -> float:
    return 0.9 * math.exp(-s / 20) + 0.1


def _acc(s: int) -> float:
    return 0.7 - 0.5 * math.exp(-s / 8)


def _metrics(s: int, recompute: bool = True) -> dict:
    ent = _entropy(s) if recompute else 0.0
    m = {"time/step_total": 100.0, "system/global_step": s, "system/step": s, "critic/entropy/mean": ent,
         "critic/correct/mean": _acc(s), "critic/score/mean": _acc(s), "critic/score/max": 1.0,
         "critic/rewards/mean": _acc(s) - 0.5,
         "token/response_length/mean": 900.0 + s, "math_rule/critic/entropy/mean": ent,
         "math_rule/critic/score/mean": _acc(s), "actor/pg_loss@sum": 0.01, "actor/kl_loss": 0.001}
    if s % EVAL == 0:
        m["val_correct/all/mean"] = 0.6 * _acc(s)
        m.update({f"val_correct/{tag}/mean": f * _acc(s) for tag, f in TAGS.items()})
    return {k.rsplit("@", 1)[0]: v for k, v in m.items()}  # roll/utils/tracking.py: _strip_metric_tag


ROLL_CONFIG = {"exp_name": "qwen2.5-7B-rlvr", "seed": 42, "pretrain": "Qwen/Qwen2.5-7B", "reward_pretrain": None,
               "eval_steps": EVAL, "track_with": "tensorboard", "max_steps": N,
               "actor_train": {"model_args": {"model_name_or_path": "Qwen/Qwen2.5-7B", "dtype": "bf16",
                                              "lora_target": None},
                               "data_args": {"file_name": ["data/math_deepmath_deal.jsonl"], "template": "qwen2_5"},
                               "training_args": {"learning_rate": 1e-6, "per_device_train_batch_size": 1}},
               "validation": {"data_args": {"file_name": ["data/math_benchmarks.jsonl"], "template": "qwen2_5"}},
               "tracker_kwargs": {"log_dir": "./output/tensorboard"}}


def _wandb(tmp_path, recompute: bool = True) -> str:
    wandb = pytest.importorskip("wandb")
    settings = wandb.Settings(x_disable_stats=True, x_disable_meta=True, x_disable_machine_info=True,
                              console="off", save_code=False, disable_git=True, silent=True)
    run = wandb.init(project="roll", name="qwen2.5-7B-rlvr", dir=tmp_path, mode="offline", settings=settings)
    run.config.update(ROLL_CONFIG, allow_val_change=True)
    for s in range(N):
        run.log(_metrics(s, recompute), step=s)
    wandb_finish(run)  # the service writes the file's last records after finish() returns
    return str(tmp_path / "wandb")


def _tensorboard(tmp_path, recompute: bool = True) -> str:
    SummaryWriter = pytest.importorskip("torch.utils.tensorboard").SummaryWriter
    writer = SummaryWriter(log_dir=str(tmp_path / "roll_tb"), max_queue=1000, flush_secs=10)
    # roll/utils/tracking.py TensorBoardTracker: the config (asdict), each value not a scalar as its str()
    writer.add_hparams(hparam_dict={k: v if isinstance(v, (int, float, str, bool)) else str(v)
                                    for k, v in ROLL_CONFIG.items()}, metric_dict={})
    for s in range(N):
        for k, v in _metrics(s, recompute).items():
            writer.add_scalar(k, v, global_step=s)
    writer.close()
    return str(tmp_path / "roll_tb")


def _stdout(tmp_path, recompute: bool = True, echo: bool = True, name: str = "console.out") -> str:
    """The run's console output: the config's YAML print, then the logger's lines (the driver's
    log file, ``echo=False``, holds the logger's lines alone)."""
    import yaml

    path = tmp_path / name
    with open(path, "w") as stream:
        if echo:
            print(yaml.safe_dump(ROLL_CONFIG, sort_keys=False), file=stream, flush=True)
        handler = logging.StreamHandler(stream)
        handler.setFormatter(logging.Formatter(
            "[%(asctime)s] [%(filename)s (%(lineno)d)] [%(levelname)s] [DRIVER 0 / 1][PID 4321] %(message)s",
            datefmt="%Y-%m-%d %H:%M:%S"))
        log = logging.getLogger(f"roll_stdout_{tmp_path.name}")
        log.propagate = False
        log.setLevel(logging.INFO)
        log.addHandler(handler)
        log.info("create tracker stdout, kwargs: {}")
        for s in range(N):
            log.info("pipeline step %d start...", s)
            log.info(f"metrics_tag: {json.dumps({'step': s, 'metrics': _metrics(s, recompute)})}")
        log.removeHandler(handler)
    return str(path)


@pytest.mark.parametrize("write", [_wandb, _tensorboard, _stdout])
def test_roll_val_correct_is_validation(tmp_path, write):
    """val_correct/<tag>/mean and val_correct/all/mean were no validation: the fit used the training score."""
    df = el.load([write(tmp_path)])
    [run] = table.run_ids(df)
    meta = table.runs(df).iloc[0]
    assert json.loads(meta.val_keys) == {"val/mean": "val_correct/all/mean",
                                         **{f"val/{tag}": f"val_correct/{tag}/mean" for tag in TAGS}}
    evals = list(range(0, N, EVAL))
    mean = table.series(df, run, "val/mean")
    assert mean.index.tolist() == evals
    assert np.allclose(mean.to_numpy(), [0.6 * _acc(s) for s in evals])  # ROLL's own, not the mean of the tags
    assert np.allclose(table.series(df, run, "val/aime2024").to_numpy(), [0.3 * _acc(s) for s in evals])


def test_val_correct_pattern_takes_no_other_trainers_keys():
    """Other trainers' keys are not ROLL's validation; ROLL's other metrics are none either."""
    verl = ["actor/entropy", "critic/score/mean", "val-core/openai/gsm8k/acc/mean@1", "val/test_score/math"]
    assert detect_keys(verl).val == {"val/openai/gsm8k": "val-core/openai/gsm8k/acc/mean@1",
                                     "val/math": "val/test_score/math"}
    assert detect_keys(["critic/correct/mean", "val_correct/all/max", "val_correct", "val_correct_mean",
                        "math_rule/critic/score/mean", "time/val_step"]).val == {}


@pytest.mark.parametrize("write", [_wandb, _tensorboard, _stdout])
def test_roll_entropy_is_critic_entropy_mean(tmp_path, write):
    """critic/entropy/mean was not read: 'no entropy found'."""
    df = el.load([write(tmp_path)])
    [run] = table.run_ids(df)
    assert table.runs(df).iloc[0].entropy_key == "critic/entropy/mean"
    entropy = table.series(df, run, "entropy")
    assert entropy.index.tolist() == list(range(N))
    assert np.allclose(entropy.to_numpy(), [_entropy(s) for s in range(N)])


@pytest.mark.parametrize("write", [_wandb, _stdout])
def test_roll_entropy_not_recomputed_is_no_entropy(tmp_path, write):
    """Without old log-probs recomputed ROLL logs critic/entropy/mean = 0: no entropy, and why."""
    from entropylaw.errors import EntropyLawWarning
    from entropylaw.fit.run_summary import not_found
    with pytest.warns(EntropyLawWarning, match="enable_old_logprobs_recompute"):
        df = el.load([write(tmp_path, recompute=False)])
    assert table.runs(df).iloc[0].entropy_key == ""
    [line] = not_found(df)
    assert "no entropy found" in line and "entropy_key" in line


def test_critic_entropy_mean_takes_no_other_trainers_place():
    """veRL's, TRL's, OpenRLHF's entropies stay theirs beside a critic/entropy/mean; the rule passing over
    a 0 entropy is ROLL's key's only."""
    for key in ("actor/entropy", "entropy", "train/entropy_loss", "train/approx_entropy"):
        assert detect_keys([key, "critic/entropy/mean", "critic/score/mean"]).entropy == key
    zero = {"actor/entropy": (0.0, 0.0)}
    assert detect_keys(["actor/entropy", "critic/score/mean"], ranges=zero).entropy == "actor/entropy"
    km = detect_keys(["critic/entropy/mean", "critic/score/mean"], ranges={"critic/entropy/mean": (0.0, 0.0)})
    assert km.entropy == "" and any("enable_old_logprobs_recompute" in w for w in km.warnings)
    assert detect_keys(["math_rule/critic/entropy/mean", "critic/score/mean"]).entropy == ""


@pytest.mark.parametrize("write", [_wandb, _tensorboard, _stdout])
def test_roll_config_names_the_model_and_data(tmp_path, write):
    """ROLL's TensorBoard run had no model: its config is add_hparams' (a folder of its own beside the run's
    events); pretrain names the model, actor_train.data_args.file_name the data."""
    df = el.load([write(tmp_path)])
    assert len(table.run_ids(df)) == 1
    meta = table.runs(df).iloc[0]
    assert meta.model == "Qwen/Qwen2.5-7B"
    assert meta.dataset == "math_deepmath_deal"


def test_roll_config_keys_take_no_other_trainers_place():
    """veRL's model and data stay theirs beside ROLL's config keys; ROLL's own pretrain comes first."""
    from entropylaw.readers.config_meta import meta_from_config
    verl = {"actor_rollout_ref": {"model": {"path": "/ckpt/Qwen2.5-7B"}}, "data": {"train_files": "/d/gsm8k/train.parquet"}}
    meta = meta_from_config({**ROLL_CONFIG, **verl})
    assert meta["model"] == "Qwen2.5-7B" and meta["dataset"] == "gsm8k"
    roll = {**ROLL_CONFIG, "pretrain": "/ckpt/Qwen2.5-Math-7B"}
    assert meta_from_config(roll)["model"] == "Qwen2.5-Math-7B"
    assert meta_from_config({k: v for k, v in roll.items() if k != "pretrain"})["model"] == "Qwen/Qwen2.5-7B"


def test_tensorboard_hparams_without_a_run_above_are_no_run(tmp_path):
    """An add_hparams folder read alone (no run's events above it) is still no run: no scalars."""
    SummaryWriter = pytest.importorskip("torch.utils.tensorboard").SummaryWriter
    writer = SummaryWriter(log_dir=str(tmp_path / "tb"))
    writer.add_hparams({"pretrain": "Qwen/Qwen2.5-7B"}, {}, run_name="hp")
    writer.add_scalar("critic/entropy/mean", 0.5, 1)
    writer.close()
    from entropylaw.errors import EntropyLawError
    from entropylaw.readers.tensorboard import read_tensorboard
    with pytest.raises(EntropyLawError, match="no scalars"):
        read_tensorboard(tmp_path / "tb" / "hp")
    [raw] = read_tensorboard(tmp_path / "tb")
    assert raw.meta["model"] == "Qwen/Qwen2.5-7B"


def test_roll_stdout_log_file_reads_with_every_row_counted(tmp_path):
    """The driver's log file (no config echo: the run named by its folder), a string metric, a null step
    and a last line cut off while written: every value read or counted, the cut line by its number."""
    folder = tmp_path / "output" / "logs"
    folder.mkdir(parents=True)
    path = folder / "log_rank_DRIVER_0_1.log"
    _stdout(folder, echo=False, name=path.name)
    with open(path, "a") as stream:
        stream.write('[2026-01-01 00:00:00] [tracking.py (1)] [INFO] [DRIVER 0 / 1][PID 4321] metrics_tag: '
                     + json.dumps({"step": None, "metrics": {"critic/score/mean": 0.5}}) + "\n")
        stream.write('[2026-01-01 00:00:00] [tracking.py (1)] [INFO] [DRIVER 0 / 1][PID 4321] metrics_tag: '
                     + json.dumps({"step": N, "metrics": {**_metrics(N), "note": "text"}}) + "\n")
        stream.write('[2026-01-01 00:00:01] [tracking.py (1)] [INFO] [DRIVER 0 / 1][PID 4321] metrics_tag: '
                     + json.dumps({"step": N + 1, "metrics": _metrics(N + 1)})[:80])
    df = el.load([str(path)], warn=False)
    [run] = table.run_ids(df)
    assert table.series(df, run, "entropy").index.tolist() == list(range(N + 1))
    [account] = el.row_accounts(df)
    assert account["format"] == "roll_console"
    assert account["dropped"] == {"entry without a step": 1, "non-numeric value": 1,
                                  "unparseable log record": len(_metrics(N)) + 1}  # as many as the line before
    assert account["rows_read"] == account["rows_kept"] + account["rows_dropped"]
    lines = path.read_text().count("\n") + 1
    assert any(f"line {lines}:" in n and "does not parse" in n for n in account["notes"])


def test_a_log_without_roll_metrics_lines_says_so_in_one_line(tmp_path):
    """A ROLL log with no metrics line yet (the run still loading) is one clear line, not a traceback."""
    from entropylaw.readers.roll_console import read_roll_console
    path = tmp_path / "log_rank_DRIVER_0_1.log"
    path.write_text('[2026-01-01 00:00:00] [tracking.py (1)] [INFO] metrics_tag: {"step": 0, "metr\n')
    with pytest.raises(el.EntropyLawError, match="no ROLL metrics lines in 1 line .1 line that do not parse"):
        read_roll_console(path)
