"""One update of the policy's weights, the pieces the ladder shares: norms, reductions over ranks,
the bound on a step, and what-if directions built from the plain update's.

>>> import torch
>>> step_too_large(torch.tensor([-0.6]), torch.tensor([1.0]), torch.tensor([0.0]), 0.5)
'moves entropy by 0.6 of H (bound 0.5)'
"""

from __future__ import annotations

import math

import numpy as np
import torch

from entropylaw.probing import dist
from entropylaw.probing.forward import differentiable_stats
from entropylaw.probing.losses import policy_loss
from entropylaw.probing.model import lm_head_weight


def trainable_params(model):
    """The weights the update moves; with --shard, FSDP's sharded ones (never freed unsharded copies)."""
    dist.reshard(model)
    return [p for p in model.parameters() if p.requires_grad]


def too_large_everywhere(dH, H0, dlogp, max_dh_frac, device) -> str | None:
    """:func:`step_too_large` over every rank's tokens."""
    if not dist.data_parallel():
        return step_too_large(dH, H0, dlogp, max_dh_frac)
    t = torch.tensor([float(dH.double().abs().sum()), float(H0.double().sum()), float(len(dH))],
                     dtype=torch.float64, device=device)
    m = torch.tensor([float(dlogp.max()) if len(dlogp) else float("-inf")], dtype=torch.float64, device=device)
    torch.distributed.all_reduce(t)
    torch.distributed.all_reduce(m, op=torch.distributed.ReduceOp.MAX)
    n = max(float(t[2]), 1.0)
    return step_too_large(torch.tensor([float(t[0]) / n]), torch.tensor([float(t[1]) / n]), m, max_dh_frac)


def step_too_large(dH, H0, dlogp, max_dh_frac: float) -> str | None:
    """Why a measured update is not a step (None when it is one).

    It is not when it moves the batch's entropy by more than ``max_dh_frac`` of H (mean
    |dH| over mean H), or some sampled token's probability by more than its own mass
    (p grows past 2p: d log p > log 2).

    >>> import torch
    >>> step_too_large(torch.tensor([-0.6]), torch.tensor([1.0]), torch.tensor([0.0]), 0.5)
    'moves entropy by 0.6 of H (bound 0.5)'
    >>> step_too_large(torch.tensor([-0.1]), torch.tensor([1.0]), torch.tensor([0.0]), 0.5) is None
    True
    """
    if not (bool(torch.isfinite(dH).all()) and bool(torch.isfinite(dlogp).all())):
        return "makes the entropy or a log-probability non-finite"
    frac = float(dH.double().abs().mean() / max(float(H0.double().mean()), 1e-12))
    if frac > max_dh_frac:
        return f"moves entropy by {frac:.2g} of H (bound {max_dh_frac:g})"
    if len(dlogp) and float(dlogp.max()) > math.log(2.0):
        return f"moves a token's probability by {math.expm1(float(dlogp.max())):.3g}x its mass (bound 1)"
    return None


@torch.no_grad()
def set_params(model, params, theta0, direction, eta: float) -> None:
    """theta = theta0 - eta * direction in place (direction None: theta0). FSDP-sharded weights
    (DTensor) are written shard by shard: every rank updates its own slice, and every FSDP module
    is resharded first, so that the next forward gathers the new weights, not a kept copy."""
    dist.reshard(model)
    for i, (p, t0) in enumerate(zip(params, theta0)):
        local = p.to_local() if hasattr(p, "to_local") else p
        base = t0.to_local() if hasattr(t0, "to_local") else t0
        if direction is None:
            local.copy_(base)
        else:
            g = direction[i].to_local() if hasattr(direction[i], "to_local") else direction[i]
            local.copy_(base - eta * g)


def global_norm(tensors) -> float:
    """Euclidean norm of a list of tensors; FSDP-sharded ones (DTensor) summed over their shards."""
    whole, shards, any_shard = 0.0, 0.0, False
    for t in tensors:
        if hasattr(t, "to_local"):
            any_shard = True
            shards += float(t.to_local().double().pow(2).sum())
        else:
            whole += float(t.double().pow(2).sum())
    if any_shard and dist.active():  # the same on every rank: all hold the same kinds of tensors
        t = torch.tensor([shards], dtype=torch.float64,
                         device="cuda" if torch.distributed.get_backend() == "nccl" else "cpu")
        torch.distributed.all_reduce(t)
        shards = float(t)
    return math.sqrt(whole + shards)


