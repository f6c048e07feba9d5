"""The probe: per-token statistics, covariance in both scopes, intervention targeting, Table 1.

:func:`analyse` works on gathered per-token arrays (so it runs once, on rank 0, whatever
the number of data-parallel processes); :func:`run_probe` does the model forward first.

>>> import torch
>>> cov = torch.tensor([5.0, 1.0, 0.5, 0.25, -0.25, 0.0, 0.0, 0.0, 0.0, 0.0])
>>> table1(cov)["all"], table1(cov)["0.5"]
(0.65, 1.35)
"""

from __future__ import annotations

import numbers
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd
import torch

from entropylaw.errors import EntropyLawError
from entropylaw.readers.rollouts.encode import group_sizes, microbatches
from entropylaw.probing import interventions as iv
from entropylaw.probing.advantages import advantages
from entropylaw.probing.losses import InterventionConfig, ppo_token_losses

TABLE1_FRACTIONS = (0.0002, 0.002, 0.02, 0.2, 0.5)
PAPER_TABLE1 = {"0.0002": 5.654, "0.002": 3.112, "0.02": 1.385, "0.2": 0.351, "0.5": 0.152, "all": 0.003}


@dataclass
class ProbeConfig:
    """Settings of one probe run (every one has a CLI flag)."""

    temperature: float = 1.0
    estimator: str = "grpo"
    eps: float = 1e-6
    chunk_size: int = 8192
    batch_tokens: int = 4096
    microbatch_tokens: int = 16384
    clamp_p: float = 0.3
    seed: int = 0
    overrides: dict = field(default_factory=dict)  # InterventionConfig settings, applied to each

    def __post_init__(self):
        if not isinstance(self.clamp_p, numbers.Real) or not 0 <= self.clamp_p < 1:  # 2: clamped entropy 0
            shown = f"{self.clamp_p:g}" if isinstance(self.clamp_p, numbers.Real) else repr(self.clamp_p)
            raise EntropyLawError(f"`clamp_p` {shown}: expected a fraction in [0, 1) (AEnt masks the "
                                  "floor(clamp_p x vocabulary) lowest logits)")

    def intervention(self, name: str) -> InterventionConfig:
        from dataclasses import fields
        names = {f.name for f in fields(InterventionConfig)}
        return InterventionConfig.from_dict({"name": name, **{k: v for k, v in self.overrides.items() if k in names}})

    def to_dict(self) -> dict:
        return asdict(self)


def table1(cov: torch.Tensor) -> dict:
    """Mean covariance over the top 0.02 %, 0.2 %, 2 %, 20 %, 50 % of tokens and over all."""
    vals = torch.sort(cov.double().reshape(-1), descending=True).values
    out = {}
    for frac in TABLE1_FRACTIONS:
        n = max(1, int(frac * len(vals)))
        out[repr(frac)] = round(float(vals[:n].mean()), 12)
    out["all"] = round(float(vals.mean()), 12)
    return out


def cluster_se(values: torch.Tensor, groups) -> float | None:
    """Standard error of the mean of per-token values, clustered by prompt group (None below 2 groups).

    >>> round(cluster_se(torch.tensor([1., 1., 3., 3.]), ["a", "a", "b", "b"]), 6)
    1.0
    """
    v = values.double().numpy()
    labels, inv = np.unique(np.asarray(groups), return_inverse=True)
    G = len(labels)
    if G < 2:
        return None
    resid = np.bincount(inv, weights=v - v.mean(), minlength=G)
    return float(np.sqrt(G / (G - 1) * np.sum(resid ** 2)) / len(v))


def _overlap(a: torch.Tensor, b: torch.Tensor) -> dict:
    inter, union = int((a & b).sum()), int((a | b).sum())
    return {"whole_batch": int(a.sum()), "micro_batch": int(b.sum()), "both": inter,
            "jaccard": inter / union if union else 1.0}


