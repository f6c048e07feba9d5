"""Exact parameter counts from a Hugging Face ``config.json``, in closed form (no torch, no
transformers, no weights).

The scaling fits of the entropy law use N = parameters without embeddings (SPEC 3,
Kaplan et al.'s convention): every parameter except the token embedding, the position
embedding where the architecture learns one, and the output projection when it is not
tied to the input embedding. The decoder blocks of the common open architectures are
counted from the config's sizes:

==============================  ===========================================================
``model_type``                  one block
==============================  ===========================================================
llama, mistral, qwen2, qwen3    attention q, k, v, o (grouped k/v heads, ``head_dim``), gated
                                MLP (gate, up, down), two RMSNorms; qwen2: q/k/v biases;
                                qwen3: RMSNorms on q and k; llama: ``attention_bias``,
                                ``mlp_bias``
gpt2                            fused qkv and output projections with biases, MLP with
                                biases, two LayerNorms; learned position embedding
gpt_neox                        as gpt2 (``attention_bias``), rotary positions
==============================  ===========================================================

plus the final norm. ``tests/test_ingest_params.py`` checks every family against the
parameters of a model that transformers builds from the same config.

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

LLAMA_LIKE = ("llama", "mistral", "qwen2", "qwen3")
GPT_LIKE = ("gpt2", "gpt_neox")
SUPPORTED = LLAMA_LIKE + GPT_LIKE
# the library's default when a config leaves the key out
TIED_BY_DEFAULT = {"gpt2": True}


def read_config(source: str | os.PathLike | dict) -> tuple[dict, str]:
    """``(config dict, where)`` from a dict, a ``config.json`` or a model directory."""
    if isinstance(source, dict):
        return dict(source), "config"
    path = Path(source)
    if path.is_dir():
        path = path / "config.json"
    where = str(path)
    if not path.is_file():
        raise EntropyLawError(f"{where}: no such file (expected a Hugging Face config.json)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as err:
        raise EntropyLawError(f"{where}: not valid JSON ({err})") from None
    if not isinstance(data, dict):
        raise EntropyLawError(f"{where}: expected a JSON object (a Hugging Face config.json)")
    return data, where


class _Config:
    """Typed access to the config's sizes, with one-line errors naming the key."""

    def __init__(self, data: dict, where: str):
        self.data, self.where = data, where

    def int(self, *names: str, default=None) -> int:
        for name in names:
            value = self.data.get(name)
            if value is not None:
                if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                    raise EntropyLawError(f"{self.where}: {name} = {value!r} (expected a whole number >= 0)")
                return value
        if default is None:
            raise EntropyLawError(f"{self.where}: no {' or '.join(names)} (needed to count the parameters)")
        return default

    def flag(self, name: str, default: bool) -> bool:
        value = self.data.get(name)
        return default if value is None else bool(value)


def _llama_like(c: _Config, model_type: str) -> int:
    """Non-embedding parameters of a LLaMA-style decoder (see the module table)."""
    h = c.int("hidden_size")
    heads = c.int("num_attention_heads")
    kv = c.int("num_key_value_heads", default=heads)
    head_dim = c.int("head_dim", default=h // heads if heads else 0)
    inter = c.int("intermediate_size")
    layers = c.int("num_hidden_layers")
    q, k = heads * head_dim, kv * head_dim
    attn = h * q + 2 * h * k + q * h
    if model_type == "qwen2":
        attn += q + 2 * k  # q, k, v carry biases
    elif c.flag("attention_bias", False):
        attn += q + 2 * k + h
    if model_type == "qwen3":
        attn += 2 * head_dim  # RMSNorm on each head's q and k
    mlp = 3 * h * inter + (2 * inter + h if c.flag("mlp_bias", False) else 0)
    return layers * (attn + mlp + 2 * h) + h


def _gpt_like(c: _Config, model_type: str) -> int:
    """Non-embedding parameters of a GPT-2 / GPT-NeoX decoder (LayerNorms with biases)."""
    if model_type == "gpt2":
        h = c.int("n_embd", "hidden_size")
        layers = c.int("n_layer", "num_hidden_layers")
        inter = c.int("n_inner", default=4 * h)
        bias = True
    else:
        h = c.int("hidden_size")
        layers = c.int("num_hidden_layers")
        inter = c.int("intermediate_size", default=4 * h)
        bias = c.flag("attention_bias", True)
    attn = 4 * h * h + (4 * h if bias else 0)
    mlp = 2 * h * inter + inter + h
    return layers * (attn + mlp + 4 * h) + 2 * h


def params_from_config(source: str | os.PathLike | dict) -> tuple[int, int]:
    """``(total, non_embedding)`` parameter counts of the causal LM a config describes."""
    data, where = read_config(source)
    model_type = data.get("model_type")
    if not model_type:
        raise EntropyLawError(f"{where}: no 'model_type' (expected a Hugging Face model config)")
    if model_type not in SUPPORTED:
        raise EntropyLawError(f"{where}: model_type {model_type!r} is not one this counts "
                              f"({', '.join(SUPPORTED)}); give the size with `params` instead")
    c = _Config(data, where)
    if model_type in LLAMA_LIKE:
        non_embedding = _llama_like(c, model_type)
        h, positions = c.int("hidden_size"), 0
    else:
        non_embedding = _gpt_like(c, model_type)
        h = c.int("n_embd", "hidden_size")
        positions = c.int("n_positions", "max_position_embeddings", default=1024) if model_type == "gpt2" else 0
    vocab = c.int("vocab_size")
    tied = c.flag("tie_word_embeddings", TIED_BY_DEFAULT.get(model_type, False))
    embedding = vocab * h + positions * h + (0 if tied else vocab * h)
    return non_embedding + embedding, non_embedding
