"""A run folder's config (config.json, config.yaml, args.json, ...) beside the log it describes:
the model, the data set and the planned length the log leaves out (entropylaw.readers.run_config)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import entropylaw as el
from entropylaw import table
from entropylaw.fit.forecast.core import forecast
from entropylaw.fit.forecast.data import RunData

from _course_runs import course_run, planned_sweep
from conftest import run_cli


def _run(folder: Path, n_steps=100, name="metrics.jsonl") -> Path:
    """A custom trainer's run folder: its metrics.jsonl, a score named for no benchmark."""
    return course_run(folder, n_steps, name=name)


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
    assert "runs/a/config.json): model Qwen/Qwen2.5-Math-1.5B, data set math, seed 3, 200 planned steps" \
        in notes["a"]
    assert "runs/b/config.yaml): model Qwen/Qwen2.5-0.5B-Instruct" in notes["b"]
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
    # summary says the model it read (it was in the row account's notes only)
    [row] = json.loads(res.stdout)["runs"]
    assert (row["model"], row["dataset"]) == ("Qwen/Qwen2.5-7B", "")
    assert "Qwen/Qwen2.5-7B" in run_cli("summary", str(tmp_path / "qwen-run")).stdout
    assert _meta(el.load(str(tmp_path / "qwen-run"), warn=False), "qwen-run")["model"] == "Qwen/Qwen2.5-7B"
    # a log given directly takes its folder's config too: `forecast runs/*/metrics.jsonl` reads as `forecast runs/`
    direct = el.load(str(tmp_path / "qwen-run" / "metrics.jsonl"), warn=False)
    assert _meta(direct, "qwen-run")["model"] == "Qwen/Qwen2.5-7B"


def test_what_the_log_states_and_what_the_user_gives_win_over_the_config_and_a_names_guess_does_not(tmp_path):
    # a model only guessed from the log's file or folder name gives way to the config's
    folder = _run(tmp_path / "runs" / "qwen2.5-7b_lr1e-6", name="qwen2.5-7b_metrics.jsonl")
    (folder / "config.json").write_text(json.dumps({"model": "Qwen/Qwen2.5-Math-7B", "dataset": "math"}))
    df = el.load(str(tmp_path / "runs"), warn=False)
    (run_id,) = table.run_ids(df)
    assert (_meta(df, run_id)["model"], _meta(df, run_id)["dataset"]) == ("Qwen/Qwen2.5-Math-7B", "math")
    given = el.load(str(tmp_path / "runs"), model="Llama-3.1-8B", dataset="gsm8k", warn=False)
    assert (_meta(given, run_id)["model"], _meta(given, run_id)["dataset"]) == ("Llama-3.1-8B", "gsm8k")
    # a veRL console log that prints its model path states it: that wins
    verl = tmp_path / "verl" / "a"
    verl.mkdir(parents=True)
    lines = ["python3 -m verl.trainer.main_ppo actor_rollout_ref.model.path=Qwen/Qwen2.5-1.5B-Instruct "
             "trainer.total_training_steps=80"]
    lines += [f"step:{s} - actor/entropy:{0.5 / s:.4f} - critic/score/mean:0.6" for s in range(1, 41)]
    (verl / "train.log").write_text("\n".join(lines) + "\n")
    (verl / "config.json").write_text(json.dumps({"model": "Qwen/Qwen2.5-Math-7B", "dataset": "math",
                                                  "max_steps": 500}))
    meta = _meta(el.load(str(verl), warn=False), "a")
    assert meta["model"] == "Qwen2.5-1.5B-Instruct" and meta["dataset"] == "math"  # the log's model, the config's data
    assert json.loads(meta["config"])["total_steps"] == 80  # the log's plan


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
    assert notes.count("c/config.json): model Qwen2.5-7B") == 2
    assert "training_args.json" not in notes  # nothing filled, nothing said


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
    _run(tmp_path / "runs" / "tokens-2M_grpo")
    meta = table.runs(el.load(str(tmp_path / "runs"), warn=False)).set_index("run_id")
    assert meta.loc["qwen2.5-math-1.5b_lr1e-5", "model"] == "qwen2.5-math-1.5b"
    assert meta.loc["qwen2.5-math-1.5b_lr1e-5", "n_params"] == 1.5e9
    assert meta.loc["grpo_lr2e-5", "model"] == ""  # a name that names no model: none guessed
    assert meta.loc["tokens-2M_grpo", "model"] == ""  # a count of tokens is no model's size


