"""The entropy-change ladder: one real update, entropy measured before and after.

From the probed weights theta0 the policy-gradient loss (with an intervention, or none)
is back-propagated once; theta = theta0 - eta * d with d the gradient (SGD) or Adam's first
step g / (|g| + eps); the entropy at every valid position is measured again on the same
inputs, and theta0 restored. Each estimator's per-position prediction is compared with the
measured change dH (SPEC section 4). The token weight w_t = -dL/dlog p(y_t) of the loss
actually used comes from autograd, so masked / reweighted tokens enter every estimator.

The step is chosen so that the comparison is first order (:func:`first_order`): starting
at ``rel_step * |theta| / |d|`` the step is halved until, over three consecutive rungs
(eta, eta/2, eta/4), Lemma 1's error falls as eta^2 (log-log slope in ``slope_range``) and
the per-token dH/eta agrees between rungs to ``linearity_tol`` (dH linear in eta). The
largest such eta is reported. A step that is too large is not first order (a real LM at the
lab's default step: Pearson 0.08); one that is too small drowns in rounding. ``lr`` fixes
the ladder (eta, eta/2, eta/4) instead; either way a ladder outside the regime is marked.

>>> first_order([1e-2, 5e-3, 2.5e-3], [4e-6, 1e-6, 2.5e-7], [0.01, 0.005])["ok"]
True
>>> round(first_order([1.0, 0.5, 0.25], [0.3, 0.2, 0.13], [0.4, 0.2])["slope"], 2)
0.6
"""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass, field

import numpy as np
import torch
from scipy import stats as sstats

from entropylaw.errors import EntropyLawError, EntropyLawWarning
from entropylaw.probing import dist, dynamics, stream
from entropylaw.probing.forward import batches, differentiable_stats, hidden_at_valid
from entropylaw.probing.losses import InterventionConfig, policy_loss
from entropylaw.probing.model import lm_head_weight
from entropylaw.probing.update import from_plain_update, global_norm, global_sums, set_params, too_large_everywhere, \
    trainable_params

SLOPE_RANGE = (1.8, 2.2)   # Lemma 1 error ~ eta^slope: 2 = first order
LINEARITY_TOL = 0.05       # max relative change of per-token dH/eta between rungs (Pearson ~0.99 on the lab models)
ESTIMATORS = ("lemma1", "theorem1_sampled", "theorem2", "steer_paper", "steer_code", "response_cov")


OPTIMIZERS = ("sgd", "adam")  # the ladder's update: a gradient step, or Adam's first step
SCOPES = ("batch", "microbatch")  # where the interventions' selections compute their covariance


@dataclass
class LadderConfig:
    lr: float | None = None          # SGD step; None: rel_step * |theta| / |d|
    rel_step: float = 1e-3
    optimizer: str = "sgd"           # or "adam" (first Adam step: g / (|g| + eps))
    adam_eps: float = 1e-8
    scales: tuple = (1.0, 0.5, 0.25)  # eta multiples for the eta^2 check of Lemma 1
    max_rungs: int = 18               # halvings tried by the automatic step (2^-17 of the first eta)
    max_dh_frac: float = 0.5          # a step moving mean |dH| past this fraction of H is not a step
    shrink: float = 16.0              # factor of the search's cuts while the step is too large
    slope_range: tuple = SLOPE_RANGE
    linearity_tol: float = LINEARITY_TOL
    scope: str = "batch"              # covariance scope of the interventions' selections
    whatif: tuple = ("none", "clip_cov", "kl_cov", "steer", "aent", "entropy_bonus")
    seed: int = 0
    extra: dict = field(default_factory=dict)

    def to_dict(self):
        return asdict(self)


def _direction(model, seqs, tok, iv_cfg, n_total, pcfg, lcfg):
    """Back-propagate the shard's part of the batch loss; return (direction, per-token w)."""
    params = trainable_params(model)
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
    elif lcfg.optimizer not in OPTIMIZERS:
        raise ValueError(f"unknown optimizer {lcfg.optimizer!r}")
    return grads, torch.cat(ws) if ws else torch.zeros(0)


@torch.no_grad()
def _measure(model, seqs, h0, W0, pcfg):
    """Entropy after the update and Lemma 1 with the actual logit change, per valid token."""
    W1 = lm_head_weight(model)
    H1, L1, P1 = [], [], []
    offsets = np.cumsum([0] + [len(s.response_ids) for s in seqs])
    for index in batches(seqs, pcfg.batch_tokens):
        h1, y = hidden_at_valid(model, seqs, index)
        a, b = int(offsets[index[0]]), int(offsets[index[-1] + 1])
        lem, st = stream.lemma1(h0[a:b].to(h1.device), W0, h1, W1, pcfg.temperature, pcfg.chunk_size, targets=y)
        H1.append(st["entropy"].cpu())
        P1.append(st["logp"].cpu())
        L1.append(lem.cpu())
    return torch.cat(H1), torch.cat(L1), torch.cat(P1)


