"""First-order entropy-change formulas of SPEC section 4 (tabular softmax).

Two kinds: full-distribution forms on explicit logits (Lemma 1, Theorems 1-2, for the
tabular check) and per-position forms that need only what a real batch gives for the
sampled token y (log p_y, H, sum_v p_v^2 (log p_v + H) and the token's loss weight w,
where the loss is -sum_t w_t log p(y_t) and the step is SGD with size eta):

- ``sampled_token``: -eta w [p_y (log p_y + H) - sum_v p_v^2 (log p_v + H)]  (exact first
  order for tabular logits; its expectation over y ~ p with w = A(y) is Theorem 1)
- ``theorem2_sampled``: -eta w (log p_y + H)  (Theorem 2 with the importance-weighted
  one-sample advantage w e_y / p_y)
- ``steer_paper``: -eta w (1 - p_y)^2 (log p_y + H)
- ``steer_code``: -eta (w / p_old) p (1 - p)(log p + H)  (the public code's Omega with the
  sign and step that make it a prediction of dH)

>>> import torch
>>> z = torch.tensor([2.0, 0.5, -1.0]); dz = torch.tensor([0.0, 1e-4, 0.0])
>>> exact = entropy(z + dz) - entropy(z)
>>> bool(torch.isclose(lemma1(z, dz), exact, rtol=1e-3))
True
"""

from __future__ import annotations

import torch


def entropy(logits: torch.Tensor) -> torch.Tensor:
    logp = torch.log_softmax(logits.double(), -1)
    return -(logp.exp() * logp).sum(-1)


def _cov(logits, x):
    """Cov_{a~p}(log p(a), x(a)) over the last axis."""
    logp = torch.log_softmax(logits.double(), -1)
    p = logp.exp()
    x = x.double()
    return (p * logp * x).sum(-1) - (p * logp).sum(-1) * (p * x).sum(-1)


def lemma1(logits: torch.Tensor, dz: torch.Tensor) -> torch.Tensor:
    """H' - H ~= -Cov_{a~p}(log p(a), dz(a))."""
    return -_cov(logits, dz)


def theorem1(logits: torch.Tensor, adv: torch.Tensor, eta: float) -> torch.Tensor:
    """Vanilla PG on tabular logits (dz = eta p A): -eta Cov(log p, p A)."""
    p = torch.softmax(logits.double(), -1)
    return -eta * _cov(logits, p * adv.double())


def theorem2(logits: torch.Tensor, adv: torch.Tensor, eta: float) -> torch.Tensor:
    """Natural PG (dz = eta A): -eta Cov(log p, A)."""
    return -eta * _cov(logits, adv)


def sum_p2(logits: torch.Tensor) -> torch.Tensor:
    """sum_v p_v^2 (log p_v + H) over the last axis."""
    logp = torch.log_softmax(logits.double(), -1)
    p = logp.exp()
    H = -(p * logp).sum(-1, keepdim=True)
    return (p * p * (logp + H)).sum(-1)


def sampled_token(logp_y, H, p2_term, w, eta):
    return -eta * w * (logp_y.exp() * (logp_y + H) - p2_term)


def theorem2_sampled(logp_y, H, w, eta):
    return -eta * w * (logp_y + H)


def steer_paper(logp_y, H, w, eta):
    return -eta * w * (1 - logp_y.exp()) ** 2 * (logp_y + H)


def steer_code(logp_y, H, old_logp_y, w, eta, p_eps: float = 1e-8):
    p = logp_y.exp().clamp(p_eps, 1 - p_eps)
    return -eta * w / old_logp_y.exp().clamp(min=p_eps) * p * (1 - p) * (p.log() + H)
