"""The entropy-change ladder: one real update, entropy measured before and after.

From the probed weights theta0 the policy-gradient loss (with an intervention, or none)
is back-propagated once; theta = theta0 - eta * d with d the gradient (SGD) or Adam's first
step g / (|g| + eps); the entropy at every valid position is measured again on the same
inputs, and theta0 restored. Each estimator's per-position prediction is compared with the
measured change dH (SPEC section 4). The token weight w_t = -dL/dlog p(y_t) of the loss
actually used comes from autograd, so masked / reweighted tokens enter every estimator.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np
import torch
from scipy import stats as sstats

from entropylaw.probe import dist, dynamics, stream
from entropylaw.probe.forward import batches, differentiable_stats, hidden_at_valid
from entropylaw.probe.losses import InterventionConfig, policy_loss
from entropylaw.probe.model import lm_head_weight

ESTIMATORS = ("lemma1", "theorem1_sampled", "theorem2", "steer_paper", "steer_code", "response_cov")


@dataclass
class LadderConfig:
    lr: float | None = None          # SGD step; None: rel_step * |theta| / |d|
    rel_step: float = 1e-3
    optimizer: str = "sgd"           # or "adam" (first Adam step: g / (|g| + eps))
    adam_eps: float = 1e-8
    scales: tuple = (1.0, 0.5, 0.25)  # eta multiples for the eta^2 check of Lemma 1
    scope: str = "batch"              # covariance scope of the interventions' selections
    whatif: tuple = ("none", "clip_cov", "kl_cov", "steer", "aent", "entropy_bonus")
    seed: int = 0
    extra: dict = field(default_factory=dict)

    def to_dict(self):
        return asdict(self)


def _params(model):
    return [p for p in model.parameters() if p.requires_grad]


def _direction(model, seqs, tok, iv_cfg, n_total, pcfg, lcfg):
    """Back-propagate the shard's part of the batch loss; return (direction, per-token w)."""
    params = _params(model)
    for p in params:
        p.grad = None
    clamp = pcfg.clamp_p if iv_cfg.name == "aent" else None
    ws = []
    offsets = np.cumsum([0] + [len(s.response_ids) for s in seqs])
    with torch.enable_grad():
        for index, lp, H, hc in differentiable_stats(model, seqs, pcfg.temperature, pcfg.chunk_size, clamp,
                                                     pcfg.batch_tokens):
            a, b = int(offsets[index[0]]), int(offsets[index[-1] + 1])
            dev = lp.device
            sl = {k: v[a:b].to(dev) for k, v in tok.items()}
            lp.retain_grad()
            valid = torch.ones_like(lp, dtype=torch.bool)
            loss, _ = policy_loss(lp, sl["old"], sl["adv"], valid, iv_cfg, entropy=H, clamped_entropy=hc,
                                  old_entropy=sl["entropy0"], selected=sl.get("selected"),
                                  weights=sl.get("weights"), normaliser=float(n_total))
            loss.backward()
            ws.append(-lp.grad.detach().cpu())
    dist.all_reduce_grads(params)
    grads = [p.grad.detach().clone() if p.grad is not None else torch.zeros_like(p) for p in params]
    for p in params:
        p.grad = None
    if lcfg.optimizer == "adam":
        grads = [g / (g.abs() + lcfg.adam_eps) for g in grads]
    elif lcfg.optimizer != "sgd":
        raise ValueError(f"unknown optimizer {lcfg.optimizer!r}")
    return grads, torch.cat(ws) if ws else torch.zeros(0)


@torch.no_grad()
def _measure(model, seqs, h0, W0, pcfg):
    """Entropy after the update and Lemma 1 with the actual logit change, per valid token."""
    W1 = lm_head_weight(model)
    H1, L1 = [], []
    offsets = np.cumsum([0] + [len(s.response_ids) for s in seqs])
    for index in batches(seqs, pcfg.batch_tokens):
        h1, y = hidden_at_valid(model, seqs, index)
        a, b = int(offsets[index[0]]), int(offsets[index[-1] + 1])
        H1.append(stream.token_stats(h1, W1, y, pcfg.temperature, pcfg.chunk_size)["entropy"].cpu())
        L1.append(stream.lemma1(h0[a:b].to(h1.device), W0, h1, W1, pcfg.temperature, pcfg.chunk_size).cpu())
    return torch.cat(H1), torch.cat(L1)


def global_norm(tensors) -> float:
    return math.sqrt(sum(float(t.double().pow(2).sum()) for t in tensors))


def one_step(model, seqs, stats, tok, iv_cfg, n_total, pcfg, lcfg, etas=None):
    """Apply one update per eta from the probed weights, measure, restore. Local (shard) results."""
    params = _params(model)
    theta0 = [p.detach().clone() for p in params]
    W0 = lm_head_weight(model).detach().clone()
    out = {}
    try:
        d, w = _direction(model, seqs, tok, iv_cfg, n_total, pcfg, lcfg)
        if etas is None:
            base = lcfg.lr if lcfg.lr is not None else lcfg.rel_step * global_norm(theta0) / max(global_norm(d), 1e-30)
            etas = [base * s for s in lcfg.scales]
        out["etas"], out["w"] = list(etas), w
        for k, eta in enumerate(etas):
            with torch.no_grad():
                for p, t0, g in zip(params, theta0, d):
                    p.copy_(t0 - eta * g)
            H1, L1 = _measure(model, seqs, stats["hidden"], W0, pcfg)
            out[f"dH_{k}"] = H1 - stats["entropy"]
            out[f"lemma1_{k}"] = L1
    finally:
        with torch.no_grad():
            for p, t0 in zip(params, theta0):
                p.copy_(t0)
    return out


