"""Exact non-embedding parameter counts from config.json (probe/params.py)."""

from __future__ import annotations

import pytest

from entropylaw.errors import EntropyLawError
from entropylaw.probe.params import params_from_config


def _hand_count(model) -> tuple[int, int]:
    """Independent count on a real (CPU) model: named parameters, embeddings by name."""
    total = nonemb = 0
    for name, p in model.named_parameters():  # a tied lm_head is listed once, as embed_tokens
        total += p.numel()
        if "embed_tokens" not in name and "lm_head" not in name:
            nonemb += p.numel()
    return total, nonemb


@pytest.mark.parametrize("family, tied", [("llama", False), ("qwen2", True), ("qwen2", False)])
def test_counts_match_instantiated_model(tmp_path, family, tied):
    import torch
    from transformers import AutoModelForCausalLM, LlamaConfig, Qwen2Config

    cls = LlamaConfig if family == "llama" else Qwen2Config
    config = cls(vocab_size=320, hidden_size=32, intermediate_size=72, num_hidden_layers=2,
                 num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=tied)
    config.to_json_file(str(tmp_path / "config.json"))
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config)
    expected = _hand_count(model)
    assert params_from_config(tmp_path / "config.json") == expected
    assert params_from_config(tmp_path) == expected  # a model directory works too
    # and the closed form for Llama-style blocks, as a second, arithmetic check
    h, i, v, layers, kv = 32, 72, 320, 2, 2 * 32 // 4
    bias = (h + 2 * kv) if family == "qwen2" else 0  # q, k, v projections carry biases in Qwen2
    per_layer = 2 * h * h + 2 * h * kv + bias + 3 * h * i + 2 * h
    assert expected[1] == layers * per_layer + h
    assert expected[0] == expected[1] + v * h * (1 if tied else 2)


def test_bad_configs(tmp_path):
    with pytest.raises(EntropyLawError, match="no such file"):
        params_from_config(tmp_path / "missing.json")
    (tmp_path / "config.json").write_text('{"hidden_size": 8}')
    with pytest.raises(EntropyLawError, match="no 'model_type'"):
        params_from_config(tmp_path / "config.json")
