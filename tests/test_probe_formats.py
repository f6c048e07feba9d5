"""The probe reads the rollouts trainers write: TRL's own completion logs (written here by TRL's
GRPOTrainer), veRL's rollout dumps (in the exact layout of RayPPOTrainer._dump_generations), and
the project's JSONL, at a chosen step, keeping the trainer's advantages."""

from __future__ import annotations

import json
import os
import warnings

import pandas as pd
import pytest
import torch

from _tiny_lm import TEMPLATE, char_tokenizer
from entropylaw.cli.main import main
from entropylaw.errors import EntropyLawError
from entropylaw.readers.rollouts.encode import encode
from entropylaw.readers.rollouts.formats import read_rollouts


def _tiny_llama(tok, seed=0):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=len(tok), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=128,
                         bos_token_id=None, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    return LlamaForCausalLM(config)


@pytest.fixture(scope="module")
def trl_run(tmp_path_factory):
    """Three GRPO steps of TRL's own trainer with log_completions on (parquet files and a W&B table)."""
    pytest.importorskip("trl")
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    d = tmp_path_factory.mktemp("trl")
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["WANDB_MODE"] = "offline"
    os.environ["WANDB_DIR"] = str(d)
    tok = char_tokenizer(TEMPLATE)
    model = _tiny_llama(tok)
    rows = [{"prompt": [{"role": "user", "content": f"{a}+{b}"}], "answer": str(a + b)} for a in range(3)
            for b in range(3)]

    def digit_count(completions, **kwargs):  # varies inside a group: every step has a signal
        return [float(sum(ch.isdigit() for ch in c[0]["content"])) for c in completions]

    def has_plus(completions, **kwargs):
        return [float("+" in c[0]["content"]) for c in completions]

    args = GRPOConfig(output_dir=str(d / "out"), run_name="tiny", per_device_train_batch_size=4, num_generations=4,
                      max_completion_length=6, max_steps=3, logging_steps=1, report_to=["wandb"], use_cpu=True,
                      seed=0, save_strategy="no", learning_rate=5e-3, beta=0.0, disable_tqdm=True,
                      log_completions=True, temperature=1.0)
    import wandb
    wandb.teardown()  # a W&B set up by an earlier test in this process would ignore WANDB_DIR
    trainer = GRPOTrainer(model=model, reward_funcs=[digit_count, has_plus], args=args,
                          train_dataset=Dataset.from_list(rows), processing_class=tok)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer.train()
    wandb.finish()
    trainer.save_model(str(d / "model"))
    tok.save_pretrained(str(d / "model"))
    return d


def test_trl_completions_are_read_at_each_step_with_their_advantages(trl_run):
    comp = trl_run / "out" / "completions"
    files = sorted(comp.glob("completions_*.parquet"))
    assert [f.name for f in files] == [f"completions_{s:05d}.parquet" for s in (1, 2, 3)]
    for step in (1, 3):
        raw = pd.read_parquet(comp / f"completions_{step:05d}.parquet")
        for path, k in ((trl_run / "out", step), (comp, step), (comp / f"completions_{step:05d}.parquet", None)):
            df = read_rollouts(path, k)
            assert df.attrs["format"] == "trl-completions" and df.attrs["step"] == step
            assert list(df["advantage"]) == list(raw["advantage"])  # the trainer's, untouched
            assert list(df["reward"]) == list(raw["digit_count"] + raw["has_plus"])  # TRL's weights of 1
            assert df["prompt_id"].nunique() == len(raw) // 4
    assert read_rollouts(trl_run / "out").attrs["step"] == 3  # default: the last step
    assert read_rollouts(trl_run / "out").attrs["steps"] == [1, 2, 3]


def test_trl_wandb_completions_table_is_the_same_batch(trl_run):
    tables = sorted(trl_run.rglob("completions_*.table.json"))
    assert tables, "TRL logged no completions table to W&B"
    run_dir = next(p for p in tables[0].parents if p.name.startswith("offline-run-"))
    df = read_rollouts(run_dir, 2)
    raw = pd.read_parquet(trl_run / "out" / "completions" / "completions_00002.parquet")
    assert df.attrs["step"] == 2 and list(df["advantage"]) == pytest.approx(list(raw["advantage"]))
    assert list(df["response"]) == [c[0]["content"] for c in raw["completion"]]


