"""entropylaw audit: per-token entropies against a full-softmax forward, each convention against the
trainers' own masked-tensor formulas (written here on padded [B, T] tensors, as veRL's agg_loss and
TRL's masked means are), the verdict, and every bad input (one line, exit 2, nothing printed)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

import entropylaw.auditing.core as core
import entropylaw.auditing.numerics as numerics
import entropylaw.auditing.verdict as verdict
from entropylaw.auditing.forward import token_entropies
from entropylaw.cli.main import main
from entropylaw.readers.rollouts.encode import Sequence
from entropylaw.probing.model import tiny_model

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
        "microbatch-mean": torch.stack([(E[a:b] * m[a:b]).sum() / m[a:b].sum()
                                        for a, b in ((0, 3), (3, 5), (5, 7))]).mean(),
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
    from entropylaw.auditing.conventions import Tokens

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
    # a logged 0 (a collapsed policy): its tolerance was 0 nats, which no recomputation meets
    flat = {"token-mean": 2e-4, "seq-mean-token-mean": 9e-4}
    zero = verdict.decide(0.0, flat, 5e-3)
    assert zero["tolerance"] == pytest.approx(5e-3 * 9e-4) and zero["matched"] is None  # 2e-4 is 44 tolerances off
    assert verdict.decide(0.0, {"token-mean": 1e-9, "seq-mean-token-mean": 2e-7}, 5e-3)["matched"] == "token-mean"


# ---- the tolerance: a model of the trainer's rounding, checked against rounding done here ---------

def _rnd(x, bits=8):
    """Round float64 to ``bits`` significant bits (bf16: 8), to nearest even: a bf16 unit, exactly."""
    m, e = np.frexp(x)
    return np.ldexp(np.round(m * 2.0 ** bits) / 2.0 ** bits, e)


def _scale(z):
    """S + A of numerics, from float64 logits [n, V] (independent of the library's torch code)."""
    lse = np.logaddexp.reduce(z, axis=-1)
    logp = z - lse[:, None]
    p = np.exp(logp)
    H = -(p * logp).sum(-1)
    return (p * np.abs(logp + H[:, None]) * np.abs(z)).sum(-1) + np.abs(lse) + (p * np.abs(z)).sum(-1), H


def test_error_scale_is_computed_from_the_full_logits(tiny):
    model, seqs = tiny
    t = token_entropies(model, seqs, temperature=0.7, pad_id=0, error_scale=True)
    for b, s in enumerate(seqs):
        ids = torch.tensor([s.prompt_ids + s.response_ids])
        with torch.no_grad():
            z = model(input_ids=ids).logits[0].double().numpy() / 0.7
        P, n = len(s.prompt_ids), len(s.response_ids)
        np.testing.assert_allclose(t.extra["error_scale"][b], _scale(z[P - 1:P - 1 + n])[0], rtol=1e-4)


def _llm_like_logits(rng, n, V=3000):
    """Logits of an LLM's shape: an offset, a spread, and a few likely tokens per position."""
    z = 12.0 + 2.5 * rng.standard_normal((n, V))
    top = rng.integers(0, V, (n, 3))
    np.put_along_axis(z, top, z.max(-1, keepdims=True) + rng.uniform(-2, 6, (n, 3)), -1)
    return z


def test_the_model_covers_a_bf16_trainer_rounding_logits_and_entropy():
    # 40 seeded batches; each trainer's entropy from logits rounded to bf16, with logsumexp, p and
    # sum_v p_v z_v rounded to bf16 (veRL's entropy_from_logits in bf16, the widest of the trainers' forms),
    # emulated exactly in float64: the token-mean and seq-mean-token-mean it logs stay within the tolerance,
    # and the model's sigma is not smaller than the spread observed over the seeds
    from entropylaw.auditing.conventions import Tokens

    z_scores = []
    for seed in range(40):
        rng = np.random.default_rng(seed)
        lengths = rng.integers(2, 30, 8)
        z = _llm_like_logits(rng, int(lengths.sum()))
        S, H = _scale(z)
        zb = _rnd(z)
        lse = _rnd(np.logaddexp.reduce(zb, axis=-1))
        p = _rnd(np.exp(zb - np.logaddexp.reduce(zb, axis=-1)[:, None]))
        Hb = _rnd(lse - _rnd((p * zb).sum(-1)))
        cut = np.cumsum(lengths)[:-1]
        t = Tokens(response=np.split(H, cut), extra={"error_scale": np.split(S, cut)})
        tb = Tokens(response=np.split(Hb, cut))
        values = core.conventions_of(t)
        tol = numerics.tolerance(t, values, "bf16")
        for k in ("token-mean", "seq-mean-token-mean"):
            logged = core.conventions_of(tb)[k]
            assert abs(logged - values[k]) <= tol["relative"] * values[k], (seed, k, logged, values[k], tol)
        sigma = tol["relative"] * values["token-mean"] / numerics.SIGMAS  # token-mean's or larger
        z_scores.append((core.conventions_of(tb)["token-mean"] - values["token-mean"]) / sigma)
    assert np.sqrt(np.mean(np.square(z_scores))) < 1.0, z_scores
    assert np.max(np.abs(z_scores)) > 0.02  # the emulated rounding is not vacuous


def test_one_tokens_worst_case_over_the_vocabulary_is_the_first_order_bound():
    # |dz_v| <= e |z_v| moves a token's entropy by at most e S (S: the first term of the error scale) to
    # first order, and the adversarial sign attains it; at bf16's e = 2^-8 the second order adds < 10 %
    rng = np.random.default_rng(1)
    z = _llm_like_logits(rng, 5, V=500)
    lse = np.logaddexp.reduce(z, axis=-1)
    logp = z - lse[:, None]
    p = np.exp(logp)
    H = -(p * logp).sum(-1)
    S = (p * np.abs(logp + H[:, None]) * np.abs(z)).sum(-1)
    ent = lambda x: -(np.exp(x - np.logaddexp.reduce(x, axis=-1)[:, None]) *  # noqa: E731
                      (x - np.logaddexp.reduce(x, axis=-1)[:, None])).sum(-1)
    for e, slack in ((2.0 ** -8, 1.1), (2.0 ** -16, 1.001)):
        for seed in range(20):
            dz = e * np.abs(z) * np.random.default_rng(seed).uniform(-1, 1, z.shape)
            assert np.all(np.abs(ent(z + dz) - H) <= e * S * slack)
        worst = -e * np.abs(z) * np.sign(logp + H[:, None])  # dH = -sum p (log p + H) dz
        assert np.all(np.abs(ent(z + worst) - H) <= e * S * slack)
        assert np.all(ent(z + worst) - H >= e * S / slack)


def test_tolerance_states_its_assumptions():
    from entropylaw.auditing.conventions import Tokens
    from entropylaw.cli.audit import PRECISIONS

    assert PRECISIONS == numerics.PRECISIONS
    t = Tokens(response=[np.full(10, 2.0)], extra={"error_scale": [np.full(10, 50.0)]})
    v = {"token-mean": 2.0, "seq-mean-token-mean": 2.0}
    bf16 = numerics.tolerance(t, v, "bf16")
    assert bf16["relative"] == pytest.approx(3 * 2 ** -8 / np.sqrt(3) * 50 / np.sqrt(10) / 2)
    assert "bf16" in bf16["assumes"] and "3 sigma" in bf16["assumes"] and not bf16["logged_rounding"]
    # a logged value that is itself a bf16 number was rounded by the trainer: u more
    rounded = numerics.tolerance(t, v, "bf16", logged=2.015625)
    assert rounded["logged_rounding"] and rounded["relative"] == pytest.approx(bf16["relative"] + 2 ** -8)
    assert "logged value is a bf16 number" in rounded["assumes"]
    assert not numerics.tolerance(t, v, "bf16", logged=2.0156).get("logged_rounding")
    fp16 = numerics.tolerance(t, v, "fp16")["relative"]
    assert fp16 == pytest.approx(bf16["relative"] / 8)
    assert numerics.tolerance(t, v, "fp32")["relative"] == numerics.FLOOR
    with pytest.raises(ValueError, match="trainer precision 'fp8'"):
        numerics.tolerance(t, v, "fp8")
    # two conventions closer than the tolerance: the verdict names both and picks neither
    close = {"token-mean": 2.0, "microbatch-mean": 2.0 * (1 + bf16["relative"] / 2)}
    d = verdict.decide(2.0, close, bf16["relative"])
    assert d["matched"] is None and "token-mean" in d["verdict"] and "microbatch-mean" in d["verdict"]


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
    try:
        code = main(["audit", *map(str, argv)])
    except SystemExit as stop:  # a value the option's type refuses: argparse's exit, after its one line
        code = stop.code
    out, err = capsys.readouterr()
    return code, out, err


def test_audit_names_the_convention_of_a_logged_value(work, capsys):
    d, logs, truth = work
    # the tolerance of a bf16 trainer's rounding holds the true one; should it span several conventions,
    # the audit must say it cannot tell them apart
    code, out, err = _run(capsys, "--model", d / "model", "--rollouts", d / "r.jsonl", "--log", logs["good"],
                          "--step", 2, "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["relative_tolerance"] >= numerics.FLOOR
    assert r["tolerance_model"]["trainer_precision"] == "bf16" and r["tolerance_model"]["source"] == "model"
    if len(r["within"]) > 1:
        assert r["matched"] is None and "cannot tell apart" in r["verdict"]
    assert "seq-mean-token-mean" in r["within"]
    # a float32 trainer: the float32 floor (1e-5), stated in the output
    code, out, err = _run(capsys, "--model", d / "model", "--rollouts", d / "r.jsonl", "--log", logs["good"],
                          "--step", 2, "--trainer-precision", "fp32", "--json")
    assert code == 0, err
    r32 = json.loads(out)
    assert r32["relative_tolerance"] == numerics.FLOOR
    assert "trainer computing in fp32" in r32["tolerance_model"]["assumes"]
    assert "seq-mean-token-mean" in r32["within"] and set(r32["within"]) <= set(r["within"])
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
    ("nan --logged", ["--logged", "nan"], r"argument --logged: 'nan': expected a finite number"),
    ("empty dump", ["--logged", "1", "--rollouts-override", "{empty}"], r"empty.jsonl: no rollouts"),
    ("wrong tokenizer", ["--logged", "1", "--rollouts-override", "{bigvocab}"], r"outside the vocabulary \[0, 40\)"),
    ("bad micro-batch", ["--logged", "1", "--micro-batch-size", "0"],
     r"argument --micro-batch-size: '0': must be at least 1"),
    ("bad precision", ["--logged", "1", "--trainer-precision", "fp8"], r"--trainer-precision.*fp8"),
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

    from entropylaw.readers.rollouts.formats import read_rollouts

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
    import entropylaw.auditing.core  # noqa: F401  (makes the attribute entropylaw.auditing the package)

    d, _logs, truth = work
    r = el.audit(d / "model", d / "r.jsonl", logged=truth["token-mean"], tolerance=1e-7)
    assert r["matched"] == "token-mean"
    assert {k: r["conventions"][k] for k in truth} == pytest.approx(truth)



def test_audit_encodes_prompts_by_the_probes_chat_template_rule(tmp_path, capsys):
    """One rule (ingest.rollouts.encode.chat_template_for) for probe and audit. What changed for the
    audit, which had its own (default False; a TRL log's False read as None): a veRL dump audited
    without --chat-template now has its prompts' chat template rebuilt, as the probe does (they were
    tokenised as dumped); --no-chat-template on a TRL log is now honoured (it was overridden)."""
    import pandas as pd

    from _tiny_lm import char_tokenizer
    from entropylaw.readers.rollouts.encode import chat_template_for

    assert [chat_template_for(f, a) for f in ("verl-dump", "trl-completions", "entropylaw")
            for a in (None, True, False)] == [None, True, False, None, True, False, False, True, False]
    tok = char_tokenizer()
    chat = lambda text: tok(tok.apply_chat_template([{"role": "user", "content": text}], tokenize=False,  # noqa: E731
                                                    add_generation_prompt=True), add_special_tokens=False)["input_ids"]
    plain = lambda text: tok(text, add_special_tokens=False)["input_ids"]  # noqa: E731
    shown = tok.decode(chat("What is 2+3?"), skip_special_tokens=True)  # what veRL dumps
    dump = tmp_path / "dump"
    dump.mkdir()
    (dump / "4.jsonl").write_text("".join(json.dumps({"input": shown, "output": o, "score": float(i), "step": 4})
                                          + "\n" for i, o in enumerate(["5", "16"])))
    V_tok = len(tok)
    assert core.read_sequences(str(dump), 4, V_tok, tok, None, None)[0].prompt_ids == chat("What is 2+3?")
    assert core.read_sequences(str(dump), 4, V_tok, tok, None, False)[0].prompt_ids == plain(shown)
    model = tmp_path / "model"
    tiny_model(vocab=V_tok, seed=2).save_pretrained(model)
    tok.save_pretrained(model)
    got = {}
    for flag in ([], ["--chat-template"], ["--no-chat-template"]):
        code, out, err = _run(capsys, "--model", model, "--rollouts", dump, "--step", 4, "--logged", 1.0, "--json",
                              *flag)
        assert code == 0, err
        got[tuple(flag)] = json.loads(out)["conventions"]["prompt-included"]
    assert got[()] == got[("--chat-template",)] != got[("--no-chat-template",)]  # the default was the last
    trl = tmp_path / "completions"
    trl.mkdir()
    pd.DataFrame({"step": [3, 3], "prompt": ["Q?", "Q?"], "completion": ["1", "2"], "accuracy": [1.0, 0.0]}
                 ).to_parquet(trl / "completions_00003.parquet")
    assert core.read_sequences(str(trl), 3, V_tok, tok, None, None)[0].prompt_ids == chat("Q?")
    assert core.read_sequences(str(trl), 3, V_tok, tok, None, False)[0].prompt_ids == plain("Q?")  # was chat("Q?")


def test_a_file_of_several_steps_is_audited_at_one_step_and_says_which(work, capsys, tmp_path):
    """The project's rollout file holding steps 3 and 7, no --step: the audit read both as one
    batch ("step None", 2 x the rollouts); it reads the last step's, and says so; --step 3 reads 3's."""
    d, logs, truth = work
    rows = [json.loads(x) for x in (d / "r.jsonl").read_text().splitlines()]
    path = tmp_path / "two_steps.jsonl"
    path.write_text("".join(json.dumps({**r, "step": s}) + "\n" for s in (3, 7) for r in rows))
    code, out, err = _run(capsys, "--model", d / "model", "--rollouts", path, "--logged", 1.0)
    assert code == 0, err
    assert out.startswith(f"audit: step 7, {len(rows)} rollouts") and "the last of 2 steps the file holds" in out
    code, out, err = _run(capsys, "--model", d / "model", "--rollouts", path, "--logged", 1.0, "--step", 3, "--json")
    r = json.loads(out)
    assert code == 0 and r["step"] == 3 and r["n_rollouts"] == len(rows) and r["rollouts"]["step"] == 3
    assert r["conventions"]["token-mean"] == pytest.approx(truth["token-mean"], rel=1e-6)  # the same batch, once


def test_out_beside_a_probes_summary_keeps_it_and_refuses_a_file_that_is_none(work, capsys, tmp_path):
    """audit --out into a probe's folder rewrote its summary.json as {"audit": ...}: the probe's
    Table 1 was lost. The audit is added beside it; a summary.json that is no summary is refused."""
    d, logs, truth = work
    out_dir = tmp_path / "probe_out"
    out_dir.mkdir()
    (out_dir / "summary.json").write_text(json.dumps({"table1": {"all": [1.0]}, "n_tokens": 10}))
    code, out, err = _run(capsys, "--model", d / "model", "--rollouts", d / "r.jsonl", "--logged", 1.0,
                          "--out", out_dir)
    assert code == 0, err
    doc = json.loads((out_dir / "summary.json").read_text())
    assert doc["table1"] == {"all": [1.0]} and doc["n_tokens"] == 10 and "conventions" in doc["audit"]
    assert "the audit added, the probe's summary kept" in out
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "summary.json").write_text("[1, 2]\n")
    code, out, err = _run(capsys, "--model", d / "model", "--rollouts", d / "r.jsonl", "--logged", 1.0,
                          "--out", tmp_path / "mine")
    assert code == 2 and "exists and is not an entropylaw summary" in err
    assert (tmp_path / "mine" / "summary.json").read_text() == "[1, 2]\n"


def test_a_log_in_bits_is_suggested_and_a_horizon_shorter_than_a_response_refused(work, capsys):
    d, logs, truth = work
    bits = truth["token-mean"] / math.log(2)
    code, out, err = _run(capsys, "--model", d / "model", "--rollouts", d / "r.jsonl", "--logged", bits, "--json")
    r = json.loads(out)
    assert code == 0 and r["matched"] is None, err
    assert "the log may be in bits (log base 2), not nats" in r["verdict"] and "matches token-mean" in r["verdict"]
    code, out, err = _run(capsys, "--model", d / "model", "--rollouts", d / "r.jsonl", "--logged", 1.0, "--horizon", 1)
    assert code == 2 and "--horizon 1: shorter than the longest response" in err


def test_a_log_whose_entropy_is_nan_says_so_not_that_it_has_no_entropy(work, capsys, tmp_path):
    d, logs, truth = work
    (tmp_path / "trainer_state.json").write_text('{"log_history": [{"step": 1, "entropy": NaN, "loss": 0.1}]}')
    code, out, err = _run(capsys, "--model", d / "model", "--rollouts", d / "r.jsonl", "--log",
                          tmp_path / "trainer_state.json", "--step", 1)
    assert code == 2 and "no entropy value read; rows were dropped (non-finite value)" in err


def test_an_entropy_key_given_that_yields_no_entropy_is_said_as_given(work, capsys, tmp_path):
    """``--entropy-key critic/score/mean``: the score took that key, no entropy was read; the
    message said "give --entropy-key KEY" to a user who had given it."""
    d, logs, truth = work
    (tmp_path / "trainer_state.json").write_text('{"log_history": [{"step": 1, "reward": 0.5, "loss": 0.1}]}')
    code, out, err = _run(capsys, "--model", d / "model", "--rollouts", d / "r.jsonl", "--log",
                          tmp_path / "trainer_state.json", "--step", 1, "--entropy-key", "reward")
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "no entropy read from --entropy-key 'reward'" in err and "give --entropy-key" not in err, err


def test_an_entropy_key_that_yields_no_entropy_lists_the_logs_own_keys(work, capsys, tmp_path):
    """The message listed "the metrics read", entropylaw's names (``score`` for the log's
    ``reward``), the first 8 sorted: a user picking the key saw names the log does not have.
    It lists the log's own keys, the first 12 and a count, on one line, and says who took the key."""
    d, logs, truth = work
    record = {"step": 1, "reward": 0.5, "loss": 0.1, **{f"train/m{i:02d}": 0.2 for i in range(18)}}
    (tmp_path / "trainer_state.json").write_text(json.dumps({"log_history": [record]}))
    code, out, err = _run(capsys, "--model", d / "model", "--rollouts", d / "r.jsonl", "--log",
                          tmp_path / "trainer_state.json", "--step", 1, "--entropy-key", "reward")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    own = ", ".join(["reward", "loss"] + [f"train/m{i:02d}" for i in range(10)])
    assert f"the log's keys: {own} and 8 more (20 in all)" in err, err
    assert "it was read as the training score" in err and "score," not in err, err


def test_a_token_budget_below_the_longest_sequence_is_refused(work, capsys):
    """veRL's dynamic batch size refuses a budget one sequence exceeds; the audit packed that
    sequence alone and went on, the budget silently ignored."""
    d, logs, truth = work
    code, out, err = _run(capsys, "--model", d / "model", "--rollouts", d / "r.jsonl", "--logged", 1.0,
                          "--token-budget", 3)
    assert code == 2 and "--token-budget 3: below the longest sequence" in err and len(err.strip().splitlines()) == 1


def test_a_checkpoint_whose_entropy_is_nan_is_one_line_not_a_verdict_on_the_log(work, capsys, tmp_path):
    """inf/NaN weights gave NaN for every convention and 'no convention matches: ... do not trust a fit
    on this entropy', blaming the log (and NaN in --json, which is no JSON)."""
    d, _, _ = work
    model = tiny_model("llama", vocab=V, hidden=16, layers=2, seed=3)  # the checkpoint of `work`, damaged
    with torch.no_grad():
        model.lm_head.weight[3, 0] = float("nan")
    model.save_pretrained(tmp_path / "nan")
    capsys.readouterr()  # the save's progress bar
    code, out, err = _run(capsys, "--model", tmp_path / "nan", "--rollouts", d / "r.jsonl", "--logged", 2.0, "--json")
    assert code == 2 and out == "", out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("entropylaw: error: --model: the entropy is not finite at "), err
    assert "hold inf or NaN" in lines[0]


def test_json_has_the_same_keys_with_or_without_a_logged_value(work, capsys):
    """Without --log/--logged, --json left out `within` and `gaps`, which --help lists among its keys."""
    d, _, _ = work
    shapes = []
    for extra in ([], ["--logged", 2.0]):
        code, out, err = _run(capsys, "--model", d / "model", "--rollouts", d / "r.jsonl", "--json", *extra)
        assert code == 0, err
        shapes.append(json.loads(out))
    assert set(shapes[0]) == set(shapes[1]) >= {"logged", "conventions", "matched", "tolerance", "correction", "step",
                                                "n_rollouts", "n_tokens", "temperature", "within", "gaps", "verdict",
                                                "relative_tolerance", "tolerance_model"}
    assert shapes[0]["within"] is None and shapes[0]["gaps"] is None and shapes[0]["logged"] is None
    code, out, err = _run(capsys, "--model", d / "model", "--rollouts", d / "r.jsonl")
    assert code == 0 and "no logged value given" in out, err
