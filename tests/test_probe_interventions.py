"""Advantages, intervention rules and the policy loss vs independent numpy / autograd checks."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch

from entropylaw.errors import EntropyLawError, EntropyLawWarning
from entropylaw.probing import interventions as iv
from entropylaw.probing.advantages import advantages
from entropylaw.probing.losses import InterventionConfig, policy_loss


# ---------------------------------------------------------------- advantages
def test_advantages_match_hand_formulas():
    r = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0])
    g = [7, 7, 7, 7, 3, 3, 3, 3]
    eps = 1e-6
    grpo, rloo = np.zeros(8), np.zeros(8)
    for ids in (range(0, 4), range(4, 8)):
        ids = list(ids)
        x = r[ids]
        grpo[ids] = (x - x.mean()) / (x.std(ddof=1) + eps)
        rloo[ids] = [x[i] - np.delete(x, i).mean() for i in range(len(x))]
    rpp = (r - r.mean()) / (r.std(ddof=1) + eps)
    np.testing.assert_allclose(advantages(torch.tensor(r), g, "grpo").numpy(), grpo, atol=1e-12)
    np.testing.assert_allclose(advantages(torch.tensor(r), g, "rloo").numpy(), rloo, atol=1e-12)
    np.testing.assert_allclose(advantages(r, g, "reinforce++").numpy(), rpp, atol=1e-12)
    np.testing.assert_allclose(advantages(r, g, "reinforce").numpy(), r)


def test_advantages_singletons_nan_and_unknown():
    with pytest.warns(EntropyLawWarning, match="single response"):
        a = advantages([1.0, 0.0, 1.0], ["a", "a", "b"], "grpo")
    assert a[2] == 0 and a[0] > 0 > a[1]
    with pytest.raises(EntropyLawError, match="reward of response 1"):
        advantages([1.0, float("nan")], [0, 0])
    with pytest.raises(EntropyLawError, match="grpo, rloo"):
        advantages([1.0], [0], "ppo")


# ---------------------------------------------------------------- covariance and masks
def _rand(shape=(6, 9), seed=0):
    g = torch.Generator().manual_seed(seed)
    logp = -torch.rand(shape, generator=g) * 4
    adv = torch.randn(shape[0], 1, generator=g).expand(shape)
    valid = torch.rand(shape, generator=g) > 0.2
    return logp, adv, valid


def test_token_covariance_vs_numpy_both_scopes():
    logp, adv, valid = _rand()
    x, a, v = logp.numpy(), adv.numpy(), valid.numpy()
    ref = (x - x[v].mean()) * (a - a[v].mean())
    got = iv.token_covariance(logp, adv, valid).numpy()
    np.testing.assert_allclose(got[v], ref[v], rtol=1e-5, atol=1e-6)
    assert (got[~v] == 0).all()
    group = torch.arange(6).repeat_interleave(9).reshape(6, 9) // 2  # micro-batches of 2 rows
    got = iv.token_covariance(logp, adv, valid, group).numpy()
    for mb in range(3):
        rows = slice(2 * mb, 2 * mb + 2)
        xs, as_, vs = x[rows], a[rows], v[rows]
        ref = (xs - xs[vs].mean()) * (as_ - as_[vs].mean())
        np.testing.assert_allclose(got[rows][vs], ref[vs], rtol=1e-5, atol=1e-6)


def test_kl_cov_mask_is_top_k_by_sort():
    logp, adv, valid = _rand((20, 50), seed=1)
    cov = iv.token_covariance(logp, adv, valid)
    for ratio in (2e-3, 0.05, 0.3):
        mask = iv.kl_cov_mask(cov, valid, ratio)
        vals = np.sort(cov[valid].numpy())[::-1]
        k = max(1, int(len(vals) * ratio))
        assert int(mask.sum()) == k and not (mask & ~valid).any()
        assert np.isclose(np.sort(cov[mask].numpy())[::-1], vals[:k]).all()


def test_clip_cov_mask_bounds_count_exclusion_and_seed():
    logp, adv, valid = _rand((40, 50), seed=2)
    cov = iv.token_covariance(logp, adv, valid) * 3
    clipped = torch.rand(cov.shape, generator=torch.Generator().manual_seed(5)) < 0.3
    ratio, lb, ub = 0.01, 0.5, 3.0
    m1 = iv.clip_cov_mask(cov, valid, clipped, ratio, lb, ub, generator=torch.Generator().manual_seed(0))
    m2 = iv.clip_cov_mask(cov, valid, clipped, ratio, lb, ub, generator=torch.Generator().manual_seed(0))
    m3 = iv.clip_cov_mask(cov, valid, clipped, ratio, lb, ub, generator=torch.Generator().manual_seed(1))
    n_cand = int((valid & (cov > lb) & (cov < ub) & ~clipped).sum())
    assert int(m1.sum()) == min(max(int(ratio * int(valid.sum())), 1), n_cand) > 1
    assert torch.equal(m1, m2) and not torch.equal(m1, m3)
    sel = cov[m1]
    assert (sel > lb).all() and (sel < ub).all() and not (m1 & (clipped | ~valid)).any()
    # with no candidate nothing is chosen; with tiny N at least one
    assert not iv.clip_cov_mask(cov, valid, None, ratio, 100.0, 200.0).any()
    one = iv.clip_cov_mask(torch.tensor([2.0, 0.0]), torch.tensor([True, True]), ratio=1e-4)
    assert one.tolist() == [True, False]


# ---------------------------------------------------------------- STEER
def test_steer_omega_and_weights_vs_numpy_transcription_of_spec():
    g = torch.Generator().manual_seed(3)
    logp = -torch.rand(200, generator=g) * 3
    old = logp + 0.3 * torch.randn(200, generator=g)
    h = torch.rand(200, generator=g) * 2
    a = torch.randn(200, generator=g)
    p, po, H, A = (t.double().numpy() for t in (logp.exp(), old.exp(), h, a))
    pc = np.clip(p, 1e-8, 1 - 1e-8)
    code = A / po * pc * (1 - pc) * (np.log(pc) + H)
    np.testing.assert_allclose(iv.steer_omega(logp, old, h, a, "code").numpy(), code, rtol=1e-4, atol=1e-6)
    r = p / po
    iclip = np.where(((A > 0) & (r > 1.2)) | ((A < 0) & (r < 0.8)), 0.0, 1.0)
    paper = -0.5 * iclip * r * A * (1 - p) ** 2 * (np.log(p) + H)
    np.testing.assert_allclose(iv.steer_omega(logp, old, h, a, "paper", eta=0.5).numpy(), paper, rtol=1e-4, atol=1e-6)
    assert (iclip == 0).any()  # the indicator was exercised

    valid = torch.rand(200, generator=g) > 0.1
    om = torch.tensor(code, dtype=torch.float32)
    m = np.abs(code)[valid.numpy()]
    k = -math.log(0.8) / max(m.max(), 0.02)
    w_exp = np.clip(np.exp(-k * np.abs(code)), 0.8, 1.0)
    got = iv.steer_weights(om, valid, "exp", 0.8).numpy()
    np.testing.assert_allclose(got[valid.numpy()], w_exp[valid.numpy()], rtol=1e-5)
    assert (got[~valid.numpy()] == 1).all()
    assert np.isclose(got[valid.numpy()].min(), 0.8)
    w_lin = 1.2 - (np.abs(code) - m.min()) / (m.max() - m.min()) * (1.2 - 0.7)
    got = iv.steer_weights(om, valid, "linear", 0.7).numpy()
    np.testing.assert_allclose(got[valid.numpy()], w_lin[valid.numpy()], rtol=1e-5)
    # floor: all |Omega| tiny -> k uses 0.02, weights stay near 1
    assert iv.steer_weights(torch.full((5,), 1e-4), torch.ones(5, dtype=torch.bool)).min() > 0.99


# ---------------------------------------------------------------- AEnt
def test_clamped_entropy_vs_numpy_sort():
    g = torch.Generator().manual_seed(4)
    logits = torch.randn(7, 40, generator=g) * 2
    for cp in (0.0, 0.3, 0.9):
        k = int(math.floor(cp * 40))
        ref = []
        for row in logits.double().numpy():
            keep = np.sort(row)[k:]
            q = np.exp(keep - keep.max()); q /= q.sum()
            ref.append(-(q * np.log(q)).sum())
        np.testing.assert_allclose(iv.clamped_entropy(logits, cp).double().numpy(), ref, rtol=1e-5)


def test_aent_coefficient_rule_and_bounds():
    c = iv.AEntCoefficient(coef=1e-3, lr=0.01, h_low=0.3, h_high=0.6, reg=0.5, coef_low=5e-4, coef_high=2e-3,
                           warmup_steps=1)
    assert c.update(0.0) == 1e-3  # warm-up
    expected = 1e-3 - 0.01 * ((0.1 - 0.3) + 0.0 + 0.5 * 0.0)
    assert math.isclose(c.update(0.1), min(expected, 2e-3))
    assert c.update(5.0) == 5e-4  # far above h_high: clipped at the lower bound
    coef = c.coef_
    mid = coef - 0.01 * (0.5 * (coef - 1e-3))
    assert math.isclose(c.update(0.45), mid)


# ---------------------------------------------------------------- policy loss
def _batch(seed=0, b=8, t=30):
    g = torch.Generator().manual_seed(seed)
    logp = (-torch.rand(b, t, generator=g) * 3).requires_grad_(True)
    old = (logp.detach() + 0.2 * torch.randn(b, t, generator=g))
    adv = torch.randn(b, 1, generator=g)
    valid = torch.rand(b, t, generator=g) > 0.15
    return logp, old, adv, valid


def _ppo_numpy(lp, olp, a, v, lo, hi, dual=None):
    r = np.exp(lp - olp)
    out = np.maximum(-a * r, -a * np.clip(r, 1 - lo, 1 + hi))
    if dual is not None:
        out = np.where(a < 0, np.minimum(out, -a * dual), out)
    return (out * v).sum() / v.sum()


def test_vanilla_and_clip_higher_loss_values():
    logp, old, adv, valid = _batch()
    a = np.broadcast_to(adv.numpy(), logp.shape)
    for name, hi in (("none", 0.2), ("clip_higher", 0.28)):
        loss, info = policy_loss(logp, old, adv, valid, InterventionConfig(name))
        ref = _ppo_numpy(logp.detach().numpy(), old.numpy(), a, valid.numpy(), 0.2, hi, 3.0)
        assert math.isclose(float(loss.detach()), ref, rel_tol=1e-5)
        assert 0 < info["clipfrac"] < 1


def test_clip_cov_gradient_zero_exactly_at_selected_tokens():
    logp, old, adv, valid = _batch(seed=1, b=20, t=40)
    adv = adv * 4  # large advantages give covariances inside (1, 5)
    cfg = InterventionConfig("clip_cov", clip_cov_ratio=0.02)
    gen = lambda: torch.Generator().manual_seed(0)  # noqa: E731
    loss, info = policy_loss(logp, old, adv, valid, cfg, generator=gen(), return_selection=True)
    (grad,) = torch.autograd.grad(loss, logp)
    sel = info["selected"]
    assert info["n_selected"] == int(sel.sum()) > 1
    assert (grad[sel] == 0).all()
    base, _ = policy_loss(logp, old, adv, valid, InterventionConfig("none", clip_low=1.0, clip_high=1.0,
                                                                   dual_clip_c=None))
    (g0,) = torch.autograd.grad(base, logp)
    keep = ~sel
    assert torch.allclose(grad[keep], g0[keep]) and (g0[sel] != 0).all()
    assert math.isclose(float(loss.detach()), float(base.detach()), rel_tol=1e-6)  # detaching keeps the value


def test_kl_cov_loss_matches_manual_and_has_no_clip():
    logp, old, adv, valid = _batch(seed=2)
    cfg = InterventionConfig("kl_cov", kl_cov_ratio=0.05, kl_cov_beta=2.0)
    loss, info = policy_loss(logp, old, adv, valid, cfg, return_selection=True)
    lp, olp, v = logp.detach().numpy(), old.numpy(), valid.numpy()
    a = np.broadcast_to(adv.numpy(), lp.shape)
    cov = (lp - lp[v].mean()) * (a - a[v].mean())
    k = max(1, int(v.sum() * 0.05))
    thresh = np.sort(cov[v])[::-1][k - 1]
    sel = v & (cov >= thresh)
    per = -a * np.exp(lp - olp) + np.where(sel, 2.0 * np.abs(lp - olp), 0.0)
    assert math.isclose(float(loss.detach()), (per * v).sum() / v.sum(), rel_tol=1e-5)
    assert np.array_equal(info["selected"].numpy(), sel)
    # on-policy (log p = log p_old) the penalty is zero and the loss is -mean(A)
    loss0, _ = policy_loss(logp, logp.detach(), adv, valid, cfg)
    assert math.isclose(float(loss0.detach()), -(a * v).sum() / v.sum(), rel_tol=1e-5)


def test_steer_entropy_bonus_and_aent_losses():
    logp, old, adv, valid = _batch(seed=3)
    h = torch.rand(logp.shape, generator=torch.Generator().manual_seed(9)) * 2
    hr = h.clone().requires_grad_(True)
    base, _ = policy_loss(logp, old, adv, valid, InterventionConfig("none"))
    lossb, _ = policy_loss(logp, old, adv, valid, InterventionConfig("entropy_bonus", entropy_coef=0.01), entropy=hr)
    mean_h = float((h * valid).sum() / valid.sum())
    assert math.isclose(float(lossb.detach()), float(base.detach()) - 0.01 * mean_h, rel_tol=1e-6)
    (gh,) = torch.autograd.grad(lossb, hr)
    assert torch.allclose(gh[valid], torch.full_like(gh[valid], -0.01 / int(valid.sum())))
    lossa, _ = policy_loss(logp, old, adv, valid, InterventionConfig("aent", aent_coef=0.1), clamped_entropy=h)
    assert math.isclose(float(lossa.detach()), float(base.detach()) - 0.1 * mean_h, rel_tol=1e-6)
    losss, info = policy_loss(logp, old, adv, valid, InterventionConfig("steer"), old_entropy=h,
                              return_selection=True)
    w = info["weights"]
    assert 0.8 <= float(w[valid].min()) < 1 and float(w.max()) <= 1
    # weights multiply the per-token PPO loss: compare with a hand-weighted surrogate
    lp, olp, v = logp.detach().numpy(), old.numpy(), valid.numpy()
    a = np.broadcast_to(adv.numpy(), lp.shape)
    r = np.exp(lp - olp)
    per = np.maximum(-a * r, -a * np.clip(r, 0.8, 1.2))
    per = np.where(a < 0, np.minimum(per, -3 * a), per)
    assert math.isclose(float(losss.detach()), (w.numpy() * per * v).sum() / v.sum(), rel_tol=1e-5)


def test_config_validation():
    with pytest.raises(EntropyLawError, match="clip_cov, kl_cov"):
        InterventionConfig("clipcov")
    with pytest.raises(EntropyLawError, match="clip_cov_lb"):
        InterventionConfig("clip_cov", clip_cov_lb=5, clip_cov_ub=1)
    with pytest.raises(EntropyLawError, match="unknown intervention setting"):
        InterventionConfig.from_dict({"name": "kl_cov", "kl_ratio": 1})
    c = InterventionConfig("clip_cov")
    assert (c.clip_low, c.clip_high) == (1.0, 1.0)
    assert InterventionConfig("clip_higher").clip_high == 0.28
    assert InterventionConfig.from_dict(c.to_dict()) == c
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        InterventionConfig("steer", steer_map="linear", steer_w_min=0.7)
