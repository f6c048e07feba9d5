"""The probe's no-signal groups, its bounded step, and its speed-ups checked against the plain computation."""

from __future__ import annotations

import dataclasses
import json
import warnings

import numpy as np
import pytest
import torch

from entropylaw.cli.main import main
from entropylaw.errors import EntropyLawError
from entropylaw.readers.rollouts.encode import Sequence
from entropylaw.probing.core import ProbeConfig
from entropylaw.probing.forward import hidden_at_valid
from entropylaw.probing.generate import sample
from entropylaw.probing.ladder import LadderConfig
from entropylaw.probing.model import tiny_model
from entropylaw.probing.runner import run_probe
from entropylaw.probing.signal import NoSignal, informative, signal_report, with_advantages

V = 60


def _seqs(rewards, seed=0, prompt_len=4):
    """One group per entry of ``rewards`` (a tuple per group), random prompts and responses."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for p, rs in enumerate(rewards):
        prompt = torch.randint(2, V, (prompt_len + p % 2,), generator=g).tolist()
        for i, r in enumerate(rs):
            n = int(torch.randint(2, 7, (1,), generator=g))
            out.append(Sequence(f"p{p}", i, prompt, torch.randint(2, V, (n,), generator=g).tolist(), float(r)))
    return out


def test_zero_variance_groups_are_counted_and_left_out():
    seqs = with_advantages(_seqs([(1, 0, 1), (0, 0, 0), (1, 1, 1), (0, 1, 0)]), "grpo")
    rep = signal_report(seqs)
    assert rep["groups"] == 4 and rep["informative_groups"] == 2
    assert rep["zero_variance_groups"] == {"all equal, reward 0": 1, "all equal, reward 1": 1}
    kept = informative(seqs)
    assert {s.prompt_id for s in kept} == {"p0", "p3"}
    assert rep["tokens_with_signal"] == sum(len(s.response_ids) for s in kept)
    # GRPO advantages are group-local: the kept groups' advantages are those of the whole batch
    again = with_advantages([dataclasses.replace(s, advantage=None) for s in kept], "grpo")
    assert [s.advantage for s in again] == pytest.approx([s.advantage for s in kept], abs=1e-12)
    # REINFORCE: an all-right group is a signal (A = r), an all-wrong one is not
    rf = signal_report(with_advantages(_seqs([(1, 1), (0, 0)]), "reinforce"))
    assert rf["informative_groups"] == 1


def test_the_probe_computes_on_the_informative_groups_only():
    model = tiny_model("llama", vocab=V, hidden=16, seed=1, dtype=torch.float64)
    seqs = _seqs([(1, 0, 1), (0, 0, 0), (0, 1, 1)])
    frame, summary = run_probe(model, seqs, ProbeConfig(), None)
    assert set(frame["prompt_id"]) == {"p0", "p2"} and summary["n_prompts"] == 2
    assert summary["signal"]["informative_groups"] == 2 and summary["signal"]["groups"] == 3
    # the same numbers as a probe of the two groups alone
    alone, _ = run_probe(model, [s for s in seqs if s.prompt_id != "p1"], ProbeConfig(), None)
    np.testing.assert_allclose(frame["cov"], alone["cov"], rtol=0, atol=0)


def test_a_batch_without_signal_stops_with_one_line():
    model = tiny_model("llama", vocab=V, hidden=16, seed=1)
    with pytest.raises(NoSignal) as err:
        run_probe(model, _seqs([(0, 0, 0), (1, 1, 1)]), ProbeConfig(), LadderConfig(), where="r.jsonl")
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith("r.jsonl: no learning signal: none of the 2 prompt groups")
    # the API's words; the CLI says --step
    assert "1 all equal, reward 0, 1 all equal, reward 1" in msg and "another `step`" in msg


def test_the_cli_exits_2_and_writes_nothing(tmp_path, capsys):
    tiny_model("llama", vocab=V, hidden=16, seed=1).save_pretrained(tmp_path / "m")
    with open(tmp_path / "r.jsonl", "w") as f:
        for s in _seqs([(0, 0), (0, 0)]):
            print(json.dumps({"prompt_id": s.prompt_id, "prompt_ids": s.prompt_ids, "response_ids": s.response_ids,
                              "reward": s.reward}), file=f)
    code = main(["probe", "--model", str(tmp_path / "m"), "--rollouts", str(tmp_path / "r.jsonl"), "--out",
                 str(tmp_path / "o"), "--save-rollouts", str(tmp_path / "s.jsonl"), "--no-progress"])
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("entropylaw:")]
    assert code == 2 and len(err) == 1 and "no learning signal" in err[0]
    assert not (tmp_path / "o").exists() and not (tmp_path / "s.jsonl").exists()


def _probe(ladder, seed=2):
    model = tiny_model("llama", vocab=V, hidden=16, seed=seed, dtype=torch.float64)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _, summary = run_probe(model, _seqs([(1, 0, 1), (0, 1, 0)]), ProbeConfig(), ladder)
    return summary, [str(w.message) for w in caught]


def test_a_step_far_too_large_is_cut_until_it_is_a_step():
    summary, _ = _probe(LadderConfig(rel_step=1e4, whatif=("none",)))
    chk = summary["ladder"]["eta_squared_check"]
    cut = [r for r in chk["search"] if "too_large" in r]
    assert cut and chk["first_order"] and "bound" not in chk
    # the chosen step moves no probability past its mass and the entropy by under half of H
    assert summary["checks"]["lemma1_ladder"]["enough_signal"]


def test_a_step_search_that_only_finds_too_large_steps_says_it_hit_its_bound():
    with pytest.raises(EntropyLawError, match="every step tried was too large.*hit its bound"):
        _probe(LadderConfig(max_dh_frac=1e-15, max_rungs=3, whatif=("none",)))  # no step is small enough


def test_a_step_below_rounding_is_reported_as_the_bound():
    summary, said = _probe(LadderConfig(rel_step=1e-30, whatif=("none",)))
    chk = summary["ladder"]["eta_squared_check"]
    assert chk["bound"].startswith("rounding floor") and not chk["first_order"]
    assert not summary["checks"]["lemma1_ladder"]["enough_signal"]
    assert any("hit its bound (rounding floor" in m for m in said)


@pytest.mark.parametrize("kind", ["llama", "qwen2"])
def test_shared_prompt_prefix_equals_the_full_forward_and_its_gradient(kind):
    model = tiny_model(kind, vocab=V, hidden=16, layers=2, seed=3, dtype=torch.float64)
    seqs = _seqs([(1, 0, 1), (0, 1), (1,)], seed=5) + [Sequence("solo", 0, [4, 5], [6], 0.0)]
    idx = list(range(len(seqs)))
    a, ya = hidden_at_valid(model, seqs, idx, share_prefix=True)
    b, yb = hidden_at_valid(model, seqs, idx, share_prefix=False)
    assert torch.equal(ya, yb)
    torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)
    params = list(model.parameters())

    def grads(share):
        out = hidden_at_valid(model, seqs, idx, share_prefix=share)[0]
        return torch.autograd.grad((out ** 2).sum(), params, allow_unused=True)

    for ga, gb in zip(grads(True), grads(False)):
        # transformers' RMSNorm computes in float32 even in a float64 model: the gradient summed over
        # a group before the norm's backward (shared) and after it (unshared) agree to float32 rounding
        if ga is not None:
            assert float((ga - gb).norm() / gb.norm().clamp_min(1e-300)) < 1e-4


def test_whatifs_from_the_plain_update_equal_their_own_backward(monkeypatch):
    """Clip-Cov and KL-Cov differ from the plain loss only in token weights: their direction is
    built from the plain update's; forcing every what-if through its own backward gives the same."""
    import entropylaw.probing.ladder as ladder_mod

    lad = LadderConfig(lr=0.05, whatif=("none", "clip_cov", "kl_cov", "steer"))
    cfg = ProbeConfig(overrides={"clip_cov_ratio": 0.2, "clip_cov_lb": -10, "clip_cov_ub": 10, "kl_cov_ratio": 0.2})
    model = tiny_model("llama", vocab=V, hidden=16, seed=4, dtype=torch.float64)
    seqs = _seqs([(1, 0, 1), (0, 1, 0), (1, 1, 0)], seed=6)
    _, fast = run_probe(model, seqs, cfg, lad)
    monkeypatch.setattr(ladder_mod, "from_plain_update", lambda *a, **k: (None, None, {}))
    _, slow = run_probe(model, seqs, cfg, lad)
    for name in lad.whatif:
        for key, v in fast["whatif"][name].items():
            assert v == pytest.approx(slow["whatif"][name][key], rel=1e-4, abs=1e-14), (name, key)  # see above
    assert fast["whatif"]["kl_cov"]["measured_mean_dH"] == fast["whatif"]["none"]["measured_mean_dH"]


