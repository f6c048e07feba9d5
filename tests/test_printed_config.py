"""A custom loop's printed config (argparse's Namespace, a printed dict, another tool's ``key='text'``) read as the
run's metadata: the model, the data set (so the task's rates and priors serve the forecast), the planned steps."""

import argparse
import json
import logging
import pprint

import pytest

import entropylaw as el
from entropylaw.readers.printed_config import MAX_LINES, PrintedConfig


def _steps(n=30):
    return [f"step {s} | loss 0.1 | reward {0.05 + s / 100:.4f} | entropy {1 - s / 60:.4f}" for s in range(n)] + \
        [f"step {s} | eval accuracy {0.04 + s / 120:.4f}" for s in range(0, n, 5)]


def _load(tmp_path, head, name="run.log"):
    path = tmp_path / name
    path.write_text("\n".join(head + _steps()) + "\n")
    table = el.load(path)
    notes = table.attrs["row_accounts"][0]["notes"]
    return table, [n for n in notes if "run's config read" in n]


def _argparse_namespace():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_name", default="Qwen/Qwen2.5-Math-1.5B")
    parser.add_argument("--train_path", default="data/MATH/train.jsonl")
    parser.add_argument("--n_grpo_steps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--lr", type=float, default=1e-5)
    return parser.parse_args([])


def test_argparse_namespace_names_model_data_steps_and_seed(tmp_path):
    table, said = _load(tmp_path, ["loading tokenizer...", str(_argparse_namespace())])
    assert table["model"].unique().tolist() == ["Qwen/Qwen2.5-Math-1.5B"]
    assert table["n_params"].iloc[0] == pytest.approx(1.5e9)
    assert table["dataset"].unique().tolist() == ["math"]
    assert table["seed"].unique().tolist() == [3.0]
    assert json.loads(table["config"].iloc[0]) == {"total_steps": 200}
    assert said and "argparse's Namespace, the first at line 2" in said[0]
    assert "model Qwen/Qwen2.5-Math-1.5B, data set math, seed 3, 200 steps planned" in said[0]


def test_namespace_with_values_that_are_no_literals_keeps_the_others(tmp_path):
    text = str(_argparse_namespace())[:-1] + ", device=device(type='cuda', index=0), dtype=torch.bfloat16)"
    table, said = _load(tmp_path, [text])
    assert table["model"].unique().tolist() == ["Qwen/Qwen2.5-Math-1.5B"] and said


