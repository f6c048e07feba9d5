"""Sampling responses with a KV cache, and scoring them in one full forward pass.

Every prompt of a lab task has the same length, so a batch needs no left padding: the
loop feeds the prompts once, then one token per step through the model's KV cache.
Sampling is at temperature ``T`` from ``softmax(z / T)`` with an explicit
``torch.Generator`` (deterministic for a seed); ``greedy=True`` takes the argmax. After a
response's ``<eos>`` it is filled with ``<pad>`` and masked out.

:func:`score` recomputes, without the cache, the log-probability of every response token
and the entropy of the tempered distribution at its position (SPEC section 2), which is
what the loss and the logs use (as veRL recomputes ``old_log_prob``).

>>> import torch
>>> logits = torch.tensor([[[0.0, 1.0, 2.0]]])
>>> lp, ent = token_logp_entropy(logits, torch.tensor([[2]]), temperature=1.0)
>>> round(float(lp), 4), round(float(ent), 4)
(-0.4076, 0.8324)
"""

from __future__ import annotations

import inspect

from dataclasses import dataclass

import torch


@dataclass
class Rollout:
    """Prompts and sampled responses of one batch."""

    prompts: torch.Tensor      # [B, Lp] token ids, all starting with <bos>
    responses: torch.Tensor    # [B, R] token ids, <pad> after <eos>
    mask: torch.Tensor         # [B, R] float, 1 for response tokens up to and including <eos>

    @property
    def input_ids(self) -> torch.Tensor:
        return torch.cat([self.prompts, self.responses], dim=1)

    def lengths(self) -> torch.Tensor:
        return self.mask.sum(dim=1)


@torch.no_grad()
def generate(model, prompts: torch.Tensor, max_new_tokens: int, eos_id: int, pad_id: int,
             temperature: float = 1.0, greedy: bool = False,
             generator: torch.Generator | None = None) -> Rollout:
    """Sample (or greedily decode) one response per prompt row."""
    from transformers import DynamicCache

    batch = prompts.shape[0]
    device = prompts.device
    # transformers >= 5.24 names the cache `cache` (in and out); `past_key_values` before, deprecated since
    name = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
    cache = DynamicCache()
    out = model(input_ids=prompts, use_cache=True, **{name: cache})
    logits = out.logits[:, -1, :]
    cache = getattr(out, name)
    tokens = torch.full((batch, max_new_tokens), pad_id, dtype=torch.long, device=device)
    mask = torch.zeros((batch, max_new_tokens), dtype=torch.float32, device=device)
    alive = torch.ones(batch, dtype=torch.bool, device=device)
    n = 0
    for t in range(max_new_tokens):
        if greedy:
            nxt = logits.argmax(dim=-1)
        else:
            probs = torch.softmax(logits.float() / temperature, dim=-1)
            nxt = torch.multinomial(probs, 1, generator=generator).squeeze(1)
        nxt = torch.where(alive, nxt, torch.full_like(nxt, pad_id))
        tokens[:, t] = nxt
        mask[:, t] = alive.float()
        alive = alive & (nxt != eos_id)
        n = t + 1
        if not alive.any() or t == max_new_tokens - 1:
            break
        pos = torch.full((batch, 1), prompts.shape[1] + t, dtype=torch.long, device=device)
        out = model(input_ids=nxt[:, None], use_cache=True, position_ids=pos, **{name: cache})
        logits = out.logits[:, -1, :]
        cache = getattr(out, name)
    return Rollout(prompts, tokens[:, :n], mask[:, :n])


def token_logp_entropy(logits: torch.Tensor, targets: torch.Tensor, temperature: float = 1.0):
    """Log-prob of ``targets`` and entropy of ``softmax(logits / T)``, per position."""
    z = logits.float() / temperature
    logp_all = torch.log_softmax(z, dim=-1)
    logp = logp_all.gather(-1, targets[..., None]).squeeze(-1)
    entropy = torch.logsumexp(z, dim=-1) - (logp_all.exp() * z).sum(dim=-1)
    return logp, entropy


def response_logits(model, rollout: Rollout) -> torch.Tensor:
    """Logits at the positions that predict each response token: [B, R, V]."""
    lp = rollout.prompts.shape[1]
    r = rollout.responses.shape[1]
    logits = model(input_ids=rollout.input_ids, use_cache=False).logits
    return logits[:, lp - 1: lp - 1 + r, :]


def score(model, rollout: Rollout, temperature: float = 1.0):
    """(logp, entropy, logits) of the response tokens under ``model`` (with gradients if enabled)."""
    logits = response_logits(model, rollout)
    logp, entropy = token_logp_entropy(logits, rollout.responses, temperature)
    return logp, entropy, logits