def test_probe_of_a_trl_run_at_a_chosen_step(trl_run, tmp_path, capsys):
    out = tmp_path / "o"
    code = main(["probe", "--model", str(trl_run / "model"), "--rollouts", str(trl_run / "out"), "--step", "2",
                 "--out", str(out), "--no-progress", "--dtype", "float64", "--whatif", "none"])
    text = capsys.readouterr()
    assert code == 0, text.err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["source"]["format"] == "trl-completions" and summary["source"]["step"] == 2
    assert list(summary)[:4] == ["source", "signal", "checks", "memory_gib"]
    assert summary["signal"]["advantages"] == "the trainer's (kept)"
    assert summary["memory_gib"]["estimate"]["total"] > summary["memory_gib"]["estimate"]["weights"] > 0
    raw = pd.read_parquet(trl_run / "out" / "completions" / "completions_00002.parquet")
    frame = pd.read_parquet(out / "tokens.parquet")
    # every kept response carries its logged advantage on each of its tokens
    per = frame.groupby(["prompt_id", "response_index"])["advantage"].agg(["min", "max"])
    assert (per["min"] == per["max"]).all()
    assert sorted(per["min"]) == pytest.approx(sorted(a for a in raw["advantage"] if a != 0), abs=1e-6)
    assert "rollouts: trl-completions step 2 (--step 2)" in text.out
    # the prompts went through the chat template as TRL did: the model saw <|im_start|>user ...
    saved = tmp_path / "s.jsonl"
    assert main(["probe", "--model", str(trl_run / "model"), "--rollouts", str(trl_run / "out"), "--step", "2",
                 "--out", str(tmp_path / "o2"), "--no-ladder", "--no-progress", "--save-rollouts", str(saved)]) == 0
    first = json.loads(saved.read_text().splitlines()[0])
    assert first["prompt"].startswith("<|im_start|>user\n") and first["prompt"].endswith("<|im_start|>assistant\n")
    assert main(["probe", "--model", str(trl_run / "model"), "--rollouts", str(trl_run / "out"), "--step", "9",
                 "--out", str(tmp_path / "o3"), "--no-progress"]) == 2
    assert "no rollouts for --step 9 (steps present: 1, 2, 3" in capsys.readouterr().err


def _verl_writer():
    """veRL's own dump writer, ``RayPPOTrainer._write_generations`` (verl 0.9.1), taken from its source.

    veRL pins an older transformers and needs ray to import its trainer module, so the package is
    installed without its dependencies and the one static method is compiled from the file as it is
    (it uses only json and os). Without the package, the writer is the documented layout itself.
    """
    import ast
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("verl")
    if spec is None:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "trainer" / "ppo" / "ray_trainer.py"
    tree = ast.parse(path.read_text())
    [fn] = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "_write_generations"]
    fn.decorator_list = []
    namespace = {"json": json, "os": os}
    exec(compile(ast.Module(body=[fn], type_ignores=[]), str(path), "exec"), namespace)
    return namespace["_write_generations"]


def _verl_dump(directory, step, rows):
    """Write a step's rollouts as veRL does (its own writer when the verl package is installed)."""
    write = _verl_writer()
    extra_keys = [k for k in rows[0] if k not in ("input", "output", "gts", "score", "step")]
    if write is not None:
        write([r["input"] for r in rows], [r["output"] for r in rows], [r.get("gts") for r in rows],
              [r["score"] for r in rows], {k: [r[k] for r in rows] for k in extra_keys}, str(directory), step)
        return
    base = {k: [r[k] for r in rows] for k in rows[0]}
    lines = [json.dumps({k: v[i] for k, v in base.items()}, ensure_ascii=False) for i in range(len(rows))]
    (directory / f"{step}.jsonl").write_text("\n".join(lines) + "\n")


def test_the_verl_writer_is_verls_own():
    write = _verl_writer()
    if write is None:
        pytest.skip("the verl package is not installed (make test installs it, --no-deps)")
    import inspect
    assert "def _write_generations(inputs, outputs, gts, scores, reward_extra_infos_dict" in inspect.getsource(write)