def predictions(frame_tok: dict, w: torch.Tensor, eta: float) -> dict:
    """Per-token predictions of the tabular estimators (float64)."""
    lp, H = frame_tok["logprob"].double(), frame_tok["entropy"].double()
    p2, old, w = frame_tok["sum_p2"].double(), frame_tok["old"].double(), w.double()
    return {"theorem1_sampled": dynamics.sampled_token(lp, H, p2, w, eta),
            "theorem2": dynamics.theorem2_sampled(lp, H, w, eta),
            "steer_paper": dynamics.steer_paper(lp, H, w, eta),
            "steer_code": dynamics.steer_code(lp, H, old, w, eta)}


def response_cov(seq_of, groups, lp, adv):
    """Per prompt group Cov_i(mean_t log p(y_i,t), A_i); returns (group ids, cov per group)."""
    n_seq = int(seq_of.max()) + 1
    count = torch.zeros(n_seq, dtype=torch.float64).index_add_(0, seq_of, torch.ones_like(lp, dtype=torch.float64))
    mean_lp = torch.zeros(n_seq, dtype=torch.float64).index_add_(0, seq_of, lp.double()) / count
    a = torch.zeros(n_seq, dtype=torch.float64).index_add_(0, seq_of, adv.double()) / count
    covs = {}
    for g in dict.fromkeys(groups):
        idx = torch.tensor([i for i, x in enumerate(groups) if x == g])
        x, y = mean_lp[idx], a[idx]
        covs[g] = float(((x - x.mean()) * (y - y.mean())).mean())
    return covs


def compare(pred: np.ndarray, meas: np.ndarray) -> dict:
    """pearson, spearman, sign agreement, slope (meas on pred), error of the mean."""
    pred, meas = np.asarray(pred, float), np.asarray(meas, float)
    ok = np.isfinite(pred) & np.isfinite(meas)
    pred, meas = pred[ok], meas[ok]
    res = {"n": int(len(pred)), "predicted_mean": float(pred.mean()) if len(pred) else None,
           "measured_mean": float(meas.mean()) if len(meas) else None}
    if len(pred) < 3 or np.std(pred) == 0 or np.std(meas) == 0:
        res.update(pearson=None, spearman=None, slope=None)
    else:
        res["pearson"] = float(np.corrcoef(pred, meas)[0, 1])
        res["spearman"] = float(sstats.spearmanr(pred, meas).statistic)
        res["slope"] = float(np.cov(pred, meas)[0, 1] / np.var(pred, ddof=1))
    nz = meas != 0
    res["sign_agreement"] = float((np.sign(pred[nz]) == np.sign(meas[nz])).mean()) if nz.any() else None
    res["mean_error"] = float(pred.mean() - meas.mean()) if len(pred) else None
    return res


def ladder_report(tok: dict, res: dict, seq_of, groups) -> dict:
    """Estimator -> comparison with the measured dH at the first eta, plus the eta^2 check."""
    eta = res["etas"][0]
    meas = res["dH_0"].double().numpy()
    report = {"lemma1": compare(res["lemma1_0"].numpy(), meas)}
    for name, pred in predictions(tok, res["w"], eta).items():
        report[name] = compare(pred.numpy(), meas)
    covs = response_cov(seq_of, groups, tok["logprob"], tok["adv"])
    n_tok = len(meas)
    gids = list(dict.fromkeys(groups))
    sizes = {g: groups.count(g) for g in gids}
    seq_group = [groups[i] for i in seq_of.tolist()]
    meas_g = {g: [] for g in gids}
    for g, m in zip(seq_group, meas):
        meas_g[g].append(m)
    # heuristic scale: a group of G responses moves like G tokens of weight A / N
    pred_g = [-eta * sizes[g] / n_tok * covs[g] for g in gids]
    report["response_cov"] = compare(np.array(pred_g), np.array([np.mean(meas_g[g]) for g in gids]))
    report["response_cov"]["unit"] = "prompt group"
    errors = [float(np.mean(np.abs(res[f"lemma1_{k}"].double().numpy() - res[f"dH_{k}"].double().numpy())))
              for k in range(len(res["etas"]))]
    check = {"etas": res["etas"], "lemma1_mean_abs_error": errors}
    if len(errors) >= 2 and all(e > 0 for e in errors):
        check["loglog_slope"] = float(np.polyfit(np.log(res["etas"]), np.log(errors), 1)[0])
    return {"eta": eta, "estimators": report, "eta_squared_check": check}


def whatif_row(res: dict, tok: dict) -> dict:
    """Predicted (Lemma 1 with actual dz; tabular sampled-token form) and measured batch dH."""
    eta = res["etas"][0]
    pred = predictions(tok, res["w"], eta)["theorem1_sampled"]
    return {"measured_mean_dH": float(res["dH_0"].double().mean()),
            "lemma1_mean_dH": float(res["lemma1_0"].double().mean()),
            "sampled_token_mean_dH": float(pred.mean()),
            "mean_token_weight": float(res["w"].double().mean())}


def intervention_config(name: str, pcfg) -> InterventionConfig:
    return pcfg.intervention(name)
