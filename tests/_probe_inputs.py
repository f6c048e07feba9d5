"""Rollouts of random token ids for the probe's tests: a few prompt groups, rewards alternating
within each group (so every group carries a learning signal), fixed by a seed."""

from __future__ import annotations

import json


def rollout_rows(vocab: int, n_prompts: int = 4, per_prompt: int = 3, lengths=(3, 9), seed: int = 0,
                 prompt_id=lambda p: f"p{p}") -> list[dict]:
    """One row per response: prompt_id, prompt_ids (4 tokens), reward, response_ids (``lengths``: [lo, hi))."""
    import torch

    g = torch.Generator().manual_seed(seed)
    rows = []
    for p in range(n_prompts):
        prompt = torch.randint(2, vocab, (4,), generator=g).tolist()
        for i in range(per_prompt):
            n = int(torch.randint(*lengths, (1,), generator=g))
            rows.append({"prompt_id": prompt_id(p), "prompt_ids": prompt, "reward": float((i + p) % 2),
                         "response_ids": torch.randint(2, vocab, (n,), generator=g).tolist()})
    return rows


def write_jsonl(path, rows):
    with open(path, "w") as f:
        for r in rows:
            print(json.dumps(r), file=f)
    return path