def test_batched_generation_left_pads_without_changing_the_next_token_distribution(monkeypatch):
    """Prompts decoded together are left-padded: the next-token distribution of each is the one it has alone."""
    model = tiny_model("llama", vocab=V, hidden=16, layers=2, seed=0, dtype=torch.float64)
    prompts = [("a", [3, 4, 5, 6, 7], None), ("b", [8, 9], None), ("c", [10, 11, 12], None)]
    seen = []
    original = type(model).generate

    def spy(self, input_ids, attention_mask=None, **kw):
        seen.append((input_ids.clone(), attention_mask.clone()))
        return original(self, input_ids, attention_mask=attention_mask, **kw)

    monkeypatch.setattr(type(model), "generate", spy)
    seqs = sample(model, prompts, 2, max_new_tokens=3, batch_tokens=10 ** 6)
    assert len(seen) == 1 and [s.prompt_id for s in seqs] == ["a", "a", "b", "b", "c", "c"]
    ids, mask = seen[0]
    with torch.no_grad():
        batched = model(ids, attention_mask=mask).logits[:, -1]
        for row, (_, p, _) in enumerate(prompts):
            alone = model(torch.tensor([p])).logits[0, -1]
            torch.testing.assert_close(torch.log_softmax(batched[row], -1), torch.log_softmax(alone, -1),
                                       rtol=1e-9, atol=1e-9)
    # a small budget splits the prompts into several calls, each within it
    seen.clear()
    sample(model, prompts, 2, max_new_tokens=3, batch_tokens=20)
    assert len(seen) == 3 and all(i.shape[0] * (i.shape[1] + 3) <= 20 for i, _ in seen)


