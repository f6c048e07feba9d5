"""``entropylaw probe`` and ``probe-checkpoints`` end to end, and every bad input: one line, exit 2, no output."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import torch

from _probe_inputs import rollout_rows, write_jsonl

from entropylaw.cli.main import main
from entropylaw.probing.model import tiny_model

V = 120


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    d = tmp_path_factory.mktemp("probe")
    tiny_model("qwen2", vocab=V, hidden=16, layers=1, seed=0).save_pretrained(d / "model")
    rows = rollout_rows(V)
    _write(d / "roll.jsonl", rows)
    return d, rows


_write = write_jsonl


def _run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_probe_writes_parquet_and_summary(workdir, capsys):
    d, rows = workdir
    code, out, err = _run(capsys, "probe", "--model", str(d / "model"), "--rollouts", str(d / "roll.jsonl"),
                          "--out", str(d / "out"), "--dtype", "float64", "--whatif", "none,steer", "--no-progress")
    assert code == 0, err
    assert "Table 1" in out and "lemma1" in out and "What-if" in out
    frame = pd.read_parquet(d / "out" / "tokens.parquet")
    assert {"prompt_id", "response_index", "position", "token_id", "logprob", "entropy", "cov"} <= set(frame.columns)
    assert len(frame) == sum(len(r["response_ids"]) for r in rows)
    summary = json.loads((d / "out" / "summary.json").read_text())
    assert set(summary["table1"]) == {"0.0002", "0.002", "0.02", "0.2", "0.5", "all"}
    assert {"pearson", "spearman", "sign_agreement", "slope", "mean_error", "predicted_mean",
            "measured_mean"} <= set(summary["ladder"]["estimators"]["lemma1"])
    assert set(summary["whatif"]) == {"none", "steer"}


def _bad(workdir, tmp_path, capsys, mutate=None, extra=(), model=None, expect=""):
    d, rows = workdir
    rows = json.loads(json.dumps(rows))
    if mutate:
        mutate(rows)
    path = _write(tmp_path / "bad.jsonl", rows)
    out_dir = tmp_path / "out"
    code, out, err = _run(capsys, "probe", "--model", str(model or d / "model"), "--rollouts", str(path),
                          "--out", str(out_dir), "--no-ladder", *extra)
    assert code == 2
    lines = [ln for ln in err.strip().splitlines() if ln]
    assert len(lines) == 1 and lines[0].startswith("entropylaw: error:") and expect in lines[0], err
    assert not out_dir.exists()
    return lines[0]


def test_token_id_outside_vocabulary(workdir, tmp_path, capsys):
    def m(rows):
        rows[2]["response_ids"][1] = V + 5
    line = _bad(workdir, tmp_path, capsys, m, expect="outside the vocabulary")
    assert "bad.jsonl:3" in line


def test_empty_response(workdir, tmp_path, capsys):
    _bad(workdir, tmp_path, capsys, lambda rows: rows[1].update(response_ids=[]), expect="bad.jsonl:2: empty response")


def test_response_longer_than_context(workdir, tmp_path, capsys):
    _bad(workdir, tmp_path, capsys, lambda rows: rows[0].update(response_ids=[5] * 300), expect="context of 256")


def test_nan_reward(workdir, tmp_path, capsys):
    _bad(workdir, tmp_path, capsys, lambda rows: rows[4].update(reward=float("nan")),
         expect="bad.jsonl:5: no reward (missing, null or NaN")


def test_missing_model_path(workdir, tmp_path, capsys):
    _bad(workdir, tmp_path, capsys, model=tmp_path / "nope", expect="no such file or directory")


def test_cuda_without_gpu(workdir, tmp_path, capsys):
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    _bad(workdir, tmp_path, capsys, extra=("--device", "cuda"), expect="no CUDA GPU")


def test_tokenizer_that_does_not_match(workdir, tmp_path, capsys):
    from tokenizers import Tokenizer, models
    from transformers import PreTrainedTokenizerFast

    tok = PreTrainedTokenizerFast(tokenizer_object=Tokenizer(models.WordLevel({"a": 0, "b": 1, "[UNK]": 2}, "[UNK]")))
    tok.save_pretrained(tmp_path / "tok")
    _bad(workdir, tmp_path, capsys, extra=("--tokenizer", str(tmp_path / "tok")), expect="do not match")


def test_group_of_one_is_reported(workdir, tmp_path, capsys):
    d, rows = workdir
    rows = json.loads(json.dumps(rows))
    rows[0]["prompt_id"] = "alone"
    path = _write(tmp_path / "single.jsonl", rows)
    code, out, err = _run(capsys, "probe", "--model", str(d / "model"), "--rollouts", str(path),
                          "--out", str(tmp_path / "o"), "--no-ladder")
    assert code == 0
    assert "single response: their GRPO advantage is 0" in err


def test_probe_checkpoints_writes_a_run_table(tmp_path, capsys):
    from entropylaw import table

    for i, step in enumerate((20, 10)):
        tiny_model("llama", vocab=V, hidden=16, layers=1, seed=i).save_pretrained(tmp_path / f"checkpoint-{step}")
    _write(tmp_path / "math.jsonl", [{"prompt_ids": [3, 4, 5], "answer": "7"}, {"prompt_ids": [6, 7], "answer": "1"}])
    sys_path_reward = "entropylaw.probing.rewards:numeric_answer"
    code, out, err = _run(capsys, "probe-checkpoints", str(tmp_path / "checkpoint-20"), str(tmp_path / "checkpoint-10"),
                          "--prompts", str(tmp_path / "math.jsonl"), "--out", str(tmp_path / "t.parquet"),
                          "--reward", sys_path_reward, "--samples", "2", "--max-new-tokens", "5")
    assert code == 0, err
    t = table.read(tmp_path / "t.parquet")
    assert sorted(t["step"].unique()) == [10, 20]
    assert set(t["metric"]) == {"entropy", "response_length", "val/math"}
    ent = table.series(t, table.run_ids(t)[0], "entropy")
    assert ((ent > 0) & (ent <= torch.log(torch.tensor(float(V))).item() + 1e-6)).all()
    acc = table.series(t, table.run_ids(t)[0], "val/math")
    assert ((acc >= 0) & (acc <= 1)).all()


def test_generation_path_samples_and_scores(workdir, tmp_path, capsys, monkeypatch):
    d, _ = workdir
    (tmp_path / "last_even.py").write_text("def reward(text, answer):\n"
                                           "    return float(int(text.split()[-1]) % 2 == 0)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    _write(tmp_path / "q.jsonl", [{"prompt_id": "a", "prompt_ids": [3, 4, 5], "answer": "2"},
                                  {"prompt_id": "b", "prompt_ids": [7, 8], "answer": "3"}])
    code, out, err = _run(capsys, "probe", "--model", str(d / "model"), "--generate", "3", "--prompts",
                          str(tmp_path / "q.jsonl"), "--reward", "last_even:reward", "--max-new-tokens", "6",
                          "--out", str(tmp_path / "o"), "--no-ladder", "--save-rollouts", str(tmp_path / "r.jsonl"))
    assert code == 0, err
    frame = pd.read_parquet(tmp_path / "o" / "tokens.parquet")
    saved = pd.read_json(tmp_path / "r.jsonl", lines=True)
    assert len(saved) == 6 and (saved.groupby("prompt_id").size() == 3).all()
    # the reward is what the function says of each response's text
    assert (saved["reward"] == [float(r[-1] % 2 == 0) for r in saved["response_ids"]]).all()
    mixed = {p for p, g in saved.groupby("prompt_id") if g["reward"].nunique() > 1}
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["signal"]["informative_groups"] == len(mixed) >= 1
    assert set(frame["prompt_id"]) == mixed and frame.groupby("prompt_id")["response_index"].nunique().max() == 3
    assert (frame.groupby(["prompt_id", "response_index"]).size() <= 6).all()
    assert f"signal: {len(mixed)} of 2 prompt groups informative" in out


def test_probe_checkpoints_table1_equals_the_probe_on_the_same_samples(tmp_path, capsys):
    from entropylaw import table

    tiny_model("llama", vocab=V, hidden=16, layers=1, seed=7).save_pretrained(tmp_path / "checkpoint-5")
    _write(tmp_path / "q.jsonl", [{"prompt_id": str(i), "prompt_ids": [3 + i, 4, 5], "answer": str(i % 3)}
                                  for i in range(4)])
    reward = "tests_reward_mod:parity"
    (tmp_path / "tests_reward_mod.py").write_text("def parity(text, answer):\n    return float(len(text) % 2)\n")
    import sys
    sys.path.insert(0, str(tmp_path))
    try:
        code, out, err = _run(capsys, "probe-checkpoints", str(tmp_path / "checkpoint-5"), "--prompts",
                              str(tmp_path / "q.jsonl"), "--out", str(tmp_path / "t.parquet"), "--reward", reward,
                              "--samples", "4", "--max-new-tokens", "6", "--table1")
        assert code == 0, err
        code, out, err = _run(capsys, "probe", "--model", str(tmp_path / "checkpoint-5"), "--generate", "4",
                              "--prompts", str(tmp_path / "q.jsonl"), "--reward", reward, "--max-new-tokens", "6",
                              "--out", str(tmp_path / "p"), "--no-ladder", "--no-progress")
        assert code == 0, err
    finally:
        sys.path.remove(str(tmp_path))
    t = table.read(tmp_path / "t.parquet")
    summary = json.loads((tmp_path / "p" / "summary.json").read_text())
    rid = table.run_ids(t)[0]
    assert table.series(t, rid, "cov_all").iloc[0] == pytest.approx(summary["table1"]["all"], rel=1e-12)
    assert table.series(t, rid, "cov_top_20%").iloc[0] == pytest.approx(summary["table1"]["0.2"], rel=1e-12)
    assert summary["table1"]["all"] != 0
    code, out, err = _run(capsys, "probe-checkpoints", str(tmp_path / "checkpoint-5"), "--prompts",
                          str(tmp_path / "q.jsonl"), "--out", str(tmp_path / "t2.parquet"), "--table1")
    assert code == 2 and "--table1 needs --reward" in err and not (tmp_path / "t2.parquet").exists()


def test_a_file_of_several_steps_is_probed_at_its_last_step_and_a_rerun_keeps_the_audit(workdir, capsys, tmp_path):
    """A rollout file holding two training steps, no --step: the probe grouped the responses of
    both steps as one batch (advantages across steps); it reads the last step's and says so. A
    probe written again into a folder keeps the audit written there, and says what it replaced."""
    d, rows = workdir
    path = _write(tmp_path / "two.jsonl", [{**r, "step": s} for s in (3, 7) for r in rows])
    out_dir = tmp_path / "out"
    code, out, err = _run(capsys, "probe", "--model", str(d / "model"), "--rollouts", str(path), "--out", str(out_dir),
                          "--no-ladder", "--no-progress")
    assert code == 0, err
    assert "step 7 (the last of 2 steps" in out
    summary = json.loads((out_dir / "summary.json").read_text())
    assert summary["n_responses"] == len(rows)
    (out_dir / "summary.json").write_text(json.dumps({**summary, "audit": {"verdict": "kept"}}))
    code, out, err = _run(capsys, "probe", "--model", str(d / "model"), "--rollouts", str(path), "--out", str(out_dir),
                          "--no-ladder", "--no-progress")
    assert code == 0 and "replaced the summary.json there (its audit kept)" in out, err
    assert json.loads((out_dir / "summary.json").read_text())["audit"] == {"verdict": "kept"}


@pytest.mark.parametrize("body, said", [
    ("    return 'yes'\n", "returned 'yes' for the response"),
    ("    raise ValueError('oops')\n", "raised ValueError: oops on the response"),
    ("    return float('nan')\n", "returned nan for the response"),
])
def test_a_reward_function_that_fails_is_the_users_error_in_one_line(workdir, tmp_path, capsys, monkeypatch, body,
                                                                    said):
    """The user's reward raising or returning no number was "internal error ... a bug in entropylaw",
    exit 1: one line naming the function and the response, exit 2, no output."""
    d, _ = workdir
    name = f"my_reward_{abs(hash(body))}"  # a module of its own per case: Python keeps the first one imported
    (tmp_path / f"{name}.py").write_text("def reward(text, answer):\n" + body)
    monkeypatch.syspath_prepend(str(tmp_path))
    _write(tmp_path / "q.jsonl", [{"prompt_id": "a", "prompt_ids": [3, 4, 5], "answer": "2"}])
    code, out, err = _run(capsys, "probe", "--model", str(d / "model"), "--generate", "2", "--prompts",
                          str(tmp_path / "q.jsonl"), "--reward", f"{name}:reward", "--max-new-tokens", "4",
                          "--out", str(tmp_path / "o"), "--no-ladder", "--no-progress")
    lines = [x for x in err.splitlines() if x.startswith("entropylaw:")]
    assert code == 2 and len(lines) == 1 and f"--reward {name}:reward: {said}" in lines[0], err
    assert "internal error" not in err and not (tmp_path / "o").exists()


def test_prompts_without_answers_with_a_reward_that_needs_them(workdir, tmp_path, capsys, monkeypatch):
    """numeric_answer compared every response with answer None and scored 0: the probe then blamed
    "no learning signal". A built-in reward needs the answers (an error naming the row); a function
    of the user's is called with answer=None, said."""
    d, _ = workdir
    _write(tmp_path / "q.jsonl", [{"prompt_id": "a", "prompt_ids": [3, 4, 5], "answer": "2"},
                                  {"prompt_id": "b", "prompt_ids": [7, 8]}])
    code, out, err = _run(capsys, "probe", "--model", str(d / "model"), "--generate", "2", "--prompts",
                          str(tmp_path / "q.jsonl"), "--reward", "numeric_answer", "--max-new-tokens", "4",
                          "--out", str(tmp_path / "o"), "--no-ladder", "--no-progress")
    assert code == 2 and "1 of 2 prompts have no answer (the first: row 2)" in err and not (tmp_path / "o").exists()
    (tmp_path / "my_len.py").write_text("def reward(text, answer):\n    return float(len(text) % 2)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    code, out, err = _run(capsys, "probe-checkpoints", str(d / "model"), "--prompts", str(tmp_path / "q.jsonl"),
                          "--reward", "my_len:reward", "--samples", "2", "--max-new-tokens", "4",
                          "--out", str(tmp_path / "t.parquet"))
    assert code == 0 and "is called with answer=None there" in err.replace("\n  ", " "), err


