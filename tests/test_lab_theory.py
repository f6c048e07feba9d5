"""Theory mode: the batch-level entropy-change predictions against independent computations.

A tabular softmax policy (one free logit vector per state) takes a real SGD step on the
token-mean vanilla policy-gradient loss; its entropy is measured before and after with
torch.distributions, and the derivative along the step comes from autograd. Then a micro
lab run in theory mode checks the logged predictions against the logged measured change.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from entropylaw.errors import EntropyLawError
from entropylaw.lab.config import RunConfig
from entropylaw.lab.sweep import parse_sweep
from entropylaw.lab.theory import batch_predictions
from entropylaw.probing import dynamics

S, V = 64, 7


def _toy(seed=0, centred=False):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(S, V, generator=g, dtype=torch.float64) * 1.5
    y = torch.multinomial(torch.softmax(logits, -1), 1, generator=g).squeeze(1)
    adv = torch.randn(S, generator=g, dtype=torch.float64)
    return logits, y, adv


def _loss(theta, y, adv):
    """Token-mean vanilla policy-gradient loss -(1/N) sum_t A_t log p_t(y_t)."""
    logp = torch.log_softmax(theta, -1).gather(-1, y[:, None]).squeeze(1)
    return -(adv * logp).mean()


def _mean_entropy(theta):
    return torch.distributions.Categorical(logits=theta).entropy().mean()


def _sgd_step(logits, y, adv, eta):
    theta = logits.clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(_loss(theta, y, adv), theta)
    return logits - eta * grad


def _predict(logits, after, y, adv, eta):
    # the lab's shapes: [B, R, V] logits, [B, R] targets, [B, 1] advantages
    return batch_predictions(logits[:, None, :], after[:, None, :], y[:, None], adv[:, None],
                             torch.ones(S, 1, dtype=torch.bool), 1.0, eta)


def test_lemma1_with_the_actual_step_matches_measured_entropy_change_to_second_order():
    logits, y, adv = _toy()
    errors = []
    for eta in (0.2, 0.1, 0.05):
        after = _sgd_step(logits, y, adv, eta)
        measured = float(_mean_entropy(after) - _mean_entropy(logits))
        pred = _predict(logits, after, y, adv, eta)["theory/dH_lemma1"]
        errors.append(abs(pred - measured))
        assert pred == pytest.approx(measured, rel=0.03)
    # halving the step quarters the error: the remainder is second order
    assert 3.0 < errors[0] / errors[1] < 5.0 and 3.0 < errors[1] / errors[2] < 5.0


def test_sampled_theorem1_is_the_exact_derivative_for_tabular_logits():
    """d/d eta of the mean entropy along the SGD step, by autograd, equals the sampled-token
    form with the tabular step eta/N per state (the token-mean loss spreads 1/N on each)."""
    logits, y, adv = _toy(seed=1)
    theta = logits.clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(_loss(theta, y, adv), theta)
    eta = torch.zeros((), dtype=torch.float64, requires_grad=True)
    (slope,) = torch.autograd.grad(_mean_entropy(logits - eta * grad), eta)
    pred = _predict(logits, logits, y, adv, 1.0 / S)["theory/dH_thm1_sampled"]
    assert pred == pytest.approx(float(slope), rel=1e-10, abs=1e-14)
    # and Lemma 1 with a tiny actual step agrees with the same derivative
    tiny = 1e-6
    l1 = _predict(logits, logits - tiny * grad, y, adv, tiny)["theory/dH_lemma1"]
    assert l1 / tiny == pytest.approx(float(slope), rel=1e-5)


def test_sampled_form_averages_to_theorem1_only_for_centred_advantages():
    """Enumerate every sampled token y ~ p at one state: the expectation of the sampled form
    is Theorem 1 (-eta Cov_p(log p, p A)) when E_p[A] = 0, and not otherwise."""
    g = torch.Generator().manual_seed(3)
    z = torch.randn(V, generator=g, dtype=torch.float64)
    p = torch.softmax(z, -1)
    a_raw = torch.randn(V, generator=g, dtype=torch.float64) + 0.7
    for a, should_match in ((a_raw - (p * a_raw).sum(), True), (a_raw, False)):
        logits = z.expand(V, V)[:, None, :]
        ys = torch.arange(V)[:, None]
        per_y = [batch_predictions(logits[k:k + 1], logits[k:k + 1], ys[k:k + 1], a[k].reshape(1, 1),
                                   torch.ones(1, 1, dtype=torch.bool), 1.0, 0.5)["theory/dH_thm1_sampled"]
                 for k in range(V)]
        expectation = float((p * torch.tensor(per_y, dtype=torch.float64)).sum())
        thm1 = float(dynamics.theorem1(z, a, 0.5))
        assert (expectation == pytest.approx(thm1, rel=1e-9, abs=1e-15)) is should_match


def test_batch_covariance_forms_match_numpy():
    logits, y, adv = _toy(seed=2)
    out = _predict(logits, logits, y, adv, 0.3)
    logp = torch.log_softmax(logits, -1).gather(-1, y[:, None]).squeeze(1).numpy()
    a = adv.numpy()
    assert out["theory/dH_cov"] == pytest.approx(-0.3 * np.cov(logp, a, bias=True)[0, 1], rel=1e-10)
    assert out["theory/dH_thm1_batchcov"] == pytest.approx(-0.3 * np.cov(logp, np.exp(logp) * a, bias=True)[0, 1],
                                                            rel=1e-10)
    assert out["theory/eta"] == 0.3 and out["theory/dH_lemma1"] == 0.0


def test_padding_positions_are_ignored():
    logits, y, adv = _toy(seed=4)
    after = _sgd_step(logits, y, adv, 0.1)
    valid = torch.zeros(S, 2, dtype=torch.bool)
    valid[:, 0] = True
    junk = torch.randn(S, 1, V, dtype=torch.float64) * 9
    two = batch_predictions(torch.cat([logits[:, None], junk], 1), torch.cat([after[:, None], -junk], 1),
                            torch.stack([y, y], 1), adv[:, None], valid, 1.0, 0.1)
    assert two == pytest.approx(_predict(logits, after, y, adv, 0.1))


MICRO = dict(size="d16l1", steps=3, n_terms=3, prompts_per_step=4, group_size=4, val_every=3, val_size=8,
             val_samples=1, ckpt_every=3, sft_steps=40, optimizer="sgd", minibatches=1, ppo_clip=False,
             max_grad_norm=0.0)


def _rows(run_dir):
    out = []
    for line in (run_dir / "metrics.jsonl").read_text().splitlines():
        obj = json.loads(line)
        if obj["step"] > 0:
            out.append({k: v for k, v in obj["data"].items() if not k.startswith("timing")})
    return out


@pytest.fixture(scope="module")
def theory_runs(tmp_path_factory):
    from entropylaw.lab.trainer import LabRun

    root = tmp_path_factory.mktemp("theory")
    runs = {}
    for name, extra in {"small": dict(lr=5e-4), "kl_cov": dict(lr=5e-4, intervention="kl_cov"),
                        "mb2": dict(lr=5e-4, minibatches=2)}.items():
        cfg = RunConfig(**{**MICRO, **extra}, tag="t")
        lab = LabRun(cfg, root / name, ["jsonl"], "cpu", root / "ws", progress=False)
        # a micro policy after 40 SFT steps is almost never right: reward the parity of the first
        # response token instead, so advantages are not all zero (the theory needs none)
        lab._rewards = lambda terms, ro: (ro.responses[:, 0] % 2).double().numpy()
        lab.run()
        runs[name] = _rows(root / name)
    return runs


@pytest.mark.slow
def test_lab_theory_mode_lemma1_tracks_the_measured_change(theory_runs):
    for row in theory_runs["small"]:
        measured = row["actor/entropy_delta"]
        assert abs(measured) > 1e-6  # the step moved the entropy well above float32 noise
        assert row["theory/dH_lemma1"] == pytest.approx(measured, rel=0.05)
        assert row["theory/eta"] == 5e-4 and row["actor/pg_clipfrac"] == 0.0
        # Theorem 2's form is -eta times the logged batch covariance
        assert row["theory/dH_cov"] == pytest.approx(-5e-4 * row["cov/token_mean"], rel=1e-5)


@pytest.mark.slow
def test_kl_cov_does_nothing_in_one_on_policy_step(theory_runs):
    plain, kl = theory_runs["small"], theory_runs["kl_cov"]
    assert all(r["intervention/n_selected"] >= 1 for r in kl)
    for a, b in zip(plain, kl):
        a = {k: v for k, v in a.items() if not k.startswith("intervention/")}
        b = {k: v for k, v in b.items() if not k.startswith("intervention/")}
        assert a == b


@pytest.mark.slow
def test_eta_counts_every_optimiser_step_of_the_batch(theory_runs):
    assert all(r["theory/eta"] == pytest.approx(1e-3) for r in theory_runs["mb2"])


def test_bad_update_settings_are_one_line_errors():
    with pytest.raises(EntropyLawError, match="optimizer='sdg'.*did you mean 'sgd'"):
        RunConfig(size="xs", optimizer="sdg")
    with pytest.raises(EntropyLawError, match="max_grad_norm=-1"):
        RunConfig(size="xs", max_grad_norm=-1)
    with pytest.raises(EntropyLawError, match="tag='a/b'"):
        RunConfig(size="xs", tag="a/b")
    with pytest.raises(EntropyLawError, match="bad.toml.*ppo_clip = 'no': expected true or false"):
        parse_sweep('[[group]]\nsize = "xs"\nppo_clip = "no"\n', "bad.toml")


@pytest.mark.parametrize("setting", ["lr = inf", "temperature = inf", "lr = nan", "temperature = 0"])
def test_a_step_or_temperature_that_is_no_finite_positive_number_is_one_line(setting):
    """TOML reads `lr = inf`: it passed (inf > 0), the warm start made every weight NaN, and the run
    stopped on an internal error (torch.multinomial: probability tensor contains inf or nan)."""
    key = setting.split()[0]
    with pytest.raises(EntropyLawError, match=f"bad.toml.*{key}=.*expected a finite number > 0"):
        parse_sweep(f'[[group]]\nsize = "xs"\n{setting}\n', "bad.toml")


def test_sweep_defaults_may_hold_lists_and_groups_override_them():
    text = '[defaults]\nsize = "xs"\nseeds = [0, 1]\n[[group]]\ntag = "a"\n[[group]]\ntag = "b"\nseed = 5\n'
    names = [c.run_name for c in parse_sweep(text, "t.toml")[0]]
    assert names == ["xs-grpo-none-a-s0", "xs-grpo-none-a-s1", "xs-grpo-none-b-s5"]
    with pytest.raises(EntropyLawError, match="seeds or seed"):
        parse_sweep('[defaults]\nseeds = [0]\nseed = 1\n[[group]]\nsize = "xs"\n', "t.toml")
