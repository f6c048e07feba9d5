"""Hostile inputs to ``probe`` and ``probe-checkpoints`` that once got past the checks: a ``--set``
value that is no number (an internal error), a ``--clamp-p`` outside [0, 1) (a clamped entropy of 0
or equal to the entropy, unsaid), a bad checkpoint found only after the ones before it were probed,
and Table 1 rows under one token shown as if they were that fraction."""

from __future__ import annotations

import subprocess
from pathlib import Path
import sys

import pytest

from _probe_inputs import rollout_rows, write_jsonl

from entropylaw.cli.main import main
from entropylaw.errors import EntropyLawError
from entropylaw.probing.model import tiny_model

V = 120


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    d = tmp_path_factory.mktemp("hostile")
    tiny_model("qwen2", vocab=V, hidden=16, layers=1, seed=0).save_pretrained(d / "model")
    write_jsonl(d / "roll.jsonl", rollout_rows(V))
    return d


def _one_line(capsys, *argv) -> str:
    code = main([str(a) for a in argv])
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("entropylaw:")]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("entropylaw: error:"), err
    return lines[0]


@pytest.mark.parametrize("setting, said", [("clip_cov_ratio=abc", "clip_cov_ratio = 'abc': expected a number"),
                                           ("steer_eta=NaN", "steer_eta = nan: expected a number"),
                                           ("steer_variant=1", "steer_variant = 1: expected text")])
def test_an_intervention_setting_of_the_wrong_kind_is_one_line(workdir, tmp_path, capsys, setting, said):
    """``--set clip_cov_ratio=abc`` was an internal error (TypeError: '<' between int and str)."""
    line = _one_line(capsys, "probe", "--model", workdir / "model", "--rollouts", workdir / "roll.jsonl",
                     "--out", tmp_path / "o", "--set", setting, "--no-progress")
    assert said in line and not (tmp_path / "o").exists()


def test_the_labs_intervention_args_are_checked_the_same_way():
    from entropylaw.lab.config import RunConfig

    with pytest.raises(EntropyLawError, match="clip_cov_ratio = 'abc': expected a number"):
        RunConfig.from_dict({"intervention": "clip_cov", "intervention_args": {"clip_cov_ratio": "abc"}})


@pytest.mark.parametrize("p", ["2", "-1", "1"])
def test_clamp_p_outside_0_1_is_refused(workdir, tmp_path, capsys, p):
    """2 masked every logit but one (a clamped entropy of 0); -1 none: both written as results."""
    line = _one_line(capsys, "probe", "--model", workdir / "model", "--rollouts", workdir / "roll.jsonl",
                     "--out", tmp_path / "o", "--clamp-p", p, "--no-ladder", "--no-progress")
    assert f"--clamp-p {p}: expected a fraction in [0, 1)" in line and not (tmp_path / "o").exists()


def test_table1_says_which_rows_are_under_one_token(workdir, tmp_path, capsys):
    """With 66 tokens the top 0.02 % and 0.2 % are the top token alone: three equal rows, unsaid."""
    code = main(["probe", "--model", str(workdir / "model"), "--rollouts", str(workdir / "roll.jsonl"),
                 "--out", str(tmp_path / "o"), "--no-ladder", "--no-progress"])
    out = " ".join(capsys.readouterr().out.split())
    assert code == 0
    assert "group tokens whole batch micro-batch paper 7B top 0.02% 1 " in out and " top 20% 13 " in out
    assert "top 0.02%, 0.2% of 66 tokens are under one token: each row is the top token alone" in out


