"""Closed-form parameter counts from config.json (ingest/hf_config.py), no transformers needed,
cross-checked against the models transformers builds from the same configs."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from entropylaw.errors import EntropyLawError
from entropylaw.readers.hf_config import params_from_config

SMALL = dict(vocab_size=320, hidden_size=32, intermediate_size=72, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=64)
CASES = [
    ("llama", {}), ("llama", {"tie_word_embeddings": True, "attention_bias": True, "mlp_bias": True}),
    ("llama", {"head_dim": 16}), ("mistral", {}), ("qwen2", {"tie_word_embeddings": True}), ("qwen2", {}),
    ("qwen3", {"head_dim": 8}), ("gpt2", {"n_embd": 32, "n_layer": 2, "n_head": 4, "n_positions": 48}),
    ("gpt2", {"n_embd": 32, "n_layer": 3, "n_head": 4, "n_inner": 40, "tie_word_embeddings": False}),
    ("gpt_neox", {"tie_word_embeddings": False}), ("gpt_neox", {"attention_bias": False}),
]


def _counted_by_transformers(config_dict: dict) -> tuple[int, int]:
    """Independent count: build the model with transformers (meta device, no memory), then
    total = distinct parameters, non-embedding = total minus every nn.Embedding and the
    output projection when it is a separate tensor."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    data = dict(config_dict)
    config = transformers.AutoConfig.for_model(data.pop("model_type"), **data)
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(config)
    total = sum(p.numel() for p in model.parameters())   # a tied tensor is yielded once
    seen, embedding = set(), 0
    for module in model.modules():
        if isinstance(module, torch.nn.Embedding) and id(module.weight) not in seen:
            seen.add(id(module.weight))
            embedding += module.weight.numel()
    head = model.get_output_embeddings()
    if head is not None and id(head.weight) not in seen:
        embedding += head.weight.numel() + (head.bias.numel() if getattr(head, "bias", None) is not None else 0)
    return int(total), int(total - embedding)


@pytest.mark.parametrize("model_type, extra", CASES)
def test_closed_form_equals_the_model_transformers_builds(tmp_path, model_type, extra):
    # GPT-2 names its sizes n_embd, n_layer ...: giving it SMALL's names too would set them twice
    config = {"model_type": model_type, **({"vocab_size": 320} if model_type == "gpt2" else SMALL), **extra}
    expected = _counted_by_transformers(config)
    (tmp_path / "config.json").write_text(json.dumps(config))
    assert params_from_config(tmp_path / "config.json") == expected
    assert params_from_config(tmp_path) == expected       # a model directory works too
    assert params_from_config(config) == expected


@pytest.mark.parametrize("family", ["llama", "qwen2"])
def test_llama_block_by_hand(family):
    """A second, arithmetic check: one LLaMA block written out."""
    h, i, v, layers, kv = 32, 72, 320, 2, 2 * 32 // 4
    bias = (h + 2 * kv) if family == "qwen2" else 0  # q, k, v projections carry biases in Qwen2
    per_layer = 2 * h * h + 2 * h * kv + bias + 3 * h * i + 2 * h
    total, non_embedding = params_from_config({"model_type": family, **SMALL})
    assert non_embedding == layers * per_layer + h
    assert total == non_embedding + 2 * v * h


def test_reading_a_config_needs_no_torch_or_transformers(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "qwen2", **SMALL}))
    code = ("import sys; from entropylaw.readers.hf_config import params_from_config; "
            f"print(params_from_config({str(tmp_path)!r})); "
            "print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[1] == "[]"


def test_bad_configs(tmp_path):
    with pytest.raises(EntropyLawError, match="no such file"):
        params_from_config(tmp_path / "missing.json")
    (tmp_path / "config.json").write_text('{"hidden_size": 8}')
    with pytest.raises(EntropyLawError, match="no 'model_type'"):
        params_from_config(tmp_path / "config.json")
    (tmp_path / "config.json").write_text('{"model_type": "mixtral"}')
    with pytest.raises(EntropyLawError, match="model_type 'mixtral' is not one this counts .*`params`"):
        params_from_config(tmp_path / "config.json")
    (tmp_path / "config.json").write_text('{"model_type": "llama", "hidden_size": "8"}')
    with pytest.raises(EntropyLawError, match=r"config.json: hidden_size = '8' \(expected a whole number"):
        params_from_config(tmp_path / "config.json")
    (tmp_path / "config.json").write_text('{"model_type": "llama", "hidden_size": 8}')
    with pytest.raises(EntropyLawError, match="config.json: no num_attention_heads"):
        params_from_config(tmp_path / "config.json")
    (tmp_path / "config.json").write_text('{"model_type": ')
    with pytest.raises(EntropyLawError, match="not valid JSON"):
        params_from_config(tmp_path / "config.json")