@pytest.fixture
def verl(tmp_path):
    tok = char_tokenizer(TEMPLATE)
    model = _tiny_llama(tok, seed=1)
    model.save_pretrained(tmp_path / "model")
    tok.save_pretrained(tmp_path / "model")
    dump = tmp_path / "rollout_data"
    dump.mkdir()
    for step in (10, 20):
        rows = []
        for q, question in enumerate(["2+3", "7-1", "é+ü"]):
            messages = [{"role": "user", "content": f"What is {question}?"}]
            ids = tok(tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True),
                      add_special_tokens=False)["input_ids"]
            shown = tok.decode(ids, skip_special_tokens=True)  # veRL decodes with special tokens skipped
            for i in range(4):
                rows.append({"input": shown, "output": f"{q}{i} answer", "gts": str(q), "score": float(i % 2),
                             "step": step, "acc": bool(i % 2)})
        _verl_dump(dump, step, rows)
    return tmp_path, tok


def test_verl_dump_directory_file_and_step(verl):
    d, tok = verl
    df = read_rollouts(d / "rollout_data")
    assert df.attrs["format"] == "verl-dump" and df.attrs["step"] == 20 and df.attrs["steps"] == [10, 20]
    assert read_rollouts(d / "rollout_data", 10).attrs["step"] == 10
    assert read_rollouts(d / "rollout_data" / "10.jsonl").attrs["step"] == 10
    assert list(df["prompt_id"]) == ["p0"] * 4 + ["p1"] * 4 + ["p2"] * 4 and "acc" in df and "answer" in df
    seqs = encode(df, "dump", len(tok), tok, None, None)
    # the chat template was rebuilt: the prompt ids are the ones the policy saw, special tokens included
    want = tok(tok.apply_chat_template([{"role": "user", "content": "What is 2+3?"}], tokenize=False,
                                       add_generation_prompt=True), add_special_tokens=False)["input_ids"]
    assert seqs[0].prompt_ids == list(want)
    assert any("chat template rebuilt" in n for n in df.attrs["notes"])
    with pytest.raises(EntropyLawError, match="no rollouts for `step` 15 \\(steps present: 10, 20"):
        read_rollouts(d / "rollout_data", 15)
    # a bad reward is named as the dump names it (its `score`), not by the probe's column
    bad = read_rollouts(d / "rollout_data")
    bad.loc[4, "reward"] = float("nan")
    with pytest.raises(EntropyLawError, match=r"20.jsonl:5: no score \(the reward: missing, null or NaN"):
        encode(bad, "dump", len(tok), tok, None, None)


def test_verl_dump_that_matches_no_template_is_tokenised_as_dumped(verl):
    d, tok = verl
    _verl_dump(d / "rollout_data", 30, [{"input": "plain text prompt", "output": "x", "score": 1.0, "step": 30},
                                        {"input": "plain text prompt", "output": "y", "score": 0.0, "step": 30}])
    df = read_rollouts(d / "rollout_data", 30)
    seqs = encode(df, "dump", len(tok), tok, None, None)
    assert seqs[0].prompt_ids == tok("plain text prompt", add_special_tokens=False)["input_ids"]
    assert any("tokenised as dumped" in n for n in df.attrs["notes"])


def test_probe_of_a_verl_dump(verl, tmp_path, capsys):
    d, _ = verl
    code = main(["probe", "--model", str(d / "model"), "--rollouts", str(d / "rollout_data"), "--step", "10",
                 "--out", str(tmp_path / "o"), "--no-progress", "--dtype", "float64", "--whatif", "none"])
    out = capsys.readouterr()
    assert code == 0, out.err
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["source"]["step"] == 10 and summary["signal"]["informative_groups"] == 3
    assert summary["signal"]["advantages"] == "computed (grpo)"
    assert "note: veRL dumps text decoded with skip_special_tokens=True" in out.out


@pytest.mark.parametrize("content, expect", [
    ("", "no rollouts found"),
    ('{"input": "a", "output": "b"}\n', "record 1 has no score"),
    ('{"input": "a", "output": "b", "score": 1}\n{oops\n', "1.jsonl:2: not a JSON object"),
])
def test_bad_verl_dumps_are_one_line(tmp_path, capsys, content, expect):
    tiny = tmp_path / "m"
    from entropylaw.probing.model import tiny_model
    tiny_model(vocab=40).save_pretrained(tiny)
    dump = tmp_path / "dump"
    dump.mkdir()
    if content:
        (dump / "1.jsonl").write_text(content)
    code = main(["probe", "--model", str(tiny), "--rollouts", str(dump), "--out", str(tmp_path / "o"),
                 "--no-progress"])
    err = [x for x in capsys.readouterr().err.splitlines() if x.startswith("entropylaw:")]
    assert code == 2 and len(err) == 1 and expect in err[0], err
    assert not (tmp_path / "o").exists()


