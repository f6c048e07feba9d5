"""Per-step statistics the lab logs (SPEC sections 2, 4, 5).

- :func:`seq_mean_token_mean`: the mean of the responses' token means (the other entropy
  aggregation, the token mean, is the probe's :func:`entropylaw.probing.losses.token_mean`).
- :func:`covariance_summary`: mean of the token covariance (shared
  :func:`entropylaw.probing.interventions.token_covariance`) over the top fractions of
  tokens, as in the paper's Table 1.
- :func:`response_level_covariance`: per prompt group Cov_i(mean_t log p(y_i,t), A_i)
  (population covariance over the G responses), averaged over the groups (paper Eq. 8-9).
- :func:`covariance_by_difficulty`: the same per-group covariance averaged within three
  difficulty bins of the group's accuracy (paper Fig. 8, right); groups whose responses are
  all right or all wrong carry no advantage and are left out, as the paper filters them.

>>> import torch

from entropylaw.lab.theory import THEORY_KEYS
>>> x = torch.tensor([[1.0, 3.0], [2.0, 0.0]]); valid = torch.tensor([[1, 1], [1, 0]]).bool()
>>> float(seq_mean_token_mean(x, valid))
2.0
>>> lp = torch.tensor([[-1.0], [-3.0], [-2.0], [-2.0]]); adv = torch.tensor([1.0, -1.0, 0.5, -0.5])
>>> round(response_level_covariance(lp, torch.ones(4, 1).bool(), adv, [0, 0, 1, 1]), 6)
0.5
>>> covariance_by_difficulty(lp, torch.ones(4, 1).bool(), adv, [0, 0, 1, 1], [0.5, 0.5, 0.5, 0.5])
{'medium': 0.5}
"""

from __future__ import annotations

import numpy as np
import torch

from entropylaw.lab.theory import THEORY_KEYS

TOP_FRACTIONS = {"top0.2pct": 0.002, "top2pct": 0.02, "top20pct": 0.2, "top50pct": 0.5}


def seq_mean_token_mean(x: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    v = valid.to(x.dtype)
    per_seq = (x * v).sum(dim=1) / v.sum(dim=1).clamp(min=1)
    has = v.sum(dim=1) > 0
    return per_seq[has].mean() if has.any() else per_seq.new_tensor(0.0)


def covariance_summary(cov: torch.Tensor, valid: torch.Tensor) -> dict[str, float]:
    """``cov/token_mean`` and ``cov/<top..>_mean``: mean cov over the top-k valid tokens."""
    values = cov[valid.bool()].double()
    out = {"cov/token_mean": float(values.mean()) if len(values) else 0.0}
    ranked = torch.sort(values, descending=True).values
    for name, frac in TOP_FRACTIONS.items():
        k = max(1, int(frac * len(ranked)))
        out[f"cov/{name}_mean"] = float(ranked[:k].mean()) if len(ranked) else 0.0
    return out


def group_covariances(logp: torch.Tensor, valid: torch.Tensor, adv: torch.Tensor, group_ids) -> dict:
    """``{group id: Cov_i(mean_t log p(y_i,t), A_i)}``, the population covariance over each group's responses."""
    v = valid.to(torch.float64)
    seq_logp = ((logp.double() * v).sum(dim=1) / v.sum(dim=1).clamp(min=1)).cpu()
    adv = torch.as_tensor(adv, dtype=torch.float64).reshape(-1).cpu()
    gid = torch.as_tensor(group_ids).reshape(-1)
    out = {}
    for g in torch.unique(gid):
        idx = gid == g
        x, a = seq_logp[idx], adv[idx]
        out[int(g)] = float(((x - x.mean()) * (a - a.mean())).mean())
    return out


def response_level_covariance(logp: torch.Tensor, valid: torch.Tensor, adv: torch.Tensor, group_ids) -> float:
    """Mean over prompt groups of Cov_i(mean_t log p(y_i,t), A_i)."""
    covs = list(group_covariances(logp, valid, adv, group_ids).values())
    return sum(covs) / len(covs) if covs else 0.0


# the paper's three groups of prompt accuracy (lower accuracy = harder), in that order
DIFFICULTY_BINS = ("hard", "medium", "easy")


def difficulty_of(acc: float) -> str | None:
    """The bin of a group accuracy in (0, 1): hard below 1/3, easy above 2/3; None at 0 or 1."""
    if not 0.0 < acc < 1.0:
        return None
    return "hard" if acc < 1 / 3 else "easy" if acc > 2 / 3 else "medium"


def covariance_by_difficulty(logp: torch.Tensor, valid: torch.Tensor, adv: torch.Tensor, group_ids,
                             group_acc) -> dict[str, float]:
    """``{bin: mean over the bin's groups of Cov_i(mean_t log p(y_i,t), A_i)}`` for the bins
    that hold at least one group this step; ``group_acc`` is each response's group accuracy."""
    gid = np.asarray(group_ids).reshape(-1)
    acc = np.asarray(group_acc, dtype=float).reshape(-1)
    per_bin: dict[str, list[float]] = {}
    for g, c in group_covariances(logp, valid, adv, gid).items():
        name = difficulty_of(float(acc[gid == g][0]))
        if name is not None:
            per_bin.setdefault(name, []).append(c)
    return {name: sum(c) / len(c) for name in DIFFICULTY_BINS if (c := per_bin.get(name))}


def metric_keys(cfg, task_name: str) -> list[str]:
    """Every key a lab run logs, in its logs' column order (``cfg``: its :class:`~.config.RunConfig`)."""
    return ["actor/entropy", "actor/entropy_seq_mean", "actor/entropy_after", "actor/entropy_delta",
            "actor/clamped_entropy", "critic/score/mean", "response_length/mean", "response_length/max",
            "actor/pg_loss", "actor/pg_clipfrac", "actor/ppo_kl", "actor/grad_norm", "actor/lr",
            "cov/token_mean", "cov/top0.2pct_mean", "cov/top2pct_mean", "cov/top20pct_mean",
            "cov/top50pct_mean", "cov/response_level",
            *(f"cov/response_level/{name}" for name in DIFFICULTY_BINS), "intervention/n_selected",
            "intervention/mean_weight", "intervention/aent_coef", "batch/groups_kept",
            "batch/groups_all_correct", "batch/groups_all_wrong",
            f"val-core/{task_name}/acc/mean@{cfg.val_samples}", f"val-aux/{task_name}/acc/greedy",
            f"val-aux/{task_name}/entropy", f"val-aux/{task_name}/response_length", *THEORY_KEYS,
            "timing_s/step"]
