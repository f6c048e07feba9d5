"""The policy loss with each entropy intervention, shared by the probe and the lab.

PPO-clip surrogate, token-mean over the valid tokens (veRL ``loss_agg_mode=token-mean``),
with the intervention applied as SPEC section 5 says:

==============  =====================================================================
``none``        PPO clip (eps 0.2/0.2) with veRL's dual clip (c = 3) for A < 0
``clip_higher`` the same with the upper clip range 0.28 (DAPO)
``entropy_bonus`` L - entropy_coef * mean H
``clip_cov``    PPO clip; Clip-Cov's randomly chosen tokens have their gradient detached.
                Clip ranges default to 1.0/1.0 as in the official scripts (set them).
``kl_cov``      -A r everywhere (no PPO clip); the top-k covariance tokens add
                beta |log p - log p_old|
``steer``       STEER weights multiply the per-token PPO loss
``aent``        L - aent_coef * mean clamped entropy
==============  =====================================================================

>>> import torch
>>> logp = torch.tensor([[-1.0, -2.0]], requires_grad=True)
>>> loss, info = policy_loss(logp, logp.detach(), torch.tensor([[1.0, 1.0]]), torch.ones(1, 2, dtype=torch.bool),
...                          InterventionConfig())
>>> float(loss.detach()), info["clipfrac"]
(-1.0, 0.0)
"""

from __future__ import annotations

import numbers
from dataclasses import asdict, dataclass, fields

import torch

from entropylaw.errors import EntropyLawError
from entropylaw.probing import interventions as iv
from entropylaw.probing.interventions import INTERVENTIONS

_DEFAULT_CLIP = {"clip_higher": (0.2, 0.28), "clip_cov": (1.0, 1.0)}


@dataclass
class InterventionConfig:
    """Which intervention and its settings (papers' defaults; every one settable).

    ``clip_low``/``clip_high`` left ``None`` resolve per intervention: 0.2/0.2, clip_higher
    0.2/0.28, clip_cov 1.0/1.0 (the official scripts). ``dual_clip_c`` None turns dual clip off.
    """

    name: str = "none"
    clip_low: float | None = None
    clip_high: float | None = None
    dual_clip_c: float | None = 3.0
    entropy_coef: float = 1e-3
    clip_cov_ratio: float = 2e-4
    clip_cov_lb: float = 1.0
    clip_cov_ub: float = 5.0
    kl_cov_ratio: float = 2e-3
    kl_cov_beta: float = 1.0
    steer_variant: str = "code"
    steer_map: str = "exp"
    steer_w_min: float = 0.8
    steer_w_max: float | None = None
    steer_eta: float = 1.0
    steer_floor: float = 0.02
    aent_clamp_p: float = 0.3
    aent_coef: float = 2e-4

    def __post_init__(self):
        if self.name not in INTERVENTIONS:
            raise EntropyLawError(f"unknown intervention {self.name!r} (expected one of {', '.join(INTERVENTIONS)})")
        for f in fields(self):  # a --set value is JSON where it parses, else text: 'abc' is no number
            v = getattr(self, f.name)
            number = isinstance(v, numbers.Real) and not isinstance(v, bool) and v == v  # v == v: not NaN
            if not (isinstance(v, str) if f.type == "str" else number or (v is None and "None" in f.type)):
                want = "text" if f.type == "str" else "a number" + (" or null" if "None" in f.type else "")
                raise EntropyLawError(f"intervention {self.name}: setting {f.name} = {v!r}: expected {want}")
        low, high = _DEFAULT_CLIP.get(self.name, (0.2, 0.2))
        self.clip_low = low if self.clip_low is None else float(self.clip_low)
        self.clip_high = high if self.clip_high is None else float(self.clip_high)
        checks = [
            (self.clip_low >= 0 and self.clip_high >= 0, "clip_low and clip_high must be >= 0"),
            (self.dual_clip_c is None or self.dual_clip_c > 1, "dual_clip_c must be > 1 (or None)"),
            (0 < self.clip_cov_ratio <= 1, "clip_cov_ratio must be in (0, 1]"),
            (self.clip_cov_lb < self.clip_cov_ub, "clip_cov_lb must be < clip_cov_ub"),
            (0 < self.kl_cov_ratio <= 1, "kl_cov_ratio must be in (0, 1]"),
            (self.kl_cov_beta >= 0, "kl_cov_beta must be >= 0"),
            (self.steer_variant in ("code", "paper"), "steer_variant must be 'code' or 'paper'"),
            (self.steer_map in ("exp", "linear"), "steer_map must be 'exp' or 'linear'"),
            (0 < self.steer_w_min <= 1 or self.steer_map == "linear", "steer_w_min must be in (0, 1] for the exp map"),
            (self.steer_w_max is None or self.steer_w_max >= self.steer_w_min, "steer_w_max must be >= steer_w_min"),
            (0 <= self.aent_clamp_p < 1, "aent_clamp_p must be in [0, 1)"),
        ]
        for ok, message in checks:
            if not ok:
                raise EntropyLawError(f"intervention {self.name}: {message}")

    @classmethod
    def from_dict(cls, d: dict) -> "InterventionConfig":
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - names)
        if unknown:
            raise EntropyLawError(f"unknown intervention {'setting' if len(unknown) == 1 else 'settings'} {unknown} "
                                  f"(expected some of {sorted(names)})")
        return cls(**d)

    def to_dict(self) -> dict:
        return asdict(self)


def token_mean(x: torch.Tensor, valid: torch.Tensor, normaliser: float | None = None) -> torch.Tensor:
    """Mean of ``x`` over the valid tokens (0 when there are none); ``normaliser`` replaces the count."""
    v = valid.to(x.dtype)
    return (x * v).sum() / (v.sum().clamp(min=1) if normaliser is None else normaliser)


