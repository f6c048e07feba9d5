"""Sampling G responses per prompt with ``model.generate`` and scoring them.

Prompt files are JSONL (or parquet) with ``prompt`` (text) or ``prompt_ids``, optional
``prompt_id`` and ``answer``.
"""

from __future__ import annotations

import math

import torch

from entropylaw.errors import EntropyLawError
from entropylaw.probe.model import input_device
from entropylaw.probe.rollouts import Sequence, _ids, prompt_ids, read_prompts_frame


def read_prompts(path, tokenizer, vocab_size: int, chat_template: bool | None = None) -> list:
    """[(prompt_id, prompt_ids, answer)] from a prompt file (text prompts: see :func:`prompt_ids`)."""
    df = read_prompts_frame(path)
    out = []
    for i, row in enumerate(df.to_dict("records")):
        line = i + 1
        prompt = row.get("prompt")
        if row.get("prompt_ids") is not None and not (isinstance(row.get("prompt_ids"), float)):
            ids = _ids(row["prompt_ids"], path, line, "prompt_ids", vocab_size)
        elif isinstance(prompt, str) or (prompt is not None and not isinstance(prompt, float)):
            ids = _ids(prompt_ids(prompt, tokenizer, chat_template, f"{path}:{line}"), path, line, "prompt",
                       vocab_size)
        else:
            raise EntropyLawError(f"{path}:{line}: no prompt or prompt_ids")
        if not ids:
            raise EntropyLawError(f"{path}:{line}: empty prompt")
        answer = row.get("answer")
        if isinstance(answer, float) and math.isnan(answer):
            answer = None
        out.append((str(row.get("prompt_id", i)), ids, answer))
    return out


@torch.no_grad()
def sample(model, prompts: list, n: int, temperature: float = 1.0, max_new_tokens: int = 256,
           eos_token_id=None, seed: int = 0, tokenizer=None, reward_fn=None) -> list:
    """G sampled responses per prompt as :class:`Sequence` with rewards (0 without reward_fn)."""
    torch.manual_seed(seed)
    dev = input_device(model)
    eos = eos_token_id if eos_token_id is not None else getattr(model.generation_config, "eos_token_id", None)
    eos_set = set(eos if isinstance(eos, (list, tuple)) else ([eos] if eos is not None else []))
    seqs = []
    for pid, ids, answer in prompts:
        inp = torch.tensor([ids], device=dev)
        out = model.generate(inp, attention_mask=torch.ones_like(inp), do_sample=True, temperature=temperature,
                             top_p=1.0, top_k=0, max_new_tokens=max_new_tokens, num_return_sequences=n,
                             pad_token_id=next(iter(eos_set), 0), eos_token_id=list(eos_set) or None)
        for j in range(n):
            resp = out[j, len(ids):].tolist()
            for k, t in enumerate(resp):  # cut after the first eos (keep it: it was sampled)
                if t in eos_set:
                    resp = resp[:k + 1]
                    break
            if not resp:
                continue
            reward = 0.0
            if reward_fn is not None:
                text = tokenizer.decode(resp, skip_special_tokens=True) if tokenizer is not None else \
                    " ".join(map(str, resp))
                reward = float(reward_fn(text, answer))
            seqs.append(Sequence(pid, j, list(ids), resp, reward, extra={"answer": answer}))
    return seqs
