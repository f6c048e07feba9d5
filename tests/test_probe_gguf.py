"""``probe --model`` with a .gguf file, chat templates, --save-rollouts, and their bad inputs.

The GGUF files are tiny random LLaMA models written here (tests/_tiny_gguf.py) in F32, so
the model transformers dequantises must give exactly the logits of the model written.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
import torch

pytest.importorskip("gguf", reason="the [real] extra (gguf) is not installed")

from _tiny_gguf import write_llama_gguf  # noqa: E402
from _tiny_lm import CHARS, TEMPLATE, char_tokenizer as _char_tokenizer  # noqa: E402

from entropylaw.cli.main import main  # noqa: E402
from entropylaw.errors import EntropyLawError  # noqa: E402
from entropylaw.probing.model import load_model, tiny_model  # noqa: E402

V = 120


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("gguf")
    model = tiny_model("llama", vocab=V, hidden=16, layers=2, seed=3)
    write_llama_gguf(model, d / "tiny.gguf")
    write_llama_gguf(model, d / "bert.gguf", architecture="bert")
    data = (d / "tiny.gguf").read_bytes()
    (d / "cut.gguf").write_bytes(data[:int(len(data) * 0.7)])
    (d / "cut_header.gguf").write_bytes(data[:40])
    (d / "garbage.gguf").write_bytes(b"GGUF" + bytes(range(256)) * 8)
    (d / "notgguf.gguf").write_bytes(b"PK\x03\x04" + bytes(100))
    model.save_pretrained(d / "hf")  # a model directory without a tokenizer
    chat = d / "chat"
    model.save_pretrained(chat)
    _char_tokenizer(TEMPLATE).save_pretrained(chat)
    rows = [{"prompt_id": f"p{p}", "prompt_ids": [3 + p, 4, 5], "reward": float(i % 2),
             "response_ids": [7 + i, 8 + p, 9, 10 + i]} for p in range(3) for i in range(2)]
    _write(d / "roll.jsonl", rows)
    _write(d / "q.jsonl", [{"prompt_id": "a", "prompt": "What is 2+3?", "answer": "5"},
                           {"prompt_id": "b", "prompt": "1+1=", "answer": "2"}])
    return d, model, rows


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def _one_error(capsys, argv, expect, out_paths=()):
    code, out, err = _run(capsys, *argv)
    lines = [ln for ln in err.strip().splitlines() if ln.strip()]
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("entropylaw: error:") and expect in lines[0], err
    for p in out_paths:
        assert not p.exists(), p
    return lines[0]


def test_gguf_dequantised_model_has_the_written_models_logits(files):
    d, model, _ = files
    loaded, tokenizer = load_model(str(d / "tiny.gguf"), "cpu", "auto")
    assert tokenizer is None and loaded.dtype == torch.float32
    x = torch.randint(0, V, (3, 9), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        assert torch.equal(loaded(x).logits, model(x).logits)
    # dequantised, it is a plain model: it saves (a trainer's checkpoints) and reloads as it was
    loaded.save_pretrained(d / "resaved")
    again, _ = load_model(str(d / "resaved"), "cpu", "float32")
    with torch.no_grad():
        assert torch.equal(again(x).logits, model(x).logits)
    as64, _ = load_model(str(d / "tiny.gguf"), "cpu", "float64")
    assert as64.dtype == torch.float64
    with torch.no_grad():
        torch.testing.assert_close(as64(x).logits, model.double()(x).logits, rtol=1e-12, atol=1e-12)
    model.float()


def test_probe_on_gguf_equals_probe_on_the_model_directory(files, tmp_path, capsys):
    d, _, _ = files
    frames = {}
    for name in ("tiny.gguf", "hf"):
        code, out, err = _run(capsys, "probe", "--model", d / name, "--rollouts", d / "roll.jsonl", "--out",
                              tmp_path / name, "--no-ladder", "--no-progress", "--dtype", "float64")
        assert code == 0, err
        frames[name] = pd.read_parquet(tmp_path / name / "tokens.parquet")
    pd.testing.assert_series_equal(frames["tiny.gguf"]["entropy"], frames["hf"]["entropy"], rtol=1e-12)
    pd.testing.assert_series_equal(frames["tiny.gguf"]["cov"], frames["hf"]["cov"], rtol=1e-9, atol=1e-15)


@pytest.mark.parametrize("name, expect", [
    ("cut.gguf", "truncated GGUF file"),
    ("cut_header.gguf", "corrupt or truncated GGUF file"),
    ("garbage.gguf", "corrupt or truncated GGUF file"),
    ("notgguf.gguf", "not a GGUF file"),
    ("bert.gguf", "GGUF architecture 'bert' cannot be loaded by transformers"),
])
def test_bad_gguf_is_one_line_and_nothing_written(files, tmp_path, capsys, name, expect):
    d, _, _ = files
    line = _one_error(capsys, ["probe", "--model", d / name, "--rollouts", d / "roll.jsonl", "--out",
                               tmp_path / "o", "--save-rollouts", tmp_path / "r.jsonl", "--no-progress"],
                      expect, [tmp_path / "o", tmp_path / "r.jsonl"])
    assert name in line


def test_rollout_ids_beyond_the_gguf_models_vocabulary(files, tmp_path, capsys):
    d, _, rows = files
    rows = json.loads(json.dumps(rows))
    rows[3]["response_ids"][2] = V
    _write(tmp_path / "bad.jsonl", rows)
    _one_error(capsys, ["probe", "--model", d / "tiny.gguf", "--rollouts", tmp_path / "bad.jsonl", "--out",
                        tmp_path / "o", "--no-progress"], f"bad.jsonl:4: response_ids has token id {V} outside "
               f"the vocabulary [0, {V})", [tmp_path / "o"])


@pytest.mark.parametrize("model", ["hf", "tiny.gguf"])
def test_text_prompts_without_a_tokenizer(files, tmp_path, capsys, model):
    d, _, _ = files
    _one_error(capsys, ["probe", "--model", d / model, "--generate", "2", "--prompts", d / "q.jsonl", "--out",
                        tmp_path / "o", "--save-rollouts", tmp_path / "r.jsonl", "--no-progress"],
               "q.jsonl:1: prompt is text but the model has no tokenizer", [tmp_path / "o", tmp_path / "r.jsonl"])


def test_chat_template_applied_to_text_prompts_and_rollouts_saved(files, tmp_path, capsys, monkeypatch):
    d, _, _ = files
    saved = tmp_path / "gen.jsonl"
    # a reward that varies inside each group, so that the probe has a learning signal to probe
    (tmp_path / "by_index.py").write_text("calls = [0]\ndef reward(text, answer):\n    calls[0] += 1\n"
                                          "    return float(calls[0] % 2)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    code, out, err = _run(capsys, "probe", "--model", d / "chat", "--generate", "3", "--prompts", d / "q.jsonl",
                          "--max-new-tokens", "5", "--out", tmp_path / "o", "--save-rollouts", saved,
                          "--no-ladder", "--no-progress", "--dtype", "float64", "--reward", "by_index:reward")
    assert code == 0, err
    rows = [json.loads(x) for x in saved.read_text().splitlines()]
    assert [r["prompt_id"] for r in rows] == ["a"] * 3 + ["b"] * 3
    assert [r["response_index"] for r in rows] == [0, 1, 2] * 2
    # the template by hand: one user turn, then the assistant's generation prompt
    ids = CHARS.index
    tok = _char_tokenizer(TEMPLATE)
    start, end = tok.convert_tokens_to_ids("<|im_start|>"), tok.convert_tokens_to_ids("<|im_end|>")
    assert {start, end} == {len(CHARS), len(CHARS) + 1}
    want = [start] + [ids(c) for c in "user\nWhat is 2+3?"] + [end, ids("\n"), start] + \
        [ids(c) for c in "assistant\n"]
    assert rows[0]["prompt_ids"] == want
    assert rows[0]["prompt"] == "<|im_start|>user\nWhat is 2+3?<|im_end|>\n<|im_start|>assistant\n"
    assert all(1 <= len(r["response_ids"]) <= 5 and r["reward"] in (0.0, 1.0) for r in rows)
    # the saved batch read back is the same batch: the same per-token statistics
    code, out, err = _run(capsys, "probe", "--model", d / "chat", "--rollouts", saved, "--out", tmp_path / "o2",
                          "--no-ladder", "--no-progress", "--dtype", "float64")
    assert code == 0, err
    a, b = pd.read_parquet(tmp_path / "o" / "tokens.parquet"), pd.read_parquet(tmp_path / "o2" / "tokens.parquet")
    assert a["token_id"].tolist() == b["token_id"].tolist()
    pd.testing.assert_series_equal(a["entropy"], b["entropy"])
    # --no-chat-template: the text as it is
    code, out, err = _run(capsys, "probe", "--model", d / "chat", "--generate", "1", "--prompts", d / "q.jsonl",
                          "--max-new-tokens", "2", "--out", tmp_path / "o3", "--save-rollouts",
                          tmp_path / "plain.jsonl", "--no-ladder", "--no-progress", "--no-chat-template",
                          "--estimator", "reinforce", "--reward", "by_index:reward")  # one response: A = r
    assert code == 0, err
    first = json.loads((tmp_path / "plain.jsonl").read_text().splitlines()[0])
    assert first["prompt_ids"] == [ids(c) for c in "What is 2+3?"]


def test_chat_template_asked_for_but_absent(files, tmp_path, capsys):
    d, _, _ = files
    tok_dir = tmp_path / "plain_model"
    files[1].save_pretrained(tok_dir)
    _char_tokenizer(None).save_pretrained(tok_dir)
    _one_error(capsys, ["probe", "--model", tok_dir, "--generate", "1", "--prompts", d / "q.jsonl", "--out",
                        tmp_path / "o", "--chat-template", "--no-progress"],
               "--chat-template: the tokenizer has no chat template", [tmp_path / "o"])


@pytest.mark.parametrize("target, expect", [("dir", "Is a directory"), ("x.csv", "expected a .jsonl or .parquet")])
def test_bad_save_rollouts_path_fails_before_the_model_loads(files, tmp_path, capsys, target, expect):
    d, _, _ = files
    path = tmp_path / target
    if target == "dir":
        path.mkdir()
    _one_error(capsys, ["probe", "--model", tmp_path / "no-such-model", "--rollouts", d / "roll.jsonl", "--out",
                        tmp_path / "o", "--save-rollouts", path], expect, [tmp_path / "o"])


def test_missing_and_wrong_kind_of_model_path(files, tmp_path):
    with pytest.raises(EntropyLawError, match="no such file or directory"):
        load_model(str(tmp_path / "nope"), "cpu")
    (tmp_path / "w.bin").write_bytes(b"x")
    with pytest.raises(EntropyLawError, match="a file that is not a .gguf"):
        load_model(str(tmp_path / "w.bin"), "cpu")