def test_hostile_configs_are_each_one_note_and_every_log_is_read(tmp_path):
    cases = {
        "deep": ("config.json", "[" * 200_000),  # JSON nested past the recursion limit
        "bomb": ("config.yaml", "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                                "dataset: [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"),  # aliases: billions of items
        "huge": ("config.json", json.dumps({"pad": "x" * 300_000})),
        "dir": ("config.json", None),  # a folder of that name
    }
    for name, (file, text) in cases.items():
        folder = _run(tmp_path / "runs" / name)
        if text is None:
            (folder / file).mkdir()
        else:
            (folder / file).write_text(text)
    df = el.load(str(tmp_path / "runs"), warn=False)
    assert sorted(pd.unique(df["run_id"])) == sorted(cases) and (table.runs(df)["model"] == "").all()
    notes = {x["source"].rsplit("/", 2)[-2]: " ".join(x["notes"]) for x in el.row_accounts(df)}
    assert "does not read (nested too deeply for a settings file)" in notes["deep"]
    assert "does not read (not valid YAML (an alias (*name)" in notes["bomb"]
    assert "does not read (300011 bytes, more than a settings file holds)" in notes["huge"]
    assert "config" not in notes["dir"]  # a folder is no config file


def test_odd_values_in_a_config_are_not_taken(tmp_path):
    (_run(tmp_path / "runs" / "bom") / "config.json").write_bytes(b"\xef\xbb\xbf" + json.dumps(
        {"model": "Qwen/Qwen2.5-7B"}).encode())  # a byte-order mark, as Windows editors write
    (_run(tmp_path / "runs" / "odd") / "config.json").write_text(json.dumps(
        {"dataset": [1, 2], "max_steps": 1e300, "model": "Qwen/Qwen2.5-7B"}))
    meta = table.runs(el.load(str(tmp_path / "runs"), warn=False)).set_index("run_id")
    assert meta.loc["bom", "model"] == "Qwen/Qwen2.5-7B"
    assert (meta.loc["odd", "model"], meta.loc["odd", "dataset"], meta.loc["odd", "config"]) == \
        ("Qwen/Qwen2.5-7B", "", "{}")  # no data set of [1, 2], no plan of 1e300 steps


def test_every_config_file_of_a_folder_is_read_and_a_local_model_path_names_no_model(tmp_path):
    """A TRL/HF output folder: the model's config.json (its _name_or_path a local copy) beside the
    run's training_args.json."""
    folder = _run(tmp_path / "runs" / "a")
    (folder / "config.json").write_text(json.dumps({"_name_or_path": "/tmp/tmpk2x9z1", "model_type": "qwen2"}))
    (folder / "training_args.json").write_text(json.dumps({"max_steps": 300, "dataset_name": "openai/gsm8k",
                                                           "seed": 7}))
    meta = _meta(el.load(str(tmp_path / "runs"), warn=False), "a")
    assert (meta["model"], meta["dataset"], meta["seed"], json.loads(meta["config"])) == \
        ("", "gsm8k", 7.0, {"total_steps": 300})


def test_a_config_that_does_not_read_is_said_though_the_folders_first_file_does_not_read_either(tmp_path):
    folder = _run(tmp_path / "runs" / "a")
    (folder / "config.json").write_text("{oops")
    (folder / "console.log").write_text("loading weights\n")  # sorts first, and no reader reads it
    _run(tmp_path / "runs" / "b")
    (tmp_path / "runs" / "b" / "config.json").write_text("{oops")
    (tmp_path / "runs" / "config.yaml").write_text("model: Qwen/Qwen2.5-Math-1.5B\n")  # the sweep's
    df = el.load(str(tmp_path / "runs"), warn=False)
    kept = [x for x in el.row_accounts(df) if not x["skipped"]]
    notes = {x["source"].rsplit("/", 2)[-2]: " ".join(x["notes"]) for x in kept}
    assert "a/config.json: the run's config does not read" in notes["a"]
    assert "b/config.json: the run's config does not read" in notes["b"]
    # a run's own config that does not read leaves the sweep's to describe it
    assert list(table.runs(df)["model"]) == ["Qwen/Qwen2.5-Math-1.5B"] * 2


def test_a_run_of_a_sweep_given_alone_reads_its_sweeps_config(tmp_path):
    """``forecast sweep/a/`` (or its log) read no config of the sweep's: no model, no task, and its gain
    ran to the window's end where the sweep planned 300 steps. Given alone, a run folder takes the
    config beside its sibling run folders; a folder with no sibling run folder takes none."""
    root = planned_sweep(tmp_path / "sweep", {"a": (60, True), "b": (80, True)}, total=300)
    for source in (root / "a", root / "a" / "metrics.jsonl"):
        meta = table.runs(el.load(str(source), warn=False)).iloc[0]
        assert meta["model"] == "Qwen/Qwen2.5-Math-1.5B" and meta["dataset"] == "math", meta
        assert '"total_steps": 300' in str(meta["config"]), meta["config"]
    lone = tmp_path / "lone"
    lone.mkdir()
    (root / "b").rename(lone / "b")
    (lone / "config.json").write_text((root / "config.json").read_text())
    meta = table.runs(el.load(str(lone / "b"), warn=False)).iloc[0]
    assert str(meta["model"]) in ("", "nan"), meta  # no sibling run folder beside it: no sweep's config


def test_a_trackers_config_states_the_planned_last_step(tmp_path, monkeypatch):
    """A W&B run whose config plans 200 steps was told "give --total-steps": the planned-step keys were
    read from a run folder's config file only, never from a tracker's own config."""
    pytest.importorskip("wandb")
    import math

    import wandb

    import entropylaw as el
    from entropylaw.lab.loggers import wandb_finish

    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    run = wandb.init(project="p", dir=str(tmp_path), config={"trainer": {"total_training_steps": 200}})
    for s in range(1, 61):
        logs = {"actor/entropy": 0.6 * math.exp(-s / 40) + 0.1, "critic/score/mean": 0.7 - 0.4 * math.exp(-s / 30)}
        if s % 5 == 0:
            logs["val-core/openai/gsm8k/acc/mean@1"] = 0.7 - 0.4 * math.exp(-s / 30)
        run.log(logs, step=s)
    wandb_finish(run)
    df = el.load(str(tmp_path / "wandb"), warn=False)
    assert json.loads(table.runs(df)["config"].iloc[0]) == {"total_steps": 200}
    fc = el.forecast(df, n_boot=40)
    assert fc.decision["gain"]["to_step"] == 200.0 and "planned" in fc.decision["gain"]["to_step_source"]
