"""Policy sizes: small LLaMA-style causal LMs from ``transformers``.

Presets span 31x in non-embedding parameters (N, the count the Entropy Mechanism paper
regresses a and b on: everything except the input embedding and the output head)::

    name  d_model  layers  heads  d_ff   N (non-embedding)
    xs         48       1      2   128      27,792
    s          64       2      4   192     106,816
    m          96       3      4   256     332,448
    l         128       4      4   384     853,120

Any other size can be named ``d<D>l<L>`` (e.g. ``d256l8``: 8 heads of 32, d_ff = 8/3 D
rounded up to a multiple of 32; ``d192l6`` has 2.7 M non-embedding parameters).
:func:`check_fits` refuses, before anything starts, a size whose training state would
not fit in the device's free memory.

>>> spec = size_spec("m")
>>> nonembedding_params(spec)
332448
>>> size_spec("d256l8").n_heads, size_spec("d256l8").d_ff
(8, 704)
>>> nonembedding_params(size_spec("l")) / nonembedding_params(size_spec("xs")) > 30
True
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass

from entropylaw.errors import EntropyLawError


@dataclass(frozen=True)
class SizeSpec:
    name: str
    d_model: int
    n_layers: int
    n_heads: int
    d_ff: int

    def config(self) -> dict:
        return asdict(self)


PRESETS = {
    "xs": SizeSpec("xs", 48, 1, 2, 128),
    "s": SizeSpec("s", 64, 2, 4, 192),
    "m": SizeSpec("m", 96, 3, 4, 256),
    "l": SizeSpec("l", 128, 4, 4, 384),
}
_CUSTOM = re.compile(r"^d(\d+)l(\d+)$")


def size_spec(name: str) -> SizeSpec:
    """A preset by name, or a custom ``d<D>l<L>`` size."""
    if name in PRESETS:
        return PRESETS[name]
    m = _CUSTOM.match(name)
    if not m:
        raise EntropyLawError(f"unknown size {name!r}: expected one of {', '.join(PRESETS)} "
                              "or d<D>l<L> such as d256l8")
    d, layers = int(m[1]), int(m[2])
    if d < 8 or d % 8 or layers < 1:
        raise EntropyLawError(f"size {name!r}: d_model must be a positive multiple of 8 and layers >= 1")
    heads = max(1, d // 32) if d % 32 == 0 else 1
    d_ff = 32 * math.ceil(8 * d / 3 / 32)
    return SizeSpec(name, d, layers, heads, d_ff)


def nonembedding_params(spec: SizeSpec) -> int:
    """Parameters without embeddings/head, from the shapes (LLaMA: no biases, RMSNorm)."""
    d, f = spec.d_model, spec.d_ff
    per_layer = 4 * d * d + 3 * d * f + 2 * d  # q,k,v,o; gate, up, down; two norms
    return spec.n_layers * per_layer + d      # + final norm


def total_params(spec: SizeSpec, vocab_size: int) -> int:
    """All parameters (untied input embedding and output head)."""
    return nonembedding_params(spec) + 2 * vocab_size * spec.d_model


def build_model(spec: SizeSpec, vocab_size: int, pad_id: int, bos_id: int, eos_id: int, max_len: int):
    """A freshly initialised ``LlamaForCausalLM`` (call ``torch.manual_seed`` first)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(vocab_size=vocab_size, hidden_size=spec.d_model, intermediate_size=spec.d_ff,
                      num_hidden_layers=spec.n_layers, num_attention_heads=spec.n_heads,
                      num_key_value_heads=spec.n_heads, max_position_embeddings=max(64, max_len),
                      tie_word_embeddings=False, pad_token_id=pad_id, bos_token_id=bos_id,
                      eos_token_id=eos_id, attention_dropout=0.0, rms_norm_eps=1e-6)
    cfg._attn_implementation = "eager"  # deterministic and fastest at these sizes on CPU
    return LlamaForCausalLM(cfg)


def count_nonembedding(model) -> int:
    """Non-embedding parameters of a built model, counted from its tensors."""
    skip = {id(model.get_input_embeddings().weight), id(model.get_output_embeddings().weight)}
    return sum(p.numel() for p in model.parameters() if id(p) not in skip)


def memory_needed(spec: SizeSpec, vocab_size: int, batch_tokens: int) -> float:
    """Rough bytes for training: fp32 weights, grads, two Adam moments, plus activations
    kept for backward (about 20 floats per token per layer per d_model, and logits)."""
    state = 16 * total_params(spec, vocab_size)
    acts = 4 * batch_tokens * (20 * spec.n_layers * spec.d_model + 4 * vocab_size)
    return float(state + acts)


def available_memory(device: str) -> float:
    """Free bytes on ``device`` (CUDA: free GPU memory; CPU: MemAvailable)."""
    if device.startswith("cuda"):
        import torch

        return float(torch.cuda.mem_get_info()[0])
    from entropylaw.probing.memory import available_bytes

    have = available_bytes()
    if have is not None:
        return float(have)
    import os

    return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES"))


def check_fits(spec: SizeSpec, vocab_size: int, batch_tokens: int, device: str) -> None:
    """Raise before starting when the size cannot fit in free memory."""
    need = memory_needed(spec, vocab_size, batch_tokens)
    have = available_memory(device)
    if need > 0.8 * have:
        raise EntropyLawError(
            f"size {spec.name!r} ({nonembedding_params(spec):,} non-embedding parameters) needs about "
            f"{need / 2**30:.1f} GiB to train with {batch_tokens} tokens per batch, but {device} has "
            f"{have / 2**30:.1f} GiB free; choose a smaller size or fewer prompts per step")
