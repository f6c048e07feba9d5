"""Which tokens each entropy intervention touches, and how (SPEC section 5).

Every function takes per-token tensors of one shape (``[batch, length]`` or flat) and a
boolean ``valid`` mask of response tokens; values at invalid positions are ignored and
returned as 0 / False / 1. ``group`` (optional, same shape, integer ids) restricts the
statistic to each group separately: pass the micro-batch index of each token for the
official code's per-micro-batch scope, leave it ``None`` for the whole batch.

>>> import torch
>>> logp = torch.tensor([-0.1, -2.0, -0.5, -3.0]); adv = torch.tensor([1., 1., -1., -1.])
>>> [round(c, 4) for c in token_covariance(logp, adv, torch.ones(4, dtype=torch.bool)).tolist()]
[1.3, -0.6, -0.9, 1.6]
>>> kl_cov_mask(token_covariance(logp, adv, torch.ones(4, dtype=torch.bool)),
...             torch.ones(4, dtype=torch.bool), ratio=0.5).tolist()
[True, False, False, True]
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch

INTERVENTIONS = ("none", "entropy_bonus", "clip_higher", "clip_cov", "kl_cov", "steer", "aent")


def _groups(valid: torch.Tensor, group: torch.Tensor | None) -> torch.Tensor:
    """Dense group index (0..G-1) of every token; invalid tokens keep their id but are masked."""
    if group is None:
        return torch.zeros(valid.shape, dtype=torch.long, device=valid.device)
    group = torch.as_tensor(group, device=valid.device).expand(valid.shape).long()
    _, dense = torch.unique(group.reshape(-1), return_inverse=True)
    return dense.reshape(valid.shape)


def _group_mean(x: torch.Tensor, valid: torch.Tensor, gid: torch.Tensor) -> torch.Tensor:
    """Mean of ``x`` over the valid tokens of each token's group, broadcast back per token."""
    n_groups = int(gid.max()) + 1 if gid.numel() else 0
    w = valid.to(x.dtype).reshape(-1)
    flat_gid = gid.reshape(-1)
    total = torch.zeros(n_groups, dtype=x.dtype, device=x.device).index_add_(0, flat_gid, x.reshape(-1) * w)
    count = torch.zeros(n_groups, dtype=x.dtype, device=x.device).index_add_(0, flat_gid, w)
    return (total / count.clamp(min=1))[flat_gid].reshape(x.shape)


def token_covariance(logp: torch.Tensor, adv: torch.Tensor, valid: torch.Tensor,
                     group: torch.Tensor | None = None) -> torch.Tensor:
    """cov_t = (log p_t - mean log p)(A_t - mean A), means over the valid tokens (of the group).

    Computed on detached values in at least float32; 0 at invalid tokens.
    """
    valid = valid.bool()
    dtype = torch.promote_types(logp.dtype, torch.float32)
    x = logp.detach().to(dtype)
    a = torch.as_tensor(adv, device=x.device).detach().to(dtype).expand(x.shape)
    gid = _groups(valid, group)
    cov = (x - _group_mean(x, valid, gid)) * (a - _group_mean(a, valid, gid))
    return torch.where(valid, cov, torch.zeros_like(cov))


def _per_group(valid: torch.Tensor, group: torch.Tensor | None):
    """Yield (flat indices of the valid tokens of one group) for every group."""
    gid = _groups(valid, group).reshape(-1)
    flat_valid = valid.reshape(-1)
    for g in torch.unique(gid[flat_valid]).tolist():
        yield torch.nonzero(flat_valid & (gid == g), as_tuple=True)[0]


def clip_cov_mask(cov: torch.Tensor, valid: torch.Tensor, ppo_clipped: torch.Tensor | None = None,
                  ratio: float = 2e-4, lb: float = 1.0, ub: float = 5.0,
                  generator: torch.Generator | None = None,
                  group: torch.Tensor | None = None) -> torch.Tensor:
    """Clip-Cov: n = max(floor(ratio * N), 1) tokens drawn uniformly among lb < cov < ub.

    Tokens PPO already clipped are not candidates. ``N`` counts the valid tokens (of each
    group). Fewer than ``n`` candidates: all are chosen. Returns a bool mask.
    """
    valid = valid.bool()
    flat_cov = cov.reshape(-1)
    candidate = valid & (cov > lb) & (cov < ub)
    if ppo_clipped is not None:
        candidate &= ~ppo_clipped.bool()
    flat_cand = candidate.reshape(-1)
    chosen = torch.zeros_like(flat_cand)
    for idx in _per_group(valid, group):
        n = max(int(ratio * len(idx)), 1)
        cand = idx[flat_cand[idx]]
        if len(cand) == 0:
            continue
        perm = torch.randperm(len(cand), generator=generator).to(cand.device)
        chosen[cand[perm[:n]]] = True
    del flat_cov
    return chosen.reshape(valid.shape)


