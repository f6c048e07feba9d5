"""The lab's parts checked against independent computations (fast, no training)."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from entropylaw.errors import EntropyLawError
from entropylaw.lab import models, task as task_mod
from entropylaw.lab.config import RunConfig
from entropylaw.lab.metrics import covariance_summary, response_level_covariance, seq_mean_token_mean
from entropylaw.lab.rollout import Rollout, generate, score, token_logp_entropy
from entropylaw.lab.tokenizer import CharTokenizer


def test_reward_matches_an_independent_parse():
    task = task_mod.SumTask(n_terms=4, digits=2)
    rng = np.random.default_rng(0)
    for terms in task.sample(50, rng):
        prompt = task.prompt_text(terms)
        truth = sum(int(x) for x in re.findall(r"\d+", prompt))  # read back from the text itself
        assert len(prompt) == task.prompt_len
        assert task.reward(terms, task.solution(terms)) == 1.0
        assert task.solution(terms).endswith(f">{truth}")
        assert task.reward(terms, f"1,2,3>{truth + 1}") == 0.0
        assert task.reward(terms, f"{truth}") == 0.0          # no answer marker
        assert task.reward(terms, f"garbage>{truth}") == 1.0  # only the final answer is checked
        assert len(task.solution(terms)) + 1 <= task.max_response_len


def test_split_is_disjoint_and_fixed():
    task = task_mod.SumTask(n_terms=3, digits=1)
    train = {task.prompt_text(t) for t in task.sample(400, np.random.default_rng(1), "train")}
    val = {task.prompt_text(t) for t in task.val_set(100)}
    assert train and val and not (train & val)
    assert [task.prompt_text(t) for t in task.val_set(20)] == [task.prompt_text(t) for t in task.val_set(20)]


def test_demonstrations_are_imperfect_at_the_requested_rate():
    task = task_mod.SumTask()
    rng = np.random.default_rng(2)
    terms = task.sample(2000, rng)
    wrong = np.mean([task.reward(t, task.demonstration(t, rng, 0.3)) == 0 for t in terms])
    assert 0.25 < wrong <= 0.31  # a slip can be clipped at 0 and vanish, so at most the rate
    assert all(task.reward(t, task.demonstration(t, rng, 0.0)) == 1 for t in terms[:50])


def test_tokenizer_roundtrip_and_saved_hf_tokenizer_agree(tmp_path):
    from transformers import AutoTokenizer

    tok = CharTokenizer()
    text = "12+07+3:19,22>22"
    assert tok.decode(tok.encode(text)) == text
    tok.save(tmp_path)
    hf = AutoTokenizer.from_pretrained(str(tmp_path))
    assert hf(text).input_ids == tok.encode(text)
    assert hf.eos_token_id == tok.eos_id and hf.pad_token_id == tok.pad_id


@pytest.mark.parametrize("name", [*models.PRESETS, "d64l3"])
def test_nonembedding_count_matches_the_built_model(name):
    spec = models.size_spec(name)
    model = models.build_model(spec, 18, 0, 1, 2, 64)
    assert models.count_nonembedding(model) == models.nonembedding_params(spec)
    assert sum(p.numel() for p in model.parameters()) == models.total_params(spec, 18)


def test_presets_span_thirty_times():
    counts = [models.nonembedding_params(s) for s in models.PRESETS.values()]
    assert len(counts) >= 4 and max(counts) / min(counts) >= 30


def test_size_that_cannot_fit_is_refused_before_starting():
    with pytest.raises(EntropyLawError, match=r"needs about .* GiB"):
        models.check_fits(models.size_spec("d8192l96"), 18, 4096, "cpu")
    with pytest.raises(EntropyLawError, match="unknown size 'huge'"):
        models.size_spec("huge")


def test_unknown_names_list_the_valid_ones():
    with pytest.raises(EntropyLawError, match="valid: grpo, rloo, reinforce"):
        RunConfig(algo="ppo2")
    with pytest.raises(EntropyLawError, match="clip_cov.*valid: none, entropy_bonus"):
        RunConfig(intervention="clipcov")


def test_token_logp_entropy_matches_categorical():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(3, 5, 11, generator=g) * 3
    targets = torch.randint(0, 11, (3, 5), generator=g)
    lp, ent = token_logp_entropy(logits, targets, temperature=0.7)
    dist = torch.distributions.Categorical(logits=logits / 0.7)
    torch.testing.assert_close(lp, dist.log_prob(targets))
    torch.testing.assert_close(ent, dist.entropy())


def _tiny():
    torch.manual_seed(0)
    return models.build_model(models.size_spec("d16l1"), 18, 0, 1, 2, 64).eval()


def test_cached_greedy_decoding_equals_uncached_argmax():
    model, tok = _tiny(), CharTokenizer()
    prompts = torch.tensor([tok.encode("1+2+3:"), tok.encode("4+5+6:")])
    ro = generate(model, prompts, 6, eos_id=tok.eos_id, pad_id=tok.pad_id, greedy=True)
    seq = prompts.clone()
    with torch.no_grad():
        for t in range(ro.responses.shape[1]):  # no cache: the whole sequence every time
            nxt = model(input_ids=seq).logits[:, -1].argmax(-1)
            alive = ro.mask[:, t].bool()
            assert torch.equal(ro.responses[alive, t], nxt[alive])
            seq = torch.cat([seq, ro.responses[:, t:t + 1]], dim=1)


def test_sampling_is_deterministic_and_mask_stops_after_eos():
    model, tok = _tiny(), CharTokenizer()
    prompts = torch.tensor([tok.encode("1+2+3:")] * 32)
    a = generate(model, prompts, 8, tok.eos_id, tok.pad_id, generator=torch.Generator().manual_seed(5))
    b = generate(model, prompts, 8, tok.eos_id, tok.pad_id, generator=torch.Generator().manual_seed(5))
    assert torch.equal(a.responses, b.responses)
    for row, mask in zip(a.responses.tolist(), a.mask.tolist()):
        n = int(sum(mask))
        assert all(x == tok.pad_id for x in row[n:])
        if tok.eos_id in row:
            assert row.index(tok.eos_id) == n - 1
    lp, ent, _ = score(model, Rollout(a.prompts, a.responses, a.mask))
    assert lp.shape == a.responses.shape and torch.isfinite(ent).all()


def test_covariance_summary_and_response_level_against_numpy():
    rng = np.random.default_rng(3)
    logp = torch.tensor(-rng.exponential(size=(8, 6)))
    valid = torch.tensor(rng.random((8, 6)) < 0.8)
    adv = torch.tensor(rng.normal(size=(8, 1)))
    from entropylaw.probing.interventions import token_covariance

    cov = token_covariance(logp, adv, valid)
    summary = covariance_summary(cov, valid)
    x = logp.numpy()[valid.numpy()]
    a = np.broadcast_to(adv.numpy(), logp.shape)[valid.numpy()]
    c = (x - x.mean()) * (a - a.mean())
    assert summary["cov/token_mean"] == pytest.approx(c.mean())
    assert summary["cov/top20pct_mean"] == pytest.approx(np.sort(c)[::-1][: int(0.2 * len(c))].mean())
    groups = [0, 0, 0, 0, 1, 1, 1, 1]
    seq = np.array([logp.numpy()[i][valid.numpy()[i]].mean() for i in range(8)])
    want = np.mean([np.cov(seq[g * 4:(g + 1) * 4], adv.numpy()[g * 4:(g + 1) * 4, 0], bias=True)[0, 1]
                    for g in (0, 1)])
    assert response_level_covariance(logp, valid, adv, groups) == pytest.approx(want)
    assert float(seq_mean_token_mean(logp, valid)) == pytest.approx(seq.mean())


def test_covariance_by_difficulty_against_numpy():
    from entropylaw.lab.metrics import covariance_by_difficulty

    rng = np.random.default_rng(11)
    G, n_groups = 8, 6
    logp = torch.tensor(-rng.exponential(size=(G * n_groups, 5)))
    valid = torch.tensor(rng.random((G * n_groups, 5)) < 0.85)
    valid[:, 0] = True
    adv = torch.tensor(rng.normal(size=(G * n_groups, 1)))
    acc = np.repeat([1 / 8, 2 / 8, 4 / 8, 7 / 8, 0.0, 1.0], G)  # two hard, one medium, one easy, two excluded
    groups = np.repeat(np.arange(n_groups), G)
    seq = np.array([logp.numpy()[i][valid.numpy()[i]].mean() for i in range(G * n_groups)])
    a = adv.numpy()[:, 0]
    cov = [np.cov(seq[g * G:(g + 1) * G], a[g * G:(g + 1) * G], bias=True)[0, 1] for g in range(n_groups)]
    got = covariance_by_difficulty(logp, valid, adv, groups, acc)
    assert set(got) == {"hard", "medium", "easy"}
    assert got["hard"] == pytest.approx((cov[0] + cov[1]) / 2)
    assert got["medium"] == pytest.approx(cov[2])
    assert got["easy"] == pytest.approx(cov[3])
    # a step with only all-right / all-wrong groups logs no bin at all
    assert covariance_by_difficulty(logp[-16:], valid[-16:], adv[-16:], groups[-16:], acc[-16:]) == {}