def _truncated(src, dst):
    import shutil

    shutil.copytree(src, dst)
    w = dst / "model.safetensors"
    w.write_bytes(w.read_bytes()[: w.stat().st_size // 2])


@pytest.mark.parametrize("damage, said", [
    (_truncated, "model.safetensors is truncated (its tensors need"),
    (lambda src, dst: dst.mkdir(), "no config.json"),
    (lambda src, dst: (dst.mkdir(), (dst / "config.json").write_text((src / "config.json").read_text())),
     "no weights (expected model.safetensors"),
])
def test_probe_checkpoints_checks_every_checkpoint_before_probing_the_first(workdir, tmp_path, capsys, monkeypatch,
                                                                          damage, said):
    """A damaged last checkpoint was found only when its turn came, after the others had been sampled
    and probed, and all of that work was lost. Now no model loads: one line names it."""
    import entropylaw.probing.model as M

    damage(workdir / "model", tmp_path / "global_step_20")
    loads = []
    monkeypatch.setattr(M, "load_model", lambda *a, **k: loads.append(a) or pytest.fail("a model was loaded"))
    write_jsonl(tmp_path / "q.jsonl", [{"prompt_id": "a", "prompt_ids": [3, 4, 5]}])
    line = _one_line(capsys, "probe-checkpoints", workdir / "model", tmp_path / "global_step_20", "--prompts",
                     tmp_path / "q.jsonl", "--samples", "2", "--max-new-tokens", "3", "--out", tmp_path / "t.csv")
    assert f"checkpoint {tmp_path / 'global_step_20'}: " in line and said in line and not loads
    assert not (tmp_path / "t.csv").exists()


def test_probe_checkpoints_refuses_a_table_name_it_would_not_write_as_named(workdir, tmp_path, capsys):
    """``--out t.txt`` was written as parquet under a .txt name."""
    write_jsonl(tmp_path / "q.jsonl", [{"prompt_id": "a", "prompt_ids": [3, 4, 5]}])
    line = _one_line(capsys, "probe-checkpoints", workdir / "model", "--prompts", tmp_path / "q.jsonl",
                     "--out", tmp_path / "t.txt")
    assert "--out" in line and "expected a .parquet or .csv path" in line and not (tmp_path / "t.txt").exists()


@pytest.mark.parametrize("extra, said", [
    (["--prompts", "p.txt"], "--prompts is read only with --generate G, 1 or more"),
    (["--max-memory", "0=1GiB"], "--max-memory is read only with --device-map"),
    (["--no-ladder", "--whatif", "clip_cov"], "--whatif is read only with the ladder"),
])
def test_an_option_the_others_make_idle_is_refused_before_the_model_loads(extra, said, capsys, tmp_path):
    """They were dropped unsaid: --prompts without --generate read the rollouts, --max-memory without
    --device-map placed nothing, --whatif with --no-ladder ran no update."""
    from entropylaw.cli.main import main

    code = main(["probe", "--model", str(tmp_path / "no-model"), "--rollouts", "r.jsonl", "--out",
                 str(tmp_path / "out"), *extra])
    err = capsys.readouterr().err
    assert code == 2 and said in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "out").exists()


def test_a_model_folder_is_checked_on_the_files_transformers_reads(tmp_path):
    """A stray adapter_model.safetensors (broken) beside a whole model.safetensors refused a folder
    transformers loads; a training_args.bin alone passed as weights; an index whose shard names are
    no text was a TypeError."""
    import json

    import torch
    from safetensors.torch import save_file

    from entropylaw.probing.model import check_files

    d = tmp_path / "m"
    d.mkdir()
    (d / "config.json").write_text("{}")
    save_file({"w": torch.zeros(2)}, str(d / "model.safetensors"))
    (d / "adapter_model.safetensors").write_bytes(b"\x00\x01\x02\x03")
    check_files(str(d))  # the adapter is not read
    (d / "model.safetensors").unlink()
    (d / "adapter_model.safetensors").unlink()
    (d / "training_args.bin").write_bytes(b"x")
    with pytest.raises(EntropyLawError, match="no weights"):
        check_files(str(d))
    (d / "model.safetensors.index.json").write_text(json.dumps({"weight_map": {"a": 1}}))
    with pytest.raises(EntropyLawError, match="is not a safetensors index"):
        check_files(str(d))


def test_settings_of_numpy_numbers_pass_and_a_clamp_of_text_is_one_error():
    import numpy as np

    from entropylaw.probing.core import ProbeConfig
    from entropylaw.probing.losses import InterventionConfig

    InterventionConfig("clip_cov", clip_cov_ratio=np.float32(0.0002))  # a number, whatever its numpy type
    with pytest.raises(EntropyLawError, match="`clamp_p` 'x': expected a fraction"):
        ProbeConfig(clamp_p="x")


def _id_prompts(path, n=2):
    return write_jsonl(path, [{"prompt_ids": [5 + i, 6, 7], "answer": "1"} for i in range(n)])


@pytest.mark.parametrize("command", ["probe", "probe-checkpoints"])
def test_a_huge_sample_count_is_refused_before_sampling(workdir, tmp_path, capsys, command):
    """``--generate 1000000000`` (``--samples`` in probe-checkpoints) went into one model.generate
    call of a billion rows: the kernel's OOM killer ended it, with no message."""
    prompts = _id_prompts(tmp_path / "p.jsonl")
    if command == "probe":
        argv = ["probe", "--model", workdir / "model", "--generate", "1000000000", "--prompts", prompts,
                "--out", tmp_path / "o", "--no-ladder", "--no-progress"]
    else:
        argv = ["probe-checkpoints", workdir / "model", "--samples", "1000000000", "--prompts", prompts,
                "--out", tmp_path / "o.csv"]
    line = _one_line(capsys, *argv, "--max-new-tokens", "4")
    flag = "--generate" if command == "probe" else "--samples"
    assert f"{flag} 1000000000: sampling needs about" in line and f"try a smaller {flag}" in line, line
    assert not (tmp_path / "o").exists() and not (tmp_path / "o.csv").exists()


def test_generating_past_the_models_context_is_refused(workdir, tmp_path, capsys):
    """Rollouts read longer than the context are refused; generated ones were sampled past it (a
    transformers warning, then positions the model has no embedding for) and probed."""
    line = _one_line(capsys, "probe", "--model", workdir / "model", "--generate", "2", "--prompts",
                     _id_prompts(tmp_path / "p.jsonl"), "--max-new-tokens", "300", "--out", tmp_path / "o",
                     "--no-ladder", "--no-progress")
    assert "--max-new-tokens 300: the longest prompt (3 tokens)" in line
    assert "context of 256: expected at most 253" in line
    assert not (tmp_path / "o").exists()


def test_an_output_directory_that_is_a_file_is_named_as_the_option(tmp_path):
    """probe / audit --out FILE said "FILE: Not a directory (ENOTDIR)", lab run "File exists (EEXIST)"."""
    from entropylaw.fileio import check_out_dir

    afile = tmp_path / "afile"
    afile.write_text("")
    with pytest.raises(EntropyLawError, match=r"`out` .*afile: a file; expected a directory to write into"):
        check_out_dir(afile)
    assert check_out_dir(tmp_path / "new") == tmp_path / "new" and not (tmp_path / "new").exists()
    res = subprocess.run([sys.executable, "-m", "entropylaw", "lab", "run", "--out", str(afile), "--steps", "1"],
                         capture_output=True, text=True)
    assert res.returncode == 2 and f"--out {afile}: a file; expected a directory" in res.stderr, res.stderr


def test_an_output_directory_named_as_a_file_is_refused_before_the_work(tmp_path):
    """`report --out report.html` wrote a directory named report.html with the page inside it; now one line, exit 2,
    nothing created. A directory of that name that already exists is still one to write into."""
    from entropylaw.fileio import check_out_dir

    page = tmp_path / "report.html"
    res = subprocess.run([sys.executable, "-m", "entropylaw", "report", "data/real-sizes", "--out", str(page)],
                         capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1])
    assert res.returncode == 2 and res.stderr.strip().splitlines() == [
        f"entropylaw: error: --out {page}: a file's name (.html); expected a directory to write into (its files are "
        "named inside it)"], res.stderr
    assert not page.exists()
    page.mkdir()
    assert check_out_dir(page) == page


