"""Response-level advantages of the four estimators in SPEC section 1.

One advantage per response, to be copied onto all its tokens. ``group_ids`` names the
prompt group of each response (the G samples of one prompt share an id).

- ``grpo``:        A_i = (r_i - mean_G r) / (std_G r + eps)
- ``rloo``:        A_i = r_i - mean_{k != i} r_k
- ``reinforce++``: A_i = (r_i - mean_batch r) / (std_batch r + eps)
- ``reinforce``:   A_i = r_i

Standard deviations are the unbiased ones (``torch.std``, as veRL uses). A group of one
response has no baseline: its GRPO and RLOO advantages are 0 (said in an
:class:`~entropylaw.errors.EntropyLawWarning`), so it contributes no gradient.

>>> import torch
>>> advantages(torch.tensor([1., 0., 0., 1., 1., 1.]), [0, 0, 0, 1, 1, 1], "rloo").tolist()
[1.0, -0.5, -0.5, 0.0, 0.0, 0.0]
"""

from __future__ import annotations

import warnings
from typing import Sequence

import torch

from entropylaw.errors import EntropyLawError, EntropyLawWarning
from entropylaw.terminal import count

ESTIMATORS = ("grpo", "rloo", "reinforce++", "reinforce")


def group_index(group_ids) -> torch.Tensor:
    """Map arbitrary hashable group ids to 0..n_groups-1 in first-seen order."""
    if isinstance(group_ids, torch.Tensor):
        group_ids = group_ids.tolist()
    seen: dict = {}
    return torch.tensor([seen.setdefault(g, len(seen)) for g in group_ids], dtype=torch.long)


def advantages(rewards, group_ids: Sequence | torch.Tensor, estimator: str = "grpo",
               eps: float = 1e-6, warn_singletons: bool = True) -> torch.Tensor:
    """Per-response advantages (float64 tensor of len(rewards))."""
    if estimator not in ESTIMATORS:
        raise EntropyLawError(f"unknown advantage estimator {estimator!r} (expected one of {', '.join(ESTIMATORS)})")
    r = torch.as_tensor(rewards, dtype=torch.float64).reshape(-1)
    if not torch.isfinite(r).all():
        bad = int((~torch.isfinite(r)).nonzero()[0])
        raise EntropyLawError(f"reward of response {bad} is {r[bad].item()} (expected a finite number)")
    gid = group_index(group_ids)
    if len(gid) != len(r):
        raise EntropyLawError(f"{len(r)} rewards but {len(gid)} group ids")
    if estimator == "reinforce":
        return r.clone()
    if estimator == "reinforce++":
        std = r.std() if len(r) > 1 else torch.tensor(0.0, dtype=torch.float64)
        return (r - r.mean()) / (std + eps)
    n_groups = int(gid.max()) + 1 if len(gid) else 0
    size = torch.zeros(n_groups, dtype=torch.float64).index_add_(0, gid, torch.ones_like(r))
    total = torch.zeros(n_groups, dtype=torch.float64).index_add_(0, gid, r)
    n = size[gid]
    single = n < 2
    if single.any() and warn_singletons:
        lone = int((size < 2).sum())
        warnings.warn(f"{count(lone, 'prompt group')} {'has' if lone == 1 else 'have'} a single response: their "
                      f"{estimator.upper()} advantage is 0 (no baseline), so they add no gradient",
                      EntropyLawWarning, stacklevel=2)
    if estimator == "rloo":
        loo_mean = (total[gid] - r) / (n - 1).clamp(min=1)
        return torch.where(single, torch.zeros_like(r), r - loo_mean)
    mean = total / size.clamp(min=1)
    sq = torch.zeros(n_groups, dtype=torch.float64).index_add_(0, gid, (r - mean[gid]) ** 2)
    std = (sq / (size - 1).clamp(min=1)).sqrt()
    return torch.where(single, torch.zeros_like(r), (r - mean[gid]) / (std[gid] + eps))