def test_probe_checkpoints_says_what_it_cannot_compare(tmp_path, capsys, monkeypatch):
    """Table 1 with no learning signal (every sample of a prompt one reward) was written as a
    covariance of 0.0000; checkpoints of two vocabularies were one run's entropies; checkpoints with
    no step in their names were numbered 0, 1 unsaid. Each is said; the covariance is left out."""
    tiny_model("llama", vocab=V, hidden=16, layers=1, seed=1).save_pretrained(tmp_path / "a")
    tiny_model("qwen2", vocab=V + 30, hidden=16, layers=1, seed=2).save_pretrained(tmp_path / "b")
    (tmp_path / "const_reward.py").write_text("def reward(text, answer):\n    return 1.0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    _write(tmp_path / "q.jsonl", [{"prompt_id": str(i), "prompt_ids": [3 + i, 4, 5], "answer": "1"} for i in range(3)])
    code, out, err = _run(capsys, "probe-checkpoints", str(tmp_path / "a"), str(tmp_path / "b"), "--prompts",
                          str(tmp_path / "q.jsonl"), "--reward", "const_reward:reward", "--table1", "--samples", "2",
                          "--max-new-tokens", "4", "--out", str(tmp_path / "t.parquet"))
    said = err.replace("\n  ", " ")
    assert code == 0, err
    assert said.count("no learning signal") == 2 and "left out of the table (not written as 0)" in said
    assert f"vocabularies differ (a {V}, b {V + 30})" in said
    assert "no step number in the name of a, b" in said and "numbered 0..1 in the order given" in said
    from entropylaw import table

    t = table.read(tmp_path / "t.parquet")
    assert not any(str(m).startswith("cov_") for m in t["metric"].unique())


def test_probe_checkpoints_table1_of_one_sample_is_refused_before_loading(tmp_path, capsys):
    """--table1 --samples 1: each prompt's one sample has no baseline, every advantage is 0 and the
    table can never be made; it was a run that warned twice and wrote no table. Refused in one
    line, before any checkpoint loads (the folder here is no model at all)."""
    (tmp_path / "checkpoint-5").mkdir()
    _write(tmp_path / "q.jsonl", [{"prompt_id": str(i), "prompt_ids": [3 + i, 4, 5], "answer": "1"} for i in range(4)])
    code, out, err = _run(capsys, "probe-checkpoints", str(tmp_path / "checkpoint-5"), "--prompts",
                          str(tmp_path / "q.jsonl"), "--table1", "--samples", "1", "--out", str(tmp_path / "t.parquet"))
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "`table1` needs `samples` 2 or more (got 1)" in err.replace("--samples", "`samples`").replace(
        "--table1", "`table1`"), err
    assert not (tmp_path / "t.parquet").exists()


def test_responses_cut_by_max_new_tokens_are_said(workdir, tmp_path, capsys, monkeypatch):
    """Every response stopped at --max-new-tokens with no end of sequence: its reward judged a cut
    answer, unsaid. Said on a note line; where no group has a signal, inside the one error line."""
    d, _ = workdir
    (tmp_path / "alternate.py").write_text("n = [0]\ndef reward(text, answer):\n    n[0] += 1\n"
                                           "    return float(n[0] % 2)\n")
    (tmp_path / "zero.py").write_text("def reward(text, answer):\n    return 0.0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    _write(tmp_path / "q.jsonl", [{"prompt_id": "a", "prompt_ids": [3, 4, 5], "answer": "2"}])
    common = ["probe", "--model", str(d / "model"), "--generate", "2", "--prompts", str(tmp_path / "q.jsonl"),
              "--max-new-tokens", "2", "--no-ladder", "--no-progress"]
    code, out, err = _run(capsys, *common, "--reward", "alternate:reward", "--out", str(tmp_path / "o"))
    assert code == 0, err
    assert "note: 2 of 2 responses reached --max-new-tokens 2 with no end of sequence" in " ".join(out.split())
    code, out, err = _run(capsys, *common, "--reward", "zero:reward", "--out", str(tmp_path / "o2"))
    lines = [x for x in err.splitlines() if x.startswith("entropylaw:")]
    assert code == 2 and len(lines) == 1 and "no learning signal" in lines[0]
    assert "note: 2 of 2 responses reached --max-new-tokens 2" in lines[0]


def test_a_runs_folder_given_for_its_checkpoints_points_inside(tmp_path, capsys):
    """The run's folder holding global_step_10/ said "no config.json", not where the checkpoints are."""
    tiny_model("llama", vocab=V, hidden=16, layers=1, seed=1).save_pretrained(tmp_path / "run" / "global_step_10")
    _write(tmp_path / "q.jsonl", [{"prompt_id": "a", "prompt_ids": [3, 4, 5]}])
    code, out, err = _run(capsys, "probe-checkpoints", str(tmp_path / "run"), "--prompts", str(tmp_path / "q.jsonl"),
                          "--samples", "2", "--max-new-tokens", "3", "--out", str(tmp_path / "t.parquet"))
    assert code == 2 and "no config.json here, but 1 checkpoint folder inside (global_step_10)" in err
