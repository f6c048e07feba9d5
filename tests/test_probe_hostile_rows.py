"""Hostile rollouts and runs that once got past the probe: a ladder that reached float rounding (an
internal error), errors naming the wrong line of a file with blank lines or several steps, token ids
of 3.5 or true truncated to ids, a prompt_id holding two prompts (one GRPO group of two prompts),
and micro-batches of one response whose covariance is 0 by construction, unsaid."""

from __future__ import annotations

import json

import pytest

from _probe_inputs import rollout_rows, write_jsonl

from entropylaw.cli.main import main
from entropylaw.probing.ladder import first_order
from entropylaw.probing.model import tiny_model

V = 100


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    d = tmp_path_factory.mktemp("hostile_rows")
    tiny_model("llama", vocab=V, hidden=16, layers=1, seed=4).save_pretrained(d / "model")
    return d


def _probe(capsys, d, rollouts, out, *extra):
    code = main([str(a) for a in ("probe", "--model", d / "model", "--rollouts", rollouts, "--out", out,
                                  "--no-progress", *extra)])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def _one_line(capsys, d, rollouts, out, *extra) -> str:
    code, _, err = _probe(capsys, d, rollouts, out, "--no-ladder", *extra)
    lines = [ln for ln in err.splitlines() if ln.startswith("entropylaw:")]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("entropylaw: error:"), err
    assert not out.exists()
    return lines[0]


def test_a_ladder_whose_step_reaches_float_rounding_stops_there(workdir, tmp_path, capsys):
    """One prompt group in float32: the search halved until no token's entropy changed, and the
    next window's linearity (dH/eta against a rung of dH 0) was None: TypeError, exit 1."""
    rows = [r for r in rollout_rows(V) if r["prompt_id"] == "p0"]
    code, out, err = _probe(capsys, workdir, write_jsonl(tmp_path / "one.jsonl", rows), tmp_path / "o")
    assert code == 0, err
    assert "rounding floor: no token's entropy changed at all" in out
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["ladder"]["eta_squared_check"]["bound"].startswith("rounding floor")
    assert not summary["checks"]["lemma1_ladder"]["enough_signal"]
    # a window with an unmeasured linearity is not first order, whatever its slope
    assert not first_order([1e-2, 5e-3, 2.5e-3], [4e-6, 1e-6, 2.5e-7], [0.01, None])["ok"]


def test_an_error_names_the_files_own_line(workdir, tmp_path, capsys):
    """Rows were numbered as read: a blank line, or the other steps' rows before the one probed,
    moved the line named (steps.jsonl:5 for line 17)."""
    rows = rollout_rows(V)
    text = [json.dumps(dict(r, step=s)) for s in (1, 2) for r in rows]
    text[12 + 4] = text[12 + 4].replace('"response_ids": [', '"response_ids": [500, ')
    (tmp_path / "steps.jsonl").write_text("\n".join(text) + "\n")
    line = _one_line(capsys, workdir, tmp_path / "steps.jsonl", tmp_path / "o")
    assert "steps.jsonl:17: response_ids has token id 500 outside the vocabulary" in line
    text = [json.dumps(r) for r in rows]
    text[3] = text[3].replace('"reward": 1.0', '"reward": "bad"')
    (tmp_path / "blank.jsonl").write_text("\n".join(text[:2]) + "\n\n\n" + "\n".join(text[2:]) + "\n")
    line = _one_line(capsys, workdir, tmp_path / "blank.jsonl", tmp_path / "o")
    assert "blank.jsonl:6: reward 'bad' is not a number" in line


@pytest.mark.parametrize("value", [3.5, True])
def test_a_token_id_that_is_no_integer_is_refused_not_truncated(workdir, tmp_path, capsys, value):
    rows = rollout_rows(V)
    rows[2]["response_ids"][1] = value
    line = _one_line(capsys, workdir, write_jsonl(tmp_path / "r.jsonl", rows), tmp_path / "o")
    assert f"r.jsonl:3: response_ids must be a list of integer token ids ({value!r} at position 1)" in line


def test_a_prompt_id_that_holds_two_prompts_is_refused(workdir, tmp_path, capsys):
    """Its responses were one GRPO group (one baseline over two prompts' rewards), silently."""
    rows = rollout_rows(V)
    rows[4]["prompt_ids"] = [1, 2, 3, 4]
    line = _one_line(capsys, workdir, write_jsonl(tmp_path / "r.jsonl", rows), tmp_path / "o")
    assert "r.jsonl:5: prompt_id 'p1' holds another prompt than at" in line and "r.jsonl:4" in line


def test_micro_batches_of_one_response_say_their_covariance_is_0(workdir, tmp_path, capsys):
    """--microbatch-tokens 1: every micro-batch is one response, whose advantage is constant, so the
    micro-batch column was all 0 and KL-Cov selected one token per micro-batch, without a word."""
    path = write_jsonl(tmp_path / "r.jsonl", rollout_rows(V))
    code, out, err = _probe(capsys, workdir, path, tmp_path / "o", "--no-ladder", "--microbatch-tokens", "1")
    assert code == 0, err
    text = " ".join(out.split())
    assert ("micro-batch: 12 of 12 micro-batches hold one response (12 sequences longer than the micro-batch "
            "budget of 1 tokens): its advantage is constant there, so its micro-batch covariance is 0") in text
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["microbatches_of_one_response"] == 12 and summary["sequences_over_microbatch_budget"] == 12
    code, out, err = _probe(capsys, workdir, path, tmp_path / "o2", "--no-ladder")
    assert code == 0 and "micro-batch:" not in out


def test_a_prompt_file_that_repeats_a_prompt_id_is_refused(workdir, tmp_path, capsys):
    """--generate drew the responses of two prompts under one prompt_id: one group, one baseline. (The
    same prompt under its id twice, a set's duplicate problem, is one group rightly: the lab's own
    validation prompts have such, tests/test_lab_run.py reads them.)"""
    rows = [{"prompt_id": "a", "prompt_ids": [5, 6, 7], "answer": "1"}, {"prompt_id": "a", "prompt_ids": [8, 9],
                                                                         "answer": "2"}]
    (tmp_path / "p.jsonl").write_text(json.dumps(rows[0]) + "\n\n" + json.dumps(rows[1]) + "\n")
    code = main([str(a) for a in ("probe", "--model", workdir / "model", "--generate", 2, "--prompts",
                                  tmp_path / "p.jsonl", "--reward", "numeric_answer", "--max-new-tokens", 3,
                                  "--out", tmp_path / "o", "--no-ladder", "--no-progress")])
    err = capsys.readouterr().err
    assert code == 2 and "p.jsonl:3: prompt_id 'a' holds another prompt than at" in err and "p.jsonl:1 (" in err, err
    assert not (tmp_path / "o").exists()


def test_a_jsonl_cut_inside_its_last_line_says_so(workdir, tmp_path, capsys):
    text = "".join(json.dumps(r) + "\n" for r in rollout_rows(V))
    (tmp_path / "cut.jsonl").write_text(text[:-30])
    line = _one_line(capsys, workdir, tmp_path / "cut.jsonl", tmp_path / "o")
    assert "cut.jsonl:12: not a JSON object" in line and "the file ends inside this line: cut short" in line
    (tmp_path / "bad.jsonl").write_text(text.replace("}\n", "\n", 1))  # a line that is no JSON, not cut
    assert "ends inside" not in _one_line(capsys, workdir, tmp_path / "bad.jsonl", tmp_path / "o")
