"""Batch-level predictions of one update's entropy change (SPEC section 4), logged per step.

The lab measures ``actor/entropy_delta``: the token-mean entropy of the step's batch
re-scored after the update minus before it, on the same states. Next to it, every step
logs what the first-order theory predicts for that same batch:

- ``theory/dH_lemma1``: Lemma 1 with the *actual* logit change, token-mean over the batch of
  -Cov_{a~p}(log p(a), dz(a)), dz = z'/T - z/T at each response position. Exact to first
  order in dz whatever produced the update (Adam, several minibatches, clipping), so its
  error is the second-order remainder.
- ``theory/dH_thm1_sampled``: Theorem 1 in its sampled-token form, token-mean of
  -eta A_t [p_y (log p_y + H) - sum_v p_v^2 (log p_v + H)]: what vanilla policy gradient
  on the sampled tokens does to tabular logits to first order. Its expectation over
  y ~ p is -eta Cov_{a~p}(log p, p A) (Theorem 1) only when E_{a~p}[A(s, a)] = 0; a
  response-level advantage copied to every token is not centred under p at each state,
  so the two differ (SPEC section 4).
- ``theory/dH_thm1_batchcov``: Theorem 1 read literally over the batch, -eta Cov_t(log p(y_t),
  p(y_t) A_t), the covariance taken across the sampled tokens.
- ``theory/dH_cov``: -eta Cov_t(log p(y_t), A_t) across the sampled tokens, i.e. -eta times
  ``cov/token_mean`` (the paper's Eq. 10 covariance, Theorem 2's form).

``eta`` (``theory/eta``) is the learning rate times the number of optimiser steps the
batch received (minibatches x epochs): to first order, k SGD steps on token-mean losses
over k equal minibatches move the parameters as one step of k x lr on the whole batch's
token-mean loss. For a network the tabular forms hold only up to the kernel that shares
each token's gradient among all positions, so their slope against the measured change is
not 1; the across-step correlation is the test.

>>> import torch
>>> z0 = torch.tensor([[[2.0, 0.5, -1.0]]]); dz = torch.tensor([[[0.0, 1e-4, 0.0]]])
>>> valid = torch.ones(1, 1, dtype=torch.bool)
>>> out = batch_predictions(z0, z0 + dz, torch.tensor([[1]]), torch.tensor([[1.0]]), valid, 1.0, 0.1)
>>> from entropylaw.probing.dynamics import entropy
>>> exact = float(entropy(z0 + dz).sum() - entropy(z0).sum())
>>> abs(out["theory/dH_lemma1"] - exact) < 1e-9
True
"""

from __future__ import annotations

import torch

from entropylaw.probing import dynamics


def _masked_mean(x: torch.Tensor, valid: torch.Tensor) -> float:
    x = x[valid]
    return float(x.mean()) if x.numel() else 0.0


def _batch_cov(x: torch.Tensor, y: torch.Tensor, valid: torch.Tensor) -> float:
    """Population covariance of x and y across the valid tokens."""
    x, y = x[valid], y[valid]
    if x.numel() == 0:
        return 0.0
    return float(((x - x.mean()) * (y - y.mean())).mean())


@torch.no_grad()
def batch_predictions(logits_before: torch.Tensor, logits_after: torch.Tensor, targets: torch.Tensor,
                      adv: torch.Tensor, valid: torch.Tensor, temperature: float, eta: float) -> dict[str, float]:
    """The ``theory/*`` numbers of one step (module docstring), all in float64.

    ``logits_*``: [B, R, V] raw logits at the response positions before and after the
    update; ``targets`` [B, R] the sampled tokens; ``adv`` [B, 1] or [B, R]; ``valid`` [B, R].
    """
    valid = valid.bool()
    z0 = logits_before.double() / temperature
    dz = logits_after.double() / temperature - z0
    lemma1 = dynamics.lemma1(z0, dz)
    logp_all = torch.log_softmax(z0, dim=-1)
    logp_y = logp_all.gather(-1, targets[..., None]).squeeze(-1)
    H = -(logp_all.exp() * logp_all).sum(-1)
    a = torch.as_tensor(adv, dtype=torch.float64, device=z0.device).expand(logp_y.shape)
    sampled = dynamics.sampled_token(logp_y, H, dynamics.sum_p2(z0), a, eta)
    return {"theory/dH_lemma1": _masked_mean(lemma1, valid),
            "theory/dH_thm1_sampled": _masked_mean(sampled, valid),
            "theory/dH_thm1_batchcov": -eta * _batch_cov(logp_y, logp_y.exp() * a, valid),
            "theory/dH_cov": -eta * _batch_cov(logp_y, a, valid),
            "theory/eta": float(eta)}


THEORY_KEYS = ("theory/dH_lemma1", "theory/dH_thm1_sampled", "theory/dH_thm1_batchcov", "theory/dH_cov",
               "theory/eta")
