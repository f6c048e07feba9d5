"""slime's logs as its processes write them, with the real wandb library.

slime (THUDM/slime, ``slime/observability/wandb_utils.py``) declares ``train/*`` on
``train/step``, ``rollout/*``, ``perf/*``, ``passrate/*``, ``multi_turn/*`` on ``rollout/step`` and
``eval/*`` on ``eval/step``. The training process (``backends/megatron_utils/model.py``) logs each
optimizer step's ``train/<k>`` (``entropy_loss``: the entropy, a per-sample mean, ``loss.py``) at
``train/step = rollout_id * steps_per_rollout + step_id``, and before them the rollout's training-side
``rollout/<k>`` (``raw_reward``; ``rewards`` is after GRPO's group normalisation: about 0), at
``rollout/step = rollout_id`` (``train_metric_utils.py``; ``rollout_id * steps_per_rollout`` with
``--wandb-always-use-train-step``). The rollout manager logs the generation side's ``rollout/*``
and ``eval/<dataset>`` (its mean reward, with ``eval/<dataset>-truncated_ratio`` and
``eval/<dataset>/response_len/*``) at ``eval/step`` (``rollout_metrics.py``): before training and
after every ``eval_interval`` rollouts. Offline, the driver, the training process and the rollout
manager each write an ``offline-run-*`` directory of one run id; the driver's holds the name and the
config (``hf_checkpoint``, ``seed``, ``prompt_data``) and no history.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import entropylaw as el
from entropylaw import table

pytest.importorskip("wandb")

R, EVAL = 12, 4

_SCRIPT = r'''
import math, sys, wandb
from entropylaw.lab.loggers import wandb_finish
out, k, role, rid, always = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5] == "1"
R, EVAL = int(sys.argv[6]), int(sys.argv[7])
cfg = {"hf_checkpoint": "/root/Qwen3-4B", "seed": 1234, "prompt_data": "/root/dapo-math-17k/dapo-math-17k.jsonl",
       "rollout_batch_size": 32, "n_samples_per_prompt": 8, "global_batch_size": 256 // k, "eval_interval": EVAL,
       "wandb_always_use_train_step": always}
settings = wandb.Settings(x_disable_stats=True, x_disable_meta=True, x_disable_machine_info=True, console="off",
                          save_code=False, disable_git=True, silent=True)
if role in ("driver", "all"):
    run = wandb.init(id=rid, mode="offline", project="slime", group="qwen3-4b", name="qwen3-4b", config=cfg, dir=out,
                     settings=settings)
else:  # slime's init_wandb_secondary
    run = wandb.init(id=rid, mode="offline", project="slime", config=cfg, resume="allow", dir=out, settings=settings)
wandb.define_metric("train/step")
wandb.define_metric("train/*", step_metric="train/step")
wandb.define_metric("rollout/step")
wandb.define_metric("rollout/*", step_metric="rollout/step")
wandb.define_metric("multi_turn/*", step_metric="rollout/step")
wandb.define_metric("passrate/*", step_metric="rollout/step")
wandb.define_metric("eval/step")
wandb.define_metric("eval/*", step_metric="eval/step")
wandb.define_metric("perf/*", step_metric="rollout/step")
entropy = lambda s: 0.9 * math.exp(-s / 20) + 0.1
acc = lambda r: 0.7 - 0.5 * math.exp(-r / 6)
step = lambda r: r * k if always else r
manager, trainer = role in ("rollout", "all"), role in ("actor", "all")
def evaluate(r):
    if manager:
        wandb.log({"eval/aime": acc(r) / 3, "eval/aime-truncated_ratio": 0.1, "eval/aime/response_len/mean": 3000.0,
                   "eval/math500": acc(r), "eval/math500-truncated_ratio": 0.02,
                   "eval/math500/response_len/mean": 1500.0, "eval/step": step(r)})
for r in range(R if role != "driver" else 0):
    if r == 0:
        evaluate(0)
    if manager:
        wandb.log({"rollout/response_len/mean": 1000.0 + r, "rollout/repetition_frac": 0.01,
                   "rollout/truncated_ratio": 0.02, "perf/rollout_time": 60.0, "rollout/step": step(r)})
    if trainer:
        wandb.log({"rollout/log_probs": -0.5, "rollout/ref_log_probs": -0.5, "rollout/rewards": 1e-8,
                   "rollout/raw_reward": acc(r) - 0.1, "rollout/response_lengths": 1000.0 + r,
                   "rollout/total_lengths": 1100.0 + r, "rollout/truncated": 0.02, "rollout/advantages": 0.0,
                   "rollout/returns": 0.0, "rollout/step": step(r)})
        for j in range(k):
            wandb.log({"train/loss": 0.01, "train/pg_loss": 0.01, "train/entropy_loss": entropy(r * k + j),
                       "train/pg_clipfrac": 0.001, "train/ppo_kl": 0.0, "train/grad_norm": 0.3,
                       "train/lr-pg_0": 1e-6, "train/global_batch_size": 256 // k, "train/step": r * k + j})
        wandb.log({"perf/actor_train_time": 30.0, "perf/train_time": 40.0, "rollout/step": step(r)})
    if (r + 1) % EVAL == 0 or r == R - 1:
        evaluate(r)
wandb_finish(run)  # the service writes the file's last records after finish() returns
'''


def _emit(tmp_path, k: int, roles=("all",), always: bool = False, rid: str = "slime1"):
    for role in roles:  # one process each, one after the other, as slime's driver starts the others
        subprocess.run([sys.executable, "-c", _SCRIPT, str(tmp_path), str(k), role, rid, "1" if always else "0",
                        str(R), str(EVAL)], check=True, capture_output=True, timeout=120)
    return str(tmp_path / "wandb")


def _entropy(s: float) -> float:
    return 0.9 * math.exp(-s / 20) + 0.1


def _acc(r: float) -> float:
    return 0.7 - 0.5 * math.exp(-r / 6)


@pytest.fixture(scope="module")
def one_process(tmp_path_factory):
    """One optimizer step per rollout, every key in one run (as W&B's server joins slime's processes online)."""
    return el.load([_emit(tmp_path_factory.mktemp("slime"), 1)])


def test_slime_score_is_raw_reward(one_process):
    """rollout/rewards (after GRPO's group normalisation: about 0) was taken as the score by its name."""
    df = one_process
    [run] = table.run_ids(df)
    meta = table.runs(df).iloc[0]
    assert (meta.entropy_key, meta.score_key) == ("train/entropy_loss", "rollout/raw_reward")
    assert np.allclose(table.series(df, run, "score").to_numpy(), [_acc(r) - 0.1 for r in range(R)])


def test_slime_eval_datasets_are_validation(one_process):
    """eval/<dataset> was no validation: the fit fell back on the training reward."""
    df = one_process
    [run] = table.run_ids(df)
    meta = table.runs(df).iloc[0]
    assert json.loads(meta.val_keys) == {"val/aime": "eval/aime", "val/math500": "eval/math500"}
    evals = sorted({0, *[r for r in range(R) if (r + 1) % EVAL == 0], R - 1})
    assert table.series(df, run, "val/math500").index.tolist() == evals
    assert np.allclose(table.series(df, run, "val/math500").to_numpy(), [_acc(r) for r in evals])


def test_an_eval_key_without_slimes_statistics_is_no_benchmark():
    """The Hugging Face Trainer's eval/loss, eval/runtime are not validation scores."""
    from entropylaw.readers.keys import detect_keys
    km = detect_keys(["train/loss", "eval/loss", "eval/runtime", "eval/samples_per_second", "eval/entropy"])
    assert km.val == {}
    km = detect_keys(["train/entropy_loss", "eval/gsm8k", "eval/gsm8k/response_len/mean", "eval/loss"])
    assert km.val == {"val/gsm8k": "eval/gsm8k"}


def test_slime_config_names_the_model(one_process):
    """slime's --hf-checkpoint is the model (it had none)."""
    meta = table.runs(one_process).iloc[0]
    assert (meta.model, meta.seed, meta.dataset) == ("Qwen3-4B", 1234, "dapo-math-17k")


@pytest.mark.parametrize("always", [False, True])
def test_slime_optimizer_steps_are_read_per_rollout(tmp_path, always):
    """With 2 optimizer steps per rollout, train/step 6 (rollout 3's second step) was paired with rollout 6."""
    k = 2
    df = el.load([_emit(tmp_path, k, always=always)])
    [run] = table.run_ids(df)
    steps = [r * k if always else r for r in range(R)]
    entropy = table.series(df, run, "entropy")
    assert entropy.index.tolist() == steps
    assert np.allclose(entropy.to_numpy(), [np.mean([_entropy(r * k + j) for j in range(k)]) for r in range(R)])
    assert table.series(df, run, "score").index.tolist() == steps
    [account] = el.row_accounts(df)
    assert any("train/step" in n and "2 optimizer steps per rollout" in n for n in account["notes"])


def test_slime_offline_processes_are_one_run(tmp_path):
    """The driver's, the trainer's and the rollout manager's offline directories were three runs (one skipped,
    the entropy in one, the validation in another)."""
    df = el.load([_emit(tmp_path, 2, roles=("driver", "actor", "rollout"))])
    [run] = table.run_ids(df)
    assert run == "qwen3-4b"
    meta = table.runs(df).iloc[0]
    assert (meta.entropy_key, meta.score_key, meta.model, meta.seed) == (
        "train/entropy_loss", "rollout/raw_reward", "Qwen3-4B", 1234)
    assert json.loads(meta.val_keys) == {"val/aime": "eval/aime", "val/math500": "eval/math500"}
    assert table.series(df, run, "entropy").index.tolist() == list(range(R))
    assert table.series(df, run, "val/aime").index.tolist()[0] == 0
    [account] = el.row_accounts(df)
    assert any("3 files of W&B run id 'slime1'" in n for n in account["notes"])


def test_watch_follows_the_slime_run_written_last(tmp_path):
    """A wandb/ folder holding a finished run and a slime run its 3 processes are writing: watch followed
    the finished one, "the one whose file was written last", as the joined run's source (its files, joined
    by ", ") was no file whose time could be read."""
    import os

    wandb_dir = _emit(tmp_path, 1, rid="older")  # one process: a run of its own
    _emit(tmp_path, 2, roles=("driver", "actor", "rollout"), rid="live")
    for file in (tmp_path / "wandb").glob("offline-run-*/*.wandb"):
        t = 1_000_000 if "older" in file.parent.name else 2_000_000
        os.utime(file, (t, t))
    df = el.load([wandb_dir], warn=False)
    meta = table.runs(df).set_index("run_id")["source"].astype(str)
    [live] = [rid for rid, source in meta.items() if "-live" in source]
    assert len(meta) == 2 and ", " in meta[live]
    snap = el.snapshot(wandb_dir)
    assert snap["run_id"] == live, snap.get("runs_note")


def test_a_driver_file_cut_while_written_still_names_the_run(tmp_path):
    """The driver's file caught with its last record half-written (a live run, as watch reads it): the
    file was skipped as "no numeric history (damaged ...)", its name and config with it, so the run was
    'slime1' (its id) with no model while live and 'qwen3-4b' (Qwen3-4B) once finished."""
    from entropylaw.readers.leveldb_log import Damage, iter_records

    wandb_dir = _emit(tmp_path, 2, roles=("driver", "actor", "rollout"))
    driver = min((tmp_path / "wandb").glob("offline-run-*/*.wandb"), key=lambda p: p.parent.name)
    with open(driver, "rb") as stream:
        last = [offset for offset, _ in iter_records(stream, Damage())][-1]
    driver.write_bytes(driver.read_bytes()[:last + 5])  # the last record's chunk header cut
    df = el.load([wandb_dir], warn=False)
    [run] = table.run_ids(df)
    meta = table.runs(df).iloc[0]
    assert (run, meta.model, meta.seed) == ("qwen3-4b", "Qwen3-4B", 1234)


def test_one_process_folder_read_alone_says_the_others_beside_it(tmp_path):
    """wandb/latest-run is the last process started (slime's rollout manager: no entropy): read alone it
    said "no entropy found", not that the run's other processes were beside it."""
    import warnings as w

    wandb_dir = Path(_emit(tmp_path, 2, roles=("driver", "actor", "rollout")))
    rollout = sorted(p for p in wandb_dir.glob("offline-run-*") if p.is_dir())[-1]
    with w.catch_warnings(record=True) as caught:
        w.simplefilter("always")
        try:
            el.load([str(rollout)])
        except el.EntropyLawError:
            pass  # a process without the entropy may be a run left out: the warning is what is checked
    said = " ".join(str(c.message) for c in caught)
    assert "2 other folders of its W&B run id 'slime1' beside it" in said and str(wandb_dir) in said