@pytest.mark.parametrize("weight, dtype, said", [(6e4, "float16", "its float16 logits overflow: load it as float32 "
                                                                 "(--dtype float32)"),
                                                 (float("nan"), "float32", "hold inf or NaN")])
def test_logits_that_are_not_finite_are_one_line_not_a_nan_table(tmp_path, capsys, weight, dtype, said):
    """A float16 model whose logits pass 65504 wrote tokens.parquet of NaN and 'enough signal (mean
    token covariance nan is inf standard errors from 0)'."""
    import torch

    model = tiny_model("qwen2", vocab=V, hidden=16, layers=1, seed=0)
    with torch.no_grad():
        model.lm_head.weight.copy_(weight * torch.sign(torch.randn_like(model.lm_head.weight)))
    model.save_pretrained(tmp_path / "model")
    write_jsonl(tmp_path / "roll.jsonl", rollout_rows(V))
    line = _one_line(capsys, "probe", "--model", tmp_path / "model", "--rollouts", tmp_path / "roll.jsonl",
                     "--out", tmp_path / "o", "--dtype", dtype, "--no-ladder", "--no-progress")
    assert "--model: the log-probability or entropy is not finite at 66 of 66 response tokens" in line
    assert said in line and not (tmp_path / "o").exists()


@pytest.mark.parametrize("flag, value, said", [
    ("--whatif", "steer,bogus", "--whatif bogus: unknown intervention (expected one of none, entropy_bonus"),
    ("--whatif", "none,,steer", "--whatif 'none,,steer': an empty name between its commas (expected names of none"),
    ("--set", "foo=1", "--set: unknown intervention setting ['foo']"),
    ("--set", "clip_cov_ratio=2", "--set: clip_cov_ratio must be in (0, 1]")])