def first_order(etas, errors, nonlinearity, slope_range=SLOPE_RANGE, linearity_tol=LINEARITY_TOL) -> dict:
    """Is a ladder first order? Log-log slope of Lemma 1's error on eta, and dH linear in eta.

    ``nonlinearity``: relative change of per-token dH/eta between consecutive rungs.
    """
    measured = [v for v in nonlinearity if v is not None]  # None: a rung whose dH was 0 (unmeasured)
    res = {"slope": None, "ok": False,
           "nonlinearity": max(measured) if measured and len(measured) == len(nonlinearity) else None}
    if len(errors) >= 2 and all(np.isfinite(e) and e > 0 for e in errors):
        res["slope"] = float(np.polyfit(np.log(etas), np.log(errors), 1)[0])
        res["ok"] = bool(slope_range[0] <= res["slope"] <= slope_range[1] and res["nonlinearity"] is not None
                         and res["nonlinearity"] <= linearity_tol)
    return res


def _rung_sums(dH, L1, eta, prev):
    """Local sums: |Lemma 1 - dH|, tokens, (with the previous rung) |dH/eta - dH'/eta'|^2, |dH'/eta'|^2, and |dH|^2."""
    err, moved = float((L1.double() - dH.double()).abs().sum()), float(dH.double().pow(2).sum())
    if prev is None:
        return [err, float(len(dH)), 0.0, 0.0, moved]
    r, r_prev = dH.double() / eta, prev[0].double() / prev[1]
    return [err, float(len(dH)), float((r - r_prev).pow(2).sum()), float(r_prev.pow(2).sum()), moved]