def analyse(seqs: list, stats: dict, cfg: ProbeConfig) -> tuple:
    """Per-token frame and summary dict from gathered stats (keys logp, entropy, ...)."""
    if all(s.advantage is not None for s in seqs):  # the trainer's, or computed on the whole batch
        adv_resp = torch.tensor([s.advantage for s in seqs], dtype=torch.float64)
    else:
        adv_resp = advantages(torch.tensor([s.reward for s in seqs]), [s.prompt_id for s in seqs], cfg.estimator,
                              cfg.eps)
    lengths = torch.tensor([len(s.response_ids) for s in seqs])
    seq_of = torch.repeat_interleave(torch.arange(len(seqs)), lengths)
    adv = adv_resp[seq_of].float()
    logp = stats["logp"].float()
    N = len(logp)
    valid = torch.ones(N, dtype=torch.bool)
    mb_seq = torch.tensor(microbatches(seqs, cfg.microbatch_tokens))
    mb = mb_seq[seq_of]
    old = torch.cat([torch.tensor(s.old_logprobs, dtype=torch.float32) if s.old_logprobs is not None
                     else torch.full((len(s.response_ids),), float("nan")) for s in seqs])
    old_filled = torch.where(torch.isnan(old), logp, old)
    cov = iv.token_covariance(logp, adv, valid)
    cov_mb = iv.token_covariance(logp, adv, valid, mb)
    out = {"logprob": logp, "entropy": stats["entropy"], "advantage": adv, "old_logprob": old,
           "microbatch": mb, "cov": cov, "cov_mb": cov_mb}
    if "clamped_entropy" in stats:
        out["clamped_entropy"] = stats["clamped_entropy"]
    selection = {}
    cc = cfg.intervention("clip_cov")
    _, clipped = ppo_token_losses(logp, old_filled, adv, cc.clip_low, cc.clip_high)
    for scope, c, grp in (("", cov, None), ("_mb", cov_mb, mb)):
        gen = torch.Generator().manual_seed(cfg.seed)
        out["clip_cov" + scope] = iv.clip_cov_mask(c, valid, clipped, cc.clip_cov_ratio, cc.clip_cov_lb,
                                                   cc.clip_cov_ub, generator=gen, group=grp)
        kc = cfg.intervention("kl_cov")
        out["kl_cov" + scope] = iv.kl_cov_mask(c, valid, kc.kl_cov_ratio, group=grp)
    st = cfg.intervention("steer")
    omega = iv.steer_omega(logp, old_filled, stats["entropy"], adv, st.steer_variant, st.steer_eta,
                           st.clip_low, st.clip_high)
    out["steer_omega"] = omega
    out["steer_weight"] = iv.steer_weights(omega, valid, st.steer_map, st.steer_w_min, st.steer_w_max, st.steer_floor)
    out["steer_weight_mb"] = iv.steer_weights(omega, valid, st.steer_map, st.steer_w_min, st.steer_w_max,
                                              st.steer_floor, group=mb)
    for name in ("clip_cov", "kl_cov"):
        selection[name] = _overlap(out[name], out[name + "_mb"])
        selection[name]["mean_cov_selected"] = float(cov[out[name]].mean()) if out[name].any() else None
    w, wm = out["steer_weight"], out["steer_weight_mb"]
    selection["steer"] = {"mean_weight": float(w.mean()), "mean_weight_mb": float(wm.mean()),
                          "tokens_below_1": int((w < 1).sum()), "tokens_below_1_mb": int((wm < 1).sum()),
                          "mean_abs_weight_change": float((w - wm).abs().mean()),
                          "max_abs_weight_change": float((w - wm).abs().max())}
    if "clamped_entropy" in stats:
        selection["aent"] = {"mean_clamped_entropy": float(stats["clamped_entropy"].mean()),
                             "mean_entropy": float(stats["entropy"].mean()), "clamp_p": cfg.clamp_p}
    frame = pd.DataFrame({
        "prompt_id": [seqs[i].prompt_id for i in seq_of.tolist()],
        "response_index": [seqs[i].response_index for i in seq_of.tolist()],
        "position": torch.cat([torch.arange(n) for n in lengths.tolist()]).numpy(),
        "token_id": np.concatenate([np.asarray(s.response_ids, dtype=np.int64) for s in seqs]),
        **{k: v.numpy() for k, v in out.items()},
    })
    sizes = group_sizes(seqs)
    per_response = frame.groupby(["prompt_id", "response_index"], sort=False)["entropy"].mean()
    summary = {
        "n_responses": len(seqs), "n_prompts": len(sizes), "n_tokens": N,
        "n_microbatches": int(mb_seq.max()) + 1,
        # a micro-batch of one response: its advantage is constant there, its micro-batch covariance 0
        "microbatches_of_one_response": int((torch.bincount(mb_seq) == 1).sum()),
        "sequences_over_microbatch_budget": sum(1 for s in seqs if len(s.prompt_ids) + len(s.response_ids)
                                                > cfg.microbatch_tokens),
        "singleton_groups": sum(1 for n in sizes.values() if n < 2),
        "entropy_token_mean": float(stats["entropy"].double().mean()),
        "entropy_seq_mean_token_mean": float(per_response.mean()),
        "table1": table1(cov), "table1_all_se": cluster_se(cov, frame["prompt_id"].to_numpy()),
        "table1_microbatch": table1(cov_mb), "table1_paper": PAPER_TABLE1,
        "selection": selection, "config": cfg.to_dict(),
    }
    return frame, summary
