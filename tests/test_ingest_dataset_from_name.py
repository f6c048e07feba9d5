"""A run's data set read off its name (``runs/grpo_math_lr1e-5/metrics.jsonl``, ``math_sweep/seed1/``)
where neither its log nor a config beside it names one: a guess, said, that the log, the config
and ``--dataset`` each override (entropylaw.readers.names.dataset_from_filename)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import entropylaw as el
from entropylaw import table
from entropylaw.fit.forecast.data import RunData
from entropylaw.readers.names import dataset_from_filename

from _course_runs import course_run
from conftest import run_cli


@pytest.mark.parametrize("path, expected", [
    ("runs/grpo_math_lr1e-5/metrics.jsonl", "math"),
    ("runs/lr1e-5/metrics.jsonl", ""),                          # nothing named
    ("math_sweep/lr1e-5_seed2/metrics.jsonl", "math"),          # the sweep's folder names it
    ("math_sweep/gsm8k_lr1e-5/metrics.jsonl", "gsm8k"),         # the run's own name first
    ("qwen2.5-math-1.5b_lr1e-5.csv", ""),                       # a model's name: Math is its family, no data set
    ("runs/Qwen2.5-Math-1.5B_grpo/metrics.jsonl", ""),
    ("runs/Qwen2.5-Math-Instruct_lr0/metrics.jsonl", ""),       # a model's name with no size
    ("qwen-math_grpo.log", ""),
    ("deepseek-math-rl/metrics.jsonl", ""),
    ("open-r1-math-220k_run.log", ""),                          # another data set's name holds the word
    ("grpo-math-lr1e-5.log", ""),                               # hyphens join one name's words
    ("deepseek-math-7b_gsm8k.log", "gsm8k"),
    ("run_MATH-500_eval.log", "math500"),                       # a subset keeps its own name
    ("runs/grpo_math_500_lr1e-5/metrics.jsonl", "math500"),
    ("x_MATH-lighteval.log", "math"),                           # a hub copy is the benchmark
    ("ppo_gsm8k+math_fsdp.log", "gsm8k+math"),                  # several, in order
    ("mathematics_grpo.log", ""),                               # a word that contains one is none
    ("aime-2024_qwen3-4b.log", "aime2024"),
    ("experiments/math/runs/a.log", ""),                        # only the run's and its sweep's folder count
])
def test_the_data_set_a_name_names(path, expected):
    assert dataset_from_filename(path) == expected


def _run(folder: Path, n_steps=60) -> Path:
    """A custom trainer's run folder (a score named for no benchmark), climbing from its floor."""
    return course_run(folder, n_steps, start=0.04, rate=1.1)


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


def test_a_sweep_where_only_some_names_name_a_benchmark_is_not_split_by_a_guess(tmp_path):
    """One run named grpo_math_lr0 among unnamed peers: none is guessed, so the four stay one sweep
    (pooled by task and data set); a folder of runs each named for its own benchmark keeps each."""
    for name in ("grpo_math_lr0", "lr1", "lr2", "lr3"):
        _run(tmp_path / "mixed" / name)
    df = el.load(str(tmp_path / "mixed"), warn=False)
    assert set(_datasets(df).values()) == {""}
    assert not any("read off the name" in " ".join(a["notes"]) for a in el.row_accounts(df))
    for name in ("grpo_math_a", "grpo_gsm8k_b"):
        _run(tmp_path / "named" / name)
    assert _datasets(el.load(str(tmp_path / "named"), warn=False)) == {"grpo_math_a": "math", "grpo_gsm8k_b": "gsm8k"}


def test_a_key_or_a_piece_of_the_run_that_names_its_data_set_wins_and_the_guess_is_said_once(tmp_path):
    # a validation key that names gsm8k: the run's task is the key's, no guess is made
    folder = tmp_path / "math_sweep" / "a"
    folder.mkdir(parents=True)
    rows = [{"step": s, "entropy": 0.9 / s ** 0.3, "val/openai/gsm8k": 0.01 * s} for s in range(1, 30)]
    (folder / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    df = el.load(str(folder / "metrics.jsonl"), warn=False)
    assert set(_datasets(df).values()) == {""}
    # a run read from two files (a resume): said once, on the run, whichever file names it
    two = _run(tmp_path / "math_runs" / "r")
    lines = (two / "metrics.jsonl").read_text().splitlines()
    (two / "metrics.jsonl").write_text("\n".join(lines[: len(lines) // 2]) + "\n")
    (two / "metrics-2.jsonl").write_text("\n".join(lines[len(lines) // 2:]) + "\n")
    df = el.load(str(two / "metrics.jsonl"), str(two / "metrics-2.jsonl"), run_id="r", one_run=True, warn=False)
    notes = [n for a in el.row_accounts(df) for n in a["notes"] if "read off the name" in n]
    assert set(_datasets(df).values()) == {"math"} and len(notes) == 1, notes


def test_a_relative_path_typed_in_the_run_folder_reads_as_the_full_path(tmp_path, monkeypatch):
    folder = _run(tmp_path / "grpo_gsm8k_seed1")
    monkeypatch.chdir(folder)
    assert set(_datasets(el.load("metrics.jsonl", warn=False)).values()) == {"gsm8k"}


def test_the_forecast_says_its_task_came_from_a_name(tmp_path, capsys):
    from entropylaw.cli.main import main  # the commands in this process: the words are the CLI's

    def said(*args):
        assert main([*args, str(tmp_path / "math_sweep"), "--fit-frac", "0.25", "--n-boot", "30"]) == 0
        return " ".join(capsys.readouterr().out.split())

    for name in ("lr1", "lr2", "lr3"):
        _run(tmp_path / "math_sweep" / name)
    text = said("forecast")
    assert text.count("data set read off the run's name 'math_sweep'") >= 3 and "--dataset NAME" in text
    # the one-line view of a larger sweep, and rank, say it once for them all
    for name in ("lr4", "lr5", "lr6"):
        _run(tmp_path / "math_sweep" / name)
    assert "6 runs: data set read off the name 'math_sweep'" in said("forecast")
    assert "note: 6 runs: data set read off the name 'math_sweep'" in said("rank")
    one = el.forecast(el.load(str(tmp_path / "math_sweep"), warn=False), "lr1", fit_frac=0.25, n_boot=30)
    assert any("data set read off the run's name 'math_sweep'" in w and "task math" in w for w in one.warnings)


def test_the_report_says_which_data_sets_were_read_off_names(tmp_path):
    """The page's first lines (what the inputs lost, and what was only guessed): one line per name."""
    from entropylaw.results.model import run_results

    for name in ("lr1", "lr2"):
        _run(tmp_path / "math_sweep" / name)
    _run(tmp_path / "other" / "grpo_gsm8k_a")
    df = el.load(str(tmp_path / "math_sweep"), str(tmp_path / "other"), warn=False)
    read = run_results(df, forecasts=False).read
    assert [r[:62] for r in read] == ["data set gsm8k read off the name 'grpo_gsm8k_a' for 1 run: no ",
                                      "data set math read off the name 'math_sweep' for 2 runs: no lo"]
    assert run_results(el.load(str(tmp_path / "math_sweep"), dataset="math", warn=False), forecasts=False).read == []