def kl_cov_mask(cov: torch.Tensor, valid: torch.Tensor, ratio: float = 2e-3,
                group: torch.Tensor | None = None) -> torch.Tensor:
    """KL-Cov: the top k = max(1, floor(N * ratio)) valid tokens by covariance (per group)."""
    valid = valid.bool()
    flat_cov = cov.reshape(-1)
    chosen = torch.zeros(flat_cov.shape, dtype=torch.bool, device=cov.device)
    for idx in _per_group(valid, group):
        k = max(1, int(len(idx) * ratio))
        top = torch.topk(flat_cov[idx], min(k, len(idx)), largest=True).indices
        chosen[idx[top]] = True
    return chosen.reshape(valid.shape)


def ppo_clip_indicator(ratio: torch.Tensor, adv: torch.Tensor, clip_low: float, clip_high: float) -> torch.Tensor:
    """STEER's I_clip: 0 where PPO clipping stops the gradient (A>0, r>1+eh or A<0, r<1-el), else 1."""
    adv = torch.as_tensor(adv, device=ratio.device).expand(ratio.shape)
    stopped = ((adv > 0) & (ratio > 1 + clip_high)) | ((adv < 0) & (ratio < 1 - clip_low))
    return (~stopped).to(ratio.dtype)


def steer_omega(logp: torch.Tensor, old_logp: torch.Tensor, old_entropy: torch.Tensor, adv: torch.Tensor,
                variant: str = "code", eta: float = 1.0, clip_low: float = 0.2, clip_high: float = 0.2,
                p_eps: float = 1e-8) -> torch.Tensor:
    """STEER's per-token entropy-change estimate Omega (detached, float32 or wider).

    - ``code``: f = p (1 - p)(ln p + H_old), p clamped to [p_eps, 1 - p_eps];
      Omega = (A / p_old) * f  (no eta, no sign: the public code's form).
    - ``paper``: w = I_clip r A, Omega = -eta w (1 - p)^2 (ln p + H_old).

    ``p`` is the current probability of the sampled token, ``H_old`` the old policy's
    token entropy.
    """
    dtype = torch.promote_types(logp.dtype, torch.float32)
    lp = logp.detach().to(dtype)
    olp = old_logp.detach().to(dtype)
    h = torch.as_tensor(old_entropy, device=lp.device).detach().to(dtype)
    a = torch.as_tensor(adv, device=lp.device).detach().to(dtype).expand(lp.shape)
    if variant == "code":
        p = lp.exp().clamp(p_eps, 1 - p_eps)
        f = p * (1 - p) * (p.log() + h)
        return a / olp.exp().clamp(min=p_eps) * f
    if variant == "paper":
        r = (lp - olp).exp()
        w = ppo_clip_indicator(r, a, clip_low, clip_high) * r * a
        p = lp.exp()
        return -eta * w * (1 - p) ** 2 * (lp + h)
    raise ValueError(f"unknown STEER variant {variant!r} (expected 'code' or 'paper')")


