"""Per-token entropy at every position a trainer might have averaged over (torch).

One forward per batch of right-padded sequences ``prompt + response + pad``, padded to the
longest response of the step (the block a PPO-style trainer holds), and the exact
entropy of the next-token distribution at each position from
:func:`entropylaw.probing.stream.token_stats` (streamed over the vocabulary). Position
``P + t - 1`` predicts response token ``t`` (``response``); ``P + t`` is the same mask one
to the right (``shifted``); ``1 .. P - 1`` predict prompt tokens (``prompt``); the
positions past a sequence's end, inside the padded block, are ``padding``: they see pad
tokens that the attention mask hides, as in a batched HF forward of a right-padded batch.
``error_scale`` (in ``Tokens.extra``): per response token, ``S + A`` of
:mod:`entropylaw.auditing.numerics` from the float32 logits (row blocks of the full vocabulary).
"""

from __future__ import annotations

import numpy as np
import torch

from entropylaw.auditing.conventions import Tokens
from entropylaw.errors import EntropyLawError
from entropylaw.probing import stream
from entropylaw.probing.model import final_hidden, input_device, lm_head_weight


def _entropy(h, W, temperature):
    y = torch.zeros(h.shape[0], dtype=torch.long, device=W.device)  # the target is not needed for H
    return stream.token_stats(h.to(W.device), W, y, temperature, stream.DEFAULT_CHUNK)["entropy"].double().cpu()


def _error_scale(h, W, temperature):
    """Per row of ``h``: S + A (numerics) of the tempered logits ``h W^T / T``, in float32."""
    rows = max(1, stream.DEFAULT_TILE // W.shape[0])
    out = []
    for r0 in range(0, h.shape[0], rows):
        z = torch.matmul(h[r0:r0 + rows].to(W.device), W.T).float() / temperature
        lse = torch.logsumexp(z, -1, keepdim=True)
        logp = z - lse
        p = logp.exp()
        H = -(p * logp).sum(-1, keepdim=True)
        za = z.abs()
        S = (p * (logp + H).abs() * za).sum(-1)
        A = lse[:, 0].abs() + (p * za).sum(-1)
        out.append((S + A).double().cpu())
    return torch.cat(out)


@torch.no_grad()
def token_entropies(model, seqs: list, temperature: float = 1.0, pad_id: int = 0, batch_size: int = 8,
                    parts=("response", "response_t1", "prompt", "shifted", "padding"),
                    error_scale: bool = False) -> Tokens:
    """:class:`Tokens` of ``seqs`` (ingest.rollouts.encode.Sequence) under ``model`` (``error_scale``: also S + A).

    >>> from entropylaw.readers.rollouts.encode import Sequence
    >>> from entropylaw.probing.model import tiny_model
    >>> m = tiny_model(vocab=16)
    >>> t = token_entropies(m, [Sequence("p", 0, [1, 2], [3, 4, 5], 0.0), Sequence("p", 1, [1], [6], 1.0)])
    >>> [len(x) for x in t.response], [len(x) for x in t.prompt], [len(x) for x in t.padding]
    ([3, 1], [1, 0], [0, 2])
    """
    dev = input_device(model)
    W = lm_head_weight(model)
    R = max(len(s.response_ids) for s in seqs)
    out = {k: [] for k in parts}
    scales = []
    for b0 in range(0, len(seqs), batch_size):
        chunk = seqs[b0:b0 + batch_size]
        L = max(len(s.prompt_ids) for s in chunk) + R
        ids = torch.full((len(chunk), L), pad_id, dtype=torch.long)
        mask = torch.zeros(len(chunk), L, dtype=torch.long)
        for b, s in enumerate(chunk):
            full = s.prompt_ids + s.response_ids
            ids[b, :len(full)] = torch.tensor(full)
            mask[b, :len(full)] = 1
        h = final_hidden(model, ids.to(dev), mask.to(dev))
        for b, s in enumerate(chunk):
            P, n = len(s.prompt_ids), len(s.response_ids)
            spans = {"response": (P - 1, P - 1 + n), "response_t1": (P - 1, P - 1 + n), "prompt": (0, P - 1),
                     "shifted": (P, P + n), "padding": (P - 1 + n, P - 1 + R)}
            for k in parts:
                a, e = spans[k]
                T = 1.0 if k == "response_t1" else temperature
                out[k].append(_entropy(h[b, a:e], W, T).numpy() if e > a else np.zeros(0))
            if error_scale:
                scales.append(_error_scale(h[b, P - 1:P - 1 + n], W, temperature).numpy() if n else np.zeros(0))
    n = sum(len(x) for k in parts for x in out[k])
    bad = sum(int((~np.isfinite(x)).sum()) for k in parts for x in out[k])
    if bad:  # NaN conventions read as "no convention matches: do not trust the log"
        raise EntropyLawError(f"`model`: the entropy is not finite at {bad} of {n} positions; its weights or "
                              "activations hold inf or NaN (a damaged checkpoint?)")
    return Tokens(**out, extra={"error_scale": scales} if error_scale else {})