def test_dynamic_sampling_resamples_until_enough_groups_have_signal(tmp_path, capsys, monkeypatch):
    from entropylaw.probing.generate import sample_informative

    model = tiny_model("llama", vocab=V, hidden=16, seed=0)
    prompts = [(f"q{i}", [3 + i, 4, 5], None) for i in range(4)]
    draws = iter(range(10 ** 6))

    def rare(text, answer):  # about one response in eight is right: many groups start all wrong
        return float(next(draws) % 8 == 0)

    seqs, info = sample_informative(model, prompts, 4, min_informative=3, max_rounds=6, reward_fn=rare,
                                    max_new_tokens=3)
    assert info["informative_groups"] >= 3 and info["rounds"] <= 6
    extra = info["responses_generated"] - 16  # the first round draws every group; later ones redraw whole groups
    assert info["rounds"] > 1 and extra > 0 and extra % 4 == 0 and extra <= 16 * (info["rounds"] - 1)
    assert sorted({s.prompt_id for s in seqs}) == [p[0] for p in prompts]
    assert all(sum(1 for s in seqs if s.prompt_id == p[0]) == 4 for p in prompts)
    rep = signal_report(with_advantages(seqs, "grpo"))
    assert rep["informative_groups"] == info["informative_groups"]
    # a budget of one round is one round, and the probe then says how many groups it has
    _, one = sample_informative(model, prompts, 4, min_informative=4, max_rounds=1, reward_fn=lambda t, a: 0.0,
                                max_new_tokens=3)
    assert one["rounds"] == 1 and one["responses_generated"] == 16 and one["informative_groups"] == 0


def test_the_gguf_cache_loads_the_same_model(tmp_path, monkeypatch):
    pytest.importorskip("gguf")
    from _tiny_gguf import write_llama_gguf
    from entropylaw.probing.model import gguf_cache_dir, load_model

    model = tiny_model("llama", vocab=V, hidden=16, layers=1, seed=3)
    write_llama_gguf(model, tmp_path / "t.gguf")
    monkeypatch.setenv("ENTROPYLAW_CACHE", str(tmp_path / "cache"))
    first, _ = load_model(str(tmp_path / "t.gguf"), "cpu")
    cache = gguf_cache_dir(tmp_path / "t.gguf")
    assert (cache / "entropylaw-complete").is_file()
    again, _ = load_model(str(tmp_path / "t.gguf"), "cpu")
    for (n1, p1), (n2, p2) in zip(first.state_dict().items(), again.state_dict().items()):
        assert n1 == n2 and torch.equal(p1, p2)
    monkeypatch.setenv("ENTROPYLAW_CACHE", "off")
    assert gguf_cache_dir(tmp_path / "t.gguf") is None