def global_sums(values, device) -> list:
    t = torch.tensor(values, dtype=torch.float64, device=device)
    if dist.data_parallel():
        torch.distributed.all_reduce(t)
    return t.cpu().tolist()


def token_partials(stats, tok, iv_cfg, n_total, pcfg):
    """dL/dlog p, dL/dH, dL/dH_clamped per token of the shard's loss (autograd on the [N] values, no model).

    The model's gradient is sum_t of these times the gradients of log p_t, H_t and the
    clamped H_t: when the entropy partials are 0 the update is J^T w with w = -dL/dlog p.
    """
    lp = stats["logp"].detach().double().requires_grad_()
    H = stats["entropy"].detach().double().requires_grad_()
    hc = stats["clamped_entropy"].detach().double().requires_grad_() if "clamped_entropy" in stats else None
    t = {k: v.double() if v.is_floating_point() else v for k, v in tok.items()}
    loss, _ = policy_loss(lp, t["old"], t["adv"], torch.ones_like(lp, dtype=torch.bool), iv_cfg, entropy=H,
                          clamped_entropy=hc if iv_cfg.name == "aent" else None, old_entropy=t["entropy0"],
                          selected=t.get("selected"), weights=t.get("weights"), normaliser=float(n_total))
    leaves = [lp, H] + ([hc] if hc is not None else [])
    grads = torch.autograd.grad(loss, leaves, allow_unused=True)
    zero = torch.zeros_like(lp)
    return [zero if g is None else g.detach() for g in grads]


def reweighting_correction(model, seqs, delta, pcfg):
    """sum_t delta_t grad log p_t over the sequences where delta is non-zero (all ranks reduce)."""
    params = trainable_params(model)
    for p in params:
        p.grad = None
    offsets = np.cumsum([0] + [len(s.response_ids) for s in seqs])
    touched = [i for i in range(len(seqs)) if bool((delta[offsets[i]:offsets[i + 1]] != 0).any())]
    if touched:
        sub = [seqs[i] for i in touched]
        sub_delta = torch.cat([delta[offsets[i]:offsets[i + 1]] for i in touched])
        sub_off = np.cumsum([0] + [len(s.response_ids) for s in sub])
        with torch.enable_grad():
            for index, lp, _, _ in differentiable_stats(model, sub, pcfg.temperature, pcfg.chunk_size, None,
                                                        pcfg.batch_tokens):
                a, b = int(sub_off[index[0]]), int(sub_off[index[-1] + 1])
                (lp * sub_delta[a:b].to(lp.device, lp.dtype)).sum().backward()
    for p in params:
        if p.grad is None:
            p.grad = torch.zeros_like(p)
    dist.all_reduce_grads(params)
    grads = [p.grad.detach().clone() for p in params]
    for p in params:
        p.grad = None
    return grads, len(touched)


def from_plain_update(model, seqs, stats, tok, iv_cfg, n_total, pcfg, base, etas):
    """A what-if's SGD direction from the plain update's, when its loss differs only in token weights.

    Then g = g_none + sum_t (dL/dlog p_t - dL_none/dlog p_t) grad log p_t, back-propagated
    through the sequences whose weights changed only (Clip-Cov detaches a few tokens); an
    unchanged loss (KL-Cov on-policy: its penalty's gradient is 0 at ratio 1) is the plain
    update itself, and its measurement is the plain one's. Returns (direction or None, w, out).
    """
    g_lp, g_H, *rest = token_partials(stats, tok, iv_cfg, n_total, pcfg)
    w = (-g_lp).float()
    entropy_terms = global_sums([float(g_H.abs().sum()) + sum(float(r.abs().sum()) for r in rest)],
                                 head_device(model))[0]
    if entropy_terms != 0.0:
        return None, w, {}
    delta = (g_lp - base["partials"]).float()  # dL/dlogp - dL_none/dlogp, both from token_partials
    changed = global_sums([float((delta != 0).sum())], head_device(model))[0]
    if changed == 0.0 and list(etas) == list(base["etas"][:len(etas)]):
        out = {"w": w, "etas": list(etas), "same_update_as": "none"}
        for k in range(len(etas)):
            out[f"dH_{k}"], out[f"lemma1_{k}"] = base[f"dH_{k}"], base[f"lemma1_{k}"]
        return base["direction"], w, out
    corr, n_seq = reweighting_correction(model, seqs, delta, pcfg)
    return [g0 + c for g0, c in zip(base["direction"], corr)], w, {"reweighted_sequences": n_seq}


def head_device(model):
    return lm_head_weight(model).device