def ppo_token_losses(logp, old_logp, adv, clip_low, clip_high, dual_clip_c=None):
    """Per-token PPO-clip losses and the mask of tokens where clipping is active."""
    ratio = torch.exp(logp - old_logp)
    pg1 = -adv * ratio
    pg2 = -adv * ratio.clamp(1 - clip_low, 1 + clip_high)
    clipped = pg2 > pg1
    out = torch.maximum(pg1, pg2)
    if dual_clip_c is not None:
        out = torch.where(adv < 0, torch.minimum(out, -adv * dual_clip_c), out)
    return out, clipped


def policy_loss(logp: torch.Tensor, old_logp: torch.Tensor, adv: torch.Tensor, valid: torch.Tensor,
                cfg: InterventionConfig, entropy: torch.Tensor | None = None,
                clamped_entropy: torch.Tensor | None = None, old_entropy: torch.Tensor | None = None,
                generator: torch.Generator | None = None, group: torch.Tensor | None = None,
                return_selection: bool = False, selected: torch.Tensor | None = None,
                weights: torch.Tensor | None = None, normaliser: float | None = None):
    """Token-mean policy loss with ``cfg``'s intervention; returns ``(loss, info)``.

    ``adv`` broadcasts to ``logp`` (per response ``[B, 1]`` or per token). ``entropy`` and
    ``clamped_entropy`` (per token, with gradient) are needed by ``entropy_bonus`` and
    ``aent``; ``old_entropy`` by ``steer`` (defaults to ``entropy`` detached). ``group``
    gives the micro-batch of each token for the per-micro-batch covariance scope.
    ``info`` holds floats: ``clipfrac``, ``ppo_kl``, ``n_valid``, ``n_selected`` (tokens the
    intervention masks/penalises), ``mean_weight`` (STEER), ``pg_loss``. With
    ``return_selection`` it also holds ``selected`` (bool mask) and ``weights`` (tensor).

    Data-parallel use: ``selected`` (Clip-Cov / KL-Cov) and ``weights`` (STEER) computed on
    the whole batch can be passed in instead of being derived from this shard, and
    ``normaliser`` (the global valid-token count) makes the shards' losses sum to the
    batch's token-mean.
    """
    given_selected, given_weights = selected, weights
    valid = valid.bool()
    adv = torch.as_tensor(adv, dtype=logp.dtype, device=logp.device).expand(logp.shape)
    old_logp = old_logp.detach().to(logp.dtype)
    name = cfg.name
    selected = torch.zeros_like(valid) if given_selected is None else given_selected.bool()
    weights = torch.ones_like(logp) if given_weights is None else given_weights.to(logp.dtype)
    if name == "kl_cov":
        ratio = torch.exp(logp - old_logp)
        per_tok = -adv * ratio
        clipped = torch.zeros_like(valid)
        if given_selected is None:
            cov = iv.token_covariance(logp, adv, valid, group)
            selected = iv.kl_cov_mask(cov, valid, cfg.kl_cov_ratio, group=group)
        per_tok = per_tok + torch.where(selected, cfg.kl_cov_beta * (logp - old_logp).abs(), torch.zeros_like(per_tok))
    else:
        dual = None if name == "clip_cov" else cfg.dual_clip_c
        per_tok, clipped = ppo_token_losses(logp, old_logp, adv, cfg.clip_low, cfg.clip_high, dual)
        if name == "clip_cov":
            if given_selected is None:
                cov = iv.token_covariance(logp, adv, valid, group)
                selected = iv.clip_cov_mask(cov, valid, clipped & valid, cfg.clip_cov_ratio, cfg.clip_cov_lb,
                                            cfg.clip_cov_ub, generator=generator, group=group)
            per_tok = torch.where(selected, per_tok.detach(), per_tok)
        elif name == "steer" and given_weights is not None:
            per_tok = weights * per_tok
        elif name == "steer":
            h_old = old_entropy if old_entropy is not None else entropy
            if h_old is None:
                raise ValueError("steer needs old_entropy (or entropy) per token")
            omega = iv.steer_omega(logp, old_logp, h_old, adv, cfg.steer_variant, cfg.steer_eta,
                                   cfg.clip_low, cfg.clip_high)
            weights = iv.steer_weights(omega, valid, cfg.steer_map, cfg.steer_w_min, cfg.steer_w_max,
                                       cfg.steer_floor, group=group).to(logp.dtype)
            per_tok = weights * per_tok
    pg_loss = token_mean(per_tok, valid, normaliser)
    loss = pg_loss
    if name == "entropy_bonus":
        if entropy is None:
            raise ValueError("entropy_bonus needs the per-token entropy")
        loss = loss - cfg.entropy_coef * token_mean(entropy, valid, normaliser)
    elif name == "aent":
        if clamped_entropy is None:
            raise ValueError("aent needs the per-token clamped entropy")
        loss = loss - cfg.aent_coef * token_mean(clamped_entropy, valid, normaliser)
    n_valid = int(valid.sum())
    info = {
        "pg_loss": float(pg_loss.detach()),
        "clipfrac": float(token_mean((clipped & valid).to(logp.dtype), valid)),
        "ppo_kl": float(token_mean((old_logp - logp).detach(), valid)),
        "n_valid": float(n_valid),
        "n_selected": float((selected & valid).sum()),
        "mean_weight": float(token_mean(weights.detach(), valid)) if n_valid else 1.0,
    }
    if return_selection:
        info["selected"] = selected & valid
        info["weights"] = weights.detach()
    return loss, info
