"""A run's data set read off its name (``runs/grpo_math_lr1e-5/metrics.jsonl``, ``math_sweep/seed1/``)
where neither its log nor a config beside it names one: a guess, said, that the log, the config
and ``--dataset`` each override (entropylaw.readers.names.dataset_from_filename)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import entropylaw as el
from entropylaw import table
from entropylaw.fit.forecast.data import RunData
from entropylaw.readers.names import dataset_from_filename

from conftest import run_cli


@pytest.mark.parametrize("path, expected", [
    ("runs/grpo_math_lr1e-5/metrics.jsonl", "math"),
    ("runs/lr1e-5/metrics.jsonl", ""),                          # nothing named
    ("math_sweep/lr1e-5_seed2/metrics.jsonl", "math"),          # the sweep's folder names it
    ("math_sweep/gsm8k_lr1e-5/metrics.jsonl", "gsm8k"),         # the run's own name first
    ("qwen2.5-math-1.5b_lr1e-5.csv", ""),                       # a model's name: Math is its family, no data set
    ("runs/Qwen2.5-Math-1.5B_grpo/metrics.jsonl", ""),
    ("deepseek-math-7b_gsm8k.log", "gsm8k"),
    ("run_MATH-500_eval.log", "math500"),                       # a subset keeps its own name
    ("grpo-MATH-lighteval.log", "math"),                        # a hub copy is the benchmark
    ("ppo_gsm8k+math_fsdp.log", "gsm8k+math"),                  # several, in order
    ("mathematics_grpo.log", ""),                               # a word that contains one is none
    ("aime-2024_qwen3-4b.log", "aime2024"),
    ("experiments/math/runs/a.log", ""),                              # only the run's and its sweep's folder count
])
def test_the_data_set_a_name_names(path, expected):
    assert dataset_from_filename(path) == expected


def _run(folder: Path, n_steps=60) -> Path:
    """A custom trainer's run folder (a score named for no benchmark), climbing from its floor."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for step in range(1, n_steps + 1):
        rows.append({"type": "train", "grpo_step": step, "token_entropy": 0.9 / step ** 0.3,
                     "train_reward": min(0.9, 0.01 * step)})
        if step % 5 == 0 or step == 1:
            z = math.log(0.04 / 0.96) + 1.1 * math.log1p(step)
            rows.append({"type": "eval", "grpo_step": step, "answer_accuracy": round(1 / (1 + math.exp(-z)), 4)})
    (folder / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def _datasets(df):
    return table.runs(df).set_index("run_id")["dataset"].to_dict()


def test_a_sweep_named_for_its_benchmark_reads_as_that_task_and_says_it_guessed(tmp_path):
    for name in ("lr1e-5", "lr2e-5", "lr5e-6"):
        _run(tmp_path / "math_grpo" / name)
    df = el.load(str(tmp_path / "math_grpo"), warn=False)
    assert set(_datasets(df).values()) == {"math"}
    notes = " ".join(" ".join(a["notes"]) for a in el.row_accounts(df))
    assert "data set math read off the name 'math_grpo'" in notes and "--dataset" in notes
    run = RunData.from_table(df, "lr1e-5")
    assert run.task == "math"  # answer_accuracy names no benchmark; the run's data set does
    # the forecast then serves MATH's own take-off rates, not every recipe's
    fc = el.forecast(df, "lr1e-5", fit_frac=0.25)
    said = " ".join(fc.warnings)
    assert "take-off" in said and "runs of task 'math'" in said


def test_the_log_the_config_and_the_flag_each_win_over_a_names_guess(tmp_path):
    _run(tmp_path / "math_sweep" / "a")
    (_run(tmp_path / "math_sweep" / "b") / "config.json").write_text(json.dumps({"dataset": "openai/gsm8k"}))
    df = el.load(str(tmp_path / "math_sweep"), warn=False)
    assert _datasets(df) == {"a": "math", "b": "gsm8k"}
    notes = {a["source"].rsplit("/", 2)[-2]: " ".join(a["notes"]) for a in el.row_accounts(df)}
    assert "read off the name" not in notes["b"]
    # the user's word: no guess made, none said
    flagged = el.load(str(tmp_path / "math_sweep"), dataset="countdown", warn=False)
    assert set(_datasets(flagged).values()) == {"countdown"}
    assert not any("read off the name" in " ".join(a["notes"]) for a in el.row_accounts(flagged))
    # a veRL log that prints its data files states its data set: that wins over its file's name
    verl = tmp_path / "verl_math"
    verl.mkdir()
    lines = ["python3 -m verl.trainer.main_ppo data.train_files=$HOME/data/gsm8k/train.parquet "
             "actor_rollout_ref.model.path=Qwen/Qwen2.5-0.5B-Instruct"]
    lines += [f"step:{s} - actor/entropy:{0.8 / s ** 0.2:.4f} - critic/score/mean:{0.02 * s:.4f} - "
              f"val-core/openai/gsm8k/reward/mean@1:{0.03 * s:.4f}" for s in range(1, 21)]
    (verl / "ppo_math_run.log").write_text("\n".join(lines) + "\n")
    assert set(_datasets(el.load(str(verl), warn=False)).values()) == {"gsm8k"}


def test_ingest_says_the_guess_in_its_row_account(tmp_path):
    _run(tmp_path / "runs" / "grpo_gsm8k_seed1")
    res = run_cli("ingest", str(tmp_path / "runs"), "-o", str(tmp_path / "t.parquet"))
    assert res.returncode == 0, res.stderr
    assert "data set gsm8k read off the name 'grpo_gsm8k_seed1'" in " ".join((res.stdout + res.stderr).split())