def test_pprint_dict_over_several_lines_behind_a_logging_prefix(tmp_path, caplog):
    config = {"model": {"path": "/ckpt/Qwen2.5-7B-Instruct"}, "data": {"train_files": ["~/data/gsm8k/train.parquet"]},
              "trainer": {"total_training_steps": 120}, "lr": 1e-6, "notes": "a" * 30}
    text = pprint.pformat(config, width=40)
    assert text.count("\n") >= 4  # spread over lines, as pprint prints a long config
    logger = logging.getLogger("loop")
    handler = logging.FileHandler(tmp_path / "prefix.txt")
    handler.setFormatter(logging.Formatter("%(asctime)s INFO %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.info("config = %s", text)
    handler.close()
    logger.removeHandler(handler)
    head = (tmp_path / "prefix.txt").read_text().splitlines()
    table, said = _load(tmp_path, head)
    assert table["model"].unique().tolist() == ["Qwen2.5-7B-Instruct"]
    assert table["dataset"].unique().tolist() == ["gsm8k"]
    assert json.loads(table["config"].iloc[0]) == {"total_steps": 120}
    assert "a printed dict, the first at line 1" in said[0]


def test_json_config_line(tmp_path):
    line = json.dumps({"model_name_or_path": "Qwen/Qwen2.5-0.5B-Instruct", "use_vllm": True, "ref": None,
                       "dataset_name": "openai/gsm8k", "max_steps": 90})
    table, said = _load(tmp_path, ["config:", line])
    assert table["model"].unique().tolist() == ["Qwen/Qwen2.5-0.5B-Instruct"]
    assert table["dataset"].unique().tolist() == ["gsm8k"] and said


def test_another_tools_line_gives_its_quoted_model_not_its_numbers(tmp_path):
    vllm = ("INFO 09-13 22:20:00 llm_engine.py:234] Initializing a V0 LLM engine (v0.7.2) with config: "
            "model='Qwen/Qwen2.5-Math-1.5B', speculative_config=None, tokenizer='Qwen/Qwen2.5-Math-1.5B', seed=0, "
            'compilation_config={"splitting_ops":[],"max_capture_size":256}, use_cached_outputs=False,')
    table, said = _load(tmp_path, ["This model supports multiple tasks: {'generate', 'embed'}. Defaulting.", vllm])
    assert table["model"].unique().tolist() == ["Qwen/Qwen2.5-Math-1.5B"]
    assert table["seed"].isna().all()  # vLLM's engine seed is not the loop's
    assert "key='text' pairs, the first at line 2" in said[0]


def test_the_loops_namespace_wins_over_another_tools_model(tmp_path):
    vllm = "INFO engine with config: model='/tmp/merged_ckpt', seed=0"
    table, _ = _load(tmp_path, [str(_argparse_namespace()), vllm])
    assert table["model"].unique().tolist() == ["Qwen/Qwen2.5-Math-1.5B"]


def test_no_config_no_note_and_metrics_dicts_name_nothing(tmp_path):
    table, said = _load(tmp_path, ["{'eval_accuracy': 0.05, 'eval_loss': 1.2}", "lr=1e-05 batch=8",
                                   "{'cut': [1, 2,"])
    assert said == [] and table["model"].unique().tolist() == [""]
    assert table["dataset"].unique().tolist() == [""]


def test_a_dict_of_measures_before_the_first_step_names_no_model_or_data_set(tmp_path):
    """An evaluation before training printed as a dict ({'dataset': 'math500', 'model': 'policy', 'accuracy': 0.12})
    was read as the run's config: model 'policy', data set math500 (the evaluation's, not the training data's)."""
    first = {"dataset": "math500", "model": "policy", "accuracy": 0.12, "n": 500}
    table, said = _load(tmp_path, [str(first), json.dumps({"split": "test", "dataset": "aime24", "pass@1": 0.03})])
    assert said == [] and table["model"].unique().tolist() == [""]
    assert table["dataset"].unique().tolist() == [""]


def test_a_dict_whose_data_set_names_none_says_nothing(tmp_path):
    """{'dataset': 'train', 'lr': 1e-05}: its data set names none (''), yet the note said the config was read, naming
    'data set ' and nothing."""
    table, said = _load(tmp_path, [str({"dataset": "train", "lr": 1e-05, "batch_size": 8})])
    assert said == [] and table["dataset"].unique().tolist() == [""]


def test_a_config_printed_after_the_first_step_is_not_the_runs(tmp_path):
    path = tmp_path / "run.log"
    path.write_text("\n".join(_steps()[:5] + ["Namespace(model='Qwen/Qwen2.5-7B', n_grpo_steps=9)"]
                              + _steps()[5:]) + "\n")
    table = el.load(path)
    assert table["model"].unique().tolist() == [""]


def test_the_printed_total_of_step_n_of_m_wins_over_the_configs(tmp_path):
    path = tmp_path / "run.log"
    lines = [str(_argparse_namespace())] + [f"step {s}/150 | reward {s / 100:.3f} | entropy {1 - s / 60:.3f}"
                                             for s in range(20)]
    path.write_text("\n".join(lines) + "\n")
    assert json.loads(el.load(path)["config"].iloc[0]) == {"total_steps": 150}


def test_a_dict_that_never_closes_is_given_up_after_max_lines():
    header = PrintedConfig()
    header.feed(1, "config = {")
    for n in range(2, MAX_LINES + 50):
        header.feed(n, f"  'k{n}': {n},")
    header.feed(MAX_LINES + 60, "Namespace(model='Qwen/Qwen2.5-7B')")
    assert header.meta() == {"model": "Qwen/Qwen2.5-7B"}


def test_forecast_of_a_loop_whose_namespace_names_math_asks_for_no_dataset(tmp_path, cli):
    named, unnamed = tmp_path / "named", tmp_path / "unnamed"
    named.mkdir(), unnamed.mkdir()
    _load(named, [str(_argparse_namespace())])
    _load(unnamed, ["loading tokenizer..."])
    said = {d.name: cli("forecast", str(d / "run.log"), "--fit-frac", "0.5") for d in (named, unnamed)}
    assert said["unnamed"].returncode == 0 and said["named"].returncode == 0
    assert "give --dataset NAME" in said["unnamed"].stdout
    assert "give --dataset NAME" not in said["named"].stdout


def test_a_tqdm_bars_log_reads_the_namespace_printed_before_its_bar(tmp_path):
    from tqdm import tqdm

    path = tmp_path / "bars.log"
    with open(path, "w") as f:
        print(_argparse_namespace(), file=f)
        bar = tqdm(range(30), desc="Training", file=f, mininterval=0, miniters=1)
        for s in bar:
            bar.set_postfix(loss=0.1, reward=0.05 + s / 100, entropy=1 - s / 60)
        bar.close()
    table = el.load(path)
    assert table["model"].unique().tolist() == ["Qwen/Qwen2.5-Math-1.5B"]
    assert table["dataset"].unique().tolist() == ["math"]
    assert any("argparse's Namespace" in n for n in table.attrs["row_accounts"][0]["notes"])


def test_a_json_lines_config_record_wrapped_under_config_or_args(tmp_path):
    for wrapper in ("config", "args"):
        path = tmp_path / f"{wrapper}.jsonl"
        head = {wrapper: {"model_name": "Qwen/Qwen2.5-Math-1.5B", "n_grpo_steps": 200,
                          "train_path": "data/MATH/train.jsonl"}}
        path.write_text("\n".join([json.dumps(head)] + [json.dumps({"step": s, "reward": 0.05 + s / 100,
                                                                    "entropy": 1 - s / 60}) for s in range(30)]) + "\n")
        table = el.load(path)
        assert table["model"].unique().tolist() == ["Qwen/Qwen2.5-Math-1.5B"], wrapper
        assert table["dataset"].unique().tolist() == ["math"]
        assert json.loads(table["config"].iloc[0]) == {"total_steps": 200}