def one_step(model, seqs, stats, tok, iv_cfg, n_total, pcfg, lcfg, etas=None, bar=None, base=None):
    """Apply one update per eta from the probed weights, measure, restore. Local (shard) results.

    ``etas`` None: ``lcfg.lr`` x scales, or (no lr) the automatic first-order search, whose
    rungs are returned under ``search``.
    """
    params = trainable_params(model)
    theta0 = [p.detach().clone() for p in params]
    W0 = lm_head_weight(model).detach().clone()
    out = {}

    def measure(eta, n_seq=None):
        """dH, Lemma 1, why the step is too large; ``n_seq``: on the first sequences only (a quick look)."""
        set_params(model, params, theta0, d, eta)
        part = seqs if n_seq is None else seqs[:n_seq]
        n_tok = sum(len(s.response_ids) for s in part)
        H1, L1, P1 = _measure(model, part, stats["hidden"][:n_tok], W0, pcfg)
        if bar is not None:
            bar.update(1)
        dH = H1 - stats["entropy"][:n_tok]
        why = too_large_everywhere(dH, stats["entropy"][:n_tok], P1 - stats["logp"][:n_tok], lcfg.max_dh_frac,
                                   W0.device)
        return dH, L1, why

    try:
        d = None
        if base is not None and lcfg.optimizer == "sgd" and etas is not None:
            d, w, out = from_plain_update(model, seqs, stats, tok, iv_cfg, n_total, pcfg, base, etas)
            if "dH_0" in out:
                return out
        if d is None:
            d, w = _direction(model, seqs, tok, iv_cfg, n_total, pcfg, lcfg)
        out["w"] = w
        out["direction"] = d
        if etas is None and lcfg.lr is not None:
            etas = [lcfg.lr * s for s in lcfg.scales]
        if etas is not None:
            out["etas"] = list(etas)
            too_large = []
            for k, eta in enumerate(etas):
                out[f"dH_{k}"], out[f"lemma1_{k}"], why = measure(eta)
                if why:
                    too_large.append({"eta": eta, "too_large": why})
            if too_large:
                out["too_large"] = too_large
            return out
        dnorm = global_norm(d)
        if dnorm == 0.0:
            raise EntropyLawError("probe ladder: the policy-gradient direction is exactly 0 (no token carries a "
                                  "non-zero weight): there is no update to measure")
        eta = lcfg.rel_step * global_norm(theta0) / dnorm
        search, rungs, valid, chosen, bound = [], [], [], None, None
        quick = max(1, len(seqs) // 4)  # every rank takes the same path (collectives)
        for k in range(lcfg.max_rungs):
            why = measure(eta, quick)[2] if not rungs and quick else None  # too large already on a quarter?
            if not why:
                dH, L1, why = measure(eta)
            if why and not rungs:  # not a step yet: cut hard until it is one
                search.append({"eta": eta, "too_large": why})
                eta /= lcfg.shrink
                continue
            prev = (rungs[-1][1], rungs[-1][0]) if rungs else None
            err, n, diff2, ref2, moved = global_sums(_rung_sums(dH, L1, eta, prev), W0.device)
            rungs.append((eta, dH, L1))
            entry = {"eta": eta, "lemma1_mean_abs_error": err / max(n, 1.0),
                     "nonlinearity": math.sqrt(diff2 / ref2) if prev is not None and ref2 > 0 else None}
            if why:
                entry["too_large"] = why
            search.append(entry)
            valid.append(entry)
            eta *= 0.5
            if err == 0.0:
                bound = "rounding floor: Lemma 1's error is exactly 0, the step is below float rounding"
                break
            if moved == 0.0:
                bound = "rounding floor: no token's entropy changed at all, the step is below float rounding"
                break
            if len(valid) >= 3:
                win = valid[-3:]
                check = first_order([r["eta"] for r in win], [r["lemma1_mean_abs_error"] for r in win],
                                    [r["nonlinearity"] for r in win[1:]], lcfg.slope_range, lcfg.linearity_tol)
                win[0]["window_slope"] = check["slope"]
                if check["ok"] and not any("too_large" in r for r in win):
                    chosen = len(valid) - 3
                    break
        if not rungs:
            raise EntropyLawError(f"probe ladder: every step tried was too large ({search[-1]['too_large']}) "
                                  f"down to eta {search[-1]['eta']:.3g} after {len(search)} cuts: the step "
                                  "search hit its bound (give `lr`, or a smaller `rel_step`)")
        if chosen is None:  # never first order: the window whose slope came closest to 2
            bound = bound or f"max halvings: {lcfg.max_rungs} rungs without a first-order window"
            scored = [(abs(r["window_slope"] - 2.0), i) for i, r in enumerate(valid) if r.get("window_slope")]
            chosen = min(scored)[1] if scored else 0
        window = rungs[chosen:chosen + 3]
        out["etas"] = [r[0] for r in window]
        out["search"] = search
        if bound:
            out["bound"] = bound
        for k, (_, dH, L1) in enumerate(window):
            out[f"dH_{k}"], out[f"lemma1_{k}"] = dH, L1
    finally:
        set_params(model, params, theta0, None, 0.0)
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


def ladder_report(tok: dict, res: dict, seq_of, groups, slope_range=SLOPE_RANGE,
                  linearity_tol=LINEARITY_TOL) -> dict:
    """Estimator -> comparison with the measured dH at the first eta, plus the first-order check."""
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
    n_rungs = len(res["etas"])
    errors = [float(np.mean(np.abs(res[f"lemma1_{k}"].double().numpy() - res[f"dH_{k}"].double().numpy())))
              for k in range(n_rungs)]
    ratios = [res[f"dH_{k}"].double().numpy() / res["etas"][k] for k in range(n_rungs)]
    nonlin = [float(np.linalg.norm(ratios[k] - ratios[k - 1]) / np.linalg.norm(ratios[k - 1]))
              if np.linalg.norm(ratios[k - 1]) > 0 else float("inf") for k in range(1, n_rungs)]
    regime = first_order(res["etas"], errors, nonlin, slope_range, linearity_tol)
    check = {"etas": res["etas"], "lemma1_mean_abs_error": errors, "dH_nonlinearity": nonlin,
             "first_order": regime["ok"], "chosen": "search" if res.get("search") else "fixed"}
    if regime["slope"] is not None:
        check["loglog_slope"] = regime["slope"]
    if res.get("search"):
        check["search"] = res["search"]
    for key in ("bound", "too_large"):
        if res.get(key):
            check[key] = res[key]
    if res.get("bound"):
        warnings.warn(f"probe ladder: the step search hit its bound ({res['bound']})", EntropyLawWarning,
                      stacklevel=2)
    if not regime["ok"]:
        slope = "n/a" if regime["slope"] is None else f"{regime['slope']:.2f}"
        how = (f"the step search tried {len(res['search'])} halvings" if res.get("search") else
               "`lr` fixed the step")
        warnings.warn(f"probe ladder: not first order at eta {eta:.4g} (Lemma 1 error log-log slope {slope}, "
                      f"expected {slope_range[0]}-{slope_range[1]}; dH/eta varies by "
                      f"{max(nonlin) if nonlin else float('nan'):.2g} between rungs); {how}: the estimator "
                      "comparisons below are not first-order (try `dtype` float64, or another `lr`)",
                      EntropyLawWarning, stacklevel=2)
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
