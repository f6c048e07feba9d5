"""Run the model over rollouts and collect per-token statistics at the valid positions.

Sequences are right-padded into batches of at most ``batch_tokens`` padded tokens. The
response token at absolute position P + t is predicted by the hidden state at P + t - 1;
only those hidden states reach :mod:`entropylaw.probe.stream`.
"""

from __future__ import annotations

import torch

from entropylaw.probe import stream
from entropylaw.probe.model import final_hidden, input_device, lm_head_weight


def batches(seqs: list, batch_tokens: int) -> list:
    """Index lists of sequences packed so that (count x longest length) <= batch_tokens."""
    out, current, longest = [], [], 0
    for i, s in enumerate(seqs):
        n = len(s.prompt_ids) + len(s.response_ids)
        if current and max(longest, n) * (len(current) + 1) > batch_tokens:
            out.append(current)
            current, longest = [], 0
        current.append(i)
        longest = max(longest, n)
    if current:
        out.append(current)
    return out


def hidden_at_valid(model, seqs: list, index: list) -> tuple:
    """Hidden states [n, d] predicting each response token of ``seqs[index]`` and the targets [n]."""
    dev = input_device(model)
    lengths = [len(seqs[i].prompt_ids) + len(seqs[i].response_ids) for i in index]
    L = max(lengths)
    ids = torch.zeros(len(index), L, dtype=torch.long)
    mask = torch.zeros(len(index), L, dtype=torch.long)
    rows, cols, targets = [], [], []
    for b, i in enumerate(index):
        s = seqs[i]
        full = s.prompt_ids + s.response_ids
        ids[b, :len(full)] = torch.tensor(full)
        mask[b, :len(full)] = 1
        P = len(s.prompt_ids)
        rows += [b] * len(s.response_ids)
        cols += list(range(P - 1, P - 1 + len(s.response_ids)))
        targets += s.response_ids
    h = final_hidden(model, ids.to(dev), mask.to(dev))
    W = lm_head_weight(model)
    h = h[torch.tensor(rows, device=h.device), torch.tensor(cols, device=h.device)].to(W.device)
    return h, torch.tensor(targets, device=W.device)


@torch.no_grad()
def collect_stats(model, seqs: list, temperature: float = 1.0, chunk_size: int = stream.DEFAULT_CHUNK,
                  clamp_p: float | None = 0.3, batch_tokens: int = 4096, keep_hidden: bool = False,
                  progress=None) -> dict:
    """Streamed logp, entropy, sum_p2, clamped_entropy for every valid token (float32, CPU).

    With ``keep_hidden`` also returns ``hidden`` [N, d] (for Lemma 1 after an update).
    """
    W = lm_head_weight(model)
    parts: dict = {}
    hiddens = []
    for index in batches(seqs, batch_tokens):
        h, y = hidden_at_valid(model, seqs, index)
        s = stream.token_stats(h, W, y, temperature, chunk_size, clamp_p, second_moment=True)
        for k, v in s.items():
            parts.setdefault(k, []).append(v.cpu())
        if keep_hidden:
            hiddens.append(h)
        if progress is not None:
            progress.update(sum(len(seqs[i].response_ids) for i in index))
    out = {k: torch.cat(v) for k, v in parts.items()}
    if keep_hidden:
        out["hidden"] = torch.cat(hiddens)
    return out


def differentiable_stats(model, seqs: list, temperature: float = 1.0, chunk_size: int = stream.DEFAULT_CHUNK,
                         clamp_p: float | None = None, batch_tokens: int = 4096):
    """Yield (sequence indices, logp, entropy, clamped entropy) per batch, with gradient."""
    W = lm_head_weight(model)
    for index in batches(seqs, batch_tokens):
        h, y = hidden_at_valid(model, seqs, index)
        lp, H, hc = stream.logprob_entropy(h, W, y, temperature, chunk_size, clamp_p)
        yield index, lp, H, hc