def test_project_jsonl_with_a_step_column(tmp_path):
    rows = [{"prompt_id": "a", "prompt_ids": [1, 2], "response_ids": [3], "reward": float(i % 2), "step": s}
            for s in (1, 2) for i in range(2)]
    (tmp_path / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert len(read_rollouts(tmp_path / "r.jsonl", 2)) == 2
    with pytest.raises(EntropyLawError, match="no rollouts for `step` 5"):
        read_rollouts(tmp_path / "r.jsonl", 5)
    (tmp_path / "n.jsonl").write_text(json.dumps(rows[0] | {"advantage": 1.0}) + "\n" + json.dumps(rows[1]) + "\n")
    with pytest.raises(EntropyLawError, match=r"advantage is given for some responses and not others \(1 without, "
                                              r"first at row 2;"):
        encode(read_rollouts(tmp_path / "n.jsonl"), "n.jsonl", 10)
    # several steps and no step asked for: the last step's rows, one batch (both steps were read as one)
    whole = read_rollouts(tmp_path / "r.jsonl")
    assert whole.attrs["step"] == 2 and whole.attrs["steps"] == [1, 2] and len(whole) == 2


def test_an_empty_response_text_is_the_end_of_sequence_token_alone():
    """A trainer that samples eos first writes the response as "" (text decoded without special
    tokens); one such row stopped the whole probe ("empty response"). Read as eos alone, counted and
    said; an explicit empty `response_ids` is still an error (the ids say no token was sampled)."""
    import pandas as pd

    from entropylaw.errors import EntropyLawError
    from entropylaw.readers.rollouts.encode import encode

    tok = char_tokenizer(TEMPLATE)
    df = pd.DataFrame([{"prompt_id": "p", "prompt": "1+1", "response": r, "reward": w}
                       for r, w in (("2", 1.0), ("", 0.0), ("", 0.0), ("3", 0.0))])
    seqs = encode(df, "r.jsonl", len(tok), tokenizer=tok)
    assert [s.response_ids for s in seqs[1:3]] == [[tok.eos_token_id]] * 2
    assert seqs[0].response_ids == tok("2", add_special_tokens=False)["input_ids"]
    assert df.attrs["notes"][-1].startswith("2 empty responses read as the end-of-sequence token alone")
    text = pd.DataFrame([{"prompt_id": "p", "prompt_ids": [3, 4], "response_ids": [5], "reward": r}
                         for r in ("1.0", 0.0)])
    assert [s.reward for s in encode(text, "r.jsonl", len(tok), tokenizer=tok)] == [1.0, 0.0]
    assert text.attrs["notes"] == ['1 reward written as text ("1.0") read as the numbers they write']
    ids = pd.DataFrame([{"prompt_id": "p", "prompt_ids": [3, 4], "response_ids": [], "reward": 0.0}])
    with pytest.raises(EntropyLawError, match="r.jsonl:1: empty response"):
        encode(ids, "r.jsonl", len(tok), tokenizer=tok)


def test_trl_rewards_a_function_left_out_are_summed_as_trl_sums_them_and_said():
    """A reward function returning None for a sample: TRL logs NaN and its nansum counts it as 0; the
    reader summed it as 0 without a word."""
    import pandas as pd

    from entropylaw.readers.rollouts.trl_completions import _trl_frame

    df = pd.DataFrame({"step": [5] * 4, "prompt": ["1+1"] * 4, "completion": ["2", "3", "2", "x"],
                       "accuracy": [1.0, 0.0, 1.0, 0.0], "format": [1.0, float("nan"), 0.5, float("nan")],
                       "advantage": [0.5, -0.5, 0.5, -0.5]})
    out = _trl_frame(df, "completions_00005.parquet", 5, [5])
    assert out["reward"].tolist() == [2.0, 0.0, 1.5, 0.0]
    assert "reward values missing (NaN: format: 2) count as 0 in the sum, as TRL's nansum counts them" in \
        out.attrs["notes"]