def test_a_run_the_machine_cannot_hold_is_refused_before_the_model_loads(tmp_path, capsys, monkeypatch):
    import entropylaw.probing.memory as memory
    from entropylaw.probing.memory import budget, check

    tiny_model("llama", vocab=V, hidden=16, seed=1).save_pretrained(tmp_path / "m")
    est = check(tmp_path / "m", "auto", 4096, True, available=10 ** 12)
    n_params = sum(p.numel() for p in tiny_model("llama", vocab=V, hidden=16, seed=1).parameters())
    assert est["weights"] == pytest.approx(n_params * 4 / 2 ** 30, rel=0.1)  # the safetensors file (+ its header)
    assert est["ladder"] == pytest.approx(4 * est["weights"], rel=1e-6)
    assert check(tmp_path / "m", "auto", 4096, False, available=10 ** 12)["ladder"] == 0
    assert budget(1e9, 2, 10, 100, 1000, True)["total"] > budget(1e9, 2, 10, 100, 10, True)["total"]
    monkeypatch.setattr(memory, "available_bytes", lambda: 1024)
    with open(tmp_path / "r.jsonl", "w") as f:
        for s in _seqs([(0, 1)]):
            print(json.dumps({"prompt_id": s.prompt_id, "prompt_ids": s.prompt_ids, "response_ids": s.response_ids,
                              "reward": s.reward}), file=f)
    code = main(["probe", "--model", str(tmp_path / "m"), "--rollouts", str(tmp_path / "r.jsonl"),
                 "--out", str(tmp_path / "o"), "--no-progress"])
    err = [x for x in capsys.readouterr().err.splitlines() if x.startswith("entropylaw:")]
    assert code == 2 and len(err) == 1, err
    assert "the probe needs about" in err[0] and "GiB available: try --no-ladder, a smaller --batch-tokens" in err[0]


def test_enough_signal_needs_the_t_point_of_its_groups_not_two_standard_errors():
    """5.7 standard errors over 2 groups was "enough signal": a standard error read off 2 groups has
    1 degree of freedom, whose two-sided 95 % point is 12.7 (scipy's t, checked by hand: tan(pi * 0.475))."""
    import math

    from entropylaw.probing.signal import signal_checks

    two = signal_checks({"informative_groups": 2}, 5.7, 1.0, None)["theorem2_covariance"]
    assert not two["enough_signal"] and two["needed"] == pytest.approx(math.tan(math.pi * 0.475), rel=1e-9)
    many = signal_checks({"informative_groups": 31}, 2.1, 1.0, None)["theorem2_covariance"]
    assert many["enough_signal"] and many["needed"] == pytest.approx(2.042, abs=1e-3)
    assert "over 31 groups" in many["why"] and "30 degrees of freedom" in many["why"]


def test_a_ladder_not_first_order_says_what_failed():
    """'not first order: error slope 1.97' gave a slope inside 1.8-2.2 as the reason; the failure
    was dH/eta varying between rungs. Each cause is named as it is."""
    from entropylaw.probing.signal import signal_checks

    def why(slope, nonlin):
        ladder = {"eta_squared_check": {"first_order": False, "loglog_slope": slope, "dH_nonlinearity": nonlin},
                  "estimators": {"lemma1": {"pearson": 0.9, "n": 10}}, "config": {"slope_range": [1.8, 2.2]}}
        return signal_checks({"informative_groups": 0}, 0.0, None, ladder)["lemma1_ladder"]["why"]

    assert why(1.97, [0.057, 0.01]) == "not first order: error slope 1.97 as first order, but dH/eta varies by " \
                                       "0.057 between rungs"
    assert why(1.2, [0.001]) == "not first order: error slope 1.20 (first order: 1.8-2.2)"
