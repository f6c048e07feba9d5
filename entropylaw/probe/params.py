"""Exact parameter counts from a Hugging Face ``config.json``, without weights.

The scaling fits of the entropy law use N = parameters without embeddings (SPEC 3,
Kaplan et al.'s convention). The model is built from its config on PyTorch's ``meta``
device (shapes only, no memory, no download), then

- total = every distinct parameter (tied input/output embeddings count once);
- non-embedding = total minus every ``nn.Embedding`` (token, and position where the
  architecture has one) minus the output projection when it is not tied to the input one.

torch and transformers are imported inside the functions only.

>>> counts = params_from_config({"model_type": "llama", "vocab_size": 100, "hidden_size": 8,
...     "intermediate_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2,
...     "num_key_value_heads": 2, "tie_word_embeddings": True})
>>> counts  # 4 attention 8x8 (256) + 3 MLP 8x16 (384) + 3 RMSNorm 8 (24); tied 100x8 embedding
(1464, 664)
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from entropylaw.errors import EntropyLawError


def load_config(source: str | os.PathLike | dict):
    """A transformers ``PretrainedConfig`` from a dict, a config.json or a model directory."""
    from transformers import AutoConfig

    if isinstance(source, dict):
        data = dict(source)
        where = "config"
    else:
        path = Path(source)
        if path.is_dir():
            path = path / "config.json"
        where = str(path)
        if not path.is_file():
            raise EntropyLawError(f"{where}: no such file (expected a Hugging Face config.json)")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as err:
            raise EntropyLawError(f"{where}: not valid JSON ({err})") from None
    model_type = data.pop("model_type", None)
    if not model_type:
        raise EntropyLawError(f"{where}: no 'model_type' (expected a Hugging Face model config)")
    try:
        return AutoConfig.for_model(model_type, **data)
    except (ValueError, KeyError) as err:
        raise EntropyLawError(f"{where}: transformers does not know model_type {model_type!r} ({err})") from None


def params_from_config(source: str | os.PathLike | dict) -> tuple[int, int]:
    """``(total, non_embedding)`` parameter counts of the model a config describes."""
    import torch
    from torch import nn
    from transformers import AutoModelForCausalLM

    config = load_config(source)
    with torch.device("meta"):
        try:
            model = AutoModelForCausalLM.from_config(config)
        except ValueError as err:
            raise EntropyLawError(f"{source}: cannot build a causal LM from this config ({err})") from None
    total = sum(p.numel() for p in model.parameters())  # parameters() yields a tied tensor once
    embedding_ids = set()
    embedding = 0
    for module in model.modules():
        if isinstance(module, nn.Embedding) and id(module.weight) not in embedding_ids:
            embedding_ids.add(id(module.weight))
            embedding += module.weight.numel()
    output = model.get_output_embeddings()
    if output is not None and id(output.weight) not in embedding_ids:
        embedding += output.weight.numel() + (output.bias.numel() if getattr(output, "bias", None) is not None else 0)
    return int(total), int(total - embedding)
