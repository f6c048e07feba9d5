"""A run folder's config (config.json, config.yaml, args.json, ...) beside the log it describes:
the model, the data set and the planned length the log leaves out (entropylaw.readers.run_config)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd

import entropylaw as el
from entropylaw import table
from entropylaw.fit.forecast.core import forecast
from entropylaw.fit.forecast.data import RunData

from conftest import run_cli


def _run(folder: Path, n_steps=100, name="metrics.jsonl") -> Path:
    """A custom trainer's run folder: its metrics.jsonl, a score named for no benchmark."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for step in range(1, n_steps + 1):
        rows.append({"type": "train", "grpo_step": step, "token_entropy": 0.9 / step ** 0.3,
                     "train_reward": min(0.9, 0.01 * step)})
        if step % 5 == 0 or step == 1:
            z = math.log(0.3 / 0.7) + 0.3 * math.log1p(step)
            rows.append({"type": "eval", "grpo_step": step, "answer_accuracy": round(1 / (1 + math.exp(-z)), 4)})
    (folder / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def _meta(df, run_id):
    return table.runs(df).set_index("run_id").loc[run_id]


def test_a_run_folders_config_names_its_model_data_set_and_planned_length(tmp_path):
    (_run(tmp_path / "runs" / "a") / "config.json").write_text(json.dumps(
        {"model_name_or_path": "Qwen/Qwen2.5-Math-1.5B", "train_data_path": "data/MATH/train.jsonl",
         "n_grpo_steps": 200, "lr": 1e-5, "seed": 3}))
    (_run(tmp_path / "runs" / "b") / "config.yaml").write_text(
        "model:\n  name: Qwen/Qwen2.5-0.5B-Instruct\ndataset: openai/gsm8k\ntrainer:\n  max_steps: 150.0\n")
    df = el.load(str(tmp_path / "runs"), warn=False)
    a, b = _meta(df, "a"), _meta(df, "b")
    assert (a["model"], a["dataset"], a["seed"], json.loads(a["config"])) == \
        ("Qwen/Qwen2.5-Math-1.5B", "math", 3.0, {"total_steps": 200})
    assert a["n_params"] == 1.5e9  # the size, from the model's name, as for a log that names it
    assert (b["model"], b["dataset"], json.loads(b["config"])) == ("Qwen/Qwen2.5-0.5B-Instruct", "gsm8k",
                                                                   {"total_steps": 150})
    notes = {x["source"].rsplit("/", 2)[-2]: " ".join(x["notes"]) for x in el.row_accounts(df)}
    assert "the run's config (config.json): model Qwen/Qwen2.5-Math-1.5B, data set math, 200 planned steps" \
        in notes["a"]
    assert "the run's config (config.yaml)" in notes["b"]
    # the forecast's task and model are the config's: a score named answer_accuracy on MATH is MATH
    run = RunData.from_table(df, "a")
    assert (run.task, run.model) == ("math", "qwen2.5-math-1.5b")
    # the gain to go runs to the planned last step (live: the log ends at step 100 of 200)
    fc = forecast(run, methods=["default"], n_boot=40)
    gain = fc.decision["gain"]
    assert gain["to_step"] == 200 and "the run's config" in gain["to_step_source"]


def test_a_run_folder_given_directly_reads_beside_its_config(tmp_path):
    """It was an error: the config, read as a log, did not read."""
    (_run(tmp_path / "qwen-run") / "args.json").write_text(json.dumps({"model": "Qwen/Qwen2.5-7B"}))
    res = run_cli("summary", str(tmp_path / "qwen-run"), "--json")
    assert res.returncode == 0, res.stderr
    assert "skipped" not in res.stderr


def test_what_the_log_states_and_what_the_user_gives_win_over_the_config(tmp_path):
    folder = _run(tmp_path / "runs" / "a", name="qwen2.5-7b_metrics.jsonl")  # the log's file names its model
    (folder / "config.json").write_text(json.dumps({"model": "Qwen/Qwen2.5-Math-1.5B", "dataset": "math"}))
    df = el.load(str(tmp_path / "runs"), warn=False)
    (run_id,) = table.run_ids(df)
    assert (_meta(df, run_id)["model"], _meta(df, run_id)["dataset"]) == ("qwen2.5-7b", "math")
    given = el.load(str(tmp_path / "runs"), model="Llama-3.1-8B", dataset="gsm8k", warn=False)
    assert (_meta(given, run_id)["model"], _meta(given, run_id)["dataset"]) == ("Llama-3.1-8B", "gsm8k")


def test_a_config_that_does_not_parse_is_said_and_one_beside_two_logs_describes_both(tmp_path):
    (_run(tmp_path / "runs" / "a") / "config.json").write_text('{"model": "Qwen2.5-7B",')  # cut off
    (_run(tmp_path / "runs" / "b") / "config.yaml").write_text("- a list\n- of things\n")
    two = _run(tmp_path / "runs" / "c")
    _run(two, name="second.jsonl")
    (two / "console.log").write_text("loading weights\n")  # the trainer's output beside them: left out
    (two / "config.json").write_text(json.dumps({"model": "Qwen2.5-7B"}))
    (_run(tmp_path / "runs" / "d") / "training_args.json").write_text(json.dumps({"max_steps": -1}))  # HF: unset
    df = el.load(str(tmp_path / "runs"), warn=False)
    assert sorted(pd.unique(df["run_id"])) == ["a", "b", "c", "d", "second"]  # every log read
    meta = table.runs(df).set_index("run_id")
    assert list(meta.loc[["c", "second"], "model"]) == ["Qwen2.5-7B", "Qwen2.5-7B"]
    assert (meta.loc[["a", "b", "d"], "model"] == "").all() and (meta["config"] == "{}").all()
    notes = " | ".join(" ".join(x["notes"]) for x in el.row_accounts(df))
    assert "config.json: the run's config does not read (" in notes
    assert "config.yaml: the run's config does not read (expected an object of settings)" in notes
    assert notes.count("the run's config (config.json): model Qwen2.5-7B") == 2
    assert "the run's config (training_args.json)" not in notes  # nothing filled, nothing said


def test_a_sweeps_own_config_beside_its_run_folders_fills_what_a_runs_own_leaves_out(tmp_path):
    _run(tmp_path / "sweep" / "lr1"), _run(tmp_path / "sweep" / "lr2")
    (tmp_path / "sweep" / "config.yaml").write_text("model: Qwen/Qwen2.5-Math-1.5B\ndataset: MATH\nn_grpo_steps: 100\n")
    (tmp_path / "sweep" / "lr2" / "config.json").write_text(json.dumps({"n_grpo_steps": 300, "dataset": "gsm8k"}))
    df = el.load(str(tmp_path / "sweep"), warn=False)
    meta = table.runs(df).set_index("run_id")
    assert list(meta["model"]) == ["Qwen/Qwen2.5-Math-1.5B"] * 2
    assert list(meta["dataset"]) == ["math", "gsm8k"]  # the run's own config first
    assert [json.loads(c)["total_steps"] for c in meta["config"]] == [100, 300]


def test_a_run_folders_name_names_its_model_where_its_log_has_a_generic_name(tmp_path):
    _run(tmp_path / "runs" / "qwen2.5-math-1.5b_lr1e-5"), _run(tmp_path / "runs" / "grpo_lr2e-5")
    meta = table.runs(el.load(str(tmp_path / "runs"), warn=False)).set_index("run_id")
    assert meta.loc["qwen2.5-math-1.5b_lr1e-5", "model"] == "qwen2.5-math-1.5b"
    assert meta.loc["qwen2.5-math-1.5b_lr1e-5", "n_params"] == 1.5e9
    assert meta.loc["grpo_lr2e-5", "model"] == ""  # a name that names no model: none guessed
