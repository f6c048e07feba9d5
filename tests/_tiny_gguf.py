"""Write a transformers LLaMA model as an F32 GGUF file (llama.cpp's tensor names and q/k layout).

Written here from the GGUF format's published conventions so that the probe's GGUF path can
be checked against the model it came from: same weights, so the same logits.
"""

from __future__ import annotations

import numpy as np


def _to_gguf_rows(w: np.ndarray, n_head: int) -> np.ndarray:
    # llama.cpp stores q/k with the two rotary halves of each head interleaved
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def write_llama_gguf(model, path, architecture: str = "llama", tokenizer_words: list | None = None) -> None:
    """``model``: a LlamaForCausalLM. ``tokenizer_words``: optional gpt2-style vocabulary (no merges)."""
    import gguf

    c = model.config
    sd = {k: v.detach().float().numpy() for k, v in model.state_dict().items()}
    w = gguf.GGUFWriter(str(path), architecture)
    w.add_block_count(c.num_hidden_layers)
    w.add_context_length(c.max_position_embeddings)
    w.add_embedding_length(c.hidden_size)
    w.add_feed_forward_length(c.intermediate_size)
    w.add_head_count(c.num_attention_heads)
    w.add_head_count_kv(c.num_key_value_heads)
    w.add_layer_norm_rms_eps(c.rms_norm_eps)
    w.add_rope_freq_base(float(getattr(c, "rope_theta", None) or c.rope_parameters["rope_theta"]))
    w.add_rope_dimension_count(c.hidden_size // c.num_attention_heads)
    w.add_vocab_size(c.vocab_size)
    if tokenizer_words is not None:
        w.add_tokenizer_model("gpt2")
        w.add_token_list(tokenizer_words)
        w.add_token_types([1] * len(tokenizer_words))
        w.add_token_merges([])
        w.add_bos_token_id(0)
        w.add_eos_token_id(1)
    w.add_tensor("token_embd.weight", sd["model.embed_tokens.weight"])
    w.add_tensor("output_norm.weight", sd["model.norm.weight"])
    if "lm_head.weight" in sd and not c.tie_word_embeddings:
        w.add_tensor("output.weight", sd["lm_head.weight"])
    for i in range(c.num_hidden_layers):
        p = f"model.layers.{i}."
        w.add_tensor(f"blk.{i}.attn_norm.weight", sd[p + "input_layernorm.weight"])
        w.add_tensor(f"blk.{i}.attn_q.weight", _to_gguf_rows(sd[p + "self_attn.q_proj.weight"], c.num_attention_heads))
        w.add_tensor(f"blk.{i}.attn_k.weight", _to_gguf_rows(sd[p + "self_attn.k_proj.weight"], c.num_key_value_heads))
        w.add_tensor(f"blk.{i}.attn_v.weight", sd[p + "self_attn.v_proj.weight"])
        w.add_tensor(f"blk.{i}.attn_output.weight", sd[p + "self_attn.o_proj.weight"])
        w.add_tensor(f"blk.{i}.ffn_norm.weight", sd[p + "post_attention_layernorm.weight"])
        w.add_tensor(f"blk.{i}.ffn_gate.weight", sd[p + "mlp.gate_proj.weight"])
        w.add_tensor(f"blk.{i}.ffn_up.weight", sd[p + "mlp.up_proj.weight"])
        w.add_tensor(f"blk.{i}.ffn_down.weight", sd[p + "mlp.down_proj.weight"])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
