"""The probe end to end on a tiny float64 model: Table 1, selections, the ladder, what-ifs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from entropylaw.readers.rollouts.encode import Sequence
from entropylaw.probing.core import ProbeConfig, table1
from entropylaw.probing.ladder import LadderConfig, compare
from entropylaw.probing.model import tiny_model


def _seqs(vocab=150, n_prompts=5, G=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    seqs = []
    for p in range(n_prompts):
        prompt = torch.randint(2, vocab, (5,), generator=g).tolist()
        for i in range(G):
            L = int(torch.randint(4, 14, (1,), generator=g))
            seqs.append(Sequence(f"p{p}", i, prompt, torch.randint(2, vocab, (L,), generator=g).tolist(),
                                 float(i % 2 == p % 2)))
    return seqs


@pytest.fixture(scope="module")
def probed():
    from entropylaw.probing.runner import run_probe

    model = tiny_model("llama", vocab=150, hidden=24, layers=2, seed=2, dtype=torch.float64)
    before = [p.detach().clone() for p in model.parameters()]
    seqs = _seqs()
    cfg = ProbeConfig(microbatch_tokens=60, overrides={"clip_cov_lb": 0.05, "kl_cov_ratio": 0.05})
    frame, summary = run_probe(model, seqs, cfg, LadderConfig(rel_step=1e-3))
    return model, before, seqs, frame, summary


def test_weights_restored_and_columns(probed):
    model, before, seqs, frame, summary = probed
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))
    for col in ("prompt_id", "response_index", "position", "token_id", "logprob", "entropy", "cov", "cov_mb",
                "clamped_entropy", "clip_cov", "kl_cov", "steer_weight", "dH_measured", "dH_lemma1"):
        assert col in frame.columns
    assert len(frame) == sum(len(s.response_ids) for s in seqs) == summary["n_tokens"]
    assert summary["n_microbatches"] > 1
    assert frame["token_id"].tolist()[:len(seqs[0].response_ids)] == seqs[0].response_ids


def test_table1_and_selection_consistent_with_frame(probed):
    _, _, _, frame, summary = probed
    cov = np.sort(frame["cov"].to_numpy())[::-1]
    assert np.isclose(summary["table1"]["0.2"], cov[:int(0.2 * len(cov))].mean())
    assert np.isclose(summary["table1"]["all"], cov.mean())
    kl = summary["selection"]["kl_cov"]
    assert kl["whole_batch"] == max(1, int(0.05 * len(cov))) == int(frame["kl_cov"].sum())
    per_mb = frame.groupby("microbatch").size()
    assert kl["micro_batch"] == int(frame["kl_cov_mb"].sum()) == sum(max(1, int(0.05 * n)) for n in per_mb)
    # inside each micro-batch the chosen tokens are that micro-batch's top covariances
    for _, rows in frame.groupby("microbatch"):
        k = int(rows["kl_cov_mb"].sum())
        assert set(rows["cov_mb"].nlargest(k).index) == set(rows.index[rows["kl_cov_mb"]])
    assert 0 <= kl["jaccard"] <= 1


def test_ladder_lemma1_tracks_measured_change_and_error_is_second_order(probed):
    _, _, _, frame, summary = probed
    lad = summary["ladder"]
    assert lad["estimators"]["lemma1"]["pearson"] > 0.99
    assert lad["estimators"]["lemma1"]["sign_agreement"] > 0.8
    slope = lad["eta_squared_check"]["loglog_slope"]
    assert 1.8 < slope < 2.2
    for name in ("theorem1_sampled", "theorem2", "steer_paper", "steer_code", "response_cov"):
        assert set(lad["estimators"][name]) >= {"pearson", "spearman", "sign_agreement", "slope", "mean_error"}
    np.testing.assert_allclose(frame["dH_measured"].mean(), lad["estimators"]["lemma1"]["measured_mean"])


def test_whatifs_change_the_update_as_their_rules_say(probed):
    _, _, _, frame, summary = probed
    w = summary["whatif"]
    assert set(w) == {"none", "clip_cov", "kl_cov", "steer", "aent", "entropy_bonus"}
    # on-policy, KL-Cov's penalty |log p - log p_old| is 0 with zero (sub)gradient: same update as none
    assert np.isclose(w["kl_cov"]["measured_mean_dH"], w["none"]["measured_mean_dH"], rtol=1e-9)
    # Clip-Cov removes tokens from the gradient, STEER shrinks weights: both change the step
    assert not np.isclose(w["clip_cov"]["measured_mean_dH"], w["none"]["measured_mean_dH"], rtol=1e-6)
    assert abs(w["steer"]["mean_token_weight"]) <= abs(w["none"]["mean_token_weight"]) + 1e-12
    # an entropy bonus pushes entropy up relative to the plain update
    assert w["entropy_bonus"]["measured_mean_dH"] > w["none"]["measured_mean_dH"]


def test_compare_and_table1_helpers():
    x = np.linspace(-1, 1, 50)
    r = compare(2 * x, x + 0.1)
    assert np.isclose(r["pearson"], 1) and np.isclose(r["slope"], 0.5) and np.isclose(r["mean_error"], -0.1)
    t = table1(torch.arange(10000, dtype=torch.float64))
    assert t["0.0002"] == 9998.5 and t["all"] == 4999.5


def test_cluster_se_is_the_standard_error_of_the_mean_in_its_closed_forms():
    """Against scipy.stats.sem: one token per cluster is the plain SE; clusters of equal size give
    the SE of the cluster means (CR1: G/(G-1) on the squared cluster sums of residuals)."""
    from scipy import stats

    from entropylaw.probing.core import cluster_se

    rng = np.random.default_rng(0)
    v = rng.normal(size=24)
    assert cluster_se(torch.tensor(v), np.arange(24)) == pytest.approx(stats.sem(v), rel=1e-12)
    groups = np.repeat(np.arange(6), 4)
    rng.shuffle(groups)  # a cluster's tokens need not be contiguous
    means = [v[groups == g].mean() for g in range(6)]
    assert cluster_se(torch.tensor(v), groups) == pytest.approx(stats.sem(means), rel=1e-12)
    assert cluster_se(torch.tensor(v), np.zeros(24)) is None
