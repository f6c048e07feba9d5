"""Run the model over rollouts and collect per-token statistics at the valid positions.

Sequences are right-padded into batches of at most ``batch_tokens`` padded tokens. The
response token at absolute position P + t is predicted by the hidden state at P + t - 1;
only those hidden states reach :mod:`entropylaw.probing.stream`.
"""

from __future__ import annotations

import torch

from entropylaw.errors import EntropyLawError
from entropylaw.probing import stream
from entropylaw.probing.model import final_hidden, input_device, lm_head_weight


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


def _prompt_groups(seqs: list, index: list) -> list:
    """Positions in ``index`` grouped by identical prompt (first-seen order)."""
    groups: dict = {}
    for k, i in enumerate(index):
        groups.setdefault(tuple(seqs[i].prompt_ids), []).append(k)
    return list(groups.values())


def _padded(rows: list, dev) -> tuple:
    L = max(len(r) for r in rows)
    ids = torch.zeros(len(rows), L, dtype=torch.long)
    mask = torch.zeros(len(rows), L, dtype=torch.long)
    for b, r in enumerate(rows):
        ids[b, :len(r)] = torch.tensor(r)
        mask[b, :len(r)] = 1
    return ids.to(dev), mask.to(dev)


def _cache_kwarg(decoder) -> str:
    """transformers >= 5.24 names the cache argument ``cache`` (``past_key_values`` before)."""
    import inspect

    params = inspect.signature(decoder.forward).parameters
    return "cache" if "cache" in params else "past_key_values"


def _shared_prefix(model, prompt: list, responses: list, dev) -> list:
    """Hidden states predicting each response's tokens, the prompt run once for the group.

    The prompt's keys and values are computed once and repeated for the G responses
    (``DynamicCache.batch_repeat_interleave``), so a group costs P + G x R token positions
    instead of G x (P + R): the same numbers up to float rounding (tested against the
    unshared forward), and differentiable.
    """
    from transformers import DynamicCache

    decoder = model.get_decoder()
    p = torch.tensor([prompt], device=dev)
    cache = DynamicCache(config=model.config)
    kw = _cache_kwarg(decoder)
    out = decoder(input_ids=p, attention_mask=torch.ones_like(p), use_cache=True, **{kw: cache})
    h_prompt = (out.last_hidden_state if hasattr(out, "last_hidden_state") else out[0])[0, -1]
    rest = [r[:-1] for r in responses]  # the last response token predicts nothing we need
    if max(len(r) for r in rest) == 0:
        return [h_prompt[None] for _ in responses]
    cache.batch_repeat_interleave(len(responses))
    ids, mask = _padded([r if r else [0] for r in rest], dev)
    for b, r in enumerate(rest):
        if not r:
            mask[b] = 0
    full_mask = torch.cat([torch.ones(len(rest), len(prompt), dtype=mask.dtype, device=dev), mask], 1)
    out = decoder(input_ids=ids, attention_mask=full_mask, use_cache=True, **{kw: cache})
    h = out.last_hidden_state if hasattr(out, "last_hidden_state") else out[0]
    return [torch.cat([h_prompt[None], h[b, :len(r)]]) for b, r in enumerate(rest)]


def hidden_at_valid(model, seqs: list, index: list, share_prefix: bool = True) -> tuple:
    """Hidden states [n, d] predicting each response token of ``seqs[index]`` and the targets [n].

    Responses to one prompt share its forward (:func:`_shared_prefix`); the other sequences
    are right-padded into one batch.
    """
    dev = input_device(model)
    W = lm_head_weight(model)
    per_seq: list = [None] * len(index)
    singles = []
    for members in _prompt_groups(seqs, index):
        if share_prefix and len(members) > 1:
            hs = _shared_prefix(model, seqs[index[members[0]]].prompt_ids,
                                [seqs[index[k]].response_ids for k in members], dev)
            for k, h in zip(members, hs):
                per_seq[k] = h
        else:
            singles += members
    if singles:
        ids, mask = _padded([seqs[index[k]].prompt_ids + seqs[index[k]].response_ids for k in singles], dev)
        h = final_hidden(model, ids, mask)
        for b, k in enumerate(singles):
            s = seqs[index[k]]
            P = len(s.prompt_ids)
            per_seq[k] = h[b, P - 1:P - 1 + len(s.response_ids)]
    targets = [t for i in index for t in seqs[i].response_ids]
    return torch.cat(per_seq).to(W.device), torch.tensor(targets, device=W.device)


def _check_finite(stats: dict, seqs: list, index: list, dtype, where: str) -> None:
    """Every statistic a number: a float16 model's logits past 65504 (or inf/NaN weights) gave NaN tables."""
    bad = ~torch.isfinite(stats["logp"]) | ~torch.isfinite(stats["entropy"])
    if not bool(bad.any()):
        return
    lengths = torch.tensor([len(seqs[i].response_ids) for i in index])
    first = seqs[index[int(torch.searchsorted(lengths.cumsum(0), int(bad.nonzero()[0]), right=True))]]
    raise EntropyLawError(f"{where}: the log-probability or entropy is not finite at {int(bad.sum())} of {len(bad)} "
                          f"response tokens (first: prompt {first.prompt_id}, response {first.response_index}); "
                          f"{nonfinite_why(dtype)}")


def nonfinite_why(dtype) -> str:
    """Why a model's logits are not finite, and what to do."""
    if dtype in (torch.float16, torch.bfloat16):
        return f"its {str(dtype).removeprefix('torch.')} logits overflow: load it as float32 (`dtype` float32)"
    return "its weights or activations hold inf or NaN (a damaged checkpoint?)"


@torch.no_grad()
def collect_stats(model, seqs: list, temperature: float = 1.0, chunk_size: int = stream.DEFAULT_CHUNK,
                  clamp_p: float | None = 0.3, batch_tokens: int = 4096, keep_hidden: bool = False,
                  progress=None, where: str = "`model`") -> dict:
    """Streamed logp, entropy, sum_p2, clamped_entropy for every valid token (float32, CPU).

    With ``keep_hidden`` also returns ``hidden`` [N, d] (for Lemma 1 after an update). A token
    whose statistics are not finite is an error naming ``where`` (the model), not a NaN table.
    """
    W = lm_head_weight(model)
    parts: dict = {}
    hiddens = []
    for index in batches(seqs, batch_tokens):
        h, y = hidden_at_valid(model, seqs, index)
        s = stream.token_stats(h, W, y, temperature, chunk_size, clamp_p, second_moment=True)
        _check_finite(s, seqs, index, W.dtype, where)
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
