"""Streamed statistics vs log_softmax / Categorical / autograd; tabular first-order formulas."""

from __future__ import annotations

import pytest
import torch

from entropylaw.readers.rollouts.encode import Sequence
from entropylaw.probing import dynamics, stream
from entropylaw.probing.forward import collect_stats, hidden_at_valid
from entropylaw.probing.interventions import clamped_entropy
from entropylaw.probing.model import lm_head_weight, tiny_model


def _seqs(vocab, n=5, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [Sequence(f"p{i // 2}", i % 2, torch.randint(0, vocab, (4,), generator=g).tolist(),
                     torch.randint(0, vocab, (3 + i,), generator=g).tolist(), float(i % 2)) for i in range(n)]


@pytest.mark.parametrize("kind", ["llama", "qwen2"])
def test_streamed_equals_log_softmax_and_categorical_on_tiny_models(kind):
    V = 257
    model = tiny_model(kind, vocab=V, hidden=32, layers=2, seed=3)
    seqs = _seqs(V)
    with torch.no_grad():
        h, y = hidden_at_valid(model, seqs, list(range(len(seqs))))
        W = lm_head_weight(model)
        # independent reference: the model's own forward logits at the same positions
        full = [s.prompt_ids + s.response_ids for s in seqs]
        ref_lp, ref_h = [], []
        for s, ids in zip(seqs, full):
            logits = model(torch.tensor([ids])).logits[0] / 0.7
            P = len(s.prompt_ids)
            z = logits[P - 1:P - 1 + len(s.response_ids)]
            ref_lp.append(torch.log_softmax(z, -1).gather(1, torch.tensor(s.response_ids)[:, None])[:, 0])
            ref_h.append(torch.distributions.Categorical(logits=z).entropy())
    for chunk in (16, 100, 1000):
        s = stream.token_stats(h, W, y, temperature=0.7, chunk_size=chunk, clamp_p=0.3, second_moment=True)
        torch.testing.assert_close(s["logp"], torch.cat(ref_lp), atol=1e-5, rtol=0)
        torch.testing.assert_close(s["entropy"], torch.cat(ref_h), atol=1e-5, rtol=0)
        m = stream.materialised_stats(h, W, y, 0.7, clamp_p=0.3)
        for key in ("sum_p2", "clamped_entropy"):
            torch.testing.assert_close(s[key], m[key], atol=1e-5, rtol=0)
    # collect_stats (batched over sequences, padded) gives the same numbers
    c = collect_stats(model, seqs, 0.7, 50, 0.3, batch_tokens=20)
    torch.testing.assert_close(c["entropy"], torch.cat(ref_h), atol=1e-5, rtol=0)


def test_bf16_model_streams_like_its_materialised_logits():
    g = torch.Generator().manual_seed(1)
    h = torch.randn(9, 32, generator=g).bfloat16()
    W = torch.randn(300, 32, generator=g).bfloat16()
    y = torch.randint(0, 300, (9,), generator=g)
    s = stream.token_stats(h, W, y, chunk_size=64)
    m = stream.materialised_stats(h, W, y)
    assert s["entropy"].dtype == torch.float32
    torch.testing.assert_close(s["logp"], m["logp"], atol=1e-4, rtol=0)
    torch.testing.assert_close(s["entropy"], m["entropy"], atol=1e-4, rtol=0)


def test_streamed_gradients_match_autograd_through_materialised_logits():
    g = torch.Generator().manual_seed(2)
    h = torch.randn(7, 12, generator=g, dtype=torch.float64, requires_grad=True)
    W = torch.randn(90, 12, generator=g, dtype=torch.float64, requires_grad=True)
    y = torch.randint(0, 90, (7,), generator=g)
    a, b, c = (torch.randn(7, generator=g, dtype=torch.float64) for _ in range(3))
    lp, H, Hc = stream.logprob_entropy(h, W, y, temperature=1.3, chunk_size=13, clamp_p=0.3)
    gh, gw = torch.autograd.grad((a * lp + b * H + c * Hc).sum(), (h, W))
    z = h @ W.T / 1.3
    ref = (a * torch.log_softmax(z, -1).gather(1, y[:, None])[:, 0]
           + b * torch.distributions.Categorical(logits=z).entropy() + c * clamped_entropy(z, 0.3))
    rh, rw = torch.autograd.grad(ref.sum(), (h, W))
    torch.testing.assert_close(gh, rh, atol=1e-10, rtol=1e-8)
    torch.testing.assert_close(gw, rw, atol=1e-10, rtol=1e-8)


def test_streamed_lemma1_equals_covariance_on_materialised_logits():
    g = torch.Generator().manual_seed(4)
    h0, W0 = torch.randn(6, 10, generator=g), torch.randn(70, 10, generator=g)
    h1, W1 = h0 + 0.01 * torch.randn(6, 10, generator=g), W0 + 0.01 * torch.randn(70, 10, generator=g)
    got = stream.lemma1(h0, W0, h1, W1, temperature=0.9, chunk_size=9)
    z0, z1 = h0 @ W0.T / 0.9, h1 @ W1.T / 0.9
    # independent: -sum_v p_v (log p_v + H) dz_v written out
    logp = torch.log_softmax(z0.double(), -1)
    p = logp.exp()
    H = -(p * logp).sum(-1, keepdim=True)
    ref = -(p * (logp + H) * (z1 - z0).double()).sum(-1)
    torch.testing.assert_close(got.double(), ref, atol=1e-5, rtol=1e-4)


# ---------------------------------------------------------------- tabular first-order checks
def _fd(z, dz):
    return dynamics.entropy(z + dz) - dynamics.entropy(z)


def test_lemma1_theorems_and_sampled_form_are_exact_to_first_order():
    g = torch.Generator().manual_seed(5)
    z = torch.randn(12, generator=g, dtype=torch.float64) * 2
    A = torch.randn(12, generator=g, dtype=torch.float64)
    p = torch.softmax(z, -1)
    logp = torch.log_softmax(z, -1)
    H = dynamics.entropy(z)
    p2 = dynamics.sum_p2(z)
    rel = {}
    for eta in (1e-2, 1e-3, 1e-4):
        checks = {
            "lemma1": (dynamics.lemma1(z, eta * A), _fd(z, eta * A)),
            "theorem1": (dynamics.theorem1(z, A, eta), _fd(z, eta * p * A)),
            "theorem2": (dynamics.theorem2(z, A, eta), _fd(z, eta * A)),
            "sampled": (dynamics.sampled_token(logp[3], H, p2, A[3], eta),
                        _fd(z, eta * A[3] * (torch.nn.functional.one_hot(torch.tensor(3), 12) - p))),
            "theorem2_sampled": (dynamics.theorem2_sampled(logp[3], H, A[3], eta),
                                 _fd(z, eta * A[3] * torch.nn.functional.one_hot(torch.tensor(3), 12) / p[3])),
        }
        for name, (pred, exact) in checks.items():
            rel.setdefault(name, []).append(abs(float(pred - exact)) / abs(float(exact)))
    for name, errs in rel.items():
        assert errs[-1] < 1e-3, name
        assert errs[0] / errs[2] > 50, name  # relative error shrinks linearly with eta (error ~ eta^2)


def test_sampled_form_expectation_is_theorem1_and_loss_gradient_is_its_step():
    g = torch.Generator().manual_seed(6)
    z = torch.randn(9, generator=g, dtype=torch.float64)
    A = torch.randn(9, generator=g, dtype=torch.float64)
    logp = torch.log_softmax(z, -1)
    p = logp.exp()
    H, p2 = dynamics.entropy(z), dynamics.sum_p2(z)
    # a true advantage has E_p[A] = 0; only then does the expectation equal Theorem 1
    A = A - (p * A).sum()
    expectation = sum(p[y] * dynamics.sampled_token(logp[y], H, p2, A[y], 0.1) for y in range(9))
    torch.testing.assert_close(expectation, dynamics.theorem1(z, A, 0.1))
    # dz of one SGD step on -w log p(y) is eta w (e_y - p): check with autograd
    zz = z.clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(-2.0 * torch.log_softmax(zz, -1)[4], zz)
    torch.testing.assert_close(-grad, 2.0 * (torch.nn.functional.one_hot(torch.tensor(4), 9) - p))
