"""entropylaw audit: per-token entropies against a full-softmax forward, each convention against the
trainers' own masked-tensor formulas (written here on padded [B, T] tensors, as veRL's agg_loss and
TRL's masked means are), the verdict, and every bad input (one line, exit 2, nothing printed)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import entropylaw.audit.core as core
import entropylaw.audit.verdict as verdict
from entropylaw.audit.forward import token_entropies
from entropylaw.cli.main import main
from entropylaw.probe.model import tiny_model
from entropylaw.probe.rollouts import Sequence

V = 40


def _seqs(rng):
    out = []
    for i in range(7):
        P, R = int(rng.integers(2, 6)), int(rng.integers(1, 9))
        out.append(Sequence(f"p{i // 2}", i % 2, rng.integers(2, V, P).tolist(), rng.integers(2, V, R).tolist(),
                            float(i % 2)))
    return out


@pytest.fixture(scope="module")
def tiny():
    model = tiny_model("llama", vocab=V, hidden=16, layers=2, seed=3)
    seqs = _seqs(np.random.default_rng(0))
    return model, seqs


def _reference_matrices(model, seqs, temperature, pad_id):
    """Full-softmax entropies of a right-padded batch: H [B, L] (position j predicts token j + 1)."""
    L = max(len(s.prompt_ids) for s in seqs) + max(len(s.response_ids) for s in seqs)
    ids = torch.full((len(seqs), L), pad_id)
    att = torch.zeros(len(seqs), L, dtype=torch.long)
    for b, s in enumerate(seqs):
        full = s.prompt_ids + s.response_ids
        ids[b, :len(full)] = torch.tensor(full)
        att[b, :len(full)] = 1
    with torch.no_grad():
        logits = model(input_ids=ids, attention_mask=att).logits.double() / temperature
    return torch.distributions.Categorical(logits=logits).entropy()


def test_token_entropies_are_the_full_softmax_entropies_at_each_position(tiny):
    model, seqs = tiny
    t = token_entropies(model, seqs, temperature=0.7, pad_id=0, batch_size=3)
    H = _reference_matrices(model, seqs, 0.7, 0)
    H1 = _reference_matrices(model, seqs, 1.0, 0)
    R = max(len(s.response_ids) for s in seqs)
    for b, s in enumerate(seqs):
        P, n = len(s.prompt_ids), len(s.response_ids)
        np.testing.assert_allclose(t.response[b], H[b, P - 1:P - 1 + n], rtol=1e-5)
        np.testing.assert_allclose(t.response_t1[b], H1[b, P - 1:P - 1 + n], rtol=1e-5)
        np.testing.assert_allclose(t.prompt[b], H[b, :P - 1], rtol=1e-5)
        np.testing.assert_allclose(t.shifted[b], H[b, P:P + n], rtol=1e-5)
        assert len(t.padding[b]) == R - n
        # padding positions see pad tokens hidden by the attention mask; the batch's own forward agrees
        # wherever the padded block lies inside this batch's tensor
        np.testing.assert_allclose(t.padding[b], H[b, P - 1 + n:P - 1 + R], rtol=1e-4)


def _padded(rows, T=None):
    T = T or max(len(r) for r in rows)
    M = torch.zeros(len(rows), T, dtype=torch.float64)
    mask = torch.zeros(len(rows), T, dtype=torch.float64)
    for i, r in enumerate(rows):
        M[i, :len(r)] = torch.as_tensor(r)
        mask[i, :len(r)] = 1
    return M, mask


def test_each_convention_is_the_trainers_masked_tensor_formula(tiny):
    model, seqs = tiny
    t = token_entropies(model, seqs, temperature=0.7, pad_id=0)
    t.packed_order = core.packed_order([len(s.prompt_ids) + len(s.response_ids) for s in seqs])
    groups = [0, 0, 0, 1, 1, 2, 2]
    got = core.conventions_of(t, groups, horizon=12, temperature=0.7)
    E, m = _padded(t.response)
    ref = {
        "token-mean": (E * m).sum() / m.sum(),
        "seq-mean-token-mean": ((E * m).sum(-1) / m.sum(-1)).mean(),
        "seq-mean-token-sum": (E * m).sum(-1).mean(),
        "seq-mean-token-sum-norm": ((E * m).sum(-1) / 12).mean(),
        "microbatch-mean": torch.stack([(E[a:b] * m[a:b]).sum() / m[a:b].sum() for a, b in ((0, 3), (3, 5), (5, 7))]).mean(),
        "no-temperature": (_padded(t.response_t1)[0] * m).sum() / m.sum(),
        "trl-padding-included": torch.cat([torch.as_tensor(np.concatenate([r, p])) for r, p in
                                           zip(t.response, t.padding)]).mean(),  # the whole [B, R] block
        "prompt-included": torch.as_tensor(np.concatenate(list(t.prompt) + list(t.response))).mean(),
        "shifted-by-one": (_padded(t.shifted)[0] * m).sum() / m.sum(),
        "trl-sft-attention-mask": torch.as_tensor(np.concatenate(list(t.prompt) + list(t.response) +
                                                                 [s[-1:] for s in t.shifted])).mean(),
    }
    # PR #1943: rows in packed order, the mask in sample order; unpadded rows re-padded with zeros
    packed = E[torch.as_tensor(t.packed_order)]
    ref["verl-dynbsz-unreordered"] = (packed * m).sum() / m.sum()
    assert set(got) == set(ref)
    for k in ref:
        assert got[k] == pytest.approx(float(ref[k]), rel=1e-12), k
    assert len(set(round(v, 9) for v in got.values())) == len(got)  # all distinct on this batch


def test_conventions_a_batch_cannot_tell_apart_are_left_out_or_flagged():
    from entropylaw.audit.conventions import Tokens

    same = Tokens(response=[np.array([1.0, 2.0]), np.array([3.0, 4.0])], response_t1=[np.ones(2), np.ones(2)],
                  packed_order=[0, 1])
    v = core.conventions_of(same, micro_groups=[0, 0], temperature=1.0)
    # one micro-batch, temperature 1, identity packing: those conventions are the token mean itself
    assert set(v) == {"token-mean", "seq-mean-token-mean", "seq-mean-token-sum", "seq-mean-token-sum-norm"}
    # equal lengths, horizon = that length: token-mean == seq-mean-token-mean == seq-mean-token-sum-norm
    d = verdict.decide(2.5, v, 1e-3)
    assert d["matched"] is None
    assert sorted(d["within"]) == ["seq-mean-token-mean", "seq-mean-token-sum-norm", "token-mean"]
    assert d["verdict"].startswith("cannot tell apart")


def test_verdict_names_none_and_flags_bugs():
    values = {"token-mean": 1.0, "seq-mean-token-mean": 1.1, "verl-dynbsz-unreordered": 0.8}
    assert verdict.decide(1.5, values, 1e-3)["matched"] is None
    assert "do not trust" in verdict.decide(1.5, values, 1e-3)["verdict"]
    bug = verdict.decide(0.8001, values, 1e-3)
    assert bug["matched"] == "verl-dynbsz-unreordered" and "known trainer bug" in bug["verdict"]
    assert bug["correction"]["factor"] == pytest.approx(1.0 / 0.8)
    # a value at the tolerance's edge: inside at tol, outside just past it
    assert verdict.decide(1.001, values, 1e-3 / 1.001 + 1e-12)["matched"] == "token-mean"
    assert verdict.decide(1.0011, values, 1e-3)["matched"] is None


def test_tolerance_is_twice_the_bf16_difference_with_a_floor():
    assert verdict.tolerance({"token-mean": 1.0}, {"token-mean": 1.01}) == pytest.approx(0.02)
    assert verdict.tolerance({"token-mean": 1.0}, {"token-mean": 1.0}) == verdict.FLOOR


# ---- the command, end to end, and its bad inputs -------------------------------------------------

@pytest.fixture(scope="module")
def work(tmp_path_factory, tiny):
    model, seqs = tiny
    d = tmp_path_factory.mktemp("audit")
    model.save_pretrained(d / "model")
    rows = [{"prompt_id": s.prompt_id, "prompt_ids": s.prompt_ids, "response_ids": s.response_ids,
             "reward": s.reward} for s in seqs]
    (d / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (d / "empty.jsonl").write_text("")
    t = token_entropies(model, seqs, 1.0, pad_id=0)
    truth = core.conventions_of(t)

    def state(name, history):
        (d / name).mkdir()
        (d / name / "trainer_state.json").write_text(json.dumps({"global_step": 3, "log_history": history}))
        return str(d / name / "trainer_state.json")

    logs = {
        "good": state("good", [{"step": 1, "entropy": 2.0, "reward": 0.1},
                               {"step": 2, "entropy": truth["seq-mean-token-mean"], "reward": 0.2},
                               {"step": 3, "entropy": 1.5, "reward": 0.3}]),
        "gap": state("gap", [{"step": 1, "entropy": 2.0, "reward": 0.1}, {"step": 2, "reward": 0.2},
                             {"step": 3, "entropy": 1.5, "reward": 0.3}]),
        "nan": state("nan", [{"step": 1, "entropy": 2.0, "reward": 0.1}, {"step": 2, "entropy": float("nan"),
                             "reward": 0.2}, {"step": 3, "entropy": 1.5, "reward": 0.3}]),
        "neg": state("neg", [{"step": 1, "entropy": 2.0, "reward": 0.1}, {"step": 2, "entropy": -0.3,
                             "reward": 0.2}, {"step": 3, "entropy": 1.5, "reward": 0.3}]),
    }
    return d, logs, truth


def _run(capsys, *argv):
    code = main(["audit", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def test_audit_names_the_convention_of_a_logged_value(work, capsys):
    d, logs, truth = work
    # the measured tolerance (bf16 recomputation noise, at least the float32 floor) holds the true one;
    # should it span several conventions, the audit must say it cannot tell them apart
    code, out, err = _run(capsys, "--model", d / "model", "--rollouts", d / "r.jsonl", "--log", logs["good"],
                          "--step", 2, "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["relative_tolerance"] >= verdict.FLOOR
    if len(r["within"]) > 1:
        assert r["matched"] is None and "cannot tell apart" in r["verdict"]
    assert "seq-mean-token-mean" in r["within"]
    # float32 on both sides (no bf16 trainer): a tight tolerance names it
    code, out, err = _run(capsys, "--model", d / "model", "--rollouts", d / "r.jsonl", "--log", logs["good"],
                          "--step", 2, "--json", "--tolerance", 1e-7)
    r = json.loads(out)
    assert r["matched"] == "seq-mean-token-mean", r["within"]
    assert r["logged"] == pytest.approx(truth["seq-mean-token-mean"])
    assert set(r) >= {"logged", "conventions", "matched", "tolerance", "correction"}
    assert r["correction"]["factor"] == pytest.approx(truth["token-mean"] / truth["seq-mean-token-mean"])
    code, out, _ = _run(capsys, "--model", d / "model", "--rollouts", d / "r.jsonl", "--logged", 9.0)
    assert code == 0 and "no convention matches" in out and "do not trust" in out


@pytest.mark.parametrize("case, argv, problem", [
    ("no entropy at step", ["--log", "{gap}", "--step", "2"], r"gap/trainer_state.json: no entropy at step 2"),
    ("nan entropy", ["--log", "{nan}", "--step", "2"], r"nan/trainer_state.json: no entropy at step 2 .*non-finite|"
     r"nan/trainer_state.json: no entropy at step 2"),
    ("negative", ["--log", "{neg}", "--step", "2"], r"neg/trainer_state.json step 2: logged entropy is -0.3, negative"),
    ("no such step", ["--log", "{good}", "--step", "9"], r"good/trainer_state.json: no step 9 \(entropy logged at "
     r"steps 1..3\)"),
    ("log without step", ["--log", "{good}"], r"--log needs --step K"),
    ("nan --logged", ["--logged", "nan"], r"--logged: logged entropy is nan"),
    ("empty dump", ["--logged", "1", "--rollouts-override", "{empty}"], r"empty.jsonl: no rollouts"),
    ("wrong tokenizer", ["--logged", "1", "--rollouts-override", "{bigvocab}"], r"outside the vocabulary \[0, 40\)"),
    ("bad micro-batch", ["--logged", "1", "--micro-batch-size", "0"], r"--micro-batch-size 0: expected a positive"),
])
def test_bad_input_is_one_line_and_exit_2(work, capsys, case, argv, problem):
    import re

    d, logs, _ = work
    big = d / "bigvocab.jsonl"
    big.write_text(json.dumps({"prompt_id": "p", "prompt_ids": [3, 4], "response_ids": [5, 49000], "reward": 1}) + "\n")
    paths = {**logs, "empty": str(d / "empty.jsonl"), "bigvocab": str(big)}
    argv = [a.format(**paths) for a in argv]
    rollouts = str(d / "r.jsonl")
    if "--rollouts-override" in argv:
        i = argv.index("--rollouts-override")
        rollouts = argv[i + 1]
        del argv[i:i + 2]
    code, out, err = _run(capsys, "--model", d / "model", "--rollouts", rollouts, *argv)
    assert code == 2, (case, out, err)
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("entropylaw: error: "), err
    assert re.search(problem, lines[0]), lines[0]


def test_out_writes_summary_json_that_the_report_shows(work, capsys, tmp_path):
    d, logs, truth = work
    code, out, err = _run(capsys, "--model", d / "model", "--rollouts", d / "r.jsonl", "--log", logs["good"],
                          "--step", 2, "--tolerance", 1e-7, "--out", tmp_path / "a")
    assert code == 0, err
    assert "verdict: matches seq-mean-token-mean" in out and "correction: token-mean = " in out
    summary = json.loads((tmp_path / "a" / "summary.json").read_text())["audit"]
    assert summary["matched"] == "seq-mean-token-mean"
    assert {"logged", "conventions", "matched", "tolerance", "correction", "verdict"} <= set(summary)
    assert main(["report", "--probe", str(tmp_path / "a" / "summary.json"), "--out", str(tmp_path / "rep")]) == 0
    page = (tmp_path / "rep" / "report.html").read_text()
    assert "Audit of the logged entropy" in page and "<b>seq-mean-token-mean</b>" in page
    assert f"{truth['seq-mean-token-mean']:.6g}" in page


def test_trl_completions_with_sampled_ids_are_scored_as_sampled(tmp_path):
    import pandas as pd

    from entropylaw.probe.rollouts import read_rollouts

    d = tmp_path / "completions"
    d.mkdir()
    pd.DataFrame({"step": [3, 3], "prompt": ["Q", "Q"], "completion": ["a b", "c"], "accuracy": [1.0, 0.0],
                  "advantage": [0.5, -0.5], "completion_ids": [[5, 6, 1], [7, 1]]}).to_parquet(
        d / "completions_00003.parquet")
    df = read_rollouts(d, step=3)
    assert df["response_ids"].tolist() == [[5, 6, 1], [7, 1]]  # the eos kept, nothing re-tokenised
    with pytest.raises(Exception, match="holds step 3's rollouts, not step 2's|no step 2|step 2"):
        core.read_sequences(str(d / "completions_00003.parquet"), 2, V, None, None, False)


def test_el_audit_is_the_api_whatever_was_imported(work):
    import entropylaw as el
    import entropylaw.audit.core  # noqa: F401  (makes the attribute entropylaw.audit the package)

    d, _logs, truth = work
    r = el.audit(d / "model", d / "r.jsonl", logged=truth["token-mean"], tolerance=1e-7)
    assert r["matched"] == "token-mean"
    assert {k: r["conventions"][k] for k in truth} == pytest.approx(truth)