def steer_weights(omega: torch.Tensor, valid: torch.Tensor, mapping: str = "exp", w_min: float = 0.8,
                  w_max: float | None = None, floor: float = 0.02,
                  group: torch.Tensor | None = None) -> torch.Tensor:
    """Map |Omega| to per-token loss weights over the valid tokens (of each group).

    - ``exp``: k = -ln(w_min) / max(max|Omega|, floor); w = clamp(exp(-k |Omega|), w_min, w_max=1)
    - ``linear``: w = w_max - (|Omega| - min) / (max - min) * (w_max - w_min), w_max = 1.2
      (all |Omega| equal: w = w_max)

    Invalid tokens get weight 1.
    """
    valid = valid.bool()
    mag = omega.detach().abs().reshape(-1)
    out = torch.ones_like(mag)
    if mapping == "exp":
        hi = 1.0 if w_max is None else w_max
        for idx in _per_group(valid, group):
            k = -math.log(w_min) / max(float(mag[idx].max()), floor)
            out[idx] = torch.exp(-k * mag[idx]).clamp(w_min, hi)
    elif mapping == "linear":
        hi = 1.2 if w_max is None else w_max
        for idx in _per_group(valid, group):
            lo_m, hi_m = mag[idx].min(), mag[idx].max()
            span = hi_m - lo_m
            frac = (mag[idx] - lo_m) / span if float(span) > 0 else torch.zeros_like(mag[idx])
            out[idx] = hi - frac * (hi - w_min)
    else:
        raise ValueError(f"unknown STEER weight map {mapping!r} (expected 'exp' or 'linear')")
    return out.reshape(valid.shape)


def clamp_count(vocab_size: int, clamp_p: float) -> int:
    """Number of lowest logits AEnt masks: floor(clamp_p * V), leaving at least one token."""
    return min(int(math.floor(clamp_p * vocab_size)), vocab_size - 1)


def clamped_entropy(logits: torch.Tensor, clamp_p: float = 0.3) -> torch.Tensor:
    """AEnt's clamped entropy over the last axis (materialised; differentiable).

    The floor(clamp_p * V) lowest logits are masked (ties with the k-th lowest value are
    masked too), the softmax is renormalised over the rest and its entropy returned.

    >>> round(float(clamped_entropy(torch.tensor([0., 0., 0., -50.]), 0.25)), 6) == round(math.log(3), 6)
    True
    """
    z = logits.float() if logits.dtype in (torch.float16, torch.bfloat16) else logits
    k = clamp_count(z.shape[-1], clamp_p)
    if k > 0:
        tau = torch.kthvalue(z.detach(), k, dim=-1, keepdim=True).values
        keep = z > tau
        keep |= z.detach() == z.detach().max(dim=-1, keepdim=True).values  # never mask everything
        z = z.masked_fill(~keep, float("-inf"))
    logq = torch.log_softmax(z, dim=-1)
    q = logq.exp()
    return -(q * torch.where(q > 0, logq, torch.zeros_like(logq))).sum(-1)


@dataclass
class AEntCoefficient:
    """AEnt's automatically adjusted entropy coefficient (SPEC section 5).

    After ``warmup_steps`` calls, each :meth:`update` with the step's clamped entropy H_c does
    c <- clip(c - lr * [min(0, H_c - h_low) + max(0, H_c - h_high) + reg (c - c0)], c_low, c_high).
    ``coef``, ``clamp_p`` and the bounds are the AEnt README defaults; ``lr``, ``h_low``,
    ``h_high`` and ``reg`` are this project's (the paper's values were lost in extraction).

    >>> c = AEntCoefficient(coef=2e-4, lr=1e-3, h_low=0.2, h_high=0.5)
    >>> round(c.update(0.1), 7)      # entropy below h_low: the coefficient rises
    0.0003
    >>> round(c.update(0.3), 7)      # inside the band: unchanged
    0.0003
    """

    coef: float = 2e-4
    lr: float = 1e-3
    h_low: float = 0.2
    h_high: float = 0.5
    reg: float = 0.0
    coef_low: float = 4e-5
    coef_high: float = 0.1
    clamp_p: float = 0.3
    warmup_steps: int = 0

    def __post_init__(self):
        self.coef0_ = self.coef
        self.coef_ = self.coef
        self.n_updates_ = 0

    def update(self, clamped_entropy_value: float) -> float:
        """Record one step's clamped entropy; return the coefficient for the next step."""
        self.n_updates_ += 1
        if self.n_updates_ <= self.warmup_steps:
            return self.coef_
        h = float(clamped_entropy_value)
        grad = min(0.0, h - self.h_low) + max(0.0, h - self.h_high) + self.reg * (self.coef_ - self.coef0_)
        self.coef_ = min(max(self.coef_ - self.lr * grad, self.coef_low), self.coef_high)
        return self.coef_

    def to_dict(self) -> dict:
        return {**asdict(self), "coef_": self.coef_, "n_updates_": self.n_updates_}