def test_an_unknown_intervention_or_setting_names_its_flag(workdir, tmp_path, capsys, flag, value, said):
    """They said "unknown intervention 'bogus'" and "intervention none: clip_cov_ratio ..." (the
    what-if `none` was never asked for), naming no flag."""
    line = _one_line(capsys, "probe", "--model", workdir / "model", "--rollouts", workdir / "roll.jsonl",
                     "--out", tmp_path / "o", flag, value, "--no-progress")
    assert line.startswith(f"entropylaw: error: {said}") and not (tmp_path / "o").exists()


def test_sampling_from_logits_that_are_not_finite_is_one_line(tmp_path, capsys, monkeypatch):
    """--generate and probe-checkpoints on a float16 model whose logits pass 65504 stopped on an
    internal error (torch.multinomial: probability tensor contains inf or nan)."""
    import torch

    model = tiny_model("qwen2", vocab=V, hidden=16, layers=1, seed=0)
    with torch.no_grad():
        model.lm_head.weight.copy_(6e4 * torch.sign(torch.randn_like(model.lm_head.weight)))
    model.save_pretrained(tmp_path / "model")
    write_jsonl(tmp_path / "q.jsonl", [{"prompt_id": "a", "prompt_ids": [3, 4, 5], "answer": "2"}])
    (tmp_path / "odd.py").write_text("def reward(text, answer):\n    return float(len(text) % 2)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    line = _one_line(capsys, "probe", "--model", tmp_path / "model", "--dtype", "float16", "--generate", 2,
                     "--prompts", tmp_path / "q.jsonl", "--reward", "odd:reward", "--max-new-tokens", 3,
                     "--out", tmp_path / "o", "--no-ladder", "--no-progress")
    assert line == ("entropylaw: error: --model: sampling met logits that are not finite; its float16 logits "
                    "overflow: load it as float32 (--dtype float32)")
    line = _one_line(capsys, "probe-checkpoints", tmp_path / "model", "--dtype", "float16", "--prompts",
                     tmp_path / "q.jsonl", "--max-new-tokens", 3, "--out", tmp_path / "t.csv")
    assert f"{tmp_path / 'model'}: sampling met logits that are not finite" in line
    assert not (tmp_path / "o").exists() and not (tmp_path / "t.csv").exists()
